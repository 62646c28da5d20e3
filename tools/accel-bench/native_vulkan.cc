// accel-bench's native Vulkan path (docs/accel-bench.md, "--native"): the work
// of accel_path.cc on the same Vulkan physical device, through the loader
// opened with dlopen as backends/vulkan does, in the most direct Vulkan way, as
// the baseline Accel is compared with:
//
//   init      an instance (Vulkan 1.1), a device with one queue of the family the backend picks, three
//             buffers (two of max_size, one of 4 KiB; storage + transfer) in the memory type the backend
//             picks (device-local in the largest device-local heap, host-visible and coherent preferred),
//             mapped once when host-visible, else a host-visible staging buffer of max_size; pageable
//             host memory of max_size; fill_u32's compute pipeline (block 1 x 1 x 1 through
//             specialization constants 0-2) with its descriptor set (binding 0: the tiny buffer) written
//             once; a command pool, command buffers and a fence; one warm-up launch
//   launch    a command buffer recorded (vkResetCommandBuffer, vkBeginCommandBuffer, vkCmdPipelineBarrier,
//             vkCmdBindPipeline, vkCmdBindDescriptorSets, vkCmdPushConstants {value 7, n 1},
//             vkCmdDispatch(1, 1, 1), vkEndCommandBuffer), vkQueueSubmit with the fence, then
//             vkWaitForFences + vkResetFences
//   batch     `count` such command buffers, each recorded and submitted on its own (vkQueueSubmit), the
//             last with the fence, then one wait: the native caller that submits each launch as it comes,
//             not one command buffer with `count` dispatches (which needs the caller to know the batch in
//             advance). backends/vulkan/stream.cc does better where it can: launches that queue behind a
//             busy device share a command buffer and a submission
//   copies    host->device and device->host: with host-visible device memory (lavapipe's, unified and
//             ReBAR memory) a memcpy to or from the mapped memory (vkFlushMappedMemoryRanges /
//             vkInvalidateMappedMemoryRanges when not coherent); otherwise memcpy through the staging
//             buffer and a vkCmdCopyBuffer submitted and waited for. device->device: vkCmdCopyBuffer in a
//             command buffer, submitted and waited for
//   fill      vkCmdFillBuffer (a 4-byte pattern) in a command buffer, submitted and waited for
//
// Every command buffer starts with one global memory barrier (compute and transfer writes before compute
// and transfer accesses): it gives the in-order semantics of a stream (a launch after a launch or copy
// sees its writes), which consecutive Vulkan submissions do not have by themselves.
//
// The device is found as the backend lists it: physical devices in order, those with Vulkan 1.1 and a
// compute queue (backends/vulkan/backend.cc), matched by VkPhysicalDeviceProperties::deviceName (the
// backend's `name`).
#define VK_NO_PROTOTYPES
#include <dlfcn.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench.h"

