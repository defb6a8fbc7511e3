// A scripted Target and load step for runner tests: no server, no socket. Both write what was
// called, in order, into one shared list, so a test reads the sweep's whole sequence.
#pragma once

#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "driver/load_options.h"
#include "driver/workload.h"
#include "orchestrator/sweep/cell_text.h"
#include "orchestrator/targets/target.h"

namespace kvsweep::orchestrator::test {

// Every call returns one command log whose step names the call, as a real target returns the
// kubectl calls it made. A failing call throws TargetError carrying its own log.
class FakeTarget : public Target {
 public:
  explicit FakeTarget(std::vector<std::string>& calls) : calls_(calls) {}

  std::set<std::string> fail_apply_of;  // levels: applying a treatment with one of them fails
  std::set<std::string> fail_gate_of;   // levels: the readiness gates after applying them fail
  int gate_failures = -1;               // ... this many times, then pass; -1: every time
  bool fail_start = false;
  std::vector<std::string> metrics_urls;  // scraped around each cell; none by default
  std::string health_after_cell;          // a "health" event cell_finished() reports, "" none
  // Called inside every wait_ready, as a long readiness wait would take its time.
  std::function<void()> during_wait_ready;

  std::string describe() const override { return "fake target"; }

  CommandLogs start() override {
    if (fail_start) throw TargetError("fake: cannot connect", {log("start", 1)});
    return {log("start")};
  }

  CommandLogs apply(const Treatment& t) override {
    applied_ = t;
    const std::string what = "apply " + describe_treatment(t);
    if (sets_one_of(t, fail_apply_of)) {
      throw TargetError("applying " + describe_treatment(t) + ": fake refused", {log(what, 1)});
    }
    return {log(what)};
  }

  CommandLogs wait_ready() override {
    if (during_wait_ready) during_wait_ready();
    if (sets_one_of(applied_, fail_gate_of) && gate_failures != 0) {
      if (gate_failures > 0) --gate_failures;
      throw TargetError("readiness gate fake: never ready", {log("wait_ready", 1)});
    }
    return {log("wait_ready")};
  }

  CommandLogs make_cold() override { return {log("cold")}; }

  Endpoints endpoints() const override {
    calls_.push_back("endpoints");
    return {"http://fake.invalid", metrics_urls};  // by default nothing to scrape
  }

  CommandLogs cell_finished() override {
    CommandLogs logs = {log("cell_finished")};
    if (!health_after_cell.empty()) {
      CommandLog health;
      health.step = "health";
      health.exit_code = 0;
      health.out = health_after_cell + "\n";
      logs.push_back(health);
    }
    return logs;
  }

 private:
  static bool sets_one_of(const Treatment& t, const std::set<std::string>& levels) {
    for (const auto& [factor, level] : t.levels) {
      if (levels.count(level) > 0) return true;
    }
    return false;
  }

  CommandLog log(const std::string& step, int exit_code = 0) {
    calls_.push_back(step);
    CommandLog log;
    log.step = step;
    log.argv = {"fake", step};
    log.exit_code = exit_code;
    return log;
  }

  std::vector<std::string>& calls_;
  Treatment applied_;
};

// One successful request as a scripted load returns it: sent at `sent_s`, its first token
// `ttft_ms` later, then one more token 2 ms after (2 output tokens, nothing cached).
inline driver::RequestRecord ok_record(std::int64_t index, double sent_s, double ttft_ms,
                                       std::int64_t prompt_tokens = 10) {
  driver::RequestRecord r;
  r.index = index;
  r.ok = true;
  r.http_status = 200;
  r.sent_s = sent_s;
  r.ttft_ms = ttft_ms;
  r.first_token_s = sent_s + ttft_ms / 1000;
  r.last_token_s = r.first_token_s + 0.002;
  r.ended_s = r.last_token_s;
  r.e2e_ms = ttft_ms + 2;
  r.tpot_ms = 2;
  r.prompt_tokens = prompt_tokens;
  r.output_tokens = 2;
  r.cached_tokens = 0;
  return r;
}

// The load step: "load c=<users or in-flight cap> n=<requests>" per call, every request ok
// with fixed timings. `stop_at` (1-based call count, 0 = never) raises the stop flag during
// that call, as Ctrl-C would, and returns half its requests, interrupted.
class FakeLoad {
 public:
  FakeLoad(std::vector<std::string>& calls, std::atomic<bool>& stop, int stop_at = 0)
      : calls_(calls), stop_(stop), stop_at_(stop_at) {}

  driver::LoadResult operator()(const driver::LoadOptions& o, const driver::Workload& /*w*/,
                                const std::function<void(const driver::Progress&)>& progress) {
    const int users = o.concurrency > 0 ? o.concurrency : o.max_concurrency;
    calls_.push_back("load c=" + std::to_string(users) + " n=" + std::to_string(o.num_requests));
    ++count_;
    driver::LoadResult result;
    result.epoch_wall_s = 1'700'000'000.0 + count_;
    std::int64_t n = o.num_requests;
    if (count_ == stop_at_) {
      stop_ = true;
      result.interrupted = true;
      n /= 2;
    }
    for (std::int64_t i = 0; i < n; ++i) result.records.push_back(record(i));
    if (progress) progress(driver::Progress{n, o.num_requests, 0, 1, double(n), 2, 3});
    return result;
  }

 private:
  static driver::RequestRecord record(std::int64_t i) {
    return ok_record(i, 0.01 * static_cast<double>(i), 2);
  }

  std::vector<std::string>& calls_;
  std::atomic<bool>& stop_;
  int stop_at_;
  int count_ = 0;
};

}  // namespace kvsweep::orchestrator::test
