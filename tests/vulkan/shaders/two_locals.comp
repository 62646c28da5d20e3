#version 450
// Two LOCAL_MEMORY arguments: specialization constants 3 and 4 size two shared arrays, in 32-bit words.
// Work-item 0 writes both lengths, then each work-item round-trips its id through both arrays.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint data[]; } out_;
layout(constant_id = 3) const uint first_words = 1;
layout(constant_id = 4) const uint second_words = 1;
shared uint first[first_words];
shared uint second[second_words];
void main() {
  const uint l = gl_LocalInvocationIndex;
  if (l < first_words) first[l] = l + 100u;
  if (l < second_words) second[l] = l + 200u;
  barrier();
  if (l == 0u) {
    out_.data[0] = uint(first.length());
    out_.data[1] = uint(second.length());
    out_.data[2] = first[first_words - 1u];
    out_.data[3] = second[second_words - 1u];
  }
}
