// The conformance corpus in CUDA, compiled to PTX: fill_u32, copy_offset_u32, vadd_f32, reduce_u32 and
// atomic_add_u32 (their contracts are in ../README.md). BUFFER arguments are pointer parameters, SCALAR arguments
// by-value parameters, in declaration order; reduce_u32's LOCAL_MEMORY argument `scratch` is the launch's dynamic
// shared memory, so it has no parameter. Indices are 64-bit.

// S = block.x * block.y * block.z.
__device__ static unsigned long long CorpusGroupSize() {
  return static_cast<unsigned long long>(blockDim.x) * blockDim.y * blockDim.z;
}

// g = (group_id.z * grid.y + group_id.y) * grid.x + group_id.x.
__device__ static unsigned long long CorpusGroupLinearId() {
  return (static_cast<unsigned long long>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

// l = (lz * block.y + ly) * block.x + lx.
__device__ static unsigned long long CorpusLocalLinearId() {
  return (static_cast<unsigned long long>(threadIdx.z) * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// i = (gz * H + gy) * W + gx, with gd = group_id.d * block.d + local_id.d, W = grid.x * block.x,
// H = grid.y * block.y.
__device__ static unsigned long long CorpusGlobalLinearId() {
  const unsigned long long width = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long height = static_cast<unsigned long long>(gridDim.y) * blockDim.y;
  const unsigned long long gx = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned long long gy = static_cast<unsigned long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  const unsigned long long gz = static_cast<unsigned long long>(blockIdx.z) * blockDim.z + threadIdx.z;
  return (gz * height + gy) * width + gx;
}

// out[i] = value for i < n.
extern "C" __global__ void fill_u32(unsigned int* out, unsigned int value, unsigned int n) {
  const unsigned long long i = CorpusGlobalLinearId();
  if (i < n) out[i] = value;
}

// dst[dst_offset + i] = src[src_offset + i] for i < n (offsets in elements).
extern "C" __global__ void copy_offset_u32(const unsigned int* src, unsigned int* dst, unsigned int src_offset,
                                           unsigned int dst_offset, unsigned int n) {
  const unsigned long long i = CorpusGlobalLinearId();
  if (i < n) dst[dst_offset + i] = src[src_offset + i];
}

// c[i] = a[i] + b[i] for i < n.
extern "C" __global__ void vadd_f32(const float* a, const float* b, float* c, unsigned int n) {
  const unsigned long long i = CorpusGlobalLinearId();
  if (i < n) c[i] = a[i] + b[i];
}

// partial[g] = sum mod 2^32 of in[g * S + l] over l < S with g * S + l < n; `scratch` (dynamic shared memory)
// holds S words. A tree with a barrier per level; S need not be a power of two: the first level folds everything
// past the largest power of two below S onto the front.
extern "C" __global__ void reduce_u32(const unsigned int* in, unsigned int* partial, unsigned int n) {
  extern __shared__ unsigned int scratch[];
  const unsigned long long size = CorpusGroupSize();
  const unsigned long long l = CorpusLocalLinearId();
  const unsigned long long g = CorpusGroupLinearId();
  const unsigned long long i = g * size + l;
  scratch[l] = i < n ? in[i] : 0u;
  __syncthreads();
  unsigned long long stride = 1;
  while (stride * 2 < size) stride *= 2;
  for (; stride > 0; stride /= 2) {
    if (l < stride && l + stride < size) scratch[l] += scratch[l + stride];
    __syncthreads();
  }
  if (l == 0) partial[g] = scratch[0];
}

// For i < n, atomically sums[i % bins] += values[i]. bins must be at least 1 (0: nothing is added).
extern "C" __global__ void atomic_add_u32(const unsigned int* values, unsigned int* sums, unsigned int n,
                                          unsigned int bins) {
  const unsigned long long i = CorpusGlobalLinearId();
  if (i < n && bins != 0) atomicAdd(&sums[i % bins], values[i]);
}
