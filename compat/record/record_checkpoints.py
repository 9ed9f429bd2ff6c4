"""Record MindSpore 2.10's checkpoint files and what a network gives after loading them.

    /work/msvenv/bin/python compat/record/record_checkpoints.py compat/tests/recorded/ckpt

Writes, for the network of ``ckpt_net.py`` (its weights are drawn by numpy from seed 0 and set
by name):
- ``net.ckpt``: ``save_checkpoint(net, ...)``; ``net_extra.ckpt``: with ``append_dict``
  (an int, a float and a str) and ``crc_check=True``; ``net.safetensors``: ``format="safetensors"``;
  ``list.ckpt``: ``save_checkpoint(net.trainable_params(), ..., choice_func=...)``;
- ``reference.npz``: the input ``x``, the eval-mode output of the network, and the weights;
- ``reference.json``: ``load_checkpoint`` of each file (names, dtypes, shapes, strs),
  ``load_param_into_net`` across a name prefix (``backbone.``, both ways; ``wrapped.ckpt``
  holds the weights times 2 under the prefixed names), and
  MindSpore's output after loading ``from_paddle.ckpt`` if that file (written by the layer,
  see ``compat/tests/test_ms_checkpoint.py``) is present.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from ckpt_net import Net, Wrapped, weights  # noqa: E402


def describe(path, **kwargs):
    loaded = ms.load_checkpoint(str(path), **kwargs)
    return {k: (v if isinstance(v, str) else [str(v.dtype), list(v.shape)]) for k, v in loaded.items()}


def into(net, path, **kwargs):
    return [list(r) for r in ms.load_param_into_net(net, ms.load_checkpoint(str(path)), **kwargs)]


def main(argv):
    out = Path(argv[0] if argv else "compat/tests/recorded/ckpt")
    out.mkdir(parents=True, exist_ok=True)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    net = Net()
    values = weights()
    for _, param in net.parameters_and_names():
        param.set_data(ms.Tensor(values[param.name]))
    net.set_train(False)
    x = np.random.RandomState(1).standard_normal((2, 1, 6, 6)).astype(np.float32)
    ms.save_checkpoint(net, str(out / "net.ckpt"))
    ms.save_checkpoint(
        net, str(out / "net_extra.ckpt"), append_dict={"epoch_num": 3, "lr": 0.5, "tag": "v1"}, crc_check=True
    )
    ms.save_checkpoint(net, str(out / "net.safetensors"), format="safetensors")
    ms.save_checkpoint(
        net.trainable_params(), str(out / "list.ckpt"), choice_func=lambda n: n.startswith("conv")
    )
    record = {
        "mindspore": ms.__version__,
        "order": [p.name for _, p in net.parameters_and_names()],
        "load": {f: describe(out / f) for f in ("net.ckpt", "net_extra.ckpt", "list.ckpt")},
        "load_safetensors": describe(out / "net.safetensors", format="safetensors"),
        "load_filter_conv": describe(out / "net.ckpt", filter_prefix="conv"),
        "load_specify_bn": describe(out / "net.ckpt", specify_prefix=["bn"]),
    }
    wrapped = Wrapped()
    for _, param in wrapped.parameters_and_names():
        param.set_data(ms.Tensor(values[param.name[len("backbone.") :]] * 2))
    ms.save_checkpoint(wrapped, str(out / "wrapped.ckpt"))
    record["into_wrapped"] = into(Wrapped(), out / "net.ckpt")
    plain = Net()
    record["wrapped_into_plain"] = into(plain, out / "wrapped.ckpt")
    record["wrapped_into_plain_strict"] = into(Net(), out / "wrapped.ckpt", strict_load=True)
    plain.set_train(False)
    arrays = {
        "x": x,
        "y": net(ms.Tensor(x)).asnumpy(),
        "y_wrapped_into_plain": plain(ms.Tensor(x)).asnumpy(),
        **{f"w/{k}": v for k, v in values.items()},
    }
    foreign = out / "from_paddle.ckpt"
    if foreign.exists():
        other = Net()
        record["from_paddle_not_loaded"] = into(other, foreign)
        other.set_train(False)
        arrays["y_from_paddle"] = other(ms.Tensor(x)).asnumpy()
    np.savez(out / "reference.npz", **arrays)
    (out / "reference.json").write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
