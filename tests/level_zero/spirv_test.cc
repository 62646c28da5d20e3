// The Level Zero backend's SPIR-V kernel reflection (backends/level_zero/reflect.cc, ReflectSpirv) on modules built
// word by word here: kernels, parameter kinds, access, sizes and names, the required work-group size, and the
// refusals with their reasons. No loader needed.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "level_zero_backend.h"

namespace accel::level_zero {
namespace {

// A SPIR-V module under construction: the header, then instructions.
class Words {
 public:
  Words() : words_{0x07230203, 0x00010200, 0, 100, 0} {}
  // An instruction with its operands, and a literal string among them when `text` is set (after the operands).
  Words& Op(uint32_t opcode, std::vector<uint32_t> operands, const char* text = nullptr,
            std::vector<uint32_t> after = {}) {
    std::vector<uint32_t> string_words;
    if (text != nullptr) {
      const size_t length = std::strlen(text) + 1;  // with its NUL
      string_words.resize((length + 3) / 4, 0);
      std::memcpy(string_words.data(), text, length);
    }
    const auto count = static_cast<uint32_t>(1 + operands.size() + string_words.size() + after.size());
    words_.push_back((count << 16) | opcode);
    words_.insert(words_.end(), operands.begin(), operands.end());
    words_.insert(words_.end(), string_words.begin(), string_words.end());
    words_.insert(words_.end(), after.begin(), after.end());
    return *this;
  }
  std::string Bytes() const { return std::string(reinterpret_cast<const char*>(words_.data()), words_.size() * 4); }

