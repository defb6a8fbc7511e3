// The fake API server driven by the real kubectl, the way the kube targets will drive it.
#include "tests/support/fake_apiserver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include "orchestrator/targets/child_process.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::testing {
namespace {

using json = nlohmann::json;
using orchestrator::ProcessResult;
using orchestrator::run_process;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr double kKubectlTimeoutS = 30;

json model(const std::string& name, int ready) {
  return {{"apiVersion", "kubeai.org/v1"},
          {"kind", "Model"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"url", "hf://Qwen/Qwen2.5-0.5B"},
            {"engine", "VLLM"},
            {"replicas", 2},
            {"loadBalancing", {{"strategy", "LeastLoad"}}}}},
          {"status", {{"replicas", {{"all", 2}, {"ready", ready}}}}}};
}

json dgd(const std::string& name) {
  return {{"apiVersion", "nvidia.com/v1alpha1"},
          {"kind", "DynamoGraphDeployment"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"services",
             {{"Frontend",
               {{"replicas", 1},
                {"envs", {{{"name", "DYN_ROUTER_MODE"}, {"value", "round-robin"}}}}}}}}}},
          {"status", {{"state", "pending"}}}};
}

json vllm_pod(const std::string& name, const std::string& ns = "default") {
  return make_pod(name, ns, {{"app", "vllm"}}, true, "10.0.0.1", 8000);
}

std::set<std::string> item_names(const json& list) {
  std::set<std::string> names;
  for (const auto& item : list.at("items")) names.insert(item["metadata"]["name"]);
  return names;
}

std::set<std::string> stored_names(const FakeApiServer& server, const std::string& resource) {
  std::set<std::string> names;
  for (const auto& object : server.list(resource, "default")) {
    names.insert(object["metadata"]["name"]);
  }
  return names;
}

// `kubectl --kubeconfig K --cache-dir C args...`: a discovery cache of its own per test, so
// nothing is read from or left in $HOME.
std::vector<std::string> kubectl_argv(const TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"kubectl", "--kubeconfig", dir.file("kubeconfig"), "--cache-dir",
                                   dir.file("cache")};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

class FakeApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { server_.write_kubeconfig(dir_.file("kubeconfig")); }

  ProcessResult kubectl(const std::vector<std::string>& args) {
    return run_process(kubectl_argv(dir_, args), kKubectlTimeoutS);
  }

  std::vector<ApiCall> calls_with(const std::string& method) const {
    std::vector<ApiCall> out;
    for (const auto& call : server_.calls()) {
      if (call.method == method) out.push_back(call);
    }
    return out;
  }

  TempDir dir_;
  FakeApiServer server_;
};

TEST_F(FakeApiServerTest, GetPrintsAJsonpathOfTheStoredObject) {
  server_.put("models", model("m1", 1));
  const auto r = kubectl({"get", "model", "m1", "-o", "jsonpath={.spec.loadBalancing.strategy}"});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "LeastLoad");
}

TEST_F(FakeApiServerTest, MergePatchChangesTheObjectAndIsLogged) {
  server_.put("models", model("m1", 1));
  const std::string body = R"({"spec":{"loadBalancing":{"strategy":"PrefixHash"}}})";
  const auto r = kubectl({"patch", "model", "m1", "--type=merge", "-p", body});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "model.kubeai.org/m1 patched\n");

  const auto stored = server_.get("models", "default", "m1");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["spec"]["loadBalancing"]["strategy"], "PrefixHash");
  EXPECT_EQ((*stored)["spec"]["engine"], "VLLM");
  EXPECT_EQ((*stored)["metadata"]["generation"], 2);

  const auto patches = calls_with("PATCH");
  ASSERT_EQ(patches.size(), 1u);
  EXPECT_EQ(patches[0].path, "/apis/kubeai.org/v1/namespaces/default/models/m1");
  EXPECT_EQ(patches[0].content_type, "application/merge-patch+json");
  EXPECT_EQ(patches[0].body, body);
  EXPECT_EQ(patches[0].resource, "models");
  EXPECT_EQ(patches[0].namespace_name, "default");
  EXPECT_EQ(patches[0].name, "m1");

  // The same patch again changes nothing, and kubectl says so.
  const auto again = kubectl({"patch", "model", "m1", "--type=merge", "-p", body});
  ASSERT_TRUE(again.ok()) << again.err;
  EXPECT_EQ(again.out, "model.kubeai.org/m1 patched (no change)\n");
}

