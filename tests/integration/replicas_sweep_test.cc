// Sweeps through kvsweep's router in front of real servers on loopback: the `replicas` target
// kind, and a cold step through `kvsweep proxy` that upstreams refuse.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "common/log.h"
#include "common/prometheus_text.h"
#include "driver/http_fetch.h"
#include "figures/cell_metrics.h"
#include "orchestrator/cli/console.h"
#include "orchestrator/scenario/plan.h"
#include "orchestrator/scenario/scenario_loader.h"
#include "orchestrator/sweep/runner.h"
#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/replicas_target.h"
#include "orchestrator/targets/target_factory.h"
#include "orchestrator/targets/target_kinds.h"
#include "sim/fleet.h"
#include "sim/proxy.h"
#include "store/store.h"
#include "tests/support/plain_vllm_server.h"
#include "tests/support/temp_dir.h"

namespace kvsweep {
namespace {

using orchestrator::ScenarioError;

orchestrator::ScenarioSpec parse_replicas_scenario(const std::string& text) {
  std::vector<ScenarioError> errors;
  auto spec =
      orchestrator::parse_scenario(text, "replicas.yaml", &errors, orchestrator::target_kinds());
  if (!spec) ADD_FAILURE() << errors.at(0).text;
  return spec.value_or(orchestrator::ScenarioSpec{});
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// One simulated vLLM replica of its own: a real server on loopback that kvsweep's router knows
// only by its URL (it also calls itself replica 0, which the router overrides).
sim::FleetOptions one_replica(std::uint64_t seed) {
  sim::FleetOptions options;
  options.replicas = 1;
  options.profile = "demo";
  options.seed = seed;
  return options;
}

// What the console printed, and the sweep's outcome.
struct Swept {
  orchestrator::SweepOutcome outcome;
  std::string console;
};

Swept sweep(const orchestrator::ScenarioSpec& spec, orchestrator::Target& target,
            store::Store& store) {
  std::FILE* log = std::tmpfile();
  Swept swept;
  {
    orchestrator::Console console(log);
    swept.outcome = orchestrator::run_sweep(spec, orchestrator::expand_plan(spec), target, store,
                                            console, orchestrator::RunnerOptions{});
  }
  std::fflush(log);
  std::rewind(log);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, log)) > 0;) {
    swept.console.append(buffer, n);
  }
  std::fclose(log);
  return swept;
}

constexpr const char* kReplicasSweep = R"(name: replicas-sweep
model: sim-model
seed: 3
target:
  kind: replicas
  upstreams: [UPSTREAMS]
  readiness: {poll: 50ms}
  metrics: {interval: 50ms}
factors:
  strategy: [round-robin, prefix-hash]
  concurrency: [1]
load:
  dataset: {conversations: 6, turns: 5, system_prompt_words: 40, user_words: 30, assistant_words: 30}
  max_tokens: 3
  num_requests: 30
  timeout: 30s
  cache: cold
)";

TEST(ReplicasSweep, SweepsTwoStrategiesOverRealReplicasThroughItsOwnRouter) {
  sim::Fleet first(one_replica(11));
  sim::Fleet second(one_replica(12));
  first.start();
  second.start();
  const std::string url0 = first.replica_urls()[0];
  const std::string url1 = second.replica_urls()[0];
  const auto spec =
      parse_replicas_scenario(replaced(kReplicasSweep, "UPSTREAMS", url0 + ", " + url1));
  auto target = orchestrator::make_target(spec, orchestrator::expand_plan(spec), false);
  EXPECT_EQ(target->describe(),
            "replicas x2 behind kvsweep's router (0=" + url0 + ", 1=" + url1 + ")");
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const Swept swept = sweep(spec, *target, store);
  EXPECT_EQ(swept.outcome.status, "done") << swept.console;
  const auto cells = store.cells(swept.outcome.experiment_id);
  ASSERT_EQ(cells.size(), 2u);
  std::map<std::string, double> hit_rate;
  for (const auto& cell : cells) {
    ASSERT_EQ(cell.status, "done") << cell.error;
    // The strategy was switched through the router's admin API, and nothing else was run.
    const auto commands = store.commands(cell.id);
    ASSERT_EQ(commands.size(), 1u);
    EXPECT_EQ(commands[0].argv.at(0), "POST");
    EXPECT_EQ(commands[0].argv.at(1), target->endpoints().base_url + "/admin/strategy");
    EXPECT_EQ(commands[0].argv.at(2), R"({"strategy":")" + cell.arm + R"("})");
    EXPECT_EQ(commands[0].exit_code, 0);

    // Which upstream served each request, by its index in target.upstreams.
    std::map<std::string, int> share;
    std::map<int, std::set<std::string>> replicas_of_conversation;
    const auto requests = store.requests(cell.id);
    for (const auto& r : requests) {
      EXPECT_TRUE(r.ok) << r.error;
      ++share[r.replica];
      replicas_of_conversation[r.conversation].insert(r.replica);
    }
    if (cell.arm == "round-robin") {
      EXPECT_EQ(share, (std::map<std::string, int>{{"0", 15}, {"1", 15}}));
    } else {
      EXPECT_EQ(share["0"] + share["1"], 30);
      for (const auto& [conversation, replicas] : replicas_of_conversation) {
        EXPECT_EQ(replicas.size(), 1u) << "conversation " << conversation;
      }
    }

    // Server figures come from each upstream's own /metrics.
    const auto samples = store.metric_samples(cell.id);
    std::set<std::string> sources;
    for (const auto& s : samples) sources.insert(s.source);
    EXPECT_EQ(sources, (std::set<std::string>{url0 + "/metrics", url1 + "/metrics"}));
    const auto metrics = figures::compute_cell_metrics(requests, samples);
    ASSERT_TRUE(metrics.kv_hit_rate_server.has_value());
    hit_rate[cell.arm] = *metrics.kv_hit_rate_server;
  }
  // A conversation kept on one replica finds its history cached there; alternating replicas
  // computes it again. Both cells started cold (the reset went through the router).
  EXPECT_GT(hit_rate.at("prefix-hash"), hit_rate.at("round-robin"));
  EXPECT_EQ(store.experiment(swept.outcome.experiment_id)->setup.target_kind(), "replicas");
}

