// The directories local shards work in: a killed coordinator's is removed by the next one
// made, and nothing else is: not a running coordinator's, not one kept for its logs, not one
// without an owner (being made), not a link, not a directory of another name.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "orchestrator/targets/shards/temp_shard_dir.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator {
namespace {

namespace fs = std::filesystem;

// A pid that has ended: a child, reaped.
pid_t ended_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// This process's start time, as /proc/self/stat gives it (field 22).
std::string own_start_time() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::string field;
  for (int k = 3; k <= 22; ++k) fields >> field;
  return field;
}

fs::path make_dir(const fs::path& parent, const std::string& name, const std::string& owner) {
  const fs::path dir = parent / name;
  fs::create_directories(dir / "shard-0");
  std::ofstream(dir / "shard-0" / "shard.log") << "log\n";
  if (!owner.empty()) std::ofstream(dir / kShardDirOwnerFile) << owner;
  return dir;
}

TEST(ShardDirs, OnlyADeadOwnersDirectoryIsRemoved) {
  testing::TempDir tmp;
  const fs::path parent = tmp.path();
  const std::string dead = std::to_string(ended_pid()) + " 12345\n";
  const std::string alive = std::to_string(::getpid()) + " " + own_start_time() + "\n";
  // This pid, but started at another time: the pid was reused; its maker is gone.
  const std::string reused = std::to_string(::getpid()) + " 1\n";
  const fs::path stale = make_dir(parent, "kvsweep-shards-aaaaaa", dead);
  const fs::path reused_dir = make_dir(parent, "kvsweep-shards-bbbbbb", reused);
  const fs::path running = make_dir(parent, "kvsweep-shards-cccccc", alive);
  const fs::path unowned = make_dir(parent, "kvsweep-shards-dddddd", "");
  const fs::path kept = make_dir(parent, "kvsweep-shards-eeeeee", dead);
  std::ofstream(kept / kShardDirKeptFile) << "kept\n";
  const fs::path other_name = make_dir(parent, "kvsweep-shards-toolong", dead);
  const fs::path elsewhere = make_dir(parent, "elsewhere", dead);
  // A link by a shard directory's name to a dead owner's directory: not followed.
  fs::create_directory_symlink(elsewhere, parent / "kvsweep-shards-ffffff");
  // A link inside a stale directory is removed, never what it points to.
  std::ofstream(parent / "precious") << "keep me\n";
  fs::create_symlink(parent / "precious", stale / "shard-0" / "records.jsonl");

  std::vector<std::string> removed = remove_stale_shard_dirs(parent.string());
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{stale.string(), reused_dir.string()}));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(reused_dir));
  for (const fs::path& left : {running, unowned, kept, other_name, elsewhere}) {
    EXPECT_TRUE(fs::exists(left / "shard-0" / "shard.log")) << left;
  }
  EXPECT_TRUE(fs::is_symlink(parent / "kvsweep-shards-ffffff"));
  EXPECT_TRUE(fs::exists(parent / "precious"));
}

TEST(ShardDirs, ADirectoryNamesItsOwnerAndIsKeptMarkedWhenARunFails) {
  testing::TempDir tmp;
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  std::string path;
  {
    const TempShardDir dir;
    path = dir.path();
    std::ifstream owner(fs::path(path) / kShardDirOwnerFile);
    std::string pid, started;
    owner >> pid >> started;
    EXPECT_EQ(pid, std::to_string(::getpid()));
    EXPECT_EQ(started, own_start_time());
    // Another made meanwhile leaves a running coordinator's alone.
    const TempShardDir second;
    EXPECT_TRUE(fs::exists(path));
  }
  EXPECT_FALSE(fs::exists(path));  // ended well: removed
  try {
    const TempShardDir dir;
    path = dir.path();
    throw std::runtime_error("a shard failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(fs::exists(fs::path(path) / kShardDirKeptFile));
  const TempShardDir next;
  EXPECT_TRUE(fs::exists(path));  // kept for its logs, not stale
  ::unsetenv("TMPDIR");
}

}  // namespace
}  // namespace kvsweep::orchestrator
