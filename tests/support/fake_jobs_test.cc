// The fake Job controller, driven by the real kubectl: Indexed Jobs' pods run as local
// processes (logs, exec, exit codes, injected faults), and deleting a Job kills them.
#include "tests/support/fake_jobs.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "orchestrator/targets/child_process.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Polls `done` every 20 ms for up to 20 s; true once it holds.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

json job_manifest(const std::string& name, int completions, const std::vector<std::string>& command,
                  int backoff_limit = 0) {
  json manifest = json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job", "metadata": {},
    "spec": {"completionMode": "Indexed",
             "template": {"metadata": {"labels": {"app": "shard"}},
                          "spec": {"restartPolicy": "Never", "nodeSelector": {"gpu": "a100"},
                                   "containers": [{"name": "shard", "image": "kvsweep:dev",
                                                   "env": [{"name": "SHARD_GREETING",
                                                            "value": "hello"}],
                                                   "resources": {"limits": {"cpu": "1"}}}]}}}})");
  manifest["metadata"]["name"] = name;
  manifest["spec"]["completions"] = completions;
  manifest["spec"]["parallelism"] = completions;
  manifest["spec"]["backoffLimit"] = backoff_limit;
  manifest["spec"]["template"]["spec"]["containers"][0]["command"] = command;
  return manifest;
}

std::string condition_of(const json& job, const std::string& type) {
  for (const auto& c : job["status"].value("conditions", json::array())) {
    if (c.value("type", "") == type) return c.value("status", "") + "/" + c.value("reason", "");
  }
  return "";
}

class FakeJobsTest : public ::testing::Test {
 protected:
  FakeJobsTest() { server_.write_kubeconfig(dir_.file("kubeconfig")); }

  orchestrator::ProcessResult kubectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"kubectl", "--kubeconfig", dir_.file("kubeconfig"),
                                     "--cache-dir", dir_.file("cache")};
    argv.insert(argv.end(), args.begin(), args.end());
    return orchestrator::run_process(argv, 30);
  }

  // Writes the manifest and runs `kubectl <verb> -f` on it.
  void submit(const json& manifest, const std::string& verb = "create") {
    const std::string path = dir_.file(manifest["metadata"]["name"].get<std::string>() + ".json");
    std::ofstream(path) << manifest.dump(2);
    const auto r = kubectl({verb, "-f", path});
    ASSERT_TRUE(r.ok()) << r.err;
  }

  json job(const std::string& name) {
    const auto r = kubectl({"get", "job", name, "-o", "json"});
    EXPECT_TRUE(r.ok()) << r.err;
    return json::parse(r.out, nullptr, false);
  }

  std::optional<json> pod_object(const std::string& job, int index) {
    const auto info = jobs_.pod(job, index);
    if (!info) return std::nullopt;
    return server_.get("pods", "default", info->name);
  }

  bool running(const std::string& job, int index) {
    const auto pod = pod_object(job, index);
    return pod && (*pod)["status"].value("phase", "") == "Running";
  }

  TempDir dir_;
  FakeApiServer server_;
  JobController jobs_{
      server_,
      JobControllerOptions{.binaries = {{"print-env", "/usr/bin/env"}},
                           .start_delay_s = 0.1,
                           .kill_grace_s = 0.5,
                           .stuck_jobs = {{"unpullable", {"ErrImagePull", "pull access denied"}}},
                           .start_delays_s = {}}};
};

