#version 450
// Uses a storage image, which Accel's Vulkan binding convention has no argument for: module_create refuses it.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, r32ui) uniform writeonly uimage2D picture;
void main() { imageStore(picture, ivec2(0, 0), uvec4(1u)); }