namespace accel::bench {
namespace {

#define ACCEL_BENCH_VK_INSTANCE_FUNCTIONS(X)  \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define ACCEL_BENCH_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                       \
  X(vkGetDeviceQueue)                      \
  X(vkDeviceWaitIdle)                      \
  X(vkCreateBuffer)                        \
  X(vkDestroyBuffer)                       \
  X(vkGetBufferMemoryRequirements)         \
  X(vkAllocateMemory)                      \
  X(vkFreeMemory)                          \
  X(vkBindBufferMemory)                    \
  X(vkMapMemory)                           \
  X(vkFlushMappedMemoryRanges)             \
  X(vkInvalidateMappedMemoryRanges)        \
  X(vkCreateShaderModule)                  \
  X(vkDestroyShaderModule)                 \
  X(vkCreateDescriptorSetLayout)           \
  X(vkDestroyDescriptorSetLayout)          \
  X(vkCreatePipelineLayout)                \
  X(vkDestroyPipelineLayout)               \
  X(vkCreateComputePipelines)              \
  X(vkDestroyPipeline)                     \
  X(vkCreateDescriptorPool)                \
  X(vkDestroyDescriptorPool)               \
  X(vkAllocateDescriptorSets)              \
  X(vkUpdateDescriptorSets)                \
  X(vkCreateCommandPool)                   \
  X(vkDestroyCommandPool)                  \
  X(vkAllocateCommandBuffers)              \
  X(vkResetCommandBuffer)                  \
  X(vkBeginCommandBuffer)                  \
  X(vkEndCommandBuffer)                    \
  X(vkCmdPipelineBarrier)                  \
  X(vkCmdBindPipeline)                     \
  X(vkCmdBindDescriptorSets)               \
  X(vkCmdPushConstants)                    \
  X(vkCmdDispatch)                         \
  X(vkCmdCopyBuffer)                       \
  X(vkCmdFillBuffer)                       \
  X(vkQueueSubmit)                         \
  X(vkCreateFence)                         \
  X(vkDestroyFence)                        \
  X(vkWaitForFences)                       \
  X(vkResetFences)

struct VkApi {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
  PFN_vkEnumerateInstanceExtensionProperties vkEnumerateInstanceExtensionProperties = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
#define ACCEL_BENCH_VK_DECLARE(name) PFN_##name name = nullptr;
  ACCEL_BENCH_VK_INSTANCE_FUNCTIONS(ACCEL_BENCH_VK_DECLARE)
  ACCEL_BENCH_VK_DEVICE_FUNCTIONS(ACCEL_BENCH_VK_DECLARE)
#undef ACCEL_BENCH_VK_DECLARE
};

std::string ResultName(VkResult r) {
  switch (r) {
#define ACCEL_BENCH_VK_RESULT(e) \
  case e: return #e;
    ACCEL_BENCH_VK_RESULT(VK_SUCCESS)
    ACCEL_BENCH_VK_RESULT(VK_NOT_READY)
    ACCEL_BENCH_VK_RESULT(VK_TIMEOUT)
    ACCEL_BENCH_VK_RESULT(VK_INCOMPLETE)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_DEVICE_LOST)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_FRAGMENTATION)
    ACCEL_BENCH_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef ACCEL_BENCH_VK_RESULT
    default: break;
  }
  return "VkResult " + std::to_string(static_cast<int>(r));
}

std::string Failure(const char* call, VkResult r) { return std::string(call) + " failed with " + ResultName(r); }

// The GLCompute entry point of a SPIR-V module to launch: "fill_u32" when the module has it (the corpus names
// entry points after their kernel), else "main" (a GLSL compiler's default), else the only one; empty when there
// is none.
std::string EntryPoint(const std::vector<uint32_t>& words) {
  constexpr uint32_t kOpEntryPoint = 15;
  constexpr uint32_t kGLCompute = 5;
  std::vector<std::string> names;
  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16;
    const uint32_t opcode = words[at] & 0xFFFF;
    if (count == 0 || at + count > words.size()) break;
    if (opcode == kOpEntryPoint && count >= 4 && words[at + 1] == kGLCompute) {
      const char* text = reinterpret_cast<const char*>(&words[at + 3]);
      names.emplace_back(text, strnlen(text, (count - 3) * sizeof(uint32_t)));
    }
    at += count;
  }
  for (const char* wanted : {"fill_u32", "main"}) {
    if (std::find(names.begin(), names.end(), wanted) != names.end()) return wanted;
  }
  return names.size() == 1 ? names[0] : std::string();
}

// A buffer with its own memory; `mapped` while its memory is host-visible.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint8_t* mapped = nullptr;
  bool coherent = false;
};

