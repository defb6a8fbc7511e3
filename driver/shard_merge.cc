// Joins shards' results: one clock, one order, the whole run's driver figures.
#include "driver/shard_merge.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/error_kinds.h"

namespace kvsweep::driver {
namespace {

void shift(RequestRecord& r, double by_s) {
  const auto move = [by_s](double& t) {
    if (t >= 0) t += by_s;
  };
  move(r.scheduled_s);
  r.sent_s += by_s;
  move(r.first_token_s);
  move(r.last_token_s);
  move(r.ended_s);
}

}  // namespace

MergedShards merge_shards(std::vector<ShardResult> shards) {
  if (shards.empty()) throw CorruptData("merge_shards: no shard");
  const int count = shards.front().count;
  if (static_cast<int>(shards.size()) != count) {
    throw CorruptData("merge_shards: " + std::to_string(shards.size()) + " of " +
                      std::to_string(count) + " shards");
  }
  std::sort(shards.begin(), shards.end(),
            [](const ShardResult& a, const ShardResult& b) { return a.index < b.index; });
  for (int k = 0; k < count; ++k) {
    if (shards[static_cast<std::size_t>(k)].index != k ||
        shards[static_cast<std::size_t>(k)].count != count) {
      throw CorruptData("merge_shards: shard " + std::to_string(k) + " of " +
                        std::to_string(count) + " is missing or doubled");
    }
  }
  const auto offset_s = [&](int k) {
    return shards[static_cast<std::size_t>(k)].clock_offset_ms / 1000;
  };
  // Each shard's epoch on the coordinator's clock; the earliest is the whole run's.
  double epoch = std::numeric_limits<double>::infinity();
  for (const ShardResult& s : shards)
    epoch = std::min(epoch, s.result.epoch_wall_s - offset_s(s.index));

  MergedShards merged;
  LoadResult& whole = merged.result;
  whole.epoch_wall_s = epoch;
  DriverSelf& d = whole.driver;
  d.measured = true;
  double first_ready = std::numeric_limits<double>::infinity();
  double last_ready = -first_ready;
  double first_sent = first_ready;
  double last_sent = -first_ready;
  std::size_t total = 0;
  for (const ShardResult& s : shards) total += s.result.records.size();
  whole.records.reserve(total);
  for (ShardResult& s : shards) {
    const LoadResult& r = s.result;
    const double by_s = (r.epoch_wall_s - offset_s(s.index)) - epoch;
    if (by_s == 0) whole.epoch_steady_ns = r.epoch_steady_ns;
    ShardFigures figures;
    figures.index = s.index;
    figures.requests = static_cast<std::int64_t>(r.records.size());
    figures.start_skew_ms = (r.epoch_wall_s - s.start_at_wall_s) * 1000;
    figures.clock_offset_ms = offset_s(s.index) * 1000;
    figures.driver = r.driver;
    for (const RequestRecord& record : r.records) {
      if (record.warmup) continue;
      ++figures.measured;
      figures.failed += record.ok ? 0 : 1;
    }
    merged.shards.push_back(figures);

    whole.interrupted = whole.interrupted || r.interrupted;
    d.measured = d.measured && r.driver.measured;
    d.threads += r.driver.threads;
    d.cores += r.driver.cores;
    d.wall_s = std::max(d.wall_s, r.driver.wall_s + by_s);
    d.cpu_s += r.driver.cpu_s;
    d.send_delay_count += r.driver.send_delay_count;
    d.send_delay_p50_ms = std::max(d.send_delay_p50_ms, r.driver.send_delay_p50_ms);
    d.send_delay_p99_ms = std::max(d.send_delay_p99_ms, r.driver.send_delay_p99_ms);
    d.send_delay_max_ms = std::max(d.send_delay_max_ms, r.driver.send_delay_max_ms);
    if (r.driver.send_delay_count > 0) {
      first_ready = std::min(first_ready, r.driver.first_ready_s + by_s);
      last_ready = std::max(last_ready, r.driver.first_ready_s + r.driver.ready_span_s + by_s);
      first_sent = std::min(first_sent, r.driver.first_sent_s + by_s);
      last_sent = std::max(last_sent, r.driver.first_sent_s + r.driver.sent_span_s + by_s);
    }
    if (r.driver.stopped_over_capacity && !d.stopped_over_capacity) {
      d.stopped_over_capacity = true;
      d.stop_reason = "shard " + std::to_string(s.index) + ": " + r.driver.stop_reason;
    }
    for (RequestRecord& record : s.result.records) {
      shift(record, by_s);
      whole.records.push_back(std::move(record));
    }
  }
  if (d.send_delay_count > 0) {
    d.first_ready_s = first_ready;
    d.first_sent_s = first_sent;
    d.ready_span_s = last_ready - first_ready;
    d.sent_span_s = last_sent - first_sent;
  }
  std::sort(whole.records.begin(), whole.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < whole.records.size(); ++i) {
    if (whole.records[i].index == whole.records[i - 1].index) {
      throw CorruptData("merge_shards: run index " + std::to_string(whole.records[i].index) +
                        " was sent by two shards");
    }
  }
  return merged;
}

}  // namespace kvsweep::driver
