/* libaccel-runtime: the scheduler over libaccel's public API (docs/scheduler.md).
 *
 * Tasks and placement groups ask for devices by capability (a selector,
 * docs/selectors.md), a share of each device's compute and bytes of its
 * memory; the runtime places them on physical devices by topology
 * (docs/planner.md), runs tasks on its worker threads with their memory share
 * enforced by a libaccel tenant (docs/memory-limits.md), retries them on
 * device loss and says why anything waits.
 *
 * Versioned on its own: ACCEL_RUNTIME_VERSION, libaccel-runtime.so.1, symbol
 * versions ACCEL_RUNTIME_1.0, ACCEL_RUNTIME_1.1 (queues, preemption,
 * actors), ACCEL_RUNTIME_1.2 (the object store, accel/object_store.h) and
 * ACCEL_RUNTIME_1.3 (the decision log) and ACCEL_RUNTIME_1.4 (task groups;
 * docs/scheduler.md, "Versions"). The rules of accel.h hold here too: structs
 * start with the header (stype 2000..2999 are this library's), errors are
 * accel_status_t with the message in accel_last_error()'s thread-local slot
 * (docs/errors.md), handles are validated on every call.
 *
 * Ownership: every create/submit is paired with its destroy/release; a
 * handle is stale afterwards. accel_runtime_destroy cancels what has not
 * started, waits for what runs, and makes every handle of the runtime stale
 * except futures, which stay readable until released.
 *
 * Threading: every function is thread-safe. Task functions run on the
 * runtime's worker threads (a task without devices, dependencies or retries
 * also on a thread that waits for it without a timeout before a worker took
 * it: docs/scheduler.md, "The direct path") and may submit, wait on and
 * cancel tasks; a task waiting on another task holds its worker for that
 * time. */
#ifndef ACCEL_RUNTIME_H_
#define ACCEL_RUNTIME_H_

#include <accel/accel.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_RUNTIME_VERSION_MAJOR 1
#define ACCEL_RUNTIME_VERSION_MINOR 4
#define ACCEL_RUNTIME_VERSION ACCEL_MAKE_VERSION(ACCEL_RUNTIME_VERSION_MAJOR, ACCEL_RUNTIME_VERSION_MINOR, 0)

typedef struct accel_runtime_s* accel_runtime_t;
typedef struct accel_future_s* accel_future_t;
typedef struct accel_placement_group_s* accel_placement_group_t;
typedef struct accel_queue_s* accel_queue_t;           /* 1.1 */
typedef struct accel_actor_s* accel_actor_t;           /* 1.1 */
typedef struct accel_object_s* accel_object_t;         /* 1.2: an object of the store (accel/object_store.h) */
typedef struct accel_task_group_s* accel_task_group_t; /* 1.4 */
/* Valid only during the task function's call, on its thread. */
typedef struct accel_task_context_s* accel_task_context_t;

typedef enum accel_runtime_structure_type_t {
  ACCEL_STRUCTURE_TYPE_RUNTIME_DESC = 2000,
  ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST = 2001,
  ACCEL_STRUCTURE_TYPE_TASK_DESC = 2002,
  ACCEL_STRUCTURE_TYPE_BUNDLE = 2003,
  ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC = 2004,
  ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE = 2005,
  ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS = 2006,
  ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE = 2007,
  ACCEL_STRUCTURE_TYPE_QUEUE_DESC = 2008,  /* 1.1 */
  ACCEL_STRUCTURE_TYPE_QUEUE_USAGE = 2009, /* 1.1 */
  ACCEL_STRUCTURE_TYPE_ACTOR_DESC = 2010,  /* 1.1 */
  ACCEL_STRUCTURE_TYPE_ACTOR_INFO = 2011,  /* 1.1 */
  /* 1.2: the object store (accel/object_store.h) */
  ACCEL_STRUCTURE_TYPE_OBJECT_STORE_DESC = 2012,
  ACCEL_STRUCTURE_TYPE_OBJECT_PUT_DESC = 2013,
  ACCEL_STRUCTURE_TYPE_OBJECT_INFO = 2014,
  ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO = 2015,
  ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE = 2016,
  ACCEL_STRUCTURE_TYPE_OBJECT_FILE_DESC = 2017,
  ACCEL_STRUCTURE_TYPE_OBJECT_TOKEN = 2018,
  ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT = 2019,   /* 1.3 */
  ACCEL_STRUCTURE_TYPE_TASK_GROUP_DESC = 2020, /* 1.4 */
  ACCEL_RUNTIME_STRUCTURE_TYPE_FORCE32 = 0x7FFFFFFF
} accel_runtime_structure_type_t;

/* The version of the library loaded (ACCEL_RUNTIME_VERSION it implements). */
ACCEL_API uint32_t accel_runtime_version(void);