 private:
  std::vector<uint32_t> words_;
};

// Ids.
enum : uint32_t {
  kInt = 1,
  kFloat,
  kVec3,
  kGlobal,
  kLocal,
  kConstant,
  kVoid,
  kFnType,
  kFn,
  kP0,
  kP1,
  kP2,
  kP3,
  kP4,
  kP5
};

// kernel scale(const __global uint* src [NoWrite], __global uint* dst, uint n, __local uint* scratch, float3 v,
// __constant uint* table), reqd_work_group_size(64, 1, 1).
Words Scale() {
  Words w;
  w.Op(15, {6, kFn}, "scale")       // OpEntryPoint Kernel
      .Op(16, {kFn, 17, 64, 1, 1})  // OpExecutionMode LocalSize
      .Op(5, {kP0}, "src")          // OpName
      .Op(5, {kP1}, "dst")
      .Op(5, {kP2}, "n")
      .Op(71, {kP0, 38, 6})              // OpDecorate FuncParamAttr NoWrite
      .Op(21, {kInt, 32, 0})             // OpTypeInt
      .Op(22, {kFloat, 32})              // OpTypeFloat
      .Op(23, {kVec3, kFloat, 3})        // OpTypeVector
      .Op(32, {kGlobal, 5, kInt})        // OpTypePointer CrossWorkgroup
      .Op(32, {kLocal, 4, kInt})         // OpTypePointer Workgroup
      .Op(32, {kConstant, 0, kInt})      // OpTypePointer UniformConstant
      .Op(54, {kVoid, kFn, 0, kFnType})  // OpFunction
      .Op(55, {kGlobal, kP0})            // OpFunctionParameter
      .Op(55, {kGlobal, kP1})
      .Op(55, {kInt, kP2})
      .Op(55, {kLocal, kP3})
      .Op(55, {kVec3, kP4})
      .Op(55, {kConstant, kP5})
      .Op(56, {});  // OpFunctionEnd
  return w;
}

TEST(LevelZeroSpirv, ReflectsKernelParameters) {
  std::vector<SpirvKernel> kernels;
  std::string why;
  ASSERT_TRUE(ReflectSpirv(Scale().Bytes(), &kernels, &why)) << why;
  ASSERT_EQ(kernels.size(), 1u);
  const SpirvKernel& k = kernels[0];
  EXPECT_EQ(k.name, "scale");
  EXPECT_EQ(k.required_size[0], 64u);
  EXPECT_EQ(k.required_size[1], 1u);
  ASSERT_EQ(k.arguments.size(), 6u);
  EXPECT_EQ(k.arguments[0].kind, ACCEL_KERNEL_ARG_KIND_BUFFER);
  EXPECT_EQ(k.arguments[0].access, ACCEL_ACCESS_READ) << "NoWrite";
  EXPECT_EQ(k.arguments[0].name, "src");
  EXPECT_EQ(k.arguments[1].kind, ACCEL_KERNEL_ARG_KIND_BUFFER);
  EXPECT_EQ(k.arguments[1].access, ACCEL_ACCESS_READ_WRITE);
  EXPECT_EQ(k.arguments[2].kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
  EXPECT_EQ(k.arguments[2].size, 4u);
  EXPECT_EQ(k.arguments[2].name, "n");
  EXPECT_EQ(k.arguments[3].kind, ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY);
  EXPECT_EQ(k.arguments[3].name, "arg_3") << "no OpName";
  EXPECT_EQ(k.arguments[4].kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
  EXPECT_EQ(k.arguments[4].size, 16u) << "a 3-vector is laid out as a 4-vector";
  EXPECT_EQ(k.arguments[5].kind, ACCEL_KERNEL_ARG_KIND_BUFFER);
  EXPECT_EQ(k.arguments[5].access, ACCEL_ACCESS_READ) << "__constant";
}

TEST(LevelZeroSpirv, RefusesWhatIsNotSpirv) {
  std::vector<SpirvKernel> kernels;
  std::string why;
  EXPECT_FALSE(ReflectSpirv("__kernel void k() {}", &kernels, &why));
  EXPECT_NE(why.find("not SPIR-V"), std::string::npos) << why;
  std::string bytes = Scale().Bytes();
  bytes[0] = 0;
  EXPECT_FALSE(ReflectSpirv(bytes, &kernels, &why));
  EXPECT_NE(why.find("magic number"), std::string::npos) << why;
  EXPECT_TRUE(kernels.empty());
}

TEST(LevelZeroSpirv, RefusesATruncatedInstruction) {
  std::string bytes = Scale().Bytes();
  bytes.resize(bytes.size() - 8);  // the last instructions lose words; OpFunctionParameter claims 3
  std::vector<SpirvKernel> kernels;
  std::string why;
  EXPECT_FALSE(ReflectSpirv(bytes, &kernels, &why));
  EXPECT_NE(why.find("truncated instruction"), std::string::npos) << why;
}

TEST(LevelZeroSpirv, RefusesAModuleWithoutKernel) {
  Words w;
  w.Op(15, {5 /* GLCompute */, kFn}, "main").Op(54, {kVoid, kFn, 0, kFnType}).Op(56, {});
  std::vector<SpirvKernel> kernels;
  std::string why;
  EXPECT_FALSE(ReflectSpirv(w.Bytes(), &kernels, &why));
  EXPECT_NE(why.find("no kernel"), std::string::npos) << why;
  EXPECT_NE(why.find("vulkan backend"), std::string::npos) << why;
}

TEST(LevelZeroSpirv, RefusesAParameterItCannotBind) {
  Words w;
  w.Op(15, {6, kFn}, "byval")
      .Op(21, {kInt, 32, 0})
      .Op(32, {kGlobal, 7 /* Function */, kInt})
      .Op(54, {kVoid, kFn, 0, kFnType})
      .Op(55, {kGlobal, kP0})
      .Op(56, {});
  std::vector<SpirvKernel> kernels;
  std::string why;
  EXPECT_FALSE(ReflectSpirv(w.Bytes(), &kernels, &why));
  EXPECT_NE(why.find("kernel 'byval'"), std::string::npos) << why;
  EXPECT_NE(why.find("storage class 7"), std::string::npos) << why;
}

}  // namespace
}  // namespace accel::level_zero
