// One shard's side of the shard protocol (docs/driver.md, "Shards"): files in the shard's own
// directory, so the coordinator reaches them the same way whether the shard is a local process
// (it reads and writes the directory) or a pod (kubectl exec).
//
//   shard writes  ready          {"shard": K, "pid": P, "wall_s": T}: plan read, run checked
//   coordinator   start          {"at_wall_s": T}: the instant every shard starts its schedule
//   shard writes  records.jsonl  driver/shard_records.h, written whole (renamed into place)
//   coordinator   release        the records are copied: the shard may end
//   coordinator   cancel         end now, sending nothing more
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "driver/shard_plan.h"

namespace kvsweep::driver {

inline constexpr const char* kShardReadyFile = "ready";
inline constexpr const char* kShardStartFile = "start";
inline constexpr const char* kShardRecordsFile = "records.jsonl";
inline constexpr const char* kShardReleaseFile = "release";
inline constexpr const char* kShardCancelFile = "cancel";

struct ShardRunOptions {
  std::string dir;                          // the shard's directory (created if missing)
  int index = 0;                            // which shard of the plan's options.shard.count
  double start_timeout_s = 300;             // from ready to a start instant, else it gives up
  double release_timeout_s = 600;           // from records written to release, else it ends anyway
  const std::atomic<bool>* stop = nullptr;  // Ctrl-C / SIGTERM: end the run cleanly
};

enum class ShardOutcome {
  kDone,       // ran, wrote its records, was released (or waited out the release)
  kCancelled,  // the coordinator cancelled before the start: nothing was sent
  kNoStart,    // no start instant came in time: nothing was sent
};

// The whole file at `path`, nullopt while it is absent (a protocol file not yet written).
std::optional<std::string> read_file_if_present(const std::string& path);

// Validates the shard's run (std::invalid_argument naming the field), announces it is ready,
// waits for the start instant, sleeps to it, runs the load, writes the records and waits for
// the release. Throws std::runtime_error when a file cannot be written.
ShardOutcome run_shard(const ShardPlan& plan, const ShardRunOptions& options);

}  // namespace kvsweep::driver
