// deploy/'s nightly CronJob and kvsweep serve's Deployment and Service, applied by the real
// kubectl against tests/support's API-server fixture: a client-side dry run, and a
// server-side dry run that the server answers and stores nothing of.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/fake_apiserver.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::testing {
namespace {

struct CommandResult {
  int status = -1;
  std::string output;
};

// Runs a command line made of test-controlled words only (paths from the build), stdout and
// stderr together.
CommandResult run(const std::string& command) {
  CommandResult r;
  if (std::FILE* pipe = popen((command + " 2>&1").c_str(), "r")) {
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
      r.output.append(buffer, n);
    }
    const int status = pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return r;
}

class DeployManifests : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("KUBECACHEDIR", dir.file("kube-cache").c_str(), 1);
    server.write_kubeconfig(kubeconfig, "nightly");
  }
  std::string apply(const std::string& dry_run) const {
    return "kubectl --kubeconfig " + kubeconfig +
           " --request-timeout=20s apply --dry-run=" + dry_run + " -f " +
           KVSWEEP_SOURCE_DIR "/deploy/cronjob.yaml -f " + KVSWEEP_SOURCE_DIR "/deploy/serve.yaml";
  }
  TempDir dir;
  std::string kubeconfig = dir.file("kubeconfig");
  FakeApiServer server;
};

TEST_F(DeployManifests, ClientSideDryRunAppliesEveryObject) {
  const CommandResult r = run(apply("client"));
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("cronjob.batch/kvsweep-nightly created (dry run)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("deployment.apps/kvsweep-serve created (dry run)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("service/kvsweep-serve created (dry run)"), std::string::npos)
      << r.output;
}

TEST_F(DeployManifests, ServerSideDryRunIsAnsweredAndStoresNothing) {
  const CommandResult r = run(apply("server"));
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* object : {"cronjob.batch/kvsweep-nightly", "deployment.apps/kvsweep-serve",
                             "service/kvsweep-serve"}) {
    EXPECT_NE(r.output.find(std::string(object) + " created (server dry run)"), std::string::npos)
        << r.output;
  }
  int dry_posts = 0;
  for (const auto& call : server.calls()) {
    if (call.method == "POST" && call.query.find("dryRun=All") != std::string::npos) {
      ++dry_posts;
      EXPECT_EQ(call.namespace_name, "nightly");
    }
  }
  EXPECT_EQ(dry_posts, 3);
  EXPECT_TRUE(server.list("cronjobs", "nightly").empty());
  EXPECT_TRUE(server.list("deployments", "nightly").empty());
  EXPECT_TRUE(server.list("services", "nightly").empty());
}

// The check must be able to fail: a manifest of a kind the server does not know is refused.
TEST_F(DeployManifests, AnUnknownKindFailsTheDryRun) {
  const std::string bad = dir.file("bad.yaml");
  std::FILE* f = std::fopen(bad.c_str(), "w");
  std::fputs("apiVersion: example.com/v1\nkind: Nightly\nmetadata: {name: x}\n", f);
  std::fclose(f);
  const CommandResult r =
      run("kubectl --kubeconfig " + kubeconfig + " apply --dry-run=server -f " + bad);
  EXPECT_NE(r.status, 0) << r.output;
}

}  // namespace
}  // namespace kvsweep::testing
