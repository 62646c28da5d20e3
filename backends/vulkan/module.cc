// Modules and kernels (docs/kernels.md): spirv-vulkan modules, one kernel per
// GLCompute entry point (by its name), declarations from reflection
// (reflect.cc), compute pipelines specialised and cached per distinct block
// and LOCAL_MEMORY sizes, launches checked and copied at enqueue, and the
// device's VkPipelineCache file under ACCEL_CACHE_DIR.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "symbols.h"

namespace accel::vulkan {

// A VkShaderModule, shared by the module and its kernels' states (pipelines are built from it on demand).
struct ShaderModule {
  Device* device;
  VkShaderModule module;
  ~ShaderModule() { device->vk.vkDestroyShaderModule(device->device, module, nullptr); }
};

// What a kernel needs to build pipelines and record launches: its declaration, layouts and the pipelines built so
// far. Held by the kernel handle and by every launch that uses it. Thread-safe: the pipeline map is guarded by its
// mutex; everything else is immutable after creation.
struct KernelState {
  Device* device = nullptr;
  std::shared_ptr<ShaderModule> shader;
  ReflectedKernel info;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;  // NULL when the kernel binds nothing
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::mutex mutex;
  std::map<std::vector<uint32_t>, VkPipeline> pipelines;  // by (block, LOCAL_MEMORY words)

  ~KernelState() {
    const DeviceFunctions& vk = device->vk;
    for (auto& [key, pipeline] : pipelines) vk.vkDestroyPipeline(device->device, pipeline, nullptr);
    if (layout != VK_NULL_HANDLE) vk.vkDestroyPipelineLayout(device->device, layout, nullptr);
    if (set_layout != VK_NULL_HANDLE) vk.vkDestroyDescriptorSetLayout(device->device, set_layout, nullptr);
  }

