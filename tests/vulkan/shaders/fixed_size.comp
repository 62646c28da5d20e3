#version 450
// A fixed work-group size (no _id): the kernel requires block 64x1x1. out[i] = i for i < n.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint data[]; } out_;
layout(push_constant) uniform Scalars { uint n; } s;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < s.n) out_.data[i] = i;
}
