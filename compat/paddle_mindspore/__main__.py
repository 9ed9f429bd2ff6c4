"""Entry point of ``python -m paddle_recompute.mindspore SCRIPT.py [args]``."""

import sys

from ._runner import main

if __name__ == "__main__":
    sys.exit(main())
