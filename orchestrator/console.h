// What a person sees while a sweep runs: permanent lines, and one progress line on a terminal.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace kvsweep::orchestrator {

// On a terminal the progress line is rewritten in place. Elsewhere (CI logs, pipes) progress
// is either dropped (quiet) or printed as a plain line at most every kPlainProgressEvery, so
// logs stay short: a sweep of many minutes says it is alive, a single load run stays quiet.
class Console {
 public:
  enum class PlainProgress { kQuiet, kPeriodic };
  explicit Console(std::FILE* out, PlainProgress plain = PlainProgress::kPeriodic);
  void line(const std::string& text);      // a permanent line
  void progress(const std::string& text);  // transient status
  void end_progress();                     // clear any progress line

 private:
  static constexpr std::chrono::seconds kPlainProgressEvery{10};
  std::FILE* out_;
  bool tty_;
  PlainProgress plain_;
  bool progress_shown_ = false;
  std::chrono::steady_clock::time_point last_plain_{};
};

}  // namespace kvsweep::orchestrator
