// What the files of the Vulkan backend share: the Vulkan entry points resolved
// at load time (libvulkan.so.1 is dlopen'd, never linked: Debian's headers
// give the types, VK_NO_PROTOTYPES keeps the prototypes out), the core's host
// services, the exception guard, the plain-data facts read from a physical
// device, the SPIR-V reflection result, the backend objects behind the opaque
// handles and the slot functions that backend.cc puts into its table.
#ifndef ACCEL_VULKAN_SYMBOLS_H_
#define ACCEL_VULKAN_SYMBOLS_H_

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <accel_backend.h>
#include <vulkan/vulkan.h>

#include "common/backend_support.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace accel::vulkan {

inline constexpr const char* kBackendName = "vulkan";  // the manifest's name
inline constexpr const char* kBackendVersion = "1.0.0";
// The loader library opened unless ACCEL_VULKAN_LOADER names another.
inline constexpr const char* kDefaultLoader = "libvulkan.so.1";

// --- Vulkan entry points -----------------------------------------------------------------------------------------
// Each list is an X-macro: X(name, required). A required entry point missing from the loader or driver makes the
// instance or device unusable (with its name in the reason); an optional one is NULL and its feature is off.

#define ACCEL_VK_GLOBAL_FUNCTIONS(X)              \
  X(vkEnumerateInstanceVersion, false)            \
  X(vkEnumerateInstanceExtensionProperties, true) \
  X(vkCreateInstance, true)

#define ACCEL_VK_INSTANCE_FUNCTIONS(X)              \
  X(vkDestroyInstance, true)                        \
  X(vkEnumeratePhysicalDevices, true)               \
  X(vkGetPhysicalDeviceProperties, true)            \
  X(vkGetPhysicalDeviceProperties2, true)           \
  X(vkGetPhysicalDeviceFeatures2, true)             \
  X(vkGetPhysicalDeviceMemoryProperties, true)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties, true) \
  X(vkEnumerateDeviceExtensionProperties, true)     \
  X(vkCreateDevice, true)                           \
  X(vkGetDeviceProcAddr, true)

#define ACCEL_VK_DEVICE_FUNCTIONS(X)      \
  X(vkDestroyDevice, true)                \
  X(vkGetDeviceQueue, true)               \
  X(vkDeviceWaitIdle, true)               \
  X(vkQueueSubmit, true)                  \
  X(vkCreateBuffer, true)                 \
  X(vkDestroyBuffer, true)                \
  X(vkGetBufferMemoryRequirements, true)  \
  X(vkAllocateMemory, true)               \
  X(vkFreeMemory, true)                   \
  X(vkBindBufferMemory, true)             \
  X(vkMapMemory, true)                    \
  X(vkUnmapMemory, true)                  \
  X(vkFlushMappedMemoryRanges, true)      \
  X(vkInvalidateMappedMemoryRanges, true) \
  X(vkCreateCommandPool, true)            \
  X(vkDestroyCommandPool, true)           \
  X(vkAllocateCommandBuffers, true)       \
  X(vkResetCommandBuffer, true)           \
  X(vkBeginCommandBuffer, true)           \
  X(vkEndCommandBuffer, true)             \
  X(vkCmdCopyBuffer, true)                \
  X(vkCmdFillBuffer, true)                \
  X(vkCmdUpdateBuffer, true)              \
  X(vkCmdPipelineBarrier, true)           \
  X(vkCmdBindPipeline, true)              \
  X(vkCmdBindDescriptorSets, true)        \
  X(vkCmdPushConstants, true)             \
  X(vkCmdDispatch, true)                  \
  X(vkCmdWriteTimestamp, true)            \
  X(vkCmdResetQueryPool, true)            \
  X(vkCreateQueryPool, true)              \
  X(vkDestroyQueryPool, true)             \
  X(vkGetQueryPoolResults, true)          \
  X(vkCreateFence, true)                  \
  X(vkDestroyFence, true)                 \
  X(vkWaitForFences, true)                \
  X(vkResetFences, true)                  \
  X(vkCreateSemaphore, true)              \
  X(vkDestroySemaphore, true)             \
  X(vkCreateShaderModule, true)           \
  X(vkDestroyShaderModule, true)          \
  X(vkCreateDescriptorSetLayout, true)    \
  X(vkDestroyDescriptorSetLayout, true)   \
  X(vkCreatePipelineLayout, true)         \
  X(vkDestroyPipelineLayout, true)        \
  X(vkCreateComputePipelines, true)       \
  X(vkDestroyPipeline, true)              \
  X(vkCreatePipelineCache, true)          \
  X(vkDestroyPipelineCache, true)         \
  X(vkGetPipelineCacheData, true)         \
  X(vkCreateDescriptorPool, true)         \
  X(vkDestroyDescriptorPool, true)        \
  X(vkResetDescriptorPool, true)          \
  X(vkAllocateDescriptorSets, true)       \
  X(vkUpdateDescriptorSets, true)         \
  X(vkWaitSemaphores, false)              \
  X(vkGetSemaphoreCounterValue, false)    \
  X(vkGetBufferDeviceAddress, false)

