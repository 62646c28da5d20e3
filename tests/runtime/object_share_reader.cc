// The other process of tests/runtime/object_share_test.cc and a stand-in for
// any reader: imports a shared object by its token, takes a host view, and
// reports on stdout whether the bytes match a checksum and whether the view
// lies in a read-only shared mapping of a memfd (zero-copy).
//
//   accel_object_share_reader TOKEN CHECKSUM once   report, release, exit 0
//   accel_object_share_reader TOKEN CHECKSUM hold   report, then one more for each "check" line on stdin; release at
//                                                   EOF (or be killed)
//   accel_object_share_reader TOKEN - error         print "<status name> <message>" of the failing import
//
// Report: "ok <checksum> maps=<r--s:memfd|...> used=<host bytes the store charged> transfers=<n>", or
// "fail <what>". Exit status 1 when something failed.
#include <accel/object_store.h>
#include <accel/runtime.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "object_share_util.h"

namespace {

using accel_share_test::Checksum;
using accel_share_test::MappingOf;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: accel_object_share_reader TOKEN CHECKSUM once|hold|error\n");
    return 2;
  }
  const std::string token = argv[1];
  const std::string expected = argv[2];
  const std::string mode = argv[3];
  setenv("ACCEL_SIM_PROFILE", "h100-sxm-8", 0);
  accel_instance_desc_t id{};
  id.stype = ACCEL_STRUCTURE_TYPE_INSTANCE_DESC;
  id.struct_size = sizeof(id);
  id.backends = "sim";
  accel_instance_t instance = nullptr;
  accel_runtime_t rt = nullptr;
  accel_runtime_desc_t rd{};
  rd.stype = ACCEL_STRUCTURE_TYPE_RUNTIME_DESC;
  rd.struct_size = sizeof(rd);
  rd.worker_threads = 1;
  if (accel_instance_create(&id, &instance) != ACCEL_SUCCESS ||
      accel_runtime_create(instance, &rd, &rt) != ACCEL_SUCCESS) {
    std::printf("fail runtime: %s\n", accel_last_error());
    return 1;
  }
  int code = 0;
  accel_object_t object = nullptr;
  const accel_status_t imported = accel_object_import(rt, token.c_str(), &object);
  if (mode == "error") {
    std::printf("%s %s\n", accel_status_name(imported), imported == ACCEL_SUCCESS ? "" : accel_last_error());
    if (object != nullptr) accel_object_release(object);
  } else if (imported != ACCEL_SUCCESS) {
    std::printf("fail import: %s: %s\n", accel_status_name(imported), accel_last_error());
    code = 1;
  } else {
    accel_object_view_t view = nullptr;
    if (accel_object_get(object, ACCEL_OBJECT_LOCATION_HOST, ACCEL_TIMEOUT_INFINITE, &view) != ACCEL_SUCCESS) {
      std::printf("fail get: %s\n", accel_last_error());
      code = 1;
    } else {
      accel_object_view_info_t vi{};
      vi.stype = ACCEL_STRUCTURE_TYPE_OBJECT_VIEW_INFO;
      vi.struct_size = sizeof(vi);
      accel_object_view_get_info(view, &vi);
      auto report = [&] {
        accel_object_store_usage_t u{};
        u.stype = ACCEL_STRUCTURE_TYPE_OBJECT_STORE_USAGE;
        u.struct_size = sizeof(u);
        accel_object_store_get_usage(rt, ACCEL_OBJECT_LOCATION_HOST, &u);
        const std::string sum = Checksum(vi.host_address, vi.size);
        const bool ok = sum == expected;
        std::printf("%s %s maps=%s used=%" PRIu64 " transfers=%" PRIu64 "\n", ok ? "ok" : "fail", sum.c_str(),
                    MappingOf(vi.host_address).c_str(), u.used, u.transfers_in);
        std::fflush(stdout);
        return ok;
      };
      if (!report()) code = 1;
      if (mode == "hold") {
        std::string line;
        while (std::getline(std::cin, line)) {
          if (line == "check" && !report()) code = 1;
        }
      }
      accel_object_view_release(view);
    }
    accel_object_release(object);
  }
  accel_runtime_destroy(rt);
  accel_instance_destroy(instance);
  return code;
}
