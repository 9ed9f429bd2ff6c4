"""``mindspore.nn.wrap.cell_wrapper``: multi-device training cells (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from ..._unprovided import unprovided_class

__all__ = ["GradAccumulationCell", "_MicroBatch", "_VirtualDatasetCell"]

GradAccumulationCell = unprovided_class("mindspore.nn.wrap.cell_wrapper.GradAccumulationCell")
_MicroBatch = unprovided_class("mindspore.nn.wrap.cell_wrapper._MicroBatch")
_VirtualDatasetCell = unprovided_class("mindspore.nn.wrap.cell_wrapper._VirtualDatasetCell")
