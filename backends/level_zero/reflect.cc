// SPIR-V kernel reflection (level_zero_backend.h, ReflectSpirv): the kernels of an OpenCL SPIR-V module and their
// parameters, read from the module's words (SPIR-V specification 1.6, "Physical Layout" and the instructions named
// below). Level Zero gives a kernel's argument count but not the arguments' kinds, which Accel's ABI declares.
#include <cstring>
#include <map>
#include <set>

#include "level_zero_backend.h"

namespace accel::level_zero {
namespace {

constexpr uint32_t kMagic = 0x07230203;
// Opcodes.
constexpr uint32_t kOpName = 5;
constexpr uint32_t kOpEntryPoint = 15;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kOpTypeInt = 21;
constexpr uint32_t kOpTypeFloat = 22;
constexpr uint32_t kOpTypeVector = 23;
constexpr uint32_t kOpTypePointer = 32;
constexpr uint32_t kOpFunction = 54;
constexpr uint32_t kOpFunctionParameter = 55;
constexpr uint32_t kOpFunctionEnd = 56;
constexpr uint32_t kOpDecorate = 71;
// Operands.
constexpr uint32_t kExecutionModelKernel = 6;
constexpr uint32_t kExecutionModeLocalSize = 17;
constexpr uint32_t kDecorationNonWritable = 24;
constexpr uint32_t kDecorationFuncParamAttr = 38;
constexpr uint32_t kFuncParamAttrNoWrite = 6;
constexpr uint32_t kStorageUniformConstant = 0;
constexpr uint32_t kStorageWorkgroup = 4;
constexpr uint32_t kStorageCrossWorkgroup = 5;
constexpr uint32_t kStorageGeneric = 8;

struct Type {
  uint32_t opcode = 0;
  uint32_t a = 0;  // int/float: width; vector: component type; pointer: storage class
  uint32_t b = 0;  // vector: count; pointer: pointee
};

// A literal string starting at word `at` of an instruction of `count` words.
std::string LiteralString(const uint32_t* words, size_t at, size_t count) {
  std::string text;
  for (size_t i = at; i < count; ++i) {
    char bytes[4];
    std::memcpy(bytes, &words[i], 4);
    for (char c : bytes) {
      if (c == '\0') return text;
      text += c;
    }
  }
  return text;
}

// The bytes of a scalar or vector type; 0 for anything else.
uint32_t SizeOf(const std::map<uint32_t, Type>& types, uint32_t id) {
  const auto found = types.find(id);
  if (found == types.end()) return 0;
  const Type& t = found->second;
  if (t.opcode == kOpTypeInt || t.opcode == kOpTypeFloat) return t.a / 8;
  if (t.opcode == kOpTypeVector) {
    const uint32_t component = SizeOf(types, t.a);
    const uint32_t count = t.b == 3 ? 4 : t.b;  // OpenCL: a 3-vector is laid out as a 4-vector
    return component * count;
  }
  return 0;
}

}  // namespace

bool ReflectSpirv(std::string_view module, std::vector<SpirvKernel>* out, std::string* why) {
  if (module.size() < 20 || module.size() % 4 != 0) {
    *why = "the module is not SPIR-V: " + std::to_string(module.size()) +
           " bytes, not a whole number of words of a "
           "5-word header at least";
    return false;
  }
  std::vector<uint32_t> words(module.size() / 4);
  std::memcpy(words.data(), module.data(), module.size());
  if (words[0] != kMagic) {
    *why =
        "the module is not SPIR-V (no magic number 0x07230203 at its start; an OpenCL C source or SPIR bitcode "
        "goes to the opencl backend)";
    return false;
  }
  struct EntryPoint {
    std::string name;
    uint32_t function = 0;
    uint32_t local_size[3] = {0, 0, 0};
  };
  std::vector<EntryPoint> entries;
  std::map<uint32_t, std::string> names;
  std::map<uint32_t, Type> types;
  std::set<uint32_t> no_write;
  std::map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> parameters;  // function -> (type, id)
  uint32_t current_function = 0;
  for (size_t at = 5; at < words.size();) {
    const uint32_t count = words[at] >> 16;
    const uint32_t opcode = words[at] & 0xffffu;
    if (count == 0 || at + count > words.size()) {
      *why = "the SPIR-V module has a truncated instruction at word " + std::to_string(at);
      return false;
    }
    const uint32_t* w = &words[at];
    switch (opcode) {
      case kOpName:
        if (count >= 3) names[w[1]] = LiteralString(w, 2, count);
        break;
      case kOpEntryPoint:
        if (count >= 4 && w[1] == kExecutionModelKernel) entries.push_back({LiteralString(w, 3, count), w[2], {}});
        break;
      case kOpExecutionMode:
        if (count >= 6 && w[2] == kExecutionModeLocalSize) {
          for (EntryPoint& e : entries) {
            if (e.function == w[1]) std::memcpy(e.local_size, &w[3], sizeof(e.local_size));
          }
        }
        break;
      case kOpTypeInt:
      case kOpTypeFloat:
        if (count >= 3) types[w[1]] = Type{opcode, w[2], 0};
        break;
      case kOpTypeVector:
      case kOpTypePointer:
        if (count >= 4) types[w[1]] = Type{opcode, w[2], w[3]};
        break;
      case kOpDecorate:
        if ((count >= 4 && w[2] == kDecorationFuncParamAttr && w[3] == kFuncParamAttrNoWrite) ||
            (count >= 3 && w[2] == kDecorationNonWritable)) {
          no_write.insert(w[1]);
        }
        break;
      case kOpFunction:
        if (count >= 3) current_function = w[2];
        break;
      case kOpFunctionParameter:
        if (count >= 3 && current_function != 0) parameters[current_function].emplace_back(w[1], w[2]);
        break;
      case kOpFunctionEnd: current_function = 0; break;
      default: break;
    }
    at += count;
  }
  if (entries.empty()) {
    *why =
        "the SPIR-V module has no kernel (no OpEntryPoint of the Kernel execution model): a Vulkan compute shader "
        "goes to the vulkan backend";
    return false;
  }
  for (const EntryPoint& e : entries) {
    SpirvKernel kernel;
    kernel.name = e.name;
    std::memcpy(kernel.required_size, e.local_size, sizeof(kernel.required_size));
    for (const auto& [type_id, id] : parameters[e.function]) {
      ArgumentDeclaration a;
      const auto named = names.find(id);
      a.name = named != names.end() && !named->second.empty() ? named->second
                                                              : "arg_" + std::to_string(kernel.arguments.size());
      const auto type = types.find(type_id);
      if (type != types.end() && type->second.opcode == kOpTypePointer) {
        const uint32_t storage = type->second.a;
        if (storage == kStorageWorkgroup) {
          a.kind = ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY;
          a.access = ACCEL_ACCESS_READ_WRITE;
        } else if (storage == kStorageCrossWorkgroup || storage == kStorageGeneric ||
                   storage == kStorageUniformConstant) {
          a.kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
          a.access = storage == kStorageUniformConstant || no_write.count(id) != 0 ? ACCEL_ACCESS_READ
                                                                                   : ACCEL_ACCESS_READ_WRITE;
        } else {
          *why = "kernel '" + e.name + "' has parameter " + a.name + " in storage class " + std::to_string(storage) +
                 " (a by-value struct?), which Accel cannot bind";
          return false;
        }
      } else {
        a.kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
        a.size = SizeOf(types, type_id);
        if (a.size == 0) {
          *why = "kernel '" + e.name + "' has parameter " + a.name +
                 " of a type that is neither a pointer nor an integer, float or vector of them";
          return false;
        }
      }
      kernel.arguments.push_back(std::move(a));
    }
    out->push_back(std::move(kernel));
  }
  return true;
}

}  // namespace accel::level_zero
