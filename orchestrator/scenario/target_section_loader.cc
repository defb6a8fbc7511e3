// Reads a scenario's `target:` section: which kind, how to reach it, how to apply each level,
// how long each readiness gate may take, where the metrics are.
#include <algorithm>
#include <filesystem>
#include <set>

#include "common/base_url.h"
#include "driver/datasets/dataset_limits.h"
#include "driver/load_options.h"
#include "orchestrator/scenario/scenario_reads.h"
#include "sim/fleet.h"
#include "sim/http/http_upstream.h"

namespace kvsweep::orchestrator {
namespace {

// The replicas a cluster target waits for (and the servers the replicas kind routes to): far
// past any deployment kvsweep measures; more is a typo.
constexpr int kMaxClusterReplicas = 10'000;

// Which kinds read each key, so a key given for another kind is an error, not ignored.
const std::map<std::string, std::vector<std::string>>& key_kinds() {
  static const std::vector<std::string> kube = {"kubeai", "dynamo", "kubectl", "llmd"};
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"profile", {"sim"}},
      {"replicas", {"sim", "kubeai", "dynamo", "kubectl", "endpoints", "llmd"}},
      {"health", {"sim", "replicas"}},
      {"upstreams", {"replicas"}},
      {"kv_ttl", {"replicas"}},
      {"sim", {"replicas", "kubeai", "dynamo", "kubectl", "endpoints", "llmd"}},
      {"kubectl", kube},
      {"kubeconfig", kube},
      {"context", kube},
      {"namespace", kube},
      {"command_timeout", kube},
      {"resource", {"kubeai", "dynamo"}},
      {"pod_selector", kube},
      {"base_url", {"kubeai", "dynamo", "kubectl", "endpoints", "llmd"}},
      {"pool", {"llmd"}},
      {"epp_deployment", {"llmd"}},
      {"epp_configmap", {"llmd"}},
      {"epp_config_key", {"llmd"}},
      {"epp_metrics_port", {"llmd"}},
      {"frontend_service", {"dynamo"}},
      {"frontend_selector", {"dynamo"}},
      {"restart_workers", {"dynamo"}},
      {"cold_method", {"kubeai", "dynamo", "kubectl", "endpoints", "llmd"}},
      {"levels", {"kubectl", "endpoints"}},
  };
  return keys;
}

void read_profile(YamlMapReader& reader, std::string* out, YamlErrors& sink) {
  YAML::Node profile = reader.get("profile");
  if (!profile.IsDefined()) return;
  const auto known = sim::profile_names();
  if (!profile.IsScalar()) {
    sink.add(profile.Mark(), reader.path_of("profile"),
             "expected a profile name, got " + describe_node(profile));
  } else if (std::find(known.begin(), known.end(), profile.Scalar()) == known.end()) {
    std::string message = "unknown profile \"" + profile.Scalar() + "\"";
    if (auto s = closest_word(profile.Scalar(), known)) {
      message += "; did you mean '" + *s + "'?";
    } else {
      message += " (expected one of: " + join(known) + ")";
    }
    sink.add(profile.Mark(), reader.path_of("profile"), message);
  } else {
    *out = profile.Scalar();
  }
}

bool is_http_url(const std::string& text) {
  return text.rfind("http://", 0) == 0 || text.rfind("https://", 0) == 0;
}

void read_urls(YamlMapReader& reader, const std::string& key, std::vector<std::string>* out,
               YamlErrors& sink) {
  YAML::Node node = reader.get(key);
  if (!node.IsDefined()) return;
  for (const auto& item : scalars_of(node)) {
    if (!item.IsScalar() || !is_http_url(item.Scalar())) {
      sink.add(item.Mark(), reader.path_of(key),
               "expected http:// or https:// URLs, got " + describe_node(item));
      continue;
    }
    out->push_back(item.Scalar());
  }
}

