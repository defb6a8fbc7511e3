// Shards as local processes: `kvsweep shard` N times on this machine, each in its own
// directory, through the same protocol a Kubernetes Job's pods speak (docs/driver.md, "Shards"),
// each ending by itself when this process ends (a pipe only this process holds open).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "orchestrator/targets/shards/lifeline.h"
#include "orchestrator/targets/shards/shard_launcher.h"

namespace kvsweep::orchestrator {

class LocalShardLauncher : public ShardLauncher {
 public:
  // `program` is the kvsweep binary the shards run (self_program() for the running one);
  // `work_dir` holds plan.json and shard-K/ (created; left for inspection when kept).
  LocalShardLauncher(std::string program, std::string work_dir);
  ~LocalShardLauncher() override;
  LocalShardLauncher(const LocalShardLauncher&) = delete;
  LocalShardLauncher& operator=(const LocalShardLauncher&) = delete;

  void start(const std::string& plan_json, int count) override;
  std::optional<std::string> read_file(int shard, const std::string& name,
                                       std::uint64_t max_bytes) override;
  std::string file_location(int shard, const std::string& name) const override;
  void write_file(int shard, const std::string& name, const std::string& text) override;
  std::optional<std::string> failure(int shard) override;
  void stop() override;

  // The argv shard `shard` runs.
  std::vector<std::string> argv(int shard) const;

 private:
  struct Child {
    pid_t pid = -1;
    bool reaped = false;
    int status = 0;
  };
  std::string shard_dir(int shard) const;
  void reap(Child& child);

  std::string program_;
  std::string work_dir_;
  std::vector<Child> children_;
  std::unique_ptr<Lifeline> lifeline_;  // held until every shard is reaped
};

// The running binary (/proc/self/exe), for a kvsweep that starts shards of itself.
std::string self_program();

}  // namespace kvsweep::orchestrator
