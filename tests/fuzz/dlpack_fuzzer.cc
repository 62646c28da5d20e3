// libFuzzer target for the DLPack import's checks (python/src/dlpack_check.h): bytes decoded into a DLTensor (ndim,
// shape, strides, byte_offset, dtype, the data pointer's value, never dereferenced) and an item size. Promises:
// nothing crashes or reads past the `ndim` entries of shape and strides (ASan, UBSan); a refusal has a message
// ("from_dlpack: ..."); the checker accepts exactly the tensors an independent __int128 recomputation of the
// rules accepts, and then its extent [lo, hi) is that recomputation's, every element of a small tensor lies inside
// it, and the bytes [element0 + lo, element0 + hi) are inside the address space.
//
// Input layout (short inputs read zeros past the end):
//   u8 flags (bit 0: strides present; bit 1: shape NULL; bit 2: data NULL)
//   u8 ndim selector, u8 dtype code, u8 dtype bits, u16 dtype lanes, u8 item size selector
//   value data, value byte_offset, value shape[i] for each of the first min(ndim, 64) dimensions, then as many
//   strides when present; a value is a selector byte: below 0xA0 a small number (selector % 24 - 4), below 0xE0 an
//   edge value (kEdges), otherwise 8 raw bytes (little-endian) follow.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "dlpack_check.h"

namespace {

using I128 = __int128;
using accelpy::DLPackExtent;
using accelpy::DLTensor;
using accelpy::kDLPackMaxDims;

constexpr I128 kInt64Max = INT64_MAX;
constexpr I128 kInt64Min = INT64_MIN;
constexpr I128 kUint64Max = UINT64_MAX;

constexpr int64_t kEdges[] = {0,
                              1,
                              -1,
                              INT64_MAX,
                              INT64_MIN,
                              int64_t{1} << 31,
                              int64_t{1} << 32,
                              int64_t{1} << 62,
                              -(int64_t{1} << 62),
                              int64_t{1} << 40,
                              -(int64_t{1} << 40),
                              int64_t{1} << 60,
                              -4096,  // as an address: the last page
                              0x1000,
                              0x7fff00000000,  // a typical user-space address
                              INT64_MAX / 8 + 1};
constexpr int32_t kNdims[] = {64, 65, -1, INT32_MIN, INT32_MAX, 1000, -64, 63};
constexpr int64_t kItemSizes[] = {1, 2, 4, 8, 16, 1, 2, 4, 8, 16, 1, 4, 8, int64_t{1} << 40, 0, -8};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  int64_t value() {
    const uint8_t sel = u8();
    if (sel < 0xA0) return static_cast<int64_t>(sel % 24) - 4;
    if (sel < 0xE0) return kEdges[(sel - 0xA0) % (sizeof(kEdges) / sizeof(kEdges[0]))];
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(u8()) << (8 * i);
    return static_cast<int64_t>(v);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

I128 abs128(I128 v) { return v < 0 ? -v : v; }

// The rules of dlpack_check.h, recomputed in __int128 (no intermediate value here can overflow it: every factor is
// below 2^64 and every sum is checked against int64 after each term). Returns whether the tensor is valid and,
// when it is, its extent and element 0's address.
bool reference(const DLTensor& t, int64_t itemsize, I128& lo, I128& hi, I128& element0, bool& empty) {
  if (itemsize <= 0) return false;
  if (t.ndim < 0 || t.ndim > kDLPackMaxDims) return false;
  if (t.ndim > 0 && t.shape == nullptr) return false;
  empty = false;
  I128 bytes = itemsize;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) return false;
    if (t.shape[i] == 0) {
      empty = true;
      continue;
    }
    bytes *= t.shape[i];
    if (bytes > kInt64Max) return false;
  }
  if (t.strides != nullptr)
    for (int32_t i = 0; i < t.ndim; ++i) {
      const I128 stride = static_cast<I128>(t.strides[i]) * itemsize;
      if (stride > kInt64Max || stride < kInt64Min) return false;
    }
  element0 = static_cast<I128>(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset;
  if (element0 > kUint64Max) return false;
  lo = hi = 0;
  if (empty) return true;
  if (t.strides != nullptr) {
    I128 total = itemsize;
    hi = itemsize;
    for (int32_t i = 0; i < t.ndim; ++i) {
      const I128 span = static_cast<I128>(t.shape[i] - 1) * t.strides[i] * itemsize;
      total += abs128(span);
      if (total > kInt64Max) return false;
      (span < 0 ? lo : hi) += span;
    }
  } else {
    hi = bytes;
  }
  if (t.data == nullptr) return false;
  return element0 + lo >= 0 && element0 + hi <= kUint64Max;
}

// Every element of a tensor with at most this many elements is checked against the extent.
constexpr I128 kMaxEnumerated = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const uint8_t flags = in.u8();
  const uint8_t ndim_sel = in.u8();
  int32_t ndim = ndim_sel < 0x80   ? ndim_sel % 8
                 : ndim_sel < 0xC0 ? ndim_sel - 0x80
                                   : kNdims[ndim_sel % (sizeof(kNdims) / sizeof(kNdims[0]))];
  DLTensor t{};
  t.ndim = ndim;
  t.device = {accelpy::kDLCPU, 0};
  t.dtype.code = in.u8();
  t.dtype.bits = in.u8();
  const uint8_t lanes_low = in.u8();
  t.dtype.lanes = static_cast<uint16_t>(lanes_low | (in.u8() << 8));
  const int64_t itemsize = kItemSizes[in.u8() % (sizeof(kItemSizes) / sizeof(kItemSizes[0]))];
  t.data = reinterpret_cast<void*>(static_cast<uintptr_t>(in.value()));
  if ((flags & 4) != 0) t.data = nullptr;
  t.byte_offset = static_cast<uint64_t>(in.value());
  // Exactly as many entries as the dimensions the checker may read (none past 64), each its own allocation so that
  // ASan sees a read past them.
  const int32_t n = ndim < 0 ? 0 : (ndim > kDLPackMaxDims ? kDLPackMaxDims : ndim);
  auto shape = std::make_unique<int64_t[]>(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) shape[i] = in.value();
  std::unique_ptr<int64_t[]> strides;
  if ((flags & 1) != 0) {
    strides = std::make_unique<int64_t[]>(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) strides[i] = in.value();
  }
  t.shape = (flags & 2) != 0 ? nullptr : shape.get();
  t.strides = strides.get();

