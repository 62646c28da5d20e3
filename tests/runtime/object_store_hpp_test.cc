// object_store.hpp (the C++ wrapper of the object store) on the sim backend's
// 8-GPU node: an Object is a counted reference (copies retain, destructors
// release), views pin replicas and are move-only, failures throw accel::Error
// with the C status and message.
#include <gtest/gtest.h>
#include <accel/object_store.hpp>

#include <cctype>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "runtime_fixture.h"
#include "test_util.h"

namespace {

using namespace accel_runtime_test;  // NOLINT(google-build-using-namespace)

TEST(ObjectStoreHpp, CopiesAreReferencesAndViewsPinReplicas) {
  ScopedInstance instance(nullptr);
  accel::Runtime rt(instance.get(), 2);
  const std::string text = "a counted reference";
  accel::Object object = accel::put(rt, text.data(), text.size(), "text");
  EXPECT_EQ(object.size(), text.size());
  EXPECT_EQ(object.info().references, 1U);
  {
    accel::Object copy = object;
    std::vector<accel::Object> more(3, object);
    EXPECT_EQ(object.info().references, 5U);
    accel::Object moved = std::move(copy);
    EXPECT_FALSE(copy);  // NOLINT(bugprone-use-after-move): a moved-from Object is empty
    EXPECT_EQ(object.info().references, 5U) << "a move is no new reference";
  }
  EXPECT_EQ(object.info().references, 1U);

  accel::ObjectView host = object.get();
  EXPECT_EQ(host.location(), ACCEL_OBJECT_LOCATION_HOST);
  EXPECT_EQ(std::string(static_cast<const char*>(host.data()), host.size()), text);
  accel::ObjectView on_device = object.get(4);
  EXPECT_EQ(on_device.location(), 4);
  EXPECT_NE(on_device.buffer(), nullptr);
  EXPECT_TRUE(object.on_device(4));
  EXPECT_EQ(object.info().views, 2U);
  EXPECT_EQ(accel::object_store_usage(rt, 4).transfers_in, 1U);

  // The view keeps the bytes after the last reference goes.
  accel_object_t raw = object.release();
  EXPECT_EQ(accel_object_release(raw), ACCEL_SUCCESS);
  EXPECT_EQ(std::string(static_cast<const char*>(host.data()), host.size()), text);
}

TEST(ObjectStoreHpp, ATaskReadsItsObjectAndGivesAResultObject) {
  ScopedInstance instance(nullptr);
  accel::Runtime rt(instance.get(), 2);
  const std::string text = "upper case me";
  accel::Future f;
  {
    accel::Object input = accel::put(rt, text.data(), text.size(), "text");
    f = rt.submit(
        [&rt](accel::TaskContext& ctx) {
          accel::ObjectView in = accel::task_object(ctx, 0).get();
          std::string upper(static_cast<const char*>(in.data()), in.size());
          for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          accel::set_result(ctx, accel::put(rt, upper.data(), upper.size(), "upper"));
        },
        accel::TaskOptions().near(input.handle()));
  }  // the task holds its object: the caller's reference may go at once
  accel::Object out = accel::result_object(f);
  accel::ObjectView view = out.get();
  EXPECT_EQ(std::string(static_cast<const char*>(view.data()), view.size()), "UPPER CASE ME");
  EXPECT_EQ(out.info().references, 2U) << "ours and the future's";

  // A task without a result, and one that failed: accel::Error with the status.
  accel::Future none = rt.submit([](accel::TaskContext&) {});
  try {
    static_cast<void>(accel::result_object(none));
    FAIL() << "no result did not throw";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_NOT_FOUND);
  }
  accel::Future failed = rt.submit([](accel::TaskContext&) -> accel_status_t {
    return accel_set_last_error(ACCEL_ERROR_FAILED_PRECONDITION, "step 3 of 2");
  });
  try {
    static_cast<void>(accel::result_object(failed));
    FAIL() << "a failed task did not throw";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_FAILED_PRECONDITION);
    EXPECT_NE(std::string(e.what()).find("step 3 of 2"), std::string::npos) << e.what();
  }
}

TEST(ObjectStoreHpp, FailuresThrowWithTheStatusAndMessage) {
  ScopedInstance instance(nullptr);
  TempDir dir;
  accel::Runtime rt = accel::make_runtime_with_store(instance.get(), {1 << 20, 0, dir.path().string()}, 2);
  const std::vector<uint8_t> big(2 << 20, 1);
  try {
    accel::put(rt, big.data(), big.size());
    FAIL() << "a put larger than the store did not throw";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(e.what()).find("larger than the store's capacity on the host"), std::string::npos)
        << e.what();
  }
  accel::Object small = accel::put(rt, big.data(), 1024);
  EXPECT_THROW(small.get(99), accel::Error);
  try {
    accel::put_file(rt, dir.path().string() + "/missing.bin", {0});
    FAIL() << "a missing file did not throw";
  } catch (const accel::Error& e) {
    EXPECT_EQ(e.status(), ACCEL_ERROR_NOT_FOUND);
  }
  const std::string path = dir.path().string() + "/w.bin";
  std::ofstream(path, std::ios::binary) << std::string(10000, 'w');
  std::vector<accel::Object> parts = accel::put_file(rt, path, {0, 1});
  ASSERT_EQ(parts.size(), 2U);
  EXPECT_EQ(parts[0].size() + parts[1].size(), 10000U);
  EXPECT_TRUE(parts[1].on_device(1));
}

}  // namespace
