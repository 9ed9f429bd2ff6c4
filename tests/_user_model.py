"""Source of a small user training module, written to disk by tests that run "a user's" code.

``build(use_recompute)`` / ``step(model, optimizer, i)`` train a dropout MLP whose block
goes through ``recompute`` when asked; ``build_perturbed`` adds a small change to the
recompute run only, so a parity check must fail on it.
"""

import textwrap

USER_MODEL = textwrap.dedent("""
    import paddle
    from paddle_recompute import recompute

    class Net(paddle.nn.Layer):
        def __init__(self, use_recompute, perturb=False):
            super().__init__()
            self.use_recompute, self.perturb = use_recompute, perturb
            self.block = paddle.nn.Sequential(paddle.nn.Linear(8, 8), paddle.nn.Dropout(0.5),
                                              paddle.nn.GELU())
            self.head = paddle.nn.Linear(8, 2)

        def forward(self, x):
            h = recompute(self.block, x, use_reentrant=False) if self.use_recompute else self.block(x)
            if self.perturb:
                h = h + 1e-3 * (h > 0.5).astype(h.dtype)  # changes some elements only
            return self.head(h)

    def build(use_recompute):
        model = Net(use_recompute)
        return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())

    def build_perturbed(use_recompute):
        model = Net(use_recompute, perturb=use_recompute)
        return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())

    def step(model, optimizer, i):
        loss = model(paddle.randn([4, 8])).square().mean()
        loss.backward()
        return loss
""")
