/* launch_cost's `batch` mode straight through OpenCL (docs/overhead.md, "Back-to-back OpenCL launches: what is
 * left"): `count` launches of the corpus's fill_u32 (grid and block 1), a clFinish after every 100, timed 5 times in
 * a process of its own (for perf stat); prints ns per launch, their median last, as launch_cost does. The kernel's
 * arguments are set once, as accel-bench's native path sets them; Accel's launches pass them every time. Runs on
 * the first device of the first OpenCL platform (PoCL here), the device `ACCEL_BACKENDS=opencl launch_cost` takes.
 *
 *   opencl_back_to_back <corpus dir> <count>
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#include "time_runs.h"

enum { kBatch = 100 };

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

struct Batches {
  cl_command_queue queue;
  cl_kernel kernel;
};
/* `count` launches, a clFinish after every kBatch; 0, or -1 on failure. */
static int run_batches(void* context, int count) {
  const struct Batches* b = context;
  const size_t global = 1, local = 1;
  for (int done = 0; done < count;) {
    for (int i = 0; i < kBatch && done < count; ++i, ++done) {
      CHECK_CL(clEnqueueNDRangeKernel(b->queue, b->kernel, 1, NULL, &global, &local, 0, NULL, NULL));
    }
    CHECK_CL(clFinish(b->queue));
  }
  return 0;
}

/* Times `count` launches 5 times (a clFinish after every 100) and prints ns per launch; 0, or -1 on failure. */
static int run(const char* source_path, int count) {
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
  struct Batches batches = {queue, kernel};
  if (run_batches(&batches, 3) != 0) return -1; /* warm-up: the kernel compiled for this geometry */
  if (time_runs("back-to-back launch", count, run_batches, &batches) != 0) return -1;
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}

int main(int argc, char** argv) {
  const int count = argc == 3 ? atoi(argv[2]) : 0;
  if (count <= 0) {
    fprintf(stderr, "usage: opencl_back_to_back <corpus dir> <count>\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/opencl-c/corpus.cl", argv[1]);
  return run(path, count) == 0 ? 0 : 1;
}
