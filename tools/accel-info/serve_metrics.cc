// The dashboard's live figures: one snapshot read through the public API,
// and its JSON form for /api/metrics (serve.h, docs/dashboard.md).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "names.h"
#include "report.h"
#include "serve.h"

namespace accel::info::serve {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
T Header(uint32_t stype) {
  T value{};
  value.stype = stype;
  value.struct_size = sizeof(T);
  return value;
}

std::vector<accel_physical_device_t> PhysicalDevices(accel_instance_t instance) {
  uint32_t count = 0;
  Check(accel_instance_enumerate_physical_devices(instance, &count, nullptr),
        "accel_instance_enumerate_physical_devices");
  std::vector<accel_physical_device_t> devices(count);
  Check(accel_instance_enumerate_physical_devices(instance, &count, devices.data()),
        "accel_instance_enumerate_physical_devices");
  devices.resize(count);
  return devices;
}

// Why a watched object could not be read: its owner may have destroyed it.
std::string WatchError(const char* kind, const std::string& name, const char* call, accel_status_t status) {
  return fmt::format("{} '{}': {} failed with {}: {}", kind, name, call, accel_status_name(status), accel_last_error());
}

// A limit of ACCEL_MEMORY_UNLIMITED is null in JSON: "no limit".
json Limit(uint64_t limit) { return limit == ACCEL_MEMORY_UNLIMITED ? json(nullptr) : json(limit); }

json UsageJson(const accel_memory_usage_t& u) {
  return {{"used_bytes", u.used},
          {"peak_bytes", u.peak},
          {"limit_bytes", Limit(u.limit)},
          {"refused", u.refused},
          {"buffers", u.buffers}};
}

}  // namespace

Metrics CollectMetrics(accel_instance_t instance, accel_runtime_t runtime, const Watch& watch,
                       std::chrono::steady_clock::time_point started) {
  Metrics m;
  m.uptime_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::vector<accel_physical_device_t> physical = PhysicalDevices(instance);

  for (accel_physical_device_t pd : physical) {
    auto props = Header<accel_physical_device_properties_t>(ACCEL_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES);
    Check(accel_physical_device_get_properties(pd, &props), "accel_physical_device_get_properties");
    DeviceMetrics d;
    d.index = props.index;
    d.stable_id = FixedString(props.stable_id);
    d.name = FixedString(props.name);
    d.memory_total = props.memory_total;
    d.usage = Header<accel_memory_usage_t>(ACCEL_STRUCTURE_TYPE_MEMORY_USAGE);
    Check(accel_physical_device_get_memory_usage(pd, &d.usage), "accel_physical_device_get_memory_usage");
    m.devices.push_back(std::move(d));
  }

  if (runtime != nullptr) {
    m.has_runtime = true;
    m.counters = Header<accel_runtime_counters_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_COUNTERS);
    Check(accel_runtime_get_counters(runtime, &m.counters), "accel_runtime_get_counters");
    // The log holds at most kDecisionLog (the server turns it on); keep the newest kDecisionsShown.
    std::vector<accel_runtime_event_t> log(kDecisionLog,
                                           Header<accel_runtime_event_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_EVENT));
    uint32_t logged = 0;
    Check(accel_runtime_get_events(runtime, 0, kDecisionLog, log.data(), &logged, nullptr), "accel_runtime_get_events");
    const uint32_t first = logged > kDecisionsShown ? logged - kDecisionsShown : 0;
    m.decisions.assign(log.begin() + first, log.begin() + logged);
    uint32_t count = 0;
    Check(accel_runtime_get_device_count(runtime, &count), "accel_runtime_get_device_count");
    for (uint32_t i = 0; i < count; ++i) {
      auto rd = Header<accel_runtime_device_t>(ACCEL_STRUCTURE_TYPE_RUNTIME_DEVICE);
      Check(accel_runtime_get_device(runtime, i, &rd), "accel_runtime_get_device");
      for (size_t k = 0; k < physical.size(); ++k) {
        if (physical[k] != rd.physical_device) continue;
        DeviceMetrics& d = m.devices[k];
        d.scheduled = true;
        d.share_free = rd.share_free;
        d.memory_free = rd.memory_free;
        d.memory_schedulable = rd.memory_total;
        d.lost = rd.lost != 0;
      }
    }
  }

  for (const auto& [name, tenant] : watch.Tenants()) {
    for (size_t k = 0; k < physical.size(); ++k) {
      auto usage = Header<accel_memory_usage_t>(ACCEL_STRUCTURE_TYPE_MEMORY_USAGE);
      const accel_status_t status = accel_tenant_get_memory_usage(tenant, physical[k], &usage);
      if (status != ACCEL_SUCCESS) {
        m.errors.push_back(WatchError("tenant", name, "accel_tenant_get_memory_usage", status));
        break;
      }
      // A device the tenant may not use and holds nothing on is left out.
      if (usage.limit == 0 && usage.used == 0 && usage.peak == 0) continue;
      m.tenants.push_back({name, m.devices[k].index, m.devices[k].stable_id, usage});
    }
  }

  for (const auto& [name, queue] : watch.Queues()) {
    QueueMetrics q{name, Header<accel_queue_usage_t>(ACCEL_STRUCTURE_TYPE_QUEUE_USAGE)};
    const accel_status_t status = accel_queue_get_usage(queue, &q.usage);
    if (status != ACCEL_SUCCESS) {
      m.errors.push_back(WatchError("queue", name, "accel_queue_get_usage", status));
      continue;
    }
    m.queues.push_back(q);
  }

  for (const auto& [name, stream] : watch.Streams()) {
    StreamMetrics s;
    s.stream = name;
    const accel_status_t state = accel_stream_query(stream);
    if (state == ACCEL_ERROR_INVALID_HANDLE) {
      m.errors.push_back(WatchError("stream", name, "accel_stream_query", state));
      continue;
    }
    s.busy = state == ACCEL_NOT_READY;
    // A stream whose work failed still answers: its error is shown with it.
    if (state < 0) s.error = fmt::format("{}: {}", accel_status_name(state), accel_last_error());
    s.copies = Header<accel_copy_statistics_t>(ACCEL_STRUCTURE_TYPE_COPY_STATISTICS);
    s.has_copies = accel_stream_get_copy_statistics(stream, &s.copies) == ACCEL_SUCCESS;
    m.streams.push_back(std::move(s));
  }
  return m;
}

