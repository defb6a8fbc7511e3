// Prints load-driver figures against bench/sse_bench_server: 10k held streams, events/s, pacing.
//
// Usage: driver_bench --url http://127.0.0.1:PORT [--streams 10000] [--wrk-rps R]
// bench/driver_bench.sh starts the server, runs wrk and this program, and stops the server.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "common/stats.h"
#include "driver/load_run.h"

namespace {

using kvsweep::percentile;
using kvsweep::driver::LoadOptions;
using kvsweep::driver::LoadResult;
using kvsweep::driver::RequestRecord;
using kvsweep::driver::run_load;
using kvsweep::driver::Workload;

struct BenchArgs {
  std::string url;
  int streams = 10000;
  double wrk_rps = 0;
};

long status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

double cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

Workload one_prompt() {
  Workload workload;
  workload.conversations.resize(1);
  workload.conversations[0].system_prompt = "You are a benchmark.";
  workload.conversations[0].user = {"Say something long."};
  workload.conversations[0].assistant = {""};
  return workload;
}

LoadOptions base_options(const std::string& url) {
  LoadOptions options;
  options.base_url = url;
  options.model = "bench";
  options.max_tokens = 16;
  options.connect_timeout_s = 30;
  options.request_timeout_s = 120;
  return options;
}

struct Failures {
  int count = 0;
  std::string first;
};

Failures failures_of(const LoadResult& result) {
  Failures failures;
  for (const RequestRecord& record : result.records) {
    if (record.ok) continue;
    if (failures.count++ == 0) failures.first = record.error_kind + ": " + record.error;
  }
  return failures;
}

void print_failures(const Failures& failures) {
  if (failures.count == 0) {
    std::printf("  driver-side errors: 0\n");
  } else {
    std::printf("  errors: %d (first: %s)\n", failures.count, failures.first.c_str());
  }
}

// Client time of the first token minus the server's stamp of it, in microseconds.
std::vector<double> ttft_overheads_us(const LoadResult& result) {
  std::vector<double> overheads;
  for (const RequestRecord& record : result.records) {
    if (!record.ok || record.first_token_s < 0 || record.response_text.empty()) continue;
    const double server_ns = std::atof(record.response_text.c_str());
    const double client_ns =
        static_cast<double>(result.epoch_steady_ns) + record.first_token_s * 1e9;
    overheads.push_back((client_ns - server_ns) / 1000.0);
  }
  std::sort(overheads.begin(), overheads.end());
  return overheads;
}

int max_in_flight(const LoadResult& result) {
  std::vector<std::pair<double, int>> edges;
  for (const RequestRecord& record : result.records) {
    edges.emplace_back(record.sent_s, 1);
    const double end = record.last_token_s >= 0 ? record.last_token_s : record.sent_s;
    edges.emplace_back(end, -1);
  }
  std::sort(edges.begin(), edges.end());
  int now = 0, peak = 0;
  for (const auto& edge : edges) peak = std::max(peak, now += edge.second);
  return peak;
}

void bench_held_streams(const BenchArgs& args) {
  std::printf("Held streams: %d streaming requests, 20 tokens 500 ms apart (~10 s each), "
              "opened at 5,000/s\n", args.streams);
  const long rss_before = status_kib("VmHWM");
  LoadOptions options = base_options(args.url + "/s/20/500");
  options.request_rate = 5000;
  options.num_requests = args.streams;
  options.keep_response_text = true;  // carries the server's stamps; counted in the RSS
  const double cpu_before = cpu_seconds();
  const LoadResult result = run_load(options, one_prompt());
  const double cpu = cpu_seconds() - cpu_before;
  print_failures(failures_of(result));
  const auto overheads = ttft_overheads_us(result);
  std::printf("  peak in flight: %d   driver VmHWM: %.1f MiB (before the run: %.1f MiB)\n",
              max_in_flight(result), static_cast<double>(status_kib("VmHWM")) / 1024.0,
              static_cast<double>(rss_before) / 1024.0);
  std::printf("  TTFT client overhead (client first token - server send): p50 %.0f us, "
              "p99 %.0f us\n", percentile(overheads, 50), percentile(overheads, 99));
  std::printf("  driver CPU: %.2f s for %zu requests\n", cpu, result.records.size());
}

void bench_idle_overhead(const BenchArgs& args) {
  LoadOptions options = base_options(args.url + "/s/2/0");
  options.concurrency = 1;
  options.num_requests = 500;
  options.keep_response_text = true;
  const LoadResult result = run_load(options, one_prompt());
  const auto overheads = ttft_overheads_us(result);
  std::printf("TTFT client overhead, one stream at a time: p50 %.0f us, p99 %.0f us\n",
              percentile(overheads, 50), percentile(overheads, 99));
  print_failures(failures_of(result));
}

void bench_events_per_s(const BenchArgs& args) {
  constexpr int kTokens = 2000;
  LoadOptions options = base_options(args.url + "/s/2000/0");
  options.concurrency = 100;
  options.num_requests = 300;
  const double cpu_before = cpu_seconds();
  const LoadResult result = run_load(options, one_prompt());
  const double cpu = cpu_seconds() - cpu_before;
  double first = 1e300, last = 0;
  double events = 0;
  for (const RequestRecord& record : result.records) {
    first = std::min(first, record.sent_s);
    last = std::max(last, record.last_token_s);
    events += record.output_tokens;
  }
  std::printf("SSE events through the transport: %d streams x %d tokens back to back, "
              "100 at once\n", 300, kTokens);
  std::printf("  %.0f events in %.2f s wall: %.0f events/s (driver CPU %.2f s: %.0f events "
              "per CPU second)\n", events, last - first, events / (last - first), cpu,
              events / cpu);
  print_failures(failures_of(result));
}

void bench_pacing(const BenchArgs& args) {
  constexpr double kRate = 2000;
  constexpr int kRequests = 12000;
  LoadOptions options = base_options(args.url + "/fast");
  options.request_rate = kRate;
  options.num_requests = kRequests;
  const LoadResult result = run_load(options, one_prompt());
  std::vector<double> lags;
  double first_sent = 1e300, last_sent = 0, first_scheduled = 1e300, last_scheduled = 0;
  for (const RequestRecord& record : result.records) {
    lags.push_back(record.schedule_lag_ms);
    first_sent = std::min(first_sent, record.sent_s);
    last_sent = std::max(last_sent, record.sent_s);
    first_scheduled = std::min(first_scheduled, record.scheduled_s);
    last_scheduled = std::max(last_scheduled, record.scheduled_s);
  }
  std::sort(lags.begin(), lags.end());
  const double asked = (kRequests - 1) / (last_scheduled - first_scheduled);
  const double achieved = (kRequests - 1) / (last_sent - first_sent);
  std::printf("Pacing: open loop at %.0f req/s (Poisson), %d requests\n", kRate, kRequests);
  std::printf("  schedule lag p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", percentile(lags, 50),
              percentile(lags, 99), lags.empty() ? 0 : lags.back());
  std::printf("  send rate %.1f req/s vs scheduled %.1f req/s (%.2f %% off)\n", achieved, asked,
              100.0 * (achieved - asked) / asked);
  print_failures(failures_of(result));
}

void bench_raw_rate(const BenchArgs& args) {
  LoadOptions options = base_options(args.url + "/fast");
  options.concurrency = 64;
  options.duration_s = 5;
  const LoadResult result = run_load(options, one_prompt());
  double first = 1e300, last = 0;
  for (const RequestRecord& record : result.records) {
    first = std::min(first, record.sent_s);
    last = std::max(last, record.last_token_s);
  }
  const double rps = static_cast<double>(result.records.size()) / (last - first);
  std::printf("Raw request rate, closed loop of 64 on /fast (POST + SSE decode per request): "
              "%.0f req/s\n", rps);
  print_failures(failures_of(result));
  if (args.wrk_rps > 0) {
    std::printf("  wrk -t1 -c64 on the same server (GET, no parsing): %.0f req/s; "
                "driver/wrk = %.2f\n", args.wrk_rps, rps / args.wrk_rps);
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--url") args.url = argv[i + 1];
    if (flag == "--streams") args.streams = std::atoi(argv[i + 1]);
    if (flag == "--wrk-rps") args.wrk_rps = std::atof(argv[i + 1]);
  }
  if (args.url.empty()) {
    std::fprintf(stderr, "usage: driver_bench --url http://127.0.0.1:PORT [--streams N] "
                         "[--wrk-rps R]\n");
    return 2;
  }
  bench_held_streams(args);  // first, so VmHWM is this run's peak
  bench_idle_overhead(args);
  bench_events_per_s(args);
  bench_pacing(args);
  bench_raw_rate(args);
  return 0;
}
