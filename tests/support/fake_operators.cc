// Operators for the fake API server that act as real controllers do: see fake_operators.h.
#include "tests/support/fake_operators.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace kvsweep::testing {
namespace {

using json = nlohmann::json;

double wall_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// A revision name from what the pods are made from, as a pod-template-hash is.
std::string revision_hash(const json& value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%08zx",
                std::hash<std::string>{}(value.dump()) & 0xffffffffu);
  return buffer;
}

bool is_terminating(const json& pod) { return pod["metadata"].contains("deletionTimestamp"); }

bool is_ready(const json& pod) {
  for (const auto& condition : pod["status"].value("conditions", json::array())) {
    if (condition.value("type", "") == "Ready") return condition.value("status", "") == "True";
  }
  return false;
}

std::string label_of(const json& pod, const std::string& key) {
  const json& labels = pod["metadata"].value("labels", json::object());
  return labels.contains(key) && labels[key].is_string() ? labels[key].get<std::string>() : "";
}

bool has_labels(const json& pod, const json& labels) {
  for (const auto& [key, value] : labels.items()) {
    if (label_of(pod, key) != value) return false;
  }
  return true;
}

std::string owner_uid(const json& pod) {
  for (const auto& owner : pod["metadata"].value("ownerReferences", json::array())) {
    return owner.value("uid", "");
  }
  return "";
}

std::string name_of(const json& object) { return object["metadata"].value("name", ""); }

// The pods of one operator, made and moved through their lives on the server's timer thread.
// Everything an action touches is reached through a shared_ptr, so an action still pending
// when the operator goes away finds `stopped` and does nothing.
class PodLife {
 public:
  PodLife(FakeApiServer& server, std::string namespace_name, PodTiming timing)
      : server_(server), ns_(std::move(namespace_name)), timing_(timing) {
    server_.set_termination_delay("pods", timing_.termination_s);
  }

  FakeApiServer& server() { return server_; }
  const std::string& ns() const { return ns_; }
  const PodTiming& timing() const { return timing_; }

  std::vector<json> pods_with(const json& labels) const {
    std::vector<json> out;
    for (const auto& pod : server_.list("pods", ns_)) {
      if (has_labels(pod, labels)) out.push_back(pod);
    }
    std::sort(out.begin(), out.end(),
              [](const json& a, const json& b) { return name_of(a) < name_of(b); });
    return out;
  }

  // A pod in its final state (Ready, or waiting with `problem`), or Pending when `pending`:
  // then it takes timing.start_s to reach that state, and `on_started` runs after.
  void create(const std::string& name, const json& labels, const std::string& url, const json& env,
              const json& owner, const std::string& problem, bool pending,
              const std::function<void()>& on_started,
              const std::shared_ptr<std::atomic<bool>>& stopped) {
    server_.put("pods",
                pod(name, labels, url, env, owner, pending ? "ContainerCreating" : problem));
    if (!pending) return;
    server_.after(timing_.start_s, [=, this] {
      if (*stopped) return;
      const auto now = server_.get("pods", ns_, name);
      if (!now || is_terminating(*now)) return;  // deleted while it started
      server_.modify("pods", ns_, name, [&](json& object) {
        const json started = pod(name, labels, url, env, owner, problem);
        object["status"] = started["status"];
      });
      on_started();
    });
  }

  // Deletes a pod as its controller does: Terminating, gone after timing.termination_s, when
  // `on_gone` runs.
  void terminate(const std::string& name, const std::function<void()>& on_gone,
                 const std::shared_ptr<std::atomic<bool>>& stopped) {
    server_.terminate("pods", ns_, name);
    server_.after(timing_.termination_s + 0.01, [=] {
      if (!*stopped) on_gone();
    });
  }

 private:
  json pod(const std::string& name, const json& labels, const std::string& url, const json& env,
           const json& owner, const std::string& waiting) const {
    json object = make_pod(
        name, ns_, labels, waiting.empty(), "127.0.0.1", port_of(url), env, waiting,
        waiting == "ContainerCreating" ? "" : "back-off 10s restarting failed container=server");
    if (!owner.is_null()) object["metadata"]["ownerReferences"] = json::array({owner});
    return object;
  }