// [[patch, deployment/x, --type=merge, -p, '{...}'], [rollout, status, deployment/x]]
void read_argv_lists(YamlMapReader& reader, const std::string& key,
                     std::vector<std::vector<std::string>>* out, YamlErrors& sink) {
  YAML::Node node = reader.get(key);
  if (!node.IsDefined()) return;
  const std::string path = reader.path_of(key);
  if (!node.IsSequence()) {
    sink.add(node.Mark(), path,
             "expected a list of kubectl argument lists, e.g. [[rollout, status, deployment/x]]");
    return;
  }
  for (const auto& argv : node) {
    if (!argv.IsSequence() || argv.size() == 0) {
      sink.add(argv.Mark(), path,
               "expected an argument list such as [rollout, status, deployment/x], got " +
                   describe_node(argv));
      continue;
    }
    std::vector<std::string> words;
    for (const auto& word : argv) {
      if (!word.IsScalar()) {
        sink.add(word.Mark(), path, "expected a word, got " + describe_node(word));
        continue;
      }
      words.push_back(word.Scalar());
    }
    if (!words.empty() && words.front() == "kubectl") {
      sink.add(argv.Mark(), path,
               "leave out \"kubectl\": kvsweep runs the binary with the target's kubeconfig, "
               "context and namespace");
      continue;
    }
    out->push_back(std::move(words));
  }
}

void read_levels(YamlMapReader& reader, TargetSpec& target, YamlErrors& sink,
                 std::map<std::string, SourceMark>& marks) {
  YAML::Node node = reader.mapping("levels");
  if (!node.IsDefined()) return;
  for (auto f = node.begin(); f != node.end(); ++f) {
    const std::string factor = f->first.Scalar();
    const std::string factor_path = "target.levels." + factor;
    if (!f->second.IsMap()) {
      sink.add(
          f->second.Mark(), factor_path,
          "expected a mapping from each level to what it does, got " + describe_node(f->second));
      continue;
    }
    for (auto l = f->second.begin(); l != f->second.end(); ++l) {
      const std::string level = l->first.Scalar();
      const std::string level_path = factor_path + "." + level;
      if (!l->second.IsMap()) {
        sink.add(l->second.Mark(), level_path,
                 "expected a mapping, got " + describe_node(l->second));
        continue;
      }
      YamlMapReader fields(l->second, level_path, sink, &marks);
      LevelAction action;
      action.mark = SourceMark{l->first.Mark().line + 1, l->first.Mark().column + 1};
      if (target.kind == "kubectl") {
        read_argv_lists(fields, "apply", &action.apply, sink);
        read_argv_lists(fields, "wait", &action.wait, sink);
        // Only when nothing was written: a command rejected above has its own error.
        const YAML::Node apply = l->second["apply"];
        if (!apply.IsDefined() || (apply.IsSequence() && apply.size() == 0)) {
          sink.add(l->second.Mark(), level_path + ".apply", "give at least one kubectl command");
        }
      } else {
        read_base_url(fields, "base_url", &action.base_url, sink);
        read_urls(fields, "metrics", &action.metrics_urls, sink);
        if (action.base_url.empty()) {
          sink.add(l->second.Mark(), level_path + ".base_url", "required key is missing");
        }
      }
      fields.finish();
      target.levels[factor][level] = std::move(action);
    }
  }
}

void read_readiness(YamlMapReader& reader, ReadinessSpec& r, YamlErrors& sink,
                    std::map<std::string, SourceMark>& marks) {
  YAML::Node node = reader.mapping("readiness");
  if (!node.IsDefined()) return;
  YamlMapReader fields(node, "target.readiness", sink, &marks);
  fields.read_duration("resource", &r.resource_s);
  fields.read_duration("pods", &r.pods_s);
  fields.read_duration("models", &r.models_s);
  fields.read_duration("completion", &r.completion_s);
  fields.read_duration("poll", &r.poll_s);
  // settle, live_settle: 0 turns the wait off, which a duration > 0 cannot say.
  fields.read_duration("settle", &r.settle_s, /*allow_zero=*/true);
  fields.read_duration("live_settle", &r.live_settle_s, /*allow_zero=*/true);
  fields.read_int("retries", &r.retries, 0, kMaxRetries);
  fields.finish();
}

void read_metrics(YamlMapReader& reader, MetricsSpec& m, YamlErrors& sink,
                  std::map<std::string, SourceMark>& marks) {
  YAML::Node node = reader.mapping("metrics");
  if (!node.IsDefined()) return;
  YamlMapReader fields(node, "target.metrics", sink, &marks);
  read_urls(fields, "urls", &m.urls, sink);
  fields.read_int("port", &m.port, 1, 65535);
  fields.read_string("path", &m.path);
  if (node["interval"].IsDefined() && node["interval"].IsScalar() &&
      node["interval"].Scalar() == "0") {
    fields.get("interval");
    m.interval_s = 0;
  } else {
    fields.read_duration("interval", &m.interval_s);
  }
  fields.finish();
}