/*===----------------------------------------------------------------------===*/
/* Runtime                                                                    */
/*===----------------------------------------------------------------------===*/

typedef struct accel_runtime_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_RUNTIME_DESC */
  uint32_t struct_size;
  const void* next;
  uint32_t worker_threads; /* 0: the CPUs this process may run on (its affinity), at least 2 */
  uint32_t reserved0;      /* 0 */
} accel_runtime_desc_t;

/* Creates a runtime over the physical devices of `instance` (which must
 * outlive it). Each physical device is one resource: compute share 1.0 and
 * its memory (capped by ACCEL_MEMORY_LIMIT), counted once whatever number of
 * backends reach it.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL
 *         output, a wrong header, reserved0 != 0, more than 1024 workers). */
ACCEL_API accel_status_t accel_runtime_create(accel_instance_t instance,
                                              const accel_runtime_desc_t* desc, /* [in][optional] */
                                              accel_runtime_t* out_runtime);    /* [out] */

/* Cancels every task that has not started (their futures complete with
 * ACCEL_ERROR_CANCELLED), waits for running ones, releases placement groups.
 * Waits for calls on this runtime in flight on other threads. Must not be
 * called from a task of this runtime, nor from a callback it runs inside
 * another call on it (a release_user_data): FAILED_PRECONDITION
 * (docs/threading.md).
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_FAILED_PRECONDITION. */
ACCEL_API accel_status_t accel_runtime_destroy(accel_runtime_t runtime);

/* One resource as the runtime sees it now. */
typedef struct accel_runtime_device_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE */
  uint32_t struct_size;
  const void* next;
  accel_physical_device_t physical_device;
  double share_free;     /* of 1.0 */
  uint64_t memory_free;  /* bytes not reserved */
  uint64_t memory_total; /* bytes the runtime hands out: the device's, or its ACCEL_MEMORY_LIMIT */
  uint32_t lost;         /* 1 after a task saw it lost: nothing is placed on it again */
  uint32_t reserved0;
} accel_runtime_device_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (NULL
 * `out_count`). */
ACCEL_API accel_status_t accel_runtime_get_device_count(accel_runtime_t runtime, uint32_t* out_count); /* [out] */
/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (`index`
 * past the count, `out_device` NULL or with a wrong header). */
ACCEL_API accel_status_t accel_runtime_get_device(accel_runtime_t runtime, uint32_t index,
                                                  accel_runtime_device_t* out_device); /* [out] */

/* Counts of every decision since creation (docs/scheduler.md, "Counters"). */
typedef struct accel_runtime_counters_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS */
  uint32_t struct_size;
  const void* next;
  uint64_t submitted; /* tasks accepted by accel_task_submit */
  uint64_t placed;    /* placements made (a retried task is placed again) */
  uint64_t started;   /* task function calls */
  uint64_t finished;  /* tasks that ended with ACCEL_SUCCESS */
  uint64_t failed;    /* tasks that ended with an error other than cancellation */
  uint64_t cancelled; /* tasks that ended with ACCEL_ERROR_CANCELLED */
  uint64_t retried;   /* attempts started again after a device loss */
  uint64_t devices_lost;
  uint64_t pending; /* now: submitted, not yet placed */
  uint64_t running; /* now: placed, not yet ended */
  uint64_t placement_groups_created;
  uint64_t placement_groups_refused;
  /* 1.1 (present when struct_size covers them) */
  uint64_t preempted;      /* running tasks asked to stop to give a queue its quota */
  uint64_t actors_created; /* accel_actor_create calls accepted */
  uint64_t actors_restarted;
  uint64_t actors_died; /* actors that ended DEAD (not destroyed by their owner) */
} accel_runtime_counters_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_runtime_get_counters(accel_runtime_t runtime,
                                                    accel_runtime_counters_t* out_counters); /* [out] */

/* 1.3: the decision log (docs/scheduler.md, "Events"). Off until
 * accel_runtime_set_event_log gives it a capacity; then every decision that a
 * counter counts is also recorded, in order, in a ring of that many events. */
