// Prints router decision time per strategy (p50/p99) and how many open streams a fleet holds.
#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/prometheus_text.h"
#include "common/stats.h"
#include "sim/fleet.h"
#include "sim/router/epp_config.h"
#include "sim/router/epp_scheduler.h"
#include "sim/router/routing_strategy.h"
#include "sim/router/strategy_factory.h"

namespace {

using Clock = std::chrono::steady_clock;

// llm-d's estimated-prefix picker as scenarios/epp/estimated-prefix.yaml configures it: the
// prefix scorer (64-character blocks) at weight 3, the queue and KV-usage scorers at 1.
std::shared_ptr<const kvsweep::sim::EppConfig> estimated_prefix_config() {
  std::string error;
  auto config = kvsweep::sim::parse_epp_config("estimated-prefix.yaml", R"(
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: prefix-cache-scorer
  parameters: {hashBlockSize: 64, maxPrefixBlocksToMatch: 256, lruCapacityPerServer: 31250}
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: prefix-cache-scorer, weight: 3}
  - {pluginRef: queue-scorer, weight: 1}
  - {pluginRef: kv-cache-utilization-scorer, weight: 1}
  - {pluginRef: max-score-picker}
)",
                                               &error);
  if (!config) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::abort();
  }
  return config;
}

void print_times(const std::string& name, std::vector<double> ns) {
  const auto summary = kvsweep::summarize(std::move(ns));
  std::printf("  %-12s %7.0f ns %7.0f ns\n", name.c_str(), summary.median, summary.p99);
}

void bench_decisions() {
  constexpr int kReplicas = 8;
  constexpr int kPicks = 200000;
  std::vector<std::string> prompts;
  for (int i = 0; i < 1000; ++i) {
    prompts.push_back("conversation " + std::to_string(i) + ": " + std::string(300, 'x'));
  }
  std::mt19937_64 rng(1);
  std::printf("router decision time, %d replicas, %d picks (in process, no HTTP)\n", kReplicas,
              kPicks);
  std::printf("  %-12s %10s %10s\n", "strategy", "p50", "p99");
  kvsweep::sim::StrategyParams params;
  params.epp = estimated_prefix_config();
  for (const std::string& name : kvsweep::sim::strategy_names()) {
    auto strategy = kvsweep::sim::make_strategy(name, kReplicas, 1, params);
    std::vector<int> loads(kReplicas, 0);
    std::vector<kvsweep::sim::ServerLoad> server_loads(kReplicas);
    std::vector<double> ns;
    ns.reserve(kPicks);
    for (int i = 0; i < kPicks; ++i) {
      for (int& load : loads) load = static_cast<int>(rng() % 64);
      for (auto& load : server_loads) load = {static_cast<int>(rng() % 8), (rng() % 100) / 100.0};
      const std::string& prompt = prompts[i % prompts.size()];
      kvsweep::sim::RouteQuery query{prompt, loads};
      query.prompt_text = prompt;
      query.server_loads = server_loads;
      const auto start = Clock::now();
      const int chosen = strategy->pick(query);
      ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
      if (chosen < 0) std::abort();  // keeps the call from being optimised away
    }
    print_times(name, std::move(ns));
  }
  // What the HTTP router did besides each epp pick until stop 37 to publish the EPP's metrics:
  // hash the prompt again and keep a mirror of the picker's index (match, then add). The
  // figures now come from the pick itself (RoutingStrategy::last_prefix_lookups).
  kvsweep::sim::EppPrefixIndex mirror(kReplicas, 31250);
  std::vector<double> ns;
  ns.reserve(kPicks);
  for (int i = 0; i < kPicks; ++i) {
    const std::string& prompt = prompts[i % prompts.size()];
    const auto start = Clock::now();
    const auto hashes = kvsweep::sim::epp_prefix_hashes({}, prompt, 64, 256);
    const int chosen = static_cast<int>(rng() % kReplicas);
    const int matched = mirror.match(hashes)[static_cast<std::size_t>(chosen)];
    mirror.add(hashes, chosen);
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
    if (matched < 0) std::abort();
  }
  print_times("(epp mirror)", std::move(ns));
}

long threads_of_this_process() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stol(line.substr(8));
  }
  return -1;
}

double router_in_flight(const std::string& url) {
  httplib::Client client(url);
  auto res = client.Get("/metrics");
  if (!res) return -1;
  return kvsweep::sum_metric(kvsweep::parse_prometheus_text(res->body), "kvsweep_router_in_flight")
      .value_or(-1);
}

void bench_open_streams() {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  // Each stream costs two descriptors here (client and server side) in one process.
  const int streams = static_cast<int>(std::min<rlim_t>(2000, (limit.rlim_cur - 64) / 2));
  kvsweep::sim::FleetOptions options;
  options.replicas = 4;
  kvsweep::sim::Fleet fleet(options);
  fleet.start();
  const std::string url = fleet.router_url();
  const auto port = static_cast<unsigned short>(std::stoi(url.substr(url.rfind(':') + 1)));

  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::socket> sockets;
  const std::string body =
      R"({"model":"sim-model","messages":[{"role":"user","content":"hold this stream open"}],)"
      R"("max_tokens":4000,"ignore_eos":true,"stream":true})";
  // ignore_eos: the replicas stop at a sampled end of text otherwise, long before 4,000 tokens.
  // A loopback Host: the router refuses other sites' requests (sim/http/site_guard.h).
  const std::string request =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  for (int i = 0; i < streams; ++i) {
    sockets.emplace_back(io);
    sockets.back().connect({boost::asio::ip::make_address("127.0.0.1"), port});
    boost::asio::write(sockets.back(), boost::asio::buffer(request));
  }
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  double held = 0;
  while (Clock::now() < deadline && (held = router_in_flight(url)) < streams) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::printf(
      "open streams: %d requested, %.0f held in flight by the router, %ld threads in the "
      "process (fleet io_threads = 1)\n",
      streams, held, threads_of_this_process());
  const auto closed_at = Clock::now();
  sockets.clear();  // every client leaves mid-stream
  while (Clock::now() < deadline + std::chrono::seconds(30) && router_in_flight(url) > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::printf("all clients closed: in flight %.0f after %.0f ms\n", router_in_flight(url),
              std::chrono::duration<double, std::milli>(Clock::now() - closed_at).count());
  fleet.stop();
}

}  // namespace

int main() {
  bench_decisions();
  bench_open_streams();
}
