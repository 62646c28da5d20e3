"""DLPack device types, stream semantics and the buffer protocol; simulated devices and topology."""
import ctypes

import pytest

from conftest import numpy2

import accel

np = pytest.importorskip("numpy")

KDLCPU, KDLEXTDEV = 1, 12


def test_host_device_is_dlpack_cpu():
    a = accel.zeros(4, "float32")
    assert a.__dlpack_device__() == (KDLCPU, 0)
    assert accel.device().dlpack_device == (KDLCPU, 0)


def test_buffer_protocol_is_zero_copy():
    a = accel.zeros((3, 4), "int32")
    with memoryview(a) as m:
        assert m.shape == (3, 4) and m.format == "i" and not m.readonly
        m[1, 2] = 42
    assert a.copy_to_host()[1, 2] == 42
    frozen = np.arange(6, dtype=np.int16)
    frozen.flags.writeable = False
    ro = accel.asarray(frozen)
    with memoryview(ro) as m:
        assert m.readonly
    get_buffer = ctypes.pythonapi.PyObject_GetBuffer
    get_buffer.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    view = (ctypes.c_byte * 256)()  # room for a Py_buffer
    with pytest.raises(BufferError, match="the array is read-only"):
        get_buffer(ro, ctypes.addressof(view), 0x1)  # PyBUF_WRITABLE
    strided = accel.asarray(np.arange(10, dtype=np.int64)[::2])
    with memoryview(strided) as m:
        assert m.strides == (16,) and m.tolist() == [0, 2, 4, 6, 8]
    assert bytes(strided) == np.arange(0, 10, 2, dtype=np.int64).tobytes()  # copied by Python
    with pytest.raises(BufferError, match="not C-contiguous"):
        get_buffer(strided, ctypes.addressof(view), 0x38)  # PyBUF_C_CONTIGUOUS
    with pytest.raises(BufferError, match="no format for bfloat16"):
        memoryview(accel.zeros(2, "bfloat16"))


def test_bfloat16_round_trips_through_numpy():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 on the numpy side needs ml_dtypes")
    x = np.arange(8).astype(ml_dtypes.bfloat16)
    a = accel.asarray(x)
    assert a.dtype == "bfloat16" and a.data_ptr == x.ctypes.data
    view = np.asarray(a)
    assert view.dtype == ml_dtypes.bfloat16 and view.ctypes.data == x.ctypes.data
    np.testing.assert_array_equal(a.copy_to_host(), x)


def test_dlpack_stream_argument():
    a = accel.zeros(8, "float32")
    for stream in (None, -1):
        capsule = a.__dlpack__(stream=stream)
        assert type(capsule).__name__ == "PyCapsule"
    with accel.Stream() as s:
        assert a.__dlpack__(stream=s) is not None  # an accel consumer: the wait is enqueued on s
    with pytest.raises(BufferError, match="has no streams"):
        a.__dlpack__(stream=1)


def test_dlpack_to_another_device_is_refused():
    a = accel.zeros(8, "float32")
    with pytest.raises(BufferError, match=r"cannot export an array of DLPack device \(1, 0\) to \(2, 0\)"):
        a.__dlpack__(dl_device=(2, 0))


def test_accel_from_dlpack_of_accel_is_the_same_buffer():
    a = accel.zeros(8, "float32")
    assert accel.from_dlpack(a).data_ptr == a.data_ptr
    assert accel.from_dlpack(a.__dlpack__(max_version=(1, 0))).data_ptr == a.data_ptr
    assert accel.from_dlpack(a, copy=True).data_ptr != a.data_ptr


SIM = dict(ACCEL_BACKENDS="sim", ACCEL_SIM_PROFILE="h100-sxm-8")


def test_simulated_devices_are_dlpack_extdev(run_python):
    numpy2()
    out = run_python(
        """
        import accel, numpy as np
        devices = accel.devices()
        assert len(devices) == 8, devices
        assert [d.dlpack_device for d in devices] == [(12, i) for i in range(8)]
        a = accel.zeros(16, "float32", device=3)
        assert a.__dlpack_device__() == (12, 3)
        # numpy takes CPU tensors only; asked for the host, the export is
        # zero-copy because simulated memory has a host address.
        v = np.from_dlpack(a, device="cpu")
        assert v.ctypes.data == a.data_ptr
        try:
            np.from_dlpack(a)
            raise SystemExit("numpy imported a kDLExtDev tensor")
        except (BufferError, RuntimeError, ValueError) as e:
            print("refused:", type(e).__name__)
        # accel consumes its own ExtDev capsules as views of the same buffer.
        b = accel.from_dlpack(a.__dlpack__(max_version=(1, 0)))
        assert b.data_ptr == a.data_ptr and b.device == a.device
        c = accel.from_dlpack(a, device=5)
        assert c.device.index == 5 and c.data_ptr != a.data_ptr
        print("ok")
        """,
        **SIM,
    )
    assert "ok" in out and "refused:" in out


