// Profile `multi-device`: copies between devices and events across devices
// agree with the declared topology (docs/conformance.md). A backend with one
// device skips it, saying so.
#include "harness.h"

namespace accel::conformance {
namespace {

#define ACCEL_REQUIRE_TWO_DEVICES()                                                                                \
  do {                                                                                                             \
    if (TheTarget().selected.size() < 2) {                                                                         \
      GTEST_SKIP() << ::accel::conformance::kAbsentPrefix << "the backend reports " << TheTarget().selected.size() \
                   << " device(s) under test (accel_backend_enumerate_devices); multi-device needs two";           \
    }                                                                                                              \
  } while (0)

accel_copy_statistics_t Statistics(const Stream& stream) {
  accel_copy_statistics_t s{};
  s.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
  s.struct_size = sizeof(s);
  accel_stream_get_copy_statistics(stream.get(), &s);
  return s;
}

}  // namespace

ACCEL_CONFORMANCE_BACKEND_CASE(kMultiDevice, copies, between_every_pair) {
  ACCEL_REQUIRE_TWO_DEVICES();
  const Target& t = TheTarget();
  const uint64_t size = 256 * 1024 + 3;
  uint32_t seed = 500;
  for (uint32_t a : t.selected) {
    for (uint32_t b : t.selected) {
      if (a == b) continue;
      const DeviceUnderTest& da = t.all_devices[a];
      const DeviceUnderTest& db = t.all_devices[b];
      Stream sa(da);
      Stream sb(db);
      Buffer src(da, size);
      Buffer dst(db, size);
      ASSERT_NE(src.get(), nullptr);
      ASSERT_NE(dst.get(), nullptr);
      const std::vector<uint8_t> data = Pattern(size, seed++);
      Upload(sa, src.get(), 0, data.data(), size);
      const accel_copy_statistics_t before = Statistics(sa);
      ACCEL_ASSERT_OK(accel_stream_copy_buffer(sa.get(), src.get(), 0, dst.get(), 0, size));
      ACCEL_ASSERT_OK(sa.Sync());
      EXPECT_EQ(Download(sb, dst.get(), 0, size), data) << "copy " << a << "->" << b << " delivered other bytes";
      // The path taken agrees with the declared link, where the backend counts paths.
      accel_copy_statistics_t probe{};
      probe.stype = ACCEL_STRUCTURE_TYPE_COPY_STATISTICS;
      probe.struct_size = sizeof(probe);
      const accel_device_link_t link = Link(da.device, db.device);
      // Two access paths of one physical device (SELF) copy within its memory: no path to check.
      if (link.link_class != ACCEL_LINK_CLASS_SELF &&
          accel_stream_get_copy_statistics(sa.get(), &probe) == ACCEL_SUCCESS) {
        const accel_copy_statistics_t after = Statistics(sa);
        const uint64_t peer = after.peer_copies - before.peer_copies;
        const uint64_t staged = after.staged_copies - before.staged_copies;
        EXPECT_EQ(peer + staged, 1u) << a << "->" << b << ": one copy between devices, counted once";
        if (link.peer_access != 0) {
          EXPECT_EQ(peer, 1u) << a << "->" << b << ": the link declares peer access, but the copy was staged";
        } else {
          EXPECT_EQ(staged, 1u) << a << "->" << b << ": the link declares no peer access, but the copy went peer";
        }
      }
    }
  }
}

ACCEL_CONFORMANCE_BACKEND_CASE(kMultiDevice, events, wait_across_devices) {
  ACCEL_REQUIRE_TWO_DEVICES();
  const Target& t = TheTarget();
  const DeviceUnderTest& da = t.all_devices[t.selected[0]];
  const DeviceUnderTest& db = t.all_devices[t.selected[1]];
  Stream sa(da);
  Stream sb(db);
  Event done(da);
  const uint64_t size = 65536;
  Buffer src(da, size);
  Buffer dst(db, size);
  const std::vector<uint8_t> data = Pattern(size, 77);
  std::vector<uint8_t> out(size, 0);
  {
    Gate gate;
    ACCEL_ASSERT_OK(gate.EnqueueOn(sa.get()));
    ACCEL_ASSERT_OK(accel_stream_copy_host_to_buffer(sa.get(), data.data(), src.get(), 0, size));
    ACCEL_ASSERT_OK(accel_stream_record_event(sa.get(), done.get()));
    // Device b's stream waits for device a's event, then pulls the data over.
    ACCEL_ASSERT_OK(accel_stream_wait_event(sb.get(), done.get()));
    ACCEL_ASSERT_OK(accel_stream_copy_buffer(sb.get(), src.get(), 0, dst.get(), 0, size));
    ACCEL_ASSERT_OK(accel_stream_copy_buffer_to_host(sb.get(), dst.get(), 0, out.data(), size));
    EXPECT_EQ(accel_stream_query(sb.get()), ACCEL_NOT_READY) << "device b's stream did not wait for device a's event";
    gate.Open();
    ACCEL_ASSERT_OK(sb.Sync());
  }
  EXPECT_EQ(out, data) << "device b read before device a's write completed";
  ACCEL_EXPECT_OK(sa.Sync());
}

ACCEL_CONFORMANCE_BACKEND_CASE(kMultiDevice, topology, peer_access_matches_features) {
  ACCEL_REQUIRE_TWO_DEVICES();
  const Target& t = TheTarget();
  int peers = 0;
  for (uint32_t a : t.selected) {
    for (uint32_t b : t.selected) {
      if (a == b) continue;
      const accel_device_link_t link = Link(t.all_devices[a].device, t.all_devices[b].device);
      if (link.peer_access != 0 && link.link_class != ACCEL_LINK_CLASS_SELF) ++peers;  // SELF: one device
    }
  }
  bool any_feature = false;
  for (uint32_t a : t.selected)
    any_feature = any_feature || (t.all_devices[a].caps.features & ACCEL_DEVICE_FEATURE_PEER_ACCESS) != 0;
  if (any_feature) {
    EXPECT_GT(peers, 0) << "devices report the peer-access feature, but no link declares peer access";
  } else {
    EXPECT_EQ(peers, 0) << "links declare peer access, but no device reports the peer-access feature";
  }
}

}  // namespace accel::conformance
