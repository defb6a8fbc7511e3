// Prints what the simulated fleet does with 10,000 concurrent streams from the real load driver.
//
// Usage: fleet_scale_bench [--streams 10000] [--strategy kv-aware] [--max-tokens 100]
// Loopback only; stops by itself (every request ends or times out well within 2 minutes).
// The driver runs in a child process (this binary again, with --drive URL): one process holding
// both ends of 10,000 streams needs 20,000+ descriptors, above the usual hard limit of 20,000.
#include <httplib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/prometheus_text.h"
#include "driver/load_run.h"
#include "sim/fleet.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using kvsweep::PrometheusSample;
using kvsweep::driver::LoadOptions;
using kvsweep::driver::LoadResult;
using kvsweep::driver::RequestRecord;

struct BenchArgs {
  std::string drive_url;  // set: this process is the driver child
  int streams = 10000;
  std::string strategy = "kv-aware";  // the costliest decision: tokenize, hash, index, cost
  int max_tokens = 100;
};

// A private directory for the bench's profile, removed however the bench ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kvsweep-scale-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Room for 2,500 sequences per replica (4,096 seqs, 65,536 blocks of 16 tokens), and steps of
// 100 ms + 40 us per decode token (about 200 ms with 2,500 running): each stream stays open for
// tens of seconds, so all 10,000 are open at once, at ~5 tokens/s each.
void write_profile(const fs::path& dir) {
  std::ofstream out(dir / "scale-bench.yaml");
  out << "name: scale-bench\n"
         "source: \"bench/fleet_scale_bench.cc: slow steps, room for 10,000 sequences\"\n"
         "base_us: 100000\n"
         "per_prefill_token_us: 1\n"
         "per_decode_token_us: 40\n"
         "max_num_seqs: 4096\n"
         "max_num_batched_tokens: 16384\n"
         "num_gpu_blocks: 65536\n"
         "block_size: 16\n"
         "max_model_len: 4096\n"
         "default_max_tokens: 64\n";
}

// One descriptor per stream in each process (the driver's socket in the child, the router's in
// the fleet): the soft limit is raised to the hard one, as the driver does.
long raise_open_file_limit() {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  ::getrlimit(RLIMIT_NOFILE, &limit);
  return static_cast<long>(limit.rlim_cur);
}

long threads_of_this_process() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stol(line.substr(8));
  }
  return -1;
}

std::set<std::string> thread_ids() {
  std::set<std::string> ids;
  for (const auto& entry : fs::directory_iterator("/proc/self/task")) {
    ids.insert(entry.path().filename().string());
  }
  return ids;
}

// On-CPU time of one thread of this process (schedstat: nanoseconds, not clock ticks).
double thread_cpu_seconds(const std::string& tid) {
  std::ifstream schedstat("/proc/self/task/" + tid + "/schedstat");
  double ns = 0;
  schedstat >> ns;
  return ns * 1e-9;
}

std::vector<PrometheusSample> scrape(const std::string& url) {
  httplib::Client client(url);
  client.set_read_timeout(10);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) return {};
  return kvsweep::parse_prometheus_text(res->body);
}

double sum_over(const std::vector<std::string>& urls, const std::string& name) {
  double total = 0;
  for (const std::string& url : urls) total += kvsweep::sum_metric(scrape(url), name).value_or(0);
  return total;
}

// histogram_quantile as Prometheus computes it: linear within the bucket holding the rank.
double histogram_quantile(const std::vector<PrometheusSample>& samples, const std::string& name,
                          double q) {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
  for (const PrometheusSample& s : samples) {
    if (s.name != name + "_bucket") continue;
    const std::string& le = s.labels.at("le");
    buckets.emplace_back(le == "+Inf" ? 1e300 : std::stod(le), s.value);
  }
  std::sort(buckets.begin(), buckets.end());
  if (buckets.empty() || buckets.back().second == 0) return 0;
  const double rank = q * buckets.back().second;
  double lower = 0, below = 0;
  for (const auto& [le, count] : buckets) {
    if (count >= rank) {
      if (le >= 1e300) return lower;
      return lower + (le - lower) * (rank - below) / std::max(1.0, count - below);
    }
    lower = le;
    below = count;
  }
  return lower;
}

// What a second thread sees while the driver runs: router in-flight, tokens, threads.
struct Sample {
  double t_s = 0;
  double in_flight = 0;
  double generated_tokens = 0;
  long threads = 0;
};