  FakeApiServer& server_;
  std::string ns_;
  PodTiming timing_;
};

// Opens a window when a rollout starts and closes it when it is done.
class Windows {
 public:
  void open() {
    if (windows_.empty() || windows_.back().end_s != 0) windows_.push_back({wall_now_s(), 0});
  }
  void close() {
    if (!windows_.empty() && windows_.back().end_s == 0) windows_.back().end_s = wall_now_s();
  }
  const std::vector<RolloutWindow>& all() const { return windows_; }

 private:
  std::vector<RolloutWindow> windows_;
};

}  // namespace

// A controller owning `replicas` pods at the revision its object asks for: KubeAI's Model
// controller and a Deployment's, which differ in what the revision is made from, how the
// status reads, and whether the pods are owned by the object's uid.
struct KubeAIOperator::Core {
  struct Config {
    std::string resource;  // "models" | "deployments"
    std::string name;
    json labels;  // the pods' own labels, the revision label added to them
    std::string revision_label;
    int replicas = 0;
    std::vector<std::string> urls;
    Rollout rollout = Rollout::kSurge;
    std::function<std::string(const json&)> revision_of;
    std::function<void(json& object, int all, int ready)> write_status;
    bool owned = false;  // pods carry an ownerReference: the object deleted, they go
    double gc_s = 0;     // ... this long after the object
    std::string initial_problem;
    std::string rollout_problem;
    int problem_slot = 1;
    // Asked as each pod is created: a reason it will wait with instead of becoming Ready (an
    // EPP that refuses the configuration it reads at start crash-loops); "" for none.
    std::function<std::string()> pod_problem;
  };

  Core(FakeApiServer& server, std::string ns, PodTiming timing, Config config)
      : life(server, std::move(ns), timing), c(std::move(config)) {}

  PodLife life;
  Config c;
  std::shared_ptr<std::atomic<bool>> stopped = std::make_shared<std::atomic<bool>>(false);
  mutable std::mutex mu;  // windows and actions, for a test's thread; the rest: the timer's
  Windows windows;
  std::vector<std::string> actions;
  std::map<std::string, int> slot_of;
  int next_pod = 0;
  bool act_pending = false;

  void start(const std::shared_ptr<Core>& self) {
    const auto object = life.server().get(c.resource, life.ns(), c.name);
    if (!object) throw std::invalid_argument("operator: no " + c.resource + "/" + c.name);
    const std::string revision = c.revision_of(*object);
    for (int slot = 0; slot < c.replicas; ++slot) {
      create(*object, revision, slot, /*pending=*/false, c.initial_problem, self);
    }
    actions.clear();  // the pods it starts from are no action
    write_status();
    life.server().set_controller(
        [weak = std::weak_ptr<Core>(self)](FakeApiServer&, const ApiCall& call) {
          const auto core = weak.lock();
          if (!core) return;
          const bool mine = call.resource == core->c.resource && call.name == core->c.name;
          const bool its_pod = call.resource == "pods" && call.method == "DELETE";
          const bool created = call.resource == core->c.resource && call.method == "POST";
          if (mine || its_pod || created) core->act_later(core);
          if (mine && call.method == "DELETE" && core->c.owned) {
            core->life.server().after(core->c.gc_s, [core] {
              if (!*core->stopped) core->collect_garbage(core);
            });
          }
        });
  }

  // The garbage collector: every pod whose owner is not the object there now goes.
  void collect_garbage(const std::shared_ptr<Core>& self) {
    const auto object = life.server().get(c.resource, life.ns(), c.name);
    const std::string uid = object ? object->at("metadata").value("uid", "") : "";
    for (const auto& pod : life.pods_with(c.labels)) {
      if (is_terminating(pod) || owner_uid(pod).empty() || owner_uid(pod) == uid) continue;
      {
        std::lock_guard lock(mu);
        windows.open();
      }
      terminate(pod, self);
    }
  }

