// How many times a cell sends one prompt: a dataset smaller than the cell repeats itself.
#include "orchestrator/scenario/prompt_repeats.h"

namespace kvsweep::orchestrator {

std::int64_t workload_prompts(const driver::Workload& workload) {
  std::int64_t prompts = 0;
  for (const auto& conversation : workload.conversations) {
    prompts += static_cast<std::int64_t>(conversation.user.size());
  }
  return prompts;
}

std::optional<PromptRepeats> prompt_repeats(const CellPlan& cell, const driver::Workload& measured,
                                            bool warmup_replays_measured) {
  if (cell.load.num_requests <= 0 || !measured.arrival_s.empty()) return std::nullopt;
  PromptRepeats repeats;
  repeats.prompts = workload_prompts(measured);
  repeats.requests =
      cell.load.num_requests + (warmup_replays_measured ? cell.load.warmup_requests : 0);
  if (repeats.prompts <= 0 || repeats.requests <= repeats.prompts) return std::nullopt;
  repeats.sends = (repeats.requests + repeats.prompts - 1) / repeats.prompts;
  return repeats;
}

std::string repeats_text(const PromptRepeats& repeats) {
  return "sends each prompt up to " + std::to_string(repeats.sends) +
         " times: " + std::to_string(repeats.requests) + " requests over a dataset of " +
         std::to_string(repeats.prompts) + " prompts";
}

}  // namespace kvsweep::orchestrator