class Monitor {
 public:
  Monitor(std::string router, std::vector<std::string> replicas)
      : router_(std::move(router)), replicas_(std::move(replicas)), thread_([this] { run(); }) {}
  ~Monitor() { finish(); }
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;
  // Stops sampling and hands over what was sampled (empty on a second call).
  std::vector<Sample> finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return std::move(samples_);
  }

 private:
  void run() {
    const auto start = Clock::now();
    while (!stop_) {
      Sample sample;
      sample.t_s = std::chrono::duration<double>(Clock::now() - start).count();
      sample.in_flight =
          kvsweep::sum_metric(scrape(router_), "kvsweep_router_in_flight").value_or(-1);
      sample.generated_tokens = sum_over(replicas_, "vllm:generation_tokens_total");
      sample.threads = threads_of_this_process();
      samples_.push_back(sample);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  std::string router_;
  std::vector<std::string> replicas_;
  std::atomic<bool> stop_{false};
  std::vector<Sample> samples_;
  std::thread thread_;  // last: started once the members it uses exist
};

kvsweep::driver::Workload distinct_prompts(int count) {
  kvsweep::driver::Workload workload;
  workload.conversations.resize(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto& conversation = workload.conversations[static_cast<std::size_t>(i)];
    conversation.system_prompt = "You are a patient storyteller.";
    conversation.user = {"Story " + std::to_string(i) + ": tell me a long tale about harbours."};
    conversation.assistant = {""};
  }
  return workload;
}

int peak_in_flight(const LoadResult& result) {
  std::vector<std::pair<double, int>> edges;
  for (const RequestRecord& record : result.records) {
    edges.emplace_back(record.sent_s, 1);
    edges.emplace_back(record.last_token_s >= 0 ? record.last_token_s : record.sent_s, -1);
  }
  std::sort(edges.begin(), edges.end());
  int now = 0, peak = 0;
  for (const auto& edge : edges) peak = std::max(peak, now += edge.second);
  return peak;
}

BenchArgs parse_args(int argc, char** argv) {
  BenchArgs args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--streams") args.streams = std::atoi(argv[i + 1]);
    if (flag == "--strategy") args.strategy = argv[i + 1];
    if (flag == "--max-tokens") args.max_tokens = std::atoi(argv[i + 1]);
    if (flag == "--drive") args.drive_url = argv[i + 1];
  }
  return args;
}

// The child: runs the load and prints "key value" lines for the parent.
int drive(const BenchArgs& args) {
  raise_open_file_limit();
  LoadOptions load;
  load.base_url = args.drive_url;
  load.model = "sim-model";
  load.max_tokens = args.max_tokens;
  load.concurrency = args.streams;
  load.num_requests = args.streams;
  load.connect_timeout_s = 30;
  load.request_timeout_s = 100;  // the bench's bound: a stuck stream fails, never hangs
  long peak_threads = threads_of_this_process();
  const LoadResult result = kvsweep::driver::run_load(
      load, distinct_prompts(1000), [&](const kvsweep::driver::Progress&) {
        peak_threads = std::max(peak_threads, threads_of_this_process());
      });
  std::map<std::string, int> errors;
  std::string first_error;
  double tokens = 0;
  for (const RequestRecord& record : result.records) {
    tokens += record.output_tokens;
    if (record.ok) continue;
    if (errors.empty()) first_error = record.error_kind + ": " + record.error;
    ++errors[record.error_kind];
  }
  int failed = 0;
  for (const auto& [kind, count] : errors) failed += count;
  std::printf(
      "requests %zu\npeak_in_flight %d\nerrors %d\nreceived_tokens %.0f\n"
      "driver_threads %ld\n",
      result.records.size(), peak_in_flight(result), failed, tokens, peak_threads);
  if (failed > 0) std::printf("first_error %s\n", first_error.c_str());
  return 0;
}

struct PipeCloser {
  void operator()(FILE* pipe) const { ::pclose(pipe); }
};

