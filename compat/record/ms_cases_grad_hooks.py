# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for ``Tensor.register_hook`` under MindSpore's gradient transforms, and for the reuse
of a grad-flagged Cell's forward by a transform over it (``Cell.set_grad``; BatchNorm's moving
statistics then move once per training step, as in mindcv's ``TrainStep``).

Same form as ms_cases.py (its inputs are in scope). Recorded by
``record_cases.py --cases ms_cases_grad_hooks compat/tests/recorded/k_grad_hook_cases.json``;
compared by compat/tests/test_ms_grad_hooks.py.
"""

from __future__ import annotations

from ms_cases import inputs  # noqa: F401  (the recorder's namespace)

# ``log`` collects (tag, gradient) as each hook runs; ``hook(tag, change)`` makes a hook that
# logs and returns ``change(grad)`` (None: returns None)
_LOG = ("log = []\n"
        "def hook(tag, change=None):\n"
        "    def run(g):\n"
        "        log.append((tag, g))\n"
        "        return None if change is None else change(g)\n"
        "    return run\n"
        "x = Tensor(A)\n"
        "def square(v):\n"
        "    return (v * v).sum()\n")

_DENSE = "net = nn.Dense(3, 2, weight_init=Tensor(C[:2, :3].copy()), bias_init='zeros')\n"

# a block whose intermediate carries a hook, inside a network; ``mode``: how it is recomputed
_BLOCK = ("class Block(nn.Cell):\n"
          "    def construct(self, v):\n"
          "        y = ops.sin(v)\n"
          "        y.register_hook(hook('y', lambda g: g * 2))\n"
          "        return y * y\n"
          "class Outer(nn.Cell):\n"
          "    def __init__(self, block):\n"
          "        super().__init__()\n"
          "        self.block = block\n"
          "        self.fc = nn.Dense(3, 3, weight_init=Tensor(C[:3, :3].copy()), bias_init='zeros')\n"
          "    def construct(self, v):\n"
          "        return self.fc(self.block(v * 1)).sum()\n")

# the same with a Dense before the hooked intermediate, so a weights-only backward needs its
# gradient
_BLOCK_FC = _BLOCK.replace("class Block(nn.Cell):\n    def construct(self, v):\n        y = ops.sin(v)\n",
                           "class Block(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
                           "        self.fc = nn.Dense(3, 3, weight_init=Tensor(C[1:4, 1:4].copy()), bias_init='zeros')\n"
                           "    def construct(self, v):\n        y = ops.sin(self.fc(v))\n")
_TRAIN = ("outer = Outer(b)\nstep = nn.TrainOneStepCell(outer, nn.SGD(outer.trainable_params(), 0.1))\nstep.set_train()\n"
          "losses = [step(x) for _ in range(2)]\nresult = (log, losses, outer.fc.weight, outer.block.fc.weight)")

HOOK = {
    "input": _LOG + "h = x.register_hook(hook('x'))\ng = ms.grad(square)(x)\nresult = (log, g)",
    "input_returns_new_grad": _LOG + "x.register_hook(hook('x', lambda g: g * 10))\nresult = (log, ms.grad(square)(x))",
    "input_two_hooks_chain": _LOG + "x.register_hook(hook('a', lambda g: g + 1))\nx.register_hook(hook('b', lambda g: g * 3))\nresult = (log, ms.grad(square)(x))",
    "input_removed": _LOG + "h1 = x.register_hook(hook('a', lambda g: g + 1))\nx.register_hook(hook('b'))\nh1.remove()\ng = ms.grad(square)(x)\nh1.remove()\nresult = (log, g)",
    "input_removed_after_a_call": _LOG + "h = x.register_hook(hook('x'))\ng1 = ms.grad(square)(x)\nh.remove()\ng2 = ms.grad(square)(x)\nresult = (log, g1, g2)",
    "input_unused": _LOG + "z = Tensor(A)\nz.register_hook(hook('z'))\nresult = (log, ms.grad(lambda a, b: (a * 2).sum(), (0, 1))(x, z))",
    "input_not_a_grad_position": _LOG + "z = Tensor(A)\nz.register_hook(hook('z'))\nresult = (log, ms.grad(lambda a, b: (a * b).sum(), 0)(x, z))",
    "input_value_and_grad_and_gradoperation": _LOG + "x.register_hook(hook('x'))\nv, g = ms.value_and_grad(square)(x)\ng2 = ops.GradOperation(get_all=True)(lambda a: (a * 3).sum())(x)\nresult = (log, v, g, g2)",
    "outside_the_graph": _LOG + "y = x * 1\ny.register_hook(hook('y'))\nresult = (log, ms.grad(square)(x))",
    "intermediate_two_hooks": _LOG + "def f(v):\n    y = v * 2\n    y.register_hook(hook('a', lambda g: g + 1))\n    y.register_hook(hook('b', lambda g: g * 3))\n    return (y * y).sum()\nresult = (log, ms.grad(f)(x))",
    "intermediate_used_twice": _LOG + "def f(v):\n    y = ops.exp(v)\n    y.register_hook(hook('y', lambda g: -g))\n    return (y * 2 + y * y).sum()\nresult = (log, ms.grad(f)(x))",
    "intermediate_removed_inside": _LOG + "def f(v):\n    y = v * 2\n    h = y.register_hook(hook('y'))\n    h.remove()\n    return (y * y).sum()\nresult = (log, ms.grad(f)(x))",
    "parameter": _LOG + _DENSE + "net.weight.register_hook(hook('w', lambda g: g * 2))\nresult = (log, ms.grad(net, None, net.trainable_params())(x))",
    "parameter_each_call": _LOG + _DENSE + "net.weight.register_hook(hook('w'))\ngf = ms.grad(net, None, net.trainable_params())\ngf(x)\ngf(x)\nresult = (len(log), log[1])",
    "parameter_not_requested": _LOG + _DENSE + "net.weight.register_hook(hook('w'))\nresult = (log, ms.grad(net, 0)(x))",
    "parameter_in_train_one_step": _LOG + _DENSE + "net.weight.register_hook(hook('w', lambda g: g * 0))\nstep = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.1))\nstep.set_train()\nloss = step(x, Tensor(A[:, :2].copy()))\nresult = (log, loss, net.weight, net.bias)",
    "recompute_cell": _LOG + _BLOCK + "b = Block()\nb.recompute()\nresult = (log, ms.grad(Outer(b))(x))",
    "recompute_cell_not_reentrant": _LOG + _BLOCK + "b = Block()\nb.recompute(use_reentrant=False)\nresult = (log, ms.grad(Outer(b))(x))",
    "no_recompute_reference": _LOG + _BLOCK + "result = (log, ms.grad(Outer(Block()))(x))",
    "recompute_function": _LOG + _BLOCK + "class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.block = Block()\n    def construct(self, v):\n        return ms.recompute(self.block, v * 1).sum()\nresult = (log, ms.grad(Net())(x))",
    "recompute_training_steps": _LOG + _BLOCK + "b = Block()\nb.recompute()\nouter = Outer(b)\nstep = nn.TrainOneStepCell(outer, nn.SGD(outer.trainable_params(), 0.1))\nstep.set_train()\nlosses = [step(x) for _ in range(2)]\nresult = (len(log), losses, outer.fc.weight)",
    "intermediate_weights_only": _LOG + _BLOCK + "o = Outer(Block())\nresult = (log, ms.grad(o, None, o.trainable_params())(x))",
    "intermediate_input_and_weights": _LOG + _BLOCK + "o = Outer(Block())\nresult = (log, ms.grad(o, 0, o.trainable_params())(x))",
    "intermediate_in_a_reusing_train_step": _LOG + _BLOCK + "o = Outer(Block())\nclass Step(nn.TrainOneStepCell):\n    def construct(self, v):\n        loss = self.network(v)\n        grads = self.grad(self.network, self.weights)(v, ops.ones_like(loss))\n        self.optimizer(grads)\n        return loss\nstep = Step(o, nn.SGD(o.trainable_params(), 0.1))\nresult = (log, step(x), o.fc.weight)",
    "intermediate_in_a_reusing_input_grad": _LOG + _BLOCK + "o = Outer(Block())\no.set_grad()\nloss = o(x)\nresult = (log, ms.grad(o, 0)(x))",
    "recompute_training_steps_hook_needed": _LOG + _BLOCK_FC + "b = Block()\nb.recompute()\n" + _TRAIN,
    "recompute_training_steps_hook_needed_not_reentrant": _LOG + _BLOCK_FC + "b = Block()\nb.recompute(use_reentrant=False)\n" + _TRAIN,
    "training_steps_hook_needed_reference": _LOG + _BLOCK_FC + "b = Block()\n" + _TRAIN,
    "input_at_two_positions": _LOG + "y = Tensor(A * 3)\nx.register_hook(hook('x'))\nresult = (log, ms.grad(lambda a, b: (a * b).sum(), (0, 0, -1, 1))(x, y))",
    "output_of_the_function": _LOG + "def f(v):\n    y = v * 2\n    y.register_hook(hook('y', lambda g: g * 5))\n    return y\nresult = (log, ms.grad(f)(x))",
    "scalar_output_with_sens": _LOG + "def f(v):\n    z = (v * 2).sum()\n    z.register_hook(hook('z', lambda g: g * 5))\n    return z\nresult = (log, ops.GradOperation(sens_param=True)(f)(x, Tensor(np.float32(3.0))))",
    "not_callable": "x = Tensor(A)\nresult = x.register_hook(5)",
    "handle": _LOG + "h = x.register_hook(hook('x'))\nresult = (type(h.id).__name__, h.tensor_weakref() is x)",
}

# a network with a BatchNorm and a forward counter (the cube keeps the weights' gradients away
# from zero: the mean square of a normalised output is constant), and a training cell written as mindcv's
# TrainStep writes it: the network's forward, then GradOperation over it with the same inputs
_BN = ("calls = []\n"
       "class Net(nn.Cell):\n"
       "    def __init__(self):\n"
       "        super().__init__()\n"
       "        self.fc = nn.Dense(3, 4, weight_init=Tensor(C[:, :3].copy()), bias_init=Tensor(C[0, :4].copy()))\n"
       "        self.bn = nn.BatchNorm1d(4)\n"
       "    def construct(self, v):\n"
       "        calls.append(1)\n"
       "        return (self.bn(self.fc(v)) ** 3).mean()\n"
       "net = Net()\n"
       "net.set_train()\n"
       "x = Tensor(G)\n"
       "class Step(nn.TrainOneStepCell):\n"
       "    def __init__(self, network, optimizer, same=True):\n"
       "        super().__init__(network, optimizer)\n"
       "        self.same = same\n"
       "    def construct(self, v):\n"
       "        loss = self.network(v)\n"
       "        w = v if self.same else Tensor(v.asnumpy())\n"
       "        grads = self.grad(self.network, self.weights)(w, ops.ones_like(loss))\n"
       "        self.optimizer(grads)\n"
       "        return loss\n"
       "def stats():\n"
       "    return (len(calls), Tensor(net.bn.moving_mean.asnumpy()), Tensor(net.bn.moving_variance.asnumpy()), net.fc.weight)\n")

REUSE = {
    "train_step_same_inputs": _BN + "step = Step(net, nn.SGD(net.trainable_params(), 0.1))\nlosses = [step(x) for _ in range(2)]\nresult = (losses, stats())",
    "train_step_equal_inputs": _BN + "step = Step(net, nn.SGD(net.trainable_params(), 0.1), same=False)\nlosses = [step(x) for _ in range(2)]\nresult = (losses, stats())",
    "train_step_without_set_grad": _BN + "step = Step(net, nn.SGD(net.trainable_params(), 0.1))\nnet.set_grad(False)\nlosses = [step(x) for _ in range(2)]\nresult = (losses, stats())",
    "train_one_step_cell": _BN + "step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.1))\nlosses = [step(x) for _ in range(2)]\nresult = (losses, stats())",
    "grad_without_set_grad": _BN + "loss = net(x)\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, g, stats())",
    "set_grad_then_gradoperation": _BN + "net.set_grad()\nloss = net(x)\ng = ops.GradOperation(get_by_list=True)(net, ms.ParameterTuple(net.trainable_params()))(x)\nresult = (loss, g, stats())",
    "set_grad_then_input_grad": _BN + "net.set_grad()\nloss = net(x)\ng = ms.grad(net, 0)(x)\nresult = (loss, g, stats())",
    "set_grad_two_forwards": _BN + "net.set_grad()\nnet(x)\nloss = net(x)\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, g, stats())",
    "set_grad_value_and_grad": _BN + "net.set_grad()\nloss = net(x)\nv, g = ms.value_and_grad(net, None, net.trainable_params())(x)\nresult = (loss, v, g, stats())",
    "set_grad_other_cell_forward": _BN + "net.set_grad()\nnet(Tensor(A))\nloss = net(x)\nnet(Tensor(G[:4].copy()))\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, g, stats())",
    "records_per_input": _BN + "net.set_grad()\nx1, x2 = Tensor(G), Tensor(G * 2)\nnet(x1)\nnet(x2)\ng2 = ms.grad(net, None, net.trainable_params())(x2)\ng1 = ms.grad(net, None, net.trainable_params())(x1)\nresult = (g1, g2, stats())",
    "second_transform_runs_again": _BN + "net.set_grad()\nnet(x)\nms.grad(net, None, net.trainable_params())(x)\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (g, stats())",
    "eight_records": _BN + "net.set_grad()\nxs = [Tensor(G * (1 + i / 8)) for i in range(8)]\nouts = [net(v) for v in xs]\ngs = [ms.grad(net, None, net.trainable_params())(v) for v in xs]\nresult = (gs, stats())",
    "stale_set_data": _BN + "net.set_grad()\nloss = net(x)\nnet.fc.weight.set_data(Tensor(C[:, :3] * 2))\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, g, stats())",
    "stale_assign": _BN + "net.set_grad()\nloss = net(x)\nops.assign(net.fc.weight, Tensor(C[:, :3] * 2))\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, g, stats())",
    "stale_load_param_into_net": _BN + "net.set_grad()\nloss = net(x)\nnot_loaded = ms.load_param_into_net(net, {'fc.weight': Parameter(Tensor(C[:, :3] * 2), name='fc.weight')})\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, not_loaded, g, stats())",
    "stale_optimizer_step": _BN + "net.set_grad()\nloss = net(x)\nopt = nn.SGD(net.trainable_params(), 0.5)\nopt(tuple(ops.ones_like(p) for p in net.trainable_params()))\nv, g = ms.value_and_grad(net, None, net.trainable_params())(x)\nresult = (loss, v, g, stats())",
    "stale_input_changed_in_place": _BN + "net.set_grad()\nloss = net(x)\nx[0] = 5.0\nv, g = ms.value_and_grad(net, None, net.trainable_params())(x)\nresult = (loss, v, g, stats())",
    "stale_set_data_input_grad": _BN + "net.set_grad()\nloss = net(x)\nnet.fc.weight.set_data(Tensor(C[:, :3] * 2))\ng = ms.grad(net, 0)(x)\nresult = (loss, g, stats())",
    "stale_assign_input_grad": _BN + "net.set_grad()\nloss = net(x)\nops.assign(net.fc.weight, Tensor(C[:, :3] * 2))\ng = ms.grad(net, 0)(x)\nresult = (loss, g, stats())",
    "stale_set_data_gamma": _BN + "net.set_grad()\nloss = net(x)\nnet.bn.gamma.set_data(Tensor(np.full(4, 0.5, np.float32)))\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, g, stats())",
    "stale_assign_gamma": _BN + "net.set_grad()\nloss = net(x)\nops.assign(net.bn.gamma, Tensor(np.full(4, 0.5, np.float32)))\ng = ms.grad(net, None, net.trainable_params())(x)\nresult = (loss, g, stats())",
    "fresh_reference_input_grad": _BN + "net.fc.weight.set_data(Tensor(C[:, :3] * 2))\nresult = (ms.grad(net, 0)(x), stats())",
    "fresh_reference": _BN + "net.fc.weight.set_data(Tensor(C[:, :3] * 2))\nv, g = ms.value_and_grad(net, None, net.trainable_params())(x)\nresult = (v, g, stats())",
    "set_grad_returns_cell": "net = nn.Dense(3, 2)\nresult = (net.set_grad() is net, net.requires_grad, net.set_grad(False).requires_grad)",
}

# ``Tensor.hooks()`` and ``Tensor.remove_hook(handle_id)``: MindSpore's list of a tensor's hooks
# (the functions, in registration order) and removal by a handle's ``id``
LISTING = {
    "hooks_empty": "x = Tensor(A)\nresult = x.hooks()",
    "hooks_in_order": _LOG + "a, b = hook('a'), hook('b')\nx.register_hook(a)\nx.register_hook(b)\nhs = x.hooks()\nresult = (type(hs).__name__, len(hs), hs[0] is a, hs[1] is b)",
    "hooks_a_new_list": _LOG + "x.register_hook(hook('a'))\nhs = x.hooks()\nhs.clear()\nresult = (len(x.hooks()), x.hooks() is x.hooks())",
    "hooks_after_handle_remove": _LOG + "a, b = hook('a'), hook('b')\nh = x.register_hook(a)\nx.register_hook(b)\nh.remove()\nresult = [f is b for f in x.hooks()]",
    "hooks_same_function_twice": _LOG + "a = hook('a')\nh1 = x.register_hook(a)\nh2 = x.register_hook(a)\nresult = (len(x.hooks()), h1.id == h2.id, log, ms.grad(square)(x))",
    "hooks_argument": "x = Tensor(A)\nresult = x.hooks(1)",
    "hooks_on_intermediate": _LOG + "def f(v):\n    y = v * 2\n    y.register_hook(hook('y'))\n    log.append(('n', len(y.hooks())))\n    return (y * y).sum()\ng = ms.grad(f)(x)\nresult = (log, g)",
    "hooks_on_parameter": _LOG + _DENSE + "a = hook('w')\nnet.weight.register_hook(a)\nresult = (len(net.weight.hooks()), net.weight.hooks()[0] is a, len(net.bias.hooks()))",
    "remove_hook_by_id": _LOG + "h1 = x.register_hook(hook('a', lambda g: g + 1))\nx.register_hook(hook('b'))\nr = x.remove_hook(h1.id)\ng = ms.grad(square)(x)\nresult = (r, len(x.hooks()), log, g)",
    "remove_hook_twice_then_handle": _LOG + "h = x.register_hook(hook('a'))\nr1 = x.remove_hook(h.id)\nr2 = x.remove_hook(h.id)\nh.remove()\nresult = (r1, r2, x.hooks(), log, ms.grad(square)(x))",
    "remove_hook_unknown_id": _LOG + "x.register_hook(hook('a'))\nresult = (x.remove_hook(987654), len(x.hooks()), log, ms.grad(square)(x))",
    "remove_hook_of_another_tensor": _LOG + "z = Tensor(A * 3)\nhz = z.register_hook(hook('z'))\nx.register_hook(hook('x'))\nx.remove_hook(hz.id)\nresult = (len(z.hooks()), len(x.hooks()), log, ms.grad(lambda a, b: (a * b).sum(), (0, 1))(x, z))",
    "remove_hook_on_the_class": _LOG + "h = x.register_hook(hook('a'))\nr = Tensor.remove_hook(h.id)\nresult = (r, x.hooks(), log, ms.grad(square)(x))",
    "remove_hook_a_handle": _LOG + "h = x.register_hook(hook('a'))\nresult = x.remove_hook(h)",
    "remove_hook_a_string": "x = Tensor(A)\nresult = x.remove_hook('1')",
    "remove_hook_no_argument": "x = Tensor(A)\nresult = x.remove_hook()",
    "remove_hook_inside": _LOG + "def f(v):\n    y = v * 2\n    h = y.register_hook(hook('y', lambda g: g * 7))\n    y.remove_hook(h.id)\n    return (y * y).sum()\nresult = (log, ms.grad(f)(x))",
    "remove_hook_on_parameter": _LOG + _DENSE + "h = net.weight.register_hook(hook('w', lambda g: g * 0))\nnet.weight.remove_hook(h.id)\nresult = (log, net.weight.hooks(), ms.grad(net, None, net.trainable_params())(x))",
    "remove_hook_between_calls": _LOG + "h = x.register_hook(hook('x', lambda g: g * 3))\ng1 = ms.grad(square)(x)\nx.remove_hook(h.id)\ng2 = ms.grad(square)(x)\nresult = (log, g1, g2)",
}

GROUPS = {"hook": HOOK, "reuse": REUSE, "listing": LISTING}
