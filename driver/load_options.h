// What a load run is asked to do (LoadOptions) and what it hands back (Progress, LoadResult).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/request_record.h"
#include "driver/sse_parser.h"

namespace kvsweep::driver {

// The largest sizes a run may ask for: far beyond any benchmark (vLLM's client runs thousands
// of prompts), small enough that a typo such as 2000000000 is a clear error rather than a
// bad_alloc (a bounded run reserves one record per request) or a run without end.
inline constexpr std::int64_t kMaxRequests = 1'000'000;  // num_requests, warmup_requests
inline constexpr int kMaxTokens = 1'000'000;             // max_tokens, any request's output
inline constexpr int kMaxConcurrency = 1'000'000;        // users, or requests in flight
// The smallest max_event_bytes: below a kilobyte an ordinary chat chunk would not fit.
inline constexpr std::size_t kMinEventBytes = 1024;
// The largest: an event is held whole in memory, once per request in flight.
inline constexpr std::size_t kMaxEventBytes = std::size_t{1} << 30;  // 1 GiB
// The most shards a run may be split into: far beyond the pods one cell needs.
inline constexpr int kMaxShards = 256;

struct LoadOptions {
  std::string base_url;  // "http://127.0.0.1:8000", with or without /v1 (common/base_url.h)
  std::string model;
  std::string api_key;  // sent as "Authorization: Bearer" when non-empty; never logged or stored
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (--header K=V)
  enum class Endpoint { kChat, kCompletions } endpoint = Endpoint::kChat;
  bool stream = true;      // false: TTFT = E2E = time the whole response arrived
  int max_tokens = 64;     // unless the conversation sets the turn's own
  int max_tokens_cap = 0;  // > 0: no request asks for more, whatever its turn sets (rehearsals)
  bool ignore_eos = true;
  std::optional<double> temperature;  // unset: 0
  std::string extra_body_json;        // a JSON object merge-patched into every request body

  // Shape. Closed loop: `concurrency` users walk conversations turn by turn, one request each
  // in flight. Open loop (request_rate > 0): requests start on a seeded schedule whatever the
  // server does; infinity sends all at once.
  int concurrency = 0;      // closed loop when > 0 and request_rate == 0
  double request_rate = 0;  // req/s; 0 = closed loop
  double burstiness = 1.0;  // gamma shape of the gaps; 1 = Poisson (vLLM semantics)
  int max_concurrency = 0;  // open loop: in-flight cap, 0 = none; a request due while the
                            // cap is full waits for a slot, and the wait is schedule lag
  std::uint64_t seed = 1;
  // Sharded load (docs/driver.md, "Shards"): this run is shard `index` of `count` and sends
  // its part of the run one process would make, so that the shards' requests together are
  // that run's, by index (RequestRecord::index is the one-process index). Open loop: every
  // shard draws the whole schedule from the seed and sends the arrivals whose conversation
  // is its own (conversation % count == index; a conversation's turns stay on one shard); with
  // sequential turns, the arrivals with index % count == index, to its own conversations.
  // Closed loop: users u % count == index, the conversations the one-process cursor hands out
  // k, k + count, ..., and requests index % count == index. A cap (max_concurrency) is split:
  // each shard holds ceil(cap / count). count 1 (the default) is the whole run.
  struct Shard {
    int index = 0;
    int count = 1;
  } shard;
  // Multi-turn order in open loop (request_source.h). kIndependent, the default: every turn's
  // prompt is prebuilt from the dataset and sent on the arrival schedule in turn-major order,
  // as seed 002's modified vLLM client did. kSequential: a conversation's next turn goes only
  // after its previous one finished and think_time_s passed, on the next free arrival, as a
  // chat user does. A closed loop is always sequential; trace replay sends first turns only.
  enum class Turns { kIndependent, kSequential } turns = Turns::kIndependent;
  double think_time_s = 0;  // sequential turns (and closed loop): pause before a next turn

  // Bounds on the measured phase: at least one, except for trace replay (the trace ends it).
  std::int64_t num_requests = 0;  // measured requests to send; 0 = no bound
  double duration_s = 0;          // from the first measured send (open loop: scheduled) time
  // Warm-up: a request is warm-up when any of these says so; warm-up is excluded from stats.
  std::int64_t warmup_requests = 0;  // the first N requests
  int warmup_conversations = 0;      // requests of the first N conversations started
  double warmup_s = 0;               // requests sent (open loop: scheduled) before this time

