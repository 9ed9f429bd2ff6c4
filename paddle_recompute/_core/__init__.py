"""Layer 1, the mechanism: hook stack, state capture and replay (RNG, AMP, grad mode,
layer buffers), the reentrant PyLayer and the non-reentrant saved-tensor frame.

Imports nothing else of the package.  See ARCHITECTURE.md.
"""

from . import errors, raw_hooks, to_static

raw_hooks.install()  # Paddle's saved_tensors_hooks class composes with regions from import on
errors.install_backward_errors()  # RecomputeError raised in backward arrives as itself
to_static.skip_in_sot()  # regions run eagerly inside SOT programs (NOTE [ to_static ])