// health: {interval: 1s, failures: 3}; interval 0 turns the checks off.
void read_health(YamlMapReader& reader, HealthSpec& h, YamlErrors& sink,
                 std::map<std::string, SourceMark>& marks) {
  YAML::Node node = reader.mapping("health");
  if (!node.IsDefined()) return;
  YamlMapReader fields(node, "target.health", sink, &marks);
  if (node["interval"].IsDefined() && node["interval"].IsScalar() &&
      node["interval"].Scalar() == "0") {
    fields.get("interval");
    h.interval_s = 0;
  } else {
    fields.read_duration("interval", &h.interval_s);
  }
  fields.read_int("failures", &h.failures, 1, kMaxHealthFailures);
  fields.finish();
}

// upstreams: [http://host:port, ...]: the router's own URL rules (plain http), each once.
void read_upstreams(YamlMapReader& reader, std::vector<std::string>* out, YamlErrors& sink) {
  YAML::Node node = reader.get("upstreams");
  const std::string path = reader.path_of("upstreams");
  if (!node.IsDefined()) {
    sink.add(reader.node().Mark(), path,
             "required for kind replicas: the servers' base URLs, e.g. [http://127.0.0.1:8001, "
             "http://127.0.0.1:8002]");
    return;
  }
  if (!node.IsSequence() || node.size() == 0) {
    sink.add(node.Mark(), path, "expected a list of http:// URLs, got " + describe_node(node));
    return;
  }
  if (node.size() > static_cast<std::size_t>(kMaxClusterReplicas)) {
    sink.add(node.Mark(), path,
             std::to_string(node.size()) + " upstreams, more than the " +
                 std::to_string(kMaxClusterReplicas) + " a target may have");
    return;
  }
  std::set<std::string> seen;
  for (const auto& item : node) {
    if (!item.IsScalar()) {
      sink.add(item.Mark(), path, "expected an http:// URL, got " + describe_node(item));
      continue;
    }
    std::string url = item.Scalar();
    while (!url.empty() && url.back() == '/') url.pop_back();
    sim::UpstreamAddress address;
    std::string error;
    if (!sim::parse_upstream_url(url, &address, &error)) {
      sink.add(item.Mark(), path, error);
      continue;
    }
    if (!seen.insert(url).second) {
      sink.add(item.Mark(), path, "\"" + url + "\" is listed twice (each server is one replica)");
      continue;
    }
    out->push_back(url);
  }
}

// target.sim of a cluster kind: what --target sim runs instead. True when it gives replicas.
bool read_stand_in(YamlMapReader& reader, SimSpec& sim_spec, YamlErrors& sink,
                   std::map<std::string, SourceMark>& marks) {
  const YAML::Node node = reader.mapping("sim");
  if (!node.IsDefined()) return false;
  YamlMapReader sim(node, "target.sim", sink, &marks);
  sim.read_int("replicas", &sim_spec.replicas, 1, sim::kMaxReplicas);
  read_profile(sim, &sim_spec.profile, sink);
  sim.read_duration("duration", &sim_spec.duration_s);
  sim.read_int<std::int64_t>("num_requests", &sim_spec.num_requests, 1, driver::kMaxRequests);
  sim.read_int("max_tokens", &sim_spec.max_tokens, 1, driver::kMaxTokens);
  sim.read_int("conversations", &sim_spec.conversations, 1, driver::kMaxConversations);
  sim.finish();
  return node["replicas"].IsDefined();
}

