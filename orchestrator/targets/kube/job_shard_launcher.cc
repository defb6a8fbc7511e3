// Load shards as an Indexed Job, reached through kubectl exec.
#include "orchestrator/targets/kube/job_shard_launcher.h"

#include <sys/wait.h>

#include <chrono>

#include "common/json_text.h"
#include "common/wall_clock.h"
#include "orchestrator/targets/kube/api_retry.h"
#include "orchestrator/targets/kube/pod_status.h"
#include "orchestrator/targets/kube/temp_file.h"
#include "orchestrator/targets/shards/shard_files.h"

namespace kvsweep::orchestrator::kube {
namespace {

using nlohmann::json;

constexpr const char* kContainer = "shard";
constexpr const char* kWorkDir = "/work";
// Raw bytes per exec of the plan: about 46 KiB in the exec's URL once base64 and percent-
// encoded, well inside what an API server reads as one request head (Go's default: 1 MiB).
constexpr std::size_t kPlanChunkBytes = 32 * 1024;

}  // namespace

JobShardLauncher::JobShardLauncher(Kubectl& kubectl, ShardJobSettings spec)
    : kubectl_(kubectl), spec_(std::move(spec)) {}

JobShardLauncher::~JobShardLauncher() {
  try {
    stop();
  } catch (...) {  // a destructor must not throw; the Job's pods end by their own timeouts
  }
}

json shard_job_manifest(const ShardJobSettings& spec_, int count) {
  json container = {
      {"name", kContainer},
      {"image", spec_.image},
      {"command",
       {"kvsweep", "shard", "run", "--plan", "plan.json", "--dir", ".", "--wait-plan",
        std::to_string(static_cast<int>(spec_.ready_timeout_s)), "--start-timeout",
        std::to_string(static_cast<int>(spec_.ready_timeout_s))}},
      {"workingDir", kWorkDir},
      {"volumeMounts", {{{"name", "work"}, {"mountPath", kWorkDir}}}},
  };
  json amounts = json::object();
  if (!spec_.cpu.empty()) amounts["cpu"] = spec_.cpu;
  if (!spec_.memory.empty()) amounts["memory"] = spec_.memory;
  if (!amounts.empty()) container["resources"] = {{"requests", amounts}, {"limits", amounts}};
  if (!spec_.env_secret.empty()) {
    container["envFrom"] = {{{"secretRef", {{"name", spec_.env_secret}}}}};
  }
  json pod_spec = {{"restartPolicy", "Never"},
                   {"containers", {container}},
                   {"volumes", {{{"name", "work"}, {"emptyDir", json::object()}}}}};
  if (!spec_.node_selector.empty()) pod_spec["nodeSelector"] = spec_.node_selector;
  const json labels = {{"app.kubernetes.io/name", "kvsweep-shard"},
                       {"app.kubernetes.io/managed-by", "kvsweep"}};
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", {{"name", spec_.name}, {"labels", labels}}},
          {"spec",
           {{"completionMode", "Indexed"},
            {"completions", count},
            {"parallelism", count},
            {"backoffLimit", 0},
            {"template", {{"metadata", {{"labels", labels}}}, {"spec", pod_spec}}}}}};
}

void JobShardLauncher::start(const std::string& plan_json, int count) {
  plan_json_ = plan_json;
  count_ = count;
  // --resume after a kill -9: a Job of this name left behind would send its load again.
  kubectl_.run("shards", {"delete", "job", spec_.name, "--ignore-not-found", "--wait=true"});
  const TempFile file("kvsweep-shards-", ".json", json_text(manifest(count)));
  // As the gates' applies: a 5xx, 429, timeout or unreachable server is tried again.
  retry_transient(
      RetryPolicy{60, 1, 10},
      [&] {
        kubectl_.run_ok("shards", {"create", "-f", file.path()}, "creating job/" + spec_.name);
      },
      *kubectl_.log());
  created_ = true;
  if (!spec_.watch_program.empty()) {
    // Should this process be killed, the watcher deletes the Job (ShardJobSettings).
    lifeline_ = std::make_unique<Lifeline>();
    std::vector<std::string> argv = {spec_.watch_program,
                                     "shard",
                                     "watch",
                                     "--coordinator-fd",
                                     std::to_string(kCoordinatorFd),
                                     "--"};
    for (const std::string& word : kubectl_.argv(delete_args())) argv.push_back(word);
    watcher_ = lifeline_->spawn(argv, "/dev/null");
  }
}

std::vector<std::string> JobShardLauncher::delete_args() const {
  // Foreground: the pods go with the Job, so no shard is left sending.
  return {"delete",      "job", spec_.name, "--ignore-not-found", "--cascade=foreground",
          "--wait=false"};
}

void JobShardLauncher::sever() {
  deleted_ = true;
  if (lifeline_) lifeline_->cut();
  reap_watcher();
}