#define ACCEL_VK_DECLARE(name, required) PFN_##name name = nullptr;
struct GlobalFunctions {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  ACCEL_VK_GLOBAL_FUNCTIONS(ACCEL_VK_DECLARE)
};
struct InstanceFunctions {
  ACCEL_VK_INSTANCE_FUNCTIONS(ACCEL_VK_DECLARE)
};
struct DeviceFunctions {
  ACCEL_VK_DEVICE_FUNCTIONS(ACCEL_VK_DECLARE)
};
#undef ACCEL_VK_DECLARE

// "VK_ERROR_DEVICE_LOST", or "VkResult <n>" for a value this file does not name.
std::string ResultName(VkResult result);
// The Accel status a failed VkResult maps to (out of memory: RESOURCE_EXHAUSTED; device lost: DEVICE_LOST; ...).
accel_status_t StatusOf(VkResult result);

// --- Struct-size prefix handling, host services, the guard (backends/common) ------------------------------------

using Host = backend::HostServices;
using backend::Guard;
using backend::WritePrefix;

// A setting or the cache folder (Host::Setting, Host::cache_dir) as text: "" when unset.
inline std::string TextOf(const char* value) { return value != nullptr ? std::string(value) : std::string(); }

// Copies `source` into a fixed char array, always NUL-terminated, the rest zeroed.
void CopyString(char* destination, size_t capacity, const std::string& source);

// A status with its message, for code that reports through a return value rather than host->set_error.
struct Status {
  accel_status_t code = ACCEL_SUCCESS;
  std::string message;
  bool ok() const { return code == ACCEL_SUCCESS; }
  static Status Ok() { return {}; }
};
// `what` failed with `result`: "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST".
Status VkFailure(const char* what, VkResult result);

// --- Physical device facts (device.cc maps them to a descriptor) -------------------------------------------------

// What backend.cc reads from one physical device: plain data, so the mapping to Accel's descriptor is a pure,
// unit-tested function.
struct PhysicalDeviceFacts {
  VkPhysicalDeviceProperties properties{};  // name, type, ids, versions, limits, pipelineCacheUUID
  uint32_t api_version = 0;                 // min(instance, device) Vulkan version
  std::array<uint8_t, VK_UUID_SIZE> device_uuid{};
  bool has_device_uuid = false;
  VkDriverId driver_id = static_cast<VkDriverId>(0);  // 0: unknown (a Vulkan 1.1 driver)
  std::string driver_name;                            // "llvmpipe"
  std::string driver_info;                            // "Mesa 22.3.6 (LLVM 15.0.6)"
  uint64_t max_memory_allocation_size = 0;            // Vulkan 1.1 (maintenance3)
  uint64_t max_buffer_size = 0;                       // Vulkan 1.3 (maintenance4); 0 unknown
  uint32_t subgroup_size = 0;
  VkShaderStageFlags subgroup_stages = 0;
  VkSubgroupFeatureFlags subgroup_operations = 0;
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t queue_family = 0;
  uint32_t queue_count = 0;
  uint32_t timestamp_valid_bits = 0;  // of the chosen queue family
  // Features (Vulkan 1.0 and 1.2 core).
  bool shader_float64 = false;
  bool shader_int64 = false;
  bool shader_int16 = false;
  bool shader_float16 = false;
  bool shader_int8 = false;
  bool storage_buffer_8bit = false;
  bool storage_buffer_16bit = false;
  bool buffer_int64_atomics = false;
  bool timeline_semaphore = false;
  bool buffer_device_address = false;
  // VK_EXT_pci_bus_info.
  bool has_pci_bus_info = false;
  uint32_t pci_domain = 0, pci_bus = 0, pci_device = 0, pci_function = 0;
  // Compute-unit counts from vendor extensions (0 when absent).
  uint32_t nv_sm_count = 0;             // VK_NV_shader_sm_builtins: shaderSMCount
  uint32_t amd_compute_unit_count = 0;  // VK_AMD_shader_core_properties2: activeComputeUnitCount
  // The host, for a CPU device: logical CPUs this process may run on, and uname's machine.
  uint32_t host_cpu_count = 0;
  std::string host_machine;
};

