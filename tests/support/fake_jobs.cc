// The fake Job controller and kubelet running Indexed Jobs' pods as local processes: see
// fake_jobs.h.
#include "tests/support/fake_jobs.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/support/fake_job_state.h"
#include "tests/support/local_process.h"

namespace kvsweep::testing {
namespace {

using json = nlohmann::json;

std::string text_of(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

struct JobController::Core {
  using Phase = FakePodPhase;
  using Pod = FakePodState;
  using Job = FakeJobState;

  Core(FakeApiServer& s, JobControllerOptions o) : server(s), options(std::move(o)) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "kvsweep-fake-pods-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("JobController: cannot create a temp dir");
    }
    root = pattern;
  }

  FakeApiServer& server;
  JobControllerOptions options;
  std::filesystem::path root;
  std::atomic<bool> stopped{false};
  mutable std::mutex mu;
  std::map<std::pair<std::string, std::string>, Job> jobs;                   // (ns, name)
  std::map<std::pair<std::string, std::string>, std::shared_ptr<Pod>> pods;  // (ns, pod name)
  std::vector<std::thread> waiters;
  std::mt19937_64 rng{std::random_device{}()};
  uint64_t next_sequence = 0;

  // ---- status, written inside server.modify (server lock, then ours) ----

  void write_pod(const std::shared_ptr<Pod>& p) {
    server.modify("pods", p->ns, p->name, [&](json& object) {
      std::lock_guard lock(mu);
      if (!p->deleting) object["status"] = fake_pod_status(*p);
    });
  }

  json job_status_locked(const Job& j) const {
    int active = 0;
    int ready = 0;
    for (const auto& [key, p] : pods) {
      if (p->ns != j.ns || p->job_uid != j.uid || p->deleting) continue;
      if (p->phase == Phase::kPending || p->phase == Phase::kRunning) ++active;
      if (p->phase == Phase::kRunning) ++ready;
    }
    return fake_job_status(j, active, ready);
  }

  void write_job(const std::string& ns, const std::string& name) {
    server.modify("jobs", ns, name, [&](json& object) {
      std::lock_guard lock(mu);
      const auto it = jobs.find({ns, name});
      if (it != jobs.end() && object["metadata"].value("uid", "") == it->second.uid) {
        object["status"] = job_status_locked(it->second);
      }
    });
  }

  // ---- pods ----

  std::string pod_name_locked(const Job& j, int index) {
    std::string suffix;
    for (int i = 0; i < 5; ++i) suffix += static_cast<char>('a' + rng() % 26);
    return j.name + "-" + std::to_string(index) + "-" + suffix;
  }

  // Creates the pod of `index` (on the server: Pending), and schedules its start.
  void create_pod(const std::shared_ptr<Core>& self, const std::string& ns, const std::string& job,
                  int index) {
    json object;
    auto p = std::make_shared<Pod>();
    double delay = options.start_delay_s;
    bool stuck = false;
    {
      std::lock_guard lock(mu);
      const auto it = jobs.find({ns, job});
      if (it == jobs.end() || stopped) return;
      const Job& j = it->second;
      const json& tmpl = j.spec.value("template", json::object());
      const json spec = tmpl.value("spec", json::object());
      const json containers = spec.value("containers", json::array());
      const json container = containers.empty() ? json::object() : containers[0];
      p->ns = ns;
      p->job = job;
      p->job_uid = j.uid;
      p->sequence = next_sequence++;
      p->index = index;
      p->name = pod_name_locked(j, index);
      p->container = container.value("name", "main");
      p->dir = (root / p->name).string();
      std::filesystem::create_directories(p->dir);
      for (const auto& arg : container.value("command", json::array()))
        p->argv.push_back(text_of(arg));
      for (const auto& arg : container.value("args", json::array()))
        p->argv.push_back(text_of(arg));
      p->argv = map_binary(p->argv, options.binaries);
      std::map<std::string, std::string> extra;
      for (const auto& e : container.value("env", json::array())) {
        if (e.contains("value")) extra[e.value("name", "")] = text_of(e["value"]);
      }
      extra["JOB_COMPLETION_INDEX"] = std::to_string(index);
      extra["HOSTNAME"] = p->name;
      p->env = environment_with(extra);
      if (const auto s = options.stuck_jobs.find(job); s != options.stuck_jobs.end()) {
        stuck = true;
        p->waiting_reason = s->second.reason;
        p->waiting_message = s->second.message;
      }
      if (const auto d = options.start_delays_s.find(job); d != options.start_delays_s.end()) {
        delay = d->second;
      }
      object = fake_pod_manifest(*p, j, tmpl.value("metadata", json::object()), spec);
      pods[{ns, p->name}] = p;
    }
    server.put("pods", object);
    write_job(ns, job);
    if (stuck) return;
    server.after(delay, [self, p] {
      if (!self->stopped) self->start_process(self, p);
    });
  }

