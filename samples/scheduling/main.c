/* Scheduling by capability with libaccel-runtime (docs/scheduler.md): run on a
 * simulated 8-GPU node (ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8).
 *
 * 1. A gang of 8 bundles reserved inside one NVLink clique (STRICT_PACK),
 *    reported in topology rank order.
 * 2. Tasks asking by capability ("kind == gpu && mem >= 40GiB && bf16") for a
 *    quarter of a device and 8 GiB of its memory: inside the task an
 *    allocation within the share succeeds and one past it is refused for that
 *    task alone.
 * 3. A task that cannot run now says why (the gang holds every device).
 * 4. An actor whose calls run in order on one reservation, keeping state.
 * 5. Two queues with weights 1 and 3, and the runtime's counters.
 * Exits 1 on any unexpected result. */
#include <accel/runtime.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    accel_status_t s_ = (call);                                                                  \
    if (s_ < 0) {                                                                                \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, accel_status_name(s_), accel_last_error()); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "unexpected: " #cond ": " __VA_ARGS__); \
      fprintf(stderr, "\n");                                  \
      return 1;                                               \
    }                                                         \
  } while (0)

static const unsigned long long kGiB = 1ULL << 30;

static accel_resource_request_t request(uint32_t devices, double share, uint64_t memory, const char* selector) {
  accel_resource_request_t r;
  memset(&r, 0, sizeof(r));
  r.stype = ACCEL_STRUCTURE_TYPE_RESOURCE_REQUEST;
  r.struct_size = sizeof(r);
  r.device_count = devices;
  r.share = share;
  r.memory = memory;
  r.selector = selector;
  return r;
}

static accel_task_desc_t task_desc(const char* name, accel_task_function_t fn, void* user,
                                   const accel_resource_request_t* req) {
  accel_task_desc_t d;
  memset(&d, 0, sizeof(d));
  d.stype = ACCEL_STRUCTURE_TYPE_TASK_DESC;
  d.struct_size = sizeof(d);
  d.name = name;
  d.function = fn;
  d.user_data = user;
  d.request = req;
  return d;
}

/* Part 2: allocates 6 GiB (inside its 8 GiB share), then 4 GiB more (past it). */
static accel_status_t train_step(accel_task_context_t ctx, void* user) {
  (void)user;
  accel_device_t device = NULL;
  uint64_t limit = 0;
  accel_status_t s = accel_task_context_get_device(ctx, 0, &device);
  if (s < 0) return s;
  s = accel_task_context_get_memory_limit(ctx, 0, &limit);
  if (s < 0) return s;
  accel_buffer_desc_t desc = {ACCEL_STRUCTURE_TYPE_BUFFER_DESC, sizeof(desc), NULL};
  desc.memory_kind = ACCEL_MEMORY_KIND_DEVICE;
  desc.size = 6 * kGiB;
  accel_buffer_t inside = NULL;
  accel_buffer_t past = NULL;
  s = accel_buffer_create(device, &desc, &inside);
  if (s < 0) return s;
  desc.size = 4 * kGiB;
  const accel_status_t refused = accel_buffer_create(device, &desc, &past);
  accel_buffer_destroy(inside);
  if (refused != ACCEL_ERROR_RESOURCE_EXHAUSTED) {
    if (past != NULL) accel_buffer_destroy(past);
    return accel_set_last_error(ACCEL_ERROR_INTERNAL, "an allocation past the task's share was not refused");
  }
  if (limit != 8 * kGiB) return accel_set_last_error(ACCEL_ERROR_INTERNAL, "the task's memory limit is not 8 GiB");
  return ACCEL_SUCCESS;
}

/* Part 4: the actor's state is a counter its calls advance in order. */
typedef struct counter_state {
  int value;
  int out_of_order;
} counter_state;

static accel_status_t counter_init(accel_task_context_t ctx, void* user) {
  (void)user;
  void* data = NULL;
  accel_status_t s = accel_task_context_get_actor_data(ctx, &data);
  if (s < 0) return s;
  ((counter_state*)data)->value = 0;
  return ACCEL_SUCCESS;
}