typedef enum accel_runtime_event_kind_t {
  ACCEL_RUNTIME_EVENT_SUBMITTED = 1,      /* a task or actor call was accepted */
  ACCEL_RUNTIME_EVENT_PLACED = 2,         /* it got its devices (`device`, `device_count`; none for a task without) */
  ACCEL_RUNTIME_EVENT_STARTED = 3,        /* its function was called (an attempt) */
  ACCEL_RUNTIME_EVENT_FINISHED = 4,       /* it ended with ACCEL_SUCCESS */
  ACCEL_RUNTIME_EVENT_FAILED = 5,         /* it ended with `status`, an error other than cancellation */
  ACCEL_RUNTIME_EVENT_CANCELLED = 6,      /* it ended cancelled */
  ACCEL_RUNTIME_EVENT_RETRIED = 7,        /* an attempt ended by a device loss is tried again */
  ACCEL_RUNTIME_EVENT_PREEMPTED = 8,      /* it was asked to stop so that a queue under its quota gets its devices */
  ACCEL_RUNTIME_EVENT_DEVICE_LOST = 9,    /* runtime device `device` was found lost */
  ACCEL_RUNTIME_EVENT_GROUP_CREATED = 10, /* a placement group was placed (`device`: its first device) */
  ACCEL_RUNTIME_EVENT_GROUP_REFUSED = 11, /* a placement group could not be placed (`status`) */
  ACCEL_RUNTIME_EVENT_ACTOR_CREATED = 12,
  ACCEL_RUNTIME_EVENT_ACTOR_RESTARTED = 13,
  ACCEL_RUNTIME_EVENT_ACTOR_DIED = 14,
  ACCEL_RUNTIME_EVENT_KIND_FORCE32 = 0x7FFFFFFF
} accel_runtime_event_kind_t;

typedef struct accel_runtime_event_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT */
  uint32_t struct_size;
  const void* next;
  uint64_t sequence;     /* 1, 2, ...: the order of the decisions */
  uint64_t time_ns;      /* when, in nanoseconds since the runtime was created (a steady clock) */
  uint32_t kind;         /* accel_runtime_event_kind_t */
  int32_t status;        /* FAILED, GROUP_REFUSED: the error; else ACCEL_SUCCESS */
  uint64_t id;           /* the task's or call's id, the group's or actor's serial; 0 for DEVICE_LOST */
  uint32_t device;       /* the first device (an index of accel_runtime_get_device); UINT32_MAX: none */
  uint32_t device_count; /* how many devices */
  char name[64];         /* the task's, call's, group's or actor's name, cut to 63 bytes; "" for DEVICE_LOST */
} accel_runtime_event_t;

#define ACCEL_RUNTIME_EVENT_LOG_MAX (1u << 20)

/* Keeps the last `capacity` decisions from now on (0 turns the log off and
 * drops what it holds; at most ACCEL_RUNTIME_EVENT_LOG_MAX). Changing the
 * capacity keeps the newest events that fit; sequence numbers go on.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (past the
 * maximum). */
ACCEL_API accel_status_t accel_runtime_set_event_log(accel_runtime_t runtime, uint32_t capacity);

/* Copies the events with a sequence number above `after`, oldest first, at
 * most `capacity` of them, into `out_events`, and their number into
 * `out_count`. `out_events[0]`'s header gives the element size (its
 * struct_size, at least the 1.3 size); each element is written at that
 * stride with its header set.
 * `out_dropped` [optional]: how many events after `after` the ring no longer
 * holds (it wrapped): a reader that polls with the last sequence it saw knows
 * what it missed. Returns ACCEL_ERROR_INVALID_HANDLE,
 * ACCEL_ERROR_INVALID_ARGUMENT (`out_count` NULL, `out_events` NULL with a
 * non-zero capacity, a wrong header). */
ACCEL_API accel_status_t accel_runtime_get_events(accel_runtime_t runtime, uint64_t after, uint32_t capacity,
                                                  accel_runtime_event_t* out_events, /* [out] */
                                                  uint32_t* out_count,               /* [out] */
                                                  uint64_t* out_dropped);            /* [out, optional] */

/*===----------------------------------------------------------------------===*/
/* Resource requests and placement groups                                     */
/*===----------------------------------------------------------------------===*/

/* What a task or a bundle asks for: `device_count` devices matching
 * `selector`, with `share` of each one's compute and `memory` bytes of each
 * one's memory (0: `share` of the device's memory). */
typedef struct accel_resource_request_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST */
  uint32_t struct_size;
  const void* next;
  uint32_t device_count; /* 0: a task that needs no device */
  uint32_t reserved0;    /* 0 */
  double share;          /* in (0, 1] when device_count > 0 */
  uint64_t memory;       /* bytes per device; 0: share * the device's memory */
  const char* selector;  /* [optional] NULL or "": any device */
  /* [optional] Run inside bundle `bundle_index` of this placement group: the
   * task takes its devices and capacity from the bundle's reservation. */
  accel_placement_group_t placement_group;
  uint32_t bundle_index;
  uint32_t reserved1; /* 0 */
} accel_resource_request_t;

