// The HIP backend's code-object reflection (backends/hip/module.cc, ParseCodeObject): the kernels and arguments of
// an AMDGPU code object's metadata note, built here as LLVM lays one out (an ELF64 file for EM_AMDGPU with an "AMDGPU"
// note of type NT_AMDGPU_METADATA holding msgpack). No runtime needed.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hip_backend.h"

namespace accel::hip {
namespace {

// --- A minimal msgpack writer ---
std::string Str(const std::string& s) { return std::string(1, static_cast<char>(0xa0 | s.size())) + s; }
std::string Uint(uint32_t v) {
  if (v < 128) return std::string(1, static_cast<char>(v));
  std::string out = "\xce";
  for (int i = 3; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}
std::string Map(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out(1, static_cast<char>(0x80 | entries.size()));
  for (const auto& [k, v] : entries) out += Str(k) + v;
  return out;
}
std::string Array(const std::vector<std::string>& items) {
  std::string out(1, static_cast<char>(0x90 | items.size()));
  for (const auto& i : items) out += i;
  return out;
}

// The metadata of two kernels: vadd(const float*, const float*, float*, uint n) with hidden arguments after them, and
// fill(uint*, uint value) with a dynamic LDS pointer.
std::string Metadata() {
  const auto buffer = [](const std::string& name, bool is_const) {
    std::vector<std::pair<std::string, std::string>> e = {
        {".name", Str(name)}, {".offset", Uint(0)}, {".size", Uint(8)}, {".value_kind", Str("global_buffer")}};
    if (is_const) e.emplace_back(".is_const", std::string("\xc3"));
    return Map(e);
  };
  const auto scalar = [](const std::string& name, uint32_t size) {
    return Map({{".name", Str(name)}, {".size", Uint(size)}, {".value_kind", Str("by_value")}});
  };
  const std::string vadd =
      Map({{".name", Str("vadd_f32")},
           {".max_flat_workgroup_size", Uint(1024)},
           {".group_segment_fixed_size", Uint(0)},
           {".args", Array({buffer("a", true), buffer("b", true), buffer("c", false), scalar("n", 4),
                            Map({{".size", Uint(8)}, {".value_kind", Str("hidden_block_count_x")}})})}});
  const std::string fill =
      Map({{".name", Str("fill_u32")},
           {".max_flat_workgroup_size", Uint(256)},
           {".group_segment_fixed_size", Uint(1024)},
           {".args", Array({buffer("out", false), scalar("value", 4),
                            Map({{".size", Uint(4)}, {".value_kind", Str("dynamic_shared_pointer")}})})}});
  return Map({{"amdhsa.version", Array({Uint(1), Uint(2)})}, {"amdhsa.kernels", Array({vadd, fill})}});
}

template <typename T>
void Put(std::string& s, size_t at, T v) {
  std::memcpy(s.data() + at, &v, sizeof(v));
}

// An ELF64 code object: the header, one note section with the metadata, and a section-header table of two entries
// (the null section and the note).
std::string CodeObject(const std::string& metadata, uint16_t machine = 224) {
  std::string note(12, '\0');
  Put<uint32_t>(note, 0, 7);  // "AMDGPU\0"
  Put<uint32_t>(note, 4, static_cast<uint32_t>(metadata.size()));
  Put<uint32_t>(note, 8, 32);  // NT_AMDGPU_METADATA
  note += std::string("AMDGPU\0", 7) + std::string(1, '\0');
  note += metadata;
  note.resize((note.size() + 3) / 4 * 4, '\0');
  std::string elf(64, '\0');
  elf.replace(0, 4,
              "\x7f"
              "ELF");
  elf[4] = 2;  // 64-bit
  elf[5] = 1;  // little-endian
  elf[6] = 1;
  Put<uint16_t>(elf, 16, 3);  // ET_DYN
  Put<uint16_t>(elf, 18, machine);
  const uint64_t note_offset = elf.size();
  elf += note;
  const uint64_t shoff = elf.size();
  Put<uint64_t>(elf, 40, shoff);
  Put<uint16_t>(elf, 58, 64);
  Put<uint16_t>(elf, 60, 2);
  std::string sections(128, '\0');
  Put<uint32_t>(sections, 64 + 4, 7);  // SHT_NOTE
  Put<uint64_t>(sections, 64 + 24, note_offset);
  Put<uint64_t>(sections, 64 + 32, note.size());
  return elf + sections;
}

TEST(HipCodeObject, ListsKernelsAndTheirExplicitArguments) {
  std::vector<CodeObjectKernel> kernels;
  std::string why;
  ASSERT_TRUE(ParseCodeObject(CodeObject(Metadata()), &kernels, &why)) << why;
  ASSERT_EQ(kernels.size(), 2u);
  const CodeObjectKernel& vadd = kernels[0];
  EXPECT_EQ(vadd.name, "vadd_f32");
  EXPECT_EQ(vadd.max_flat_workgroup_size, 1024u);
  ASSERT_EQ(vadd.arguments.size(), 4u);  // the hidden argument is the runtime's
  EXPECT_EQ(vadd.arguments[0].kind, ACCEL_KERNEL_ARG_KIND_BUFFER);
  EXPECT_EQ(vadd.arguments[0].access, ACCEL_ACCESS_READ);
  EXPECT_EQ(vadd.arguments[0].name, "a");
  EXPECT_EQ(vadd.arguments[2].access, ACCEL_ACCESS_READ_WRITE);
  EXPECT_EQ(vadd.arguments[3].kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
  EXPECT_EQ(vadd.arguments[3].size, 4u);
  const CodeObjectKernel& fill = kernels[1];
  EXPECT_EQ(fill.name, "fill_u32");
  EXPECT_EQ(fill.group_segment_fixed_size, 1024u);
  ASSERT_EQ(fill.arguments.size(), 3u);
  EXPECT_EQ(fill.arguments[2].kind, ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY);
}

TEST(HipCodeObject, RefusesWhatIsNotAnAmdgpuCodeObjectSayingWhy) {
  std::vector<CodeObjectKernel> kernels;
  std::string why;
  EXPECT_FALSE(
      ParseCodeObject(".version 8.0\n.target sm_90\n.entry k() { ret; }" + std::string(64, ' '), &kernels, &why));
  EXPECT_NE(why.find("not an ELF code object (hsaco)"), std::string::npos) << why;
  EXPECT_FALSE(ParseCodeObject("__CLANG_OFFLOAD_BUNDLE__" + std::string(64, '\0'), &kernels, &why));
  EXPECT_NE(why.find("clang offload bundle"), std::string::npos) << why;
  EXPECT_FALSE(ParseCodeObject(CodeObject(Metadata(), 62), &kernels, &why));  // x86-64
  EXPECT_NE(why.find("not AMDGPU (224)"), std::string::npos) << why;
  EXPECT_FALSE(ParseCodeObject(CodeObject(Map({{"amdhsa.version", Array({Uint(1)})}})), &kernels, &why));
  EXPECT_NE(why.find("no amdhsa.kernels"), std::string::npos) << why;
  std::string truncated = Metadata();
  truncated.resize(truncated.size() / 2);
  EXPECT_FALSE(ParseCodeObjectMetadata(truncated, &kernels, &why));
  EXPECT_NE(why.find("not a msgpack map"), std::string::npos) << why;
}

TEST(HipCodeObject, RefusesArgumentKindsAccelCannotBind) {
  const std::string metadata =
      Map({{"amdhsa.kernels",
            Array({Map({{".name", Str("k")},
                        {".args", Array({Map({{".size", Uint(8)}, {".value_kind", Str("image")}})})}})})}});
  std::vector<CodeObjectKernel> kernels;
  std::string why;
  EXPECT_FALSE(ParseCodeObjectMetadata(metadata, &kernels, &why));
  EXPECT_NE(why.find("kernel 'k' has an argument of kind 'image'"), std::string::npos) << why;
}

}  // namespace
}  // namespace accel::hip
