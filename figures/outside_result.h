// Results of other tools, read for `kvsweep audit`: vLLM benchmark_serving's result JSON and
// its "Serving Benchmark Result" console blocks (several to a file, as the seeds paste them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::figures {

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
// a figure the audit needs, holds one that is not a number, or one out of range: rates,
// durations, throughputs and mean times must be finite and >= 0 (the rate asked for > 0 or
// inf), counts whole numbers from 0. Text that is not UTF-8, or JSON nested deeper than 32
// levels, is refused; nested JSON values are dropped as they are read (the audit reads
// top-level figures only), so memory stays near the text's size. Labels are one line of at
// most 200 bytes, without control characters; a JSON label of null counts as absent.
std::vector<OutsideResult> read_outside_results(const std::string& text, const std::string& path);

// `text` without C0 control characters, DEL or C1 controls (a tab becomes a space): what
// reaches a terminal from a file or a path starts no escape sequence.
std::string strip_control_characters(std::string_view text);

}  // namespace kvsweep::figures
