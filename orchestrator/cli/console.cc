// What a person sees while a command runs: permanent lines, one progress line on a terminal,
// and errors.
#include "orchestrator/cli/console.h"

#include <unistd.h>

namespace kvsweep::orchestrator {
namespace {

// stdout is block-buffered when redirected: without this, `kvsweep run > log 2>&1` would put
// the report after the summary line that follows it.
void flush_stdout_before(std::FILE* out) {
  if (out != stdout) std::fflush(stdout);
}

}  // namespace

Console::Console(std::FILE* out, PlainProgress plain, Verbosity verbosity)
    : out_(out),
      tty_(isatty(fileno(out)) == 1 && verbosity != Verbosity::kVerbose),
      plain_(plain),
      quiet_(verbosity == Verbosity::kQuiet) {}

void Console::line(const std::string& text) {
  if (quiet_) return;
  end_progress();
  flush_stdout_before(out_);
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

void Console::progress(const std::string& text) {
  if (quiet_) return;
  if (tty_) {
    // \r + erase-to-end-of-line: one line, rewritten.
    flush_stdout_before(out_);
    std::fprintf(out_, "\r%s\033[K", text.c_str());
    std::fflush(out_);
    progress_shown_ = true;
    return;
  }
  if (plain_ == PlainProgress::kQuiet) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_plain_ < kPlainProgressEvery) return;
  last_plain_ = now;
  flush_stdout_before(out_);
  std::fprintf(out_, "  %s\n", text.c_str());
  std::fflush(out_);
}

void Console::end_progress() {
  if (!progress_shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  progress_shown_ = false;
}

void print_error(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "kvsweep: error: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace kvsweep::orchestrator
