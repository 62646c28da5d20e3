#version 450
// vadd_f32(BUFFER a [READ], BUFFER b [READ], BUFFER c [WRITE], SCALAR uint32 n): c[i] = a[i] + b[i] for i < n.
// The kernel is named after this file's stem.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer ABuffer { float data[]; } a;
layout(set = 0, binding = 1, std430) readonly buffer BBuffer { float data[]; } b;
layout(set = 0, binding = 2, std430) writeonly buffer CBuffer { float data[]; } c;
layout(push_constant, std430) uniform Scalars {
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
  if (i < scalars.n) c.data[i] = a.data[i] + b.data[i];
}
