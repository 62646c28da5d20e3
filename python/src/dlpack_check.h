// The validation of a DLPack tensor before from_dlpack reads or imports it
// (docs/interop.md, "DLPack"): the producer's fields are outside input. Pure
// C++, no Python: tests/fuzz/dlpack_fuzzer.cc fuzzes it on its own.
#pragma once

#include <cstdint>
#include <string>

#include "dlpack_types.h"

namespace accelpy {

// The most dimensions an imported tensor may have: numpy 2's NPY_MAXDIMS. A tensor of at most INT64_MAX bytes has
// at most 62 dimensions larger than 1, so more than 64 only add dimensions of size 1 or 0; a larger `ndim` is
// garbage, and trusting it would make the import read up to 2^31 shape and stride entries from the producer's memory.
constexpr int32_t kDLPackMaxDims = 64;

// Where a valid tensor's bytes are: element i (indices i_0..i_n-1) starts at `element0 + sum i_k * strides[k] *
// itemsize`, and every element's bytes lie in [element0 + lo, element0 + hi). An empty tensor (a dimension of size
// 0) has lo == hi == 0 and touches no memory.
struct DLPackExtent {
  int64_t lo = 0;         // <= 0
  int64_t hi = 0;         // >= lo; hi - lo fits in int64
  uint64_t element0 = 0;  // data + byte_offset, as an address
  bool empty = false;     // a dimension of size 0
};

// Checks `tensor`, whose dtype has `itemsize` bytes per element (the caller has checked the dtype itself), and
// computes its extent with overflow-checked arithmetic. Returns "" when the tensor is valid (and sets `result`), or
// the reason it is not, naming the field ("from_dlpack: 'ndim' is -1 ...", "from_dlpack: shape[2] is -4"). Refused:
// `ndim` outside [0, kDLPackMaxDims]; a NULL `shape` with `ndim` > 0; a negative dimension; more than INT64_MAX
// bytes of elements (the non-zero dimensions times itemsize, as numpy counts); a stride whose bytes (stride x
// itemsize) or extent ((shape - 1) x stride bytes, and the sum over the dimensions) overflow int64; `data` +
// `byte_offset` past the address space; and for a non-empty tensor a NULL `data` or an extent that wraps around
// the address space. Reads `tensor.shape` and `tensor.strides` (ndim entries each, once `ndim` is valid), never
// `tensor.data`. Thread-safe.
std::string check_dlpack_tensor(const DLTensor& tensor, int64_t itemsize, DLPackExtent& result);

}  // namespace accelpy
