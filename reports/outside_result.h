// Results of other tools, read for `kvsweep audit`: vLLM benchmark_serving's result JSON and
// its "Serving Benchmark Result" console blocks (several to a file, as the seeds paste them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvsweep::reports {

// What one outside run says of itself; only what the file holds.
struct OutsideResult {
  std::string label;  // the headings above a console block, or the JSON's label / model
  std::string where;  // "file:line" of the block, or the file
  std::int64_t completed = 0;
  double duration_s = 0;
  double request_throughput = 0;  // req/s
  std::optional<std::int64_t> total_output_tokens;
  std::optional<double> mean_ttft_ms;
  std::optional<double> mean_tpot_ms;
  // The load asked for: the JSON's keys, the block's own rows, the command line above the
  // block in the file (`--request-rate=800`), or the audit's flags, in rising precedence.
  std::optional<double> request_rate;  // infinity: "inf"
  std::optional<int> max_concurrency;
  std::optional<std::int64_t> num_prompts;
};

// Reads every result in `text` (a JSON object, or text holding console blocks). Throws
// std::invalid_argument naming `path`, the line and the field when a block or the JSON lacks
// a figure the audit needs or holds one that is not a number.
std::vector<OutsideResult> read_outside_results(const std::string& text, const std::string& path);

}  // namespace kvsweep::reports
