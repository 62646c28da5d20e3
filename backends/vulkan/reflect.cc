// SPIR-V reflection: what a module's GLCompute entry points declare, in the
// order docs/kernels.md gives a SPIR-V kernel's arguments: the storage buffers
// by binding (readonly / writeonly set the access), then the members of the
// push-constant (or uniform) block, then the LOCAL_MEMORY specialization
// constants by id. SPIRV-Cross's C API (Debian's libspirv-cross-c-shared)
// parses the module and finds what each entry point statically uses; a small
// scan of the words (facts from the SPIR-V specification, section 3) finds
// the workgroup variables, which that API does not list: their fixed sizes
// (static local memory) and the names of the arrays the LOCAL_MEMORY
// constants size. Pure: no Vulkan calls.
#include <spirv-tools/libspirv.h>
#include <spirv_cross/spirv_cross_c.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "symbols.h"

namespace accel::vulkan {
namespace {

// --- The word scan ------------------------------------------------------------------------------------------------

constexpr uint32_t kOpName = 5;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpTypeBool = 20;
constexpr uint32_t kOpTypeInt = 21;
constexpr uint32_t kOpTypeFloat = 22;
constexpr uint32_t kOpTypeVector = 23;
constexpr uint32_t kOpTypeMatrix = 24;
constexpr uint32_t kOpTypeArray = 28;
constexpr uint32_t kOpTypeStruct = 30;
constexpr uint32_t kOpTypePointer = 32;
constexpr uint32_t kOpConstant = 43;
constexpr uint32_t kOpSpecConstant = 50;
constexpr uint32_t kOpSpecConstantOp = 52;
constexpr uint32_t kOpVariable = 59;
constexpr uint32_t kStorageWorkgroup = 4;

struct Instruction {
  uint32_t opcode = 0;
  std::vector<uint32_t> operands;  // the words after the opcode word
};

// Workgroup variables: the bytes of those whose size is fixed, and for each specialization constant (by result id)
// the name of a workgroup array whose length it gives (directly, or through an OpSpecConstantOp).
struct WorkgroupScan {
  uint64_t static_bytes = 0;
  std::map<uint32_t, std::string> sized_by;
};

std::string LiteralString(const std::vector<uint32_t>& words, size_t first) {
  std::string out;
  for (size_t i = first; i < words.size(); ++i) {
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>((words[i] >> (8 * b)) & 0xFF);
      if (c == '\0') return out;
      out += c;
    }
  }
  return out;
}

class Scanner {
 public:
  Scanner(const uint32_t* words, size_t count) {
    for (size_t at = 5; at < count;) {
      const uint32_t length = words[at] >> 16;
      if (length == 0 || at + length > count) break;  // malformed: SPIRV-Cross reports it
      Instruction insn;
      insn.opcode = words[at] & 0xFFFF;
      insn.operands.assign(words + at + 1, words + at + length);
      if (insn.opcode == kOpEntryPoint && insn.operands.size() >= 3) {
        entry_points_.push_back(LiteralString(insn.operands, 2));
      } else if (insn.opcode == kOpName && !insn.operands.empty()) {
        names_[insn.operands[0]] = LiteralString(insn.operands, 1);
      } else if (insn.opcode == kOpVariable && insn.operands.size() >= 3) {
        if (insn.operands[2] == kStorageWorkgroup) variables_.push_back({insn.operands[0], insn.operands[1]});
      } else if (insn.opcode >= kOpTypeBool && insn.opcode <= kOpTypePointer && !insn.operands.empty()) {
        by_id_[insn.operands[0]] = insn;
      } else if ((insn.opcode == kOpConstant || insn.opcode == kOpSpecConstant || insn.opcode == kOpSpecConstantOp) &&
                 insn.operands.size() >= 2) {
        by_id_[insn.operands[1]] = insn;
      }
      at += length;
    }
  }

  // The OpEntryPoint names in the module's order.
  const std::vector<std::string>& entry_points() const { return entry_points_; }

  WorkgroupScan Scan() const {
    WorkgroupScan out;
    for (const auto& [pointer_type, id] : variables_) {
      const Instruction* pointer = Find(pointer_type);
      if (pointer == nullptr || pointer->opcode != kOpTypePointer || pointer->operands.size() < 3) continue;
      const uint32_t pointee = pointer->operands[2];
      const std::optional<uint64_t> size = Size(pointee, 0);
      if (size) {
        out.static_bytes += *size;
        continue;
      }
      // A spec-sized array: remember which specialization constant sizes it.
      const Instruction* array = Find(pointee);
      if (array != nullptr && array->opcode == kOpTypeArray && array->operands.size() >= 3) {
        const uint32_t spec = SpecConstantBehind(array->operands[2], 0);
        if (spec != 0) {
          auto name = names_.find(id);
          if (name != names_.end() && !out.sized_by.contains(spec)) out.sized_by[spec] = name->second;
        }
      }
    }
    return out;
  }