  // Acts once the lag has passed; changes meanwhile are seen by that one pass.
  void act_later(const std::shared_ptr<Core>& self) {
    {
      std::lock_guard lock(mu);
      if (act_pending) return;
      act_pending = true;
    }
    life.server().after(life.timing().lag_s, [self] {
      {
        std::lock_guard lock(self->mu);
        self->act_pending = false;
      }
      if (!*self->stopped) self->reconcile(self);
    });
  }

  json owner_of(const json& object) const {
    if (!c.owned) return nullptr;
    return {{"apiVersion", object.value("apiVersion", "")},
            {"kind", object.value("kind", "")},
            {"name", c.name},
            {"uid", object["metadata"].value("uid", "")},
            {"controller", true}};
  }

  void create(const json& object, const std::string& revision, int slot, bool pending,
              const std::string& problem, const std::shared_ptr<Core>& self) {
    json labels = c.labels;
    labels[c.revision_label] = revision;
    const std::string name =
        c.name + "-" + revision.substr(0, 5) + "-" + std::to_string(next_pod++);
    slot_of[name] = slot;
    std::string why = slot == c.problem_slot ? problem : "";
    if (why.empty() && c.pod_problem) why = c.pod_problem();
    record("create " + name);
    life.create(
        name, labels, c.urls.at(static_cast<std::size_t>(slot) % c.urls.size()), json::object(),
        owner_of(object), why, pending, [self] { self->reconcile(self); }, stopped);
  }

  void terminate(const json& pod, const std::shared_ptr<Core>& self) {
    record("delete " + name_of(pod));
    life.terminate(
        name_of(pod), [self] { self->reconcile(self); }, stopped);
  }

  void record(const std::string& action) {
    std::lock_guard lock(mu);
    actions.push_back(action);
  }

  int slot(const json& pod) const {
    const auto it = slot_of.find(name_of(pod));
    return it == slot_of.end() ? 0 : it->second;
  }

  // One pass of the controller: what the object asks for against the pods there are.
  void reconcile(const std::shared_ptr<Core>& self) {
    const auto object = life.server().get(c.resource, life.ns(), c.name);
    std::vector<json> current;
    std::vector<json> old;
    int terminating = 0;
    const std::string revision = object ? c.revision_of(*object) : "";
    for (const auto& pod : life.pods_with(c.labels)) {
      if (is_terminating(pod)) {
        ++terminating;
      } else if (!object || label_of(pod, c.revision_label) != revision) {
        // KubeAI counts every pod with its label, whoever owns it: a Model created anew
        // adopts the old one's pods until the garbage collector takes them.
        old.push_back(pod);
      } else {
        current.push_back(pod);
      }
    }
    std::sort(old.begin(), old.end(),
              [this](const json& a, const json& b) { return slot(a) < slot(b); });
    const bool all_current_ready =
        std::all_of(current.begin(), current.end(), [](const json& p) { return is_ready(p); });
    {
      std::lock_guard lock(mu);
      const bool settled = object && old.empty() && terminating == 0 && all_current_ready &&
                           static_cast<int>(current.size()) == c.replicas;
      if (settled) {
        windows.close();
      } else if (!old.empty() || terminating > 0 || !object) {
        windows.open();
      }
    }
    if (!object) return;  // its pods are the garbage collector's
    if (!old.empty() && c.rollout == Rollout::kRecreate) {
      for (const auto& pod : old) terminate(pod, self);
      old.clear();
    }
    if (old.empty()) {
      std::vector<bool> taken(static_cast<std::size_t>(c.replicas), false);
      for (const auto& pod : current) {
        if (slot(pod) < c.replicas) taken[static_cast<std::size_t>(slot(pod))] = true;
      }
      for (int s = 0; s < c.replicas; ++s) {
        if (!taken[static_cast<std::size_t>(s)]) {
          create(*object, revision, s, true, c.rollout_problem, self);
        }
      }
    } else if (all_current_ready) {
      // The surge: one extra pod of the new revision, then, once it is Ready, one old pod goes.
      if (current.size() + old.size() <= static_cast<std::size_t>(c.replicas)) {
        create(*object, revision, slot(old.front()), true, c.rollout_problem, self);
      } else {
        terminate(old.front(), self);
      }
    }
    write_status();
  }

