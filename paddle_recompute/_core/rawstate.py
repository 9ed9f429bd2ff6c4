"""Fast, exact snapshots of numpy's and Python's global random generators.

``np.random.get_state()`` costs ~45 µs and ``random.getstate()`` ~10 µs; a recompute call
reads or writes them four times.  Both generators keep their whole state in a fixed C
struct, so copying its bytes is exact and takes well under a microsecond.

Every fast path proves itself at import against the public API (snapshot, draw, restore,
compare with ``get_state``) on private instances; if the proof fails (another CPython
build, another numpy), the public, slow API is used instead.  Nothing here is guessed.
"""

from __future__ import annotations

import ctypes
import random
import struct
import sys

import numpy as np

__all__ = ["NUMPY", "PYRANDOM"]

_MT_BYTES = 624 * 4 + 4  # uint32 key[624]; int pos  (numpy and CPython alike)


class _PublicNumpy:
    """Slow, always-correct numpy global state."""

    fast = False

    def unchanged_since(self, state) -> bool:
        return False

    def get(self):
        return np.random.get_state()

    snapshot = get

    def set(self, state) -> None:
        np.random.set_state(state)


class _RawNumpy:
    """Raw copy of the legacy global RandomState: MT19937 bytes plus the gauss cache."""

    fast = True

    def __init__(self, rs, has_gauss_off: int, gauss_off: int):
        self._rs = rs
        self._hg = has_gauss_off
        self._g = gauss_off
        self._bg = None
        self._addr = 0
        self._last = None

    def snapshot(self):
        """:meth:`get`, but the previous snapshot again when nothing was drawn since: regions
        in a row then share one copy instead of each holding 2.5 KB of its own."""
        last = self._last
        if last is not None and self._bg is self._rs._bit_generator and self.unchanged_since(last):
            return last
        self._last = last = self.get()
        return last

    def _mt_addr(self) -> int:
        bg = self._rs._bit_generator
        if bg is not self._bg:  # re-read only if someone swapped the bit generator
            self._bg, self._addr = bg, bg.ctypes.state_address
        return self._addr

    def get(self):
        bg = self._rs._bit_generator
        if bg is not self._bg:  # re-read only if someone swapped the bit generator
            self._bg, self._addr = bg, bg.ctypes.state_address
        # has_gauss (int) and gauss (double) are read as one span
        return (ctypes.string_at(self._addr, _MT_BYTES),
                ctypes.string_at(id(self._rs) + self._hg, self._g + 8 - self._hg))

    def unchanged_since(self, state) -> bool:
        """Cheap check that no number was drawn since ``state`` was taken.

        Compares the position, the last three key words and the gauss cache: a draw moves
        the position, and wrapping around regenerates every key word.
        """
        mt, gauss_span = state
        return (ctypes.string_at(self._addr + _MT_BYTES - 16, 16) == mt[-16:]
                and ctypes.string_at(id(self._rs) + self._hg, len(gauss_span)) == gauss_span)

    def set(self, state) -> None:
        mt, gauss_span = state
        ctypes.memmove(self._mt_addr(), mt, _MT_BYTES)
        ctypes.memmove(id(self._rs) + self._hg, gauss_span, len(gauss_span))


class _PublicRandom:
    fast = False

    def unchanged_since(self, state) -> bool:
        return False

    def get(self):
        return random.getstate()

    snapshot = get

    def set(self, state) -> None:
        random.setstate(state)


class _RawRandom:
    """Raw copy of CPython's ``RandomObject`` (int index; uint32 state[624]) plus gauss_next."""

    fast = True

    def __init__(self, inst, offset: int):
        self._inst = inst
        self._off = offset
        self._last = None

    def snapshot(self):
        """:meth:`get`, or the previous snapshot again when nothing was drawn since."""
        last = self._last
        if last is not None and self.unchanged_since(last):
            return last
        self._last = last = self.get()
        return last

    def get(self):
        return ctypes.string_at(id(self._inst) + self._off, _MT_BYTES), self._inst.gauss_next

    def unchanged_since(self, state) -> bool:
        """The index moves on every draw; wrapping around regenerates the state words."""
        raw, gauss_next = state
        return (ctypes.string_at(id(self._inst) + self._off, 16) == raw[:16]
                and self._inst.gauss_next == gauss_next)

    def set(self, state) -> None:
        raw, gauss_next = state
        ctypes.memmove(id(self._inst) + self._off, raw, _MT_BYTES)
        self._inst.gauss_next = gauss_next


def _same_np_state(a, b) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


def _probe_numpy():
    """Locate the gauss cache in a RandomState and prove raw copies round-trip."""
    rs = np.random.RandomState(1234)
    if type(rs) is not type(np.random.mtrand._rand):
        return None
    marker = 1.2345678901234567e-300
    st = list(rs.get_state())
    st[3], st[4] = 1, marker
    rs.set_state(tuple(st))
    size = type(rs).__basicsize__
    mem = ctypes.string_at(id(rs), size)
    g_off = mem.find(struct.pack("d", marker))
    if g_off < 0 or mem.find(struct.pack("d", marker), g_off + 1) >= 0:
        return None
    hg_off = _find_int_flag(rs, g_off)
    if hg_off is None:
        return None
    return _verify_numpy(_RawNumpy(rs, hg_off, g_off), rs)


def _find_int_flag(rs, g_off: int):
    """The has_gauss int sits in the 8 bytes before gauss (padding after it)."""
    for off in (g_off - 8, g_off - 4):
        st = list(rs.get_state())
        st[3] = 0
        rs.set_state(tuple(st))
        zero = ctypes.string_at(id(rs) + off, 4)
        st[3] = 1
        rs.set_state(tuple(st))
        one = ctypes.string_at(id(rs) + off, 4)
        if zero == struct.pack("i", 0) and one == struct.pack("i", 1):
            return off
    return None


def _verify_numpy(raw: _RawNumpy, rs):
    rs.standard_normal(3)  # leaves a cached gaussian
    before = rs.get_state()
    snap = raw.get()
    rs.standard_normal(1001)
    raw.set(snap)
    if not _same_np_state(before, rs.get_state()):
        return None
    return raw


def _probe_random():
    if type(random._inst) is not random.Random:
        return None  # someone replaced the global instance: use the public API
    inst = random.Random(99)
    off = object.__basicsize__
    raw = ctypes.string_at(id(inst) + off, _MT_BYTES)
    index, *words = struct.unpack(f"i{624}I", raw)
    state = inst.getstate()
    if tuple(words) + (index,) != state[1]:
        return None
    probe = _RawRandom(inst, off)
    inst.gauss(0, 1)
    before = inst.getstate()
    snap = probe.get()
    inst.random()
    inst.gauss(0, 1)
    probe.set(snap)
    return probe if inst.getstate() == before else None


def _numpy_accessor():
    try:
        raw = _probe_numpy()
    except Exception:  # any surprise in the probe means: use the public API
        raw = None
    if raw is None:
        return _PublicNumpy()
    return _RawNumpy(np.random.mtrand._rand, raw._hg, raw._g)


def _random_accessor():
    if hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled():
        return _PublicRandom()  # free-threaded build: another object layout
    try:
        raw = _probe_random()
    except Exception:
        raw = None
    if raw is None:
        return _PublicRandom()
    return _RawRandom(random._inst, raw._off)


NUMPY = _numpy_accessor()
PYRANDOM = _random_accessor()
