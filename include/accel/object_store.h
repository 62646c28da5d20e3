/* libaccel-runtime 1.2: the object store (docs/objectstore.md).
 *
 * An object is an immutable byte string put once into a runtime's store and
 * referenced by a counted handle. It lives in one or more places: host
 * memory, the memory of any of the runtime's devices, or a spill file. A get
 * on the host or on a device returns a read-only view of a local replica,
 * made on demand by the best path (a peer copy between devices of one
 * backend, else staged through the host); concurrent gets of one object on
 * one place share one transfer. Each place has a capacity for the store;
 * when a new replica needs room, the least recently used replicas that are
 * not viewed are dropped when another copy exists, moved to the host when
 * they are a device's last copy, and written to a checksummed spill file
 * when they are the host's last copy. Nothing referenced is ever lost: what
 * cannot make room fails the call that asked, with the reason.
 *
 * Configuration: chain an accel_object_store_desc_t to the `next` of the
 * accel_runtime_desc_t given to accel_runtime_create (a 1.1 library ignores
 * it); without one, the defaults below hold.
 *
 * Ownership: accel_object_put returns a handle holding one reference;
 * accel_object_retain adds one, accel_object_release drops one, and the last
 * release frees the object once no view holds it (the handle is then stale).
 * A view holds its replica in place (never dropped or moved) until
 * accel_object_view_release. Objects and views outlive the runtime's destroy
 * only as stale handles: destroying the runtime frees its store.
 *
 * Across processes (docs/objectstore.md, "Across processes"):
 * accel_object_share copies an object's bytes once into a sealed memfd held
 * by a per-node agent (accel-object-agent, started on demand) and returns a
 * printable token; accel_object_import, in any process of the same user on
 * the node, maps that memfd read-only: its host replica is the mapping
 * (zero-copy). The agent counts each process's references and drops those
 * of a process that exits or is killed. No named /dev/shm segment is made.
 *
 * Threading: every function is thread-safe. */
#ifndef ACCEL_OBJECT_STORE_H_
#define ACCEL_OBJECT_STORE_H_

#include <accel/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* accel_object_t (1.2) is declared in accel/runtime.h: task descs name objects too. */
typedef struct accel_object_view_s* accel_object_view_t; /* 1.2 */

/* Where a replica is: the host, or a device by its runtime index
 * (accel_runtime_get_device). */
#define ACCEL_OBJECT_LOCATION_HOST (-1)

/* Chained to accel_runtime_desc_t::next. Zero fields take the defaults. */
typedef struct accel_object_store_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC */
  uint32_t struct_size;
  const void* next;
  uint64_t host_capacity;      /* bytes of host memory for replicas; 0: 1/4 of the machine's memory */
  uint64_t device_capacity;    /* bytes on each device, capped by what the runtime gives the device;
                                  0: half of that */
  const char* spill_directory; /* NULL: $ACCEL_SPILL_DIR, else $TMPDIR (or /tmp)/accel-spill-<pid>;
                                  created 0700 when missing, its files removed by the store */
} accel_object_store_desc_t;

/* accel_object_put_desc_t::flags. ADOPT: the store takes the caller's
 * memory as the object's replica instead of copying it. A `buffer` (at
 * `buffer_offset` 0; the object is its first `size` bytes) is then the
 * store's: it destroys it when the replica goes, and the caller must neither
 * use nor destroy it after a successful put. `data` must then stay unchanged
 * until `release_data(release_user_data, data)` says the store is done with
 * it (the object freed, or its bytes moved to a spill file); it is called
 * once, on any thread, never under a lock of the store. The adopted bytes
 * count in the place's figures like a copy (room is made first). On failure
 * the memory stays the caller's. */
#define ACCEL_OBJECT_PUT_ADOPT 0x1u

/* Where the bytes of a put come from: `data` (host memory, copied), or
 * `buffer` at `buffer_offset` (a buffer on one of the runtime's devices,
 * copied into a device replica there). Exactly one of the two. */