  void write_status() {
    int all = 0;
    int ready = 0;
    for (const auto& pod : life.pods_with(c.labels)) {
      ++all;
      if (is_ready(pod) && !is_terminating(pod)) ++ready;
    }
    life.server().modify(c.resource, life.ns(), c.name,
                         [&](json& object) { c.write_status(object, all, ready); });
  }

  void stop() {
    *stopped = true;
    life.server().set_controller(nullptr);
  }

  std::vector<RolloutWindow> rollouts() const {
    std::lock_guard lock(mu);
    return windows.all();
  }
};

KubeAIOperator::KubeAIOperator(FakeApiServer& server, KubeAIOperatorOptions options) {
  Core::Config config;
  config.resource = "models";
  config.name = options.model;
  config.labels = {{"app", "model"}, {"model", options.model}};
  config.revision_label = "pod-hash";
  config.replicas = options.replicas;
  config.urls = options.replica_urls;
  config.rollout = options.rollout;
  const bool lb_rolls = options.load_balancing_rolls_pods;
  config.revision_of = [lb_rolls](const json& model) {
    json spec = model.value("spec", json::object());
    if (!lb_rolls) spec.erase("loadBalancing");
    return revision_hash(spec);
  };
  config.write_status = [](json& model, int all, int ready) {
    model["status"]["replicas"] = {{"all", all}, {"ready", ready}};
  };
  config.owned = true;
  config.gc_s = options.gc_s;
  config.initial_problem = options.initial_problem;
  config.rollout_problem = options.rollout_problem;
  config.problem_slot = options.problem_slot;
  core_ = std::make_shared<Core>(server, options.namespace_name, options.timing, std::move(config));
  core_->start(core_);
}

KubeAIOperator::~KubeAIOperator() { core_->stop(); }

std::vector<RolloutWindow> KubeAIOperator::rollouts() const { return core_->rollouts(); }

std::vector<std::string> KubeAIOperator::actions() const {
  std::lock_guard lock(core_->mu);
  return core_->actions;
}

DeploymentOperator::DeploymentOperator(FakeApiServer& server, DeploymentOperatorOptions options) {
  const auto deployment = server.get("deployments", options.namespace_name, options.deployment);
  if (!deployment) throw std::invalid_argument("operator: no deployment " + options.deployment);
  KubeAIOperator::Core::Config config;
  config.resource = "deployments";
  config.name = options.deployment;
  config.labels = (*deployment)["spec"]["selector"]["matchLabels"];
  config.revision_label = "pod-template-hash";
  config.replicas = (*deployment)["spec"].value("replicas", 1);
  config.urls = options.replica_urls;
  config.rollout = options.rollout;
  config.revision_of = [](const json& d) {
    return revision_hash(d["spec"].value("template", json::object()));
  };
  config.pod_problem = options.pod_problem;
  config.write_status = [](json& d, int all, int ready) {
    d["status"]["observedGeneration"] = d["metadata"].value("generation", 1);
    d["status"]["replicas"] = all;
    d["status"]["readyReplicas"] = ready;
  };
  core_ = std::make_shared<KubeAIOperator::Core>(server, options.namespace_name, options.timing,
                                                 std::move(config));
  core_->start(core_);
}

DeploymentOperator::~DeploymentOperator() { core_->stop(); }

std::vector<RolloutWindow> DeploymentOperator::rollouts() const { return core_->rollouts(); }

std::vector<std::string> DeploymentOperator::actions() const {
  std::lock_guard lock(core_->mu);
  return core_->actions;
}

