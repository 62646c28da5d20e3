#version 450
#extension GL_EXT_buffer_reference : require
// A DEVICE_ADDRESS argument: a buffer_reference in the push constants. target[i] = 7 * i for i < n.
layout(local_size_x_id = 0) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint data[]; };
layout(push_constant) uniform Scalars {
  Words target;
  uint n;
} s;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  if (i < s.n) s.target.data[i] = 7u * i;
}