typedef struct accel_object_put_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC */
  uint32_t struct_size;
  const void* next;
  const void* data;      /* [optional] */
  accel_buffer_t buffer; /* [optional] */
  uint64_t buffer_offset;
  uint64_t size;      /* > 0 */
  const char* name;   /* [optional] for messages: "object 7 ('weights')" */
  uint32_t flags;     /* ACCEL_OBJECT_PUT_*; 0: copy */
  uint32_t reserved0; /* 0 */
  /* With ACCEL_OBJECT_PUT_ADOPT and `data` (required then): the store is done with `data`. */
  void (*release_data)(void* user_data, const void* data);
  void* release_user_data;
} accel_object_put_desc_t;

typedef struct accel_object_info_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_OBJECT_INFO */
  uint32_t struct_size;
  const void* next;
  uint64_t size;
  uint32_t references;      /* counted handle references */
  uint32_t views;           /* live views */
  uint32_t on_host;         /* 1 when a host replica is ready */
  uint32_t on_disk;         /* 1 when a spill file holds it */
  uint32_t device_replicas; /* ready device replicas */
  uint32_t reserved0;
} accel_object_info_t;

/* What a view shows: `host_address` (host views) or `buffer` at `offset`
 * (device views), `size` bytes, read-only. */
typedef struct accel_object_view_info_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO */
  uint32_t struct_size;
  const void* next;
  const void* host_address;
  accel_buffer_t buffer;
  uint64_t offset;
  uint64_t size;
  int32_t location; /* ACCEL_OBJECT_LOCATION_HOST or a device index */
  uint32_t reserved0;
} accel_object_view_info_t;

/* The store's figures for one place, since the runtime was created. */
typedef struct accel_object_store_usage_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE */
  uint32_t struct_size;
  const void* next;
  uint64_t capacity;
  uint64_t used;         /* bytes of replicas there, filling ones included */
  uint64_t replicas;     /* replicas there now */
  uint64_t transfers_in; /* replicas made there by a copy */
  uint64_t evicted;      /* replicas dropped there for room (another copy existed) */
  uint64_t moved_out;    /* last copies moved away for room (device: to the host; host: to a spill file) */
  uint64_t restored;     /* host only: replicas read back from a spill file */
} accel_object_store_usage_t;

/* Puts a copy of the bytes described by `desc` into the store.
 * Returns ACCEL_ERROR_INVALID_HANDLE (runtime, buffer),
 *         ACCEL_ERROR_INVALID_ARGUMENT (a bad header, size 0, both or
 *         neither of data and buffer, a range past the buffer's end, a buffer
 *         of no device of the runtime),
 *         ACCEL_ERROR_RESOURCE_EXHAUSTED (larger than the place's capacity,
 *         or no room can be made: everything there is viewed, or the spill
 *         directory is full; the message says which),
 *         ACCEL_ERROR_FAILED_PRECONDITION (the runtime is being destroyed). */
ACCEL_API accel_status_t accel_object_put(accel_runtime_t runtime, const accel_object_put_desc_t* desc, /* [in] */
                                          accel_object_t* out_object);                                  /* [out] */

/* Called on the thread of accel_object_put_file after each chunk is read:
 * bytes read so far and in all. */
typedef void (*accel_object_progress_t)(void* user_data, uint64_t bytes_done, uint64_t bytes_total);

/* A byte range of a file to stream into the store (accel_object_put_file):
 * split into `location_count` contiguous parts of equal size (the last one
 * takes the rest), part i becoming an object at locations[i]. */
typedef struct accel_object_file_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_OBJECT_FILE_DESC */
  uint32_t struct_size;
  const void* next;
  const char* path;
  uint64_t offset;                  /* into the file */
  uint64_t size;                    /* bytes; 0: to the end of the file */
  const int32_t* locations;         /* [optional] device indices or ACCEL_OBJECT_LOCATION_HOST; NULL: the host */
  uint32_t location_count;          /* parts (1 when `locations` is NULL) */
  uint32_t reserved0;               /* 0 */
  uint64_t chunk_size;              /* bytes per read; 0: 8 MiB */
  accel_object_progress_t progress; /* [optional] */
  void* user_data;                  /* for `progress` */
  const char* name;                 /* [optional] for messages */
} accel_object_file_desc_t;

