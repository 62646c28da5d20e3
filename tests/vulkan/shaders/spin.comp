#version 450
// spin(BUFFER data [READ_WRITE], SCALAR uint32 steps): device work that runs for a while. Each invocation i steps a
// linear congruential generator `steps` times from data[i] and writes the result back to data[i], so that the host
// can check that the kernel ran to its end (tests of work queued behind a running kernel). The time comes from many
// invocations: llvmpipe ends a shader's loops after 65535 iterations in all.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0, std430) buffer Data { uint data[]; } data_;
layout(push_constant, std430) uniform Scalars {
  uint steps;
} s;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  uint x = data_.data[i];
  for (uint k = 0; k < s.steps; ++k) x = x * 1664525u + 1013904223u;
  data_.data[i] = x;
}