typedef enum accel_placement_strategy_t {
  ACCEL_PLACEMENT_STRATEGY_PACK = 0,          /* as few domains of `level` as possible, preferred */
  ACCEL_PLACEMENT_STRATEGY_SPREAD = 1,        /* as many domains of `level` as possible, preferred */
  ACCEL_PLACEMENT_STRATEGY_STRICT_PACK = 2,   /* every bundle inside one domain of `level` */
  ACCEL_PLACEMENT_STRATEGY_STRICT_SPREAD = 3, /* every bundle in a different domain of `level` */
  ACCEL_PLACEMENT_STRATEGY_FORCE32 = 0x7FFFFFFF
} accel_placement_strategy_t;

typedef enum accel_topology_level_t {
  ACCEL_TOPOLOGY_LEVEL_CLIQUE = 0,    /* devices joined by one fabric (NVLink, Infinity Fabric) */
  ACCEL_TOPOLOGY_LEVEL_PCIE_ROOT = 1, /* one PCIe root complex */
  ACCEL_TOPOLOGY_LEVEL_NUMA = 2,      /* one NUMA node */
  ACCEL_TOPOLOGY_LEVEL_NODE = 3,      /* one machine */
  ACCEL_TOPOLOGY_LEVEL_RACK = 4,
  ACCEL_TOPOLOGY_LEVEL_BLOCK = 5,
  ACCEL_TOPOLOGY_LEVEL_FORCE32 = 0x7FFFFFFF
} accel_topology_level_t;

typedef struct accel_placement_group_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC */
  uint32_t struct_size;
  const void* next;
  const char* name;                        /* [optional] for messages */
  const accel_resource_request_t* bundles; /* `bundle_count` requests; placement_group must be NULL */
  uint32_t bundle_count;                   /* > 0 */
  accel_placement_strategy_t strategy;
  accel_topology_level_t level;
  uint32_t required; /* STRICT_* only: 1 the constraint must hold; 0 falls back to PACK/SPREAD */
  /* 1.1 (present when struct_size covers it) */
  accel_queue_t queue; /* [optional] a leaf queue: the reservation counts against its and its ancestors' quota and
                          limits for the group's life; NULL: outside queue accounting */
  /* 1.2 */
  uint32_t flags;     /* ACCEL_PLACEMENT_GROUP_* */
  uint32_t reserved1; /* 0 */
} accel_placement_group_desc_t;

/* accel_placement_group_desc_t::flags (1.2). WAIT: a group that cannot be
 * placed now (but could be on the runtime's devices, all free) is made
 * pending instead of refused: it holds nothing, and is placed, every bundle
 * at once, as soon as it fits (tried before the waiting tasks whenever
 * capacity frees). accel_placement_group_wait waits for that; tasks submitted
 * into its bundles wait until then; accel_placement_group_get_message says
 * why it waits. */
#define ACCEL_PLACEMENT_GROUP_WAIT 0x1u

/* Reserves every bundle or none, now (or, with ACCEL_PLACEMENT_GROUP_WAIT,
 * as soon as they fit). On success each bundle holds its
 * devices until the group is destroyed; tasks run inside a bundle through
 * accel_resource_request_t.placement_group.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (bad
 *         header, zero bundles, a bundle with zero devices, a share that is
 *         NaN or outside (0, 1], a selector that does not parse: the message
 *         names "bundles[i].field"; a queue with child queues or of
 *         another runtime), ACCEL_ERROR_RESOURCE_EXHAUSTED when the group
 *         cannot be placed now or would take its queue past a limit (nothing
 *         is held; the message says which constraint, capacity or queue
 *         decided it). */
ACCEL_API accel_status_t accel_placement_group_create(accel_runtime_t runtime,
                                                      const accel_placement_group_desc_t* desc, /* [in] */
                                                      accel_placement_group_t* out_group);      /* [out] */

/* Frees the reservation once the tasks running inside it end; tasks still
 * waiting for one of its bundles fail with ACCEL_ERROR_CANCELLED.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_placement_group_destroy(accel_placement_group_t group);

/* One device a bundle holds. */
typedef struct accel_bundle_device_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE */
  uint32_t struct_size;
  const void* next;
  uint32_t bundle; /* index into desc->bundles */
  uint32_t rank;   /* topology rank: node, then clique, then position; consecutive ranks are nearest */
  accel_physical_device_t physical_device;
  double share;
  uint64_t memory;
} accel_bundle_device_t;

/* The group's devices, ordered by topology rank (the enumeration pattern:
 * `*inout_count` in, entries written out; docs/abi.md).
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_placement_group_get_devices(accel_placement_group_t group, uint32_t* inout_count,
                                                           accel_bundle_device_t* out_devices); /* [out][optional] */

