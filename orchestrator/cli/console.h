// What a person sees while a command runs: permanent lines, one progress line on a terminal,
// and errors; all on stderr, with stdout flushed first so a redirected log keeps its order.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "orchestrator/sweep/sweep_output.h"

namespace kvsweep::orchestrator {

// --quiet: results only (stdout), no progress or status lines; --verbose: also debug logs.
enum class Verbosity { kQuiet, kNormal, kVerbose };

// On a terminal the progress line is rewritten in place. Elsewhere (CI logs, pipes) progress
// is either dropped (quiet) or printed as a plain line at most every kPlainProgressEvery, so
// logs stay short: a sweep of many minutes says it is alive, a single load run stays quiet.
// Under --verbose progress is never rewritten in place: debug lines would land inside it.
class Console : public SweepOutput {
 public:
  enum class PlainProgress { kQuiet, kPeriodic };
  explicit Console(std::FILE* out, PlainProgress plain = PlainProgress::kPeriodic,
                   Verbosity verbosity = Verbosity::kNormal);
  void line(const std::string& text) override;      // a permanent line; none under --quiet
  void progress(const std::string& text) override;  // transient status; none under --quiet
  void end_progress() override;                     // clear any progress line

 private:
  static constexpr std::chrono::seconds kPlainProgressEvery{10};
  std::FILE* out_;
  bool tty_;
  PlainProgress plain_;
  bool quiet_;
  bool progress_shown_ = false;
  std::chrono::steady_clock::time_point last_plain_{};
};

// "kvsweep: error: <message>" on stderr, after flushing stdout; every verbosity shows it. The
// prefix goes on the first line only, so a source line and caret below it stay aligned.
void print_error(const std::string& message);

}  // namespace kvsweep::orchestrator