// A cold cell on real upstreams starts llm-d's endpoint picker afresh too, as the llmd target
// restarts the EPP's pods: the upstreams' caches are reset and the router's picker is built
// again, so its prefix index (its own routing history) is empty. Its series are scraped from
// the router with the upstreams' /metrics.
TEST(ReplicasSweep, AColdCellResetsTheUpstreamsAndBuildsTheEndpointPickerAfresh) {
  sim::Fleet first(one_replica(11));
  sim::Fleet second(one_replica(12));
  first.start();
  second.start();
  const std::string text = R"(name: replicas-epp-cold
model: sim-model
epp:
  prefix:
    apiVersion: inference.networking.x-k8s.io/v1alpha1
    kind: EndpointPickerConfig
    plugins: [{type: prefix-cache-scorer}]
target:
  kind: replicas
  upstreams: [)" + first.replica_urls()[0] +
                           ", " + second.replica_urls()[0] + R"(]
factors:
  strategy: [prefix]
  concurrency: [1]
load: {num_requests: 4, max_tokens: 2, cache: cold}
)";
  const auto spec = parse_replicas_scenario(text);
  orchestrator::ReplicasTarget target(spec, silent_log());
  target.start();
  target.apply({{{"strategy", "prefix"}}, ""});
  const std::string router = target.endpoints().base_url;
  EXPECT_EQ(target.endpoints().metrics_urls.back(), router + "/metrics");
  const auto index_size = [&] {
    const auto metrics = driver::http_get(router + "/metrics", 10);
    const std::string name = "\ninference_extension_prefix_indexer_size ";
    const std::size_t at = metrics.body.find(name);
    EXPECT_NE(at, std::string::npos) << metrics.body;
    return at == std::string::npos ? -1 : std::stoi(metrics.body.substr(at + name.size()));
  };
  const std::string body =
      R"({"model":"sim-model","prompt":")" + std::string(400, 'x') + R"(","max_tokens":2})";
  const auto sent = driver::http_post_json(router + "/v1/completions", body, 10);
  ASSERT_EQ(sent.status, 200) << sent.error << sent.body;
  EXPECT_GT(index_size(), 0);
  const orchestrator::CommandLogs cold = target.make_cold();
  ASSERT_EQ(cold.size(), 1u);
  EXPECT_EQ(cold[0].argv.at(0), "POST");
  EXPECT_EQ(cold[0].argv.at(1), router + "/admin/strategy");
  EXPECT_EQ(cold[0].exit_code, 0);
  EXPECT_EQ(index_size(), 0);
  // Each upstream's cache was reset through the router: the same prompt again, wherever the
  // empty picker sends it, finds no cached token.
  const auto hits = [&] {
    double sum = 0;
    for (const sim::Fleet* fleet : {&first, &second}) {
      const auto metrics = driver::http_get(fleet->replica_urls()[0] + "/metrics", 10);
      sum += sum_metric(parse_prometheus_text(metrics.body), "vllm:prefix_cache_hits_total")
                 .value_or(-1);
    }
    return sum;
  };
  const double hits_before = hits();
  const auto again = driver::http_post_json(router + "/v1/completions", body, 10);
  ASSERT_EQ(again.status, 200) << again.error << again.body;
  EXPECT_EQ(hits(), hits_before);
}

