"""``bench.hook_slot`` and ``bench.release_hook_slot``: who holds Paddle's saved-tensor hook
slot.  A region installs recompute's pair; while another thread runs, the pair stays
installed after the region ends, and is given back once no other thread runs."""

import threading

import paddle

import paddle_recompute as pr
from paddle_recompute import bench


def test_a_region_holds_the_slot_while_it_runs():
    seen = []

    def body(h):
        seen.append(bench.hook_slot())
        return paddle.tanh(h)  # saves its output: backward reruns the body

    x = paddle.ones([2])
    x.stop_gradient = False
    assert bench.hook_slot() == bench.HookSlot(installed=False, frames=0, thread_frames=0)
    pr.recompute(body, x, use_reentrant=False).sum().backward()
    assert seen[0] == bench.HookSlot(installed=True, frames=1, thread_frames=1)
    assert seen[1] == bench.HookSlot(installed=True, frames=1, thread_frames=1)  # the rerun's
    assert bench.hook_slot() == bench.HookSlot(installed=False, frames=0, thread_frames=0)


def test_another_threads_region_holds_it_until_released():
    opened, release = threading.Event(), threading.Event()
    x = paddle.ones([2])
    x.stop_gradient = False

    def body(h):
        opened.set()
        release.wait()
        return h * 2

    thread = threading.Thread(target=lambda: pr.recompute(body, x, use_reentrant=False))
    thread.start()
    try:
        opened.wait()
        assert bench.hook_slot() == bench.HookSlot(installed=True, frames=1, thread_frames=0)
    finally:
        release.set()
        thread.join()
    # the region ended while this thread ran: the pair stays until it is given back
    assert bench.hook_slot() == bench.HookSlot(installed=True, frames=0, thread_frames=0)
    assert bench.release_hook_slot()
    assert not bench.hook_slot().installed