// Dynamo's operator: the frontend rolled on a change of its envs, the workers replaced when
// deleted, the DGD's status following both.
struct DynamoOperator::Core {
  Core(FakeApiServer& server, DynamoOperatorOptions o)
      : life(server, o.namespace_name, o.timing), options(std::move(o)) {}

  PodLife life;
  DynamoOperatorOptions options;
  std::shared_ptr<std::atomic<bool>> stopped = std::make_shared<std::atomic<bool>>(false);
  mutable std::mutex mu;
  Windows windows;
  bool act_pending = false;
  // Replacements made per worker slot: kubectl deletes a label's pods one call at a time, and
  // on a busy machine the operator may replace the first before the second is deleted, so a
  // round is counted per slot, not per reconcile.
  std::vector<int> slot_restarts;
  int frontends = 0;

  json labels(const std::string& component) const {
    return {{"nvidia.com/dynamo-graph-deployment-name", options.dgd},
            {"nvidia.com/dynamo-component-type", component}};
  }

  json frontend_envs(const json& dgd) const {
    return dgd["spec"]["services"][options.frontend_service].value("envs", json::array());
  }

  json env_object(const json& envs) const {
    json env = json::object();
    for (const auto& e : envs) {
      if (e.contains("value")) env[e["name"].get<std::string>()] = e["value"];
    }
    return env;
  }

  void start(const std::shared_ptr<Core>& self) {
    const auto dgd = life.server().get("dynamographdeployments", life.ns(), options.dgd);
    if (!dgd) throw std::invalid_argument("operator: no dgd " + options.dgd);
    create_frontend(*dgd, /*pending=*/false, self);
    const std::string problem = options.problem_restart == 0 ? options.worker_problem : "";
    slot_restarts.assign(static_cast<std::size_t>(options.replicas), 0);
    for (int slot = 0; slot < options.replicas; ++slot) {
      create_worker(slot, false, slot == options.problem_slot ? problem : "", self);
    }
    write_status(/*observe=*/true);
    life.server().set_controller([weak = std::weak_ptr<Core>(self)](FakeApiServer&,
                                                                    const ApiCall& call) {
      const auto core = weak.lock();
      if (!core) return;
      const bool mine = call.resource == "dynamographdeployments" && call.name == core->options.dgd;
      const bool pod_deleted = call.resource == "pods" && call.method == "DELETE";
      if (mine || pod_deleted) core->act_later(core);
    });
  }

  void act_later(const std::shared_ptr<Core>& self) {
    {
      std::lock_guard lock(mu);
      if (act_pending) return;
      act_pending = true;
    }
    life.server().after(life.timing().lag_s, [self] {
      {
        std::lock_guard lock(self->mu);
        self->act_pending = false;
      }
      if (!*self->stopped) self->reconcile(self, /*observe=*/true);
    });
  }

  void create_frontend(const json& dgd, bool pending, const std::shared_ptr<Core>& self) {
    json l = labels("frontend");
    l["pod-template-hash"] = revision_hash(frontend_envs(dgd));
    life.create(
        "frontend-" + std::to_string(frontends++), l, options.frontend_url,
        env_object(frontend_envs(dgd)), nullptr, "", pending,
        [self] { self->reconcile(self, false); }, stopped);
  }

  void create_worker(int slot, bool pending, const std::string& problem,
                     const std::shared_ptr<Core>& self) {
    json l = labels("worker");
    l["pod-template-hash"] = "w0";  // the workers' template never changes here
    life.create(
        "worker-" + std::to_string(slot_restarts.at(static_cast<std::size_t>(slot))) + "-" +
            std::to_string(slot),
        l, options.worker_urls.at(static_cast<std::size_t>(slot) % options.worker_urls.size()),
        json::object(), nullptr, problem, pending, [self] { self->reconcile(self, false); },
        stopped);
  }

