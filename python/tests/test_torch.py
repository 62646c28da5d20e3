"""accel <-> torch round trips through DLPack, where torch is installed (it is optional)."""
import pytest

from conftest import optional_module

import accel

np = pytest.importorskip("numpy")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


@pytest.fixture(scope="module")
def torch():
    return optional_module("torch", "optional: the accel <-> torch round trips run where it is installed",
                           installed_here=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_accel_to_torch_to_accel_shares_memory(torch, dtype):
    a = accel.zeros((3, 5), dtype)
    t = torch.from_dlpack(a)
    assert t.data_ptr() == a.data_ptr
    back = accel.from_dlpack(t)
    assert back.data_ptr == a.data_ptr and back.dtype == dtype


def test_non_contiguous_zero_size_and_0d(torch):
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)[:, ::2]
    a = accel.from_dlpack(t)
    assert a.data_ptr == t.data_ptr() and a.strides == (24, 8)
    assert torch.from_dlpack(a).data_ptr() == t.data_ptr()
    assert accel.from_dlpack(torch.zeros(0, 3)).shape == (0, 3)
    s = torch.tensor(2.5)
    assert accel.from_dlpack(s).shape == ()
    assert float(accel.from_dlpack(s).copy_to_host()) == 2.5