TEST_F(FakeApiServerTest, JsonPatchReplacesAndAFailingTestOpIsRejected) {
  server_.put("dynamographdeployments", dgd("d1"));
  const auto r =
      kubectl({"patch", "dgd", "d1", "--type=json", "-p",
               R"([{"op":"replace","path":"/spec/services/Frontend/envs/0/value","value":"kv"}])"});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "dynamographdeployment.nvidia.com/d1 patched\n");
  const json frontend =
      (*server_.get("dynamographdeployments", "default", "d1"))["spec"]["services"]["Frontend"];
  EXPECT_EQ(frontend["envs"][0]["value"], "kv");
  EXPECT_EQ(calls_with("PATCH").at(0).content_type, "application/json-patch+json");

  const auto failed = kubectl(
      {"patch", "dgd", "d1", "--type=json", "-p",
       R"([{"op":"test","path":"/spec/services/Frontend/envs/0/value","value":"round-robin"},)"
       R"({"op":"replace","path":"/spec/services/Frontend/replicas","value":3}])"});
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("The request is invalid"), std::string::npos) << failed.err;
  const json unchanged =
      (*server_.get("dynamographdeployments", "default", "d1"))["spec"]["services"]["Frontend"];
  EXPECT_EQ(unchanged, frontend);
}

TEST_F(FakeApiServerTest, ListsSelectByLabel) {
  server_.put("pods", vllm_pod("p1"));
  server_.put("pods", vllm_pod("p2"));
  server_.put("pods", vllm_pod("p3", "other"));
  server_.put("pods", make_pod("router", "default", {{"app", "router"}}, true, "10.0.0.9", 80));
  json labelled_model = model("vllm", 1);
  labelled_model["metadata"]["labels"] = {{"app", "vllm"}};
  server_.put("models", labelled_model);

  const auto r = kubectl({"get", "pods", "-l", "app=vllm", "-o", "json"});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(item_names(json::parse(r.out)), (std::set<std::string>{"p1", "p2"}));

  const auto others = kubectl({"get", "pods", "-l", "app!=vllm", "-o", "json"});
  ASSERT_TRUE(others.ok()) << others.err;
  EXPECT_EQ(item_names(json::parse(others.out)), (std::set<std::string>{"router"}));

  const auto everywhere = kubectl({"get", "pods", "-A", "-l", "app==vllm,app", "-o", "json"});
  ASSERT_TRUE(everywhere.ok()) << everywhere.err;
  EXPECT_EQ(item_names(json::parse(everywhere.out)), (std::set<std::string>{"p1", "p2", "p3"}));
}

TEST_F(FakeApiServerTest, WaitForAJsonpathSeesALaterChange) {
  server_.put("models", model("m1", 1));
  std::thread operator_thread([this] {
    std::this_thread::sleep_for(milliseconds(300));
    server_.put("models", model("m1", 2));
  });
  const auto start = Clock::now();
  const auto r =
      kubectl({"wait", "--for=jsonpath={.status.replicas.ready}=2", "model/m1", "--timeout=20s"});
  const auto elapsed = Clock::now() - start;
  operator_thread.join();
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "model.kubeai.org/m1 condition met\n");
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST_F(FakeApiServerTest, WaitForAConditionSeesALaterChange) {
  server_.put("dynamographdeployments", dgd("d1"));
  std::thread operator_thread([this] {
    std::this_thread::sleep_for(milliseconds(300));
    json ready = dgd("d1");
    ready["status"] = {{"state", "successful"},
                       {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};
    server_.put("dynamographdeployments", ready);
  });
  const auto start = Clock::now();
  const auto r = kubectl({"wait", "--for=condition=Ready", "dgd/d1", "--timeout=20s"});
  const auto elapsed = Clock::now() - start;
  operator_thread.join();
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "dynamographdeployment.nvidia.com/d1 condition met\n");
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST_F(FakeApiServerTest, DeleteBySelectorReachesTheController) {
  server_.put("pods", vllm_pod("vllm-a"));
  server_.put("pods", vllm_pod("vllm-b"));
  server_.put("pods", make_pod("router", "default", {{"app", "router"}}, true, "10.0.0.9", 80));
  // Plays a ReplicaSet: every deleted pod comes back under a new name.
  server_.set_controller([](FakeApiServer& server, const ApiCall& call) {
    if (call.method == "DELETE" && call.resource == "pods" && !call.name.empty()) {
      server.put("pods", vllm_pod(call.name + "-new"));
    }
  });

  const auto r = kubectl({"delete", "pods", "-l", "app=vllm"});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "pod \"vllm-a\" deleted\npod \"vllm-b\" deleted\n");
  EXPECT_EQ(stored_names(server_, "pods"),
            (std::set<std::string>{"router", "vllm-a-new", "vllm-b-new"}));
  const auto deletes = calls_with("DELETE");
  ASSERT_EQ(deletes.size(), 2u);
  EXPECT_EQ(deletes[0].path, "/api/v1/namespaces/default/pods/vllm-a");
  EXPECT_EQ(deletes[1].name, "vllm-b");
}

