"""numpy <-> accel without copies: accel.asarray, accel.from_dlpack, numpy.asarray and numpy.from_dlpack.

    python dlpack_numpy.py

Each step shows that both sides use one piece of memory: the same data pointer, and a write through one side
read back through the other. Then, when jax imports, a jax <-> accel round trip; otherwise it says that it is
skipped and why. Exits 0 when every check holds, 1 when one fails or an Accel call fails.
"""

import sys

import numpy as np

import accel

KDLCPU = (1, 0)  # DLPack's (device type, id) of host memory, the only one numpy imports


def check(condition, what):
    """Stops the sample (exit status 1) when `condition` is false."""
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    print(f"  ok: {what}")


def numpy_view(array):
    """numpy.from_dlpack of an accel array. A device whose DLPack device is not the host's (simulated devices
    are kDLExtDev) is asked for host memory with device="cpu"; its memory is host-visible, so this is still a
    view, not a copy."""
    if array.__dlpack_device__() == KDLCPU:
        return np.from_dlpack(array)
    return np.from_dlpack(array, device="cpu")


def aligned_empty(n, dtype, alignment=64):
    """An uninitialised numpy array whose data is `alignment`-byte aligned (jax imports such memory in place
    and copies anything less aligned)."""
    dtype = np.dtype(dtype)
    raw = np.empty(n * dtype.itemsize + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + n * dtype.itemsize].view(dtype)


def pick_device():
    """The first device that uses host memory in place (accel.asarray(copy=False) works): the host backend's,
    simulated ones. Devices that cannot import host memory (OpenCL's, for example) copy instead."""
    probe = np.zeros(1, dtype=np.float32)
    for device in accel.devices():
        try:
            accel.asarray(probe, device=device, copy=False)
            return device
        except accel.AccelError:
            continue
    return None


def numpy_to_accel(device):
    print("1. numpy -> accel with accel.asarray (the buffer protocol), back with numpy.asarray")
    host = np.arange(8, dtype=np.float32)
    a = accel.asarray(host, device=device)  # imports host's memory (accel_buffer_import, HOST_POINTER): no copy
    print(f"  {a} on {a.device}")
    check(a.data_ptr == host.ctypes.data, f"accel array shares numpy's memory (0x{a.data_ptr:x})")
    view = np.asarray(a)  # __array_interface__: a numpy view of the accel array
    view[0] = 100.0
    check(host[0] == 100.0, "a write through numpy.asarray(accel array) shows in the original numpy array")
    host[1] = -1.0
    check(a.copy_to_host()[1] == -1.0, "a write to the numpy array shows in the accel array (copy_to_host)")


def dlpack_round_trip(device):
    print("2. numpy -> accel.from_dlpack -> numpy.from_dlpack (DLPack capsules both ways)")
    host = np.linspace(0.0, 1.0, 16, dtype=np.float32).reshape(4, 4)
    # accel.from_dlpack consumes numpy's capsule; numpy's memory stays alive while `a` uses it.
    a = accel.from_dlpack(host, device=device)
    back = numpy_view(a)
    check(a.data_ptr == host.ctypes.data == back.ctypes.data,
          f"one data pointer on all three (0x{host.ctypes.data:x}), shape {a.shape}, strides {a.strides}")
    host[3, 3] = 42.0  # numpy < 2 makes every DLPack import read-only, so write through the original
    check(back[3, 3] == 42.0, "a write to the original shows in the round-tripped array")

    print("3. a strided view and a read-only array keep their layout and their read-only flag")
    strided = host[::2, ::-1]  # every other row, columns reversed: negative strides
    s = accel.from_dlpack(strided, device=device)
    check(s.strides == strided.strides and s.data_ptr == strided.ctypes.data,
          f"strided view imported in place, strides {s.strides}")
    frozen = np.arange(4, dtype=np.int32)
    frozen.flags.writeable = False
    r = accel.asarray(frozen, device=device)
    check(r.readonly, "a read-only numpy array becomes a read-only accel array")
    check(not np.asarray(r).flags.writeable and not numpy_view(r).flags.writeable,
          "and numpy.asarray and numpy.from_dlpack of it are read-only again")


def accel_to_numpy(device):
    print("4. accel-owned memory seen from numpy")
    z = accel.zeros(6, "int32", device=device)  # memory Accel allocated
    np.asarray(z)[:] = np.arange(6, dtype=np.int32) * 10  # a writable view (__array_interface__)
    check(list(z.copy_to_host()) == [0, 10, 20, 30, 40, 50], "numpy wrote into the accel buffer")
    view = numpy_view(z)
    check(view.ctypes.data == z.data_ptr, "numpy.from_dlpack of it is a view, not a copy")
    del z  # the DLPack view keeps the accel buffer alive
    check(view.sum() == 150, "the view still reads the buffer after the accel array is gone")


def jax_round_trip(device):
    print("5. jax <-> accel")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        print(f"  skipped: jax is not importable ({type(e).__name__}: {e}); pip install jax to run this step")
        return
    print(f"  jax {jax.__version__} on {jax.devices()[0]}")
    host = aligned_empty(8, np.float32)  # 64-byte aligned: jax can use it without a copy
    host[:] = np.arange(8, dtype=np.float32)
    a = accel.asarray(host, device=device)
    if a.__dlpack_device__() == KDLCPU:
        j = jnp.from_dlpack(a)  # accel -> jax
        check(np.array_equal(np.asarray(j), host), "jax sees the accel array's values")
        in_place = j.unsafe_buffer_pointer() == a.data_ptr
        print(f"  accel -> jax {'shares memory' if in_place else 'copied (jax copies memory it cannot use in place)'}")
    else:
        # jax's from_dlpack takes no device="cpu" request: it refuses DLPack devices it does not have.
        print(f"  accel -> jax skipped: this device's DLPack device is {a.__dlpack_device__()}, jax (CPU) "
              f"imports {KDLCPU} only")
        j = jnp.asarray(host)
    # jax -> accel. jax arrays are immutable, but jax's capsule does not say read-only: do not write to `b`.
    k = jnp.arange(8, dtype=jnp.float32) * 2 + j
    b = accel.from_dlpack(k, device=device)
    check(b.data_ptr == k.unsafe_buffer_pointer(), "accel imports jax's buffer in place")
    check(np.array_equal(b.copy_to_host(), np.arange(8, dtype=np.float32) * 3), "accel reads jax's result")


def main():
    device = pick_device()  # ACCEL_BACKENDS chooses which backends are loaded
    if device is None:
        print(f"dlpack_numpy: none of the visible devices ({accel.devices()}) uses host memory in place, so "
              "there is no zero-copy to show; try ACCEL_BACKENDS=host", file=sys.stderr)
        return 1
    print(f"device: {device} (DLPack device {device.dlpack_device})")
    numpy_to_accel(device)
    dlpack_round_trip(device)
    accel_to_numpy(device)
    jax_round_trip(device)
    print("all checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (accel.AccelError, BufferError) as e:
        print(f"dlpack_numpy: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
