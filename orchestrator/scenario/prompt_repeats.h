// How many times a cell sends one prompt: a dataset smaller than the cell repeats itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

}  // namespace kvsweep::orchestrator
