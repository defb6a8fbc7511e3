// What the kube target tests share: a fake API server the real kubectl drives, a kubeconfig
// for it, a simulated fleet on loopback as the model server, and a scenario wired to both.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "driver/http_fetch.h"
#include "orchestrator/scenario/scenario_spec.h"
#include "orchestrator/targets/target.h"
#include "sim/fleet.h"
#include "tests/support/fake_apiserver.h"
#include "tests/support/temp_dir.h"

// EXPECT that `part` occurs in `text`, printing the whole text when it does not.
#define EXPECT_CONTAINS(text, part)                          \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "expected to find: " << (part) << "\n in: " << (text)

namespace kvsweep::orchestrator::kube::test {

using nlohmann::json;

// kubectl keeps a discovery cache under $HOME unless KUBECACHEDIR says otherwise; each test
// binary gets its own, so nothing leaks between runs (set before any thread starts).
class KubectlCacheEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::make_unique<testing::TempDir>();
    ::setenv("KUBECACHEDIR", dir_->file("kube-cache").c_str(), 1);
  }
  void TearDown() override { dir_.reset(); }

 private:
  std::unique_ptr<testing::TempDir> dir_;
};

// The message of the TargetError that `action` throws, or "(no error)" when it returns.
template <typename Action>
std::string target_error_of(Action&& action) {
  try {
    action();
  } catch (const TargetError& e) {
    return e.what();
  }
  return "(no error)";
}

// The commands carried by the TargetError that `action` throws; empty when it returns.
template <typename Action>
CommandLogs commands_of_failure(Action&& action) {
  try {
    action();
  } catch (const TargetError& e) {
    return e.commands();
  }
  return {};
}

// endpoints().metrics_urls are every replica's /metrics, found from the pods, and each serves vLLM
// series.
inline void expect_metrics_of_every_replica(const Target& target, const sim::Fleet& fleet) {
  std::vector<std::string> want;
  for (const auto& url : fleet.replica_urls()) want.push_back(url + "/metrics");
  EXPECT_EQ(target.endpoints().metrics_urls, want);
  for (const auto& url : target.endpoints().metrics_urls) {
    const auto r = driver::http_get(url, 5);
    EXPECT_EQ(r.status, 200) << url << ": " << r.error;
    EXPECT_CONTAINS(r.body, "vllm:");
  }
}

// "http://127.0.0.1:PORT" -> PORT
inline int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

inline std::unique_ptr<sim::Fleet> start_fleet(int replicas, const std::string& model) {
  sim::FleetOptions options;
  options.replicas = replicas;
  options.model = model;
  auto fleet = std::make_unique<sim::Fleet>(options);
  fleet->start();
  return fleet;
}

// A Ready pod on loopback whose containerPort is a fleet replica's port, so discovery finds
// the replica as http://127.0.0.1:PORT.
inline json replica_pod(const std::string& name, const json& labels, const std::string& url,
                        const json& env = json::object()) {
  return testing::make_pod(name, "default", labels, true, "127.0.0.1", port_of(url), env);
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The argv of every logged command, in order.
inline std::vector<std::vector<std::string>> argvs_of(const std::vector<CommandLog>& logs) {
  std::vector<std::vector<std::string>> out;
  for (const auto& log : logs) out.push_back(log.argv);
  return out;
}

inline std::vector<CommandLog> logs_of_step(const std::vector<CommandLog>& logs,
                                            const std::string& step) {
  std::vector<CommandLog> out;
  for (const auto& log : logs) {
    if (log.step == step) out.push_back(log);
  }
  return out;
}

// The calls that changed something or read one object of `resource`, as "METHOD name".
inline std::vector<std::string> object_calls(const std::vector<testing::ApiCall>& calls,
                                             const std::string& resource) {
  std::vector<std::string> out;
  for (const auto& call : calls) {
    if (call.resource != resource) continue;
    if (call.method == "GET" && call.name.empty()) continue;  // lists and watches
    out.push_back(call.method + (call.name.empty() ? "" : " " + call.name));
  }
  return out;
}

class KubeTargetTest : public ::testing::Test {
 protected:
  KubeTargetTest() { server_.write_kubeconfig(dir_.file("kubeconfig")); }

  // A scenario on `kind` talking to the fake server, with small timeouts and fast polls.
  ScenarioSpec scenario(const std::string& kind) const {
    ScenarioSpec spec;
    spec.name = "kube-test";
    spec.model = "sim-model";
    spec.target.kind = kind;
    spec.target.kubeconfig = dir_.file("kubeconfig");
    spec.target.namespace_name = "default";
    spec.target.command_timeout_s = 20;
    spec.target.readiness.resource_s = 10;
    spec.target.readiness.pods_s = 10;
    spec.target.readiness.models_s = 5;
    spec.target.readiness.completion_s = 5;
    spec.target.readiness.poll_s = 0.05;
    spec.target.readiness.settle_s = 0.2;
    spec.target.readiness.live_settle_s = 0.05;
    spec.factors.push_back(value_factor("concurrency", "concurrency", {"1", "4"}));
    return spec;
  }

  static void add_factor(ScenarioSpec& spec, const std::string& name,
                         const std::vector<std::string>& levels) {
    spec.factors.push_back(value_factor(name, knob_path(name), levels));
  }

  testing::TempDir dir_;
  testing::FakeApiServer server_;
};

}  // namespace kvsweep::orchestrator::kube::test