  // The pipeline for `key` (block x, y, z, then each LOCAL_MEMORY size in words), built on first use.
  Status Pipeline(const std::vector<uint32_t>& key, VkPipeline* out) {
    std::lock_guard lock(mutex);
    auto it = pipelines.find(key);
    if (it != pipelines.end()) {
      *out = it->second;
      return Status::Ok();
    }
    std::vector<VkSpecializationMapEntry> entries;
    std::vector<uint32_t> values;
    for (int d = 0; d < 3; ++d) {
      if (info.block_spec_id[d] == kNoSpecId) continue;
      entries.push_back({info.block_spec_id[d], static_cast<uint32_t>(values.size() * 4), 4});
      values.push_back(key[static_cast<size_t>(d)]);
    }
    size_t local = 3;
    for (const auto& a : info.arguments) {
      if (a.kind != ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY) continue;
      entries.push_back({a.spec_id, static_cast<uint32_t>(values.size() * 4), 4});
      values.push_back(key[local++]);
    }
    VkSpecializationInfo specialization{};
    specialization.mapEntryCount = static_cast<uint32_t>(entries.size());
    specialization.pMapEntries = entries.data();
    specialization.dataSize = values.size() * 4;
    specialization.pData = values.data();
    VkComputePipelineCreateInfo create{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    create.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    create.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    create.stage.module = shader->module;
    create.stage.pName = info.name.c_str();
    create.stage.pSpecializationInfo = entries.empty() ? nullptr : &specialization;
    create.layout = layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    const VkResult r =
        device->vk.vkCreateComputePipelines(device->device, device->pipeline_cache, 1, &create, nullptr, &pipeline);
    if (r != VK_SUCCESS) {
      Status s = VkFailure("vkCreateComputePipelines", r);
      s.message = "building kernel '" + info.name + "' for block " + std::to_string(key[0]) + "x" +
                  std::to_string(key[1]) + "x" + std::to_string(key[2]) + ": " + s.message;
      return s;
    }
    pipelines.emplace(key, pipeline);
    *out = pipeline;
    return Status::Ok();
  }
};

struct Module {
  Device* device = nullptr;
  std::shared_ptr<ShaderModule> shader;
  ReflectedModule reflected;
};

// A kernel handle; its state outlives it while launches use it.
struct Kernel {
  Module* module = nullptr;
  std::shared_ptr<KernelState> state;
};

VkDescriptorSetLayout LaunchSetLayout(const PreparedLaunch& launch) { return launch.kernel->set_layout; }
uint32_t LaunchStorageBuffers(const PreparedLaunch& launch) { return launch.kernel->info.storage_buffer_count; }
uint32_t LaunchUniformBytes(const PreparedLaunch& launch) {
  return launch.kernel->info.scalar_block == ScalarBlock::kUniformBuffer ? static_cast<uint32_t>(launch.scalars.size())
                                                                         : 0;
}

void RecordLaunch(PreparedLaunch& launch, VkCommandBuffer commands, VkDescriptorSet descriptor_set,
                  const Allocation* uniform) {
  const KernelState& k = *launch.kernel;
  const DeviceFunctions& vk = k.device->vk;
  if (descriptor_set != VK_NULL_HANDLE) {
    std::vector<VkWriteDescriptorSet>& writes = launch.writes;  // keeps its memory from launch to launch
    writes.clear();
    for (uint32_t b = 0; b < launch.ranges.size(); ++b) {
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = descriptor_set;
      w.dstBinding = b;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &launch.ranges[b];
      writes.push_back(w);
    }
    VkDescriptorBufferInfo uniform_range{};
    if (uniform != nullptr) {
      uniform_range = {uniform->buffer(), 0, launch.scalars.size()};
      VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w.dstSet = descriptor_set;
      w.dstBinding = k.info.uniform_binding;
      w.descriptorCount = 1;
      w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
      w.pBufferInfo = &uniform_range;
      writes.push_back(w);
    }
    vk.vkUpdateDescriptorSets(k.device->device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  if (uniform != nullptr) {
    // The scalars go into the uniform buffer inside the command buffer, then become visible to the shader.
    vk.vkCmdUpdateBuffer(commands, uniform->buffer(), 0, launch.scalars.size(), launch.scalars.data());
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_UNIFORM_READ_BIT;
    vk.vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                            &barrier, 0, nullptr, 0, nullptr);
  }
  vk.vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, launch.pipeline);
  if (descriptor_set != VK_NULL_HANDLE) {
    vk.vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &descriptor_set, 0, nullptr);
  }
  if (k.info.scalar_block == ScalarBlock::kPushConstants && !launch.scalars.empty()) {
    vk.vkCmdPushConstants(commands, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                          static_cast<uint32_t>(launch.scalars.size()), launch.scalars.data());
  }
  vk.vkCmdDispatch(commands, launch.grid[0], launch.grid[1], launch.grid[2]);
}

namespace {

uint32_t RoundUp4(uint32_t n) { return (n + 3) & ~uint32_t{3}; }

// Layouts for one kernel: set 0 with its storage buffers (and the uniform block), and the push-constant range.
Status MakeKernelState(Module* module, const ReflectedKernel& info, std::shared_ptr<KernelState>* out) {
  Device* device = module->device;
  const DeviceFunctions& vk = device->vk;
  auto state = std::make_shared<KernelState>();
  state->device = device;
  state->shader = module->shader;
  state->info = info;
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (uint32_t b = 0; b < info.storage_buffer_count; ++b) {
    bindings.push_back({b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  }
  if (info.scalar_block == ScalarBlock::kUniformBuffer) {
    bindings.push_back(
        {info.uniform_binding, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  }
  if (!bindings.empty()) {
    VkDescriptorSetLayoutCreateInfo set{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set.bindingCount = static_cast<uint32_t>(bindings.size());
    set.pBindings = bindings.data();
    const VkResult r = vk.vkCreateDescriptorSetLayout(device->device, &set, nullptr, &state->set_layout);
    if (r != VK_SUCCESS) {
      state->set_layout = VK_NULL_HANDLE;
      return VkFailure("vkCreateDescriptorSetLayout", r);
    }
  }
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, RoundUp4(info.scalar_block_size)};
  VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout.setLayoutCount = state->set_layout != VK_NULL_HANDLE ? 1 : 0;
  layout.pSetLayouts = &state->set_layout;
  const bool push = info.scalar_block == ScalarBlock::kPushConstants && range.size > 0;
  layout.pushConstantRangeCount = push ? 1 : 0;
  layout.pPushConstantRanges = &range;
  const VkResult r = vk.vkCreatePipelineLayout(device->device, &layout, nullptr, &state->layout);
  if (r != VK_SUCCESS) {
    state->layout = VK_NULL_HANDLE;
    return VkFailure("vkCreatePipelineLayout", r);
  }
  *out = std::move(state);
  return Status::Ok();
}

// What the device's limits say about a reflected kernel, before any launch.
bool FitsDevice(const Device& device, const ReflectedKernel& k, std::string* error) {
  const VkPhysicalDeviceLimits& l = device.facts.properties.limits;
  const std::string where = "kernel '" + k.name + "': ";
  if (k.scalar_block == ScalarBlock::kPushConstants && k.scalar_block_size > l.maxPushConstantsSize) {
    *error = where + "its push-constant block is " + std::to_string(k.scalar_block_size) + " bytes, past the " +
             std::to_string(l.maxPushConstantsSize) +
             " bytes of maxPushConstantsSize: declare the scalars in a uniform block at set 0, binding " +
             std::to_string(k.storage_buffer_count) + " instead (docs/kernels.md)";
    return false;
  }
  if (k.scalar_block == ScalarBlock::kUniformBuffer && RoundUp4(k.scalar_block_size) > MaxArgumentSize(l)) {
    *error = where + "its uniform block is " + std::to_string(k.scalar_block_size) + " bytes, past the " +
             std::to_string(MaxArgumentSize(l)) + " bytes of arguments the device takes";
    return false;
  }
  if (k.storage_buffer_count > l.maxPerStageDescriptorStorageBuffers) {
    *error = where + std::to_string(k.storage_buffer_count) + " storage buffers, past the device's " +
             std::to_string(l.maxPerStageDescriptorStorageBuffers) + " (maxPerStageDescriptorStorageBuffers)";
    return false;
  }
  bool fixed = true;
  uint64_t product = 1;
  for (int d = 0; d < 3; ++d) {
    if (k.block_spec_id[d] != kNoSpecId) {
      fixed = false;
      continue;
    }
    product *= k.local_size[d];
    if (k.local_size[d] > l.maxComputeWorkGroupSize[d]) {
      *error = where + "its fixed local size " + std::to_string(k.local_size[d]) + " in dimension " +
               std::to_string(d) + " is past the device's " + std::to_string(l.maxComputeWorkGroupSize[d]);
      return false;
    }
  }
  if (fixed && product > l.maxComputeWorkGroupInvocations) {
    *error = where + "its fixed work-group size " + std::to_string(product) + " is past the device's " +
             std::to_string(l.maxComputeWorkGroupInvocations) + " invocations";
    return false;
  }
  if (k.static_local_memory > l.maxComputeSharedMemorySize) {
    *error = where + std::to_string(k.static_local_memory) + " bytes of shared memory, past the device's " +
             std::to_string(l.maxComputeSharedMemorySize);
    return false;
  }
  return true;
}

bool AllFixed(const ReflectedKernel& k) {
  return k.block_spec_id[0] == kNoSpecId && k.block_spec_id[1] == kNoSpecId && k.block_spec_id[2] == kNoSpecId;
}

}  // namespace

// --- Pipeline cache --------------------------------------------------------------------------------------------

void LoadPipelineCache(Device* device) {
  const Host& host = *device->host;
  const VkPhysicalDeviceProperties& p = device->facts.properties;
  std::vector<char> data;
  const std::string cache_dir = TextOf(host.cache_dir());
  if (!cache_dir.empty()) {
    char name[128];
    std::snprintf(name, sizeof(name), "%04x-%04x-", p.vendorID, p.deviceID);
    std::string file = name;
    for (uint8_t b : p.pipelineCacheUUID) {
      std::snprintf(name, sizeof(name), "%02x", b);
      file += name;
    }
    const std::filesystem::path dir = std::filesystem::path(cache_dir) / "vulkan";
    device->pipeline_cache_path = (dir / (file + ".bin")).string();
    std::ifstream in(device->pipeline_cache_path, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    // The header (VkPipelineCacheHeaderVersionOne) must name this device and driver build, or the data is ignored.
    VkPipelineCacheHeaderVersionOne header{};
    if (data.size() >= sizeof(header)) std::memcpy(&header, data.data(), sizeof(header));
    if (data.size() < sizeof(header) || header.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE ||
        header.vendorID != p.vendorID || header.deviceID != p.deviceID ||
        std::memcmp(header.pipelineCacheUUID, p.pipelineCacheUUID, VK_UUID_SIZE) != 0) {
      if (!data.empty())
        host.Log(ACCEL_LOG_LEVEL_INFO, "ignoring the pipeline cache " + device->pipeline_cache_path +
                                           ": it is not this device's or driver's");
      data.clear();
    }
  }
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = data.size();
  info.pInitialData = data.empty() ? nullptr : data.data();
  VkResult r = device->vk.vkCreatePipelineCache(device->device, &info, nullptr, &device->pipeline_cache);
  if (r != VK_SUCCESS && !data.empty()) {
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    r = device->vk.vkCreatePipelineCache(device->device, &info, nullptr, &device->pipeline_cache);
  }
  if (r != VK_SUCCESS) {
    device->pipeline_cache = VK_NULL_HANDLE;
    host.Log(ACCEL_LOG_LEVEL_WARN,
             device->label + ": no pipeline cache: vkCreatePipelineCache failed: " + ResultName(r));
  }
}

void SavePipelineCache(Device* device) {
  if (device->pipeline_cache_path.empty() || device->pipeline_cache == VK_NULL_HANDLE) return;
  const Host& host = *device->host;
  size_t size = 0;
  if (device->vk.vkGetPipelineCacheData(device->device, device->pipeline_cache, &size, nullptr) != VK_SUCCESS ||
      size == 0) {
    return;
  }
  std::vector<char> data(size);
  if (device->vk.vkGetPipelineCacheData(device->device, device->pipeline_cache, &size, data.data()) != VK_SUCCESS) {
    return;
  }
  // Written to a temporary file and renamed, so that a reader never sees half of it.
  const std::filesystem::path path(device->pipeline_cache_path);
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  const std::filesystem::path temporary = path.string() + ".tmp." + std::to_string(reinterpret_cast<uintptr_t>(device));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(size));
    if (!out) {
      host.Log(ACCEL_LOG_LEVEL_WARN, "cannot write the pipeline cache " + temporary.string());
      std::filesystem::remove(temporary, error);
      return;
    }
  }
  std::filesystem::rename(temporary, path, error);
  if (error) {
    host.Log(ACCEL_LOG_LEVEL_WARN, "cannot write the pipeline cache " + path.string() + ": " + error.message());
    std::filesystem::remove(temporary, error);
  }
}

// --- Module slots -------------------------------------------------------------------------------------------------

accel_status_t ModuleCreate(accel_bk_device_t device_handle, const accel_module_source_t* source,
                            accel_bk_module_t* out_module) noexcept {
  Device* device = Unwrap(device_handle);
  const Host& host = *device->host;
  return Guard(host, "module_create", [&] {
    if (source->format != ACCEL_KERNEL_FORMAT_SPIRV_VULKAN) {
      return host.Fail(ACCEL_ERROR_UNSUPPORTED, "the Vulkan backend builds spirv-vulkan modules only");
    }
    // Exactly one of data and path is set (the core checked the path is readable).
    std::vector<char> bytes;
    if (source->data != nullptr) {
      const char* data = static_cast<const char*>(source->data);
      bytes.assign(data, data + source->size);
    } else {
      std::ifstream in(source->path, std::ios::binary);
      if (!in) return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("cannot read ") + source->path);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (bytes.size() % 4 != 0) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, "not a SPIR-V module: " + std::to_string(bytes.size()) +
                                                         " bytes is not a whole number of 32-bit words");
    }
    std::vector<uint32_t> words(bytes.size() / 4);
    if (!words.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
    constexpr uint32_t kMagic = 0x07230203;
    if (!words.empty() && words[0] == __builtin_bswap32(kMagic)) {
      for (uint32_t& w : words) w = __builtin_bswap32(w);  // written on a machine of the other byte order
    }
    auto module = std::make_unique<Module>();
    module->device = device;
    std::string error;
    if (!ReflectSpirv(words.data(), words.size(), &module->reflected, &error)) {
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, error);
    }
    for (const auto& k : module->reflected.kernels) {
      if (!FitsDevice(*device, k, &error)) return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, error);
    }
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = words.size() * 4;
    info.pCode = words.data();
    VkShaderModule shader = VK_NULL_HANDLE;
    const VkResult r = device->vk.vkCreateShaderModule(device->device, &info, nullptr, &shader);
    if (r != VK_SUCCESS) {
      return host.Fail(r == VK_ERROR_INVALID_SHADER_NV ? ACCEL_ERROR_INVALID_ARGUMENT : StatusOf(r),
                       "vkCreateShaderModule failed: " + ResultName(r));
    }
    module->shader = std::shared_ptr<ShaderModule>(new ShaderModule{device, shader});
    *out_module = Wrap(module.release());
    return ACCEL_SUCCESS;
  });
}

void ModuleDestroy(accel_bk_module_t module) noexcept { std::unique_ptr<Module> owned(Unwrap(module)); }

accel_status_t ModuleEnumerateKernels(accel_bk_module_t handle, uint32_t* inout_count,
                                      const char** out_names) noexcept {
  Module* module = Unwrap(handle);
  const Host& host = *module->device->host;
  return Guard(host, "module_enumerate_kernels", [&] {
    const auto count = static_cast<uint32_t>(module->reflected.kernels.size());
    if (out_names == nullptr) {
      *inout_count = count;
      return ACCEL_SUCCESS;
    }
    if (*inout_count < count) {
      *inout_count = count;
      return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                       "room for fewer kernel names than the module has (" + std::to_string(count) + ")");
    }
    for (uint32_t i = 0; i < count; ++i) out_names[i] = module->reflected.kernels[i].name.c_str();
    *inout_count = count;
    return ACCEL_SUCCESS;
  });
}

