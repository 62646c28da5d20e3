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


def test_timeouts_that_are_no_number_of_seconds():
    # A negative timeout polls, infinity waits forever, NaN is refused: cast to an integer they were undefined (-1
    # could wait forever).
    s = accel.Stream()
    e = s.record()
    s.synchronize(timeout=-1)
    e.synchronize(timeout=-1)
    s.synchronize(timeout=float("inf"))
    e.synchronize(timeout=1e30)
    for call in (s.synchronize, e.synchronize):
        with pytest.raises(ValueError, match="timeout is NaN"):
            call(timeout=float("nan"))


def test_one_failure_on_the_packages_own_stream_raises_once(run_python):
    # The package's synchronous operations share a stream per device; an error there is sticky until cleared, and
    # nothing cleared it: after one failure every later zeros(), copy and asarray on that device raised it again.
    # The stream is retired once its error was raised (the injection fails each stream's second operation once).
    out = run_python(
        """
        import accel
        a = accel.zeros(4)  # the stream's first operation, a fill
        try:
            a.copy_to_host()  # its second fails, by injection
        except accel.AccelError as e:
            print("first:", e.status_name)
        import numpy
        print("second:", numpy.asarray(accel.zeros(4)).tolist())  # one operation on the device's new stream
        """,
        ACCEL_BACKENDS="sim", ACCEL_SIM_PROFILE="a100-pcie-4", ACCEL_SIM_FAULTS="stream_error_after=1")
    assert "first: ACCEL_ERROR_INTERNAL" in out, out
    assert "second: [0.0, 0.0, 0.0, 0.0]" in out, out
