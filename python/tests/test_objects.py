"""The object store from Python: Runtime.put, accel.put / accel.get, ObjectRef, ObjectView (docs/objectstore.md).

The ctest python.objects runs this file on the sim backend's h100-sxm-8 node (ACCEL_BACKENDS=sim
ACCEL_SIM_PROFILE=h100-sxm-8). The tests that need that node's devices skip elsewhere, saying so.
"""
import gc
import hashlib
import subprocess
import sys
import time

import numpy as np
import pytest

import accel

STATUS = accel.Status
MIB = 1 << 20


@pytest.fixture
def rt(tmp_path):
    spill = tmp_path / "spill"
    with accel.Runtime(workers=2, store_host_capacity=4 * MIB, store_device_capacity=2 * MIB,
                       spill_directory=str(spill)) as runtime:
        yield runtime


@pytest.fixture
def node():
    """Skips unless the devices are the sim backend's h100-sxm-8 node."""
    devices = accel.devices()
    if len(devices) != 8 or any(d.backend != "sim" for d in devices):
        pytest.skip("needs ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8 (the ctest python.objects)")
    return devices


def test_put_copies_and_a_host_get_is_a_read_only_zero_copy_view(rt):
    a = np.arange(1000, dtype=np.float32).reshape(10, 100)
    ref = rt.put(a, name="a")
    a[0, 0] = -1.0  # a put copies: the object keeps what it was given
    assert ref.size == a.nbytes and ref.name == "a"
    view = ref.get()
    b = np.asarray(view)
    assert b.dtype == np.float32 and b.shape == (10, 100)
    assert b[0, 0] == 0.0 and b[9, 99] == 999.0
    assert not b.flags.writeable
    with pytest.raises(ValueError):
        b[0, 0] = 5.0
    assert memoryview(view).readonly
    # Zero-copy: a second view of the same replica shows the same memory.
    again = np.asarray(ref.get())
    assert again.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    # DLPack: numpy takes it without a copy.
    c = np.from_dlpack(view)
    assert c.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    assert view.__dlpack_device__() == (1, 0)
    info = ref.info()
    assert info["on_host"] and info["views"] == 2 and info["references"] == 1
    with pytest.raises(accel.AccelError, match=r"export\(s\)"):
        view.release()  # b and c still use its bytes
    del b, again
    gc.collect()
    with pytest.raises(accel.AccelError, match=r"1 export\(s\)"):
        view.release()  # c, a DLPack tensor, still uses them
    del c
    gc.collect()
    view.release()
    assert view.released
    with pytest.raises(accel.AccelError, match="released"):
        view.tobytes()


def test_versioned_dlpack_capsule_carries_the_read_only_flag(rt):
    ref = rt.put(b"hello object store")
    view = ref.get()
    capsule = view.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(capsule)
    # A legacy capsule has no read-only flag: its consumer would get writable memory over the object's bytes.
    with pytest.raises(BufferError, match="DLPack 1.0 consumers only"):
        view.__dlpack__()
    with pytest.raises(BufferError, match="host memory"):
        view.__dlpack__(dl_device=(2, 0))
    assert view.tobytes() == b"hello object store"


def test_module_level_put_and_get_use_the_current_runtime(rt):
    with rt:
        ref = accel.put(bytearray(b"xyz" * 1000))
        assert accel.get(ref).tobytes() == b"xyz" * 1000
    assert accel.current_runtime  # still importable; no runtime open now
    with pytest.raises(accel.AccelError, match="no accel.Runtime is open"):
        accel.put(b"nothing open")


def test_device_replicas_are_read_only_arrays_with_the_same_bytes(rt, node):
    a = np.arange(64 * 1024, dtype=np.int32)  # 256 KiB
    ref = rt.put(a)
    on0 = ref.get(0)
    assert isinstance(on0, accel.Array) and on0.shape == (64 * 1024,)
    assert ref.on_device(0) and not ref.on_device(1)
    assert (np.asarray(on0.copy_to_host() if hasattr(on0, "copy_to_host") else on0) == a).all()
    on1 = ref.get(1)  # a peer copy from device 0
    assert ref.info()["device_replicas"] == 2
    assert rt.object_store_usage(1)["transfers_in"] == 1
    assert (np.asarray(on1.copy_to_host() if hasattr(on1, "copy_to_host") else on1) == a).all()
    del on0, on1
    gc.collect()
    assert ref.info()["views"] == 0, "a device view is released with its array"


def test_a_full_store_spills_and_reads_back_every_byte(rt):
    data = [np.full(MIB, i, dtype=np.uint8) for i in range(6)]
    refs = [rt.put(d) for d in data]
    usage = rt.object_store_usage()
    assert usage["used"] == 4 * MIB and usage["moved_out"] == 2
    assert refs[0].info()["on_disk"] and not refs[0].info()["on_host"]
    for ref, d in zip(refs, data):
        view = ref.get()
        assert (np.asarray(view) == d).all()
        view.release()
    assert rt.object_store_usage()["restored"] >= 2