accel_status_t ModuleGetKernel(accel_bk_module_t handle, const char* name, accel_bk_kernel_t* out_kernel) noexcept {
  Module* module = Unwrap(handle);
  const Host& host = *module->device->host;
  return Guard(host, "module_get_kernel", [&] {
    for (const auto& k : module->reflected.kernels) {
      if (k.name != name) continue;
      auto kernel = std::make_unique<Kernel>();
      kernel->module = module;
      const Status s = MakeKernelState(module, k, &kernel->state);
      if (!s.ok()) return host.Fail(s.code, "kernel '" + k.name + "': " + s.message);
      *out_kernel = Wrap(kernel.release());
      return ACCEL_SUCCESS;
    }
    std::string names;
    for (const auto& k : module->reflected.kernels) names += (names.empty() ? "" : ", ") + k.name;
    return host.Fail(ACCEL_ERROR_NOT_FOUND, std::string("the module has no kernel '") + name +
                                                "' (its GLCompute entry points: " + names + ")");
  });
}

void KernelDestroy(accel_bk_kernel_t kernel) noexcept { std::unique_ptr<Kernel> owned(Unwrap(kernel)); }

accel_status_t KernelGetProperties(accel_bk_kernel_t handle, accel_kernel_properties_t* out) noexcept {
  Kernel* kernel = Unwrap(handle);
  const ReflectedKernel& k = kernel->state->info;
  const Device& device = *kernel->module->device;
  // Fills everything but `name` and `module` (the core's), as far as the core's struct reaches.
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, argument_count)) {
    out->argument_count = static_cast<uint32_t>(k.arguments.size());
  }
  const bool fixed = AllFixed(k);
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, max_work_group_size)) {
    out->max_work_group_size =
        fixed ? k.local_size[0] * k.local_size[1] * k.local_size[2] : device.capabilities.max_work_group_size;
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, required_work_group_size)) {
    for (int d = 0; d < 3; ++d) out->required_work_group_size[d] = fixed ? k.local_size[d] : 0;
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_properties_t, local_memory_size)) {
    out->local_memory_size = k.static_local_memory;
  }
  return ACCEL_SUCCESS;
}