/* Streams a file into the store: chunked reads on the calling thread
 * overlapped with copies into the parts' replicas (two staging buffers per
 * device part: chunk i+1 is read while chunk i is copied), then one object
 * per part in `out_objects` (location_count entries, all or none). Returns
 * ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (a bad header,
 * NULL path or output, a range past the end of the file, a location that is
 * no device, more parts than bytes), ACCEL_ERROR_NOT_FOUND (the file cannot
 * be opened or read; the message names it and says why),
 * ACCEL_ERROR_RESOURCE_EXHAUSTED (no room), errors of the copies. */
ACCEL_API accel_status_t accel_object_put_file(accel_runtime_t runtime, const accel_object_file_desc_t* desc, /* [in] */
                                               accel_object_t* out_objects); /* [out] location_count entries */

/* Adds a reference. Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_object_retain(accel_object_t object);

/* Drops a reference; the last one makes the handle stale and frees the
 * object once its views are released. Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_object_release(accel_object_t object);

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_object_get_info(accel_object_t object, accel_object_info_t* out_info); /* [out] */

/* Whether a ready replica of `object` is on device `device_index` (1) or not (0). */
ACCEL_API accel_status_t accel_object_is_on_device(accel_object_t object, uint32_t device_index,
                                                   uint32_t* out_present); /* [out] */

/* A read-only view of `object` at `location` (ACCEL_OBJECT_LOCATION_HOST or
 * a device index), making a replica there when there is none; waits up to
 * `timeout_ns` for a transfer another get started (ACCEL_TIMEOUT_INFINITE:
 * no limit). Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT
 * (a location that is no device of the runtime), ACCEL_ERROR_TIMEOUT,
 * ACCEL_ERROR_RESOURCE_EXHAUSTED (no room there), ACCEL_ERROR_NOT_FOUND (the
 * only copy is a spill file that is gone, unreadable or fails its checksum;
 * the message names the file), errors of the copy (ACCEL_ERROR_DEVICE_LOST). */
ACCEL_API accel_status_t accel_object_get(accel_object_t object, int32_t location, uint64_t timeout_ns,
                                          accel_object_view_t* out_view); /* [out] */

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_object_view_get_info(accel_object_view_t view,
                                                    accel_object_view_info_t* out_info); /* [out] */

/* Releases the view: its replica may be dropped or moved again.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_object_view_release(accel_object_view_t view);

/* The store's figures at `location`. Returns ACCEL_ERROR_INVALID_HANDLE,
 * ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_object_store_get_usage(accel_runtime_t runtime, int32_t location,
                                                      accel_object_store_usage_t* out_usage); /* [out] */

/* Tasks and objects (docs/objectstore.md, "Tasks and objects", "Lineage").
 * A task's objects are the accel_task_desc_t::near_objects: the task holds a
 * reference to each while it lives (the submitter may release its own at
 * once), reads them through its context, and is placed near their replicas.
 * A task's result is an object it puts and names with
 * accel_task_context_set_result; the future holds a reference to it until
 * released. The object then records the task (its lineage): when every copy
 * of it is lost with a device, a get runs the task again (same function,
 * user data, request and objects, on the devices left) and serves its new
 * result. Such a task's user data is released when the object is freed,
 * not when the task ends. */

/* Inside a task: `object` (an object of the task's runtime) becomes the
 * task's result, replacing an earlier one; the task keeps a reference.
 * Returns ACCEL_ERROR_INVALID_HANDLE (not the calling task's context, a
 * stale object), ACCEL_ERROR_INVALID_ARGUMENT (an object of another
 * runtime), ACCEL_ERROR_FAILED_PRECONDITION (an actor's call or init: only
 * tasks have results). */