/* 1.2: waits until the group is placed (ACCEL_PLACEMENT_GROUP_WAIT), or
 * `timeout_ns` passed (ACCEL_TIMEOUT_INFINITE: no limit). A placed group
 * returns at once. Returns ACCEL_SUCCESS, ACCEL_ERROR_TIMEOUT (still
 * pending), ACCEL_ERROR_CANCELLED (destroyed, or its runtime destroyed, while
 * pending), ACCEL_ERROR_INVALID_HANDLE. While pending, get_devices returns
 * ACCEL_NOT_READY and no entries. */
ACCEL_API accel_status_t accel_placement_group_wait(accel_placement_group_t group, uint64_t timeout_ns);

/* 1.2: why a pending group waits ("placed" once placed), the text pattern
 * of accel_future_get_message. Returns ACCEL_ERROR_INVALID_HANDLE,
 * ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_placement_group_get_message(accel_placement_group_t group, size_t size,
                                                           char* out_text,    /* [out][optional] */
                                                           size_t* out_size); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Tasks and futures                                                          */
/*===----------------------------------------------------------------------===*/

/* A task's body. Its return value is the task's result: ACCEL_SUCCESS, or
 * an error (the thread's accel_last_error() at return is kept as the
 * message). ACCEL_ERROR_DEVICE_LOST retries the task elsewhere while
 * retries remain. */
typedef accel_status_t (*accel_task_function_t)(accel_task_context_t context, void* user_data);

typedef struct accel_task_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_TASK_DESC */
  uint32_t struct_size;
  const void* next;
  const char* name; /* [optional] for messages and explanations */
  accel_task_function_t function;
  void* user_data;
  /* [optional] Called once with `user_data` when the runtime no longer needs it. */
  void (*release_user_data)(void* user_data);
  const accel_resource_request_t* request; /* [optional] NULL: no device */
  const accel_future_t* dependencies;      /* [optional] run only after all of these succeeded */
  uint32_t dependency_count;
  uint32_t max_retries; /* attempts after a device loss */
  /* 1.1 (present when struct_size covers them) */
  accel_queue_t queue;  /* [optional] NULL: the runtime's default queue (no quota, no limit, weight 1) */
  int32_t priority;     /* higher runs first among the waiting tasks of its queue; 0 default */
  uint32_t preemptible; /* 1: may be asked to stop while running so that a queue under its quota gets it */
  /* 1.2: [optional] objects the task reads (accel/object_store.h): the task
   * holds a reference to each while it lives and reads them through
   * accel_task_context_get_object; its devices are first sought among those
   * holding a ready replica of one of them; when none of those has room, it
   * is placed as without them. */
  const accel_object_t* near_objects;
  uint32_t near_object_count;
  uint32_t reserved2; /* 0 */
} accel_task_desc_t;

/* Submits a task; its future completes when it ends. A request no device of
 * the runtime could ever satisfy fails here (NOT_FOUND: the message says,
 * per device, which part of the selector missed; RESOURCE_EXHAUSTED: larger
 * than any device). On success `release_user_data` is the runtime's to call;
 * on failure it is not called.
 * Returns ACCEL_ERROR_INVALID_HANDLE (the runtime, a dependency or the
 *         placement group), ACCEL_ERROR_INVALID_ARGUMENT (NULL function, a bad
 *         header, share NaN or outside (0, 1], a selector that does not
 *         parse, bundle_index past the group), ACCEL_ERROR_NOT_FOUND,
 *         ACCEL_ERROR_RESOURCE_EXHAUSTED, ACCEL_ERROR_FAILED_PRECONDITION
 *         (the runtime is being destroyed). */
ACCEL_API accel_status_t accel_task_submit(accel_runtime_t runtime, const accel_task_desc_t* desc, /* [in] */
                                           accel_future_t* out_future);                            /* [out] */

/* ACCEL_NOT_READY while the task has not ended, else its result.
 * Returns ACCEL_ERROR_INVALID_HANDLE for a bad future. */
ACCEL_API accel_status_t accel_future_query(accel_future_t future);

/* Waits up to `timeout_ns` for the task to end and returns its result
 * (ACCEL_ERROR_TIMEOUT when it did not end in time; the task goes on).
 * With ACCEL_TIMEOUT_INFINITE, a task without devices, dependencies or
 * retries that no worker has started runs on the calling thread
 * (docs/scheduler.md, "The direct path"); a finite timeout never runs it.
 * Returns ACCEL_ERROR_INVALID_HANDLE for a bad future. */
ACCEL_API accel_status_t accel_future_wait(accel_future_t future, uint64_t timeout_ns);

