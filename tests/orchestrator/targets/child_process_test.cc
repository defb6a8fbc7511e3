// Tests for orchestrator/targets/child_process.cc: argv only, output captured, timeouts kill
// the whole process group.
#include "orchestrator/targets/child_process.h"

#include <gtest/gtest.h>

namespace kvsweep::orchestrator {
namespace {

TEST(ChildProcess, CapturesOutputAndExitCode) {
  const auto r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.ok());
}

TEST(ChildProcess, ArgumentsAreNeverInterpretedByAShell) {
  const auto r = run_process({"echo", "$(touch /tmp/should-not-exist)", ";", "|"}, 10);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out, "$(touch /tmp/should-not-exist) ; |\n");
}

TEST(ChildProcess, TimeoutKillsTheWholeGroup) {
  // The shell starts a grandchild sleeper; both must be gone when run_process returns.
  const auto r = run_process({"sh", "-c", "sleep 30 & echo started; wait"}, 0.5);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "started\n");
}

TEST(ChildProcess, MissingProgramIsReportedNotThrown) {
  const auto r = run_process({"kvsweep-no-such-program"}, 5);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.err, "kvsweep-no-such-program: cannot execute: No such file or directory");
}

TEST(ChildProcess, EnvironmentIsAddedOnTop) {
  const auto r = run_process({"sh", "-c", "echo \"$KVSWEEP_TEST_VALUE\""}, 10,
                             {{"KVSWEEP_TEST_VALUE", "a b"}});
  EXPECT_EQ(r.out, "a b\n");
}

TEST(ChildProcess, DescribeQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(describe_argv(
                {"kubectl", "patch", "model", "m1", "--type=merge", "-p", R"({"spec":{"x":1}})"}),
            R"(kubectl patch model m1 --type=merge -p '{"spec":{"x":1}}')");
  EXPECT_EQ(describe_argv({"echo", "it's"}), R"(echo 'it'\''s')");
}

}  // namespace
}  // namespace kvsweep::orchestrator