def test_bad_input_says_what_was_wrong(rt):
    with pytest.raises(TypeError, match="expected bytes, a buffer-protocol object"):
        rt.put(12345)
    with pytest.raises(accel.AccelError, match="not C-contiguous"):
        rt.put(np.arange(100, dtype=np.int64)[::2])
    with pytest.raises(accel.AccelError, match="'desc->size' is 0"):
        rt.put(b"")
    ref = rt.put(b"abc")
    with pytest.raises(accel.AccelError, match="'location' 99") as info:
        ref.get(99)
    assert info.value.status == STATUS.ACCEL_ERROR_INVALID_ARGUMENT
    ref.release()
    assert ref.released
    with pytest.raises(accel.AccelError, match="released"):
        ref.get()
    ref.release()  # idempotent


def test_a_view_outlives_its_reference_and_the_runtime_closes_cleanly(tmp_path):
    runtime = accel.Runtime(workers=2)
    ref = runtime.put(b"kept by its view")
    view = ref.get()
    ref.release()
    assert view.tobytes() == b"kept by its view"
    view.release()
    assert runtime.object_store_usage()["used"] == 0
    runtime.close()
    with pytest.raises(accel.AccelError, match="closed"):
        runtime.put(b"late")


def test_a_device_replica_read_in_place_holds_the_close(node):
    # A device replica's array is the store's memory: a memoryview or DLPack capsule over it would read freed (and
    # reused) memory once the runtime closed, so the close refuses while one lives; the array alone raises on use.
    runtime = accel.Runtime(workers=1)
    ref = runtime.put(np.arange(1024, dtype=np.uint32))
    replica = ref.get(0)
    view = memoryview(replica)
    with pytest.raises(accel.AccelError, match=r"1 device replica array\(s\) are still used") as info:
        runtime.close()
    assert info.value.status_name == "ACCEL_ERROR_FAILED_PRECONDITION"
    assert not runtime.closed and view[5] == 5
    view.release()
    capsule = replica.__dlpack__(max_version=(1, 0))
    with pytest.raises(accel.AccelError, match="device replica"):
        runtime.close()
    del capsule  # never consumed: its deleter runs with it
    # __array_interface__ has no release: an array whose address went out that way holds the close while it lives.
    assert replica.__array_interface__["data"][0] != 0
    with pytest.raises(accel.AccelError, match="device replica"):
        runtime.close()
    held = ref.get(0)  # another array over the same replica, its address never handed out
    del replica
    runtime.close()
    assert runtime.closed
    with pytest.raises(accel.AccelError, match="stale"):
        held.copy_to_host()


def test_put_file_streams_parts_to_devices_with_progress(rt, node, tmp_path):
    data = np.arange(3 * 100_003, dtype=np.uint8) * 7
    path = tmp_path / "weights.bin"
    path.write_bytes(data.tobytes())
    seen = []
    parts = rt.put_file(str(path), devices=[0, 3, -1], offset=3, chunk_size=4096,
                        progress=lambda done, total: seen.append((done, total)))
    assert len(parts) == 3 and all(isinstance(p, accel.ObjectRef) for p in parts)
    total = data.size - 3
    assert seen[-1] == (total, total) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert parts[1].on_device(3) and not parts[1].info()["on_host"]
    joined = b"".join(p.get().tobytes() for p in parts)
    assert joined == data.tobytes()[3:]
    with pytest.raises(accel.AccelError, match="cannot be opened") as info:
        rt.put_file(str(tmp_path / "missing.bin"))
    assert info.value.status == STATUS.ACCEL_ERROR_NOT_FOUND

    def fail(done, total):
        raise RuntimeError("stop counting")

    with pytest.raises(RuntimeError, match="stop counting"):
        rt.put_file(str(path), progress=fail)


def test_a_task_near_an_object_runs_where_its_replica_is(rt, node):
    ref = rt.put(np.arange(1000, dtype=np.int64))
    on5 = ref.get(5)  # a replica on runtime device 5
    target = rt.devices()[5]["device"]

    def where(ctx):
        return ctx.devices[0]

    plain = rt.submit(where, devices=1, share=0.5).result()
    near = rt.submit(where, devices=1, share=0.5, near=[ref]).result()
    assert plain != target and near == target
    with pytest.raises(TypeError, match="accel.ObjectRef"):
        rt.submit(where, devices=1, near=[b"not an object"])
    del on5


def test_a_task_returning_an_object_makes_it_its_result(rt):
    """A task that returns an ObjectRef sets it as its result (its lineage: docs/objectstore.md); the future gives
    a new reference to it, with the shape it was put with, and the object goes with the last reference."""
    src = rt.put(np.arange(256, dtype=np.int32))

    def double(ctx):
        return rt.put(np.asarray(src.get()) * 2, name="doubled")

    fut = rt.submit(double, near=[src])
    out = fut.result()
    assert isinstance(out, accel.ObjectRef) and out.name == "doubled"
    assert np.array_equal(np.asarray(out.get()), np.arange(256, dtype=np.int32) * 2)
    assert out.info()["references"] == 2  # ours and the future's
    again = fut.result()
    assert again.info()["references"] == 3
    del again, fut
    gc.collect()
    assert out.info()["references"] == 1
    used = rt.object_store_usage()["replicas"]
    del out
    gc.collect()
    assert rt.object_store_usage()["replicas"] == used - 1


