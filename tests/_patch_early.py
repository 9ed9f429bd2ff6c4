"""Binds Paddle's recompute entry points at import, before any ``patch_paddle()``.

test_patch.py imports this module at collection time, like a library (PaddleFormers'
model code, for one) that did ``from paddle.distributed.fleet.utils import recompute``
long before the user patched anything.
"""

from paddle.distributed.fleet.recompute import recompute as package_recompute
from paddle.distributed.fleet.recompute.recompute import recompute as module_recompute
from paddle.distributed.fleet.recompute.recompute import recompute_sequential as module_sequential
from paddle.distributed.fleet.utils import recompute as utils_recompute
from paddle.incubate.distributed.fleet import recompute_sequential as incubate_sequential

RECOMPUTES = {"fleet.utils.recompute": utils_recompute,
              "fleet.recompute.recompute.recompute": module_recompute,
              "fleet.recompute.recompute (package)": package_recompute}
SEQUENTIALS = {"incubate.distributed.fleet.recompute_sequential": incubate_sequential,
               "fleet.recompute.recompute.recompute_sequential": module_sequential}
