// The output formats of accel-info: each prints one Report to stdout
// (docs/accel-info.md describes them). Called from one thread.
#ifndef ACCEL_TOOLS_ACCEL_INFO_OUTPUT_H_
#define ACCEL_TOOLS_ACCEL_INFO_OUTPUT_H_

#include <string>

#include "report.h"

namespace accel::info {

// Default: one line per physical device. When `hint_loader_debug` is set, a
// report without devices (or with failed backends) ends with a hint to run
// --loader-debug.
void PrintTable(const Report& report, bool hint_loader_debug);

// -v: every physical device, each access path, and every capability key.
void PrintVerbose(const Report& report, bool hint_loader_debug);

// --loader-debug: one block per loader entry.
void PrintLoaderReport(const Report& report);

// --json: one JSON document (docs/accel-info.schema.json).
void PrintJson(const Report& report);

// The text form of one capability value, as -v prints it.
std::string TextValue(const Capability& capability);

// The line printed when no device is visible.
void PrintNoDevices(bool hint_loader_debug);

// A line saying how many backend devices ACCEL_VISIBLE_DEVICES hid, if any.
void PrintHiddenDevices(const Report& report);

}  // namespace accel::info

#endif  // ACCEL_TOOLS_ACCEL_INFO_OUTPUT_H_
