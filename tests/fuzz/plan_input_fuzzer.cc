// libFuzzer target for accel-plan's inputs (tools/accel-plan/): each input is
// read as a cluster input file (a cluster file, a topology description, a
// whole `accel-info --json` document, or `accel-info topo --json` output,
// which is refused with advice), as a gangs file, as a --generate value and
// as a byte size. Each either parses or is rejected with a message naming the
// file or the option; nothing crashes, leaks or throws.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cluster_input.h"
#include "gangs_file.h"

namespace {

// The input as a file (LoadClusterInput reads a path): one memfd, rewritten for each input.
std::string AsFile(std::string_view text) {
  static const int fd = memfd_create("accel-plan-fuzz", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    __builtin_trap();
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const std::string path = AsFile(text);
  auto cluster = accel::plan::LoadClusterInput(path);
  if (!cluster && cluster.error().message.rfind(path + ": ", 0) != 0) __builtin_trap();  // names the file

  auto gangs = accel::plan::ParseGangs(text, "gangs.json");
  if (!gangs) {
    if (gangs.error().message.rfind("gangs.json: ", 0) != 0) __builtin_trap();
  } else {
    for (size_t i = 0; i < gangs->size(); ++i) {
      if ((*gangs)[i].name.empty()) __builtin_trap();
      for (size_t released : (*gangs)[i].release) {
        if (released >= i) __builtin_trap();  // only earlier gangs are released
      }
    }
  }

  auto spec = accel::plan::ParseGenerateSpec(text);
  if (!spec) {
    if (spec.error().message.rfind("--generate: ", 0) != 0) __builtin_trap();
  } else {
    const auto& s = spec.value();
    if (s.nodes == 0 || s.devices_per_node == 0 ||
        uint64_t{s.nodes} * s.devices_per_node > accel::plan::kMaxGeneratedDevices) {
      __builtin_trap();
    }
    if (s.cliques_per_node == 0 || s.devices_per_node % s.cliques_per_node != 0) __builtin_trap();
    if (s.numa_per_node == 0 || s.devices_per_node % s.numa_per_node != 0) __builtin_trap();
  }

  auto bytes = accel::plan::ParseBytes(text);
  if (!bytes && bytes.error().message.empty()) __builtin_trap();
  if (bytes && !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos &&
      std::to_string(bytes.value()) != text.substr(text.find_first_not_of('0') == std::string_view::npos
                                                       ? text.size() - 1
                                                       : text.find_first_not_of('0'))) {
    __builtin_trap();  // plain digits are that many bytes
  }
  return 0;
}
