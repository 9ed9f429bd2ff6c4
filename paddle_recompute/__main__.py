"""``python -m paddle_recompute`` and the ``paddle-recompute`` console script."""

import sys

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