  void start_process(const std::shared_ptr<Core>& self, const std::shared_ptr<Pod>& p) {
    std::string error;
    {
      std::lock_guard lock(mu);
      if (p->deleting || p->phase != Phase::kPending || stopped) return;
      ProcessSpec spec;
      spec.argv = p->argv;
      spec.cwd = p->dir;
      spec.env = p->env;
      spec.output_path = (std::filesystem::path(p->dir) / "container.log").string();
      p->started_at = now_rfc3339();
      p->pid = spawn_process(spec, error);
      if (p->pid > 0) {
        p->phase = Phase::kRunning;
        waiters.emplace_back([self, p] { self->wait_for(self, p); });
      }
    }
    if (!error.empty()) {
      std::ofstream(std::filesystem::path(p->dir) / "container.log") << error << "\n";
      finish(self, p, "StartError", 128);
      return;
    }
    write_pod(p);
    write_job(p->ns, p->job);
  }

  void wait_for(const std::shared_ptr<Core>& self, const std::shared_ptr<Pod>& p) {
    wait_exited(p->pid);
    std::string reason;
    int code = 0;
    {
      std::lock_guard lock(mu);
      signal_group(p->pid, SIGKILL);  // what it left behind in its group
      code = reap(p->pid);
      p->exited = true;
      reason = p->fault_reason.empty() ? (code == 0 ? "Completed" : "Error") : p->fault_reason;
      if (!p->fault_reason.empty()) code = p->fault_exit_code;
    }
    if (!stopped) finish(self, p, reason, code);
  }

  // A pod's container ended (or never started): the pod's and the Job's status, and what the
  // Job does next (a new pod for the index, the next index, or nothing more).
  void finish(const std::shared_ptr<Core>& self, const std::shared_ptr<Pod>& p,
              const std::string& reason, int code) {
    std::vector<int> to_create;
    std::vector<pid_t> to_kill;
    {
      std::lock_guard lock(mu);
      if (p->deleting || p->phase == Phase::kSucceeded || p->phase == Phase::kFailed) return;
      p->phase = code == 0 && reason == "Completed" ? Phase::kSucceeded : Phase::kFailed;
      p->end_reason = reason;
      p->exit_code = code;
      p->finished_at = now_rfc3339();
      if (p->started_at.empty()) p->started_at = p->finished_at;
      const auto it = jobs.find({p->ns, p->job});
      if (it != jobs.end() && it->second.uid == p->job_uid && it->second.condition.empty()) {
        Job& j = it->second;
        if (p->phase == Phase::kSucceeded) {
          j.succeeded.insert(p->index);
          if (static_cast<int>(j.succeeded.size()) >= j.completions) {
            j.condition = "Complete";
            j.completion_time = now_rfc3339();
          } else if (j.next_index < j.completions) {
            to_create.push_back(j.next_index++);
          }
        } else if (++j.failed > j.backoff_limit) {
          j.condition = "Failed";
          j.completion_time = now_rfc3339();
          for (const auto& [key, other] : pods) {
            if (other->job_uid == j.uid && other->pid > 0 && !other->exited) {
              to_kill.push_back(other->pid);
            }
          }
        } else {
          to_create.push_back(p->index);
        }
      }
    }
    write_pod(p);
    write_job(p->ns, p->job);
    for (const pid_t pid : to_kill) signal_group(pid, SIGKILL);
    for (const int index : to_create) {
      server.after(0, [self, ns = p->ns, job = p->job, index] {
        if (!self->stopped) self->create_pod(self, ns, job, index);
      });
    }
  }

  // SIGTERM now, SIGKILL after the grace unless it exited meanwhile.
  void kill_gracefully(const std::shared_ptr<Core>& self, const std::shared_ptr<Pod>& p) {
    {
      std::lock_guard lock(mu);
      if (p->pid <= 0 || p->exited) return;
      signal_group(p->pid, SIGTERM);
    }
    server.after(options.kill_grace_s, [self, p] {
      std::lock_guard lock(self->mu);
      if (!p->exited) signal_group(p->pid, SIGKILL);
    });
  }