TEST_F(FakeApiServerTest, DeleteCollectionDeletesTheSelectedObjects) {
  json labelled_model = model("vllm", 1);
  labelled_model["metadata"]["labels"] = {{"app", "vllm"}};
  server_.put("models", labelled_model);
  server_.put("pods", vllm_pod("vllm-a"));
  server_.put("pods", vllm_pod("vllm-b"));
  server_.put("pods", make_pod("router", "default", {{"app", "router"}}, true, "10.0.0.9", 80));
  const auto r =
      kubectl({"delete", "--raw", "/api/v1/namespaces/default/pods?labelSelector=app%3Dvllm"});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(item_names(json::parse(r.out)), (std::set<std::string>{"vllm-a", "vllm-b"}));
  EXPECT_EQ(stored_names(server_, "pods"), (std::set<std::string>{"router"}));
  EXPECT_EQ(stored_names(server_, "models"), (std::set<std::string>{"vllm"}));
}

TEST_F(FakeApiServerTest, GetOfAMissingObjectIsNotFound) {
  const auto r = kubectl({"get", "model", "missing"});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(R"(models.kubeai.org "missing" not found)"), std::string::npos) << r.err;

  const auto pod = kubectl({"get", "pod", "missing"});
  EXPECT_NE(pod.err.find(R"(pods "missing" not found)"), std::string::npos) << pod.err;
}

TEST_F(FakeApiServerTest, CreateFromAFileThenDeleteByName) {
  const std::string file = dir_.file("model.json");
  std::ofstream(file) << model("m1", 0).dump();
  const auto created = kubectl({"create", "-f", file});
  ASSERT_TRUE(created.ok()) << created.err;
  EXPECT_EQ(created.out, "model.kubeai.org/m1 created\n");
  const auto stored = server_.get("models", "default", "m1");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["spec"], model("m1", 0)["spec"]);
  EXPECT_FALSE((*stored)["metadata"]["uid"].get<std::string>().empty());

  const auto again = kubectl({"create", "-f", file});
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;

  const auto deleted = kubectl({"delete", "model", "m1"});
  ASSERT_TRUE(deleted.ok()) << deleted.err;
  EXPECT_EQ(deleted.out, "model.kubeai.org \"m1\" deleted\n");
  EXPECT_FALSE(server_.get("models", "default", "m1"));
}

TEST_F(FakeApiServerTest, ApplyCreatesThenPatches) {
  const std::string file = dir_.file("model.json");
  std::ofstream(file) << model("m1", 0).dump();
  const auto created = kubectl({"apply", "-f", file});
  ASSERT_TRUE(created.ok()) << created.err;
  EXPECT_EQ(created.out, "model.kubeai.org/m1 created\n");

  json changed = model("m1", 0);
  changed["spec"]["loadBalancing"]["strategy"] = "PrefixHash";
  std::ofstream(file) << changed.dump();
  const auto configured = kubectl({"apply", "-f", file});
  ASSERT_TRUE(configured.ok()) << configured.err;
  EXPECT_EQ(configured.out, "model.kubeai.org/m1 configured\n");
  EXPECT_EQ((*server_.get("models", "default", "m1"))["spec"]["loadBalancing"]["strategy"],
            "PrefixHash");
  EXPECT_EQ(calls_with("PATCH").at(0).content_type, "application/merge-patch+json");
}