  DLPackExtent extent;
  extent.lo = 12345;  // set by the checker only for a valid tensor
  const std::string why = accelpy::check_dlpack_tensor(t, itemsize, extent);
  I128 lo = 0, hi = 0, element0 = 0;
  bool empty = false;
  const bool valid = reference(t, itemsize, lo, hi, element0, empty);
  if (!why.empty()) {
    if (why.rfind("from_dlpack: ", 0) != 0 || why.size() <= 13) __builtin_trap();
    if (valid) __builtin_trap();  // refused a valid tensor
    if (extent.lo != 12345) __builtin_trap();
    return 0;
  }
  if (!valid) __builtin_trap();  // accepted an invalid one
  if (extent.empty != empty || extent.lo != lo || extent.hi != hi || extent.element0 != element0) __builtin_trap();
  if (extent.hi < extent.lo || extent.lo > 0) __builtin_trap();
  if (static_cast<I128>(extent.hi) - extent.lo > kInt64Max) __builtin_trap();
  if (empty) {
    if (extent.lo != 0 || extent.hi != 0) __builtin_trap();
    return 0;
  }
  if (extent.hi - extent.lo < itemsize || t.data == nullptr) __builtin_trap();
  if (element0 + extent.lo < 0 || element0 + extent.hi > kUint64Max) __builtin_trap();

  // Small tensors: every element's bytes, from its index, lie in [lo, hi).
  I128 count = 1;
  for (int32_t i = 0; i < ndim && count <= kMaxEnumerated; ++i) count *= t.shape[i];
  if (count > kMaxEnumerated) return 0;
  I128 stride[kDLPackMaxDims];
  I128 next = itemsize;  // C-contiguous when strides is NULL
  for (int32_t i = ndim; i-- > 0;) {
    stride[i] = t.strides != nullptr ? static_cast<I128>(t.strides[i]) * itemsize : next;
    next *= t.shape[i];
  }
  int64_t index[kDLPackMaxDims] = {};
  for (I128 e = 0; e < count; ++e) {
    I128 offset = 0;
    for (int32_t i = 0; i < ndim; ++i) offset += index[i] * stride[i];
    if (offset < extent.lo || offset + itemsize > extent.hi) __builtin_trap();
    for (int32_t i = ndim; i-- > 0;) {  // the next index, last dimension fastest
      if (++index[i] < t.shape[i]) break;
      index[i] = 0;
    }
  }
  return 0;
}