// device.cc: the pure mapping.
accel_device_capabilities_t DescribeDevice(const PhysicalDeviceFacts& facts);
std::string VendorName(uint32_t vendor_id, const std::string& driver_name);
std::string DriverVersionString(const PhysicalDeviceFacts& facts);
std::string NormalisedSku(const std::string& name);
bool UuidIsUnique(const PhysicalDeviceFacts& facts);
uint32_t ComputeUnits(const PhysicalDeviceFacts& facts);
uint64_t DeviceLocalBytes(const VkPhysicalDeviceMemoryProperties& memory);
// Largest bytes of kernel arguments: push constants, or a uniform buffer written with vkCmdUpdateBuffer (64 KiB).
uint32_t MaxArgumentSize(const VkPhysicalDeviceLimits& limits);
std::string PciBusId(const PhysicalDeviceFacts& facts);
// Nanoseconds from timestamp `from` to `to` (ticks of `period` ns, `valid_bits` of them written): the difference
// taken modulo the counter's range when it has fewer than 64 bits, 0 when a 64-bit `to` is before `from`, and
// UINT64_MAX when the product does not fit (or the period is not a number).
uint64_t ElapsedNanoseconds(uint64_t from, uint64_t to, uint32_t valid_bits, double period);
// `ticks` with only its low `valid_bits` bits (all of them from 64 on): what a timestamp query writes.
inline uint64_t MaskTicks(uint64_t ticks, uint32_t valid_bits) {
  return valid_bits >= 64 ? ticks : ticks & ((uint64_t{1} << valid_bits) - 1);
}

// --- SPIR-V reflection (reflect.cc) -------------------------------------------------------------------------------

inline constexpr uint32_t kNoSpecId = UINT32_MAX;

// One declared argument and where it goes.
struct ReflectedArgument {
  accel_kernel_arg_kind_t kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  accel_access_t access = ACCEL_ACCESS_READ;
  uint32_t size = 0;     // SCALAR / DEVICE_ADDRESS: bytes of the member
  uint32_t binding = 0;  // BUFFER: the storage buffer's binding in set 0
  uint32_t offset = 0;   // SCALAR / DEVICE_ADDRESS: byte offset in the push-constant or uniform block
  uint32_t spec_id = 0;  // LOCAL_MEMORY: the specialization constant's id (3, 4, ...)
  std::string name;
};

// Where the scalars live.
enum class ScalarBlock { kNone, kPushConstants, kUniformBuffer };

// One GLCompute entry point of a module as docs/kernels.md declares it.
struct ReflectedKernel {
  std::string name;
  std::vector<ReflectedArgument> arguments;  // storage buffers by binding, block members, LOCAL_MEMORY by id
  uint32_t storage_buffer_count = 0;         // bindings 0 .. count-1
  ScalarBlock scalar_block = ScalarBlock::kNone;
  uint32_t scalar_block_size = 0;  // bytes the block declares
  uint32_t uniform_binding = 0;    // kUniformBuffer: its binding (== storage_buffer_count)
  // The work-group size: per dimension either a specialization constant (block_spec_id) or fixed (local_size).
  uint32_t block_spec_id[3] = {kNoSpecId, kNoSpecId, kNoSpecId};
  uint32_t local_size[3] = {1, 1, 1};
  uint64_t static_local_memory = 0;  // bytes of workgroup variables of a fixed size
};

struct ReflectedModule {
  std::vector<ReflectedKernel> kernels;  // in OpEntryPoint order
};

// Reflects a SPIR-V binary (words in host order) into its kernels. On failure returns false with `*error` saying
// what is wrong ("storage buffer 'x' is in descriptor set 1; Accel binds set 0 only").
bool ReflectSpirv(const uint32_t* words, size_t word_count, ReflectedModule* out, std::string* error);

// --- Backend objects ----------------------------------------------------------------------------------------------

struct Context;
struct Device;
class Stream;
class Event;
struct Module;
struct Kernel;

