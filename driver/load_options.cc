// Checks LoadOptions against a Workload before a run, naming the field that is wrong.
#include "driver/load_options.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "common/error_kinds.h"
#include "driver/request_body.h"
#include "driver/workload.h"

namespace kvsweep::driver {
namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw UsageError("LoadOptions." + message);
}

std::string str(double value) {
  std::string text = std::to_string(value);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

// LoadOptions::shard: a shard that could never send, or a setting only the whole run can keep.
void validate_shard(const LoadOptions& options, const Workload& workload) {
  const LoadOptions::Shard& shard = options.shard;
  require(shard.count >= 1 && shard.count <= kMaxShards,
          "shard.count: expected 1 to " + str(kMaxShards) + ", got " + str(shard.count));
  require(shard.index >= 0 && shard.index < shard.count,
          "shard.index: expected 0 to " + str(shard.count - 1) + ", got " + str(shard.index));
  if (shard.count == 1) return;
  const bool open_loop = is_open_loop(options, workload);
  require(open_loop || options.concurrency >= shard.count,
          "shard.count: " + str(shard.count) + " shards but " + str(options.concurrency) +
              " users: a closed loop's users are split, so a shard would have none");
  require(!options.stop_when_over_capacity,
          "stop_when_over_capacity: a shard sees only its own requests' TTFT and would stop "
          "alone; not with shards");
  if (!open_loop) return;
  const bool sequential =
      workload.arrival_s.empty() && options.turns == LoadOptions::Turns::kSequential;
  require(!sequential || options.warmup_conversations == 0,
          "warmup_conversations: with sequential turns a shard cannot tell which of the other "
          "shards' arrivals are warm-up; use warmup_requests or warmup_s with shards");
  // A conversation's turns stay on one shard: each needs a conversation of its own.
  std::vector<bool> has_work(static_cast<std::size_t>(shard.count), false);
  for (std::size_t c = 0; c < workload.conversations.size(); ++c) {
    if (!workload.conversations[c].user.empty()) has_work[c % has_work.size()] = true;
  }
  const auto idle = std::find(has_work.begin(), has_work.end(), false);
  require(idle == has_work.end(),
          "shard.count: " + str(shard.count) + " shards, but shard " +
              str(static_cast<double>(idle - has_work.begin())) +
              " has no conversation with a turn (a conversation's turns stay on one shard, "
              "conversation % shards); use fewer shards or more conversations");
}

}  // namespace

bool is_open_loop(const LoadOptions& options, const Workload& workload) {
  return options.request_rate != 0 || (options.concurrency == 0 && !workload.arrival_s.empty());
}

int transfer_threads(const LoadOptions& options, const Workload& workload) {
  int threads = options.threads;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // A shard holds its part of the cap, or of the users (LoadOptions::shard).
  const int n = std::max(1, options.shard.count);
  const int in_flight_cap = is_open_loop(options, workload)
                                ? (options.max_concurrency + n - 1) / n
                                : (options.concurrency - options.shard.index + n - 1) / n;
  if (in_flight_cap > 0) threads = std::min(threads, in_flight_cap);
  return std::max(threads, 1);
}

void validate_load_options(const LoadOptions& options, const Workload& workload) {
  require(!options.base_url.empty(), "base_url: must not be empty");
  require(options.max_tokens >= 1 && options.max_tokens <= kMaxTokens,
          "max_tokens: expected 1 to " + str(kMaxTokens) + ", got " + str(options.max_tokens));
  require(options.concurrency <= kMaxConcurrency && options.max_concurrency <= kMaxConcurrency,
          "concurrency: at most " + str(kMaxConcurrency) + " users or requests in flight");
  const bool open_loop = is_open_loop(options, workload);
  require(!std::isnan(options.request_rate) && options.request_rate >= 0,
          "request_rate: expected >= 0 (inf allowed), got " + str(options.request_rate));
  require(open_loop || options.concurrency >= 1,
          "concurrency: expected >= 1 for a closed loop (or set request_rate > 0 for an open "
          "loop), got " +
              str(options.concurrency));
  require(!open_loop || options.concurrency == 0,
          "concurrency: a closed-loop setting, but request_rate makes this an open loop; cap "
          "in-flight requests with max_concurrency instead");
  require(options.max_concurrency >= 0,
          "max_concurrency: expected >= 0, got " + str(options.max_concurrency));
  require(std::isfinite(options.burstiness) && options.burstiness > 0,
          "burstiness: expected a finite number > 0, got " + str(options.burstiness));
  require(options.num_requests >= 0 && options.num_requests <= kMaxRequests,
          "num_requests: expected 0 to " + str(kMaxRequests) + ", got " +
              str(static_cast<double>(options.num_requests)));
  require(options.duration_s >= 0, "duration_s: expected >= 0, got " + str(options.duration_s));
  const bool trace = open_loop && !workload.arrival_s.empty();
  require(trace || options.num_requests > 0 || options.duration_s > 0,
          "num_requests/duration_s: set at least one bound (both are 0)");
  require(trace || !std::isinf(options.request_rate) || options.num_requests > 0,
          "num_requests: an infinite request_rate needs a request count (with a duration "
          "alone, every request is due at once, without end)");
  require(options.warmup_requests >= 0 && options.warmup_requests <= kMaxRequests,
          "warmup_requests: expected 0 to " + str(kMaxRequests));
  require(options.warmup_conversations >= 0, "warmup_conversations: expected >= 0");
  require(options.max_event_bytes >= kMinEventBytes && options.max_event_bytes <= kMaxEventBytes,
          "max_event_bytes: expected " + str(static_cast<double>(kMinEventBytes)) +
              " (one chat chunk) to " + str(static_cast<double>(kMaxEventBytes)) +
              " (1 GiB), got " + str(static_cast<double>(options.max_event_bytes)));
  require(options.warmup_s >= 0, "warmup_s: expected >= 0");
  require(std::isfinite(options.think_time_s) && options.think_time_s >= 0,
          "think_time_s: expected >= 0, got " + str(options.think_time_s));
  require(options.threads >= 0,
          "threads: expected >= 0 (0 = one per core), got " + str(options.threads));
  require(options.connect_timeout_s > 0, "connect_timeout_s: expected > 0");
  require(options.first_byte_timeout_s >= 0, "first_byte_timeout_s: expected >= 0 (0 = off)");
  require(options.request_timeout_s > 0, "request_timeout_s: expected > 0");
  const std::string extra = extra_body_problem(options.extra_body_json);
  require(extra.empty(), "extra_body_json: " + extra);
  for (const auto& [name, value] : options.headers) {
    require(!name.empty() && name.find_first_of(":\r\n") == std::string::npos &&
                value.find_first_of("\r\n") == std::string::npos,
            "headers: bad header \"" + name + "\"");
  }

  const auto& conversations = workload.conversations;
  const bool has_turn = std::any_of(conversations.begin(), conversations.end(),
                                    [](const Conversation& c) { return !c.user.empty(); });
  if (!has_turn) {
    throw UsageError("conversations: the dataset has no conversation with a turn");
  }
  validate_shard(options, workload);
  if (!workload.arrival_s.empty()) {
    if (workload.arrival_s.size() != conversations.size()) {
      throw UsageError("Workload.arrival_s: expected one time per conversation");
    }
    if (!std::is_sorted(workload.arrival_s.begin(), workload.arrival_s.end())) {
      throw UsageError("Workload.arrival_s: times must be ascending");
    }
  }
}

}  // namespace kvsweep::driver
