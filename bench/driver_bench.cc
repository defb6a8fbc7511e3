// Prints load-driver figures against bench/sse_bench_server: ramp, flat cost, pacing, raw rate.
//
// Usage: driver_bench --url http://127.0.0.1:PORT [--streams 10000] [--only SECTION]
// bench/driver_bench.sh starts the server and runs this program; wrk (Debian's package) is
// run from here, as an argv, for the raw-rate ratio. Sections: ramp, flat, idle, events, raw.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/stats.h"
#include "driver/arrival_schedule.h"
#include "driver/load_run.h"

extern char** environ;

namespace {

using kvsweep::percentile;
using kvsweep::driver::Conversation;
using kvsweep::driver::gamma_arrival_times;
using kvsweep::driver::LoadOptions;
using kvsweep::driver::LoadResult;
using kvsweep::driver::RequestRecord;
using kvsweep::driver::run_load;
using kvsweep::driver::Workload;
using Clock = std::chrono::steady_clock;

struct BenchArgs {
  std::string url;
  int streams = 10000;
  int threads = 0;  // LoadOptions::threads (0: one per core)
  std::string only;
};

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

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

// Process CPU seconds sampled every 10 ms on the steady clock, so a phase inside one run can
// be charged its own CPU.
class CpuSampler {
 public:
  CpuSampler()
      : thread_([this] {
          while (!stop_) {
            {
              const std::lock_guard<std::mutex> lock(mutex_);
              samples_.emplace_back(Clock::now(), cpu_seconds());
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }) {}
  ~CpuSampler() {
    stop_ = true;
    thread_.join();
  }
  // CPU seconds used between two steady-clock instants (nearest samples).
  double between(Clock::time_point from, Clock::time_point to) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto at = [&](Clock::time_point t) {
      for (const auto& [when, cpu] : samples_) {
        if (when >= t) return cpu;
      }
      return samples_.empty() ? 0.0 : samples_.back().second;
    };
    return at(to) - at(from);
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::pair<Clock::time_point, double>> samples_;
  std::thread thread_;
};

Clock::time_point at(const LoadResult& result, double seconds) {
  return Clock::time_point(std::chrono::nanoseconds(result.epoch_steady_ns)) +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Conversation prompt(const std::string& text) {
  Conversation conversation;
  conversation.system_prompt = "You are a benchmark.";
  conversation.user = {text};
  conversation.assistant = {""};
  return conversation;
}

Workload one_prompt() {
  Workload workload;
  workload.conversations.push_back(prompt("Say something long."));
  return workload;
}

// `path` picks the server's behaviour (sse_bench_server.cc).
LoadOptions base_options(const BenchArgs& args, const std::string& path) {
  LoadOptions options;
  options.threads = args.threads;
  options.base_url = args.url + path;
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

// Each token's client arrival minus the server's stamp of it, in ms: first tokens, and every
// token that arrived before `until_s`. The server sends one token per event carrying its
// CLOCK_MONOTONIC stamp as text; arrivals are first_token_s plus the ITL gaps.
struct Overheads {
  std::vector<double> first_ms;
  std::vector<double> every_ms;
};

Overheads token_overheads(const LoadResult& result, double until_s) {
  Overheads overheads;
  for (const RequestRecord& record : result.records) {
    if (!record.ok || record.first_token_s < 0 || record.response_text.empty()) continue;
    std::istringstream stamps(record.response_text);
    double arrival_s = record.first_token_s;
    double server_ns = 0;
    for (std::size_t k = 0; stamps >> server_ns; ++k) {
      if (k > 0) {
        if (k - 1 >= record.itl_ms.size()) break;
        arrival_s += record.itl_ms[k - 1] / 1000.0;
      }
      const double client_ns = static_cast<double>(result.epoch_steady_ns) + arrival_s * 1e9;
      const double overhead_ms = (client_ns - server_ns) / 1e6;
      if (k == 0) overheads.first_ms.push_back(overhead_ms);
      if (arrival_s <= until_s) overheads.every_ms.push_back(overhead_ms);
    }
  }
  std::sort(overheads.first_ms.begin(), overheads.first_ms.end());
  std::sort(overheads.every_ms.begin(), overheads.every_ms.end());
  return overheads;
}

int max_in_flight(const LoadResult& result) {
  std::vector<std::pair<double, int>> edges;
  for (const RequestRecord& record : result.records) {
    edges.emplace_back(record.sent_s, 1);
    edges.emplace_back(record.ended_s >= 0 ? record.ended_s : record.sent_s, -1);
  }
  std::sort(edges.begin(), edges.end());
  int now = 0, peak = 0;
  for (const auto& edge : edges) peak = std::max(peak, now += edge.second);
  return peak;
}

void bench_ramp(const BenchArgs& args) {
  std::printf(
      "[ramp] %d streams opened at 5,000/s, each 20 tokens 500 ms apart (~10 s); "
      "load average %s\n",
      args.streams, load_average().c_str());
  const long rss_before = status_kib("VmHWM");
  LoadOptions options = base_options(args, "/s/20/500");
  options.request_rate = 5000;
  options.num_requests = args.streams;
  options.keep_response_text = true;  // carries the server's stamps; counted in the RSS
  const double cpu_before = cpu_seconds();
  const LoadResult result = run_load(options, one_prompt());
  const double cpu = cpu_seconds() - cpu_before;
  print_failures(failures_of(result));
  const double ramp_end_s = static_cast<double>(args.streams) / 5000.0;
  const Overheads overheads = token_overheads(result, ramp_end_s);
  std::printf("  peak in flight: %d   driver VmHWM: %.1f MiB (before the run: %.1f MiB)\n",
              max_in_flight(result), static_cast<double>(status_kib("VmHWM")) / 1024.0,
              static_cast<double>(rss_before) / 1024.0);
  std::printf(
      "  first-token overhead (client - server stamp), all %zu streams: p50 %.2f ms, "
      "p99 %.2f ms, max %.2f ms (target p99 <= 10 ms)\n",
      overheads.first_ms.size(), percentile(overheads.first_ms, 50),
      percentile(overheads.first_ms, 99),
      overheads.first_ms.empty() ? 0 : overheads.first_ms.back());
  std::printf(
      "  every token of established streams during the ramp (first %.1f s, %zu tokens): "
      "p50 %.2f ms, p99 %.2f ms\n",
      ramp_end_s, overheads.every_ms.size(), percentile(overheads.every_ms, 50),
      percentile(overheads.every_ms, 99));
  std::printf("  driver CPU: %.2f s for %zu requests\n", cpu, result.records.size());
}

// `holds` streams opened at 5,000/s that stay open (one token, then silence) until the end,
// then `quick` one-token requests at `rate` req/s (Poisson, seeded) while they are held.
struct Mixed {
  Workload workload;
  double quick_start_s = 0;
  double quick_end_s = 0;
};

Mixed mixed_workload(int holds, int quick, double rate) {
  constexpr double kOpenRate = 5000;
  constexpr double kSettleS = 1.0;
  Mixed mixed;
  mixed.quick_start_s = static_cast<double>(holds) / kOpenRate + kSettleS;
  const std::vector<double> times = gamma_arrival_times(rate, 1, quick, 7);
  mixed.quick_end_s = mixed.quick_start_s + times.back();
  const double hold_until_s = mixed.quick_end_s + 1.0;
  for (int i = 0; i < holds; ++i) {
    const double t = static_cast<double>(i) / kOpenRate;
    const int hold_ms = static_cast<int>((hold_until_s - t) * 1000);
    mixed.workload.conversations.push_back(prompt("@s/2/" + std::to_string(hold_ms)));
    mixed.workload.arrival_s.push_back(t);
  }
  for (int i = 0; i < quick; ++i) {
    mixed.workload.conversations.push_back(prompt("@fast"));
    mixed.workload.arrival_s.push_back(mixed.quick_start_s + times[static_cast<std::size_t>(i)]);
  }
  return mixed;
}

struct QuickPhase {
  double cpu_us_per_request = 0;
  double scheduled_rate = 0;
  double achieved_rate = 0;
  std::vector<double> lag_ms;  // sorted
  int peak = 0;
  Failures failures;
};

QuickPhase run_mixed(const BenchArgs& args, int holds, int quick, double rate) {
  const Mixed mixed = mixed_workload(holds, quick, rate);
  LoadOptions options = base_options(args, "/mix");
  options.request_timeout_s = mixed.quick_end_s + 30;
  // A cap far above what is held, so the descriptor check sizes the run by it and not by
  // every arrival of the trace within one (long) request timeout.
  options.max_concurrency = holds + 2000;
  CpuSampler sampler;
  const LoadResult result = run_load(options, mixed.workload);
  QuickPhase phase;
  phase.failures = failures_of(result);
  phase.peak = max_in_flight(result);
  // Charge the quick phase its CPU, leaving out its first and last half second.
  const double from_s = mixed.quick_start_s + 0.5;
  const double to_s = mixed.quick_end_s - 0.5;
  int in_window = 0;
  double first_sent = 1e300, last_sent = 0, first_scheduled = 1e300, last_scheduled = 0;
  for (const RequestRecord& record : result.records) {
    if (record.conversation < holds) continue;
    phase.lag_ms.push_back(record.schedule_lag_ms);
    first_sent = std::min(first_sent, record.sent_s);
    last_sent = std::max(last_sent, record.sent_s);
    first_scheduled = std::min(first_scheduled, record.scheduled_s);
    last_scheduled = std::max(last_scheduled, record.scheduled_s);
    if (record.scheduled_s >= from_s && record.scheduled_s < to_s) ++in_window;
  }
  std::sort(phase.lag_ms.begin(), phase.lag_ms.end());
  const double cpu = sampler.between(at(result, from_s), at(result, to_s));
  phase.cpu_us_per_request = in_window > 0 ? cpu / in_window * 1e6 : 0;
  phase.scheduled_rate = (quick - 1) / (last_scheduled - first_scheduled);
  phase.achieved_rate = (quick - 1) / (last_sent - first_sent);
  return phase;
}

void bench_flat(const BenchArgs& args) {
  constexpr double kRate = 2000;
  constexpr int kQuick = 12000;
  std::printf(
      "[flat] %d one-token requests at %.0f req/s (Poisson) while N streams are held "
      "open; load average %s\n",
      kQuick, kRate, load_average().c_str());
  const QuickPhase few = run_mixed(args, 10, kQuick, kRate);
  std::printf("  10 held: CPU %.1f us per request; peak in flight %d\n", few.cpu_us_per_request,
              few.peak);
  print_failures(few.failures);
  std::printf("  load average %s\n", load_average().c_str());
  const QuickPhase many = run_mixed(args, args.streams, kQuick, kRate);
  std::printf("  %d held: CPU %.1f us per request; peak in flight %d\n", args.streams,
              many.cpu_us_per_request, many.peak);
  print_failures(many.failures);
  std::printf("  CPU per request, %d held / 10 held: %.2f (target <= 1.5)\n", args.streams,
              many.cpu_us_per_request / few.cpu_us_per_request);
  std::printf(
      "[pacing] the same %.0f req/s with %d streams held: send rate %.1f vs scheduled "
      "%.1f req/s (%.3f %% off, target 1 %%); schedule lag p50 %.3f ms, p99 %.3f ms "
      "(target <= 5 ms), max %.3f ms\n",
      kRate, args.streams, many.achieved_rate, many.scheduled_rate,
      100.0 * (many.achieved_rate - many.scheduled_rate) / many.scheduled_rate,
      percentile(many.lag_ms, 50), percentile(many.lag_ms, 99),
      many.lag_ms.empty() ? 0 : many.lag_ms.back());
  std::printf("  (10 held: lag p99 %.3f ms, %.3f %% off)\n", percentile(few.lag_ms, 99),
              100.0 * (few.achieved_rate - few.scheduled_rate) / few.scheduled_rate);
}

void bench_idle_overhead(const BenchArgs& args) {
  LoadOptions options = base_options(args, "/s/2/0");
  options.concurrency = 1;
  options.num_requests = 500;
  options.keep_response_text = true;
  const LoadResult result = run_load(options, one_prompt());
  const Overheads overheads = token_overheads(result, 0);
  std::printf("[idle] first-token overhead, one stream at a time: p50 %.0f us, p99 %.0f us\n",
              percentile(overheads.first_ms, 50) * 1000, percentile(overheads.first_ms, 99) * 1000);
  print_failures(failures_of(result));
}

void bench_events_per_s(const BenchArgs& args) {
  constexpr int kTokens = 2000;
  LoadOptions options = base_options(args, "/s/2000/0");
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
  std::printf(
      "[events] SSE events through the transport: %d streams x %d tokens back to back, "
      "100 at once\n",
      300, kTokens);
  std::printf(
      "  %.0f events in %.2f s wall: %.0f events/s (driver CPU %.2f s: %.0f events "
      "per CPU second)\n",
      events, last - first, events / (last - first), cpu, events / cpu);
  print_failures(failures_of(result));
}

// Runs wrk (argv, no shell) and returns its Requests/sec, or 0 when it cannot run.
double wrk_requests_per_s(const std::string& url, int seconds) {
  const std::string duration = std::to_string(seconds) + "s";
  std::vector<std::string> args = {"wrk", "-t2", "-c64", "-d" + duration, url};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (::pipe(out) != 0) return 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "wrk", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; spawned == 0 && (n = ::read(out[0], buffer, sizeof buffer)) > 0;) {
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (spawned != 0) return 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::size_t at = text.find("Requests/sec:");
  return at == std::string::npos ? 0 : std::atof(text.c_str() + at + 13);
}

double driver_raw_rate(const BenchArgs& args, Failures* failures) {
  LoadOptions options = base_options(args, "/fast");
  options.concurrency = 64;
  options.duration_s = 5;
  const LoadResult result = run_load(options, one_prompt());
  double first = 1e300, last = 0;
  for (const RequestRecord& record : result.records) {
    first = std::min(first, record.sent_s);
    last = std::max(last, record.ended_s);
  }
  *failures = failures_of(result);
  return static_cast<double>(result.records.size()) / (last - first);
}

void bench_raw_rate(const BenchArgs& args) {
  std::printf(
      "[raw] closed loop of 64 on /fast (POST, SSE decode, a record per request) vs "
      "wrk -t2 -c64 (GET, no parsing), alternated; load average %s\n",
      load_average().c_str());
  const std::string wrk_url = args.url + "/fast/v1/chat/completions";
  Failures failures;
  const double wrk_before = wrk_requests_per_s(wrk_url, 5);
  const double driver = driver_raw_rate(args, &failures);
  const double wrk_after = wrk_requests_per_s(wrk_url, 5);
  std::printf("  driver %.0f req/s; wrk %.0f before, %.0f after\n", driver, wrk_before, wrk_after);
  print_failures(failures);
  const double wrk = (wrk_before + wrk_after) / 2;
  if (wrk > 0) {
    std::printf("  driver / wrk = %.2f (target >= 0.5)\n", driver / wrk);
  } else {
    std::printf("  wrk did not run (install Debian's wrk): no ratio\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  BenchArgs args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--url") args.url = argv[i + 1];
    if (flag == "--streams") args.streams = std::atoi(argv[i + 1]);
    if (flag == "--only") args.only = argv[i + 1];
    if (flag == "--threads") args.threads = std::atoi(argv[i + 1]);
  }
  if (args.url.empty()) {
    std::fprintf(stderr,
                 "usage: driver_bench --url http://127.0.0.1:PORT [--streams N] "
                 "[--only ramp|flat|idle|events|raw]\n");
    return 2;
  }
  std::printf("driver_bench: %u cores, load average %s\n", std::thread::hardware_concurrency(),
              load_average().c_str());
  const auto wanted = [&](const char* section) {
    return args.only.empty() || args.only == section;
  };
  if (wanted("ramp")) bench_ramp(args);  // first, so VmHWM is this run's peak
  if (wanted("flat")) bench_flat(args);
  if (wanted("idle")) bench_idle_overhead(args);
  if (wanted("events")) bench_events_per_s(args);
  if (wanted("raw")) bench_raw_rate(args);
  return 0;
}