// One VkBuffer with its own VkDeviceMemory, counted against its heap until the last reference goes. The handle and
// every queued operation that uses it hold a reference, which makes freeing stream-ordered.
// Thread-safe to share; the bytes are ordered by the streams that use them.
class Allocation {
 public:
  // `reserved` bytes of memory heap `heap` were reserved for it (Device::Reserve); given back by the destructor.
  Allocation(Device* device, VkBuffer buffer, VkDeviceMemory memory, uint64_t size, uint32_t heap, uint64_t reserved,
             void* mapped, bool coherent, uint64_t device_address);
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  VkBuffer buffer() const { return buffer_; }
  VkDeviceMemory memory() const { return memory_; }
  uint64_t size() const { return size_; }
  // The persistent host mapping, or NULL when the memory is not host-visible (or staging is forced).
  std::byte* mapped() const { return static_cast<std::byte*>(mapped_); }
  bool coherent() const { return coherent_; }
  uint64_t device_address() const { return device_address_; }
  // Non-coherent memory: make device writes visible to the host / host writes visible to the device.
  Status Invalidate() const;
  Status Flush() const;

 private:
  Device* const device_;
  const VkBuffer buffer_;
  const VkDeviceMemory memory_;
  const uint64_t size_;
  const uint32_t heap_;
  const uint64_t reserved_;
  void* const mapped_;
  const bool coherent_;
  const uint64_t device_address_;
};

// What a buffer is allocated for.
enum class MemoryUse {
  kDevice,   // ACCEL_MEMORY_KIND_DEVICE: device-local, host-visible where that memory is
  kHost,     // ACCEL_MEMORY_KIND_HOST_PINNED: host-visible (preferably cached)
  kStaging,  // the backend's own staging and uniform buffers: host-visible
};
// Allocates `size` bytes. RESOURCE_EXHAUSTED names the request and what is free.
Status Allocate(Device* device, uint64_t size, MemoryUse use, std::shared_ptr<Allocation>* out);

// A buffer handle and its mapping state. Thread-safe: the mapping is guarded by the buffer's mutex.
struct Buffer {
  Device* device = nullptr;
  std::shared_ptr<Allocation> allocation;
  std::mutex mutex;
  // A mapping through a host copy (memory that is not host-visible): the bytes, their place, the map flags.
  std::vector<std::byte> shadow;
  uint64_t map_offset = 0;
  uint64_t map_flags = 0;
};

// Memory barriers recorded around each submission's work: all earlier writes visible to every later access, and
// (at the end) to the host, which reads mapped memory once the submission completed.
void BarrierAll(const Device& device, VkCommandBuffer commands);
void BarrierToHost(const Device& device, VkCommandBuffer commands);
// "4096 bytes" or "2147483648 bytes (2.00 GiB)".
std::string Bytes(uint64_t size);

// A one-off submission from the calling thread (buffer_map through a staging copy, reading a pipeline's data):
// records into the device's utility command buffer, submits and waits. Thread-safe (the device's utility mutex).
Status RunOnDevice(Device* device, const std::function<void(VkCommandBuffer)>& record);

// A physical device opened as a VkDevice with one compute queue. Immutable after context_create but for the
// capacity counters (capacity mutex), the queue (queue mutex: vkQueueSubmit is externally synchronized) and the
// utility command buffer (utility mutex). Lock order: utility, then queue; capacity is a leaf.
struct Device {
  Context* context = nullptr;
  const Host* host = nullptr;
  uint32_t index = 0;  // among the context's devices
  const InstanceFunctions* vki = nullptr;
  DeviceFunctions vk;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  PhysicalDeviceFacts facts;
  accel_device_capabilities_t capabilities{};
  bool timeline = false;            // timeline semaphores enabled (else fences)
  bool device_address = false;      // bufferDeviceAddress enabled
  bool force_staging = false;       // ACCEL_VULKAN_STAGING=always: device buffers are never mapped
  int32_t device_memory_type = -1;  // for MemoryUse::kDevice
  int32_t host_memory_type = -1;    // host-visible, for kHost and kStaging; -1 none
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  std::string pipeline_cache_path;  // "" when ACCEL_CACHE_DIR is unset

  std::mutex queue_mutex;

  // Capacity: bytes allocated per memory heap.
  bool Reserve(uint32_t heap, uint64_t size, uint64_t* out_free);
  void Unreserve(uint32_t heap, uint64_t size);
  uint64_t DeviceLocalUsed();

