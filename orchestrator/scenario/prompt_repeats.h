// How many times a cell sends one prompt: a dataset smaller than the cell repeats itself, and a
// cache an earlier cell left holds what it sent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/datasets/dataset_options.h"
#include "driver/workload.h"
#include "orchestrator/scenario/plan.h"

namespace kvsweep::orchestrator {

// A cell that sends some prompt more than once: its requests cycle through the workload's
// prompts (every user turn of every conversation), so the prefix cache finds what an earlier
// request of the same cell left, whatever the strategy. Warm pre-passes (cache: warm) repeat
// the workload on purpose and are not counted.
struct PromptRepeats {
  std::int64_t requests = 0;  // sent over the workload: the measured phase's, plus the warm-up's
                              // when it replays the same prompts (a file dataset)
  std::int64_t prompts = 0;   // the workload's prompts
  std::int64_t sends = 1;     // the most times one prompt is sent: ceil(requests / prompts)
};

// Every user turn of every conversation.
std::int64_t workload_prompts(const driver::Workload& workload);

// The cell's repeats over `measured`, its measured workload; nullopt when it sends no prompt
// twice, or cannot be known before it runs (a cell bounded by its duration; a trace, which
// sends each row once). `warmup_replays_measured`: the warm-up sends the same workload's
// prompts first (file datasets; generated ones get another seed for the warm-up).
std::optional<PromptRepeats> prompt_repeats(const CellPlan& cell, const driver::Workload& measured,
                                            bool warmup_replays_measured);

// "sends each prompt up to 2 times: 2000 requests over a dataset of 1000 prompts".
std::string repeats_text(const PromptRepeats& repeats);

// One workload of a sweep (CellPlan::workload) as the repeat count sees it.
struct WorkloadPrompts {
  const driver::Workload* measured = nullptr;
  bool warmup_replays_measured = false;
  driver::DatasetOptions dataset;            // what it was made from (the stand-in's, when sent)
  std::string dataset_key = "load.dataset";  // where the scenario writes `dataset`
};

// Where a rehearsal (--target sim) cut the cells: a fix then names target.sim's keys.
struct RehearsalCuts {
  std::int64_t num_requests = 0;  // target.sim.num_requests; 0 = not cut
  int conversations = 0;          // target.sim.conversations; 0 = not cut
};

// What the cells of one experiment send again, said once before the first cell, one line per
// cause with the change that removes it:
// - a cell of more requests than its workload has prompts (prompt_repeats), with the dataset
//   key to raise and to what (or the request count to lower to);
// - a cell whose cache is as-is or warm after cells that sent prompts of the same workload on
//   the same deployment (each cell starts at the workload's first prompt; a cold cell, or a
//   new deployment, starts from empty caches), with load.cache: cold as the fix.
// `labels[i]` names cells[i] ("cell 2/9 (PrefixHash, c=400)"). Empty when nothing repeats.
std::vector<std::string> sweep_repeat_warnings(const std::vector<CellPlan>& cells,
                                               const std::vector<std::string>& labels,
                                               const std::vector<WorkloadPrompts>& workloads,
                                               const RehearsalCuts& cuts);

}  // namespace kvsweep::orchestrator