 private:
  const Instruction* Find(uint32_t id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : &it->second;
  }

  // Bytes of a type of fixed size (natural layout, no padding); nullopt when a specialization constant sizes it.
  std::optional<uint64_t> Size(uint32_t type, int depth) const {
    const Instruction* t = Find(type);
    if (t == nullptr || depth > 16) return std::nullopt;
    const auto& o = t->operands;
    switch (t->opcode) {
      case kOpTypeBool: return 4;
      case kOpTypeInt:
      case kOpTypeFloat: return o.size() >= 2 ? std::optional<uint64_t>(o[1] / 8) : std::nullopt;
      case kOpTypeVector:
      case kOpTypeMatrix: {
        if (o.size() < 3) return std::nullopt;
        const auto element = Size(o[1], depth + 1);
        return element ? std::optional<uint64_t>(*element * o[2]) : std::nullopt;
      }
      case kOpTypeArray: {
        if (o.size() < 3) return std::nullopt;
        const Instruction* length = Find(o[2]);
        if (length == nullptr || length->opcode != kOpConstant || length->operands.size() < 3) return std::nullopt;
        const auto element = Size(o[1], depth + 1);
        return element ? std::optional<uint64_t>(*element * length->operands[2]) : std::nullopt;
      }
      case kOpTypeStruct: {
        uint64_t total = 0;
        for (size_t i = 1; i < o.size(); ++i) {
          const auto member = Size(o[i], depth + 1);
          if (!member) return std::nullopt;
          total += *member;
        }
        return total;
      }
      default: return std::nullopt;
    }
  }

  // The OpSpecConstant result id a length comes from (itself, or an operand of an OpSpecConstantOp); 0 none.
  uint32_t SpecConstantBehind(uint32_t id, int depth) const {
    const Instruction* c = Find(id);
    if (c == nullptr || depth > 8) return 0;
    if (c->opcode == kOpSpecConstant) return id;
    if (c->opcode == kOpSpecConstantOp) {
      for (size_t i = 3; i < c->operands.size(); ++i) {
        const uint32_t found = SpecConstantBehind(c->operands[i], depth + 1);
        if (found != 0) return found;
      }
    }
    return 0;
  }

  std::map<uint32_t, Instruction> by_id_;
  std::map<uint32_t, std::string> names_;
  std::vector<std::pair<uint32_t, uint32_t>> variables_;  // (pointer type, result id) of Workgroup variables
  std::vector<std::string> entry_points_;
};

// --- SPIRV-Cross ----------------------------------------------------------------------------------------------

// The context and its error text; destroyed with everything SPIRV-Cross allocated for it.
class CrossContext {
 public:
  CrossContext() {
    if (spvc_context_create(&context_) != SPVC_SUCCESS) context_ = nullptr;
    if (context_ != nullptr) spvc_context_set_error_callback(context_, &CrossContext::OnError, this);
  }
  ~CrossContext() {
    if (context_ != nullptr) spvc_context_destroy(context_);
  }
  CrossContext(const CrossContext&) = delete;
  CrossContext& operator=(const CrossContext&) = delete;
  spvc_context get() const { return context_; }
  std::string error() const { return error_.empty() ? std::string("SPIRV-Cross failed") : error_; }

