#version 450
// copy_offset_u32(BUFFER src [READ], BUFFER dst [WRITE], SCALAR uint32 src_offset, SCALAR uint32 dst_offset,
// SCALAR uint32 n): dst[dst_offset + i] = src[src_offset + i] for i < n (offsets in elements).
// The kernel is named after this file's stem.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer SrcBuffer { uint data[]; } src;
layout(set = 0, binding = 1, std430) writeonly buffer DstBuffer { uint data[]; } dst;
layout(push_constant, std430) uniform Scalars {
  uint src_offset;
  uint dst_offset;
  uint n;
} scalars;

// i = (gz * H + gy) * W + gx, W = grid.x * block.x, H = grid.y * block.y.
uint GlobalLinearId() {
  const uvec3 global_size = gl_NumWorkGroups * gl_WorkGroupSize;
  const uvec3 id = gl_GlobalInvocationID;
  return (id.z * global_size.y + id.y) * global_size.x + id.x;
}

void main() {
  const uint i = GlobalLinearId();
  if (i < scalars.n) dst.data[scalars.dst_offset + i] = src.data[scalars.src_offset + i];
}
