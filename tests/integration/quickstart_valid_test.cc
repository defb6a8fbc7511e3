// The quickstart as shipped, run whole on the embedded fleet: every one of its nine cells must
// be judged valid. A healthy rehearsal on this 2-core machine, the fleet sharing the driver's
// process, is the case a verdict must not cry wolf on (docs/metrics.md, "Verdicts").
#include <gtest/gtest.h>

#include <cstdio>

#include "figures/report_model.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/sim_target.h"
#include "orchestrator/targets/target_kinds.h"
#include "store/store.h"
#include "tests/support/sanitized_build.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

TEST(QuickstartValid, EveryCellOfTheShippedQuickstartIsValid) {
  std::vector<orchestrator::ScenarioError> errors;
  const auto spec = orchestrator::load_scenario_file(
      KVSWEEP_SOURCE_DIR "/scenarios/quickstart.yaml", &errors, orchestrator::target_kinds());
  ASSERT_TRUE(spec) << errors.at(0).text;
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const std::vector<orchestrator::CellPlan> plan = orchestrator::expand_plan(*spec);
  orchestrator::SimTarget target(*spec, plan);
  std::FILE* log = std::tmpfile();
  orchestrator::Console console(log);
  const auto outcome =
      orchestrator::run_sweep(*spec, plan, target, store, console, orchestrator::RunnerOptions{});
  std::fclose(log);
  ASSERT_EQ(outcome.cells_done, 9);
  const figures::ReportModel model = figures::build_report_model(store, outcome.experiment_id);
  int judged = 0;
  for (const auto& level : model.levels) {
    for (const auto& row : level.rows) {
      const figures::CellValidity& v = row.metrics.validity;
      ASSERT_TRUE(v.load_known) << row.label;
      ++judged;
      EXPECT_FALSE(v.open_loop);
      EXPECT_GT(*v.in_flight_fraction, 0.8) << row.label << " c=" << level.concurrency;
      std::printf("%s c=%d: %s; send delay p99 %.3f ms, driver CPU %.0f%%\n", row.label.c_str(),
                  level.concurrency, figures::verdict_line(v).c_str(),
                  v.send_delay_p99_ms.value_or(-1), v.driver_cpu_utilisation.value_or(0) * 100);
      // A sanitizer slows the driver several times over: there the verdict is printed only.
      if (!testing::kSanitizedBuild) {
        EXPECT_EQ(v.verdict, figures::CellVerdict::kValid)
            << row.label << " c=" << level.concurrency << ": " << figures::verdict_line(v);
      }
    }
  }
  EXPECT_EQ(judged, 9);
}

}  // namespace
}  // namespace kvsweep