ACCEL_API accel_status_t accel_task_context_set_result(accel_task_context_t context, accel_object_t object);

/* Inside a task: a new reference to its object `index` (of near_objects);
 * release it. Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT
 * (NULL output, `index` past the task's objects). */
ACCEL_API accel_status_t accel_task_context_get_object(accel_task_context_t context, uint32_t index,
                                                       accel_object_t* out_object); /* [out] */

/* A new reference to the result of the task behind `future`; release it.
 * Returns ACCEL_NOT_READY (the task has not ended), the task's error when it
 * failed, ACCEL_ERROR_NOT_FOUND (it ended without a result),
 * ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL output). */
ACCEL_API accel_status_t accel_future_get_object(accel_future_t future, accel_object_t* out_object); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Across processes                                                           */
/*===----------------------------------------------------------------------===*/

#define ACCEL_OBJECT_TOKEN_SIZE 64

/* A shared object's token (accel_object_share): printable, NUL-terminated
 * ("accel-object:" and 32 hex digits), to pass through argv, a pipe, the
 * environment or a Python str to another process of the same user on this
 * node. It names the object while any process holds a reference to it. */
typedef struct accel_object_token_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN */
  uint32_t struct_size;
  const void* next;
  char text[ACCEL_OBJECT_TOKEN_SIZE];
} accel_object_token_t;

/* Makes `object` readable by other processes of this user on this node: its
 * bytes are copied once (from the host replica, else a device's, else its
 * spill file) into a memfd sealed against writes and resizing, registered
 * with the node's object agent (started when none runs), which holds a
 * reference for this process until the object's last reference here goes.
 * Sharing again returns the same token; an imported object's token is the
 * one it was imported by. Blocks for the copy and one round trip to the agent.
 * Returns ACCEL_ERROR_INVALID_HANDLE (a released object, or one of a
 *         destroyed runtime),
 *         ACCEL_ERROR_INVALID_ARGUMENT (`out_token` NULL, with another stype,
 *         or a struct_size without the whole `text`),
 *         ACCEL_ERROR_RESOURCE_EXHAUSTED (no memfd or memory for the copy,
 *         or no room for a host replica to read a spill file into),
 *         ACCEL_ERROR_NOT_FOUND (the only copy, a spill file, is unreadable),
 *         ACCEL_ERROR_FAILED_PRECONDITION (the agent cannot be reached or
 *         started, or refused: the message says which, e.g. its directory
 *         is not 0700 and ours, its executable is missing). */
ACCEL_API accel_status_t accel_object_share(accel_object_t object, accel_object_token_t* out_token); /* [out] */

/* The object another process shared as `token`, as a new object of
 * `runtime`'s store holding one reference. Its host replica is a read-only
 * MAP_SHARED mapping of the shared memfd: a host get is zero-copy, device
 * gets copy from it. That replica is never evicted, moved or spilled and is
 * not counted in the store's host figures (its pages are the memfd's). The
 * agent counts a reference for this process until the object's last
 * reference is released here, or this process ends.
 * Returns ACCEL_ERROR_INVALID_HANDLE (runtime),
 *         ACCEL_ERROR_INVALID_ARGUMENT (`token` or `out_object` NULL, or
 *         `token` is not an object token; the message quotes it),
 *         ACCEL_ERROR_NOT_FOUND (no process on this node holds an object by
 *         that token: released everywhere, or never shared),
 *         ACCEL_ERROR_FAILED_PRECONDITION (the agent cannot be reached,
 *         started or refused; or what it gave is not a sealed memfd of the
 *         size it says),
 *         ACCEL_ERROR_RESOURCE_EXHAUSTED (the mapping failed). */
ACCEL_API accel_status_t accel_object_import(accel_runtime_t runtime, const char* token, /* [in] */
                                             accel_object_t* out_object);                /* [out] */

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_OBJECT_STORE_H_ */
