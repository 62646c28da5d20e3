// Deliberately faulty backends that prove the conformance suite catches what
// it claims to (docs/conformance.md, "The suite can fail"). Each build wraps a
// working backend (the host or sim library, FAULTY_WRAPPED), copies its table
// and replaces a few slots with one documented fault (FAULTY_MODE_*):
//
//   REORDER         back-to-back host-to-device copies on a stream run swapped
//   WRONG_SIZES     memory info reports twice the descriptor's memory, and
//                   device_get_capabilities ignores struct_size (writes the
//                   whole struct into a smaller one)
//   INVALID_HANDLE  importing a file descriptor succeeds whatever its value
//   PEER_CORRUPT    a copy between two devices flips one byte of the result
//   EARLY_EVENTS    events report completion while their work is pending
//   RUNNING_IDLE    stream_query and stream_clear_error count only queued work:
//                   a host callback that is running, with nothing queued behind
//                   it, reads as complete (SUCCESS), and clear_error succeeds
//                   (stream_synchronize still waits for it)
//
// Everything else is the wrapped backend's behaviour, unchanged.
#include <accel_backend.h>
#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>

namespace {

const accel_backend_api_t* g_inner = nullptr;
accel_backend_api_t g_api{};

#if defined(FAULTY_MODE_REORDER)
// One held host-to-device copy per stream.
struct HeldCopy {
  const void* src;
  accel_bk_buffer_t dst;
  uint64_t offset;
  uint64_t size;
};
std::mutex g_mutex;
std::map<accel_bk_stream_t, HeldCopy> g_held;

accel_status_t Flush(accel_bk_stream_t stream) {
  std::optional<HeldCopy> held;
  {
    std::lock_guard lock(g_mutex);
    auto it = g_held.find(stream);
    if (it != g_held.end()) {
      held = it->second;
      g_held.erase(it);
    }
  }
  return held ? g_inner->stream_copy_host_to_buffer(stream, held->src, held->dst, held->offset, held->size)
              : ACCEL_SUCCESS;
}

accel_status_t CopyHostToBuffer(accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst, uint64_t offset,
                                uint64_t size) {
  std::optional<HeldCopy> held;
  {
    std::lock_guard lock(g_mutex);
    auto it = g_held.find(stream);
    if (it == g_held.end()) {
      g_held[stream] = {src, dst, offset, size};  // hold it: the next operation decides
      return ACCEL_SUCCESS;
    }
    held = it->second;
    g_held.erase(it);
  }
  // The fault: the later copy goes first.
  const accel_status_t s = g_inner->stream_copy_host_to_buffer(stream, src, dst, offset, size);
  if (s != ACCEL_SUCCESS) return s;
  return g_inner->stream_copy_host_to_buffer(stream, held->src, held->dst, held->offset, held->size);
}

// Every other stream slot flushes the held copy first, in order.
#define FAULTY_FLUSHING(slot, params, args) \
  accel_status_t slot params {              \
    const accel_status_t f = Flush(stream); \
    if (f != ACCEL_SUCCESS) return f;       \
    return g_inner->slot args;              \
  }
FAULTY_FLUSHING(stream_copy_buffer_to_host,
                (accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t offset, void* dst, uint64_t size),
                (stream, src, offset, dst, size))
FAULTY_FLUSHING(stream_copy_buffer,
                (accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t so, accel_bk_buffer_t dst, uint64_t dof,
                 uint64_t size),
                (stream, src, so, dst, dof, size))
FAULTY_FLUSHING(stream_fill_buffer,
                (accel_bk_stream_t stream, accel_bk_buffer_t b, uint64_t o, uint64_t s, const void* p, uint32_t ps),
                (stream, b, o, s, p, ps))
FAULTY_FLUSHING(stream_enqueue_host_callback, (accel_bk_stream_t stream, accel_host_callback_t cb, void* user),
                (stream, cb, user))
FAULTY_FLUSHING(stream_free_buffer, (accel_bk_stream_t stream, accel_bk_buffer_t b), (stream, b))
FAULTY_FLUSHING(stream_record_event, (accel_bk_stream_t stream, accel_bk_event_t e), (stream, e))
FAULTY_FLUSHING(stream_wait_event, (accel_bk_stream_t stream, accel_bk_event_t e), (stream, e))
FAULTY_FLUSHING(stream_query, (accel_bk_stream_t stream), (stream))
FAULTY_FLUSHING(stream_synchronize, (accel_bk_stream_t stream, uint64_t t), (stream, t))
FAULTY_FLUSHING(stream_clear_error, (accel_bk_stream_t stream), (stream))
FAULTY_FLUSHING(stream_launch_kernel, (accel_bk_stream_t stream, accel_bk_kernel_t k, const accel_bk_launch_t* l),
                (stream, k, l))
void StreamDestroy(accel_bk_stream_t stream) {
  Flush(stream);
  g_inner->stream_destroy(stream);
}

void Install() {
  g_api.stream_copy_host_to_buffer = CopyHostToBuffer;
  g_api.stream_copy_buffer_to_host = stream_copy_buffer_to_host;
  g_api.stream_copy_buffer = stream_copy_buffer;
  g_api.stream_fill_buffer = stream_fill_buffer;
  g_api.stream_enqueue_host_callback = stream_enqueue_host_callback;
  g_api.stream_free_buffer = stream_free_buffer;
  g_api.stream_record_event = stream_record_event;
  g_api.stream_wait_event = stream_wait_event;
  g_api.stream_query = stream_query;
  g_api.stream_synchronize = stream_synchronize;
  g_api.stream_clear_error = stream_clear_error;
  g_api.stream_launch_kernel = stream_launch_kernel;
  g_api.stream_destroy = StreamDestroy;
}

#elif defined(FAULTY_MODE_WRONG_SIZES)
accel_status_t MemoryInfo(accel_bk_device_t device, uint64_t* out_free, uint64_t* out_total) {
  const accel_status_t s = g_inner->device_get_memory_info(device, out_free, out_total);
  if (s == ACCEL_SUCCESS && out_total != nullptr) *out_total *= 2;
  return s;
}

accel_status_t Capabilities(accel_bk_device_t device, accel_device_capabilities_t* out) {
  accel_device_capabilities_t full{};
  full.stype = ACCEL_STRUCTURE_TYPE_DEVICE_CAPABILITIES;
  full.struct_size = sizeof(full);
  const accel_status_t s = g_inner->device_get_capabilities(device, &full);
  if (s == ACCEL_SUCCESS) std::memcpy(out, &full, sizeof(full));  // the fault: ignores out->struct_size
  return s;
}

void Install() {
  g_api.device_get_memory_info = MemoryInfo;
  g_api.device_get_capabilities = Capabilities;
}

#elif defined(FAULTY_MODE_INVALID_HANDLE)
accel_status_t Import(accel_bk_device_t device, const accel_buffer_import_desc_t* desc, accel_bk_buffer_t* out) {
  if (desc->type == ACCEL_EXTERNAL_MEMORY_TYPE_DMA_BUF_FD || desc->type == ACCEL_EXTERNAL_MEMORY_TYPE_OPAQUE_FD) {
    // The fault: never looks at the descriptor, hands back fresh memory.
    accel_buffer_desc_t b{};
    b.stype = ACCEL_STRUCTURE_TYPE_BUFFER_DESC;
    b.struct_size = sizeof(b);
    b.size = desc->size;
    return g_inner->buffer_create(device, &b, out);
  }
  return g_inner->buffer_import(device, desc, out);
}

void Install() { g_api.buffer_import = Import; }

#elif defined(FAULTY_MODE_PEER_CORRUPT)
std::mutex g_mutex;
std::map<accel_bk_buffer_t, accel_bk_device_t> g_owner;

accel_status_t Create(accel_bk_device_t device, const accel_buffer_desc_t* desc, accel_bk_buffer_t* out) {
  const accel_status_t s = g_inner->buffer_create(device, desc, out);
  if (s == ACCEL_SUCCESS) {
    std::lock_guard lock(g_mutex);
    g_owner[*out] = device;
  }
  return s;
}

void Destroy(accel_bk_buffer_t buffer) {
  {
    std::lock_guard lock(g_mutex);
    g_owner.erase(buffer);
  }
  g_inner->buffer_destroy(buffer);
}

struct Flip {
  accel_bk_buffer_t buffer;
  uint64_t offset;
};

accel_status_t FlipByte(void* user, accel_status_t status) {
  auto* flip = static_cast<Flip*>(user);
  void* base = nullptr;
  if (status == ACCEL_SUCCESS && g_inner->buffer_get_host_address(flip->buffer, &base) == ACCEL_SUCCESS) {
    static_cast<uint8_t*>(base)[flip->offset] ^= 0xFF;
  }
  delete flip;
  return ACCEL_SUCCESS;
}

accel_status_t Copy(accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t src_offset, accel_bk_buffer_t dst,
                    uint64_t dst_offset, uint64_t size) {
  bool across = false;
  {
    std::lock_guard lock(g_mutex);
    across = g_owner.count(src) != 0 && g_owner.count(dst) != 0 && g_owner[src] != g_owner[dst];
  }
  const accel_status_t s = g_inner->stream_copy_buffer(stream, src, src_offset, dst, dst_offset, size);
  if (s != ACCEL_SUCCESS || !across || size == 0) return s;
  // The fault: one byte in the middle of the copied range arrives flipped.
  return g_inner->stream_enqueue_host_callback(stream, FlipByte, new Flip{dst, dst_offset + size / 2});
}

void Install() {
  g_api.buffer_create = Create;
  g_api.buffer_destroy = Destroy;
  g_api.stream_copy_buffer = Copy;
}

#elif defined(FAULTY_MODE_EARLY_EVENTS)
accel_status_t Query(accel_bk_event_t event) {
  const accel_status_t s = g_inner->event_query(event);
  return s == ACCEL_NOT_READY ? ACCEL_SUCCESS : s;  // the fault: pending reads as complete
}

accel_status_t Synchronize(accel_bk_event_t event, uint64_t /*timeout_ns*/) { return Query(event); }

void Install() {
  g_api.event_query = Query;
  g_api.event_synchronize = Synchronize;
}

#elif defined(FAULTY_MODE_RUNNING_IDLE)
// Per stream: how many operations were enqueued, and the enqueue number of the
// host callback running now (0: none). In order, a running operation has
// nothing queued before it, so the work queued behind it is the difference.
struct StreamState {
  uint64_t enqueued = 0;
  uint64_t running = 0;
};
std::mutex g_mutex;
std::map<accel_bk_stream_t, StreamState> g_streams;

struct Call {
  accel_bk_stream_t stream;
  uint64_t number;
  accel_host_callback_t callback;
  void* user_data;
};

accel_status_t Trampoline(void* user, accel_status_t status) {
  auto* call = static_cast<Call*>(user);
  {
    std::lock_guard lock(g_mutex);
    g_streams[call->stream].running = call->number;
  }
  const accel_status_t result = call->callback(call->user_data, status);
  {
    std::lock_guard lock(g_mutex);
    g_streams[call->stream].running = 0;
  }
  delete call;
  return result;
}

// True when the only pending work is a host callback that is running: the
// state this backend gets wrong.
bool OnlyRunning(accel_bk_stream_t stream) {
  std::lock_guard lock(g_mutex);
  auto it = g_streams.find(stream);
  return it != g_streams.end() && it->second.running != 0 && it->second.running == it->second.enqueued;
}

// Every enqueue counts (under the lock, so a callback's number is known before
// it can start).
#define FAULTY_COUNTING(slot, params, args)                    \
  accel_status_t slot params {                                 \
    std::lock_guard lock(g_mutex);                             \
    const accel_status_t status = g_inner->slot args;          \
    if (status == ACCEL_SUCCESS) ++g_streams[stream].enqueued; \
    return status;                                             \
  }
FAULTY_COUNTING(stream_copy_host_to_buffer,
                (accel_bk_stream_t stream, const void* src, accel_bk_buffer_t dst, uint64_t offset, uint64_t size),
                (stream, src, dst, offset, size))
FAULTY_COUNTING(stream_copy_buffer_to_host,
                (accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t offset, void* dst, uint64_t size),
                (stream, src, offset, dst, size))
FAULTY_COUNTING(stream_copy_buffer,
                (accel_bk_stream_t stream, accel_bk_buffer_t src, uint64_t so, accel_bk_buffer_t dst, uint64_t dof,
                 uint64_t size),
                (stream, src, so, dst, dof, size))
FAULTY_COUNTING(stream_fill_buffer,
                (accel_bk_stream_t stream, accel_bk_buffer_t b, uint64_t o, uint64_t s, const void* p, uint32_t ps),
                (stream, b, o, s, p, ps))
FAULTY_COUNTING(stream_free_buffer, (accel_bk_stream_t stream, accel_bk_buffer_t b), (stream, b))
FAULTY_COUNTING(stream_record_event, (accel_bk_stream_t stream, accel_bk_event_t e), (stream, e))
FAULTY_COUNTING(stream_wait_event, (accel_bk_stream_t stream, accel_bk_event_t e), (stream, e))
FAULTY_COUNTING(stream_launch_kernel, (accel_bk_stream_t stream, accel_bk_kernel_t k, const accel_bk_launch_t* l),
                (stream, k, l))

accel_status_t EnqueueHostCallback(accel_bk_stream_t stream, accel_host_callback_t callback, void* user_data) {
  std::lock_guard lock(g_mutex);
  StreamState& state = g_streams[stream];
  auto* call = new Call{stream, state.enqueued + 1, callback, user_data};
  const accel_status_t s = g_inner->stream_enqueue_host_callback(stream, Trampoline, call);
  if (s != ACCEL_SUCCESS) {
    delete call;
    return s;
  }
  ++state.enqueued;
  return s;
}

accel_status_t Query(accel_bk_stream_t stream) {
  const accel_status_t s = g_inner->stream_query(stream);
  return s == ACCEL_NOT_READY && OnlyRunning(stream) ? ACCEL_SUCCESS : s;  // the fault
}

accel_status_t ClearError(accel_bk_stream_t stream) {
  const accel_status_t s = g_inner->stream_clear_error(stream);
  return s == ACCEL_ERROR_FAILED_PRECONDITION && OnlyRunning(stream) ? ACCEL_SUCCESS : s;  // the fault
}

void StreamDestroy(accel_bk_stream_t stream) {
  g_inner->stream_destroy(stream);  // waits for the work
  std::lock_guard lock(g_mutex);
  g_streams.erase(stream);
}

void Install() {
  g_api.stream_copy_host_to_buffer = stream_copy_host_to_buffer;
  g_api.stream_copy_buffer_to_host = stream_copy_buffer_to_host;
  g_api.stream_copy_buffer = stream_copy_buffer;
  g_api.stream_fill_buffer = stream_fill_buffer;
  g_api.stream_enqueue_host_callback = EnqueueHostCallback;
  g_api.stream_free_buffer = stream_free_buffer;
  g_api.stream_record_event = stream_record_event;
  g_api.stream_wait_event = stream_wait_event;
  g_api.stream_launch_kernel = stream_launch_kernel;
  g_api.stream_query = Query;
  g_api.stream_clear_error = ClearError;
  g_api.stream_destroy = StreamDestroy;
}

#else
#error "define one FAULTY_MODE_*"
#endif

}  // namespace

extern "C" ACCEL_BACKEND_EXPORT accel_status_t accel_backend_get_api(accel_backend_get_api_args_t* args) {
  static void* library = dlopen(FAULTY_WRAPPED, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    if (args != nullptr && args->host != nullptr) {
      args->host->set_error(args->host->context, ACCEL_ERROR_BACKEND_UNAVAILABLE, "cannot open " FAULTY_WRAPPED);
    }
    return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  }
  auto entry = reinterpret_cast<accel_backend_get_api_fn>(dlsym(library, ACCEL_BACKEND_ENTRY_POINT_NAME));
  if (entry == nullptr) return ACCEL_ERROR_BACKEND_UNAVAILABLE;
  const accel_status_t s = entry(args);
  if (s != ACCEL_SUCCESS) return s;
  static std::once_flag once;
  std::call_once(once, [&] {
    g_inner = args->out_api;
    std::memcpy(&g_api, g_inner, std::min<size_t>(g_inner->struct_size, sizeof(g_api)));
    g_api.struct_size = static_cast<uint32_t>(std::min<size_t>(g_inner->struct_size, sizeof(g_api)));
    g_api.name = FAULTY_NAME;
    Install();
  });
  args->out_api = &g_api;
  return ACCEL_SUCCESS;
}
