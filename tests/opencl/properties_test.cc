// The OpenCL backend's pure functions (backends/opencl/device.cc, module.cc):
// device properties to Accel's descriptor, on PoCL-like and GPU-like
// properties that need no OpenCL runtime, and kernel argument reflection.
#include <gtest/gtest.h>

#include <string>

#include "opencl_backend.h"

namespace accel::opencl {
namespace {

// What PoCL 3.1's pthread device on this project's CI machines reports.
ClDeviceProperties PoclCpu() {
  ClDeviceProperties p;
  p.platform_name = "Portable Computing Language";
  p.platform_version = "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, RELOC, SPIR, LLVM 15.0.6, SLEEF, DISTRO";
  p.name = "pthread-skylake-avx512-AMD EPYC";
  p.vendor = "AuthenticAMD";
  p.driver_version = "3.1+debian";
  p.device_version = "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512";
  p.opencl_c_version = "OpenCL C 1.2 PoCL";
  p.profile = "FULL_PROFILE";
  p.extensions =
      "cl_khr_byte_addressable_store cl_khr_global_int32_base_atomics cl_khr_global_int32_extended_atomics "
      "cl_khr_local_int32_base_atomics cl_khr_local_int32_extended_atomics cl_khr_3d_image_writes "
      "cl_khr_command_buffer cl_khr_spir cl_khr_int64_base_atomics cl_khr_int64_extended_atomics cl_khr_fp64";
  p.spir_versions = "";  // PoCL lists cl_khr_spir but no SPIR version
  p.type = CL_DEVICE_TYPE_CPU;
  p.vendor_id = 0x8086;
  p.global_mem_size = 4801812480;
  p.max_mem_alloc_size = 2147483648;
  p.local_mem_size = 1048576;
  p.compute_units = 2;
  p.clock_mhz = 2596;
  p.address_bits = 64;
  p.mem_base_addr_align_bits = 1024;
  p.max_work_group_size = 4096;
  p.max_work_item_dimensions = 3;
  p.max_work_item_sizes[0] = p.max_work_item_sizes[1] = p.max_work_item_sizes[2] = 4096;
  p.max_parameter_size = 1024;
  p.double_fp_config = 0x3F;
  return p;
}

// A discrete GPU with a PCI address and a UUID (NVIDIA's attribute queries).
ClDeviceProperties PcieGpu() {
  ClDeviceProperties p = PoclCpu();
  p.name = "NVIDIA A100-SXM4-80GB";
  p.vendor = "NVIDIA Corporation";
  p.device_version = "OpenCL 3.0 CUDA";
  p.extensions = "cl_khr_fp64 cl_khr_fp16 cl_khr_device_uuid cl_khr_pci_bus_info cl_nv_device_attribute_query";
  p.type = CL_DEVICE_TYPE_GPU;
  p.vendor_id = 0x10de;
  p.max_work_group_size = 1024;
  p.max_work_item_sizes[0] = 1024;
  p.max_work_item_sizes[1] = 1024;
  p.max_work_item_sizes[2] = 64;
  p.pci = PciAddress{0, 0x3b, 0, 0};
  p.uuid = std::array<uint8_t, 16>{0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  p.nv_compute = std::pair<int, int>(8, 0);
  return p;
}

TEST(OpenclProperties, ParsesVersionsAfterTheirPrefix) {
  EXPECT_EQ(ParseVersion("OpenCL 3.0 PoCL HSTR: x", "OpenCL ").major, 3);
  EXPECT_EQ(ParseVersion("OpenCL 3.0 PoCL HSTR: x", "OpenCL ").minor, 0);
  const ClVersion c = ParseVersion("OpenCL C 1.2 PoCL", "OpenCL C ");
  EXPECT_EQ(c.major, 1);
  EXPECT_EQ(c.minor, 2);
  EXPECT_TRUE(c.AtLeast(1, 2));
  EXPECT_FALSE(c.AtLeast(2, 0));
  EXPECT_FALSE(ParseVersion("OpenCL 1.1 Mesa", "OpenCL ").AtLeast(1, 2));
  EXPECT_EQ(ParseVersion("garbage", "OpenCL ").major, 0);
  EXPECT_EQ(ParseVersion("OpenCL 3", "OpenCL ").major, 0) << "no minor";
  EXPECT_EQ(ParseVersion("OpenCL C 1.2", "OpenCL ").major, 0) << "'C' is not a version";
}

TEST(OpenclProperties, ExtensionsMatchWholeWords) {
  EXPECT_TRUE(HasExtension("cl_khr_fp64 cl_khr_fp16", "cl_khr_fp16"));
  EXPECT_TRUE(HasExtension("  cl_khr_fp64  ", "cl_khr_fp64"));
  EXPECT_FALSE(HasExtension("cl_khr_fp64 cl_khr_fp16", "cl_khr_fp1"));
  EXPECT_FALSE(HasExtension("cl_khr_int64_base_atomics", "cl_khr_int64"));
  EXPECT_FALSE(HasExtension("", "cl_khr_fp64"));
}

TEST(OpenclProperties, SkuIsTheNameNormalised) {
  EXPECT_EQ(NormaliseSku("pthread-skylake-avx512-AMD EPYC"), "pthread-skylake-avx512-amd-epyc");
  EXPECT_EQ(NormaliseSku("  NVIDIA A100-SXM4-80GB "), "nvidia-a100-sxm4-80gb");
  EXPECT_EQ(NormaliseSku("Intel(R) UHD Graphics [0x9a49]"), "intel-r-uhd-graphics-0x9a49");
  EXPECT_EQ(NormaliseSku("--"), "opencl-device");
}

TEST(OpenclProperties, PciBusIdIsLowercaseHex) {
  EXPECT_EQ(FormatPciBusId(PciAddress{0, 0x3b, 0, 0}), "0000:3b:00.0");
  EXPECT_EQ(FormatPciBusId(PciAddress{0x1a, 0xC1, 0x1f, 7}), "001a:c1:1f.7");
}

TEST(OpenclProperties, DescribesPoclsCpuDeviceAsAHostCpuAccessPath) {
  const accel_device_capabilities_t c = Describe(PoclCpu());
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_CPU);
  EXPECT_EQ(c.flags, 0u) << "no UUID, so not uuid-unique";
  EXPECT_STREQ(c.pci_bus_id, "") << "a CPU device has no PCI address: the core groups it with the host's CPU";
  EXPECT_STREQ(c.name, "pthread-skylake-avx512-AMD EPYC");
  EXPECT_STREQ(c.vendor, "AuthenticAMD");
  EXPECT_STREQ(c.driver_version, "3.1+debian");
  EXPECT_STREQ(c.sku, "pthread-skylake-avx512-amd-epyc");
  EXPECT_STREQ(c.architecture, "x86_64-pc-linux-gnu-skylake-avx512");
  EXPECT_EQ(c.vendor_id, 0x8086u);
  EXPECT_EQ(c.memory_total, 4801812480u);
  EXPECT_EQ(c.max_allocation, 2147483648u);
  EXPECT_EQ(c.max_buffer_range, c.max_allocation);
  EXPECT_EQ(c.local_memory_size, 1048576u);
  EXPECT_EQ(c.compute_units, 2u);
  EXPECT_EQ(c.clock_mhz, 2596u);
  EXPECT_EQ(c.max_work_group_size, 4096u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(c.max_work_group_dims[d], 4096u);
    EXPECT_EQ(c.max_grid_dims[d], (1u << 31) - 1);
  }
  EXPECT_EQ(c.max_argument_size, 1024u);
  EXPECT_EQ(c.numa_node, -1);
  EXPECT_EQ(c.numeric_formats, ACCEL_NUMERIC_FORMAT_FP64 | ACCEL_NUMERIC_FORMAT_FP32 | ACCEL_NUMERIC_FORMAT_INT8 |
                                   ACCEL_NUMERIC_FORMAT_INT64);
  EXPECT_EQ(c.kernel_formats, ACCEL_KERNEL_FORMAT_OPENCL_C) << "cl_khr_spir without SPIR 1.2 is not 'spir'";
  EXPECT_EQ(c.features, ACCEL_DEVICE_FEATURE_HOST_MAPPED_MEMORY | ACCEL_DEVICE_FEATURE_EVENT_TIMING |
                            ACCEL_DEVICE_FEATURE_ATOMICS_64);
}

TEST(OpenclProperties, DescribesAPcieGpuWithItsIdentity) {
  const accel_device_capabilities_t c = Describe(PcieGpu());
  EXPECT_EQ(c.kind, ACCEL_DEVICE_KIND_GPU);
  EXPECT_STREQ(c.pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(c.flags, ACCEL_DEVICE_FLAG_UUID_UNIQUE);
  EXPECT_EQ(c.uuid[0], 0x5a);
  EXPECT_STREQ(c.architecture, "sm_80");
  EXPECT_STREQ(c.sku, "nvidia-a100-sxm4-80gb");
  EXPECT_NE(c.numeric_formats & ACCEL_NUMERIC_FORMAT_FP16, 0u);
  EXPECT_EQ(c.features & ACCEL_DEVICE_FEATURE_ATOMICS_64, 0u) << "no cl_khr_int64_base_atomics";
  EXPECT_EQ(c.max_work_group_dims[2], 64u);
}

TEST(OpenclProperties, UuidOfACpuOrOfADeviceWithoutPciAddressIsNotUnique) {
  ClDeviceProperties cpu = PoclCpu();
  cpu.uuid = std::array<uint8_t, 16>{1};
  cpu.pci = PciAddress{0, 1, 0, 0};
  EXPECT_EQ(Describe(cpu).flags, 0u);
  ClDeviceProperties software = PcieGpu();
  software.pci.reset();
  EXPECT_EQ(Describe(software).flags, 0u) << "a GPU without a PCI address (a software renderer) repeats its UUID";
  ClDeviceProperties zero = PcieGpu();
  zero.uuid = std::array<uint8_t, 16>{};
  EXPECT_EQ(Describe(zero).flags, 0u);
}

TEST(OpenclProperties, KernelFormatsFollowTheCompilerAndTheIls) {
  ClDeviceProperties p = PoclCpu();
  p.spir_versions = "1.2";
  EXPECT_EQ(KernelFormatsOf(p), ACCEL_KERNEL_FORMAT_OPENCL_C | ACCEL_KERNEL_FORMAT_SPIR);
  p.extensions = "cl_khr_fp64";  // SPIR versions without the extension
  EXPECT_EQ(KernelFormatsOf(p), ACCEL_KERNEL_FORMAT_OPENCL_C);
  p.il_version = "SPIR-V_1.0 SPIR-V_1.2";
  EXPECT_EQ(KernelFormatsOf(p), ACCEL_KERNEL_FORMAT_OPENCL_C | ACCEL_KERNEL_FORMAT_SPIRV_OPENCL);
  p.opencl_c_version = "OpenCL C 1.1";
  EXPECT_EQ(KernelFormatsOf(p), ACCEL_KERNEL_FORMAT_SPIRV_OPENCL) << "argument reflection needs OpenCL C 1.2";
  p.compiler_available = false;
  EXPECT_EQ(KernelFormatsOf(p), 0u) << "without a compiler nothing builds";
}

TEST(OpenclProperties, KindsOfAcceleratorDevices) {
  ClDeviceProperties p = PoclCpu();
  p.type = CL_DEVICE_TYPE_ACCELERATOR;
  p.name = "Intel(R) FPGA Emulation Device";
  EXPECT_EQ(KindOf(p), ACCEL_DEVICE_KIND_FPGA);
  p.name = "Some NPU";
  p.vendor = "Acme";
  EXPECT_EQ(KindOf(p), ACCEL_DEVICE_KIND_NPU);
  p.type = CL_DEVICE_TYPE_CUSTOM;
  EXPECT_EQ(KindOf(p), ACCEL_DEVICE_KIND_NPU);
  p.type = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_DEFAULT;
  EXPECT_EQ(KindOf(p), ACCEL_DEVICE_KIND_GPU);
}

TEST(OpenclProperties, LimitsStayWithinTheDevicesSizeT) {
  ClDeviceProperties p = PoclCpu();
  p.address_bits = 32;
  p.max_work_group_size = 1024;
  p.max_work_item_sizes[0] = 1024;
  p.max_work_item_sizes[1] = 1024;
  p.max_work_item_sizes[2] = 4096;  // above the group size: clamped to it
  p.max_work_item_dimensions = 2;   // the third dimension is 1
  const accel_device_capabilities_t c = Describe(p);
  EXPECT_EQ(c.max_work_group_dims[0], 1024u);
  EXPECT_EQ(c.max_work_group_dims[2], 1u);
  EXPECT_EQ(c.max_grid_dims[0], 4194303u) << "(2^32 - 1) / 1024: grid * block fits a 32-bit size_t";
  EXPECT_EQ(c.max_grid_dims[2], (1u << 31) - 1);
  p.max_mem_alloc_size = p.global_mem_size * 2;
  EXPECT_EQ(Describe(p).max_allocation, p.global_mem_size) << "max_allocation <= memory_total";
}

TEST(OpenclProperties, UnusableDevicesSayWhy) {
  ClDeviceProperties p = PoclCpu();
  EXPECT_EQ(UnusableReason(p), "");
  p.device_version = "OpenCL 1.1 Mesa 21.0";
  EXPECT_NE(UnusableReason(p).find("needs OpenCL 1.2"), std::string::npos) << UnusableReason(p);
  p = PoclCpu();
  p.available = false;
  EXPECT_NE(UnusableReason(p).find("CL_DEVICE_AVAILABLE"), std::string::npos);
}

TEST(OpenclArguments, ScalarSizesFromTypeNames) {
  EXPECT_EQ(ScalarSize("uint", 64), 4u);
  EXPECT_EQ(ScalarSize("unsigned int", 64), 4u);
  EXPECT_EQ(ScalarSize("float", 64), 4u);
  EXPECT_EQ(ScalarSize("uchar", 64), 1u);
  EXPECT_EQ(ScalarSize("short", 64), 2u);
  EXPECT_EQ(ScalarSize("half2", 64), 4u);
  EXPECT_EQ(ScalarSize("ulong", 64), 8u);
  EXPECT_EQ(ScalarSize("double", 64), 8u);
  EXPECT_EQ(ScalarSize("float4", 64), 16u);
  EXPECT_EQ(ScalarSize("float3", 64), 16u) << "a 3-vector takes the room of 4";
  EXPECT_EQ(ScalarSize("uchar16", 64), 16u);
  EXPECT_EQ(ScalarSize("size_t", 64), 8u);
  EXPECT_EQ(ScalarSize("size_t", 32), 4u);
  EXPECT_EQ(ScalarSize("float5", 64), 0u);
  EXPECT_EQ(ScalarSize("struct params", 64), 0u) << "unknown types accept any size";
  EXPECT_EQ(ScalarSize("my_t", 64), 0u);
}

TEST(OpenclArguments, QualifiersMapToKindsAndAccess) {
  ArgumentDeclaration a = DeclareArgument(CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_TYPE_CONST, "uint*", "src", 64);
  EXPECT_EQ(a.kind, ACCEL_KERNEL_ARG_KIND_BUFFER);
  EXPECT_EQ(a.access, ACCEL_ACCESS_READ);
  EXPECT_EQ(a.name, "src");
  EXPECT_EQ(a.unusable, "");
  a = DeclareArgument(CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_TYPE_VOLATILE, "uint*", "sums", 64);
  EXPECT_EQ(a.access, ACCEL_ACCESS_READ_WRITE) << "OpenCL has no write-only qualifier";
  a = DeclareArgument(CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_TYPE_NONE, "float*", "table", 64);
  EXPECT_EQ(a.kind, ACCEL_KERNEL_ARG_KIND_BUFFER);
  EXPECT_EQ(a.access, ACCEL_ACCESS_READ);
  a = DeclareArgument(CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_NONE, "uint*", "scratch", 64);
  EXPECT_EQ(a.kind, ACCEL_KERNEL_ARG_KIND_LOCAL_MEMORY);
  EXPECT_EQ(a.size, 0u);
  a = DeclareArgument(CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_CONST, "float4", "scale", 64);
  EXPECT_EQ(a.kind, ACCEL_KERNEL_ARG_KIND_SCALAR);
  EXPECT_EQ(a.size, 16u);
  a = DeclareArgument(CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_TYPE_NONE, "image2d_t", "img", 64);
  EXPECT_NE(a.unusable.find("image2d_t"), std::string::npos);
  a = DeclareArgument(CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE, "sampler_t", "s", 64);
  EXPECT_NE(a.unusable, "");
}

TEST(OpenclArguments, BuildLogGistKeepsTheErrors) {
  const std::string log =
      "warning: x.cl:1:3: unused variable 'q'\n"
      "error: x.cl:1:42: use of undeclared identifier 'y'\n"
      "   x[0] = y;\n"
      "Device pthread failed to build the program\n";
  EXPECT_EQ(BuildLogGist(log), "error: x.cl:1:42: use of undeclared identifier 'y'");
  EXPECT_EQ(BuildLogGist("note: a\nnote: b\n"), "note: a | note: b") << "without errors, every line";
  EXPECT_EQ(BuildLogGist(""), "the build log is empty");
  const std::string gist = BuildLogGist(std::string(2000, 'e') + "rror", 100);
  EXPECT_EQ(gist.size(), 100u);
  EXPECT_EQ(gist.substr(97), "...");
}

TEST(OpenclArguments, KernelNamesSplitAtSemicolons) {
  EXPECT_EQ(SplitKernelNames("fill_u32;copy_offset_u32;;vadd_f32"),
            (std::vector<std::string>{"fill_u32", "copy_offset_u32", "vadd_f32"}));
  EXPECT_TRUE(SplitKernelNames("").empty());
}

TEST(OpenclErrors, CodesAreNamed) {
  EXPECT_EQ(ClErrorName(CL_INVALID_VALUE), "CL_INVALID_VALUE (-30)");
  EXPECT_EQ(ClErrorName(-1001), "CL_PLATFORM_NOT_FOUND_KHR (-1001)");
  EXPECT_EQ(ClErrorName(-4242), "OpenCL error -4242");
  EXPECT_EQ(ClFailure("clCreateBuffer", CL_OUT_OF_RESOURCES), "clCreateBuffer failed with CL_OUT_OF_RESOURCES (-5)");
  EXPECT_EQ(StatusFromCl(CL_MEM_OBJECT_ALLOCATION_FAILURE), ACCEL_ERROR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(StatusFromCl(CL_INVALID_KERNEL_ARGS), ACCEL_ERROR_INTERNAL);
}

}  // namespace
}  // namespace accel::opencl