TEST_F(FakeApiServerTest, WatchEndsAfterItsTimeout) {
  server_.put("models", model("m1", 1));
  const auto start = Clock::now();
  const auto r =
      kubectl({"get", "--raw",
               "/apis/kubeai.org/v1/namespaces/default/models?watch=true&timeoutSeconds=1"});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(4));
  const json event = json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(event["type"], "ADDED");
  EXPECT_EQ(event["object"]["metadata"]["name"], "m1");
}

TEST(FakeApiServerShutdown, DestructionEndsOpenWatches) {
  TempDir dir;
  auto server = std::make_unique<FakeApiServer>();
  server->write_kubeconfig(dir.file("kubeconfig"));
  server->put("models", model("m1", 1));
  ProcessResult waited;
  std::thread waiter([&] {
    waited = run_process(kubectl_argv(dir, {"wait", "--for=jsonpath={.status.replicas.ready}=2",
                                            "model/m1", "--timeout=2s"}),
                         kKubectlTimeoutS);
  });
  const auto watching = [&] {
    for (const auto& call : server->calls()) {
      if (call.query.find("watch=true") != std::string::npos) return true;
    }
    return false;
  };
  for (int i = 0; i < 200 && !watching(); ++i) std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(watching());  // not ASSERT: the waiter thread must be joined either way

  const auto start = Clock::now();
  server.reset();
  EXPECT_LT(Clock::now() - start, milliseconds(500));
  waiter.join();
  EXPECT_FALSE(waited.ok());
}

TEST_F(FakeApiServerTest, InjectedFaultsAnswerAsTheRealServerDoesThenPass) {
  server_.put("models", model("m1", 1));
  server_.inject_fault({"PATCH", "models", "m1", 409, 1});
  server_.inject_fault({"PATCH", "models", "", 500, 1});
  const std::vector<std::string> patch = {
      "patch",        "model", "m1",
      "--type=merge", "-p",    R"({"spec":{"loadBalancing":{"strategy":"PrefixHash"}}})"};
  // What kubectl prints for each, which is all a caller has to tell them apart by.
  auto r = kubectl(patch);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "Error from server (Conflict): Operation cannot be fulfilled on models.kubeai.org "
            "\"m1\": the object has been modified; please apply your changes to the latest "
            "version and try again\n");
  r = kubectl(patch);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "Error from server (InternalError): Internal error occurred: etcdserver: request "
            "timed out (injected fault)\n");
  EXPECT_EQ((*server_.get("models", "default", "m1"))["spec"]["loadBalancing"]["strategy"],
            "LeastLoad");  // neither landed
  r = kubectl(patch);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ((*server_.get("models", "default", "m1"))["spec"]["loadBalancing"]["strategy"],
            "PrefixHash");
  EXPECT_EQ(calls_with("PATCH").size(), 3u);
}

TEST_F(FakeApiServerTest, AFaultWithoutACodeIsASlowAnswerThatStillLands) {
  server_.put("models", model("m1", 1));
  server_.inject_fault({"PATCH", "models", "m1", 0, 1, 0.5});
  const auto r = run_process(kubectl_argv(dir_, {"patch", "model", "m1", "--type=merge", "-p",
                                                 R"({"spec":{"engine":"SGLang"}})"}),
                             kKubectlTimeoutS);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ((*server_.get("models", "default", "m1"))["spec"]["engine"], "SGLang");
}

TEST_F(FakeApiServerTest, GracefulDeletionLeavesAPodTerminatingForItsGracePeriod) {
  server_.set_termination_delay("pods", 0.3);
  server_.put("pods", vllm_pod("v-0"));
  server_.put("pods", vllm_pod("v-1"));
  ASSERT_TRUE(kubectl({"delete", "pod", "v-0", "--wait=false"}).ok());
  const auto terminating = server_.get("pods", "default", "v-0");
  ASSERT_TRUE(terminating);  // still there, on its way out
  EXPECT_TRUE((*terminating)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*terminating)["metadata"]["deletionGracePeriodSeconds"], 1);
  // kubectl --wait=true watches until the pod is really gone.
  const auto r = kubectl({"delete", "pod", "v-1", "--wait=true"});
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_FALSE(server_.get("pods", "default", "v-1"));
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (server_.get("pods", "default", "v-0") && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_FALSE(server_.get("pods", "default", "v-0"));
}

}  // namespace
}  // namespace kvsweep::testing
