// What a person sees while a sweep runs: permanent lines, and one progress line on a terminal.
#include "orchestrator/console.h"

#include <unistd.h>

namespace kvsweep::orchestrator {

Console::Console(std::FILE* out, PlainProgress plain)
    : out_(out), tty_(isatty(fileno(out)) == 1), plain_(plain) {}

void Console::line(const std::string& text) {
  end_progress();
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

void Console::progress(const std::string& text) {
  if (tty_) {
    // \r + erase-to-end-of-line: one line, rewritten.
    std::fprintf(out_, "\r%s\033[K", text.c_str());
    std::fflush(out_);
    progress_shown_ = true;
    return;
  }
  if (plain_ == PlainProgress::kQuiet) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_plain_ < kPlainProgressEvery) return;
  last_plain_ = now;
  std::fprintf(out_, "  %s\n", text.c_str());
  std::fflush(out_);
}

void Console::end_progress() {
  if (!progress_shown_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  progress_shown_ = false;
}

}  // namespace kvsweep::orchestrator
