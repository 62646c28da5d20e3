#version 450
// Linked with second.comp into one module of two entry points (tests/vulkan/CMakeLists.txt).
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint data[]; } out_;
layout(push_constant) uniform P { uint n; } p;
void main() { uint i = gl_GlobalInvocationID.x; if (i < p.n) out_.data[i] = 1u + i; }
