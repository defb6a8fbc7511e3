// What a dataset sends, counted as the simulated fleet counts it: the statistics a stand-in
// (load.dataset.stand_in) is sized by, and what `kvsweep plan` shows for it.
#pragma once

#include <cstdint>

#include "driver/workload.h"

namespace kvsweep::orchestrator {

struct DatasetTokens {
  std::int64_t requests = 0;       // every turn of every conversation, one request each
  std::int64_t prompt_tokens = 0;  // summed over those requests
  std::int64_t output_tokens = 0;  // the max_tokens each request asks for, summed

  double mean_prompt_tokens() const;  // per request; 0 for an empty dataset
  double mean_output_tokens() const;
};

// Each turn's prompt is its messages (system prompt, earlier turns with the dataset's replies,
// its user message) in the sim's chat template, tokenized by the sim's tokenizer: the prompt
// tokens a simulated replica (--target sim, predict) counts for it. Its output is the
// max_tokens it asks for: the turn's own, else `default_max_tokens` (load.max_tokens).
// A conversation whose history carries the server's replies (chat-threads) is counted with
// empty replies, since those are known only once a server answers.
DatasetTokens count_dataset_tokens(const driver::Workload& workload, int default_max_tokens);

}  // namespace kvsweep::orchestrator