// The keys of the kubectl-driven kinds and endpoints, then what each kind requires.
void read_cluster_keys(YamlMapReader& reader, ScenarioSpec& spec, YamlErrors& sink) {
  TargetSpec& t = spec.target;
  reader.read_string("kubectl", &t.kubectl);
  reader.read_string("kubeconfig", &t.kubeconfig);
  reader.read_string("context", &t.context);
  reader.read_string("namespace", &t.namespace_name);
  reader.read_duration("command_timeout", &t.command_timeout_s);
  reader.read_string("resource", &t.resource);
  reader.read_int("replicas", &t.replicas, 0, kMaxClusterReplicas);
  reader.read_string("pod_selector", &t.pod_selector);
  read_base_url(reader, "base_url", &t.base_url, sink);
  reader.read_string("frontend_service", &t.frontend_service);
  reader.read_string("frontend_selector", &t.frontend_selector);
  reader.read_bool("restart_workers", &t.restart_workers);
  reader.read_string("pool", &t.pool);
  reader.read_string("epp_deployment", &t.epp_deployment);
  reader.read_string("epp_configmap", &t.epp_configmap);
  reader.read_string("epp_config_key", &t.epp_config_key);
  reader.read_int("epp_metrics_port", &t.epp_metrics_port, 1, 65535);
  reader.read_choice("cold_method", &t.cold_method, {"reset", "restart"});
  read_levels(reader, t, sink, spec.marks);

  const YAML::Mark where = reader.node().Mark();
  if ((t.kind == "kubeai" || t.kind == "dynamo") && t.resource.empty() &&
      !reader.node()["resource"].IsDefined()) {
    sink.add(where, "target.resource",
             "required for kind " + t.kind + ": the " +
                 (t.kind == "kubeai" ? "Model" : "DynamoGraphDeployment") + "'s name");
  }
  if (t.kind == "llmd" && t.pool.empty() && !reader.node()["pool"].IsDefined()) {
    sink.add(where, "target.pool", "required for kind llmd: the InferencePool's name");
  }
  if ((t.kind == "kubeai" || t.kind == "dynamo" || t.kind == "llmd") && t.replicas == 0 &&
      !reader.node()["replicas"].IsDefined()) {
    sink.add(where, "target.replicas",
             "required for kind " + t.kind +
                 ": how many replicas must be Ready (both arms of "
                 "a comparison need the same number)");
  }
  if (t.kind != "endpoints" && t.base_url.empty() && !reader.node()["base_url"].IsDefined()) {
    sink.add(where, "target.base_url",
             "required for kind " + t.kind + ": where the load goes, e.g. http://kubeai/openai");
  }
  if (t.kind == "endpoints" && t.base_url.empty() && t.levels.empty()) {
    sink.add(where, "target.base_url", "give base_url, or levels with a base_url each");
  }
}

}  // namespace

void read_base_url(YamlMapReader& reader, const std::string& key, std::string* out,
                   YamlErrors& sink) {
  reader.read_string(key, out);
  if (!out->empty() && !is_http_url(*out)) {
    sink.add(reader.node()[key].Mark(), reader.path_of(key),
             "expected an http:// or https:// URL, got \"" + *out + "\"");
  }
  *out = normalize_base_url(*out);
}

void read_target(YamlMapReader& reader, ScenarioSpec& spec, const TargetKinds& kinds,
                 YamlErrors& sink) {
  TargetSpec& t = spec.target;
  std::vector<std::string> names;
  for (const auto& kind : kinds) names.push_back(kind.name);
  reader.read_choice("kind", &t.kind, names);
  for (const auto& [key, used_by] : key_kinds()) {
    const YAML::Node value = reader.node()[key];
    if (value.IsDefined() && std::find(used_by.begin(), used_by.end(), t.kind) == used_by.end()) {
      sink.add(value.Mark(), reader.path_of(key),
               "not used by target kind " + t.kind + " (used by: " + join(used_by) + ")");
      reader.get(key);  // reported: finish() must not call it unknown as well
    }
  }
  read_readiness(reader, t.readiness, sink, spec.marks);
  read_metrics(reader, t.metrics, sink, spec.marks);
  read_cost(reader, t.cost, sink);
  if (t.kind == "sim" || t.kind == "replicas") read_health(reader, t.health, sink, spec.marks);
  if (t.kind == "sim") {
    reader.read_int("replicas", &t.sim.replicas, 1, sim::kMaxReplicas);
    read_profile(reader, &t.sim.profile, sink);
    reader.finish();
    return;
  }
  // What --target sim runs instead: by default as many replicas as the real target expects.
  const bool sim_replicas_given = read_stand_in(reader, t.sim, sink, spec.marks);
  if (t.kind == "replicas") {
    read_upstreams(reader, &t.upstreams, sink);
    reader.read_duration("kv_ttl", &t.kv_ttl_s);
    t.replicas = static_cast<int>(t.upstreams.size());
  } else {
    read_cluster_keys(reader, spec, sink);
  }
  // At most the fleet's limit: a 1000-pod deployment rehearses on 256 simulated replicas.
  if (!sim_replicas_given && t.replicas > 0)
    t.sim.replicas = std::min(t.replicas, sim::kMaxReplicas);
  reader.finish();
}

}  // namespace kvsweep::orchestrator