 private:
  static void OnError(void* user_data, const char* error) {
    static_cast<CrossContext*>(user_data)->error_ = error != nullptr ? error : "";
  }
  spvc_context context_ = nullptr;
  std::string error_;
};

const char* ResourceWhat(spvc_resource_type type) {
  switch (type) {
    case SPVC_RESOURCE_TYPE_SUBPASS_INPUT: return "a subpass input";
    case SPVC_RESOURCE_TYPE_STORAGE_IMAGE: return "a storage image";
    case SPVC_RESOURCE_TYPE_SAMPLED_IMAGE: return "a sampled image";
    case SPVC_RESOURCE_TYPE_ATOMIC_COUNTER: return "an atomic counter";
    case SPVC_RESOURCE_TYPE_SEPARATE_IMAGE: return "an image";
    case SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS: return "a sampler";
    case SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE: return "an acceleration structure";
    case SPVC_RESOURCE_TYPE_SHADER_RECORD_BUFFER: return "a shader record buffer";
    default: return "a resource";
  }
}

bool Resources(spvc_resources resources, spvc_resource_type type, std::vector<spvc_reflected_resource>* out) {
  const spvc_reflected_resource* list = nullptr;
  size_t count = 0;
  if (spvc_resources_get_resource_list_for_type(resources, type, &list, &count) != SPVC_SUCCESS) return false;
  out->assign(list, list + count);
  return true;
}

// A resource's variable name ("out_"), else its block's ("OutBuffer").
std::string VariableName(spvc_compiler compiler, const spvc_reflected_resource& r) {
  const char* name = spvc_compiler_get_name(compiler, r.id);
  return name != nullptr && name[0] != '\0' ? std::string(name) : std::string(r.name != nullptr ? r.name : "");
}

bool HasBlockDecoration(spvc_compiler compiler, spvc_variable_id id, SpvDecoration decoration) {
  const SpvDecoration* decorations = nullptr;
  size_t count = 0;
  if (spvc_compiler_get_buffer_block_decorations(compiler, id, &decorations, &count) != SPVC_SUCCESS) return false;
  for (size_t i = 0; i < count; ++i) {
    if (decorations[i] == decoration) return true;
  }
  return spvc_compiler_has_decoration(compiler, id, decoration) != 0;
}

// One entry point, selected on `compiler`.
bool ReflectKernel(spvc_compiler compiler, const WorkgroupScan& scan, ReflectedKernel* k, std::string* error) {
  const std::string where = "kernel '" + k->name + "': ";
  // The work-group size: LocalSize literals, overridden per component by the WorkgroupSize built-in's
  // specialization constants (local_size_x_id...) or by LocalSizeId.
  for (unsigned d = 0; d < 3; ++d) {
    const unsigned v = spvc_compiler_get_execution_mode_argument_by_index(compiler, SpvExecutionModeLocalSize, d);
    k->local_size[d] = v != 0 ? v : 1;
  }
  const SpvExecutionMode* modes = nullptr;
  size_t mode_count = 0;
  if (spvc_compiler_get_execution_modes(compiler, &modes, &mode_count) == SPVC_SUCCESS) {
    for (size_t m = 0; m < mode_count; ++m) {
      if (modes[m] != SpvExecutionModeLocalSizeId) continue;
      for (unsigned d = 0; d < 3; ++d) {
        const unsigned id =
            spvc_compiler_get_execution_mode_argument_by_index(compiler, SpvExecutionModeLocalSizeId, d);
        if (id == 0) continue;
        if (spvc_compiler_has_decoration(compiler, id, SpvDecorationSpecId) != 0) {
          k->block_spec_id[d] = spvc_compiler_get_decoration(compiler, id, SpvDecorationSpecId);
        } else if (spvc_constant c = spvc_compiler_get_constant_handle(compiler, id); c != nullptr) {
          k->local_size[d] = spvc_constant_get_scalar_u32(c, 0, 0);
        }
      }
    }
  }
  spvc_specialization_constant wg[3] = {};
  if (spvc_compiler_get_work_group_size_specialization_constants(compiler, &wg[0], &wg[1], &wg[2]) != 0) {
    for (int d = 0; d < 3; ++d) {
      if (wg[d].id != 0) k->block_spec_id[d] = wg[d].constant_id;
    }
  }

  spvc_set active = nullptr;
  spvc_resources resources = nullptr;
  if (spvc_compiler_get_active_interface_variables(compiler, &active) != SPVC_SUCCESS ||
      spvc_compiler_create_shader_resources_for_active_variables(compiler, &resources, active) != SPVC_SUCCESS) {
    *error = where + "cannot list its resources";
    return false;
  }
  for (spvc_resource_type type :
       {SPVC_RESOURCE_TYPE_SUBPASS_INPUT, SPVC_RESOURCE_TYPE_STORAGE_IMAGE, SPVC_RESOURCE_TYPE_SAMPLED_IMAGE,
        SPVC_RESOURCE_TYPE_ATOMIC_COUNTER, SPVC_RESOURCE_TYPE_SEPARATE_IMAGE, SPVC_RESOURCE_TYPE_SEPARATE_SAMPLERS,
        SPVC_RESOURCE_TYPE_ACCELERATION_STRUCTURE, SPVC_RESOURCE_TYPE_SHADER_RECORD_BUFFER}) {
    std::vector<spvc_reflected_resource> list;
    if (Resources(resources, type, &list) && !list.empty()) {
      *error = where + "uses " + ResourceWhat(type) + " ('" + list[0].name +
               "'); Accel binds storage buffers, push constants and one uniform buffer only (docs/kernels.md)";
      return false;
    }
  }

  // Storage buffers: set 0, bindings 0 .. n-1.
  std::vector<spvc_reflected_resource> storage;
  Resources(resources, SPVC_RESOURCE_TYPE_STORAGE_BUFFER, &storage);
  std::map<uint32_t, ReflectedArgument> by_binding;
  for (const auto& r : storage) {
    const unsigned set = spvc_compiler_get_decoration(compiler, r.id, SpvDecorationDescriptorSet);
    const unsigned binding = spvc_compiler_get_decoration(compiler, r.id, SpvDecorationBinding);
    if (set != 0) {
      *error = where + "storage buffer '" + r.name + "' is in descriptor set " + std::to_string(set) +
               "; Accel binds set 0 only";
      return false;
    }
    spvc_type type = spvc_compiler_get_type_handle(compiler, r.type_id);
    if (spvc_type_get_num_array_dimensions(type) != 0) {
      *error = where + "storage buffer '" + r.name + "' is an array of buffers; declare one buffer per binding";
      return false;
    }
    if (by_binding.contains(binding)) {
      *error = where + "storage buffers '" + by_binding[binding].name + "' and '" + r.name + "' share binding " +
               std::to_string(binding);
      return false;
    }
    ReflectedArgument a;
    a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
    const bool no_write = HasBlockDecoration(compiler, r.id, SpvDecorationNonWritable);
    const bool no_read = HasBlockDecoration(compiler, r.id, SpvDecorationNonReadable);
    a.access = no_write ? ACCEL_ACCESS_READ : (no_read ? ACCEL_ACCESS_WRITE : ACCEL_ACCESS_READ_WRITE);
    a.binding = binding;
    a.name = VariableName(compiler, r);
    by_binding[binding] = a;
  }
  uint32_t expected = 0;
  for (const auto& [binding, a] : by_binding) {
    if (binding != expected) {
      *error = where + "storage buffer '" + a.name + "' is at binding " + std::to_string(binding) + ", but binding " +
               std::to_string(expected) +
               " is unused; BUFFER arguments take bindings 0, 1, ... in order (docs/kernels.md)";
      return false;
    }
    k->arguments.push_back(a);
    ++expected;
  }
  k->storage_buffer_count = expected;

  // Scalars: one push-constant block, or one uniform block at binding n (past maxPushConstantsSize).
  std::vector<spvc_reflected_resource> push;
  std::vector<spvc_reflected_resource> uniform;
  Resources(resources, SPVC_RESOURCE_TYPE_PUSH_CONSTANT, &push);
  Resources(resources, SPVC_RESOURCE_TYPE_UNIFORM_BUFFER, &uniform);
  if (push.size() > 1) {
    *error = where + "declares " + std::to_string(push.size()) + " push-constant blocks";
    return false;
  }
  if (!uniform.empty()) {
    const auto& u = uniform[0];
    const unsigned set = spvc_compiler_get_decoration(compiler, u.id, SpvDecorationDescriptorSet);
    const unsigned binding = spvc_compiler_get_decoration(compiler, u.id, SpvDecorationBinding);
    if (uniform.size() > 1 || !push.empty() || set != 0 || binding != k->storage_buffer_count) {
      *error = where + "uniform block '" + u.name + "' (set " + std::to_string(set) + ", binding " +
               std::to_string(binding) +
               ") is not the scalars' block: scalars go in push constants or, instead, in "
               "one uniform block at set 0, binding " +
               std::to_string(k->storage_buffer_count) + " (after the storage buffers, docs/kernels.md)";
      return false;
    }
  }
  const spvc_reflected_resource* block = !push.empty() ? &push[0] : (!uniform.empty() ? &uniform[0] : nullptr);
  if (block != nullptr) {
    k->scalar_block = !push.empty() ? ScalarBlock::kPushConstants : ScalarBlock::kUniformBuffer;
    k->uniform_binding = k->storage_buffer_count;
    spvc_type type = spvc_compiler_get_type_handle(compiler, block->base_type_id);
    // SPIRV-Cross sizes structs only (a push-constant scalar crashed it; found by the spirv fuzzer).
    if (type == nullptr || spvc_type_get_basetype(type) != SPVC_BASETYPE_STRUCT) {
      *error = where + "the scalars' block '" + block->name + "' is not a struct";
      return false;
    }
    size_t block_size = 0;
    if (spvc_compiler_get_declared_struct_size(compiler, type, &block_size) != SPVC_SUCCESS) {
      *error = where + "cannot size the scalars' block '" + block->name + "'";
      return false;
    }
    k->scalar_block_size = static_cast<uint32_t>(block_size);
    const unsigned members = spvc_type_get_num_member_types(type);
    for (unsigned i = 0; i < members; ++i) {
      ReflectedArgument a;
      unsigned offset = 0;
      size_t size = 0;
      if (spvc_compiler_type_struct_member_offset(compiler, type, i, &offset) != SPVC_SUCCESS ||
          spvc_compiler_get_declared_struct_member_size(compiler, type, i, &size) != SPVC_SUCCESS) {
        *error = where + "cannot lay out member " + std::to_string(i) + " of '" + block->name + "'";
        return false;
      }
      spvc_type member = spvc_compiler_get_type_handle(compiler, spvc_type_get_member_type(type, i));
      // A buffer_reference (a PhysicalStorageBuffer pointer) is a device address; anything else a scalar.
      a.kind = spvc_type_get_storage_class(member) == SpvStorageClassPhysicalStorageBuffer
                   ? ACCEL_KERNEL_ARG_KIND_DEVICE_ADDRESS
                   : ACCEL_KERNEL_ARG_KIND_SCALAR;
      a.access = ACCEL_ACCESS_READ;
      a.offset = offset;
      a.size = static_cast<uint32_t>(size);
      const char* name = spvc_compiler_get_member_name(compiler, block->base_type_id, i);
      a.name = name != nullptr ? name : "";
      k->arguments.push_back(a);
    }
  }

  // LOCAL_MEMORY: the specialization constants 3, 4, ... that are not the work-group size, each a 32-bit integer.
  const spvc_specialization_constant* constants = nullptr;
  size_t constant_count = 0;
  spvc_compiler_get_specialization_constants(compiler, &constants, &constant_count);
  std::map<uint32_t, spvc_specialization_constant> locals;
  for (size_t i = 0; i < constant_count; ++i) {
    const uint32_t id = constants[i].constant_id;
    if (id < 3 || id == k->block_spec_id[0] || id == k->block_spec_id[1] || id == k->block_spec_id[2]) continue;
    locals[id] = constants[i];
  }
  uint32_t next = 3;
  for (const auto& [id, c] : locals) {
    const char* constant_name = spvc_compiler_get_name(compiler, c.id);
    const std::string label =
        "specialization constant " + std::to_string(id) +
        (constant_name != nullptr && constant_name[0] != '\0' ? std::string(" ('") + constant_name + "')"
                                                              : std::string());
    if (id != next) {
      *error = where + label + " follows " + std::to_string(next - 1) +
               ": LOCAL_MEMORY sizes are specialization constants 3, 4, ... without gaps (docs/kernels.md)";
      return false;
    }
    spvc_constant handle = spvc_compiler_get_constant_handle(compiler, c.id);
    spvc_type type =
        handle != nullptr ? spvc_compiler_get_type_handle(compiler, spvc_constant_get_type(handle)) : nullptr;
    const spvc_basetype base = type != nullptr ? spvc_type_get_basetype(type) : SPVC_BASETYPE_UNKNOWN;
    if (base != SPVC_BASETYPE_UINT32 && base != SPVC_BASETYPE_INT32) {
      *error = where + label + " is not a 32-bit integer: a LOCAL_MEMORY size is a count of 32-bit words";
      return false;
    }
    ReflectedArgument a;
    a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
    a.access = ACCEL_ACCESS_READ;
    a.spec_id = id;
    auto sized = scan.sized_by.find(c.id);
    a.name = sized != scan.sized_by.end() ? sized->second : (constant_name != nullptr ? constant_name : "");
    k->arguments.push_back(a);
    ++next;
  }
  k->static_local_memory = scan.static_bytes;
  return true;
}

// "" when the module is valid SPIR-V for Vulkan (the oldest Vulkan whose SPIR-V is the module's version: Vulkan's
// rules, such as explicit layouts of push-constant blocks, are what SPIRV-Cross relies on); else the validator's
// message.
std::string Validate(const uint32_t* words, size_t word_count) {
  const uint32_t version = words[1];  // 0x00MMmm00
  const uint32_t minor = version >> 16 == 1 ? (version >> 8) & 0xFF : 0xFF;
  const spv_target_env env = minor == 0   ? SPV_ENV_VULKAN_1_0
                             : minor <= 3 ? SPV_ENV_VULKAN_1_1
                             : minor == 4 ? SPV_ENV_VULKAN_1_1_SPIRV_1_4
                             : minor == 5 ? SPV_ENV_VULKAN_1_2
                                          : SPV_ENV_VULKAN_1_3;
  const spv_context context = spvContextCreate(env);
  if (context == nullptr) return "cannot create a SPIRV-Tools context";
  spv_diagnostic diagnostic = nullptr;
  const spv_result_t result = spvValidateBinary(context, words, word_count, &diagnostic);
  std::string message;
  if (result != SPV_SUCCESS) {
    message = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "rejected by the validator";
    if (diagnostic != nullptr && !diagnostic->isTextSource) {
      message += " (word " + std::to_string(diagnostic->position.index) + ")";
    }
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return message;
}

}  // namespace

bool ReflectSpirv(const uint32_t* words, size_t word_count, ReflectedModule* out, std::string* error) {
  if (word_count < 5 || words[0] != SpvMagicNumber) {
    *error = word_count < 5 ? "too short for a SPIR-V module (" + std::to_string(word_count * 4) + " bytes)"
                            : "not a SPIR-V module: the first word is not the SPIR-V magic number 0x07230203";
    return false;
  }
  // SPIRV-Cross trusts its input (a malformed module crashed it; found by the spirv fuzzer,
  // tests/fuzz/corpus/spirv/regression_*): SPIRV-Tools' validator checks the module first, as spirv-val does.
  if (std::string invalid = Validate(words, word_count); !invalid.empty()) {
    *error = "not a valid SPIR-V module: " + invalid;
    return false;
  }
  CrossContext context;
  if (context.get() == nullptr) {
    *error = "cannot create a SPIRV-Cross context";
    return false;
  }
  spvc_parsed_ir ir = nullptr;
  if (spvc_context_parse_spirv(context.get(), words, word_count, &ir) != SPVC_SUCCESS) {
    *error = "not a valid SPIR-V module: " + context.error();
    return false;
  }
  spvc_compiler compiler = nullptr;
  if (spvc_context_create_compiler(context.get(), SPVC_BACKEND_NONE, ir, SPVC_CAPTURE_MODE_TAKE_OWNERSHIP, &compiler) !=
      SPVC_SUCCESS) {
    *error = "not a valid SPIR-V module: " + context.error();
    return false;
  }
  const spvc_entry_point* entries = nullptr;
  size_t entry_count = 0;
  if (spvc_compiler_get_entry_points(compiler, &entries, &entry_count) != SPVC_SUCCESS) {
    *error = "cannot list the module's entry points: " + context.error();
    return false;
  }
  const Scanner scanner(words, word_count);
  const WorkgroupScan scan = scanner.Scan();
  ReflectedModule module;
  std::set<std::string> seen;
  for (size_t e = 0; e < entry_count; ++e) {
    if (entries[e].execution_model != SpvExecutionModelGLCompute) continue;
    ReflectedKernel k;
    k.name = entries[e].name;
    if (!seen.insert(k.name).second) continue;
    if (spvc_compiler_set_entry_point(compiler, entries[e].name, SpvExecutionModelGLCompute) != SPVC_SUCCESS) {
      *error = "kernel '" + k.name + "': " + context.error();
      return false;
    }
    if (!ReflectKernel(compiler, scan, &k, error)) return false;
    module.kernels.push_back(std::move(k));
  }
  // Kernels in OpEntryPoint order (SPIRV-Cross lists them in no particular order).
  const std::vector<std::string>& order = scanner.entry_points();
  auto rank = [&order](const ReflectedKernel& k) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), k.name) - order.begin());
  };
  std::stable_sort(module.kernels.begin(), module.kernels.end(),
                   [&rank](const ReflectedKernel& a, const ReflectedKernel& b) { return rank(a) < rank(b); });
  if (module.kernels.empty()) {
    *error = "the SPIR-V module has no GLCompute entry point (" + std::to_string(entry_count) +
             " entry points of other stages)";
    return false;
  }
  *out = std::move(module);
  return true;
}

}  // namespace accel::vulkan