class VulkanPath final : public Path {
 public:
  ~VulkanPath() override {
    if (device_ != VK_NULL_HANDLE && device_ready_) {
      vk_.vkDeviceWaitIdle(device_);
      if (fence_ != VK_NULL_HANDLE) vk_.vkDestroyFence(device_, fence_, nullptr);
      if (pool_ != VK_NULL_HANDLE) vk_.vkDestroyCommandPool(device_, pool_, nullptr);  // frees its buffers
      if (descriptors_ != VK_NULL_HANDLE) vk_.vkDestroyDescriptorPool(device_, descriptors_, nullptr);
      if (pipeline_ != VK_NULL_HANDLE) vk_.vkDestroyPipeline(device_, pipeline_, nullptr);
      if (pipeline_layout_ != VK_NULL_HANDLE) vk_.vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
      if (set_layout_ != VK_NULL_HANDLE) vk_.vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
      for (Buffer* b : {&a_, &b_, &tiny_, &staging_}) {
        if (b->buffer != VK_NULL_HANDLE) vk_.vkDestroyBuffer(device_, b->buffer, nullptr);
        if (b->memory != VK_NULL_HANDLE) vk_.vkFreeMemory(device_, b->memory, nullptr);  // unmaps
      }
    }
    if (device_ != VK_NULL_HANDLE && vk_.vkDestroyDevice != nullptr) vk_.vkDestroyDevice(device_, nullptr);
    if (instance_ != VK_NULL_HANDLE) vk_.vkDestroyInstance(instance_, nullptr);
    // Opened RTLD_NODELETE: Mesa and LLVM do not support being unloaded (backends/vulkan/backend.cc).
    if (library_ != nullptr) dlclose(library_);
  }

  std::string Name() const override { return "vulkan"; }

