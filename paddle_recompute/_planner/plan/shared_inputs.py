"""Tree plans credit the inputs that several of their regions hold once.

NOTE [ Shared call inputs ]: a region around a call holds the call's inputs that no layer
saves (``CallProfile.input_bytes``), and the tree solver adds that to each region's bytes.
An input several calls take, such as the causal mask every decoder layer of PaddleFormers'
Llama and its attention take, is then counted once for every region around one of them,
while they hold it once: at seq 512 (a 2 MiB mask), plans held 85% and 62% of their
prediction at budgets 0.5 and 0.3.  The profile lists such inputs
(``Profile.shared_call_inputs``: bytes and the calls that count them), and a tree plan's
prediction is credited, for each, its bytes times the number of its regions run whole
(``full``, runs of calls) around a call that counts it, less one; the solver is then run
again with the budget raised by that credit, and its answer kept when it still fits after
its own credit (as NOTE [ Shared block inputs ] does for blocks).  Regions of other kinds
are left out of the count, so the credit never exceeds the bytes counted twice.
"""

from __future__ import annotations

from ..profile.result import Profile
from .tree import solve_calls

__all__ = ["solve_credited", "call_credit"]


def _holder(prof: Profile, choice) -> str | None:
    """The call whose inputs a whole region holds (a run's first call); None otherwise."""
    if choice.kind != "full":
        return None
    if choice.span is None:
        return choice.block
    caller = choice.block[:choice.block.rindex("[")]
    return prof.calls[caller].children[choice.span[0]]


def call_credit(prof: Profile, choices) -> int:
    """Bytes of shared inputs the ``choices`` count more than once (NOTE [ Shared call inputs ])."""
    held = {_holder(prof, c) for c in choices} - {None}
    return sum(n * max(len(held.intersection(calls)) - 1, 0) for n, calls in prof.shared_call_inputs)


def solve_credited(prof: Profile, kinds, budget: int, solver: str) -> tuple:
    """``solve_calls`` with the shared inputs credited: (choices, memory less the credit, time)."""
    choices, memory, seconds = solve_calls(prof, kinds, budget, solver)
    credit = call_credit(prof, choices)
    for _ in range(3):
        if not credit:
            break
        wider, wider_memory, wider_seconds = solve_calls(prof, kinds, budget + credit, solver)
        wider_credit = call_credit(prof, wider)
        if (wider_seconds >= seconds or wider_memory - wider_credit > budget
                or [c.block for c in wider] == [c.block for c in choices]):
            break
        choices, memory, seconds, credit = wider, wider_memory, wider_seconds, wider_credit
    return choices, memory - credit, seconds
