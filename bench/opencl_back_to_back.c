/* Back-to-back launches alone, through Accel or straight through OpenCL, one process each, for `perf stat`
 * (docs/overhead.md, "Back-to-back OpenCL launches: what is left"): `batches` times, 100 launches of the corpus's
 * fill_u32 (grid and block 1) and one wait; prints microseconds per launch. The native side sets the kernel's
 * arguments once, as accel-bench's native path does; the Accel side passes them with every launch. Run the Accel
 * side with ACCEL_BACKENDS=opencl, so that both use the first OpenCL device.
 *
 *   opencl_back_to_back <corpus dir> <batches> accel|native
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <accel/accel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kBatch = 100 };

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

#define CHECK(call)                                                                              \
  do {                                                                                           \
    accel_status_t s_ = (call);                                                                  \
    if (s_ < 0) {                                                                                \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, accel_status_name(s_), accel_last_error()); \
      return -1;                                                                                 \
    }                                                                                            \
  } while (0)

#define CHECK_CL(call)                                            \
  do {                                                            \
    cl_int e_ = (call);                                           \
    if (e_ != CL_SUCCESS) {                                       \
      fprintf(stderr, "%s failed: OpenCL error %d\n", #call, e_); \
      return -1;                                                  \
    }                                                             \
  } while (0)

/* The file's bytes, NUL-terminated, or NULL. */
static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char* bytes = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    const long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (bytes = malloc((size_t)n + 1)) != NULL) {
      if (fread(bytes, 1, (size_t)n, f) != (size_t)n) {
        free(bytes);
        bytes = NULL;
      } else {
        bytes[n] = '\0';
      }
    }
  }
  fclose(f);
  return bytes;
}

/* Microseconds per launch through OpenCL, or a negative number. */
static double run_native(const char* source_path, int batches) {
  cl_platform_id platform = NULL;
  cl_device_id device = NULL;
  CHECK_CL(clGetPlatformIDs(1, &platform, NULL));
  CHECK_CL(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
  cl_int err = CL_SUCCESS;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  CHECK_CL(err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  CHECK_CL(err);
  char* source = read_file(source_path);
  if (source == NULL) {
    fprintf(stderr, "cannot read %s\n", source_path);
    return -1;
  }
  const char* sources[] = {source};
  cl_program program = clCreateProgramWithSource(context, 1, sources, NULL, &err);
  free(source);
  CHECK_CL(err);
  CHECK_CL(clBuildProgram(program, 1, &device, "", NULL, NULL));
  cl_kernel kernel = clCreateKernel(program, "fill_u32", &err);
  CHECK_CL(err);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 4096, NULL, &err);
  CHECK_CL(err);
  const cl_uint value = 1, n = 1;
  CHECK_CL(clSetKernelArg(kernel, 0, sizeof(buffer), &buffer));
  CHECK_CL(clSetKernelArg(kernel, 1, sizeof(value), &value));
  CHECK_CL(clSetKernelArg(kernel, 2, sizeof(n), &n));
  const size_t global = 1, local = 1;
  for (int i = 0; i < 3; ++i) CHECK_CL(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
  CHECK_CL(clFinish(queue));
  const double start = now_us();
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < kBatch; ++i) {
      CHECK_CL(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    }
    CHECK_CL(clFinish(queue));
  }
  const double per_launch = (now_us() - start) / ((double)batches * kBatch);
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return per_launch;
}

/* Microseconds per launch through Accel's first device, or a negative number. */
static double run_accel(const char* source_path, int batches) {
  accel_instance_t instance = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  accel_device_t device = NULL;
  uint32_t count = 1;
  CHECK(accel_instance_enumerate_devices(instance, &count, &device));
  if (count == 0) {
    fprintf(stderr, "no device (ACCEL_BACKENDS=opencl with PoCL installed?)\n");
    return -1;
  }
  accel_module_source_t source;
  memset(&source, 0, sizeof(source));
  source.stype = ACCEL_STRUCTURE_TYPE_MODULE_SOURCE;
  source.struct_size = sizeof(source);
  source.format = ACCEL_KERNEL_FORMAT_OPENCL_C;
  source.path = source_path;
  accel_module_desc_t md = {ACCEL_STRUCTURE_TYPE_MODULE_DESC, sizeof(md), NULL};
  md.sources = &source;
  md.source_count = 1;
  accel_module_t module = NULL;
  accel_kernel_t kernel = NULL;
  CHECK(accel_module_create(device, &md, &module));
  CHECK(accel_module_get_kernel(module, "fill_u32", &kernel));
  accel_buffer_desc_t bd = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(bd), NULL};
  bd.size = 4096;
  accel_buffer_t buffer = NULL;
  CHECK(accel_buffer_create(device, &bd, &buffer));
  accel_stream_t stream = NULL;
  CHECK(accel_stream_create(device, NULL, &stream));
  const uint32_t value = 1, n = 1;
  accel_kernel_arg_t args[3];
  memset(args, 0, sizeof(args));
  for (int i = 0; i < 3; ++i) {
    args[i].stype = ACCEL_STRUCTURE_TYPE_KERNEL_ARG;
    args[i].struct_size = sizeof(args[i]);
  }
  args[0].kind = ACCEL_KERNEL_ARG_KIND_BUFFER;
  args[0].buffer = buffer;
  args[1].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[1].value = &value;
  args[1].size = sizeof(value);
  args[2].kind = ACCEL_KERNEL_ARG_KIND_SCALAR;
  args[2].value = &n;
  args[2].size = sizeof(n);
  accel_launch_desc_t launch = {ACCEL_STRUCTURE_TYPE_LAUNCH_DESC, sizeof(launch), NULL};
  for (int d = 0; d < 3; ++d) launch.grid[d] = launch.block[d] = 1;
  launch.args = args;
  launch.arg_count = 3;
  for (int i = 0; i < 3; ++i) CHECK(accel_stream_launch_kernel(stream, kernel, &launch));
  CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  const double start = now_us();
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < kBatch; ++i) CHECK(accel_stream_launch_kernel(stream, kernel, &launch));
    CHECK(accel_stream_synchronize(stream, ACCEL_TIMEOUT_INFINITE));
  }
  const double per_launch = (now_us() - start) / ((double)batches * kBatch);
  accel_stream_destroy(stream);
  accel_buffer_destroy(buffer);
  accel_module_destroy(module);
  accel_instance_destroy(instance);
  return per_launch;
}

int main(int argc, char** argv) {
  const int batches = argc == 4 ? atoi(argv[2]) : 0;
  const int native = argc == 4 && strcmp(argv[3], "native") == 0;
  if (batches <= 0 || (!native && strcmp(argv[3], "accel") != 0)) {
    fprintf(stderr, "usage: opencl_back_to_back <corpus dir> <batches> accel|native\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/opencl-c/corpus.cl", argv[1]);
  const double per_launch = native ? run_native(path, batches) : run_accel(path, batches);
  if (per_launch < 0) return 1;
  printf("%s: %.2f us per launch\n", native ? "native" : "accel", per_launch);
  return 0;
}
