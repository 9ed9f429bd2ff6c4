"""Test lanes: the markers ``slow``, ``subprocess`` and ``real_models``, given by test file
name, so a file keeps its lane wherever it lives (``tests/``, ``compat/tests/``).

    python -m pytest -q -m "not slow" tests      # the fast lane (under 3 minutes on 2 cores)
    python -m pytest -q tests compat/tests       # everything, as CI runs it

A table maps a file's name to ``ALL`` (every test in it) or to test names: a bare name
covers every parametrization of that function, ``name[id]`` one of them.  ``slow`` holds
the tests that take long (the fast lane leaves them out); ``subprocess`` those that start
processes (two ranks over gloo, the command line as a program, examples and benchmark
scripts); ``real_models`` those that build PaddleFormers, ``paddle.vision`` or mindcv
models.  Tests of the last two are ``slow`` as well.  tests/layout/test_lanes.py checks
that every entry names a test that exists.
"""

from __future__ import annotations

import pytest

ALL = "*"

SUBPROCESS: dict[str, object] = {
    "test_cli_program.py": {"test_python_m_help", "test_program_measures_host_memory"},
    "test_data_parallel.py": ALL,
    "test_examples.py": {"test_example_trains_with_parity", "test_benchmark_runs"},
    "test_hybrid_parallel.py": ALL,
    "test_nn_sweep.py": {"test_two_layer_lstm_with_dropout_reentrant_runs"},
    "test_param_attributes_dp.py": ALL,
    "test_param_identity_mp.py": ALL,
    "test_observation_verdict.py": {"test_across_processes_judges_the_bound_on_each_fresh_processs_median"},
    "test_pipeline_plan.py": ALL,
    "test_threads.py": {"test_exit_with_the_pair_installed_does_not_hang"},
    # the MindSpore layer's tests
    "test_ms_layer_optin.py": {"test_a_fresh_process_using_the_layer_leaves_paddle_unchanged"},
    "test_ms_mindcv_train_script.py": {"test_train_and_validate_scripts_give_mindspore_numbers",
                                       "test_recompute_on_the_blocks_is_bit_exact",
                                       "test_ema_with_validation_stops_where_mindspore_stops"},
    "test_ms_mindformers_glm2.py": ALL,
    "test_ms_mindformers_qwen3.py": ALL,
    "test_ms_mindformers_llama.py": ALL,
    "test_ms_mindformers_recompute_config.py": ALL,
    "test_ms_one_device_warnings.py": ALL,
    "test_ms_qwen3_names.py": {"test_runtime_settings_apply_once_per_process"},
    "test_ms_runner.py": {"test_python_m_runner_runs_the_unmodified_docstring_example",
                          "test_an_installed_mindspore_wins_when_the_runner_is_not_used",
                          "test_the_runner_resolves_mindspore_to_the_layer_even_when_one_is_installed"},
    "test_ms_tensor_surface.py": {"test_plain_paddle_code_behaves_exactly_as_before"},
}
REAL_MODELS: dict[str, object] = {
    "test_dead_ops.py": {"test_llama_layers_exact_under_op_policies_with_operators_left_out",
                         "test_operator_model_names_exactly_the_operators_the_rerun_runs"},
    "test_examples.py": {"test_example_trains_with_parity[resnet]",
                         "test_example_trains_with_parity[paddleformers_llama]",
                         "test_benchmark_runs[benchmarks/frontier.py]",
                         "test_benchmark_runs[benchmarks/observation.py]",
                         "test_benchmark_runs[benchmarks/loop_memory.py]"},
    "test_fused_ops.py": {"test_paddleformers_fused_swiglu_trains_exactly"},
    "test_moe.py": ALL,
    "test_observation_verdict.py": {"test_across_processes_judges_the_bound_on_each_fresh_processs_median"},
    "test_plan_ops.py": ALL,
    "test_plan_ops_routing.py": {"test_gpt_oss_plans_with_operator_policies_and_trains_exactly"},
    "test_profile_scale.py": ALL,
    "test_analytic.py": {"test_the_eager_count_against_paddleformers_layers"},
    "test_plan_tree_cli.py": {"test_cli_profile_and_plan[albert]", "test_cli_profile_and_plan[squeezenet1_1]",
                              "test_cli_profile_and_plan[pf_llama]"},
    "test_real_models_plan.py": ALL,
    "test_real_models_selective.py": ALL,
    "test_trainer_plan.py": ALL,
    # the MindSpore layer's tests: mindcv's zoo and scripts, MindSpore's ResNet-50
    "test_ms_batchnorm_arithmetic.py": {"test_resnet18_four_steps_within_mindspores_noise_floor"},
    "test_ms_lean_backward.py": {"test_mindcv_training_equals_the_paddle_grad_path_bit_for_bit"},
    "test_ms_mindcv_train_script.py": ALL,
    "test_ms_mindformers_glm2.py": ALL,
    "test_ms_mindformers_qwen3.py": ALL,
    "test_ms_mindformers_llama.py": ALL,
    "test_ms_mindformers_recompute_config.py": ALL,
    "test_ms_one_device_warnings.py": {"test_mindformers_llama_warns_once_for_recompute_slice_activation",
                                       "test_mindformers_qwen3_warns_once_for_select_comm_recompute"},
    "test_ms_resnet50.py": ALL,
    "test_ms_step_memory.py": ALL,
    "test_ms_zoo.py": ALL,
    "test_ms_zoo_saved_on_disk.py": ALL,
}
SLOW: dict[str, object] = {  # over 1 s a test on a loaded 2-core machine (the fast lane: ~1 min alone)
    "test_cli.py": {
        "test_bench_table_json_and_plot",
        "test_opt_in_modes_run_with_all_and_keep_losses_exact",
    },
    "test_dropout_replay.py": {"test_only_the_masks_are_held"},
    "test_frontier_verdict.py": {"test_a_saved_run_is_plotted_again"},
    "test_leaks.py": {
        "test_a_region_with_nothing_to_rerun_lets_go_of_its_inputs",
        "test_a_thousand_steps_keep_held_host_memory_flat",
        "test_after_backward_the_graph_holds_no_rerun_state_while_the_loss_lives",
        "test_backward_frees_the_held_activations",
        "test_early_stopped_steps_keep_held_host_memory_flat",
        "test_frame_is_freed_after_a_failed_recomputation[non_reentrant]",
        "test_kept_saved_tensors_are_freed_as_their_nodes_run",
        "test_nested_frames_are_freed_by_backward[non_reentrant]",
        "test_offloaded_non_leaf_inputs_leave_memory_flat",
        "test_paddle_grad_over_a_reentrant_region_with_a_non_leaf_input_keeps_memory_flat",
        "test_reading_grad_fn_leaks_the_graph_in_paddle",
    },
    "test_mechanism.py": {
        "test_per_block_recompute_holds_block_boundaries_only",
        "test_recompute_holds_fewer_bytes_after_forward",
    },
    "test_no_recompute.py": {"test_kept_call_holds_its_activations"},
    "test_op_solve.py": {
        "test_ancestor_frontier_fits_and_is_no_better_than_exact",
        "test_ancestor_model_exact_equals_brute_force",
        "test_exact_equals_brute_force",
        "test_thinned_frontier_stays_within_budget",
    },
    "test_plan.py": {
        "test_apply_is_reversible_and_not_stacked",
        "test_calibrate_measures_each_option_once_per_round_and_is_reused",
        "test_parity_and_recompute_ran",
        "test_plan_applies_to_an_identical_model",
        "test_plan_formats",
        "test_tighter_budget_holds_less_and_fits",
    },
    "test_plan_alike.py": ALL,
    "test_plan_ops_calls.py": {
        "test_a_runs_points_are_priced_by_the_planners_clock",
        "test_both_calls_get_operator_options_from_one_graph",
    },
    "test_plan_policies.py": {
        "test_a_policy_kind_that_fails_is_left_out_with_a_warning",
        "test_an_operator_point_that_fails_is_left_out_and_not_run_again",
        "test_policy_options_are_measured_once_and_plans_hold_what_they_predict",
    },
    "test_plan_tree.py": {
        "test_a_run_of_a_sequential_is_one_region",
        "test_budgets_down_to_the_real_minimum",
        "test_plan_holds_what_it_predicts_and_trains_exactly",
        "test_saved_tree_plan_on_a_fresh_model_holds_the_same_bytes_and_trains_alike",
        "test_tree_solver_brute_force_agrees_on_a_model",
    },
    "test_plan_tree_cli.py": {"test_cli_profile_and_plan"},
    "test_planner_solve.py": {
        "test_exact_equals_brute_force",
        "test_greedy_fits_but_is_never_better",
        "test_segments_min_peak_equals_brute_force",
        "test_segments_under_budget_equals_brute_force",
    },
    "test_planner_tree_solve.py": {
        "test_below_the_minimum_names_it",
        "test_exact_equals_brute_force",
        "test_resolution_fits_the_budget_exactly",
    },
    "test_policies.py": {
        "test_a_region_keeping_everything_peaks_as_the_plain_forward",
        "test_held_bytes_follow_the_policy",
    },
    "test_presets.py": {"test_memory_order"},
    "test_property.py": {"test_recomputed_gradients_equal_plain_gradients"},
    "test_threads.py": {
        "test_mixed_modes_in_threads_equal_single_threaded_runs",
        "test_planner_policy_measurements_ignore_another_threads_regions",
        "test_several_threads_with_regions_of_the_same_mode",
    },
    "test_to_static.py": {
        "test_block_decorated_on_its_own",
        "test_forward_holds_no_more_than_the_builtin_under_sot",
        "test_full_graph_policy_region_raises_and_leaves_state_clean",
        "test_full_graph_warns_once_and_matches_no_recompute",
        "test_model_decorated_whole_trains_exactly",
        "test_region_inside_a_decorated_function",
    },
    # the MindSpore layer's tests
    "test_ms_api_audit.py": {  # the audits of mindformers and mindcv (one module fixture)
        "test_readme_rewrites_only_its_block",
        "test_the_names_mindcv_references_that_the_layer_lacks_are_not_in_mindspore_either",
        "test_the_readme_quotes_the_counts_the_audit_finds_now",
        "test_the_recorded_mindformers_presence_covers_every_name_the_audit_finds",
    },
    "test_ms_block_tutorial.py": {"test_full_size_memory_and_bitwise_equal_output"},
    "test_ms_lean_backward.py": ALL,
    "test_ms_runner.py": {"test_every_unmodified_program_runs_under_the_runner_like_its_port"},
    "test_ms_step_memory.py": ALL,
}

LANES = {"slow": SLOW, "subprocess": SUBPROCESS, "real_models": REAL_MODELS}


def in_table(table: dict, file_name: str, function: str, test_id: str) -> bool:
    """Whether ``table`` covers the test ``test_id`` (function ``function``) of ``file_name``."""
    names = table.get(file_name)
    return names == ALL or (names is not None and (function in names or test_id in names))


def lanes_of(file_name: str, function: str, test_id: str) -> set[str]:
    """The markers of one test.  A test that starts a process or builds a real model is slow
    too: either takes seconds."""
    marks = {marker for marker, table in LANES.items() if in_table(table, file_name, function, test_id)}
    return marks | {"slow"} if marks & {"subprocess", "real_models"} else marks


def pytest_collection_modifyitems(config, items):
    for item in items:
        function = getattr(item, "originalname", None) or item.name
        for marker in sorted(lanes_of(item.path.name, function, item.name)):
            item.add_marker(getattr(pytest.mark, marker))
