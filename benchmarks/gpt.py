"""GPT-style training step on CPU: time and memory of full recompute, ours vs Paddle's built-in.

The sizes of the issue's targets (8 blocks, hidden 256, 4 heads, sequence 256, batch 8,
dropout 0.1), run through ``paddle-recompute bench``: one model per mode from the same
weights, interleaved rounds, medians, ratios to no recompute and to the built-in, and
losses of ours asserted bit-for-bit equal to no recompute.  Any ``bench`` option can be
added (later options win):

    python benchmarks/gpt.py [--rounds 5] [--json out.json] [--plot out.png] [--modes ...]
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("FLAGS_enable_host_memory_stat", "1")  # before Paddle is imported

from paddle_recompute.__main__ import main  # noqa: E402

TARGET_SIZES = ["--model", "gpt", "--blocks", "8", "--hidden", "256", "--heads", "4", "--seq", "256",
                "--batch", "8", "--vocab", "1024", "--dropout", "0.1"]

if __name__ == "__main__":
    sys.exit(main(["bench", *TARGET_SIZES, *sys.argv[1:]]))