def test_dlpack_device_id_is_the_backend_index_whatever_is_hidden(run_python):
    # ACCEL_VISIBLE_DEVICES (as accel.ray.init_worker sets it) hides devices 0 and 2: the visible ones keep the
    # vendor's numbering in DLPack (for CUDA, what the consumer's torch.device("cuda", n) means), not their count.
    out = run_python(
        """
        import accel
        devices = accel.devices()
        assert [d.index for d in devices] == [0, 1], devices
        assert [d.dlpack_device for d in devices] == [(12, 1), (12, 3)], [d.dlpack_device for d in devices]
        assert accel.zeros(4, "float32", device=1).__dlpack_device__() == (12, 3)
        print("ok")
        """,
        ACCEL_VISIBLE_DEVICES="1,3",
        **SIM,
    )
    assert "ok" in out


def test_sim_out_of_memory_and_topology(run_python):
    out = run_python(
        """
        import accel
        d0, d1 = accel.device(0), accel.device(1)
        link = d0.link(d1)
        assert link["link_class"] == "FABRIC", link
        assert link["fabric"].startswith("nvlink") and link["peer_access"] and link["bandwidth"] > 0
        assert d0.link(d0)["link_class"] == "SELF"
        topo = d0.topology
        assert topo["pci_bus_id"] and topo["numa_node"] >= 0
        levels = [dom["level"] for dom in topo["domains"]]
        assert "clique" in levels and "node" in levels, levels
        report = accel.loader_report()
        sim = [e for e in report if e["backend"] == "sim"]
        assert sim and sim[0]["state"] == "loaded" and sim[0]["device_count"] == 8, report
        skipped = [e for e in report if e["state"] == "skipped"]
        assert all("ACCEL_BACKENDS" in e["reason"] for e in skipped), skipped
        for nic in accel.nics():
            assert d0.nic_link(nic["index"])["link_class"]
        try:
            d0.nic_link(10**6)
            raise SystemExit("nic index accepted")
        except accel.AccelError as e:
            assert e.status_name == "ACCEL_ERROR_INVALID_ARGUMENT", e
        print("ok")
        """,
        **SIM,
    )
    assert "ok" in out


def test_loader_warnings_name_the_override_that_matched_nothing(run_python):
    out = run_python(
        """
        import accel
        warnings = accel.loader_warnings()
        assert [w["item"] for w in warnings] == ["h0st", "9"], warnings
        assert warnings[0]["setting"] == "ACCEL_BACKENDS" and warnings[0]["value"] == "host,h0st", warnings
        assert "'h0st' names no backend that was found" in warnings[0]["message"], warnings
        assert warnings[1]["setting"] == "ACCEL_VISIBLE_DEVICES", warnings
        assert "'9' matches no device" in warnings[1]["message"], warnings
        assert len(accel.devices()) == 1  # the instance works with the rest of the settings
        print("ok")
        """,
        ACCEL_BACKENDS="host,h0st",
        ACCEL_VISIBLE_DEVICES="0,9",
        ACCEL_LOG="off",
    )
    assert "ok" in out


def test_physical_devices_match_capability_selectors(run_python):
    out = run_python(
        """
        import accel
        phys = accel.physical_devices()
        assert len(phys) == 8
        assert all(p.matches("kind==gpu && mem>=79GiB && fp8") for p in phys)
        assert [p.properties["index"] for p in phys if p.matches("numa_node == 1")] == [4, 5, 6, 7]
        why = phys[0].explain("mem >= 100GiB")
        assert why.startswith("mem >= 100GiB: the device has 79.6 GiB"), why
        assert phys[0].explain("fp8") == ""
        try:
            phys[0].matches("mem >=")
            raise SystemExit("a bad selector was accepted")
        except accel.AccelError as e:
            assert e.status_name == "ACCEL_ERROR_INVALID_ARGUMENT" and "column 7" in str(e), e
        print("ok")
        """,
        **SIM,
    )
    assert "ok" in out
