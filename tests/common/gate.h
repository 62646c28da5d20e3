// A gate a stream waits on: enqueue Gate::Wait as a host callback to hold the
// stream until Open(). The destructor opens it, so a failed assertion between
// the two cannot leave the stream blocked and hang the test.
#ifndef ACCEL_TESTS_COMMON_GATE_H_
#define ACCEL_TESTS_COMMON_GATE_H_

#include <accel/accel.h>

#include <atomic>
#include <latch>

namespace accel_test {

class Gate {
 public:
  Gate() = default;
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  ~Gate() { Open(); }

  void Open() {
    if (!opened_.exchange(true)) latch_.count_down();
  }

  // Host-callback body: blocks the stream until the gate opens.
  static accel_status_t Wait(void* gate, accel_status_t status) {
    if (status == ACCEL_SUCCESS) static_cast<Gate*>(gate)->latch_.wait();
    return ACCEL_SUCCESS;
  }

 private:
  std::latch latch_{1};
  std::atomic<bool> opened_{false};
};

}  // namespace accel_test

#endif  // ACCEL_TESTS_COMMON_GATE_H_
