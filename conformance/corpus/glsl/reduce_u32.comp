#version 450
// reduce_u32(BUFFER in [READ], BUFFER partial [WRITE], SCALAR uint32 n, LOCAL_MEMORY scratch):
// partial[g] = sum mod 2^32 of in[g * S + l] over l < S with g * S + l < n. `scratch` is S words of shared
// memory, sized by specialization constant 3 (docs/kernels.md). A tree with a barrier per level; S need not be a
// power of two: the first level folds everything past the largest power of two below S onto the front.
// The kernel is named after this file's stem. `in` is a GLSL keyword: the buffer is `in_`.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) readonly buffer InBuffer { uint data[]; } in_;
layout(set = 0, binding = 1, std430) writeonly buffer PartialBuffer { uint data[]; } partial;
layout(push_constant, std430) uniform Scalars {
  uint n;
} scalars;
layout(constant_id = 3) const uint scratch_words = 1;  // LOCAL_MEMORY argument 0 (scratch), in words
shared uint scratch[scratch_words];

void main() {
  const uint size = gl_WorkGroupSize.x * gl_WorkGroupSize.y * gl_WorkGroupSize.z;  // S
  const uint l = gl_LocalInvocationIndex;  // (lz * block.y + ly) * block.x + lx
  const uint g = (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  const uint i = g * size + l;
  scratch[l] = i < scalars.n ? in_.data[i] : 0u;
  memoryBarrierShared();
  barrier();
  uint stride = 1u;
  while (stride * 2u < size) stride *= 2u;
  for (; stride > 0u; stride /= 2u) {
    if (l < stride && l + stride < size) scratch[l] += scratch[l + stride];
    memoryBarrierShared();
    barrier();
  }
  if (l == 0u) partial.data[g] = scratch[0];
}
