#version 450
// vector_add(a, b, c, n) for Vulkan: storage buffers at set 0, bindings 0-2 in
// argument order, the scalar in the push constants, the block from
// specialization constants 0-2 (docs/kernels.md).
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) readonly buffer A { float data[]; } a;
layout(set = 0, binding = 1) readonly buffer B { float data[]; } b;
layout(set = 0, binding = 2) writeonly buffer C { float data[]; } c;
layout(push_constant) uniform Scalars { uint n; } s;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < s.n) c.data[i] = a.data[i] + b.data[i];
}