  void start_job(const std::shared_ptr<Core>& self, const std::string& ns,
                 const std::string& name) {
    const auto object = server.get("jobs", ns, name);
    if (!object) return;
    const json spec = object->value("spec", json::object());
    if (spec.value("completionMode", "NonIndexed") != "Indexed") return;
    int first = 0;
    {
      std::lock_guard lock(mu);
      if (jobs.count({ns, name}) != 0 || stopped) return;
      Job j;
      j.ns = ns;
      j.name = name;
      j.uid = (*object)["metadata"].value("uid", "");
      j.spec = spec;
      j.completions = spec.value("completions", 1);
      j.parallelism = std::min(spec.value("parallelism", j.completions), j.completions);
      j.backoff_limit = spec.value("backoffLimit", 6);
      j.start_time = now_rfc3339();
      j.next_index = j.parallelism;
      first = j.parallelism;
      jobs[{ns, name}] = j;
    }
    for (int index = 0; index < first; ++index) create_pod(self, ns, name, index);
    write_job(ns, name);
  }

  // Jobs and pods of namespace `ns` that clients deleted: processes killed, pods deleted.
  void collect(const std::shared_ptr<Core>& self, const std::string& ns, bool orphan) {
    std::vector<std::shared_ptr<Pod>> doomed;
    // Which Jobs are gone is read from the server without our lock held.
    std::vector<std::pair<std::string, std::string>> tracked;
    {
      std::lock_guard lock(mu);
      for (const auto& [key, j] : jobs) {
        if (key.first == ns) tracked.emplace_back(j.name, j.uid);
      }
    }
    std::set<std::string> gone;  // Job uids
    for (const auto& [name, uid] : tracked) {
      const auto object = server.get("jobs", ns, name);
      if (!object || (*object)["metadata"].value("uid", "") != uid) gone.insert(uid);
    }
    std::vector<std::string> pod_names;
    {
      std::lock_guard lock(mu);
      for (auto it = jobs.begin(); it != jobs.end();) {
        it = gone.count(it->second.uid) != 0 ? jobs.erase(it) : std::next(it);
      }
      for (const auto& [key, p] : pods) {
        if (key.first == ns && !p->deleting) pod_names.push_back(key.second);
      }
    }
    std::set<std::string> pods_gone;
    for (const auto& name : pod_names) {
      const auto object = server.get("pods", ns, name);
      if (!object || object->at("metadata").contains("deletionTimestamp")) pods_gone.insert(name);
    }
    {
      std::lock_guard lock(mu);
      for (const auto& [key, p] : pods) {
        if (key.first != ns || p->deleting) continue;
        if (gone.count(p->job_uid) != 0) {
          if (!orphan) doomed.push_back(p);
        } else if (pods_gone.count(p->name) != 0) {
          doomed.push_back(p);
        }
      }
      for (const auto& p : doomed) p->deleting = true;
    }
    for (const auto& p : doomed) {
      kill_gracefully(self, p);
      if (gone.count(p->job_uid) != 0) server.terminate("pods", ns, p->name);
    }
  }

  void handle(const std::shared_ptr<Core>& self, const ApiCall& call);

