// Start, one instant, collect, check, release, merge.
#include "orchestrator/targets/shards/shard_coordinator.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "common/duration.h"
#include "common/json_text.h"
#include "common/wall_clock.h"
#include "driver/shard_run.h"

namespace kvsweep::orchestrator {
namespace {

using Clock = std::chrono::steady_clock;

// Stops the launcher on every way out of run_shards.
class StopOnExit {
 public:
  explicit StopOnExit(ShardLauncher& launcher) : launcher_(launcher) {}
  ~StopOnExit() {
    try {
      launcher_.stop();
    } catch (...) {  // a destructor must not throw; the shards' own timeouts end them
    }
  }
  StopOnExit(const StopOnExit&) = delete;
  StopOnExit& operator=(const StopOnExit&) = delete;

 private:
  ShardLauncher& launcher_;
};

// A ready file is one short line.
constexpr std::uint64_t kReadyFileMaxBytes = 4096;

std::string shard_name(int k, int count) {
  return "shard " + std::to_string(k) + " of " + std::to_string(count);
}

void cancel_all(ShardLauncher& launcher, int count) {
  for (int k = 0; k < count; ++k) {
    try {
      launcher.write_file(k, driver::kShardCancelFile, "cancel\n");
    } catch (const std::exception&) {  // a shard already gone needs no cancel
    }
  }
}

// Shard `k` failed: every shard that failed by now, the one with its own reason first. When
// one pod of a Job fails, Kubernetes ends the others (backoffLimit 0), and theirs is only
// "phase Failed": the first named must be the cause, not a consequence.
std::string failures_text(ShardLauncher& launcher, int count, int k, const std::string& first,
                          const std::string& when) {
  std::vector<std::pair<int, std::string>> failed = {{k, first}};
  for (int other = 0; other < count; ++other) {
    if (other == k) continue;
    if (auto why = launcher.failure(other)) failed.emplace_back(other, *why);
  }
  // A pod ended by the Job's failure says "phase Failed", at most with its container's "Error"
  // (SIGKILL, exit code 137); the cause names more (OOMKilled, Evicted, a waiting reason, a
  // local process's exit status and last words).
  std::stable_partition(failed.begin(), failed.end(), [](const auto& f) {
    const std::string& why = f.second;
    const bool generic =
        why.find("phase Failed") != std::string::npos &&
        (why.find("; container ") == std::string::npos || why.find(": Error") != std::string::npos);
    return !generic;
  });
  std::string text =
      shard_name(failed[0].first, count) + " failed " + when + ": " + failed[0].second;
  for (std::size_t i = 1; i < failed.size(); ++i) {
    text += "; also shard " + std::to_string(failed[i].first) + ": " + failed[i].second;
  }
  return text;
}

}  // namespace

std::vector<driver::ShardResult> run_shards(const driver::ShardPlan& plan, ShardLauncher& launcher,
                                            const ShardCoordination& how) {
  const int count = plan.options.shard.count;
  const auto say = [&](const std::string& text) {
    if (how.progress) how.progress(text);
  };
  const auto stopped = [&] { return how.stop != nullptr && how.stop->load(); };
  StopOnExit stop_on_exit(launcher);
  // A launcher call that fails (an exec into a pod that just died) is that shard's failure:
  // named with the pod's own reason where there is one.
  const auto guarded = [&](int k, const char* when, const auto& call) {
    try {
      return call();
    } catch (const ShardError&) {
      throw;
    } catch (const std::runtime_error& e) {
      if (const auto why = launcher.failure(k)) {
        throw ShardError(failures_text(launcher, count, k, *why, when));
      }
      throw ShardError(shard_name(k, count) + " failed " + when + ": " + e.what());
    }
  };
  launcher.start(driver::shard_plan_json(plan), count);

  // Every shard ready, or the cell fails before any load is sent.
  std::vector<bool> ready(static_cast<std::size_t>(count), false);
  int ready_count = 0;
  const auto ready_deadline = Clock::now() + std::chrono::duration<double>(how.ready_timeout_s);
  while (ready_count < count) {
    for (int k = 0; k < count; ++k) {
      if (ready[static_cast<std::size_t>(k)]) continue;
      if (const auto why = launcher.failure(k)) {
        cancel_all(launcher, count);
        throw ShardError(failures_text(launcher, count, k, *why, "before the start") +
                         "; nothing was sent");
      }
      if (guarded(k, "before the start", [&] {
            return launcher.read_file(k, driver::kShardReadyFile, kReadyFileMaxBytes);
          })) {
        ready[static_cast<std::size_t>(k)] = true;
        ++ready_count;
        say(std::to_string(ready_count) + " of " + std::to_string(count) + " shards ready");
      }
    }
    if (ready_count == count) break;
    if (stopped()) {
      cancel_all(launcher, count);
      throw ShardError("interrupted before the shards started; nothing was sent");
    }
    if (Clock::now() > ready_deadline) {
      cancel_all(launcher, count);
      std::string late;
      for (int k = 0; k < count; ++k) {
        if (!ready[static_cast<std::size_t>(k)])
          late += (late.empty() ? "" : ", ") + std::to_string(k);
      }
      throw ShardError("shards not ready within " + format_duration_s(how.ready_timeout_s) +
                       " (shard " + late + "); nothing was sent");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(launcher.poll_interval_s()));
  }

  // Each shard's clock against ours (pods on other machines), before the start: the records
  // are put on one clock with it (a shard that cannot be asked keeps 0, as a local one).
  std::vector<double> offsets_ms(static_cast<std::size_t>(count), 0.0);
  for (int k = 0; k < count; ++k) {
    if (const auto offset = launcher.clock_offset_ms(k)) {
      offsets_ms[static_cast<std::size_t>(k)] = *offset;
    }
  }
  const double start_at = unix_now_s() + how.start_lead_s;
  // The instant on each shard's own clock.
  for (int k = 0; k < count; ++k) {
    const double at = start_at + offsets_ms[static_cast<std::size_t>(k)] / 1000;
    guarded(k, "before the start", [&] {
      launcher.write_file(k, driver::kShardStartFile,
                          json_text(nlohmann::json{{"at_wall_s", at}}) + "\n");
    });
  }
  say("shards start together in " + format_duration_s(how.start_lead_s));

  // Every shard's records, counted and checksummed, and each checked against its part of the
  // plan: a file is read only up to what that part can fill.
  std::vector<driver::ShardRecordBounds> bounds;
  for (int k = 0; k < count; ++k) bounds.push_back(driver::shard_record_bounds(plan, k));
  std::vector<driver::ShardResult> results(static_cast<std::size_t>(count));
  std::vector<bool> collected(static_cast<std::size_t>(count), false);
  int collected_count = 0;
  const auto run_deadline =
      how.run_timeout_s > 0
          ? Clock::now() + std::chrono::duration<double>(how.start_lead_s + how.run_timeout_s)
          : Clock::time_point::max();
  bool interrupted = false;
  while (collected_count < count) {
    // Ctrl-C: the shards are ended (a local shard then writes what it measured, as one
    // process does); whatever records arrive are still collected and checked, once.
    if (!interrupted && stopped()) {
      interrupted = true;
      launcher.stop();
    }
    for (int k = 0; k < count; ++k) {
      if (collected[static_cast<std::size_t>(k)]) continue;
      const driver::ShardRecordBounds& bound = bounds[static_cast<std::size_t>(k)];
      const auto text = guarded(k, "during the run", [&] {
        return launcher.read_file(k, driver::kShardRecordsFile, bound.max_bytes);
      });
      if (!text) {
        if (const auto why = launcher.failure(k); why && !interrupted) {
          throw ShardError(failures_text(launcher, count, k, *why, "during the run") +
                           "; the cell's records are incomplete");
        }
        continue;
      }
      try {
        results[static_cast<std::size_t>(k)] = driver::parse_shard_records(
            *text,
            shard_name(k, count) + ": " + launcher.file_location(k, driver::kShardRecordsFile),
            bound);
      } catch (const std::runtime_error& e) {
        throw ShardError(std::string(e.what()) + "; the cell's records are incomplete");
      }
      results[static_cast<std::size_t>(k)].clock_offset_ms =
          offsets_ms[static_cast<std::size_t>(k)];
      if (results[static_cast<std::size_t>(k)].index != k) {
        throw ShardError(shard_name(k, count) + " delivered shard " +
                         std::to_string(results[static_cast<std::size_t>(k)].index) + "'s records");
      }
      guarded(k, "after the run",
              [&] { launcher.write_file(k, driver::kShardReleaseFile, "release\n"); });
      collected[static_cast<std::size_t>(k)] = true;
      ++collected_count;
      say(std::to_string(collected_count) + " of " + std::to_string(count) +
          " shards' records collected");
    }
    if (collected_count == count) break;
    if (interrupted) {
      throw ShardError("interrupted: " + std::to_string(collected_count) + " of " +
                       std::to_string(count) + " shards' records arrived; nothing is kept");
    }
    if (Clock::now() > run_deadline) {
      throw ShardError("shards still running " + format_duration_s(how.run_timeout_s) +
                       " after the start; ended");
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(launcher.poll_interval_s()));
  }
  return results;
}

}  // namespace kvsweep::orchestrator
