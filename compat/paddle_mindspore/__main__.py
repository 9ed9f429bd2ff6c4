"""Entry point of ``paddle-mindspore SCRIPT.py [args]`` (the console script), of
``python -m paddle_mindspore SCRIPT.py [args]``, and of its former name
``python -m paddle_recompute.mindspore SCRIPT.py [args]``."""

import sys

from ._runner import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
