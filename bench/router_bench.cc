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
#include "sim/router/routing_strategy.h"

namespace {

using Clock = std::chrono::steady_clock;

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
  for (const std::string& name : kvsweep::sim::strategy_names()) {
    auto strategy = kvsweep::sim::make_strategy(name, kReplicas, 1);
    std::vector<int> loads(kReplicas, 0);
    std::vector<double> ns;
    ns.reserve(kPicks);
    for (int i = 0; i < kPicks; ++i) {
      for (int& load : loads) load = static_cast<int>(rng() % 64);
      const std::string& prompt = prompts[i % prompts.size()];
      const auto start = Clock::now();
      const int chosen = strategy->pick({prompt, loads});
      ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
      if (chosen < 0) std::abort();  // keeps the call from being optimised away
    }
    const auto summary = kvsweep::summarize(std::move(ns));
    std::printf("  %-12s %7.0f ns %7.0f ns\n", name.c_str(), summary.median, summary.p99);
  }
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
      R"({"messages":[{"role":"user","content":"hold this stream open"}],"max_tokens":4000,)"
      R"("stream":true})";
  const std::string request =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
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