void JobShardLauncher::reap_watcher() {
  if (watcher_ <= 0) return;
  int status = 0;
  ::waitpid(watcher_, &status, 0);  // it ends once it has read the lifeline (and run delete)
  watcher_ = -1;
}

void JobShardLauncher::refresh_pods() {
  // One read of the pods serves every shard's poll: N shards do not cost N reads a round.
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refresh_ < std::chrono::milliseconds(400)) return;
  last_refresh_ = now;
  const json list = kubectl_.get_json("shards", {"get", "pods", "-l", "job-name=" + spec_.name},
                                      "reading job/" + spec_.name + "'s pods");
  for (const json& pod : list.value("items", json::array())) {
    const json& labels = pod["metadata"].value("labels", json::object());
    const auto index_label = labels.find("batch.kubernetes.io/job-completion-index");
    if (index_label == labels.end() || !index_label->is_string()) continue;
    const int index = std::stoi(index_label->get<std::string>());
    const std::vector<PodState> states = parse_pods(pod);
    if (states.empty()) continue;
    const PodState& state = states.front();
    if (!state.terminal_problem.empty()) {
      problems_[index] = "pod " + state.name + ": " + state.terminal_problem;
    } else if (state.phase == "Running") {
      pods_[index] = state.name;
    } else if (state.phase == "Succeeded" && !pods_.count(index)) {
      problems_[index] = "pod " + state.name + " ended before its records were read";
    }
  }
}

ProcessResult JobShardLauncher::exec(int shard, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"exec", pods_.at(shard), "-c",   kContainer,
                                   "--",   "kvsweep",       "shard"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--dir", "."});
  return kubectl_.run("shards", argv);
}

void JobShardLauncher::upload_plan(int shard) {
  for (std::size_t at = 0; at < plan_json_.size(); at += kPlanChunkBytes) {
    const std::string chunk = encode_base64(plan_json_.substr(at, kPlanChunkBytes));
    const ProcessResult r = exec(shard, {"put", "plan.json", "--append-base64", chunk});
    if (!r.ok())
      throw TargetError("shard " + std::to_string(shard) + ": putting its plan: " + r.err);
  }
  const ProcessResult r = exec(shard, {"put", "plan.json", "--commit"});
  if (!r.ok()) throw TargetError("shard " + std::to_string(shard) + ": putting its plan: " + r.err);
  plan_put_[shard] = true;
}

std::optional<std::string> JobShardLauncher::read_file(int shard, const std::string& name,
                                                       std::uint64_t max_bytes) {
  if (!pods_.count(shard)) refresh_pods();
  if (!pods_.count(shard)) return std::nullopt;  // not running yet
  if (!plan_put_[shard]) upload_plan(shard);
  const ProcessResult r = exec(shard, {"get", name, "--max-bytes", std::to_string(max_bytes)});
  if (r.ok() && r.out.size() <= max_bytes) return r.out;
  if (r.ok() || r.exit_code == kShardFileRefusedExit) {
    throw TargetError(file_location(shard, name) + ": " +
                      (r.ok() ? "more than " + std::to_string(max_bytes) + " bytes" : r.err));
  }
  if (r.exit_code != kShardFileAbsentExit) refresh_pods();  // the pod may have failed meanwhile
  return std::nullopt;
}

std::string JobShardLauncher::file_location(int shard, const std::string& name) const {
  const auto pod = pods_.find(shard);
  return "pod " + (pod != pods_.end() ? pod->second : spec_.name + "-" + std::to_string(shard)) +
         ":" + kWorkDir + "/" + name;
}

void JobShardLauncher::write_file(int shard, const std::string& name, const std::string& text) {
  if (!pods_.count(shard)) refresh_pods();
  if (!pods_.count(shard)) {
    throw TargetError("shard " + std::to_string(shard) + ": no running pod to write " + name);
  }
  const ProcessResult r = exec(shard, {"put", name, "--text", text});
  if (!r.ok()) {
    throw TargetError("shard " + std::to_string(shard) + ": writing " + name + ": " + r.err);
  }
}

std::optional<std::string> JobShardLauncher::failure(int shard) {
  if (!created_) return std::nullopt;
  if (!problems_.count(shard)) refresh_pods();
  const auto it = problems_.find(shard);
  if (it == problems_.end()) return std::nullopt;
  return it->second;
}

std::optional<double> JobShardLauncher::clock_offset_ms(int shard) {
  if (!pods_.count(shard)) return std::nullopt;
  const double sent = unix_now_s();
  const ProcessResult r = exec(shard, {"clock"});
  const double received = unix_now_s();
  if (!r.ok()) return std::nullopt;
  try {
    return (std::stod(r.out) - (sent + received) / 2) * 1000;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void JobShardLauncher::stop() {
  if (!created_ || deleted_) return;
  deleted_ = true;
  kubectl_.run("shards", delete_args());
  if (lifeline_) lifeline_->finish();  // the Job is deleted: its watcher has nothing to do
  reap_watcher();
}

}  // namespace kvsweep::orchestrator::kube
