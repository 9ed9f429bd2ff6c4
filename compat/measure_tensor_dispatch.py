"""What the MindSpore layer's Tensor members cost plain Paddle code (NOTE [ Caller-scoped Tensor semantics ]).

While ``paddle_mindspore`` is imported, Paddle's Tensor members whose meanings differ
in MindSpore dispatch on their caller. This times, in one process and side by side, plain
Paddle code (a module that does not import the layer) before the layer is imported, with it,
and after ``uninstall_tensor_methods()``:

    python compat/measure_tensor_dispatch.py
"""

import sys
import tempfile
import textwrap
from pathlib import Path

PLAIN = textwrap.dedent('''
    import timeit
    import paddle

    x = paddle.ones([8, 16])
    net = paddle.nn.Sequential(paddle.nn.Linear(64, 64), paddle.nn.LayerNorm(64), paddle.nn.GELU(),
                               paddle.nn.Linear(64, 8))
    data = paddle.randn([32, 64])

    def step():
        net(data).mean().backward()
        net.clear_gradients()

    CASES = [("x.shape", lambda: x.shape, 20000), ("x.reshape([16, 8])", lambda: x.reshape([16, 8]), 20000),
             ("x + x", lambda: x + x, 20000), ("x.std()", lambda: x.std(), 2000),
             ("MLP train step", step, 300)]

    def timings():
        return {label: min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6 for label, fn, n in CASES}
''')


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "plain_paddle_probe.py").write_text(PLAIN)
        sys.path.insert(0, folder)
        import plain_paddle_probe as plain

        before = plain.timings()
        import paddle_mindspore as ms

        with_layer = plain.timings()
        ms.uninstall_tensor_methods()
        after = plain.timings()
    print(f"{'plain Paddle code':22s} {'before':>10s} {'with layer':>12s} {'ratio':>6s} {'uninstalled':>12s}")
    for label, value in before.items():
        print(f"{label:22s} {value:8.2f}us {with_layer[label]:10.2f}us {with_layer[label] / value:6.2f} "
              f"{after[label]:10.2f}us")


if __name__ == "__main__":
    main()
