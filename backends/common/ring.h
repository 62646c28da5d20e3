// Ring: the FIFO of a stream's operations. Part of accel_backend_support (backend_support.h).
#ifndef ACCEL_BACKENDS_COMMON_RING_H_
#define ACCEL_BACKENDS_COMMON_RING_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace accel::backend {

// A FIFO in a ring that doubles when full and never shrinks: once it has held the stream's deepest backlog, pushing
// and popping allocate nothing (a std::deque allocates a chunk every few elements, and a map when it is made).
// T is default-constructible and move-assignable; a popped slot keeps a moved-from value. Not thread-safe: the
// owner's mutex guards it.
template <typename T>
class Ring {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  T& front() { return slots_[head_]; }
  void push_back(T value) {
    if (size_ == slots_.size()) Grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }
  // Grows until `n` elements fit, so that as many push_backs allocate nothing (and cannot throw).
  void Reserve(size_t n) {
    while (slots_.size() < n) Grow();
  }
  void clear() {
    while (size_ > 0) pop_front();
  }
  // Moves the oldest element out; the slot keeps a moved-from value.
  T pop_front() {
    T value = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return value;
  }
  // Appends an element in place and returns it: the slot as its last element left it (moved-from, or released by
  // the caller before drop_front), for the caller to assign (no temporary, no move of a whole element).
  T& append() {
    if (size_ == slots_.size()) Grow();
    T& slot = slots_[(head_ + size_) & (slots_.size() - 1)];
    ++size_;
    return slot;
  }
  // Removes the oldest element and leaves it in its slot as it is: the caller released what it held in place.
  void drop_front() {
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

 private:
  void Grow() {
    std::vector<T> grown(slots_.empty() ? 16 : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) grown[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_ = std::move(grown);
    head_ = 0;
  }
  std::vector<T> slots_;  // a power of two in size
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace accel::backend

#endif  // ACCEL_BACKENDS_COMMON_RING_H_
