// The output formats of accel-plan (docs/planner.md, "CLI"): the text report
// and the --json document, both to stdout. Called from one thread.
#ifndef ACCEL_TOOLS_ACCEL_PLAN_OUTPUT_H_
#define ACCEL_TOOLS_ACCEL_PLAN_OUTPUT_H_

#include <string>
#include <vector>

#include "cluster.h"
#include "gangs_file.h"
#include "plan.h"

namespace accel::plan {

// What the report prints: the cluster and where it came from, the gangs and
// what became of them.
struct Report {
  std::string source;  // the cluster file's path, or "generated 64x8 (cliques=1, ...)"
  const planner::Cluster* cluster = nullptr;
  const std::vector<GangRequest>* gangs = nullptr;
  const PlanOutcome* outcome = nullptr;
};

// The cluster line, one block per gang (placed: its devices in rank order
// with the domain at the gang's level, or at every level with `explain`;
// refused: the planner's reason, and with `explain` GangOutcome::freest), and
// a summary line.
void PrintText(const Report& report, bool explain);

// One JSON document with the same content, every field always present.
void PrintJson(const Report& report);

}  // namespace accel::plan

#endif  // ACCEL_TOOLS_ACCEL_PLAN_OUTPUT_H_
