#version 450
// fill_u32(BUFFER out [WRITE], SCALAR uint32 value, SCALAR uint32 n): out[i] = value for i < n.
// The kernel is named after this file's stem. `out` is a GLSL keyword: the buffer is `out_`.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) writeonly buffer OutBuffer { uint data[]; } out_;
layout(push_constant, std430) uniform Scalars {
  uint value;
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
  if (i < scalars.n) out_.data[i] = scalars.value;
}
