// `kvsweep shard`: one shard of a sharded cell (docs/driver.md, "Load shards"), started by the
// coordinator as a local process or as a pod of an Indexed Job, and the small file commands
// the coordinator runs in a shard's pod through `kubectl exec`. Not for use by hand.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/atomic_file.h"
#include "common/error_kinds.h"
#include "common/input_file.h"
#include "common/wall_clock.h"
#include "driver/shard_run.h"
#include "orchestrator/cli/signal_guard.h"
#include "orchestrator/cli/subcommand.h"
#include "orchestrator/targets/child_process.h"
#include "orchestrator/targets/shards/shard_files.h"

namespace kvsweep::orchestrator {
namespace {

namespace fs = std::filesystem;

struct ShardArgs {
  std::string plan;
  int index = -1;
  std::string dir = ".";
  double start_timeout_s = 300;
  double plan_timeout_s = 0;
  std::string name;  // get / put
  std::string text;
  std::string append_base64;
  bool commit = false;
  std::uint64_t max_bytes = driver::kShardFileMaxBytes;  // get
  int coordinator_fd = -1;  // run, watch: the coordinator's lifeline (targets/shards/lifeline.h)
  std::vector<std::string> command;  // watch
};

// --index, else JOB_COMPLETION_INDEX: the index Kubernetes gives each pod of an Indexed Job.
int shard_index(const ShardArgs& args) {
  if (args.index >= 0) return args.index;
  const char* from_job = std::getenv("JOB_COMPLETION_INDEX");
  if (from_job == nullptr) {
    throw UsageError("--index: not given, and JOB_COMPLETION_INDEX is not set");
  }
  try {
    return std::stoi(from_job);
  } catch (const std::exception&) {
    throw UsageError(std::string("JOB_COMPLETION_INDEX: not an integer: ") + from_job);
  }
}

// The plan, read at once, or (--wait-plan) once the coordinator has put it in the directory.
std::optional<std::string> plan_text(const ShardArgs& args, const std::atomic<bool>& stop) {
  const fs::path path = fs::path(args.dir) / args.plan;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(args.plan_timeout_s);
  while (true) {
    if (auto text = driver::read_file_if_present(
            fs::path(args.plan).is_absolute() ? args.plan : path.string())) {
      return text;
    }
    if (std::chrono::steady_clock::now() >= deadline || stop.load()) return std::nullopt;
    if (fs::exists(fs::path(args.dir) / driver::kShardCancelFile)) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int run_shard_command(const ShardArgs& args) {
  SignalGuard signals;
  if (args.coordinator_fd >= 0) {
    driver::end_when_coordinator_goes(args.coordinator_fd, args.index >= 0 ? args.index : 0);
  }
  const auto text = plan_text(args, signals.stop_flag());
  if (!text) {
    std::fprintf(stderr, "kvsweep shard: no plan at %s%s; nothing was sent\n", args.plan.c_str(),
                 args.plan_timeout_s > 0 ? " within --wait-plan" : "");
    return kExitFailed;
  }
  const driver::ShardPlan plan = driver::parse_shard_plan(*text, args.plan);
  driver::ShardRunOptions options;
  options.dir = args.dir;
  options.index = shard_index(args);
  options.start_timeout_s = args.start_timeout_s;
  options.stop = &signals.stop_flag();
  switch (driver::run_shard(plan, options)) {
    case driver::ShardOutcome::kDone:
      return kExitOk;
    case driver::ShardOutcome::kCancelled:
      std::fprintf(stderr, "kvsweep shard %d: cancelled before the start; nothing was sent\n",
                   options.index);
      return kExitInterrupted;
    case driver::ShardOutcome::kNoStart:
      std::fprintf(stderr, "kvsweep shard %d: no start instant within %g s; nothing was sent\n",
                   options.index, args.start_timeout_s);
      return kExitFailed;
  }
  return kExitFailed;
}

int get_command(const ShardArgs& args) {
  check_shard_file_name(args.name);
  std::optional<std::string> text;
  try {
    text = driver::read_file_if_present((fs::path(args.dir) / args.name).string(), args.max_bytes);
  } catch (const InputFileError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kShardFileRefusedExit;
  }
  if (!text) return kShardFileAbsentExit;
  std::fwrite(text->data(), 1, text->size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

int put_command(const ShardArgs& args) {
  check_shard_file_name(args.name);
  const fs::path path = fs::path(args.dir) / args.name;
  fs::create_directories(args.dir);
  if (!args.append_base64.empty()) {
    const std::string bytes = decode_base64(args.append_base64);
    std::ofstream out(path.string() + ".part", std::ios::binary | std::ios::app);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot append to " + path.string() + ".part");
  }
  if (args.commit) {
    fs::rename(path.string() + ".part", path);
  } else if (args.append_base64.empty()) {
    write_file_atomically(path.string(), args.text);
  }
  return kExitOk;
}

// `shard watch`: a Job's watcher. Waits on the coordinator's lifeline; a byte means it ended
// well (it deleted the Job itself), end-of-file that it was killed: the command (kubectl
// delete job ...) runs then, tried again a few times should the API server fail it.
int watch_command(const ShardArgs& args) {
  if (args.coordinator_fd < 0 || args.command.empty()) {
    throw UsageError("shard watch: needs --coordinator-fd and a command after --");
  }
  while (true) {
    pollfd watched{args.coordinator_fd, POLLIN, 0};
    const int ready = ::poll(&watched, 1, -1);
    if (ready < 0 && errno == EINTR) continue;
    char byte = 0;
    if (ready > 0 && (watched.revents & POLLIN) != 0 && ::read(args.coordinator_fd, &byte, 1) > 0) {
      return kExitOk;  // the coordinator ended well
    }
    break;
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(2));
    const ProcessResult r = run_process(args.command, 60);
    if (r.ok()) return kExitOk;
    std::fprintf(stderr, "kvsweep shard watch: %s: %s\n", describe_argv(args.command).c_str(),
                 r.err.c_str());
  }
  return kExitFailed;
}

}  // namespace

Subcommand register_shard(CLI::App& app, const GlobalOptions& /*global*/) {
  auto a = std::make_shared<ShardArgs>();
  auto* cmd = app.add_subcommand(
      "shard", "one shard of a sharded cell and its files (started by kvsweep; not by hand)");
  cmd->require_subcommand(1);
  auto* run = cmd->add_subcommand("run", "run one shard: ready, wait for the start, send, record");
  run->add_option("--plan", a->plan, "the shard plan (JSON); relative paths are in --dir")
      ->required();
  run->add_option("--index", a->index,
                  "which shard (default: JOB_COMPLETION_INDEX, as an Indexed Job sets it)");
  run->add_option("--dir", a->dir, "the shard's directory for the protocol's files")
      ->capture_default_str();
  run->add_option("--start-timeout", a->start_timeout_s,
                  "seconds to wait for the start instant before giving up, sending nothing")
      ->capture_default_str();
  run->add_option("--coordinator-fd", a->coordinator_fd,
                  "a pipe's read end the coordinator holds open: end when it closes (local "
                  "shards: they die with their coordinator)");
  run->add_option("--wait-plan", a->plan_timeout_s,
                  "seconds to wait for the plan to be put in --dir (a pod's plan comes after it "
                  "starts)");
  auto* get = cmd->add_subcommand("get", "print a protocol file of --dir (exit 3: not there)");
  get->add_option("name", a->name, "the file")->required();
  get->add_option("--dir", a->dir, "the shard's directory")->capture_default_str();
  get->add_option("--max-bytes", a->max_bytes,
                  "refuse a file larger than this (exit 4, as for one not a regular file)")
      ->capture_default_str();
  auto* put = cmd->add_subcommand("put", "write a protocol file of --dir, whole");
  put->add_option("name", a->name, "the file")->required();
  put->add_option("--dir", a->dir, "the shard's directory")->capture_default_str();
  put->add_option("--text", a->text, "the file's text");
  put->add_option("--append-base64", a->append_base64, "append these bytes to NAME.part");
  put->add_flag("--commit", a->commit, "rename NAME.part to NAME (the upload is whole)");
  auto* watch = cmd->add_subcommand(
      "watch", "run a command (after --) when the coordinator holding --coordinator-fd is killed");
  watch
      ->add_option("--coordinator-fd", a->coordinator_fd,
                   "the coordinator's lifeline: a byte on it means it ended well")
      ->required();
  watch->add_option("command", a->command, "the command to run, an argv (no shell)")->required();
  auto* clock = cmd->add_subcommand("clock", "print this machine's wall clock (unix seconds)");
  clock->add_option("--dir", a->dir, "ignored (every shard command takes it)");
  return {cmd, [a, run, get, put, watch, clock] {
            if (run->parsed()) return run_shard_command(*a);
            if (watch->parsed()) return watch_command(*a);
            if (get->parsed()) return get_command(*a);
            if (put->parsed()) return put_command(*a);
            if (clock->parsed()) {
              std::printf("%.6f\n", unix_now_s());
              return kExitOk;
            }
            return kExitFailed;
          }};
}

}  // namespace kvsweep::orchestrator
