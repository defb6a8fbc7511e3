// load_workload: dispatch by dataset kind.
#include "driver/datasets/load_workload.h"

#include <optional>

#include "common/spellcheck.h"
#include "driver/datasets/chat_threads.h"
#include "driver/datasets/dataset_limits.h"
#include "driver/datasets/jsonl_prompts.h"
#include "driver/datasets/mooncake_trace.h"
#include "driver/datasets/random_prompts.h"
#include "driver/datasets/shared_prefix.h"
#include "driver/datasets/sharegpt.h"
#include "driver/datasets/synthetic_multiturn.h"

namespace kvsweep::driver {

std::vector<std::string> dataset_kinds() {
  return {"synthetic-multiturn",
          "sharegpt",
          "chat-threads",
          "shared-prefix",
          "jsonl",
          "mooncake",
          "random"};
}

Workload load_workload(const DatasetOptions& options) {
  const std::string& kind = options.kind;
  check_dataset_limits(options);
  if (kind == "synthetic-multiturn") return make_synthetic_multiturn_workload(options);
  if (kind == "sharegpt") return load_sharegpt(options);
  if (kind == "chat-threads") return load_chat_threads(options);
  if (kind == "shared-prefix") return make_shared_prefix(options);
  if (kind == "jsonl") return load_jsonl_prompts(options);
  if (kind == "mooncake") return load_mooncake_trace(options);
  if (kind == "random") return make_random_prompts(options);

  const std::vector<std::string> kinds = dataset_kinds();
  std::string known;
  for (const std::string& k : kinds) known += (known.empty() ? "" : ", ") + k;
  std::string message = "dataset kind: unknown \"" + kind + "\" (known: " + known + ")";
  if (const std::optional<std::string> nearest = closest_word(kind, kinds)) {
    message += "; did you mean '" + *nearest + "'?";
  }
  throw DatasetError(message);
}

}  // namespace kvsweep::driver
