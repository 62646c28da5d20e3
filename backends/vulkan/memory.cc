// Buffers: one VkBuffer with its own VkDeviceMemory each, counted against the
// memory heap it comes from. Host-visible memory (all of lavapipe's) stays
// mapped for the allocation's life, so host copies and buffer_map are memcpy;
// memory that is not host-visible is reached through staging copies. Freeing
// is stream-ordered because queued operations hold their own Allocation
// references.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include "symbols.h"

namespace accel::vulkan {

std::string Bytes(uint64_t size) {
  char text[96];
  if (size < (uint64_t{1} << 20)) {
    std::snprintf(text, sizeof(text), "%" PRIu64 " bytes", size);
  } else {
    std::snprintf(text, sizeof(text), "%" PRIu64 " bytes (%.2f %s)", size,
                  size >= (uint64_t{1} << 30) ? static_cast<double>(size) / static_cast<double>(uint64_t{1} << 30)
                                              : static_cast<double>(size) / static_cast<double>(uint64_t{1} << 20),
                  size >= (uint64_t{1} << 30) ? "GiB" : "MiB");
  }
  return text;
}

Allocation::Allocation(Device* device, VkBuffer buffer, VkDeviceMemory memory, uint64_t size, uint32_t heap,
                       uint64_t reserved, void* mapped, bool coherent, uint64_t device_address)
    : device_(device),
      buffer_(buffer),
      memory_(memory),
      size_(size),
      heap_(heap),
      reserved_(reserved),
      mapped_(mapped),
      coherent_(coherent),
      device_address_(device_address) {}

Allocation::~Allocation() {
  // vkFreeMemory unmaps a mapped allocation.
  device_->vk.vkDestroyBuffer(device_->device, buffer_, nullptr);
  device_->vk.vkFreeMemory(device_->device, memory_, nullptr);
  device_->Unreserve(heap_, reserved_);
}

Status Allocation::Invalidate() const {
  if (coherent_ || mapped_ == nullptr) return Status::Ok();
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = memory_;
  range.offset = 0;
  range.size = VK_WHOLE_SIZE;
  const VkResult r = device_->vk.vkInvalidateMappedMemoryRanges(device_->device, 1, &range);
  return r == VK_SUCCESS ? Status::Ok() : VkFailure("vkInvalidateMappedMemoryRanges", r);
}

Status Allocation::Flush() const {
  if (coherent_ || mapped_ == nullptr) return Status::Ok();
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = memory_;
  range.offset = 0;
  range.size = VK_WHOLE_SIZE;
  const VkResult r = device_->vk.vkFlushMappedMemoryRanges(device_->device, 1, &range);
  return r == VK_SUCCESS ? Status::Ok() : VkFailure("vkFlushMappedMemoryRanges", r);
}

namespace {

// A memory type the buffer accepts (memoryTypeBits) with the properties of `preferred`'s host visibility.
int32_t FitType(const VkPhysicalDeviceMemoryProperties& m, uint32_t type_bits, int32_t preferred, bool host_visible) {
  if (preferred >= 0 && (type_bits & (1u << preferred)) != 0) return preferred;
  for (uint32_t t = 0; t < m.memoryTypeCount; ++t) {
    if ((type_bits & (1u << t)) == 0) continue;
    const bool visible = (m.memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
    if (!host_visible || visible) return static_cast<int32_t>(t);
  }
  return -1;
}

// Destroys what Allocate made when it fails half-way.
struct Unwind {
  Device* device;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint32_t heap = 0;
  uint64_t reserved = 0;
  ~Unwind() {
    if (buffer != VK_NULL_HANDLE) device->vk.vkDestroyBuffer(device->device, buffer, nullptr);
    if (memory != VK_NULL_HANDLE) device->vk.vkFreeMemory(device->device, memory, nullptr);
    if (reserved != 0) device->Unreserve(heap, reserved);
  }
};

}  // namespace

Status Allocate(Device* device, uint64_t size, MemoryUse use, std::shared_ptr<Allocation>* out) {
  const DeviceFunctions& vk = device->vk;
  const VkPhysicalDeviceMemoryProperties& m = device->facts.memory;
  const bool needs_host = use != MemoryUse::kDevice;
  const int32_t preferred = needs_host ? device->host_memory_type : device->device_memory_type;
  if (preferred < 0) {
    return {ACCEL_ERROR_UNSUPPORTED, "the device has no host-visible memory (ACCEL_MEMORY_KIND_HOST_PINNED)"};
  }
  Unwind unwind{device};
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (device->device_address) info.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = vk.vkCreateBuffer(device->device, &info, nullptr, &unwind.buffer);
  if (r != VK_SUCCESS) {
    unwind.buffer = VK_NULL_HANDLE;
    Status s = VkFailure("vkCreateBuffer", r);
    s.message += " for " + Bytes(size);
    return s;
  }
  VkMemoryRequirements requirements{};
  vk.vkGetBufferMemoryRequirements(device->device, unwind.buffer, &requirements);
  const int32_t type = FitType(m, requirements.memoryTypeBits, preferred, needs_host);
  if (type < 0) {
    return {ACCEL_ERROR_UNSUPPORTED, "no memory type of the device takes a buffer of " + Bytes(size) +
                                         (needs_host ? " in host-visible memory" : "")};
  }
  const uint32_t heap = m.memoryTypes[type].heapIndex;
  uint64_t free = 0;
  if (!device->Reserve(heap, requirements.size, &free)) {
    return {ACCEL_ERROR_RESOURCE_EXHAUSTED, Bytes(size) + " requested, " + Bytes(free) + " free of " +
                                                Bytes(m.memoryHeaps[heap].size) + " in memory heap " +
                                                std::to_string(heap)};
  }
  unwind.heap = heap;
  unwind.reserved = requirements.size;
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocate.pNext = device->device_address ? &flags : nullptr;
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = static_cast<uint32_t>(type);
  r = vk.vkAllocateMemory(device->device, &allocate, nullptr, &unwind.memory);
  if (r != VK_SUCCESS) {
    unwind.memory = VK_NULL_HANDLE;
    Status s = VkFailure("vkAllocateMemory", r);
    s.message = Bytes(size) + " requested: " + s.message;
    return s;
  }
  r = vk.vkBindBufferMemory(device->device, unwind.buffer, unwind.memory, 0);
  if (r != VK_SUCCESS) return VkFailure("vkBindBufferMemory", r);
  const VkMemoryPropertyFlags properties = m.memoryTypes[type].propertyFlags;
  void* mapped = nullptr;
  const bool visible = (properties & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
  if (visible && !(use == MemoryUse::kDevice && device->force_staging)) {
    r = vk.vkMapMemory(device->device, unwind.memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    if (r != VK_SUCCESS) {
      // Host-visible but not mappable now (address space, a driver limit): reached through staging instead; the
      // backend's own staging buffers must be mapped.
      mapped = nullptr;
      if (needs_host) return VkFailure("vkMapMemory", r);
      device->host->Log(ACCEL_LOG_LEVEL_DEBUG, "vkMapMemory failed (" + ResultName(r) + ") for " + Bytes(size) +
                                                   ": the buffer is reached through staging copies");
    }
  }
  uint64_t address = 0;
  if (device->device_address) {
    VkBufferDeviceAddressInfo address_info{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    address_info.buffer = unwind.buffer;
    address = vk.vkGetBufferDeviceAddress(device->device, &address_info);
  }
  *out = std::make_shared<Allocation>(device, unwind.buffer, unwind.memory, size, heap, requirements.size, mapped,
                                      (properties & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0, address);
  unwind.buffer = VK_NULL_HANDLE;  // the allocation owns them now
  unwind.memory = VK_NULL_HANDLE;
  unwind.reserved = 0;
  return Status::Ok();
}

void BarrierAll(const Device& device, VkCommandBuffer commands) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  device.vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                                 VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

void BarrierToHost(const Device& device, VkCommandBuffer commands) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
  device.vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                                 &barrier, 0, nullptr, 0, nullptr);
}

Status RunOnDevice(Device* device, const std::function<void(VkCommandBuffer)>& record) {
  const DeviceFunctions& vk = device->vk;
  std::lock_guard lock(device->utility_mutex);
  VkCommandBuffer commands = device->utility_commands;
  VkResult r = vk.vkResetCommandBuffer(commands, 0);
  if (r != VK_SUCCESS) return VkFailure("vkResetCommandBuffer", r);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  r = vk.vkBeginCommandBuffer(commands, &begin);
  if (r != VK_SUCCESS) return VkFailure("vkBeginCommandBuffer", r);
  BarrierAll(*device, commands);
  record(commands);
  BarrierToHost(*device, commands);
  r = vk.vkEndCommandBuffer(commands);
  if (r != VK_SUCCESS) return VkFailure("vkEndCommandBuffer", r);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  {
    std::lock_guard queue(device->queue_mutex);
    r = vk.vkQueueSubmit(device->queue, 1, &submit, device->utility_fence);
  }
  if (r != VK_SUCCESS) return VkFailure("vkQueueSubmit", r);
  r = vk.vkWaitForFences(device->device, 1, &device->utility_fence, VK_TRUE, UINT64_MAX);
  vk.vkResetFences(device->device, 1, &device->utility_fence);
  return r == VK_SUCCESS ? Status::Ok() : VkFailure("vkWaitForFences", r);
}

namespace {

// Copies [offset, offset + size) of `allocation` to or from `host` through a temporary staging buffer.
Status StagedTransfer(Device* device, const Allocation& allocation, uint64_t offset, std::byte* host, uint64_t size,
                      bool to_host) {
  std::shared_ptr<Allocation> staging;
  Status s = Allocate(device, size, MemoryUse::kStaging, &staging);
  if (!s.ok()) return s;
  if (!to_host) {
    std::memcpy(staging->mapped(), host, size);
    s = staging->Flush();
    if (!s.ok()) return s;
  }
  VkBufferCopy region{};
  region.size = size;
  if (to_host) {
    region.srcOffset = offset;
  } else {
    region.dstOffset = offset;
  }
  const VkBuffer from = to_host ? allocation.buffer() : staging->buffer();
  const VkBuffer to = to_host ? staging->buffer() : allocation.buffer();
  s = RunOnDevice(device,
                  [&](VkCommandBuffer commands) { device->vk.vkCmdCopyBuffer(commands, from, to, 1, &region); });
  if (!s.ok()) return s;
  if (to_host) {
    s = staging->Invalidate();
    if (!s.ok()) return s;
    std::memcpy(host, staging->mapped(), size);
  }
  return Status::Ok();
}

}  // namespace

// --- Slots -------------------------------------------------------------------------------------------------------

accel_status_t BufferCreate(accel_bk_device_t device_handle, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "buffer_create", [&] {
    // The core checked the size (> 0, within max_allocation) and the memory kind.
    if (!ACCEL_BACKEND_HAS_FIELD(desc, accel_buffer_desc_t, memory_kind)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "buffer description too small for ABI 1.0");
    }
    auto buffer = std::make_unique<Buffer>();
    buffer->device = device;
    const MemoryUse use = desc->memory_kind == ACCEL_MEMORY_KIND_HOST_PINNED ? MemoryUse::kHost : MemoryUse::kDevice;
    const Status s = Allocate(device, desc->size, use, &buffer->allocation);
    if (!s.ok()) return host.Fail(s.code, s.message);
    *out_buffer = Wrap(buffer.release());
    return ACCEL_SUCCESS;
  });
}

void BufferDestroy(accel_bk_buffer_t buffer) noexcept {
  // Drops the handle's reference; operations still queued keep the allocation until they complete.
  std::unique_ptr<Buffer> owned(Unwrap(buffer));
}

accel_status_t BufferMap(accel_bk_buffer_t handle, uint64_t offset, uint64_t size, uint64_t flags,
                         void** out_ptr) noexcept {
  Buffer* buffer = Unwrap(handle);
  const Host& host = *buffer->device->host;
  return Guard(host, "buffer_map", [&] {
    // The core checked the range, the flags and that the buffer is not mapped; the caller synchronized its work.
    std::lock_guard lock(buffer->mutex);
    const Allocation& a = *buffer->allocation;
    buffer->map_offset = offset;
    buffer->map_flags = flags;
    if (a.mapped() != nullptr) {
      const Status s = a.Invalidate();
      if (!s.ok()) return host.Fail(s.code, s.message);
      *out_ptr = a.mapped() + offset;
      return ACCEL_SUCCESS;
    }
    // Not host-visible: a host copy of the range, read in whole so that a partial write leaves the rest as it was.
    buffer->shadow.assign(size, std::byte{0});
    const Status s = StagedTransfer(buffer->device, a, offset, buffer->shadow.data(), size, /*to_host=*/true);
    if (!s.ok()) {
      buffer->shadow.clear();
      return host.Fail(s.code, "mapping through a staging copy: " + s.message);
    }
    *out_ptr = buffer->shadow.data();
    return ACCEL_SUCCESS;
  });
}

accel_status_t BufferUnmap(accel_bk_buffer_t handle) noexcept {
  Buffer* buffer = Unwrap(handle);
  const Host& host = *buffer->device->host;
  return Guard(host, "buffer_unmap", [&] {
    std::lock_guard lock(buffer->mutex);
    const Allocation& a = *buffer->allocation;
    const bool wrote = (buffer->map_flags & ACCEL_MAP_WRITE) != 0 || buffer->map_flags == 0;
    if (a.mapped() != nullptr) {
      if (!wrote) return ACCEL_SUCCESS;
      const Status s = a.Flush();
      return s.ok() ? ACCEL_SUCCESS : host.Fail(s.code, s.message);
    }
    Status s = Status::Ok();
    if (wrote && !buffer->shadow.empty()) {
      s = StagedTransfer(buffer->device, a, buffer->map_offset, buffer->shadow.data(), buffer->shadow.size(),
                         /*to_host=*/false);
    }
    buffer->shadow.clear();
    buffer->shadow.shrink_to_fit();
    return s.ok() ? ACCEL_SUCCESS : host.Fail(s.code, "writing the mapping back through a staging copy: " + s.message);
  });
}

accel_status_t BufferExport(accel_bk_buffer_t handle, accel_external_memory_type_t type,
                            accel_external_memory_t* out_memory) noexcept {
  Buffer* buffer = Unwrap(handle);
  const Host& host = *buffer->device->host;
  return Guard(host, "buffer_export", [&] {
    if (type != ACCEL_EXTERNAL_MEMORY_TYPE_VULKAN_BUFFER) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED,
                       "the Vulkan backend exports ACCEL_EXTERNAL_MEMORY_TYPE_VULKAN_BUFFER only (a VkBuffer of its "
                       "own VkDevice, with its VkDeviceMemory)");
    }
    const Allocation& a = *buffer->allocation;
    if (ACCEL_BACKEND_HAS_FIELD(out_memory, accel_external_memory_t, type)) out_memory->type = type;
    if (ACCEL_BACKEND_HAS_FIELD(out_memory, accel_external_memory_t, handle)) {
      out_memory->handle = reinterpret_cast<uint64_t>(a.buffer());
    }
    if (ACCEL_BACKEND_HAS_FIELD(out_memory, accel_external_memory_t, handle2)) {
      out_memory->handle2 = reinterpret_cast<uint64_t>(a.memory());
    }
    if (ACCEL_BACKEND_HAS_FIELD(out_memory, accel_external_memory_t, offset)) out_memory->offset = 0;
    if (ACCEL_BACKEND_HAS_FIELD(out_memory, accel_external_memory_t, size)) out_memory->size = a.size();
    return ACCEL_SUCCESS;
  });
}

accel_status_t BufferGetHostAddress(accel_bk_buffer_t handle, void** out_address) noexcept {
  Buffer* buffer = Unwrap(handle);
  const Host& host = *buffer->device->host;
  return Guard(host, "buffer_get_host_address", [&] {
    std::byte* mapped = buffer->allocation->mapped();
    if (mapped == nullptr) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the buffer's memory is not host-visible; map it instead");
    }
    *out_address = mapped;
    return ACCEL_SUCCESS;
  });
}

accel_status_t BufferGetDeviceAddress(accel_bk_buffer_t handle, uint64_t* out_address) noexcept {
  Buffer* buffer = Unwrap(handle);
  const Host& host = *buffer->device->host;
  return Guard(host, "buffer_get_device_address", [&] {
    if (!buffer->device->device_address) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the device has no bufferDeviceAddress feature");
    }
    *out_address = buffer->allocation->device_address();
    return ACCEL_SUCCESS;
  });
}

}  // namespace accel::vulkan
