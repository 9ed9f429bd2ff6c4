"""The benchmark kit: the models, meters and statistics behind ``paddle-recompute bench``.

The scripts in ``examples/`` and ``benchmarks/`` build on these names, and so can yours:

* models with a seeded batch and a loss: :class:`GPT` (:func:`gpt_batch`, :func:`gpt_loss`),
  :class:`MLP` (:func:`mlp_batch`, :func:`mlp_loss`), :func:`quick_config` (a small config
  of any built-in model by name), :func:`causal_lm` (a PaddleFormers causal LM of one of
  :data:`FAMILIES`, without its pretrained weights);
* meters: :class:`HostMemory` (Paddle's host allocator: bytes now and at the peak; needs
  ``FLAGS_enable_host_memory_stat=1`` before Paddle is imported), :func:`nbytes_of` (bytes
  of the distinct tensors in a nested structure), :data:`MiB`;
* statistics: :func:`duel_wins` (rounds one choice must win, of paired rounds, for a
  one-sided sign test to call it faster);
* instruments: :func:`measured_regions` (a context manager whose list collects the
  planner's measured frames of the policy regions that finish in its body: their operators,
  held bytes, rerun times and, per rerun, its :class:`RerunCounts`); :func:`kernel_times`
  (per operator, the calls and seconds of the kernels run in its body, regions' reruns
  included); :func:`hook_slot` (a :class:`HookSlot`: whether recompute holds Paddle's
  saved-tensor hook slot, and the frames open) and :func:`release_hook_slot`;
  :func:`operator_graphs` (the planner's operator model of each block) and
  :func:`predicted_reruns` (what that model predicts a region keeping a share of a block's
  saved bytes reruns: :class:`PredictedRerun`);
* the command's machinery: :data:`MODES` (the layer-level modes compared), ``harness``
  (the GPT benchmark's build and measured step), ``threads`` (the thread workloads), and
  :func:`require_matplotlib`.

Example:
    >>> from paddle_recompute import bench, recompute
    >>> cfg = bench.GPTConfig(vocab=64, hidden=32, heads=2, blocks=2, seq=16, batch=2)
    >>> model = bench.GPT(cfg, lambda block, x: recompute(block, x))
    >>> tokens, labels = bench.gpt_batch(cfg, step=0)
    >>> bench.gpt_loss(model(tokens), labels).backward()
"""

from ._bench import harness, threads
from ._bench.gpt import GPT, GPTConfig, gpt_batch, gpt_loss
from ._bench.hook_slot import HookSlot, hook_slot, release_hook_slot
from ._bench.kernel_times import kernel_times
from ._bench.memory import HostMemory, MiB
from ._bench.mlp import MLP, MLPConfig, mlp_batch, mlp_loss
from ._bench.models import quick_config
from ._bench.modes import MODES
from ._bench.op_model import PredictedRerun, operator_graphs, predicted_reruns
from ._bench.paddleformers import FAMILIES, causal_lm
from ._bench.plot import require_matplotlib
from ._planner.options.policy_frame import RerunCounts, measured_regions
from ._planner.plan.final_choice import duel_wins
from ._planner.profile.measure import nbytes_of

__all__ = [
    "FAMILIES",
    "GPT",
    "GPTConfig",
    "HookSlot",
    "HostMemory",
    "MLP",
    "MLPConfig",
    "MODES",
    "MiB",
    "PredictedRerun",
    "RerunCounts",
    "causal_lm",
    "duel_wins",
    "gpt_batch",
    "gpt_loss",
    "harness",
    "hook_slot",
    "kernel_times",
    "measured_regions",
    "mlp_batch",
    "mlp_loss",
    "nbytes_of",
    "operator_graphs",
    "predicted_reruns",
    "quick_config",
    "release_hook_slot",
    "require_matplotlib",
    "threads",
]
