// /metrics: the snapshot in the Prometheus text exposition format 0.0.4,
// one family per figure with HELP and TYPE, units in the names (_bytes,
// _seconds, _ratio) and _total on counters (docs/dashboard.md lists them).
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "serve.h"

namespace accel::info::serve {
namespace {

using Labels = std::vector<std::pair<const char*, std::string>>;

// Label values escape backslash, double quote and newline; HELP text escapes
// backslash and newline (the exposition format's rules).
std::string Escape(const std::string& text, bool quote) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// One metric family: its samples must follow the header directly.
class Family {
 public:
  Family(std::string& out, const char* name, const char* type, const char* help) : out_(out), name_(name) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, Escape(help, false), name, type);
  }
  void Sample(const Labels& labels, double value) {
    std::string text = name_;
    if (!labels.empty()) {
      text += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        text += fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", labels[i].first, Escape(labels[i].second, true));
      }
      text += '}';
    }
    out_ += fmt::format("{} {}\n", text, value);
  }

 private:
  std::string& out_;
  const char* name_;
};

Labels DeviceLabels(const DeviceMetrics& d) {
  return {{"device", std::to_string(d.index)}, {"stable_id", d.stable_id}, {"name", d.name}};
}

Labels TenantLabels(const TenantMetrics& t) {
  return {{"tenant", t.tenant}, {"device", std::to_string(t.device)}, {"stable_id", t.stable_id}};
}

// A per-device family over every device.
template <typename Get>
void DeviceFamily(std::string& out, const Metrics& m, const char* name, const char* type, const char* help, Get get) {
  Family f(out, name, type, help);
  for (const DeviceMetrics& d : m.devices) f.Sample(DeviceLabels(d), static_cast<double>(get(d)));
}

}  // namespace

