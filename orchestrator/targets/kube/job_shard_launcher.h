// Load shards as a Kubernetes Indexed Job (docs/driver.md, "Load shards"): one batch/v1 Job,
// completionMode Indexed, parallelism = completions = N, backoffLimit 0 (a shard is never run
// again silently: it would send its load twice), created and deleted with kubectl like every
// other change. The coordinator reaches each pod's protocol files through `kubectl exec ...
// kvsweep shard get|put`, so it needs no port and works from a laptop with a kubeconfig.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/targets/kube/kubectl.h"
#include "orchestrator/targets/shards/lifeline.h"
#include "orchestrator/targets/shards/shard_launcher.h"

namespace kvsweep::orchestrator::kube {

// The Job of `count` shards as kubectl creates it.
nlohmann::json shard_job_manifest(const ShardJobSettings& job, int count);

class JobShardLauncher : public ShardLauncher {
 public:
  JobShardLauncher(Kubectl& kubectl, ShardJobSettings spec);
  ~JobShardLauncher() override;
  JobShardLauncher(const JobShardLauncher&) = delete;
  JobShardLauncher& operator=(const JobShardLauncher&) = delete;

  void start(const std::string& plan_json, int count) override;
  std::optional<std::string> read_file(int shard, const std::string& name,
                                       std::uint64_t max_bytes) override;
  std::string file_location(int shard, const std::string& name) const override;
  void write_file(int shard, const std::string& name, const std::string& text) override;
  std::optional<std::string> failure(int shard) override;
  void stop() override;
  double poll_interval_s() const override { return 0.5; }
  std::optional<double> clock_offset_ms(int shard) override;

  // The Job as created (shard_job_manifest).
  nlohmann::json manifest(int count) const { return shard_job_manifest(spec_, count); }

  // Lets go of the Job as a coordinator killed now would (tests): its watcher's lifeline is
  // cut, and nothing is deleted here.
  void sever();

 private:
  // Reads the Job's pods; fills pods_ (index -> name) and problems_ (index -> why it failed).
  void refresh_pods();
  // Runs `kvsweep shard ARGS --dir .` in shard `shard`'s pod.
  ProcessResult exec(int shard, const std::vector<std::string>& args);
  void upload_plan(int shard);
  std::vector<std::string> delete_args() const;
  void reap_watcher();

  Kubectl& kubectl_;
  ShardJobSettings spec_;
  std::string plan_json_;
  int count_ = 0;
  bool created_ = false;
  bool deleted_ = false;
  std::map<int, std::string> pods_;      // running pods by completion index
  std::map<int, std::string> problems_;  // a pod that failed, by index
  std::map<int, bool> plan_put_;
  std::chrono::steady_clock::time_point last_refresh_{};
  std::unique_ptr<Lifeline> lifeline_;  // the watcher's (ShardJobSettings::watch_program)
  pid_t watcher_ = -1;
};

}  // namespace kvsweep::orchestrator::kube
