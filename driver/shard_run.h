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
#include <cstdint>
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

// The most a protocol file (ready, start, a plan with its workload) may hold.
inline constexpr std::uint64_t kShardFileMaxBytes = std::uint64_t{1} << 30;  // 1 GiB

// The whole file at `path`, nullopt while it is absent (a protocol file not yet written).
// Only a regular file of at most max_bytes, read without following a link or waiting on a
// FIFO: anything else throws InputFileError (std::runtime_error) "<path>: <why>".
std::optional<std::string> read_file_if_present(const std::string& path,
                                                std::uint64_t max_bytes = kShardFileMaxBytes);

// A local shard's lifeline (orchestrator/targets/shards/local_shard_launcher.h): `fd` is the
// read end of a pipe whose write end only the coordinator holds. When the coordinator ends,
// however it ends (kill -9 included), the pipe reads end-of-file and this process ends at once
// with exit status 1, sending nothing more: no one is left to read its records or release it.
// Watches on a thread of its own; call once, before the plan is read.
void end_when_coordinator_goes(int fd, int index);

// Validates the shard's run (std::invalid_argument naming the field), announces it is ready,
// waits for the start instant, sleeps to it, runs the load, writes the records and waits for
// the release. Throws std::runtime_error when a file cannot be written.
ShardOutcome run_shard(const ShardPlan& plan, const ShardRunOptions& options);

}  // namespace kvsweep::driver
