// Load shards as an Indexed Job: the real kubectl creates the Job on the fake API server, whose
// Job controller runs each pod as a local `kvsweep shard run` process; the coordinator reaches
// the pods' files through `kubectl exec`, merges their records and deletes the Job.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include "driver/shard_plan.h"
#include "orchestrator/sweep/sharded_load.h"
#include "orchestrator/targets/kube/job_shard_launcher.h"
#include "orchestrator/targets/shards/shard_coordinator.h"
#include "tests/orchestrator/targets/kube/kube_test_env.h"
#include "tests/support/fake_jobs.h"

namespace kvsweep::orchestrator::kube::test {
namespace {

[[maybe_unused]] ::testing::Environment* const kCacheEnv =
    ::testing::AddGlobalTestEnvironment(new KubectlCacheEnvironment);

class JobShards : public KubeTargetTest {
 protected:
  JobShards()
      : fleet_(start_fleet(2, "sim-model")),
        jobs_(server_,
              [] {
                testing::JobControllerOptions options;
                options.binaries = {{"kvsweep", KVSWEEP_BINARY}};
                options.kill_grace_s = 0.5;
                return options;
              }()),
        kubectl_([this] {
          KubectlConfig config;
          config.kubeconfig = dir_.file("kubeconfig");
          config.timeout_s = 20;
          return config;
        }()) {}

  driver::LoadOptions options(int shards) const {
    driver::LoadOptions o;
    o.base_url = fleet_->router_url();
    o.model = "sim-model";
    o.request_rate = 40;
    o.num_requests = 30;
    o.max_tokens = 2;
    o.shard.count = shards;
    return o;
  }

  driver::Workload workload() const {
    driver::Workload w;
    for (int c = 0; c < 12; ++c) {
      driver::Conversation conversation;
      conversation.user = {"question " + std::to_string(c)};
      conversation.assistant = {"answer"};
      w.conversations.push_back(conversation);
    }
    return w;
  }

  ShardJobSettings job(const std::string& name) const {
    ShardJobSettings settings;
    settings.name = name;
    settings.image = "kvsweep:test";
    settings.cpu = "1";
    settings.ready_timeout_s = 60;
    return settings;
  }

  std::unique_ptr<sim::Fleet> fleet_;
  testing::JobController jobs_;
  Kubectl kubectl_;
};

TEST_F(JobShards, AnIndexedJobOfTwoPodsSendsTheWholeRunAndIsDeletedAfter) {
  // A Job of the cell's name left by a killed run (it may still be sending): deleted first.
  server_.put("jobs", {{"apiVersion", "batch/v1"},
                       {"kind", "Job"},
                       {"metadata", {{"name", "shards-a"}, {"namespace", "default"}}},
                       {"spec", {{"completions", 2}}}});
  JobShardLauncher launcher(kubectl_, job("shards-a"));
  const json manifest = launcher.manifest(2);
  EXPECT_EQ(manifest["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(manifest["spec"]["completions"], 2);
  EXPECT_EQ(manifest["spec"]["parallelism"], 2);
  EXPECT_EQ(manifest["spec"]["backoffLimit"], 0);
  const ShardedLoad sharded = run_sharded_load(options(2), "", workload(), launcher, nullptr, {});
  std::set<std::int64_t> indices;
  for (const auto& record : sharded.result.records) {
    EXPECT_TRUE(record.ok) << record.error;
    indices.insert(record.index);
  }
  EXPECT_EQ(indices.size(), 30u);
  EXPECT_EQ(*indices.rbegin(), 29);
  ASSERT_EQ(sharded.shards.size(), 2u);
  EXPECT_EQ(sharded.shards[0].measured + sharded.shards[1].measured, 30);
  // Every pod was reached through kubectl exec, and the Job is gone once the cell ended.
  EXPECT_FALSE(server_.get("jobs", "default", "shards-a").has_value());
  const auto job_calls = object_calls(server_.calls(), "jobs");
  ASSERT_GE(job_calls.size(), 3u);
  EXPECT_EQ(job_calls[0], "DELETE shards-a");  // the leftover
  EXPECT_EQ(std::count(job_calls.begin(), job_calls.end(), "POST"), 1);
  EXPECT_EQ(job_calls.back(), "DELETE shards-a");
  bool execed = false;
  for (const auto& log : kubectl_.take_logs()) {
    execed = execed || (log.argv.size() > 6 && log.argv[5] == "exec");
  }
  EXPECT_TRUE(execed);
}

// A coordinator killed while its Job runs (kill -9: no destructor, no delete) leaves no Job
// sending: its watcher, which holds the coordinator's lifeline, deletes the Job once the
// lifeline closes. A coordinator that ends well deletes the Job itself and its watcher does
// nothing (AnIndexedJobOfTwoPodsSendsTheWholeRunAndIsDeletedAfter: one DELETE).
TEST_F(JobShards, AKilledCoordinatorsJobIsDeletedByItsWatcher) {
  ShardJobSettings settings = job("shards-d");
  settings.watch_program = KVSWEEP_BINARY;
  JobShardLauncher launcher(kubectl_, settings);
  driver::ShardPlan plan;
  plan.options = options(2);
  plan.options.num_requests = 0;
  plan.options.duration_s = 60;
  plan.workload = workload();
  launcher.start(driver::shard_plan_json(plan), 2);
  ASSERT_TRUE(server_.get("jobs", "default", "shards-d").has_value());
  launcher.sever();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server_.get("jobs", "default", "shards-d").has_value() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_FALSE(server_.get("jobs", "default", "shards-d").has_value())
      << "the killed coordinator's Job was left running";
}

TEST_F(JobShards, AnOomKilledShardFailsTheCellNamingItsPodAndReason) {
  JobShardLauncher launcher(kubectl_, job("shards-b"));
  driver::LoadOptions o = options(2);
  o.num_requests = 0;
  o.duration_s = 8;
  // Once shard 1 has its start instant (the load is under way a second later), kill it.
  std::thread killer([&] {
    for (int i = 0; i < 1200; ++i) {
      const auto pod = jobs_.pod("shards-b", 1);
      if (pod && std::filesystem::exists(std::filesystem::path(pod->dir) / "start")) {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        jobs_.fail_pod("shards-b", 1, "OOMKilled", 137);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::string error = "(no error)";
  try {
    run_sharded_load(o, "", workload(), launcher, nullptr, {});
  } catch (const std::exception& e) {
    error = e.what();
  }
  killer.join();
  EXPECT_CONTAINS(error, "shard 1 of 2 failed");
  EXPECT_CONTAINS(error, "pod shards-b-1-");
  EXPECT_CONTAINS(error, "OOMKilled");
  EXPECT_FALSE(server_.get("jobs", "default", "shards-b").has_value());
}

TEST_F(JobShards, AnImageThatCannotBePulledFailsBeforeAnyLoadIsSent) {
  jobs_.hold_pending("shards-c", {"ErrImagePull", "pull access denied for kvsweep"});
  JobShardLauncher launcher(kubectl_, job("shards-c"));
  std::string error = "(no error)";
  try {
    run_sharded_load(options(2), "", workload(), launcher, nullptr, {});
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_CONTAINS(error, "failed before the start: pod shards-c-");
  EXPECT_CONTAINS(error, "; nothing was sent");
  EXPECT_CONTAINS(error, "ErrImagePull");
}

}  // namespace
}  // namespace kvsweep::orchestrator::kube::test
