// Issue 39 item 4: every shipped scenario's dataset holds at least as many distinct user turns
// as its cells send, and no cell starts from a cache an earlier cell of its deployment filled
// with the same prompts: `plan` and the rehearsal (`--target sim`) say no repeat warning. The
// scenarios whose repeats are their design are listed with the reason, and must still warn.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/rehearsal.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/cell_runner.h"
#include "orchestrator/targets/target_kinds.h"

namespace kvsweep::orchestrator {
namespace {

// A scenario whose cells send prompts again by design, and where: as planned for its own
// target, rehearsed (--target sim), or both.
struct ByDesign {
  std::string why;
  bool planned = true;
  bool rehearsed = true;
};

// Scenario file name -> why its cells send prompts again.
const std::map<std::string, ByDesign>& repeats_by_design() {
  static const std::map<std::string, ByDesign> listed = {
      {"seed-004-vllm-prefix-probe.yaml",
       {"seed 004's prefix variants: 50 prompts of one shared prefix, each sent 4 times a cell, "
        "on a server kept running across its runs (cache: as-is), as the seed ran it"}},
      {"seed-004-capacity-search.yaml",
       {"seed 004's prefix variants, searched: its probes resend the same 50 prompts"}},
      {"seed-000-kubeai-l4-prefixhash.yaml",
       {"seed 000 as run: nothing reset between its two runs (cache: as-is), so PrefixHash's "
        "run starts from the cache LeastLoad's run of the same prompts left"}},
      {"seed-002-kubeai-l4-three-arms.yaml",
       {"seed 002 as run: nothing reset between its 12 runs of the same prompts (cache: as-is)"}},
      {"seed-002-capacity-search.yaml",
       {"seed 002's servers kept running (cache: as-is): each probe resends its arm's prompts"}},
      {"seed-003-dynamo-kv-routing.yaml",
       {"seed 003: the redeploy is each arm's cold start and its five levels share the cache "
        "(cache: as-is); cells bounded by 5 minutes cannot be counted before they run, the "
        "rehearsal's of 160 requests resend the first level's prompts",
        false, true}},
      {"dynamo-70b-kv-routing.yaml",
       {"seed 003's earlier example: its levels share the cache after the redeploy (cache: "
        "as-is); counted in the rehearsal, whose cells have a request count",
        false, true}},
      {"seed-001-kubeai-70b-h100-threads.yaml",
       {"seed 001 ran everything twice before measuring and reset nothing (cache: warm): each "
        "cell's cache holds what the cells before it sent"}},
      {"kubeai-70b-h100.yaml",
       {"seed 001's earlier example (cache: warm, nothing reset), over a small sample of threads "
        "shipped in place of the seed's file"}},
      {"kubeai-l4-8b.yaml",
       {"a 40-conversation sample shipped in place of the seeds' file, which 8,000 requests "
        "repeat; the rehearsal's 240 fit it",
        true, false}},
  };
  return listed;
}

std::vector<std::string> warnings_of(const std::filesystem::path& file,
                                     const std::string& target_override) {
  std::vector<ScenarioError> errors;
  std::optional<ScenarioSpec> spec = load_scenario_file(file.string(), &errors, target_kinds());
  for (const auto& e : errors) ADD_FAILURE() << e.text;
  if (!spec) return {"does not load"};
  if (target_override == "sim") spec = rehearsal_of(*spec);
  const std::vector<CellPlan> cells = expand_plan(*spec, target_override);
  const bool simulated = !target_override.empty() || spec->target.kind == "sim";
  const std::vector<Workloads> workloads = load_workloads(*spec, cells, simulated);
  return repeat_warnings(*spec, cells, workloads, target_override);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += "\n  " + l;
  return all;
}

TEST(ShippedScenarios, SendNoPromptTwiceButThoseListedWithTheirReason) {
  const std::filesystem::path dir = std::filesystem::path(KVSWEEP_SOURCE_DIR) / "scenarios";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().filename().string();
    const auto listed = repeats_by_design().find(name);
    for (const std::string target : {"", "sim"}) {
      const std::vector<std::string> said = warnings_of(entry.path(), target);
      const std::string where = name + (target.empty() ? " (plan)" : " (--target sim)");
      const bool expected = listed != repeats_by_design().end() &&
                            (target.empty() ? listed->second.planned : listed->second.rehearsed);
      if (!expected) {
        EXPECT_TRUE(said.empty()) << where << " repeats:" << joined(said);
      } else {
        EXPECT_FALSE(said.empty()) << where << " is listed (" << listed->second.why
                                   << ") but repeats nothing: take it off the list";
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 15);
  for (const auto& [name, why] : repeats_by_design()) {
    EXPECT_TRUE(std::filesystem::exists(dir / name)) << name << " is listed but not shipped";
  }
}

// The quickstart, as `kvsweep run scenarios/quickstart.yaml` runs it: 5,000 requests per cell,
// each a distinct user turn.
TEST(ShippedScenarios, TheQuickstartsCellsRepeatNothing) {
  const std::filesystem::path file =
      std::filesystem::path(KVSWEEP_SOURCE_DIR) / "scenarios" / "quickstart.yaml";
  EXPECT_TRUE(warnings_of(file, "").empty()) << joined(warnings_of(file, ""));
}

}  // namespace
}  // namespace kvsweep::orchestrator