// Runs this binary as the driver child and collects its "key value" lines.
std::map<std::string, std::string> run_driver_child(const BenchArgs& args, const std::string& url) {
  const std::string command = "/proc/" + std::to_string(::getpid()) + "/exe --drive " + url +
                              " --streams " + std::to_string(args.streams) + " --max-tokens " +
                              std::to_string(args.max_tokens);
  std::unique_ptr<FILE, PipeCloser> pipe(::popen(command.c_str(), "r"));
  if (!pipe) throw std::runtime_error("cannot start the driver child");
  std::map<std::string, std::string> values;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe.get())) {
    std::string text(line);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const std::size_t space = text.find(' ');
    if (space != std::string::npos) values[text.substr(0, space)] = text.substr(space + 1);
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  const BenchArgs args = parse_args(argc, argv);
  if (!args.drive_url.empty()) return drive(args);
  raise_open_file_limit();
  TempDir dir;
  write_profile(dir.path());
  kvsweep::sim::FleetOptions options;
  options.replicas = 4;
  options.profile = "scale-bench";
  options.profile_dirs = {dir.path().string()};
  options.strategy = args.strategy;
  kvsweep::sim::Fleet fleet(options);
  const auto before_fleet = thread_ids();
  fleet.start();
  std::vector<std::string> fleet_threads;
  for (const std::string& tid : thread_ids()) {
    if (!before_fleet.count(tid)) fleet_threads.push_back(tid);
  }
  const std::vector<std::string> replicas = fleet.replica_urls();
  std::printf(
      "fleet: 4 replicas (scale-bench profile: 100 ms + 40 us/decode token per step), "
      "strategy %s, io threads %zu\n",
      args.strategy.c_str(), fleet_threads.size());
  std::printf(
      "driver (child process): closed loop of %d users, 1 streaming chat request each, "
      "%d tokens (ignore_eos)\n",
      args.streams, args.max_tokens);
  std::fflush(stdout);

  double fleet_cpu_before = 0;
  for (const std::string& tid : fleet_threads) fleet_cpu_before += thread_cpu_seconds(tid);
  const auto started = Clock::now();
  Monitor monitor(fleet.router_url(), replicas);
  auto driver = run_driver_child(args, fleet.router_url());
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // one last sample after it
  const std::vector<Sample> samples = monitor.finish();
  const double wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  double fleet_cpu = -fleet_cpu_before;
  for (const std::string& tid : fleet_threads) fleet_cpu += thread_cpu_seconds(tid);

  const auto router_samples = scrape(fleet.router_url());
  const double step_s = sum_over(replicas, "kvsweep_engine_step_seconds_total");
  const double steps = sum_over(replicas, "kvsweep_engine_steps_total");
  const double scheduler_cpu_s = sum_over(replicas, "kvsweep_engine_scheduler_cpu_seconds_total");
  const double generated = sum_over(replicas, "vllm:generation_tokens_total");
  fleet.stop();

  // Monitor figures: the peak, and the token rate while every stream was open.
  double peak_router = 0;
  long peak_threads = 0;
  double held_tokens = 0, held_s = 0;
  const Sample* previous = nullptr;
  for (const Sample& s : samples) {
    peak_router = std::max(peak_router, s.in_flight);
    peak_threads = std::max(peak_threads, s.threads);
    if (previous && previous->in_flight >= args.streams && s.in_flight >= args.streams) {
      held_tokens += s.generated_tokens - previous->generated_tokens;
      held_s += s.t_s - previous->t_s;
    }
    previous = &s;
  }
  const std::string errors = driver.count("errors") ? driver["errors"] : "no answer from driver";

  std::printf("\n%-44s %s\n", "what", "figure");
  std::printf("%-44s %.0f / %d (driver's records: %s)\n", "peak streams in flight at the router",
              peak_router, args.streams, driver["peak_in_flight"].c_str());
  std::printf(
      "%-44s %ld (fleet io threads %zu, main 1, this bench's monitor 1); driver "
      "process %s\n",
      "peak threads in the fleet's process", peak_threads, fleet_threads.size(),
      driver["driver_threads"].c_str());
  std::printf(
      "%-44s %s%s\n", "errors (driver records)", errors.c_str(),
      driver.count("first_error") ? (" (first: " + driver["first_error"] + ")").c_str() : "");
  std::printf(
      "%-44s p50 %.1f us, p99 %.1f us (%.0f decisions)\n", "router decision time (parse to pick)",
      1e6 * histogram_quantile(router_samples, "kvsweep_router_decision_seconds", 0.5),
      1e6 * histogram_quantile(router_samples, "kvsweep_router_decision_seconds", 0.99),
      kvsweep::sum_metric(router_samples, "kvsweep_router_decision_seconds_count").value_or(0));
  std::printf("%-44s %.0f tokens/s while all streams open (%.1f s); %.0f over the whole run\n",
              "tokens emitted by the fleet", held_s > 0 ? held_tokens / held_s : 0, held_s,
              generated / wall_s);
  std::printf("%-44s %.0f generated, %s received by the driver, %.1f s wall\n", "tokens", generated,
              driver["received_tokens"].c_str(), wall_s);
  std::printf("%-44s %.0f steps, %.1f s simulated (4 replicas)\n", "engine steps", steps, step_s);
  std::printf("%-44s %.3f %% (%.3f s CPU in plan + apply)\n", "scheduler CPU / simulated step time",
              100 * scheduler_cpu_s / step_s, scheduler_cpu_s);
  std::printf("%-44s %.1f %% (%.2f s CPU: HTTP, SSE, routing, scheduling)\n",
              "fleet io-thread CPU / simulated step time", 100 * fleet_cpu / step_s, fleet_cpu);
  return errors == "0" ? 0 : 1;
}