  // The newest pod of an index of the Job there now.
  std::shared_ptr<Pod> newest_pod_locked(const std::string& ns, const std::string& job,
                                         int index) const {
    const auto j = jobs.find({ns, job});
    if (j == jobs.end()) return nullptr;
    std::shared_ptr<Pod> found;
    for (const auto& [key, p] : pods) {
      if (p->job_uid == j->second.uid && p->index == index &&
          (!found || p->sequence > found->sequence)) {
        found = p;
      }
    }
    return found;
  }
};

JobController::JobController(FakeApiServer& server, JobControllerOptions options)
    : core_(std::make_shared<Core>(server, std::move(options))) {
  controller_id_ = server.add_controller(
      [weak = std::weak_ptr<Core>(core_)](FakeApiServer&, const ApiCall& call) {
        if (const auto core = weak.lock(); core && !core->stopped) core->handle(core, call);
      });
  FakeApiServer::PodRuntime runtime;
  std::weak_ptr<Core> weak = core_;
  runtime.logs = [weak](const std::string& ns, const std::string& pod,
                        const std::string&) -> std::optional<std::string> {
    const auto core = weak.lock();
    if (!core) return std::nullopt;
    std::string dir;
    {
      std::lock_guard lock(core->mu);
      const auto it = core->pods.find({ns, pod});
      if (it == core->pods.end() || it->second->phase == Core::Phase::kPending) {
        return std::nullopt;
      }
      dir = it->second->dir;
    }
    std::ifstream in(std::filesystem::path(dir) / "container.log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  runtime.exec = [weak](const std::string& ns, const std::string& pod, const std::string& container,
                        const std::vector<std::string>& argv) {
    ExecResolution out;
    out.code = 400;
    out.reason = "BadRequest";
    out.message = "container not found (\"" + container + "\")";
    const auto core = weak.lock();
    if (!core) return out;
    std::lock_guard lock(core->mu);
    const auto it = core->pods.find({ns, pod});
    if (it == core->pods.end() || it->second->phase != Core::Phase::kRunning) {
      return out;
    }
    const Core::Pod& p = *it->second;
    if (container != p.container) {
      out.message = "container " + container + " is not valid for pod " + pod;
      return out;
    }
    out.code = 0;
    out.process.argv = map_binary(argv, core->options.binaries);
    out.process.cwd = p.dir;
    out.process.env = p.env;
    return out;
  };
  server.set_pod_runtime(std::move(runtime));
}

JobController::~JobController() {
  core_->stopped = true;
  core_->server.remove_controller(controller_id_);
  core_->server.set_pod_runtime({});
  // Processes still running: SIGTERM, SIGKILL after the grace; their waiters reap them.
  const auto live = [&] {
    std::vector<pid_t> out;
    std::lock_guard lock(core_->mu);
    for (const auto& [key, p] : core_->pods) {
      if (p->pid > 0 && !p->exited) out.push_back(p->pid);
    }
    return out;
  };
  for (const pid_t pid : live()) signal_group(pid, SIGTERM);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(core_->options.kill_grace_s);
  while (!live().empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard lock(core_->mu);
    for (const auto& [key, p] : core_->pods) {
      if (p->pid > 0 && !p->exited) signal_group(p->pid, SIGKILL);
    }
  }
  std::vector<std::thread> waiters;
  {
    std::lock_guard lock(core_->mu);
    waiters.swap(core_->waiters);
  }
  for (auto& waiter : waiters) waiter.join();
  std::error_code ignored;
  std::filesystem::remove_all(core_->root, ignored);
}

void JobController::handle(const ApiCall& call) { core_->handle(core_, call); }

void JobController::Core::handle(const std::shared_ptr<Core>& self, const ApiCall& call) {
  if (stopped || call.namespace_name.empty()) return;
  if (call.resource == "jobs" && call.method == "POST") {
    const json body = json::parse(call.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_object() && body.contains("metadata")) {
      const std::string name = body["metadata"].value("name", "");
      if (!name.empty()) start_job(self, call.namespace_name, name);
    }
    return;
  }
  if (call.method == "DELETE" && (call.resource == "jobs" || call.resource == "pods")) {
    const json body = json::parse(call.body.empty() ? "{}" : call.body, nullptr, false);
    bool orphan = call.query.find("propagationPolicy=Orphan") != std::string::npos;
    if (body.is_object() && body.value("propagationPolicy", "") == "Orphan") orphan = true;
    if (body.is_object() && body.value("orphanDependents", false)) orphan = true;
    collect(self, call.namespace_name, orphan);
  }
}

void JobController::start(const std::string& job, const std::string& namespace_name) {
  if (!job.empty()) core_->start_job(core_, namespace_name, job);
}

bool JobController::fail_pod(const std::string& job, int index, const std::string& reason,
                             int exit_code, const std::string& namespace_name) {
  std::shared_ptr<Core::Pod> p;
  bool pending = false;
  {
    std::lock_guard lock(core_->mu);
    p = core_->newest_pod_locked(namespace_name, job, index);
    if (!p || p->deleting ||
        (p->phase != Core::Phase::kPending && p->phase != Core::Phase::kRunning)) {
      return false;
    }
    p->fault_reason = reason;
    p->fault_exit_code = exit_code;
    pending = p->phase == Core::Phase::kPending;
    if (!pending) signal_group(p->pid, SIGKILL);  // its waiter reports the fault
  }
  if (pending) core_->finish(core_, p, reason, exit_code);
  return true;
}

void JobController::hold_pending(const std::string& job, PodWaiting waiting) {
  std::lock_guard lock(core_->mu);
  core_->options.stuck_jobs[job] = std::move(waiting);
}

void JobController::delay_start(const std::string& job, double seconds) {
  std::lock_guard lock(core_->mu);
  core_->options.start_delays_s[job] = seconds;
}

std::optional<JobController::PodInfo> JobController::pod(const std::string& job, int index,
                                                         const std::string& namespace_name) const {
  std::lock_guard lock(core_->mu);
  const auto p = core_->newest_pod_locked(namespace_name, job, index);
  if (!p) return std::nullopt;
  return PodInfo{p->name, p->dir, p->pid, p->pid > 0 && !p->exited};
}

}  // namespace kvsweep::testing