json MetricsJson(const Metrics& m) {
  json devices = json::array();
  for (const DeviceMetrics& d : m.devices) {
    json device = {{"index", d.index},
                   {"stable_id", d.stable_id},
                   {"name", d.name},
                   {"memory_total_bytes", d.memory_total},
                   {"memory", UsageJson(d.usage)}};
    if (d.scheduled) {
      device["scheduler"] = {{"share_free", d.share_free},
                             {"memory_free_bytes", d.memory_free},
                             {"memory_total_bytes", d.memory_schedulable},
                             {"lost", d.lost}};
    } else {
      device["scheduler"] = nullptr;
    }
    devices.push_back(std::move(device));
  }
  json tenants = json::array();
  for (const TenantMetrics& t : m.tenants) {
    tenants.push_back(
        {{"tenant", t.tenant}, {"device", t.device}, {"stable_id", t.stable_id}, {"memory", UsageJson(t.usage)}});
  }
  json queues = json::array();
  for (const QueueMetrics& q : m.queues) {
    const accel_queue_usage_t& u = q.usage;
    queues.push_back({{"queue", q.queue},
                      {"devices", u.devices},
                      {"memory_bytes", u.memory},
                      {"pending", u.pending},
                      {"running", u.running},
                      {"finished", u.finished},
                      {"preempted", u.preempted},
                      {"dominant_share", u.dominant_share},
                      {"over_quota", u.over_quota != 0}});
  }
  json streams = json::array();
  for (const StreamMetrics& s : m.streams) {
    json stream = {{"stream", s.stream}, {"busy", s.busy}, {"error", s.error}};
    if (s.has_copies) {
      const accel_copy_statistics_t& c = s.copies;
      stream["copies"] = {
          {"host_to_device", {{"copies", c.host_to_device_copies}, {"bytes", c.host_to_device_bytes}}},
          {"device_to_host", {{"copies", c.device_to_host_copies}, {"bytes", c.device_to_host_bytes}}},
          {"local", {{"copies", c.local_copies}, {"bytes", c.local_bytes}}},
          {"peer", {{"copies", c.peer_copies}, {"bytes", c.peer_bytes}}},
          {"staged", {{"copies", c.staged_copies}, {"bytes", c.staged_bytes}}},
      };
    } else {
      stream["copies"] = nullptr;
    }
    streams.push_back(std::move(stream));
  }
  json scheduler = nullptr;
  if (m.has_runtime) {
    const accel_runtime_counters_t& c = m.counters;
    scheduler = {{"submitted", c.submitted},
                 {"placed", c.placed},
                 {"started", c.started},
                 {"finished", c.finished},
                 {"failed", c.failed},
                 {"cancelled", c.cancelled},
                 {"retried", c.retried},
                 {"preempted", c.preempted},
                 {"devices_lost", c.devices_lost},
                 {"pending", c.pending},
                 {"running", c.running},
                 {"placement_groups_created", c.placement_groups_created},
                 {"placement_groups_refused", c.placement_groups_refused},
                 {"actors_created", c.actors_created},
                 {"actors_restarted", c.actors_restarted},
                 {"actors_died", c.actors_died}};
  }
  json decisions = json::array();
  for (const accel_runtime_event_t& e : m.decisions) {
    decisions.push_back({{"sequence", e.sequence},
                         {"time_seconds", static_cast<double>(e.time_ns) / 1e9},
                         {"kind", RuntimeEventKindName(e.kind)},
                         {"name", std::string(e.name)},
                         {"device", e.device == UINT32_MAX ? json(nullptr) : json(e.device)},
                         {"device_count", e.device_count},
                         {"status", accel_status_name(static_cast<accel_status_t>(e.status))}});
  }
  return {{"uptime_seconds", m.uptime_seconds}, {"devices", std::move(devices)},
          {"tenants", std::move(tenants)},      {"queues", std::move(queues)},
          {"streams", std::move(streams)},      {"scheduler", std::move(scheduler)},
          {"decisions", std::move(decisions)},  {"errors", m.errors}};
}

}  // namespace accel::info::serve