@pytest.fixture
def agent_socket(tmp_path, monkeypatch):
    """A private object agent for the test (idle 200 ms); none outlives it."""
    path = tmp_path / "agent" / "object-agent.sock"
    monkeypatch.setenv("ACCEL_OBJECT_AGENT_SOCKET", str(path))
    monkeypatch.setenv("ACCEL_OBJECT_AGENT_IDLE_MS", "200")
    yield path
    gc.collect()
    deadline = time.monotonic() + 10
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)  # the agent removes its socket when it exits
    assert not path.exists(), "the object agent outlived the test"


def test_an_object_shared_by_token_is_read_by_another_process_without_a_copy(agent_socket):
    data = np.random.default_rng(7).integers(0, 256, size=1 << 20, dtype=np.uint8)
    with accel.Runtime(workers=1) as exporter, accel.Runtime(workers=1) as importer:
        ref = exporter.put(data, name="shared")
        token = ref.share()
        assert isinstance(token, str) and token.startswith("accel-object:") and len(token) == 45
        assert ref.share() == token
        # Another process: imports the token and prints the bytes' digest.
        script = (
            "import hashlib, sys, accel\n"
            "with accel.Runtime(workers=1) as rt:\n"
            "    ref = rt.import_object(sys.argv[1])\n"
            "    view = ref.get()\n"
            "    print(hashlib.sha256(view.tobytes()).hexdigest(), rt.object_store_usage()['used'])\n"
            "    view.release()\n"
            "    ref.release()\n")
        out = subprocess.run([sys.executable, "-c", script, token], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [hashlib.sha256(data.tobytes()).hexdigest(), "0"]
        # Here too, in another runtime: a read-only view of the shared pages, nothing charged to its store.
        imported = importer.import_object(token)
        assert imported.size == data.nbytes
        view = imported.get()
        assert np.array_equal(np.asarray(view), data)
        assert memoryview(view).readonly
        assert importer.object_store_usage()["used"] == 0
        view.release()
        imported.release()
        ref.release()
        with pytest.raises(accel.AccelError, match="no object") as e:
            importer.import_object(token)  # released everywhere
        assert e.value.status == STATUS.ACCEL_ERROR_NOT_FOUND
        with pytest.raises(accel.AccelError, match="is not an object token") as e:
            importer.import_object("accel-object:nope")
        assert e.value.status == STATUS.ACCEL_ERROR_INVALID_ARGUMENT


def test_a_view_imports_through_dlpack_and_stays_until_its_import_goes(rt):
    ref = rt.put(np.arange(16, dtype=np.int32))
    view = ref.get()
    imported = accel.from_dlpack(view)  # an accel.Array over the view's bytes (it crashed before)
    assert np.array_equal(np.asarray(imported), np.arange(16, dtype=np.int32))
    with pytest.raises(accel.AccelError, match=r"export\(s\)"):
        view.release()
    del imported
    gc.collect()
    view.release()
    assert view.released


def test_closing_a_runtime_releases_its_views_and_refuses_while_numpy_reads_one():
    # Closing destroys the object store, whose memory the views read: a numpy array over a view read freed memory
    # after the close, and the view itself still answered.
    rt = accel.Runtime(workers=1)
    ref = rt.put(np.arange(1 << 16, dtype=np.int32))
    kept = ref.get()
    exported = ref.get()
    a = np.asarray(exported)
    with pytest.raises(accel.AccelError, match="still used by numpy arrays") as info:
        rt.close()
    assert info.value.status == accel.Status.ACCEL_ERROR_FAILED_PRECONDITION
    assert not rt.closed
    assert int(a[-1]) == (1 << 16) - 1, "the store and its bytes are still there"
    del a
    gc.collect()
    rt.close()
    assert rt.closed
    for view in (kept, exported):
        with pytest.raises(accel.AccelError, match="was released"):
            view.tobytes()


def test_a_close_that_fails_leaves_the_views_readable():
    # A close from one of the runtime's own tasks fails and leaves the runtime open: its views must stay readable
    # (they were released before the close was known to fail).
    rt = accel.Runtime(workers=1)
    try:
        view = rt.put(b"still here").get()

        def closer():
            try:
                rt.close()
                return "closed", b""
            except accel.AccelError as e:
                return e.status_name, view.tobytes()

        status, data = rt.submit(closer).result(timeout=60)
        assert status == "ACCEL_ERROR_FAILED_PRECONDITION"
        assert data == b"still here"
        assert not rt.closed
    finally:
        rt.close()
