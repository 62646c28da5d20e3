#version 450
// The scalars in a uniform block at set 0, binding 1 (the binding after the one storage buffer), as a kernel whose
// scalars pass maxPushConstantsSize declares them (docs/kernels.md). out[i] = value + i for i < n.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint data[]; } out_;
layout(set = 0, binding = 1, std140) uniform Scalars {
  uint value;
  uint n;
} s;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < s.n) out_.data[i] = s.value + i;
}
