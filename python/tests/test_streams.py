import pytest

import accel


def test_stream_context_manager():
    with accel.Stream() as s:
        assert s.device == accel.devices()[0]
        assert s.query() in (True, False)
        e = s.record()
    e.synchronize()
    assert e.query()
    s.synchronize(timeout=1.0)
    s.close()
    s.close()


def test_event_context_manager_and_timing():
    s = accel.Stream(device=0)
    with accel.Event(timing=True) as start, accel.Event(timing=True) as end:
        s.record(start)
        s.record(end)
        s.wait(end)
        end.synchronize()
        assert end.elapsed_time(end) == 0 or end.elapsed_time(end) >= 0
        assert start.elapsed_time(end) >= 0
    with pytest.raises(accel.AccelError) as info:
        start.query()  # closed by the with block
    assert info.value.status == accel.Status.ACCEL_ERROR_INVALID_HANDLE


def test_elapsed_time_without_timing():
    s = accel.Stream()
    a, b = accel.Event(), accel.Event()
    s.record(a)
    s.record(b)
    b.synchronize()
    with pytest.raises(accel.AccelError) as info:
        a.elapsed_time(b)
    assert info.value.status == accel.Status.ACCEL_ERROR_FAILED_PRECONDITION
