# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for what mindcv's repository scripts (train.py, validate.py) use beyond its package:
``mindspore.communication``'s queries, ``amp.auto_mixed_precision`` at O0, ``nn.metrics``, and
the Parameter-only ``cache_enable`` on BatchNorm's moving statistics (``StateMonitor`` reads it),
``Parameter.data`` (a Tensor on the parameter's memory) and ``load_param_into_net``'s refusal of
Tensors (``StateMonitor``'s EMA validation passes ``param.data``); mindcv's ``ValCallback`` in
``Model.eval`` (validate.py) and ``Model.train``, its printed lines compared.

Same form as ms_cases.py (its inputs are in scope); recorded by
``record_cases.py --cases ms_cases_scripts compat/tests/recorded/j_script_cases.json``.
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

# mindcv's ValCallback (validate.py's callback): ``Model.eval`` / ``Model.fit`` with it, its printed
# lines captured (the times replaced: they are wall-clock)
_VAL = ("import contextlib, io, re\nfrom mindcv.utils import ValCallback\n"
        "net = nn.Dense(3, 3, weight_init=Tensor(C[:3, :3].copy()), bias_init='zeros')\n"
        "loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')\n"
        "model = ms.Model(net, loss, metrics={'Top_1_Accuracy': ms.train.Top1CategoricalAccuracy(), 'loss': nn.metrics.Loss()})\n"
        "x = np.concatenate([G, G * 0.5, -G])[:N]\ny = np.concatenate([LBL, LBL, LBL])[:N]\n"
        "data = ms.dataset.NumpySlicesDataset((x, y), ['x', 'y'], shuffle=False).batch(B)\n"
        "out = io.StringIO()\n"
        "def lines():\n    return [re.sub('time: [0-9.]+s', 'time: T', line) for line in out.getvalue().splitlines()]\n")

VAL = {
    "val_callback_every_step": "N, B = 15, 4\n" + _VAL + "with contextlib.redirect_stdout(out):\n    r = model.eval(data, dataset_sink_mode=False, callbacks=[ValCallback(1)])\nresult = (lines(), sorted((k, float(v)) for k, v in r.items()))",
    "val_callback_interval": "N, B = 15, 2\n" + _VAL + "with contextlib.redirect_stdout(out):\n    r = model.eval(data, dataset_sink_mode=False, callbacks=[ValCallback(3)])\nresult = (lines(), sorted((k, float(v)) for k, v in r.items()))",
    "val_callback_default_interval": "N, B = 12, 4\n" + _VAL + "with contextlib.redirect_stdout(out):\n    r = model.eval(data, dataset_sink_mode=False, callbacks=[ValCallback()])\nresult = (lines(), sorted((k, float(v)) for k, v in r.items()))",
    "val_callback_twice": "N, B = 10, 4\n" + _VAL + "cb = ValCallback(2)\nwith contextlib.redirect_stdout(out):\n    model.eval(data, dataset_sink_mode=False, callbacks=[cb])\n    model.eval(data, dataset_sink_mode=False, callbacks=[cb])\nresult = lines()",
    "val_callback_in_train_prints_nothing": "N, B = 10, 4\n" + _VAL.replace("model = ms.Model(net, loss,", "model = ms.Model(net, loss, nn.SGD(net.trainable_params(), 0.1),") + "with contextlib.redirect_stdout(out):\n    model.train(1, data, callbacks=[ValCallback(1)], dataset_sink_mode=False)\nresult = (lines(), net.weight)",
}

GROUPS = {"script": SCRIPTS, "val": VAL}
