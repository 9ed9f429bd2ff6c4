"""The ``loss_parity`` fixture reaches a user's suite through the ``pytest11`` entry point.

Each test writes a small user test file and runs pytest on it with ``pytester`` (no
conftest there: the fixture can only come from the installed plugin).
"""

import re

import pytest
from _user_model import USER_MODEL

pytest_plugins = ["pytester"]



@pytest.fixture
def user_suite(pytester):
    pytester.makepyfile(user_model=USER_MODEL)
    return pytester


def test_fixture_is_provided_by_the_entry_point(user_suite):
    user_suite.makepyfile(test_user="""
        from user_model import build, step

        def test_recompute_changes_nothing(loss_parity):
            loss_parity(build, step, steps=3, seed=1)
    """)
    result = user_suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    # and without the plugin the same suite has no such fixture
    result = user_suite.runpytest("-p", "no:cacheprovider", "-p", "no:paddle_recompute")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'loss_parity' not found*"])


def test_failure_report_names_count_difference_and_place(user_suite):
    user_suite.makepyfile(test_user="""
        from user_model import build_perturbed, step

        def test_recompute_changes_nothing(loss_parity):
            loss_parity(build_perturbed, step, steps=2)
    """)
    result = user_suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    # 2 losses + 2 steps x 4 gradients + 4 final parameters, all changed by the perturbation
    assert re.search(r"AssertionError: Not equal: 14 of 14 entries differ", text)
    assert ("Training with recompute (actual) differs from training without it (expected), "
            "2 steps from seed 0.") in text
    assert re.search(r"Entry \['losses'\]\[0\]:\n.*Shape: \(\), dtype: float32\n"
                     r".*Mismatched elements: 1 / 1 \(100%\)\n.*Max absolute difference: [0-9.e-]+\n", text)
    head = re.search(r"Entry \['grads'\]\[0\]\['head.weight'\]:\n.*Shape: \(8, 2\), dtype: float32\n"
                     r".*Mismatched elements: (\d+) / 16 \(.*\n.*Max absolute difference: ([0-9.e-]+)\n"
                     r".*Max relative difference: .*\n.*Largest difference at index \((\d), (\d)\): "
                     r"actual=.*, expected=", text)
    assert head, text
    assert 0 < int(head.group(1)) <= 16 and float(head.group(2)) > 0
    # the helper's own frames are hidden: the failure points at the user's line
    assert "assert_tensors_equal(" not in result.stdout.str()


def test_tolerance_is_reported(user_suite):
    user_suite.makepyfile(test_user="""
        from user_model import build_perturbed, step

        def test_loose(loss_parity):
            loss_parity(build_perturbed, step, steps=1, rtol=1e-9, atol=1e-9)
    """)
    result = user_suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Not equal to tolerance rtol=1e-09, atol=1e-09*"])
