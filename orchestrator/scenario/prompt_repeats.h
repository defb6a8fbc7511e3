// How many times an experiment sends one prompt: a dataset smaller than its cells repeats itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/workload.h"
#include "orchestrator/scenario/plan.h"

namespace kvsweep::orchestrator {

// A cell that sends some prompt more than once, so the prefix cache finds what was sent before
// whatever the strategy: its requests cycle through the workload's prompts (every user turn of
// every conversation), and every cell over one workload starts at the same first prompt (same
// dataset, same seed, same order). On a cache kept as-is or warm, what earlier cells of the
// experiment sent over the same workload is still there: those sends count too, back to the
// latest cold cell or new deployment (a rollout, Dynamo's restarted workers, the simulated
// fleet's restart: servers that start afresh). Warm pre-passes (cache: warm) repeat the
// workload on purpose and are not counted.
struct PromptRepeats {
  std::int64_t requests = 0;  // sent over the workload by this cell: the measured phase's, plus
                              // the warm-up's when it replays the same prompts (a file dataset)
  std::int64_t prompts = 0;   // the workload's prompts
  // The most times one prompt is sent: ceil(requests / prompts), plus ceil(r / prompts) for
  // each earlier cell whose r requests over the workload the cache still holds.
  std::int64_t sends = 1;
  int earlier_cells = 0;                   // those earlier cells (0: the cell alone repeats itself)
  CachePolicy cache = CachePolicy::kCold;  // the cell's: as-is or warm when earlier_cells > 0
};

// Every user turn of every conversation.
std::int64_t workload_prompts(const driver::Workload& workload);

// What the cells of one experiment send over one of its workloads (CellPlan::workload).
struct WorkloadSize {
  std::int64_t prompts = 0;
  int conversations = 0;
  std::string kind;                      // the dataset kind sent ("synthetic-multiturn", ...)
  bool stand_in = false;                 // the generated stand-in of an absent file was sent
  bool trace = false;                    // a trace sends each row once, at its time
  bool warmup_replays_measured = false;  // a file dataset: the warm-up sends its first prompts
};

// `kind`: the dataset kind sent; `stand_in`: it is the stand-in of an absent file.
WorkloadSize workload_size(const driver::Workload& measured, bool warmup_replays_measured,
                           const std::string& kind, bool stand_in);

// The cell's own repeats over `measured`, its measured workload; nullopt when it sends no
// prompt twice, or cannot be known before it runs (a cell bounded by its duration; a trace).
std::optional<PromptRepeats> prompt_repeats(const CellPlan& cell, const driver::Workload& measured,
                                            bool warmup_replays_measured);

// Each cell's repeats (same order as `cells`, plan order), earlier cells counted as
// PromptRepeats says; `workloads` by CellPlan::workload index.
std::vector<std::optional<PromptRepeats>> experiment_repeats(
    const std::vector<CellPlan>& cells, const std::vector<WorkloadSize>& workloads);

// "sends each prompt up to 2 times: 2000 requests over a dataset of 1000 prompts", then
// ", with what 2 earlier cells sent on the cache kept as-is" when earlier cells count.
std::string repeats_text(const PromptRepeats& repeats);

// The experiment's warning, once, with the fix it needs: a line for cells that repeat
// themselves ("9 of 9 cells send a prompt more than once within the cell (cell 1 sends each
// prompt up to 7 times: ...): raise load.dataset.conversations from 96 to at least 625"), one
// for cells that re-send what earlier cells left in a kept cache, and for a search on a kept
// cache one for its probes; empty when no cell repeats a prompt. `search`: the cells are a
// capacity search's arms, each probed many times.
std::vector<std::string> repeats_warnings(const std::vector<CellPlan>& cells,
                                          const std::vector<std::optional<PromptRepeats>>& repeats,
                                          const std::vector<WorkloadSize>& workloads,
                                          bool search = false);

}  // namespace kvsweep::orchestrator
