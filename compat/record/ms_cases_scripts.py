# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for what mindcv's repository scripts (train.py, validate.py) use beyond its package:
``mindspore.communication``'s queries, ``amp.auto_mixed_precision`` at O0, ``nn.metrics``, and
the Parameter-only ``cache_enable`` on BatchNorm's moving statistics (``StateMonitor`` reads it),
``Parameter.data`` (a Tensor on the parameter's memory) and ``load_param_into_net``'s refusal of
Tensors (``StateMonitor``'s EMA validation passes ``param.data``).

Same form as ms_cases.py (its inputs are in scope); recorded by
``record_cases.py --cases ms_cases_scripts tests/mindspore/recorded/j_script_cases.json``.
"""

from __future__ import annotations

from ms_cases import inputs  # noqa: F401  (the recorder's namespace)

SCRIPTS = {
    "comm_rank_size": "result = (ms.communication.get_rank(), ms.communication.get_group_size())",
    "comm_init_unlaunched": "result = ms.communication.init()",
    "amp_o0_same_cell": "net = nn.Dense(2, 2)\nresult = ms.amp.auto_mixed_precision(net, 'O0') is net",
    "amp_bad_level": "result = ms.amp.auto_mixed_precision(nn.Dense(2, 2), 'O7')",
    "nn_metrics_classes": "result = (nn.metrics.Loss is ms.train.Loss, nn.metrics.Top1CategoricalAccuracy is ms.train.Top1CategoricalAccuracy, nn.metrics.Top5CategoricalAccuracy is ms.train.Top5CategoricalAccuracy)",
    "nn_metrics_loss": "m = nn.metrics.Loss()\nm.clear()\nm.update(Tensor(np.float32(2.0)))\nm.update(Tensor(np.float32(5.0)))\nresult = m.eval()",
    "bn_cache_enable": "net = nn.SequentialCell([nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3)])\nresult = [(p.name, p.cache_enable) for p in net.get_parameters()]",
    "tensor_no_cache_enable": "result = Tensor(np.ones(2, np.float32)).cache_enable",
    "param_data_is_a_view": "p = Parameter(Tensor(np.ones(2, np.float32)), name='a')\nd = p.data\nd[0] = 5.0\nresult = (p, d, isinstance(d, Parameter), isinstance(p.data, Parameter))",
    "load_param_refuses_tensor": "net = nn.Dense(2, 2)\nresult = ms.load_param_into_net(net, {'weight': net.weight.data})",
    "load_param_takes_parameter": "net = nn.Dense(2, 2)\nw = Parameter(Tensor(np.full((2, 2), 3.0, np.float32)), name='weight')\nresult = (ms.load_param_into_net(net, {'weight': w}), net.weight)",
}

GROUPS = {"script": SCRIPTS}