  // Opens the loader and the instance and finds the device; false with `*why` when there is no native twin.
  bool Find(const accel_device_capabilities_t& caps, uint32_t index_in_backend, std::string* why) {
    dlerror();
    library_ = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (library_ == nullptr) {
      const char* e = dlerror();
      *why = std::string("cannot load libvulkan.so.1: ") + (e != nullptr ? e : "unknown error");
      return false;
    }
    vk_.vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library_, "vkGetInstanceProcAddr"));
    if (vk_.vkGetInstanceProcAddr == nullptr) {
      *why = "libvulkan.so.1 does not export vkGetInstanceProcAddr";
      return false;
    }
    vk_.vkEnumerateInstanceVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
        vk_.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
    vk_.vkEnumerateInstanceExtensionProperties = reinterpret_cast<PFN_vkEnumerateInstanceExtensionProperties>(
        vk_.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceExtensionProperties"));
    vk_.vkCreateInstance =
        reinterpret_cast<PFN_vkCreateInstance>(vk_.vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkCreateInstance"));
    uint32_t version = VK_API_VERSION_1_0;
    if (vk_.vkEnumerateInstanceVersion != nullptr) vk_.vkEnumerateInstanceVersion(&version);
    if (vk_.vkCreateInstance == nullptr || version < VK_API_VERSION_1_1) {
      *why = "the Vulkan loader implements less than Vulkan 1.1";
      return false;
    }
    // Portability enumeration where the loader offers it, as the backend enables it: the same devices listed.
    std::vector<const char*> extensions;
    VkInstanceCreateFlags flags = 0;
    uint32_t count = 0;
    if (vk_.vkEnumerateInstanceExtensionProperties != nullptr &&
        vk_.vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr) == VK_SUCCESS) {
      std::vector<VkExtensionProperties> available(count);
      if (vk_.vkEnumerateInstanceExtensionProperties(nullptr, &count, available.data()) == VK_SUCCESS) {
        for (uint32_t i = 0; i < count; ++i) {
          if (std::strcmp(available[i].extensionName, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) == 0) {
            extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
            flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
          }
        }
      }
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "accel-bench native";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.flags = flags;
    info.pApplicationInfo = &app;
    info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    VkResult r = vk_.vkCreateInstance(&info, nullptr, &instance_);
    if (r != VK_SUCCESS) {
      instance_ = VK_NULL_HANDLE;
      *why = Failure("vkCreateInstance", r);
      return false;
    }
#define ACCEL_BENCH_VK_RESOLVE(name)                                                    \
  vk_.name = reinterpret_cast<PFN_##name>(vk_.vkGetInstanceProcAddr(instance_, #name)); \
  if (vk_.name == nullptr) {                                                            \
    *why = "the Vulkan instance lacks " #name;                                          \
    return false;                                                                       \
  }
    ACCEL_BENCH_VK_INSTANCE_FUNCTIONS(ACCEL_BENCH_VK_RESOLVE)
#undef ACCEL_BENCH_VK_RESOLVE

    count = 0;
    r = vk_.vkEnumeratePhysicalDevices(instance_, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    if (r == VK_SUCCESS && count > 0) r = vk_.vkEnumeratePhysicalDevices(instance_, &count, physical.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
      *why = Failure("vkEnumeratePhysicalDevices", r);
      return false;
    }
    physical.resize(count);
    // The backend's devices, in its order: Vulkan 1.1 with a compute queue family.
    struct Candidate {
      VkPhysicalDevice physical;
      std::string name;
      uint32_t family;
    };
    std::vector<Candidate> listed;
    for (VkPhysicalDevice p : physical) {
      VkPhysicalDeviceProperties properties{};
      vk_.vkGetPhysicalDeviceProperties(p, &properties);
      if (properties.apiVersion < VK_API_VERSION_1_1) continue;
      // The backend's queue family: the first with compute and timestamps, else the first with compute.
      uint32_t families = 0;
      vk_.vkGetPhysicalDeviceQueueFamilyProperties(p, &families, nullptr);
      std::vector<VkQueueFamilyProperties> family(families);
      vk_.vkGetPhysicalDeviceQueueFamilyProperties(p, &families, family.data());
      int chosen = -1;
      for (uint32_t i = 0; i < families; ++i) {
        if ((family[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0 || family[i].queueCount == 0) continue;
        if (chosen < 0 ||
            (family[static_cast<uint32_t>(chosen)].timestampValidBits == 0 && family[i].timestampValidBits > 0)) {
          chosen = static_cast<int>(i);
        }
      }
      if (chosen < 0) continue;
      listed.push_back(
          {p, std::string(properties.deviceName, strnlen(properties.deviceName, sizeof(properties.deviceName))),
           static_cast<uint32_t>(chosen)});
    }
    // caps.name holds deviceName, cut to its capacity.
    auto matches = [&](const Candidate& c) { return c.name.substr(0, sizeof(caps.name) - 1) == caps.name; };
    const Candidate* chosen = nullptr;
    if (index_in_backend < listed.size() && matches(listed[index_in_backend])) {
      chosen = &listed[index_in_backend];
    } else {
      for (const Candidate& c : listed) {
        if (matches(c)) {
          chosen = &c;
          break;
        }
      }
    }
    if (chosen == nullptr) {
      std::string names;
      for (const Candidate& c : listed) names += (names.empty() ? "'" : ", '") + c.name + "'";
      *why = std::string("no Vulkan device is named '") + caps.name + "' (the loader lists " +
             (names.empty() ? std::string("none usable") : names) + ")";
      return false;
    }
    physical_ = chosen->physical;
    family_ = chosen->family;
    return true;
  }

  bool Init(uint64_t max_size, const std::string& corpus_dir) {
    host_.assign(max_size, 1);
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family_;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    VkResult r = vk_.vkCreateDevice(physical_, &device_info, nullptr, &device_);
    if (r != VK_SUCCESS) {
      device_ = VK_NULL_HANDLE;
      return Fail("vkCreateDevice", r);
    }
#define ACCEL_BENCH_VK_RESOLVE(name)                                                \
  vk_.name = reinterpret_cast<PFN_##name>(vk_.vkGetDeviceProcAddr(device_, #name)); \
  if (vk_.name == nullptr) {                                                        \
    error_ = "the driver lacks " #name;                                             \
    return false;                                                                   \
  }
    ACCEL_BENCH_VK_DEVICE_FUNCTIONS(ACCEL_BENCH_VK_RESOLVE)
#undef ACCEL_BENCH_VK_RESOLVE
    device_ready_ = true;
    vk_.vkGetDeviceQueue(device_, family_, 0, &queue_);
    vk_.vkGetPhysicalDeviceMemoryProperties(physical_, &memory_);

    const uint64_t big = std::max<uint64_t>(max_size, 4);
    if (!MakeBuffer(big, false, &a_) || !MakeBuffer(big, false, &b_) || !MakeBuffer(4096, false, &tiny_)) {
      return false;
    }
    if (a_.mapped == nullptr && !MakeBuffer(big, true, &staging_)) return false;

    VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = family_;
    if ((r = vk_.vkCreateCommandPool(device_, &pool, nullptr, &pool_)) != VK_SUCCESS) {
      pool_ = VK_NULL_HANDLE;
      return Fail("vkCreateCommandPool", r);
    }
    if (!GrowCommandBuffers(128)) return false;
    VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = vk_.vkCreateFence(device_, &fence, nullptr, &fence_)) != VK_SUCCESS) {
      fence_ = VK_NULL_HANDLE;
      return Fail("vkCreateFence", r);
    }
    return MakePipeline(corpus_dir) && TinyLaunchAndWait();  // the warm-up launch is not timed
  }

  bool TinyLaunchAndWait() override { return Launch(commands_[0], fence_) && Wait(); }

  bool LaunchBatch(int count) override {
    if (count <= 0) return true;
    if (!GrowCommandBuffers(static_cast<size_t>(count))) return false;
    for (int i = 0; i < count; ++i) {
      if (!Launch(commands_[static_cast<size_t>(i)], i + 1 == count ? fence_ : VK_NULL_HANDLE)) {
        // What was submitted still runs: wait for it before the command buffers are reused.
        vk_.vkDeviceWaitIdle(device_);
        return false;
      }
    }
    return Wait();
  }

  bool HostToDevice(uint64_t size) override {
    if (a_.mapped != nullptr) {
      std::memcpy(a_.mapped, host_.data(), size);
      return a_.coherent || Flush(a_);
    }
    std::memcpy(staging_.mapped, host_.data(), size);
    if (!staging_.coherent && !Flush(staging_)) return false;
    const VkBufferCopy region{0, 0, size};
    return Copy(staging_.buffer, a_.buffer, region, false);
  }

  bool DeviceToHost(uint64_t size) override {
    if (a_.mapped != nullptr) {
      if (!a_.coherent && !Invalidate(a_)) return false;
      std::memcpy(host_.data(), a_.mapped, size);
      return true;
    }
    const VkBufferCopy region{0, 0, size};
    if (!Copy(a_.buffer, staging_.buffer, region, true)) return false;
    if (!staging_.coherent && !Invalidate(staging_)) return false;
    std::memcpy(host_.data(), staging_.mapped, size);
    return true;
  }

  bool DeviceToDevice(uint64_t size) override {
    const VkBufferCopy region{0, 0, size};
    return Copy(a_.buffer, b_.buffer, region, false);
  }

  bool Fill(uint64_t size) override {
    VkCommandBuffer c = commands_[0];
    if (!Begin(c)) return false;
    vk_.vkCmdFillBuffer(c, b_.buffer, 0, size, 0x01020304u);
    return Submit(c, fence_) && Wait();
  }

 private:
  bool Fail(const char* call, VkResult r) {
    error_ = Failure(call, r);
    return false;
  }

  // The memory type the backend picks for a device buffer (device-local in the largest device-local heap,
  // host-visible and coherent preferred), or for staging a host-visible one (coherent and cached preferred), among
  // `type_bits`; -1 when none fits.
  int32_t MemoryType(uint32_t type_bits, bool staging) const {
    uint32_t big_heap = 0;
    for (uint32_t h = 1; h < memory_.memoryHeapCount; ++h) {
      const bool local = (memory_.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
      const bool big_local = (memory_.memoryHeaps[big_heap].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
      if ((local && !big_local) ||
          (local == big_local && memory_.memoryHeaps[h].size > memory_.memoryHeaps[big_heap].size)) {
        big_heap = h;
      }
    }
    int32_t best = -1;
    int best_score = -1;
    for (uint32_t t = 0; t < memory_.memoryTypeCount; ++t) {
      if ((type_bits & (1u << t)) == 0) continue;
      const VkMemoryPropertyFlags f = memory_.memoryTypes[t].propertyFlags;
      const bool visible = (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
      const bool coherent = (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
      int score = 0;
      if (staging) {
        if (!visible) continue;
        score = (coherent ? 4 : 0) + ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0 ? 2 : 0) +
                ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) == 0 ? 1 : 0);
      } else {
        if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) == 0 || memory_.memoryTypes[t].heapIndex != big_heap) continue;
        score = (visible ? 2 : 0) + (coherent ? 1 : 0);
      }
      if (score > best_score) {
        best = static_cast<int32_t>(t);
        best_score = score;
      }
    }
    if (best < 0 && !staging) {
      // No device-local type in the largest heap (a CPU driver without the flag): the first type that fits.
      for (uint32_t t = 0; t < memory_.memoryTypeCount && best < 0; ++t) {
        if ((type_bits & (1u << t)) != 0) best = static_cast<int32_t>(t);
      }
    }
    return best;
  }

  bool MakeBuffer(uint64_t size, bool staging, Buffer* out) {
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult r = vk_.vkCreateBuffer(device_, &info, nullptr, &out->buffer);
    if (r != VK_SUCCESS) {
      out->buffer = VK_NULL_HANDLE;
      return Fail("vkCreateBuffer", r);
    }
    VkMemoryRequirements requirements{};
    vk_.vkGetBufferMemoryRequirements(device_, out->buffer, &requirements);
    const int32_t type = MemoryType(requirements.memoryTypeBits, staging);
    if (type < 0) {
      error_ = std::string("no memory type takes a buffer of ") + std::to_string(size) + " bytes" +
               (staging ? " in host-visible memory" : "");
      return false;
    }
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = static_cast<uint32_t>(type);
    if ((r = vk_.vkAllocateMemory(device_, &allocate, nullptr, &out->memory)) != VK_SUCCESS) {
      out->memory = VK_NULL_HANDLE;
      return Fail("vkAllocateMemory", r);
    }
    if ((r = vk_.vkBindBufferMemory(device_, out->buffer, out->memory, 0)) != VK_SUCCESS) {
      return Fail("vkBindBufferMemory", r);
    }
    const VkMemoryPropertyFlags f = memory_.memoryTypes[type].propertyFlags;
    out->coherent = (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
    if ((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0) {
      void* mapped = nullptr;
      if ((r = vk_.vkMapMemory(device_, out->memory, 0, VK_WHOLE_SIZE, 0, &mapped)) != VK_SUCCESS) {
        return Fail("vkMapMemory", r);
      }
      out->mapped = static_cast<uint8_t*>(mapped);
    }
    return true;
  }

  bool Flush(const Buffer& b) {
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = b.memory;
    range.size = VK_WHOLE_SIZE;
    const VkResult r = vk_.vkFlushMappedMemoryRanges(device_, 1, &range);
    return r == VK_SUCCESS || Fail("vkFlushMappedMemoryRanges", r);
  }
  bool Invalidate(const Buffer& b) {
    VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    range.memory = b.memory;
    range.size = VK_WHOLE_SIZE;
    const VkResult r = vk_.vkInvalidateMappedMemoryRanges(device_, 1, &range);
    return r == VK_SUCCESS || Fail("vkInvalidateMappedMemoryRanges", r);
  }

  bool GrowCommandBuffers(size_t count) {
    if (commands_.size() >= count) return true;
    const size_t old = commands_.size();
    commands_.resize(count, VK_NULL_HANDLE);
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = static_cast<uint32_t>(count - old);
    const VkResult r = vk_.vkAllocateCommandBuffers(device_, &allocate, commands_.data() + old);
    if (r != VK_SUCCESS) {
      commands_.resize(old);
      return Fail("vkAllocateCommandBuffers", r);
    }
    return true;
  }

  bool MakePipeline(const std::string& corpus_dir) {
    const std::string path = CorpusFile(corpus_dir, "spirv-vulkan", &error_);
    if (path.empty()) return false;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    const std::streamoff bytes = in ? static_cast<std::streamoff>(in.tellg()) : -1;
    if (bytes < 20 || bytes % 4 != 0) {
      error_ = "cannot read " + path + " as SPIR-V";
      return false;
    }
    std::vector<uint32_t> words(static_cast<size_t>(bytes) / 4);
    in.seekg(0);
    in.read(reinterpret_cast<char*>(words.data()), bytes);
    if (!in || words[0] != 0x07230203u) {
      error_ = path + " is not SPIR-V (no magic number)";
      return false;
    }
    entry_point_ = EntryPoint(words);
    if (entry_point_.empty()) {
      error_ = path + " has no GLCompute entry point named fill_u32 or main";
      return false;
    }

    VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    module_info.codeSize = words.size() * sizeof(uint32_t);
    module_info.pCode = words.data();
    VkShaderModule shader = VK_NULL_HANDLE;
    VkResult r = vk_.vkCreateShaderModule(device_, &module_info, nullptr, &shader);
    if (r != VK_SUCCESS) return Fail("vkCreateShaderModule", r);

    VkDescriptorSetLayoutBinding binding{};
    binding.binding = 0;
    binding.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    binding.descriptorCount = 1;
    binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 1;
    set_info.pBindings = &binding;
    r = vk_.vkCreateDescriptorSetLayout(device_, &set_info, nullptr, &set_layout_);
    if (r != VK_SUCCESS) {
      set_layout_ = VK_NULL_HANDLE;
      vk_.vkDestroyShaderModule(device_, shader, nullptr);
      return Fail("vkCreateDescriptorSetLayout", r);
    }
    const VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(scalars_)};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout_;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    r = vk_.vkCreatePipelineLayout(device_, &layout_info, nullptr, &pipeline_layout_);
    if (r != VK_SUCCESS) {
      pipeline_layout_ = VK_NULL_HANDLE;
      vk_.vkDestroyShaderModule(device_, shader, nullptr);
      return Fail("vkCreatePipelineLayout", r);
    }
    // The block, 1 x 1 x 1, at specialization constants 0, 1, 2 (docs/kernels.md).
    const uint32_t block[3] = {1, 1, 1};
    const VkSpecializationMapEntry entries[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
    VkSpecializationInfo specialization{};
    specialization.mapEntryCount = 3;
    specialization.pMapEntries = entries;
    specialization.dataSize = sizeof(block);
    specialization.pData = block;
    VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = shader;
    pipeline_info.stage.pName = entry_point_.c_str();
    pipeline_info.stage.pSpecializationInfo = &specialization;
    pipeline_info.layout = pipeline_layout_;
    r = vk_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &pipeline_info, nullptr, &pipeline_);
    vk_.vkDestroyShaderModule(device_, shader, nullptr);
    if (r != VK_SUCCESS) {
      pipeline_ = VK_NULL_HANDLE;
      Fail("vkCreateComputePipelines", r);
      error_ += " (" + path + ", entry point '" + entry_point_ + "')";
      return false;
    }

    const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    if ((r = vk_.vkCreateDescriptorPool(device_, &pool_info, nullptr, &descriptors_)) != VK_SUCCESS) {
      descriptors_ = VK_NULL_HANDLE;
      return Fail("vkCreateDescriptorPool", r);
    }
    VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = descriptors_;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout_;
    if ((r = vk_.vkAllocateDescriptorSets(device_, &allocate, &set_)) != VK_SUCCESS) {
      return Fail("vkAllocateDescriptorSets", r);
    }
    // The arguments never change: the descriptor is written once (the Accel path passes the same every launch).
    const VkDescriptorBufferInfo buffer{tiny_.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set_;
    write.dstBinding = 0;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &buffer;
    vk_.vkUpdateDescriptorSets(device_, 1, &write, 0, nullptr);
    return true;
  }

  // Resets and begins `c`, ordered after all earlier work (the stream's in-order semantics).
  bool Begin(VkCommandBuffer c) {
    VkResult r = vk_.vkResetCommandBuffer(c, 0);
    if (r != VK_SUCCESS) return Fail("vkResetCommandBuffer", r);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if ((r = vk_.vkBeginCommandBuffer(c, &begin)) != VK_SUCCESS) return Fail("vkBeginCommandBuffer", r);
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                            VK_ACCESS_TRANSFER_WRITE_BIT;
    constexpr VkPipelineStageFlags kStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vk_.vkCmdPipelineBarrier(c, kStages, kStages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    return true;
  }

  // Ends `c` and submits it, signalling `fence` when not null.
  bool Submit(VkCommandBuffer c, VkFence fence) {
    VkResult r = vk_.vkEndCommandBuffer(c);
    if (r != VK_SUCCESS) return Fail("vkEndCommandBuffer", r);
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &c;
    if ((r = vk_.vkQueueSubmit(queue_, 1, &submit, fence)) != VK_SUCCESS) return Fail("vkQueueSubmit", r);
    return true;
  }

  // Waits for the fence: the last submission, and so (one queue, in submission order) everything before it.
  bool Wait() {
    const VkResult r = vk_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX);
    vk_.vkResetFences(device_, 1, &fence_);
    return r == VK_SUCCESS || Fail("vkWaitForFences", r);
  }

  bool Launch(VkCommandBuffer c, VkFence fence) {
    if (!Begin(c)) return false;
    vk_.vkCmdBindPipeline(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_);
    vk_.vkCmdBindDescriptorSets(c, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline_layout_, 0, 1, &set_, 0, nullptr);
    vk_.vkCmdPushConstants(c, pipeline_layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(scalars_), scalars_);
    vk_.vkCmdDispatch(c, 1, 1, 1);
    return Submit(c, fence);
  }

  // One vkCmdCopyBuffer, submitted and waited for; `to_host` makes the copy's writes visible to host reads.
  bool Copy(VkBuffer from, VkBuffer to, const VkBufferCopy& region, bool to_host) {
    VkCommandBuffer c = commands_[0];
    if (!Begin(c)) return false;
    vk_.vkCmdCopyBuffer(c, from, to, 1, &region);
    if (to_host) {
      VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vk_.vkCmdPipelineBarrier(c, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                               nullptr, 0, nullptr);
    }
    return Submit(c, fence_) && Wait();
  }

  void* library_ = nullptr;
  VkApi vk_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  uint32_t family_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  bool device_ready_ = false;  // every device function resolved
  VkQueue queue_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  Buffer a_, b_, tiny_, staging_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> commands_;
  VkFence fence_ = VK_NULL_HANDLE;
  std::string entry_point_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptors_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  std::vector<uint8_t> host_;
  uint32_t scalars_[2] = {7, 1};  // fill_u32's push constants: value, n
};

}  // namespace

std::unique_ptr<Path> MakeVulkanPath(const accel_device_capabilities_t& caps, uint32_t index_in_backend,
                                     uint64_t max_size, const std::string& corpus_dir, std::string* why) {
  auto path = std::make_unique<VulkanPath>();
  if (!path->Find(caps, index_in_backend, why)) return nullptr;
  if (!path->Init(max_size, corpus_dir)) {
    *why = "vulkan: " + path->Error();
    return nullptr;
  }
  return path;
}

}  // namespace accel::bench