TEST_F(FakeJobsTest, IndexedJobRunsEachIndexAsAProcessAndCompletes) {
  submit(job_manifest("shards", 3, {"print-env"}));  // mapped to /usr/bin/env
  // kubectl wait watches the Job: its status changes are events.
  const auto wait = kubectl({"wait", "--for=condition=Complete", "job/shards", "--timeout=20s"});
  ASSERT_TRUE(wait.ok()) << wait.err;
  const json done = job("shards");
  EXPECT_EQ(condition_of(done, "Complete"), "True/CompletionsReached");
  EXPECT_EQ(done["status"]["succeeded"], 3);
  EXPECT_EQ(done["status"]["completedIndexes"], "0-2");
  EXPECT_EQ(done["status"]["active"], 0);
  for (int index = 0; index < 3; ++index) {
    const auto pod = pod_object("shards", index);
    ASSERT_TRUE(pod);
    const std::string name = (*pod)["metadata"]["name"];
    EXPECT_EQ(name.rfind("shards-" + std::to_string(index) + "-", 0), 0u) << name;
    EXPECT_EQ(name.size(), std::string("shards-0-abcde").size()) << name;
    const json& labels = (*pod)["metadata"]["labels"];
    EXPECT_EQ(labels["job-name"], "shards");
    EXPECT_EQ(labels["app"], "shard");
    EXPECT_EQ(labels["batch.kubernetes.io/job-completion-index"], std::to_string(index));
    EXPECT_EQ((*pod)["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
              std::to_string(index));
    EXPECT_EQ((*pod)["metadata"]["ownerReferences"][0]["uid"], done["metadata"]["uid"]);
    EXPECT_EQ((*pod)["spec"]["nodeSelector"]["gpu"], "a100");
    EXPECT_EQ((*pod)["spec"]["containers"][0]["resources"]["limits"]["cpu"], "1");
    EXPECT_EQ((*pod)["status"]["phase"], "Succeeded");
    EXPECT_EQ((*pod)["status"]["containerStatuses"][0]["state"]["terminated"]["reason"],
              "Completed");

    const auto logs = kubectl({"logs", name});
    ASSERT_TRUE(logs.ok()) << logs.err;
    EXPECT_NE(logs.out.find("JOB_COMPLETION_INDEX=" + std::to_string(index) + "\n"),
              std::string::npos)
        << logs.out;
    EXPECT_NE(logs.out.find("SHARD_GREETING=hello"), std::string::npos);
  }
  const auto listed = kubectl({"get", "pods", "-l", "job-name=shards", "-o", "name"});
  ASSERT_TRUE(listed.ok()) << listed.err;
  EXPECT_EQ(std::count(listed.out.begin(), listed.out.end(), '\n'), 3) << listed.out;
}

TEST_F(FakeJobsTest, ParallelismBelowCompletionsRunsTheIndexesInTurn) {
  json manifest = job_manifest("serial", 3, {"sh", "-c", "sleep 0.2; echo $JOB_COMPLETION_INDEX"});
  manifest["spec"]["parallelism"] = 1;
  submit(manifest);
  ASSERT_TRUE(eventually([&] { return jobs_.pod("serial", 0).has_value(); }));
  EXPECT_FALSE(jobs_.pod("serial", 1).has_value());  // index 1 waits for index 0
  const auto wait = kubectl({"wait", "--for=condition=Complete", "job/serial", "--timeout=20s"});
  ASSERT_TRUE(wait.ok()) << wait.err;
  EXPECT_EQ(job("serial")["status"]["completedIndexes"], "0-2");
  const auto logs = kubectl({"logs", jobs_.pod("serial", 2)->name});
  ASSERT_TRUE(logs.ok()) << logs.err;
  EXPECT_EQ(logs.out, "2\n");
}

TEST_F(FakeJobsTest, ExecRunsInThePodsDirectoryWithItsEnvironmentAndExitCode) {
  submit(job_manifest("sleeper", 1, {"sleep", "30"}), "apply");
  ASSERT_TRUE(eventually([&] { return jobs_.pod("sleeper", 0).has_value(); }));
  const auto wait = kubectl(
      {"wait", "--for=condition=Ready", "pod/" + jobs_.pod("sleeper", 0)->name, "--timeout=20s"});
  ASSERT_TRUE(wait.ok()) << wait.err;
  EXPECT_TRUE(running("sleeper", 0));
  const auto info = jobs_.pod("sleeper", 0);
  ASSERT_TRUE(info && info->running);
  std::ofstream(info->dir + "/result.json") << "{\"shard\":0}\n";

  const auto cat = kubectl({"exec", info->name, "--", "cat", "result.json"});
  ASSERT_TRUE(cat.ok()) << cat.err;
  EXPECT_EQ(cat.out, "{\"shard\":0}\n");

  const auto env = kubectl({"exec", info->name, "-c", "shard", "--", "print-env"});
  ASSERT_TRUE(env.ok()) << env.err;
  EXPECT_NE(env.out.find("JOB_COMPLETION_INDEX=0\n"), std::string::npos) << env.out;

  const auto failing =
      kubectl({"exec", info->name, "--", "sh", "-c", "echo partial; echo broken >&2; exit 3"});
  EXPECT_EQ(failing.exit_code, 3) << failing.err;
  EXPECT_EQ(failing.out, "partial\n");
  EXPECT_NE(failing.err.find("broken"), std::string::npos) << failing.err;
  EXPECT_NE(failing.err.find("command terminated with exit code 3"), std::string::npos)
      << failing.err;

  // Still Running: exec does not disturb the pod's own process.
  EXPECT_TRUE(running("sleeper", 0));
}

TEST_F(FakeJobsTest, OOMKilledPodFailsAndFailsTheJobWithNoBackoffLeft) {
  submit(job_manifest("oom", 2, {"sleep", "30"}));
  ASSERT_TRUE(eventually([&] { return running("oom", 0) && running("oom", 1); }));
  const pid_t victim = jobs_.pod("oom", 1)->pid;
  const pid_t other = jobs_.pod("oom", 0)->pid;
  ASSERT_TRUE(jobs_.fail_pod("oom", 1, "OOMKilled", 137));
  ASSERT_TRUE(eventually([&] { return condition_of(job("oom"), "Failed") != ""; }));
  const json failed = job("oom");
  EXPECT_EQ(condition_of(failed, "Failed"), "True/BackoffLimitExceeded");
  EXPECT_EQ(failed["status"]["failed"], 1);
  const auto pod = pod_object("oom", 1);
  ASSERT_TRUE(pod);
  EXPECT_EQ((*pod)["status"]["phase"], "Failed");
  const json& terminated = (*pod)["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["reason"], "OOMKilled");
  EXPECT_EQ(terminated["exitCode"], 137);
  // backoffLimit 0: no new pod for the index; the Job's other process is stopped.
  EXPECT_EQ(jobs_.pod("oom", 1)->name, (*pod)["metadata"]["name"]);
  EXPECT_TRUE(eventually([&] { return process_gone(victim) && process_gone(other); }));
  EXPECT_FALSE(jobs_.fail_pod("oom", 1, "OOMKilled", 137));  // already finished
}

TEST_F(FakeJobsTest, UnpullableImageKeepsPodsPendingAndExecIsRefused) {
  submit(job_manifest("unpullable", 2, {"sleep", "30"}));
  ASSERT_TRUE(eventually([&] { return pod_object("unpullable", 1).has_value(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // well past start_delay_s
  for (int index = 0; index < 2; ++index) {
    const auto pod = pod_object("unpullable", index);
    ASSERT_TRUE(pod);
    EXPECT_EQ((*pod)["status"]["phase"], "Pending");
    const json& waiting = (*pod)["status"]["containerStatuses"][0]["state"]["waiting"];
    EXPECT_EQ(waiting["reason"], "ErrImagePull");
    EXPECT_EQ(waiting["message"], "pull access denied");
    EXPECT_EQ(jobs_.pod("unpullable", index)->pid, -1);
  }
  EXPECT_EQ(job("unpullable")["status"]["active"], 2);
  EXPECT_EQ(job("unpullable")["status"]["ready"], 0);

  const std::string name = jobs_.pod("unpullable", 0)->name;
  const auto exec = kubectl({"exec", name, "--", "true"});
  EXPECT_NE(exec.exit_code, 0);
  EXPECT_NE(exec.err.find("container not found"), std::string::npos) << exec.err;
  const auto logs = kubectl({"logs", name});
  EXPECT_NE(logs.exit_code, 0);
  EXPECT_NE(logs.err.find("is waiting to start: ErrImagePull"), std::string::npos) << logs.err;
}

TEST_F(FakeJobsTest, DeletingTheJobKillsItsProcessesAndRemovesItsPods) {
  submit(job_manifest("doomed", 2, {"sleep", "30"}));
  ASSERT_TRUE(eventually([&] { return running("doomed", 0) && running("doomed", 1); }));
  const pid_t pids[] = {jobs_.pod("doomed", 0)->pid, jobs_.pod("doomed", 1)->pid};
  EXPECT_FALSE(process_gone(pids[0]));
  const auto del = kubectl({"delete", "job", "doomed", "--cascade=foreground"});
  ASSERT_TRUE(del.ok()) << del.err;
  EXPECT_TRUE(eventually([&] { return process_gone(pids[0]) && process_gone(pids[1]); }));
  EXPECT_TRUE(server_.list("pods", "default").empty());
  EXPECT_FALSE(server_.get("jobs", "default", "doomed"));

  // Background, not waiting: the same, later.
  submit(job_manifest("doomed", 1, {"sleep", "30"}));
  ASSERT_TRUE(eventually([&] { return running("doomed", 0); }));
  const pid_t again = jobs_.pod("doomed", 0)->pid;
  const auto quick = kubectl({"delete", "job", "doomed", "--wait=false"});
  ASSERT_TRUE(quick.ok()) << quick.err;
  EXPECT_TRUE(eventually([&] { return process_gone(again); }));
  EXPECT_TRUE(eventually([&] { return server_.list("pods", "default").empty(); }));
}

}  // namespace
}  // namespace kvsweep::testing
