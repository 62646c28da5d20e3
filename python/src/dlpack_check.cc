#include "dlpack_check.h"

#include <cinttypes>
#include <cstdio>

namespace accelpy {

namespace {

std::string fail(const std::string& what) { return "from_dlpack: " + what; }

std::string field(const char* name, int32_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%" PRIx64, v);
  return text;
}

}  // namespace

std::string check_dlpack_tensor(const DLTensor& tensor, int64_t itemsize, DLPackExtent& result) {
  DLPackExtent out;  // `result` is set only for a valid tensor
  if (itemsize <= 0) return fail("the dtype's item size is " + std::to_string(itemsize));
  const int32_t ndim = tensor.ndim;
  if (ndim < 0 || ndim > kDLPackMaxDims)
    return fail("'ndim' is " + std::to_string(ndim) + " (0 to " + std::to_string(kDLPackMaxDims) +
                " dimensions are supported)");
  if (ndim > 0 && tensor.shape == nullptr) return fail("'shape' is NULL with 'ndim' " + std::to_string(ndim));

  // The dimensions, and the size in bytes of the non-zero ones (what the C-contiguous strides of a NULL `strides`
  // multiply up to, and what numpy requires to fit).
  int64_t bytes = itemsize;
  for (int32_t i = 0; i < ndim; ++i) {
    const int64_t n = tensor.shape[i];
    if (n < 0) return fail(field("shape", i) + " is " + std::to_string(n));
    if (n == 0) {
      out.empty = true;
      continue;
    }
    if (__builtin_mul_overflow(bytes, n, &bytes))
      return fail("the tensor's size in bytes overflows int64 at " + field("shape", i) + " (" + std::to_string(n) +
                  ")");
  }

  // Each stride in bytes, and the extent: element 0 plus (shape - 1) strides each way.
  int64_t lo = 0, hi = itemsize, total = itemsize;  // total: hi - lo
  for (int32_t i = 0; i < ndim && tensor.strides != nullptr; ++i) {
    int64_t stride = 0;
    if (__builtin_mul_overflow(tensor.strides[i], itemsize, &stride))
      return fail(field("strides", i) + " (" + std::to_string(tensor.strides[i]) + ") x the item size (" +
                  std::to_string(itemsize) + ") overflows int64");
    if (out.empty) continue;
    int64_t span = 0, size = 0;
    if (__builtin_mul_overflow(tensor.shape[i] - 1, stride, &span) || __builtin_sub_overflow(int64_t{0}, span, &size) ||
        __builtin_add_overflow(total, span < 0 ? size : span, &total))
      return fail("the extent of " + field("shape", i) + " x " + field("strides", i) + " overflows int64 (" +
                  std::to_string(tensor.shape[i]) + " x " + std::to_string(tensor.strides[i]) + " x " +
                  std::to_string(itemsize) + " bytes)");
    (span < 0 ? lo : hi) += span;  // both within [-total, total]: no overflow
  }
  if (tensor.strides == nullptr && !out.empty) hi = total = bytes;  // C-contiguous: [0, bytes)

  const uint64_t data = reinterpret_cast<uintptr_t>(tensor.data);
  uint64_t element0 = 0;
  if (__builtin_add_overflow(data, tensor.byte_offset, &element0))
    return fail("'data' (" + hex(data) + ") + 'byte_offset' (" + std::to_string(tensor.byte_offset) +
                ") overflows the address space");
  out.element0 = element0;
  if (out.empty) {
    result = out;
    return "";
  }
  if (tensor.data == nullptr) return fail("'data' is NULL for a tensor of " + std::to_string(total) + " bytes");
  // lo <= 0 < hi: the bytes run from element0 - |lo| to element0 + hi.
  if (element0 < static_cast<uint64_t>(0) - static_cast<uint64_t>(lo) ||
      UINT64_MAX - element0 < static_cast<uint64_t>(hi))
    return fail("the tensor's bytes [" + std::to_string(lo) + ", " + std::to_string(hi) + ") around " + hex(element0) +
                " ('data' + 'byte_offset') wrap around the address space");
  out.lo = lo;
  out.hi = hi;
  result = out;
  return "";
}

}  // namespace accelpy