static accel_status_t counter_add(accel_task_context_t ctx, void* user) {
  void* data = NULL;
  accel_status_t s = accel_task_context_get_actor_data(ctx, &data);
  if (s < 0) return s;
  counter_state* state = (counter_state*)data;
  const int expected = (int)(size_t)user;
  if (state->value != expected) state->out_of_order = 1;
  state->value = expected + 1;
  return ACCEL_SUCCESS;
}

static accel_status_t nothing(accel_task_context_t ctx, void* user) {
  (void)ctx;
  (void)user;
  return ACCEL_SUCCESS;
}

static void print_message(const char* what, accel_future_t f) {
  char text[512];
  size_t size = 0;
  if (accel_future_get_message(f, sizeof(text), text, &size) < 0) text[0] = '\0';
  printf("  %s: %s\n", what, text);
}

int main(void) {
  accel_instance_t instance = NULL;
  accel_runtime_t rt = NULL;
  CHECK(accel_instance_create(NULL, &instance));
  CHECK(accel_runtime_create(instance, NULL, &rt));
  uint32_t device_count = 0;
  CHECK(accel_runtime_get_device_count(rt, &device_count));
  printf("runtime over %u physical devices\n", device_count);
  EXPECT(device_count == 8, "run with ACCEL_BACKENDS=sim ACCEL_SIM_PROFILE=h100-sxm-8 (got %u devices)", device_count);

  /* 1. A gang of 8 inside one NVLink clique. */
  accel_resource_request_t bundles[8];
  for (int i = 0; i < 8; ++i) bundles[i] = request(1, 1.0, 0, "kind == gpu && feature:peer-access");
  accel_placement_group_desc_t gd = {ACCEL_STRUCTURE_TYPE_PLACEMENT_GROUP_DESC, sizeof(gd), NULL};
  gd.name = "gang";
  gd.bundles = bundles;
  gd.bundle_count = 8;
  gd.strategy = ACCEL_PLACEMENT_STRATEGY_STRICT_PACK;
  gd.level = ACCEL_TOPOLOGY_LEVEL_CLIQUE;
  gd.required = 1;
  accel_placement_group_t gang = NULL;
  CHECK(accel_placement_group_create(rt, &gd, &gang));
  accel_bundle_device_t got[8];
  uint32_t got_count = 8;
  for (int i = 0; i < 8; ++i) {
    memset(&got[i], 0, sizeof(got[i]));
    got[i].stype = ACCEL_STRUCTURE_TYPE_BUNDLE_DEVICE;
    got[i].struct_size = sizeof(got[i]);
  }
  CHECK(accel_placement_group_get_devices(gang, &got_count, got));
  printf("1. gang of 8 in one NVLink clique:");
  for (uint32_t i = 0; i < got_count; ++i) printf(" bundle %u -> rank %u", got[i].bundle, got[i].rank);
  printf("\n");
  EXPECT(got_count == 8, "%u devices", got_count);

  /* 3. While the gang holds every device, a task waits and says why. */
  accel_resource_request_t quarter = request(1, 0.25, 8 * kGiB, "kind == gpu && mem >= 40GiB && bf16");
  accel_task_desc_t td = task_desc("train step", train_step, NULL, &quarter);
  accel_future_t waiting = NULL;
  CHECK(accel_task_submit(rt, &td, &waiting));
  EXPECT(accel_future_query(waiting) == ACCEL_NOT_READY, "the task ran while every device was reserved");
  printf("3. a task while the gang holds every device waits:\n");
  print_message("why", waiting);
  CHECK(accel_placement_group_destroy(gang));

  /* 2. Four quarter shares run side by side; each allocates inside and past its share. */
  accel_future_t steps[4];
  steps[0] = waiting;
  for (int i = 1; i < 4; ++i) CHECK(accel_task_submit(rt, &td, &steps[i]));
  for (int i = 0; i < 4; ++i) {
    const accel_status_t s = accel_future_wait(steps[i], ACCEL_TIMEOUT_INFINITE);
    if (s != ACCEL_SUCCESS) print_message("failed", steps[i]);
    EXPECT(s == ACCEL_SUCCESS, "train step %d: %s", i, accel_status_name(s));
    CHECK(accel_future_release(steps[i]));
  }
  printf("2. four tasks with a 0.25 share and 8 GiB each: 6 GiB allocated inside the share, 4 GiB more refused\n");

  /* 4. An actor on a whole device: 100 calls in order. */
  counter_state state = {-1, 0};
  accel_resource_request_t whole = request(1, 1.0, 0, "kind == gpu");
  accel_actor_desc_t ad = {ACCEL_STRUCTURE_TYPE_ACTOR_DESC, sizeof(ad), NULL};
  ad.name = "counter";
  ad.request = &whole;
  ad.init = counter_init;
  ad.user_data = &state;
  accel_actor_t actor = NULL;
  CHECK(accel_actor_create(rt, &ad, &actor));
  accel_future_t calls[100];
  for (int i = 0; i < 100; ++i) {
    accel_task_desc_t call = task_desc("add", counter_add, (void*)(size_t)i, NULL);
    CHECK(accel_actor_call(actor, &call, &calls[i]));
  }
  for (int i = 0; i < 100; ++i) {
    EXPECT(accel_future_wait(calls[i], ACCEL_TIMEOUT_INFINITE) == ACCEL_SUCCESS, "call %d", i);
    CHECK(accel_future_release(calls[i]));
  }
  CHECK(accel_actor_destroy(actor));
  printf("4. actor 'counter': 100 calls ran in order, state %d\n", state.value);
  EXPECT(state.value == 100 && state.out_of_order == 0, "state %d, out of order %d", state.value, state.out_of_order);

  /* 5. Two queues, weights 1 and 3, 16 whole-device tasks each. */
  accel_queue_desc_t qd = {ACCEL_STRUCTURE_TYPE_QUEUE_DESC, sizeof(qd), NULL};
  accel_queue_t queues[2] = {NULL, NULL};
  const char* names[2] = {"research", "prod"};
  for (int i = 0; i < 2; ++i) {
    qd.name = names[i];
    qd.weight = i == 0 ? 1.0 : 3.0;
    CHECK(accel_queue_create(rt, &qd, &queues[i]));
  }
  accel_future_t work[32];
  for (int i = 0; i < 32; ++i) {
    accel_task_desc_t t = task_desc("work", nothing, NULL, &whole);
    t.queue = queues[i % 2];
    CHECK(accel_task_submit(rt, &t, &work[i]));
  }
  for (int i = 0; i < 32; ++i) {
    EXPECT(accel_future_wait(work[i], ACCEL_TIMEOUT_INFINITE) == ACCEL_SUCCESS, "queued task %d", i);
    CHECK(accel_future_release(work[i]));
  }
  for (int i = 0; i < 2; ++i) {
    accel_queue_usage_t u = {ACCEL_STRUCTURE_TYPE_QUEUE_USAGE, sizeof(u), NULL};
    CHECK(accel_queue_get_usage(queues[i], &u));
    printf("5. queue '%s': %llu tasks finished\n", names[i], (unsigned long long)u.finished);
    EXPECT(u.finished == 16, "queue %s finished %llu", names[i], (unsigned long long)u.finished);
    CHECK(accel_queue_destroy(queues[i]));
  }

  accel_runtime_counters_t c = {ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS, sizeof(c), NULL};
  CHECK(accel_runtime_get_counters(rt, &c));
  printf("counters: submitted %llu, placed %llu, finished %llu, failed %llu, actors created %llu\n",
         (unsigned long long)c.submitted, (unsigned long long)c.placed, (unsigned long long)c.finished,
         (unsigned long long)c.failed, (unsigned long long)c.actors_created);
  EXPECT(c.finished == c.submitted && c.failed == 0, "finished %llu of %llu", (unsigned long long)c.finished,
         (unsigned long long)c.submitted);
  CHECK(accel_runtime_destroy(rt));
  CHECK(accel_instance_destroy(instance));
  return 0;
}
