#version 450
// atomic_add_u32(BUFFER values [READ], BUFFER sums [READ_WRITE], SCALAR uint32 n, SCALAR uint32 bins):
// for i < n, atomically sums[i % bins] += values[i]. bins must be at least 1 (0: nothing is added).
// The kernel is named after this file's stem.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer ValuesBuffer { uint data[]; } values;
layout(set = 0, binding = 1, std430) buffer SumsBuffer { uint data[]; } sums;
layout(push_constant, std430) uniform Scalars {
  uint n;
  uint bins;
} scalars;

// i = (gz * H + gy) * W + gx, W = grid.x * block.x, H = grid.y * block.y.
uint GlobalLinearId() {
  const uvec3 global_size = gl_NumWorkGroups * gl_WorkGroupSize;
  const uvec3 id = gl_GlobalInvocationID;
  return (id.z * global_size.y + id.y) * global_size.x + id.x;
}

void main() {
  const uint i = GlobalLinearId();
  if (i < scalars.n && scalars.bins != 0u) atomicAdd(sums.data[i % scalars.bins], values.data[i]);
}