/* Cancels the task: one not yet started ends now with ACCEL_ERROR_CANCELLED
 * (so do tasks depending on it); a running one sees
 * accel_task_context_is_cancelled return 1 and ends when its function
 * returns. Cancelling an ended task changes nothing.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_future_cancel(accel_future_t future);

/* Text about the task: after it ended with an error, the message of that
 * error; while it waits, why it waits ("capacity: ...", "waiting for
 * dependency 0 ('load')", "bundle 1 of placement group 'g': 0.25 of its
 * share free, 0.5 asked"); "" otherwise. The size pattern of
 * accel_physical_device_explain.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_future_get_message(accel_future_t future, size_t size,
                                                  char* out_text,    /* [out][optional] */
                                                  size_t* out_size); /* [out][optional] */

/* Releases the handle; the task itself goes on.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_future_release(accel_future_t future);

/*===----------------------------------------------------------------------===*/
/* Task groups (1.4)                                                          */
/*===----------------------------------------------------------------------===*/

/* A task group: tasks submitted without a future each and waited for
 * together, tbb::task_group's counterpart (docs/scheduler.md, "Task groups").
 * Not a placement group: its tasks are placed one by one, as submitted.
 *
 *   accel_task_group_t g;
 *   accel_task_group_create(rt, NULL, &g);
 *   for (int i = 0; i < n; ++i) accel_task_group_submit(g, &desc[i]);
 *   accel_status_t s = accel_task_group_wait(g, ACCEL_TIMEOUT_INFINITE);  // the first failure, if any
 *   accel_task_group_destroy(g); */
typedef struct accel_task_group_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_TASK_GROUP_DESC */
  uint32_t struct_size;
  const void* next;
  const char* name; /* [optional] for messages */
} accel_task_group_desc_t;

/* `desc` may be NULL (an unnamed group).
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT (a bad
 *         header, NULL output), ACCEL_ERROR_FAILED_PRECONDITION (the runtime
 *         is being destroyed). */
ACCEL_API accel_status_t accel_task_group_create(accel_runtime_t runtime,
                                                 const accel_task_group_desc_t* desc, /* [in][optional] */
                                                 accel_task_group_t* out_group);      /* [out] */

/* Submits a task into the group, as accel_task_submit does (every field of
 * `desc` holds, and a refused submission is refused here, with the same
 * codes), but with no future: the group's wait covers it. A task submitted
 * while the group is cancelled ends ACCEL_ERROR_CANCELLED without running.
 * Returns accel_task_submit's codes; ACCEL_ERROR_INVALID_HANDLE for a bad
 * group or one whose runtime was destroyed. */
ACCEL_API accel_status_t accel_task_group_submit(accel_task_group_t group, const accel_task_desc_t* desc); /* [in] */

/* Waits up to `timeout_ns` until every task of the group has ended
 * (ACCEL_ERROR_TIMEOUT otherwise: they go on). Then returns ACCEL_SUCCESS
 * when all that ended since the previous wait returned succeeded, else the
 * first failure's code, with that task's name and message and the count of
 * failures ("2 of the tasks of task group 'g' failed; the first: task 7
 * ('load'): ..."), or
 * ACCEL_ERROR_CANCELLED when the group was cancelled; either way the group is
 * then clear (not cancelled, no failure kept) and may take new tasks. With
 * ACCEL_TIMEOUT_INFINITE, tasks the calling thread submitted without
 * devices, dependencies or retries that no worker has started run on the
 * calling thread meanwhile (as accel_future_wait runs its own).
 * Returns ACCEL_ERROR_INVALID_HANDLE; ACCEL_ERROR_FAILED_PRECONDITION from
 * inside a task of the same group (the wait would count the caller). */
ACCEL_API accel_status_t accel_task_group_wait(accel_task_group_t group, uint64_t timeout_ns);

/* ACCEL_NOT_READY while a task of the group has not ended, else
 * ACCEL_SUCCESS (failures are the wait's to report). It tells a wait's
 * ACCEL_ERROR_TIMEOUT from a task that failed with that code.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_task_group_query(accel_task_group_t group);

/* Cancels the group: its tasks not yet started end ACCEL_ERROR_CANCELLED
 * without running, running ones see accel_task_context_is_cancelled
 * return 1, and so do tasks submitted until a wait returns.
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_task_group_cancel(accel_task_group_t group);

/* Releases the handle; tasks already submitted go on and end as usual
 * (nothing waits for them: wait first when their end matters).
 * Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_task_group_destroy(accel_task_group_t group);

/*===----------------------------------------------------------------------===*/
/* Queues (1.1)                                                               */
/*===----------------------------------------------------------------------===*/

/* A queue: a node of the hierarchy (department > project > ...) whose tasks
 * and actors share a guaranteed quota, an upper limit and an over-quota
 * weight (docs/scheduler.md, "Queues"). Amounts are device equivalents (the
 * sum of compute shares held: one whole device is 1.0) and bytes of device
 * memory; a queue's usage is its own tasks' plus its children's. */