  // Transport. threads: event-loop threads carrying the transfers (the schedule is computed
  // once, on the run thread, whatever their number); 0 = one per core. A closed loop never
  // uses more threads than users.
  int threads = 0;
  // Every request opens its own connection and closes it after (libcurl FRESH_CONNECT +
  // FORBID_REUSE), so TTFT includes connection setup as in vLLM's older client, which opened
  // a session per request. Off: connections are kept alive and reused (docs/metrics.md).
  bool new_connection_per_request = false;
  double connect_timeout_s = 10;
  double first_byte_timeout_s = 0;  // from send to the status line; 0 = off
  double request_timeout_s = 300;   // whole request
  // The most one SSE event may hold (driver/sse_parser.h); a stream with a longer one (a line
  // without end) fails as malformed, "event too large", and is read no further.
  std::size_t max_event_bytes = kDefaultMaxSseEventBytes;
  bool keep_response_text = false;  // fill RequestRecord::response_text (benches, debugging)
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler: end the run cleanly
  // Called once, on the run thread, when the server first answers a measured request (its
  // status line arrived): the measured phase is under way. A caller scrapes server gauges
  // then, so even a phase shorter than its scrape interval is seen under load. Must not block.
  std::function<void()> on_measured_underway;
  // Open loop: end the run early, as done, once the measured requests' TTFT rises through the
  // run by the over-capacity rule (common/trend.h, TrendRule): an open loop above capacity
  // has no steady state, so running on only makes its mean TTFT a measure of its length.
  bool stop_when_over_capacity = false;
};

struct Progress {
  std::int64_t done = 0;   // measured requests finished (ok + failed)
  std::int64_t total = 0;  // num_requests, 0 when bounded by duration
  std::int64_t failed = 0;
  double elapsed_s = 0;
  double requests_per_s = 0;
  double p50_ttft_ms = 0;
  double p95_ttft_ms = 0;  // over the successful requests so far, as p50
};

// How the driver itself kept up (docs/metrics.md, "Achieved load"): figures of the driver's
// own threads, so an embedded fleet sharing the process is not counted.
struct DriverSelf {
  bool measured = false;  // false where no real driver ran (the virtual-time predictor)
  int threads = 0;        // transfer threads
  int cores = 0;          // cores the process may run on (its affinity)
  double wall_s = 0;      // the run, start to end
  double cpu_s = 0;       // the run thread's and the transfer threads' CPU, user + system
  // Send delay, per measured request sent: sent - ready, where ready is when a driver that
  // acts at once would have sent it: its arrival, or when the concurrency cap or a
  // sequential turn stopped holding it back (closed loop: when its user became ready). A
  // wait for a free slot is not delay; the run thread's and the transfer thread's lateness is.
  std::int64_t send_delay_count = 0;
  double send_delay_p50_ms = 0;
  double send_delay_p99_ms = 0;
  double send_delay_max_ms = 0;
  // Over measured requests: first to last ready time, and first to last send. A driver that
  // falls behind stretches the second: the send rate's shortfall is 1 - ready / sent span.
  double ready_span_s = 0;
  double sent_span_s = 0;
  // Where those spans start, on the records' clock (LoadResult::epoch_wall_s): shards' spans
  // are joined through them (driver/shard_merge.h).
  double first_ready_s = 0;
  double first_sent_s = 0;
  // LoadOptions::stop_when_over_capacity ended the run, and why.
  bool stopped_over_capacity = false;
  std::string stop_reason;
};

struct LoadResult {
  std::vector<RequestRecord> records;  // every request, warm-up included, ordered by index
  double epoch_wall_s = 0;             // unix time of the steady-clock epoch of the records
  std::int64_t epoch_steady_ns = 0;    // the same epoch on steady_clock (CLOCK_MONOTONIC), to
                                       // line records up with server-side monotonic stamps
  bool interrupted = false;            // stop flag was raised
  DriverSelf driver;                   // how the driver kept up
};

struct Workload;

// Open loop: a request rate, or a trace (Workload::arrival_s) with no closed-loop
// concurrency; a trace's own times then replace the rate, whose value is ignored.
bool is_open_loop(const LoadOptions& options, const Workload& workload);

// Event-loop threads the transport starts: LoadOptions::threads, or one per core when 0, but
// never more than the requests the run can have in flight (closed-loop users, max_concurrency).
int transfer_threads(const LoadOptions& options, const Workload& workload);

// Throws std::invalid_argument naming the first bad field ("LoadOptions.concurrency: ...").
void validate_load_options(const LoadOptions& options, const Workload& workload);

}  // namespace kvsweep::driver