  // The utility command buffer and its fence (RunOnDevice).
  std::mutex utility_mutex;
  VkCommandPool utility_pool = VK_NULL_HANDLE;
  VkCommandBuffer utility_commands = VK_NULL_HANDLE;
  VkFence utility_fence = VK_NULL_HANDLE;

  // Label for log lines: "device 0 (llvmpipe (LLVM 15.0.6, 256 bits))".
  std::string label;

  Device() = default;
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

 private:
  std::mutex capacity_mutex_;
  std::array<uint64_t, VK_MAX_MEMORY_HEAPS> heap_used_{};
};

// One opened instance of the backend: the loader library, the VkInstance and the usable devices. Immutable after
// creation; destroyed once, after every object it made.
struct Context {
  explicit Context(const accel_host_services_t* services) : host(services, kBackendName) {}
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Host host;
  void* library = nullptr;  // dlopen handle of the loader
  GlobalFunctions vkg;
  InstanceFunctions vki;
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t instance_version = 0;
  std::vector<std::unique_ptr<Device>> devices;
};

// Opens `physical` as a Device (backend.cc); `*reason` says why a device is not usable.
bool OpenDevice(Context* context, VkPhysicalDevice physical, uint32_t index, std::unique_ptr<Device>* out,
                std::string* reason);
// Reads what device.cc maps (backend.cc); false with `*reason` when the device cannot run compute work.
bool ReadFacts(const Context& context, VkPhysicalDevice physical, PhysicalDeviceFacts* out, std::string* reason);

// The pipeline cache file of a device, loaded at device creation and written back when the device closes
// (module.cc).
void LoadPipelineCache(Device* device);
void SavePipelineCache(Device* device);

ACCEL_BACKEND_HANDLES(Context, Device, Buffer, Stream, Event, Module, Kernel)

struct KernelState;  // a kernel's layouts and pipelines (module.cc)

// A launch, checked and copied at enqueue, ready to record on a stream's worker (module.cc builds it, stream.cc
// runs it). It holds what it uses: the pipeline's kernel state and every bound buffer. A stream recycles its launches
// (TakeSpareLaunch; Release once the device ran the launch), so that a launch allocates nothing once the vectors have
// grown to the kernel's. Owned by one operation at a time.
struct PreparedLaunch {
  std::shared_ptr<KernelState> kernel;
  VkPipeline pipeline = VK_NULL_HANDLE;
  std::vector<std::shared_ptr<Allocation>> buffers;  // one per BUFFER argument, in binding order
  std::vector<VkDescriptorBufferInfo> ranges;        // the bound ranges, in binding order
  std::vector<uint8_t> scalars;                      // the scalars' block, laid out as the kernel declares it
  uint32_t grid[3] = {1, 1, 1};
  std::vector<uint32_t> key;                 // the pipeline's key: block, then each LOCAL_MEMORY size in words
  std::vector<VkWriteDescriptorSet> writes;  // RecordLaunch's scratch

  // Drops the references to the kernel state and the buffers, keeping the vectors' memory for the next launch.
  void Release() {
    kernel.reset();
    buffers.clear();
    ranges.clear();
    scalars.clear();
    key.clear();
    writes.clear();
  }
};
// Records `launch` into `commands` with `descriptor_set` (allocated from the stream's pool, NULL when the kernel
// binds nothing) and, for a uniform-buffer kernel, `uniform` (at least the block's size); module.cc.
void RecordLaunch(PreparedLaunch& launch, VkCommandBuffer commands, VkDescriptorSet descriptor_set,
                  const Allocation* uniform);
// The descriptor set layout a launch allocates from, its storage-buffer count and whether it needs a uniform buffer.
VkDescriptorSetLayout LaunchSetLayout(const PreparedLaunch& launch);
uint32_t LaunchStorageBuffers(const PreparedLaunch& launch);
uint32_t LaunchUniformBytes(const PreparedLaunch& launch);
// A released launch of `stream`'s to fill (its vectors keep their memory), or a new one (stream.cc). Thread-safe.
std::unique_ptr<PreparedLaunch> TakeSpareLaunch(Stream* stream);
// Enqueues a prepared launch on a stream (stream.cc).
accel_status_t EnqueueLaunch(Stream* stream, std::unique_ptr<PreparedLaunch> launch);

// --- Slots (abi/accel_backend.h documents each) ------------------------------------------------------------------

// device.cc
accel_status_t DeviceGetCapabilities(accel_bk_device_t device, accel_device_capabilities_t* out) noexcept;
accel_status_t DeviceGetMemoryInfo(accel_bk_device_t device, uint64_t* out_free, uint64_t* out_total) noexcept;