// Plain vLLM answers /reset_prefix_cache with 404 unless VLLM_SERVER_DEV_MODE=1: a cold cell
// through `kvsweep proxy` must fail with the proxy's account of every upstream, not run warm.
TEST(ReplicasSweep, ColdCellThroughTheProxyFailsWhenAnUpstreamCannotReset) {
  sim::Fleet fleet(one_replica(11));
  fleet.start();
  kvsweep::testing::PlainVllmServer plain("sim-model");
  sim::ProxyOptions options;
  options.upstreams = {fleet.replica_urls()[0], plain.url()};
  options.port = 0;
  sim::Proxy proxy(options);
  proxy.start();
  const std::string text = R"(name: cold-through-proxy
target: {kind: endpoints, base_url: )" +
                           proxy.url() + R"(, readiness: {poll: 50ms}}
factors: {concurrency: [1]}
load: {num_requests: 4, max_tokens: 2, cache: cold}
)";
  const auto spec = parse_replicas_scenario(text);
  auto target = orchestrator::make_target(spec, orchestrator::expand_plan(spec), false);
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const Swept swept = sweep(spec, *target, store);
  EXPECT_EQ(swept.outcome.status, "failed");
  const auto cells = store.cells(swept.outcome.experiment_id);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].status, "failed");
  EXPECT_EQ(cells[0].error,
            "cold cache: POST " + proxy.url() +
                "/reset_prefix_cache: HTTP 502: reset_prefix_cache: 1 of 2 upstreams failed: "
                "upstream 0 (" +
                fleet.replica_urls()[0] + "): HTTP 200; upstream 1 (" + plain.url() +
                R"(): HTTP 404: {"detail":"Not Found"} (vLLM serves this route only with )"
                "VLLM_SERVER_DEV_MODE=1)");
  EXPECT_EQ(store.request_count(cells[0].id), 0);  // nothing ran warm
  EXPECT_NE(swept.console.find("failed: cold cache: POST "), std::string::npos) << swept.console;
}

// An upstream that dies mid-cell is taken out of routing; the cell's log and the console say so.
TEST(ReplicasSweep, AnUpstreamThatDiesMidCellIsTakenOutAndTheCellSaysSo) {
  sim::Fleet fleet(one_replica(11));
  fleet.start();
  kvsweep::testing::PlainVllmServer dying("sim-model", /*die_after_completions=*/5);
  const std::string text = R"(name: dying-upstream
target:
  kind: replicas
  upstreams: [)" + fleet.replica_urls()[0] +
                           ", " + dying.url() + R"(]
  health: {interval: 1h, failures: 3}
  readiness: {poll: 50ms}
  metrics: {interval: 0}
factors:
  strategy: [round-robin]
  concurrency: [1]
load:
  stream: false
  max_tokens: 2
  num_requests: 40
  cache: as-is
)";
  const auto spec = parse_replicas_scenario(text);
  auto target = orchestrator::make_target(spec, orchestrator::expand_plan(spec), false);
  testing::TempDir dir;
  auto store = store::Store::open(dir.file("kvsweep.db"));
  const Swept swept = sweep(spec, *target, store);
  const auto cells = store.cells(swept.outcome.experiment_id);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].status, "done") << cells[0].error;

  // The readiness probe went to upstream 0, so upstream 1 served measured requests 1, 3, 5, 7
  // and 9 and refused 11, 12 and 13 (round-robin's cursor moves on the second pick of a refused
  // request too), each then sent to upstream 0 (issue 27 item 7): every request succeeded, and
  // from the third refusal on every request went to upstream 0 directly.
  const auto requests = store.requests(cells[0].id);
  ASSERT_EQ(requests.size(), 40u);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_TRUE(requests[i].ok) << i << ": " << requests[i].error;
    EXPECT_EQ(requests[i].replica, i < 10 && i % 2 == 0 ? "1" : "0") << i;
  }
  const std::string event = "upstream 1 (" + dying.url() +
                            ") taken out of routing: 3 consecutive failures; last: connect: "
                            "Connection refused";
  std::string health;
  for (const auto& command : store.commands(cells[0].id)) {
    if (command.step == "health") health += command.out;
  }
  EXPECT_NE(health.find(" UTC " + event + "\n"), std::string::npos) << health;
  EXPECT_NE(swept.console.find("cell 1/1 round-robin c=1: "), std::string::npos) << swept.console;
  EXPECT_NE(swept.console.find(event), std::string::npos) << swept.console;
}

}  // namespace
}  // namespace kvsweep
