import threading

import numpy as np
import pytest

from plang.runtime.pipes import PipeError, PipeSet, symbol_addresses


def test_ring_buffer_order_and_backpressure():
    s = PipeSet(timeout=5.0)
    pipe = s.get(0, slot_bytes=32, slots=2)
    received = []

    def consumer():
        out = np.empty(8, np.float32)
        for _ in range(50):
            pipe.pop(out)
            received.append(out.copy())
            pipe.free()

    t = threading.Thread(target=consumer)
    t.start()
    for i in range(50):
        pipe.push(np.full(8, i, np.float32))
    t.join()
    assert [int(r[0]) for r in received] == list(range(50))
    assert s.error() is None
    s.close()


def test_pop_on_empty_pipe_times_out_and_set_reports_it():
    s = PipeSet(timeout=0.2)
    pipe = s.get(3, 16)
    with pytest.raises(PipeError, match="pipe 3: pop timed out"):
        pipe.pop(np.empty(4, np.float32))
    assert "pipe 3: pop timed out" in s.error()
    s.close()


def test_ends_must_agree_and_sizes_are_checked():
    s = PipeSet(timeout=1.0)
    s.get(0, 16, 2)
    with pytest.raises(PipeError, match="agree"):
        s.get(0, 32, 2)
    with pytest.raises(PipeError, match="bad size"):
        s.get(1, 8).push(np.zeros(4, np.float32))
    s.close()
    s = PipeSet(timeout=1.0)
    with pytest.raises(PipeError, match="pipe 2: free without a matching pop"):
        s.get(2, 8).free()
    assert s.error() == "pipe 2: free without a matching pop"
    s.close()


def test_set_slot_count_is_the_default_ring_depth():
    s = PipeSet(timeout=0.2, slots=3)
    pipe = s.get(0, 16)
    for i in range(3):  # three pushes fit without a consumer
        pipe.push(np.full(4, i, np.float32))
    with pytest.raises(PipeError, match="push timed out"):
        pipe.push(np.zeros(4, np.float32))
    s.close()
    with pytest.raises(ValueError, match="at least one slot"):
        PipeSet(timeout=1.0, slots=0)


def test_free_after_an_aborted_pop_is_not_reported_as_misuse():
    s = PipeSet(timeout=5.0)
    s.abort()  # a member failed with its own error
    pipe = s.get(0, 16)
    with pytest.raises(PipeError, match="pop aborted"):
        pipe.pop(np.empty(4, np.float32))
    with pytest.raises(PipeError, match="free aborted"):
        pipe.free()
    assert s.error() is None  # the member's error is the one to report
    s.close()


def test_abort_wakes_waiters():
    s = PipeSet(timeout=30.0)
    pipe = s.get(0, 16)
    errors = []

    def waiter():
        try:
            pipe.pop(np.empty(4, np.float32))
        except PipeError as e:
            errors.append(str(e))

    t = threading.Thread(target=waiter)
    t.start()
    s.abort()
    t.join(timeout=5)
    assert errors and "aborted" in errors[0]
    s.close()


def test_c_symbols_exported():
    addresses = symbol_addresses()
    assert {"plang_pipe_push", "plang_pipe_pop", "plang_pipe_free", "plang_pipeset_get"} <= set(addresses)
    assert all(addresses.values())
