"""Binds Paddle's ``recompute_hybrid`` at import, before any ``patch_paddle()``, at every
site Paddle itself binds it (test_hybrid_patch.py imports this at collection time)."""

import sys

from paddle.distributed.fleet.meta_parallel.parallel_layers import pp_layers
from paddle.distributed.fleet.recompute import recompute_hybrid as package_hybrid
from paddle.incubate.distributed.fleet import recompute_hybrid as incubate_hybrid
from paddle.incubate.distributed.models.moe import moe_layer

MODULE = "paddle.distributed.fleet.recompute.recompute_hybrid"

HYBRIDS = {"fleet.recompute.recompute_hybrid (module)": sys.modules[MODULE].recompute_hybrid,
           "fleet.recompute.recompute_hybrid (package)": package_hybrid,
           "incubate.distributed.fleet.recompute_hybrid": incubate_hybrid,
           "pp_layers.recompute_hybrid (PipelineLayer)": pp_layers.recompute_hybrid,
           "moe_layer.recompute_hybrid (MoELayer)": moe_layer.recompute_hybrid}
