// One shard: ready, wait for the start, run, write the records, wait for the release.
#include "driver/shard_run.h"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/atomic_file.h"
#include "common/input_file.h"
#include "common/json_text.h"
#include "common/wall_clock.h"
#include "driver/descriptor_budget.h"
#include "driver/load_run.h"
#include "driver/shard_records.h"

namespace kvsweep::driver {
namespace {

namespace fs = std::filesystem;

// How often a waiting shard looks for the coordinator's files: short against the start lead
// (docs/driver.md), long enough to cost nothing.
constexpr auto kPoll = std::chrono::milliseconds(5);

bool stopping(const ShardRunOptions& o) { return o.stop != nullptr && o.stop->load(); }

// Waits for `name` in the shard's directory; nullopt on cancel, stop or timeout.
std::optional<std::string> wait_for(const ShardRunOptions& o, const char* name, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  const fs::path dir(o.dir);
  while (std::chrono::steady_clock::now() < deadline && !stopping(o)) {
    if (auto text = read_file_if_present((dir / name).string())) return text;
    if (fs::exists(dir / kShardCancelFile)) return std::nullopt;
    std::this_thread::sleep_for(kPoll);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> read_file_if_present(const std::string& path, std::uint64_t max_bytes) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw InputFileError(path, std::strerror(errno));
  }
  // Protocol files are renamed into place, never linked: a link (to /dev/zero, say) is not one.
  if (S_ISLNK(info.st_mode)) throw InputFileError(path, "a symbolic link, not a protocol file");
  return read_input_file(path, max_bytes);
}

void end_when_coordinator_goes(int fd, int index) {
  std::thread([fd, index] {
    while (true) {
      pollfd watched{fd, POLLIN, 0};
      const int ready = ::poll(&watched, 1, -1);
      if (ready < 0 && errno == EINTR) continue;
      // Readable or hung up: the coordinator never writes, so either is its end (an error on
      // the descriptor too: a shard cannot tell its coordinator lives without it).
      char byte = 0;
      if (ready > 0 && (watched.revents & POLLIN) != 0 && ::read(fd, &byte, 1) > 0) continue;
      std::fprintf(stderr, "kvsweep shard %d: the coordinator is gone; ending now\n", index);
      std::fflush(stderr);
      std::_Exit(1);
    }
  }).detach();
}

ShardOutcome run_shard(const ShardPlan& plan, const ShardRunOptions& o) {
  LoadOptions options = plan.options;
  options.shard.index = o.index;
  if (!plan.api_key_env.empty()) {
    const char* key = std::getenv(plan.api_key_env.c_str());
    if (key != nullptr) options.api_key = key;
  }
  options.stop = o.stop;
  validate_load_options(options, plan.workload);
  check_descriptor_budget(options, plan.workload);

  const fs::path dir(o.dir);
  fs::create_directories(dir);
  const nlohmann::json ready = {{"shard", o.index}, {"pid", ::getpid()}, {"wall_s", unix_now_s()}};
  write_file_atomically((dir / kShardReadyFile).string(), json_text(ready) + "\n");

  const std::optional<std::string> start = wait_for(o, kShardStartFile, o.start_timeout_s);
  if (!start)
    return fs::exists(dir / kShardCancelFile) ? ShardOutcome::kCancelled : ShardOutcome::kNoStart;
  double at_wall_s = 0;
  try {
    at_wall_s = nlohmann::json::parse(*start).at("at_wall_s").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(o.dir + "/" + kShardStartFile + ": " + e.what());
  }
  // Sleep to the instant on the wall clock, the one clock every shard shares.
  const double wait_s = at_wall_s - unix_now_s();
  if (wait_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));

  ShardResult shard;
  shard.index = o.index;
  shard.count = options.shard.count;
  shard.start_at_wall_s = at_wall_s;
  shard.result = run_load(options, plan.workload);
  write_file_atomically((dir / kShardRecordsFile).string(), shard_records_text(shard));
  wait_for(o, kShardReleaseFile, o.release_timeout_s);
  return ShardOutcome::kDone;
}

}  // namespace kvsweep::driver
