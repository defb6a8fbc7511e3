// What a person sees while a sweep runs: permanent lines, and one progress line on a terminal.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace kvsweep::orchestrator {

// On a terminal the progress line is rewritten in place; elsewhere (CI logs, pipes) progress
// is printed as a plain line at most every kPlainProgressEvery, so logs stay short.
class Console {
 public:
  explicit Console(std::FILE* out);
  void line(const std::string& text);      // a permanent line
  void progress(const std::string& text);  // transient status
  void end_progress();                     // clear any progress line

 private:
  static constexpr std::chrono::seconds kPlainProgressEvery{10};
  std::FILE* out_;
  bool tty_;
  bool progress_shown_ = false;
  std::chrono::steady_clock::time_point last_plain_{};
};

}  // namespace kvsweep::orchestrator
