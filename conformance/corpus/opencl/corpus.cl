// The conformance corpus in OpenCL C 1.2: fill_u32, copy_offset_u32, vadd_f32, reduce_u32 and atomic_add_u32
// (their contracts are in ../README.md). The ids are computed from the group and local ids, not get_global_id,
// so that every 1-, 2- and 3-D geometry numbers work-items as the other formats do. Indices are 64-bit.

// S = block.x * block.y * block.z.
static ulong corpus_group_size(void) { return (ulong)get_local_size(0) * get_local_size(1) * get_local_size(2); }

// g = (group_id.z * grid.y + group_id.y) * grid.x + group_id.x.
static ulong corpus_group_linear_id(void) {
  return ((ulong)get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) + get_group_id(0);
}

// l = (lz * block.y + ly) * block.x + lx.
static ulong corpus_local_linear_id(void) {
  return ((ulong)get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0);
}

// i = (gz * H + gy) * W + gx, with gd = group_id.d * block.d + local_id.d, W = grid.x * block.x,
// H = grid.y * block.y.
static ulong corpus_global_linear_id(void) {
  const ulong width = (ulong)get_num_groups(0) * get_local_size(0);
  const ulong height = (ulong)get_num_groups(1) * get_local_size(1);
  const ulong gx = (ulong)get_group_id(0) * get_local_size(0) + get_local_id(0);
  const ulong gy = (ulong)get_group_id(1) * get_local_size(1) + get_local_id(1);
  const ulong gz = (ulong)get_group_id(2) * get_local_size(2) + get_local_id(2);
  return (gz * height + gy) * width + gx;
}

// out[i] = value for i < n.
__kernel void fill_u32(__global uint* out, uint value, uint n) {
  const ulong i = corpus_global_linear_id();
  if (i < n) out[i] = value;
}

// dst[dst_offset + i] = src[src_offset + i] for i < n (offsets in elements).
__kernel void copy_offset_u32(__global const uint* src, __global uint* dst, uint src_offset, uint dst_offset, uint n) {
  const ulong i = corpus_global_linear_id();
  if (i < n) dst[dst_offset + i] = src[src_offset + i];
}

// c[i] = a[i] + b[i] for i < n.
__kernel void vadd_f32(__global const float* a, __global const float* b, __global float* c, uint n) {
  const ulong i = corpus_global_linear_id();
  if (i < n) c[i] = a[i] + b[i];
}

// partial[g] = sum mod 2^32 of in[g * S + l] over l < S with g * S + l < n; scratch holds S words. A tree with a
// barrier per level; S need not be a power of two: the first level folds everything past the largest power of two
// below S onto the front.
__kernel void reduce_u32(__global const uint* in, __global uint* partial, uint n, __local uint* scratch) {
  const ulong size = corpus_group_size();
  const ulong l = corpus_local_linear_id();
  const ulong g = corpus_group_linear_id();
  const ulong i = g * size + l;
  scratch[l] = i < n ? in[i] : 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  ulong stride = 1;
  while (stride * 2 < size) stride *= 2;
  for (; stride > 0; stride /= 2) {
    if (l < stride && l + stride < size) scratch[l] += scratch[l + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) partial[g] = scratch[0];
}

// For i < n, atomically sums[i % bins] += values[i]. bins must be at least 1 (0: nothing is added).
__kernel void atomic_add_u32(__global const uint* values, volatile __global uint* sums, uint n, uint bins) {
  const ulong i = corpus_global_linear_id();
  if (i < n && bins != 0) atomic_add(&sums[i % bins], values[i]);
}
