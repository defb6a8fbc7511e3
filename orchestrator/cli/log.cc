// The logger main() makes and hands down for --verbose.
#include "orchestrator/cli/log.h"

#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <mutex>

namespace kvsweep::orchestrator {
namespace {

// stderr, with stdout flushed before each line: stdout is block-buffered when redirected, and
// `kvsweep -v run > log 2>&1` must show a report before the lines logged after it.
class StderrAfterStdoutSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::fflush(stdout);
    std::fwrite(formatted.data(), 1, formatted.size(), stderr);
    std::fflush(stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

Log stderr_log(Verbosity verbosity) {
  auto log = std::make_shared<spdlog::logger>("kvsweep", std::make_shared<StderrAfterStdoutSink>());
  log->set_pattern("%H:%M:%S.%e [%l] %v");
  switch (verbosity) {
    case Verbosity::kQuiet:
      log->set_level(spdlog::level::err);
      break;
    case Verbosity::kNormal:
      log->set_level(spdlog::level::warn);
      break;
    case Verbosity::kVerbose:
      log->set_level(spdlog::level::debug);
      break;
  }
  return log;
}

}  // namespace kvsweep::orchestrator