// memory.cc
accel_status_t BufferCreate(accel_bk_device_t device, const accel_buffer_desc_t* desc,
                            accel_bk_buffer_t* out_buffer) noexcept;
void BufferDestroy(accel_bk_buffer_t buffer) noexcept;
accel_status_t BufferMap(accel_bk_buffer_t buffer, uint64_t offset, uint64_t size, uint64_t flags,
                         void** out_ptr) noexcept;
accel_status_t BufferUnmap(accel_bk_buffer_t buffer) noexcept;
accel_status_t BufferExport(accel_bk_buffer_t buffer, accel_external_memory_type_t type,
                            accel_external_memory_t* out_memory) noexcept;
accel_status_t BufferGetHostAddress(accel_bk_buffer_t buffer, void** out_address) noexcept;
accel_status_t BufferGetDeviceAddress(accel_bk_buffer_t buffer, uint64_t* out_address) noexcept;

// stream.cc
accel_status_t StreamCreate(accel_bk_device_t device, const accel_stream_desc_t* desc,
                            accel_bk_stream_t* out_stream) noexcept;
void StreamDestroy(accel_bk_stream_t stream) noexcept;
accel_status_t StreamCopyHostToBuffer(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst,
                                      uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamCopyBufferToHost(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset, void* dst,
                                      uint64_t size) noexcept;
accel_status_t StreamCopyBuffer(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset,
                                accel_bk_buffer_t dst, uint64_t dst_offset, uint64_t size) noexcept;
accel_status_t StreamFillBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer, uint64_t offset, uint64_t size,
                                const void* pattern, uint32_t pattern_size) noexcept;
accel_status_t StreamEnqueueHostCallback(accel_bk_stream_t stream, accel_host_callback_t callback,
                                         void* user_data) noexcept;
accel_status_t StreamFreeBuffer(accel_bk_stream_t stream, accel_bk_buffer_t buffer) noexcept;
accel_status_t StreamRecordEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept;
accel_status_t StreamWaitEvent(accel_bk_stream_t stream, accel_bk_event_t event) noexcept;
accel_status_t StreamQuery(accel_bk_stream_t stream) noexcept;
accel_status_t StreamSynchronize(accel_bk_stream_t stream, uint64_t timeout_ns) noexcept;
accel_status_t StreamClearError(accel_bk_stream_t stream) noexcept;
accel_status_t StreamGetCopyStatistics(accel_bk_stream_t stream, accel_copy_statistics_t* out_statistics) noexcept;
accel_status_t EventCreate(accel_bk_device_t device, const accel_event_desc_t* desc,
                           accel_bk_event_t* out_event) noexcept;
void EventDestroy(accel_bk_event_t event) noexcept;
accel_status_t EventQuery(accel_bk_event_t event) noexcept;
accel_status_t EventSynchronize(accel_bk_event_t event, uint64_t timeout_ns) noexcept;
accel_status_t EventElapsedTime(accel_bk_event_t start, accel_bk_event_t end, uint64_t* out_nanoseconds) noexcept;

// module.cc
accel_status_t ModuleCreate(accel_bk_device_t device, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept;
void ModuleDestroy(accel_bk_module_t module) noexcept;
accel_status_t ModuleEnumerateKernels(accel_bk_module_t module, uint32_t* inout_count, const char** out_names) noexcept;
accel_status_t ModuleGetKernel(accel_bk_module_t module, const char* name, accel_bk_kernel_t* out_kernel) noexcept;
void KernelDestroy(accel_bk_kernel_t kernel) noexcept;
accel_status_t KernelGetProperties(accel_bk_kernel_t kernel, accel_kernel_properties_t* out_properties) noexcept;
accel_status_t KernelGetArgumentInfo(accel_bk_kernel_t kernel, uint32_t index,
                                     accel_kernel_argument_info_t* out_info) noexcept;
accel_status_t StreamLaunchKernel(accel_bk_stream_t stream, accel_bk_kernel_t kernel,
                                  const accel_bk_launch_t* launch) noexcept;

// topology.cc
accel_status_t DeviceGetTopology(accel_bk_device_t device, accel_device_topology_t* out_topology) noexcept;
accel_status_t DeviceGetLink(accel_bk_device_t device, accel_bk_device_t peer, accel_device_link_t* out_link) noexcept;

}  // namespace accel::vulkan

#endif  // ACCEL_VULKAN_SYMBOLS_H_