typedef struct accel_queue_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_QUEUE_DESC */
  uint32_t struct_size;
  const void* next;
  const char* name;      /* unique among its siblings, non-empty */
  accel_queue_t parent;  /* [optional] NULL: a top-level queue */
  double quota_devices;  /* guaranteed, >= 0 */
  double limit_devices;  /* at most; 0: no limit; else >= quota_devices */
  uint64_t quota_memory; /* guaranteed bytes */
  uint64_t limit_memory; /* at most; 0: no limit; else >= quota_memory */
  double weight;         /* share of what is left over quota among siblings, > 0; 0 means 1 */
} accel_queue_desc_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE (runtime, parent),
 *         ACCEL_ERROR_INVALID_ARGUMENT (a bad header, an empty or duplicate
 *         name, a NaN or negative amount, a limit below its quota, a parent
 *         of another runtime: the message names the field). */
ACCEL_API accel_status_t accel_queue_create(accel_runtime_t runtime, const accel_queue_desc_t* desc, /* [in] */
                                            accel_queue_t* out_queue);                               /* [out] */

/* Destroys a queue that has no child queue and no task or actor that has
 * not ended. Returns ACCEL_ERROR_INVALID_HANDLE,
 * ACCEL_ERROR_FAILED_PRECONDITION (children or work left: the message
 * counts them). */
ACCEL_API accel_status_t accel_queue_destroy(accel_queue_t queue);

/* What a queue holds now, its descendants included. */
typedef struct accel_queue_usage_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_QUEUE_USAGE */
  uint32_t struct_size;
  const void* next;
  double devices;    /* device equivalents held by running tasks and live actors */
  uint64_t memory;   /* bytes held */
  uint64_t pending;  /* tasks waiting for capacity (dependencies met) */
  uint64_t running;  /* tasks placed, not yet ended */
  uint64_t finished; /* tasks that ended, whatever their result */
  uint64_t preempted;
  /* Dominant share: max(devices / cluster devices, memory / cluster
   * memory), the quantity fair share equalises (weighted) over quota. */
  double dominant_share;
  uint32_t over_quota; /* 1: it holds more than its quota in some resource */
  uint32_t reserved0;
} accel_queue_usage_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_queue_get_usage(accel_queue_t queue, accel_queue_usage_t* out_usage); /* [out] */

/*===----------------------------------------------------------------------===*/
/* Actors (1.1)                                                               */
/*===----------------------------------------------------------------------===*/

/* A stateful worker pinned to one reservation for its life: its calls run
 * one at a time, in the order they were made, on the reservation's devices,
 * under one memory tenant that lives as long as the actor (memory allocated
 * by one call stays counted for the next) (docs/scheduler.md, "Actors"). */
typedef enum accel_actor_state_t {
  ACCEL_ACTOR_STATE_PENDING = 0,    /* waiting for its reservation */
  ACCEL_ACTOR_STATE_ALIVE = 1,      /* placed; init has run */
  ACCEL_ACTOR_STATE_RESTARTING = 2, /* lost a device; being placed again */
  ACCEL_ACTOR_STATE_DEAD = 3,       /* ended: see accel_actor_get_message */
  ACCEL_ACTOR_STATE_FORCE32 = 0x7FFFFFFF
} accel_actor_state_t;

typedef struct accel_actor_desc_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_ACTOR_DESC */
  uint32_t struct_size;
  const void* next;
  const char* name;                        /* [optional] for messages */
  const accel_resource_request_t* request; /* [optional] NULL: no device; placement_group allowed */
  /* [optional] Runs first on the reservation and again after each restart
   * (accel_task_context_get_attempt counts restarts). An error other than
   * ACCEL_ERROR_DEVICE_LOST kills the actor. */
  accel_task_function_t init;
  /* [optional] Runs once, after the last call, when the actor is destroyed
   * or dies (not before a restart: the devices were lost). */
  accel_task_function_t finalize;
  void* user_data; /* the actor's state: init's, finalize's and every call's accel_task_context_get_actor_data */
  void (*release_user_data)(void* user_data); /* [optional] after finalize */
  uint32_t max_restarts;                      /* restarts after a device loss */
  int32_t priority;                           /* in its queue */
  accel_queue_t queue;                        /* [optional] its reservation counts against this queue */
} accel_actor_desc_t;

/* Creates the actor and asks for its reservation; returns at once (PENDING
 * until placed). Requests that could never be placed fail here as for
 * accel_task_submit. Actors are never preempted.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT,
 *         ACCEL_ERROR_NOT_FOUND, ACCEL_ERROR_RESOURCE_EXHAUSTED,
 *         ACCEL_ERROR_FAILED_PRECONDITION (the runtime is being destroyed). */
