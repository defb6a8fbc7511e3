// Shards as local processes, each its own process group, output to a log in its directory.
#include "orchestrator/targets/shards/local_shard_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/atomic_file.h"
#include "driver/shard_run.h"
#include "orchestrator/targets/child_process.h"

namespace kvsweep::orchestrator {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLogFile = "shard.log";

std::string tail_of(const std::string& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  if (all.size() > bytes) all = "..." + all.substr(all.size() - bytes);
  while (!all.empty() && (all.back() == '\n' || all.back() == ' ')) all.pop_back();
  return all;
}

}  // namespace

std::string self_program() { return fs::read_symlink("/proc/self/exe").string(); }

LocalShardLauncher::LocalShardLauncher(std::string program, std::string work_dir)
    : program_(std::move(program)), work_dir_(std::move(work_dir)) {}

LocalShardLauncher::~LocalShardLauncher() { stop(); }

std::string LocalShardLauncher::shard_dir(int shard) const {
  return (fs::path(work_dir_) / ("shard-" + std::to_string(shard))).string();
}

std::vector<std::string> LocalShardLauncher::argv(int shard) const {
  return {program_,
          "shard",
          "run",
          "--plan",
          (fs::path(work_dir_) / "plan.json").string(),
          "--index",
          std::to_string(shard),
          "--dir",
          shard_dir(shard),
          "--coordinator-fd",
          std::to_string(kCoordinatorFd)};
}

void LocalShardLauncher::start(const std::string& plan_json, int count) {
  fs::create_directories(work_dir_);
  write_file_atomically((fs::path(work_dir_) / "plan.json").string(), plan_json);
  // The shards' lifeline (lifeline.h): however this process ends, they end too.
  lifeline_ = std::make_unique<Lifeline>();
  for (int k = 0; k < count; ++k) {
    fs::create_directories(shard_dir(k));
    pid_t pid = -1;
    try {
      pid = lifeline_->spawn(argv(k), (fs::path(shard_dir(k)) / kLogFile).string());
    } catch (const std::runtime_error& e) {
      stop();
      throw std::runtime_error("shard " + std::to_string(k) + ": " + e.what());
    }
    children_.push_back({pid, false, 0});
  }
}

std::optional<std::string> LocalShardLauncher::read_file(int shard, const std::string& name,
                                                         std::uint64_t max_bytes) {
  return driver::read_file_if_present(file_location(shard, name), max_bytes);
}

std::string LocalShardLauncher::file_location(int shard, const std::string& name) const {
  return (fs::path(shard_dir(shard)) / name).string();
}

void LocalShardLauncher::write_file(int shard, const std::string& name, const std::string& text) {
  write_file_atomically((fs::path(shard_dir(shard)) / name).string(), text);
}

void LocalShardLauncher::reap(Child& child) {
  if (child.reaped || child.pid <= 0) return;
  int status = 0;
  if (::waitpid(child.pid, &status, WNOHANG) == child.pid) {
    child.reaped = true;
    child.status = status;
  }
}

std::optional<std::string> LocalShardLauncher::failure(int shard) {
  Child& child = children_.at(static_cast<std::size_t>(shard));
  reap(child);
  if (!child.reaped) return std::nullopt;
  const int status = child.status;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  std::string how = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exited with code " + std::to_string(WEXITSTATUS(status));
  const std::string said = tail_of((fs::path(shard_dir(shard)) / kLogFile).string(), 400);
  return "process " + std::to_string(child.pid) + " " + how + (said.empty() ? "" : ": " + said);
}

void LocalShardLauncher::stop() {
  for (Child& child : children_) {
    reap(child);
    if (!child.reaped) ::kill(-child.pid, SIGTERM);
  }
  // A shard ends within its poll of the stop flag; one that does not is killed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (Child& child : children_) {
    while (!child.reaped && std::chrono::steady_clock::now() < deadline) {
      reap(child);
      if (!child.reaped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!child.reaped) {
      ::kill(-child.pid, SIGKILL);
      int status = 0;
      ::waitpid(child.pid, &status, 0);
      child.reaped = true;
      child.status = status;
    }
  }
  // Every shard is reaped: the lifeline has no one left to hold.
  if (lifeline_) lifeline_->cut();
}

}  // namespace kvsweep::orchestrator