  void reconcile(const std::shared_ptr<Core>& self, bool observe) {
    const auto dgd = life.server().get("dynamographdeployments", life.ns(), options.dgd);
    if (!dgd) return;
    const std::string revision = revision_hash(frontend_envs(*dgd));
    std::vector<json> old_frontends;
    std::vector<json> new_frontends;
    bool moving = false;
    for (const auto& pod : life.pods_with(labels("frontend"))) {
      if (is_terminating(pod)) {
        moving = true;
      } else if (label_of(pod, "pod-template-hash") != revision) {
        old_frontends.push_back(pod);
      } else {
        new_frontends.push_back(pod);
      }
    }
    std::vector<bool> taken(static_cast<std::size_t>(options.replicas), false);
    int live_workers = 0;
    for (const auto& pod : life.pods_with(labels("worker"))) {
      if (is_terminating(pod)) {
        moving = true;
        continue;
      }
      ++live_workers;
      const std::string name = name_of(pod);
      const int slot = std::stoi(name.substr(name.rfind('-') + 1));
      if (slot < options.replicas) taken[static_cast<std::size_t>(slot)] = true;
    }
    // Workers deleted: a new round of replacements, Pending first.
    if (live_workers < options.replicas) {
      moving = true;
      for (int slot = 0; slot < options.replicas; ++slot) {
        if (taken[static_cast<std::size_t>(slot)]) continue;
        const int round = ++slot_restarts.at(static_cast<std::size_t>(slot));
        const bool problem = slot == options.problem_slot && round == options.problem_restart;
        create_worker(slot, true, problem ? options.worker_problem : "", self);
      }
    }
    // The frontend's envs changed: a surge of one.
    if (!old_frontends.empty()) {
      moving = true;
      if (new_frontends.empty()) {
        create_frontend(*dgd, true, self);
      } else if (std::all_of(new_frontends.begin(), new_frontends.end(), is_ready)) {
        for (const auto& pod : old_frontends) {
          life.terminate(
              name_of(pod), [self] { self->reconcile(self, false); }, stopped);
        }
      }
    }
    const bool ready = write_status(observe);
    std::lock_guard lock(mu);
    if (moving || !ready) {
      windows.open();
    } else {
      windows.close();
    }
  }

  // Returns whether the DGD is Ready now.
  bool write_status(bool observe) {
    int workers_ready = 0;
    for (const auto& pod : life.pods_with(labels("worker"))) {
      if (is_ready(pod) && !is_terminating(pod)) ++workers_ready;
    }
    bool frontend_ready = false;
    for (const auto& pod : life.pods_with(labels("frontend"))) {
      if (is_ready(pod) && !is_terminating(pod)) frontend_ready = true;
    }
    const bool ready = frontend_ready && workers_ready >= options.replicas;
    const std::string message =
        options.worker_service + ": " + std::to_string(workers_ready) + "/" +
        std::to_string(options.replicas) + " ready" +
        (frontend_ready ? "" : "; " + options.frontend_service + ": 0/1 ready");
    life.server().modify("dynamographdeployments", life.ns(), options.dgd, [&](json& dgd) {
      json& status = dgd["status"];
      if (observe) status["observedGeneration"] = dgd["metadata"].value("generation", 1);
      status["state"] = ready ? "successful" : "pending";
      json condition = {{"type", "Ready"}, {"status", ready ? "True" : "False"}};
      if (!ready) {
        condition["reason"] = "ComponentsNotReady";
        condition["message"] = message;
      }
      status["conditions"] = json::array({condition});
    });
    return ready;
  }

  void stop() {
    *stopped = true;
    life.server().set_controller(nullptr);
  }
};

DynamoOperator::DynamoOperator(FakeApiServer& server, DynamoOperatorOptions options)
    : core_(std::make_shared<Core>(server, std::move(options))) {
  core_->start(core_);
}

DynamoOperator::~DynamoOperator() { core_->stop(); }

std::vector<RolloutWindow> DynamoOperator::rollouts() const {
  std::lock_guard lock(core_->mu);
  return core_->windows.all();
}

}  // namespace kvsweep::testing