ACCEL_API accel_status_t accel_actor_create(accel_runtime_t runtime, const accel_actor_desc_t* desc, /* [in] */
                                            accel_actor_t* out_actor);                               /* [out] */

/* Calls a method: `desc` as for accel_task_submit, with `request` NULL (the
 * call runs on the actor's reservation), `queue` NULL, priority and
 * preemptible 0. Calls run one at a time in the order accepted, each after
 * its dependencies; the future completes with the method's result. A call
 * that returns ACCEL_ERROR_DEVICE_LOST restarts the actor (while
 * max_restarts allows) and is itself run again while its max_retries
 * allows; calls waiting behind it wait for the restart.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT,
 *         ACCEL_ERROR_FAILED_PRECONDITION (the actor is dead or destroyed:
 *         the message says why it died). */
ACCEL_API accel_status_t accel_actor_call(accel_actor_t actor, const accel_task_desc_t* desc, /* [in] */
                                          accel_future_t* out_future);                        /* [out] */

typedef struct accel_actor_info_t {
  uint32_t stype; /* ACCEL_STRUCTURE_TYPE_ACTOR_INFO */
  uint32_t struct_size;
  const void* next;
  accel_actor_state_t state;
  uint32_t restarts;      /* restarts so far */
  uint64_t calls_pending; /* accepted, not yet ended */
  uint64_t calls_done;    /* ended, whatever their result */
} accel_actor_info_t;

/* Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_actor_get_info(accel_actor_t actor, accel_actor_info_t* out_info); /* [out] */

/* Why the actor is DEAD ("actor 'kv': init returned ...", "actor 'kv': lost
 * device 3 and no restart is left"), why it is PENDING, or "". The size
 * pattern of accel_future_get_message.
 * Returns ACCEL_ERROR_INVALID_HANDLE, ACCEL_ERROR_INVALID_ARGUMENT. */
ACCEL_API accel_status_t accel_actor_get_message(accel_actor_t actor, size_t size, char* out_text, /* [out][optional] */
                                                 size_t* out_size);                                /* [out][optional] */

/* Cancels the calls that have not started, lets the running one end, runs
 * finalize, then frees the reservation; returns at once. The handle is stale
 * afterwards. Returns ACCEL_ERROR_INVALID_HANDLE. */
ACCEL_API accel_status_t accel_actor_destroy(accel_actor_t actor);

/*===----------------------------------------------------------------------===*/
/* Task context (valid only inside the task function)                         */
/*===----------------------------------------------------------------------===*/

/* The devices the task got, in topology rank order: one access path (the
 * first, in the stable order) of each physical device. The task's device
 * allocations on this instance count against its share there and are
 * refused on every other device (a libaccel tenant bound to the thread).
 * Each returns ACCEL_ERROR_INVALID_HANDLE for a context that is not the
 * calling task's, ACCEL_ERROR_INVALID_ARGUMENT for a NULL output or an
 * index past the count. */
ACCEL_API accel_status_t accel_task_context_get_device_count(accel_task_context_t context, uint32_t* out_count);
ACCEL_API accel_status_t accel_task_context_get_device(accel_task_context_t context, uint32_t index,
                                                       accel_device_t* out_device);
ACCEL_API accel_status_t accel_task_context_get_physical_device(accel_task_context_t context, uint32_t index,
                                                                accel_physical_device_t* out_physical_device);
/* The memory the task may allocate on device `index`. */
ACCEL_API accel_status_t accel_task_context_get_memory_limit(accel_task_context_t context, uint32_t index,
                                                             uint64_t* out_bytes);
/* 0 for the first attempt, 1 for the first retry, ... */
ACCEL_API accel_status_t accel_task_context_get_attempt(accel_task_context_t context, uint32_t* out_attempt);
/* Writes 1 once accel_future_cancel, the runtime's destruction, a
 * preemption (1.1) or accel_task_group_cancel (1.4) asked the task to stop. */
ACCEL_API accel_status_t accel_task_context_is_cancelled(accel_task_context_t context, uint32_t* out_cancelled);
/* 1.1: writes 1 once the task was preempted: when its function returns
 * anything but ACCEL_SUCCESS it is queued again (same attempt, same
 * priority) instead of ending. */
ACCEL_API accel_status_t accel_task_context_is_preempted(accel_task_context_t context, uint32_t* out_preempted);
/* 1.1: the actor's `user_data` inside one of its calls or its init/finalize;
 * NULL inside a plain task. */
ACCEL_API accel_status_t accel_task_context_get_actor_data(accel_task_context_t context, void** out_user_data);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RUNTIME_H_ */