accel_status_t KernelGetArgumentInfo(accel_bk_kernel_t handle, uint32_t index,
                                     accel_kernel_argument_info_t* out) noexcept {
  // The strings live in the kernel's state, as long as the kernel.
  const ReflectedArgument& a = Unwrap(handle)->state->info.arguments[index];
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, kind)) out->kind = a.kind;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, access)) out->access = a.access;
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, size)) {
    out->size = a.kind == ACCEL_KERNEL_ARG_KIND_SCALAR || a.kind == ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS ? a.size : 0;
  }
  if (ACCEL_BACKEND_HAS_FIELD(out, accel_kernel_argument_info_t, name)) out->name = a.name.c_str();
  return ACCEL_SUCCESS;
}

accel_status_t StreamLaunchKernel(accel_bk_stream_t stream_handle, accel_bk_kernel_t kernel_handle,
                                  const accel_bk_launch_t* launch) noexcept {
  Kernel* kernel = Unwrap(kernel_handle);
  Device* device = kernel->module->device;
  const Host& host = *device->host;
  return Guard(host, "stream_launch_kernel", [&] {
    // The core checked the argument count and kinds, scalar sizes, buffer ranges on this device within
    // max_buffer_range, and block and grid within the kernel's and device's limits.
    const ReflectedKernel& k = kernel->state->info;
    const VkPhysicalDeviceLimits& limits = device->facts.properties.limits;
    for (int d = 0; d < 3; ++d) {
      if (k.block_spec_id[d] == kNoSpecId && launch->block[d] != k.local_size[d]) {
        return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                         "'block' is " + std::to_string(launch->block[0]) + "x" + std::to_string(launch->block[1]) +
                             "x" + std::to_string(launch->block[2]) + ", but kernel '" + k.name + "' fixes dimension " +
                             std::to_string(d) + " of its work-group size at " + std::to_string(k.local_size[d]) +
                             " (local_size without _id)");
      }
    }
    if (launch->arg_count > 0 && launch->args[0].struct_size < sizeof(accel_bk_kernel_arg_t)) {
      return host.Fail(
          ACCEL_ERROR_INVALID_ARGUMENT,
          "kernel arguments of " + std::to_string(launch->args[0].struct_size) + " bytes are too small for ABI 1.0");
    }
    std::unique_ptr<PreparedLaunch> prepared = TakeSpareLaunch(Unwrap(stream_handle));
    prepared->kernel = kernel->state;
    std::memcpy(prepared->grid, launch->grid, sizeof(prepared->grid));
    prepared->scalars.assign(RoundUp4(k.scalar_block_size), 0);
    std::vector<uint32_t>& key = prepared->key;
    key.assign(launch->block, launch->block + 3);
    prepared->buffers.resize(k.storage_buffer_count);
    prepared->ranges.resize(k.storage_buffer_count);
    for (uint32_t i = 0; i < launch->arg_count && i < k.arguments.size(); ++i) {
      const accel_bk_kernel_arg_t& arg = *reinterpret_cast<const accel_bk_kernel_arg_t*>(
          reinterpret_cast<const char*>(launch->args) + static_cast<size_t>(i) * launch->args[0].struct_size);
      const ReflectedArgument& a = k.arguments[i];
      // Only on the error paths: the name is not formatted for launches that pass.
      const auto which = [&] { return "'args[" + std::to_string(i) + "]' ('" + a.name + "')"; };
      switch (a.kind) {
        case ACCEL_KERNEL_ARG_KIND_BUFFER: {
          if (arg.offset % limits.minStorageBufferOffsetAlignment != 0) {
            return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                             which() + " binds from byte " + std::to_string(arg.offset) +
                                 ", not a multiple of the device's minStorageBufferOffsetAlignment (" +
                                 std::to_string(limits.minStorageBufferOffsetAlignment) + " bytes)");
          }
          if (arg.size > limits.maxStorageBufferRange) {
            return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, which() + " binds " + Bytes(arg.size) +
                                                               ", past maxStorageBufferRange (" +
                                                               Bytes(limits.maxStorageBufferRange) + ")");
          }
          Buffer* buffer = Unwrap(arg.buffer);
          if (buffer->device != device) {
            return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, which() + " is a buffer of another device");
          }
          prepared->buffers[a.binding] = buffer->allocation;
          prepared->ranges[a.binding] = {buffer->allocation->buffer(), arg.offset, arg.size};
          break;
        }
        case ACCEL_KERNEL_ARG_KIND_SCALAR: {
          if (arg.size > a.size || arg.value == nullptr) {
            return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, which() + " is " + std::to_string(arg.size) +
                                                               " bytes; the kernel declares " + std::to_string(a.size));
          }
          std::memcpy(prepared->scalars.data() + a.offset, arg.value, arg.size);
          break;
        }
        case ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS: {
          const uint64_t address = arg.device_address;
          std::memcpy(prepared->scalars.data() + a.offset, &address, std::min<size_t>(a.size, sizeof(address)));
          break;
        }
        case ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY: {
          if (arg.size % 4 != 0) {
            return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT,
                             which() + " is " + std::to_string(arg.size) +
                                 " bytes of local memory, not a multiple of 4: the size passes as 32-bit words "
                                 "(specialization constant " +
                                 std::to_string(a.spec_id) + ", docs/kernels.md)");
          }
          key.push_back(static_cast<uint32_t>(arg.size / 4));
          break;
        }
        default: return host.Fail(ACCEL_ERROR_INVALID_ARGUMENT, which() + " has an unknown kind");
      }
    }
    const Status s = kernel->state->Pipeline(key, &prepared->pipeline);
    if (!s.ok()) return host.Fail(s.code, s.message);
    return EnqueueLaunch(Unwrap(stream_handle), std::move(prepared));
  });
}

}  // namespace accel::vulkan
