#version 450
// Linked with first.comp into one module of two entry points (tests/vulkan/CMakeLists.txt).
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer InOut { uint data[]; } io;
layout(set = 0, binding = 1) readonly buffer Add { uint data[]; } add;
void main() { uint i = gl_GlobalInvocationID.x; io.data[i] += add.data[i]; }
