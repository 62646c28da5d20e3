#version 450
// Scalars of several sizes in one push-constant block, at the std430 offsets docs/kernels.md gives:
// a @0 (4), b @4 (4), c @8 (8), d @16 (16), e @32 (4). One work-item copies them out as words.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint data[]; } out_;
layout(push_constant) uniform Scalars {
  uint a;
  float b;
  uvec2 c;
  vec4 d;
  uint e;
} s;
void main() {
  if (gl_GlobalInvocationID.x != 0u) return;
  out_.data[0] = s.a;
  out_.data[1] = floatBitsToUint(s.b);
  out_.data[2] = s.c.x;
  out_.data[3] = s.c.y;
  out_.data[4] = floatBitsToUint(s.d.x);
  out_.data[5] = floatBitsToUint(s.d.y);
  out_.data[6] = floatBitsToUint(s.d.z);
  out_.data[7] = floatBitsToUint(s.d.w);
  out_.data[8] = s.e;
}