std::string PrometheusText(const Metrics& m) {
  std::string out;
  Family(out, "accel_dashboard_uptime_seconds", "gauge", "Seconds since the dashboard started.")
      .Sample({}, m.uptime_seconds);

  DeviceFamily(out, m, "accel_device_memory_total_bytes", "gauge", "Memory of the physical device, counted once.",
               [](const DeviceMetrics& d) { return d.memory_total; });
  DeviceFamily(out, m, "accel_device_memory_used_bytes", "gauge",
               "Bytes of live device buffers this process holds on the physical device.",
               [](const DeviceMetrics& d) { return d.usage.used; });
  DeviceFamily(out, m, "accel_device_memory_peak_bytes", "gauge", "The largest accel_device_memory_used_bytes so far.",
               [](const DeviceMetrics& d) { return d.usage.peak; });
  {
    Family f(out, "accel_device_memory_limit_bytes", "gauge",
             "The process's ACCEL_MEMORY_LIMIT on the device (devices without a limit have no sample).");
    for (const DeviceMetrics& d : m.devices) {
      if (d.usage.limit != ACCEL_MEMORY_UNLIMITED) f.Sample(DeviceLabels(d), static_cast<double>(d.usage.limit));
    }
  }
  DeviceFamily(out, m, "accel_device_memory_refused_total", "counter",
               "Device allocations the process's limit refused.",
               [](const DeviceMetrics& d) { return d.usage.refused; });
  DeviceFamily(out, m, "accel_device_buffers", "gauge", "Live device buffers this process holds on the device.",
               [](const DeviceMetrics& d) { return d.usage.buffers; });

  if (m.has_runtime) {
    DeviceFamily(out, m, "accel_scheduler_device_share_free_ratio", "gauge",
                 "Compute share of the device the scheduler has not handed out (of 1).",
                 [](const DeviceMetrics& d) { return d.share_free; });
    DeviceFamily(out, m, "accel_scheduler_device_memory_free_bytes", "gauge",
                 "Device memory the scheduler has not reserved.", [](const DeviceMetrics& d) { return d.memory_free; });
    DeviceFamily(out, m, "accel_scheduler_device_lost", "gauge",
                 "1 once a task saw the device lost: the scheduler places nothing on it again.",
                 [](const DeviceMetrics& d) { return d.lost ? 1 : 0; });
    const accel_runtime_counters_t& c = m.counters;
    const struct {
      const char* name;
      const char* type;
      const char* help;
      uint64_t value;
    } counters[] = {
        {"accel_scheduler_tasks_submitted_total", "counter", "Tasks accepted by accel_task_submit.", c.submitted},
        {"accel_scheduler_placements_total", "counter", "Placements made (a retried task is placed again).", c.placed},
        {"accel_scheduler_tasks_started_total", "counter", "Task function calls.", c.started},
        {"accel_scheduler_tasks_finished_total", "counter", "Tasks that ended with ACCEL_SUCCESS.", c.finished},
        {"accel_scheduler_tasks_failed_total", "counter", "Tasks that ended with an error other than cancellation.",
         c.failed},
        {"accel_scheduler_tasks_cancelled_total", "counter", "Tasks that ended cancelled.", c.cancelled},
        {"accel_scheduler_tasks_retried_total", "counter", "Attempts started again after a device loss.", c.retried},
        {"accel_scheduler_tasks_preempted_total", "counter", "Running tasks asked to stop for a queue's quota.",
         c.preempted},
        {"accel_scheduler_devices_lost_total", "counter", "Device losses seen by tasks.", c.devices_lost},
        {"accel_scheduler_placement_groups_created_total", "counter", "Placement groups reserved.",
         c.placement_groups_created},
        {"accel_scheduler_placement_groups_refused_total", "counter", "Placement groups refused.",
         c.placement_groups_refused},
        {"accel_scheduler_actors_created_total", "counter", "Actors created.", c.actors_created},
        {"accel_scheduler_actors_restarted_total", "counter", "Actor restarts after a device loss.",
         c.actors_restarted},
        {"accel_scheduler_actors_died_total", "counter", "Actors that ended dead.", c.actors_died},
        {"accel_scheduler_tasks_pending", "gauge", "Tasks submitted and not yet placed.", c.pending},
        {"accel_scheduler_tasks_running", "gauge", "Tasks placed and not yet ended.", c.running},
    };
    for (const auto& counter : counters) {
      Family(out, counter.name, counter.type, counter.help).Sample({}, static_cast<double>(counter.value));
    }
  }

  {
    Family f(out, "accel_tenant_memory_used_bytes", "gauge", "Bytes of live device buffers the tenant holds.");
    for (const TenantMetrics& t : m.tenants) f.Sample(TenantLabels(t), static_cast<double>(t.usage.used));
  }
  {
    Family f(out, "accel_tenant_memory_peak_bytes", "gauge", "The largest accel_tenant_memory_used_bytes so far.");
    for (const TenantMetrics& t : m.tenants) f.Sample(TenantLabels(t), static_cast<double>(t.usage.peak));
  }
  {
    Family f(out, "accel_tenant_memory_limit_bytes", "gauge",
             "The tenant's limit on the device (devices where it has none have no sample).");
    for (const TenantMetrics& t : m.tenants) {
      if (t.usage.limit != ACCEL_MEMORY_UNLIMITED) f.Sample(TenantLabels(t), static_cast<double>(t.usage.limit));
    }
  }
  {
    Family f(out, "accel_tenant_memory_refused_total", "counter", "Device allocations the tenant's limit refused.");
    for (const TenantMetrics& t : m.tenants) f.Sample(TenantLabels(t), static_cast<double>(t.usage.refused));
  }
  {
    Family f(out, "accel_tenant_buffers", "gauge", "Live device buffers the tenant holds.");
    for (const TenantMetrics& t : m.tenants) f.Sample(TenantLabels(t), static_cast<double>(t.usage.buffers));
  }

  const struct {
    const char* name;
    const char* type;
    const char* help;
    double (*get)(const accel_queue_usage_t&);
  } queue_families[] = {
      {"accel_queue_devices", "gauge", "Device equivalents (sum of compute shares) the queue's work holds.",
       [](const accel_queue_usage_t& u) { return u.devices; }},
      {"accel_queue_memory_bytes", "gauge", "Device memory the queue's work holds.",
       [](const accel_queue_usage_t& u) { return static_cast<double>(u.memory); }},
      {"accel_queue_tasks_pending", "gauge", "The queue's tasks waiting for capacity.",
       [](const accel_queue_usage_t& u) { return static_cast<double>(u.pending); }},
      {"accel_queue_tasks_running", "gauge", "The queue's tasks placed and not yet ended.",
       [](const accel_queue_usage_t& u) { return static_cast<double>(u.running); }},
      {"accel_queue_tasks_finished_total", "counter", "The queue's tasks that ended, whatever their result.",
       [](const accel_queue_usage_t& u) { return static_cast<double>(u.finished); }},
      {"accel_queue_tasks_preempted_total", "counter", "The queue's tasks preempted.",
       [](const accel_queue_usage_t& u) { return static_cast<double>(u.preempted); }},
      {"accel_queue_dominant_share_ratio", "gauge", "The queue's dominant share, which fair share equalises.",
       [](const accel_queue_usage_t& u) { return u.dominant_share; }},
      {"accel_queue_over_quota", "gauge", "1 when the queue holds more than its quota of some resource.",
       [](const accel_queue_usage_t& u) { return u.over_quota != 0 ? 1.0 : 0.0; }},
  };
  for (const auto& family : queue_families) {
    Family f(out, family.name, family.type, family.help);
    for (const QueueMetrics& q : m.queues) f.Sample({{"queue", q.queue}}, family.get(q.usage));
  }

  {
    Family f(out, "accel_stream_busy", "gauge", "1 while the stream has work that has not completed.");
    for (const StreamMetrics& s : m.streams) f.Sample({{"stream", s.stream}}, s.busy ? 1 : 0);
  }
  {
    Family f(out, "accel_stream_failed", "gauge", "1 when the stream's work failed (its error is in /api/metrics).");
    for (const StreamMetrics& s : m.streams) f.Sample({{"stream", s.stream}}, s.error.empty() ? 0 : 1);
  }
  const struct {
    const char* direction;
    uint64_t accel_copy_statistics_t::*copies;
    uint64_t accel_copy_statistics_t::*bytes;
  } directions[] = {
      {"host_to_device", &accel_copy_statistics_t::host_to_device_copies,
       &accel_copy_statistics_t::host_to_device_bytes},
      {"device_to_host", &accel_copy_statistics_t::device_to_host_copies,
       &accel_copy_statistics_t::device_to_host_bytes},
      {"local", &accel_copy_statistics_t::local_copies, &accel_copy_statistics_t::local_bytes},
      {"peer", &accel_copy_statistics_t::peer_copies, &accel_copy_statistics_t::peer_bytes},
      {"staged", &accel_copy_statistics_t::staged_copies, &accel_copy_statistics_t::staged_bytes},
  };
  {
    Family f(out, "accel_stream_copies_total", "counter", "Copies the stream made, by direction.");
    for (const StreamMetrics& s : m.streams) {
      if (!s.has_copies) continue;
      for (const auto& d : directions) {
        f.Sample({{"stream", s.stream}, {"direction", d.direction}}, static_cast<double>(s.copies.*d.copies));
      }
    }
  }
  {
    Family f(out, "accel_stream_copied_bytes_total", "counter", "Bytes the stream copied, by direction.");
    for (const StreamMetrics& s : m.streams) {
      if (!s.has_copies) continue;
      for (const auto& d : directions) {
        f.Sample({{"stream", s.stream}, {"direction", d.direction}}, static_cast<double>(s.copies.*d.bytes));
      }
    }
  }
  return out;
}

}  // namespace accel::info::serve
