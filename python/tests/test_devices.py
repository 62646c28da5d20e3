import pytest

import accel


def test_devices_host():
    devices = accel.devices()
    assert len(devices) >= 1
    d = devices[0]
    assert d.index == 0
    assert d.backend == "host"
    assert d.kind == "cpu"
    assert isinstance(d.name, str) and d.name
    assert d == accel.device(0) and hash(d) == hash(accel.device(0))
    assert accel.device(d.stable_id) == d
    assert "Device 0" in repr(d)


def test_capabilities_dict():
    caps = accel.devices()[0].capabilities
    assert isinstance(caps, dict)
    for key in ("name", "kind", "memory_total", "max_allocation", "compute_units", "max_work_group_dims",
                "backend_name", "stable_id", "uuid"):
        assert key in caps
    assert caps["backend_name"] == "host"
    assert isinstance(caps["max_work_group_dims"], tuple) and len(caps["max_work_group_dims"]) == 3
    assert isinstance(caps["uuid"], bytes) and len(caps["uuid"]) == 16
    assert caps["memory_total"] > 0


def test_features_and_memory_info():
    d = accel.devices()[0]
    assert "native-host" in d.kernel_formats
    assert isinstance(d.features, list)
    free, total = d.memory_info()
    assert 0 < free <= total


def test_physical_device_and_access_paths():
    d = accel.devices()[0]
    p = d.physical_device
    props = p.properties
    assert props["kind"] == "cpu"
    assert props["device_count"] >= 1
    assert d in p.devices
    assert p in accel.physical_devices()


def test_unknown_device_index():
    with pytest.raises(accel.AccelError) as info:
        accel.device(99)
    assert info.value.status == accel.Status.ACCEL_ERROR_NOT_FOUND
    assert info.value.status_name == "ACCEL_ERROR_NOT_FOUND"
    assert "device index 99 is out of range" in str(info.value)
    with pytest.raises(accel.AccelError):
        accel.zeros(4, device=99)
    with pytest.raises(accel.AccelError):
        accel.device("no-such-stable-id")


def test_error_type():
    assert issubclass(accel.AccelError, RuntimeError)
    assert accel.AccelError.__module__ == "accel"


def test_version():
    v = accel.version()
    assert v["abi_version"][0] == 1
