// A shard's result as a file: every record, counted and checksummed, so that the coordinator
// knows it has all of them or names the shard whose records did not all arrive; and checked
// against the plan, so that a shard (or whatever wrote its file) cannot add requests to
// another shard's part, forge a count, or slip in a time no run could measure.
#pragma once

#include <cstdint>
#include <string>

#include "driver/load_options.h"
#include "driver/shard_plan.h"

namespace kvsweep::driver {

struct ShardResult {
  int index = 0;  // which shard (LoadOptions::shard)
  int count = 1;
  double start_at_wall_s = 0;  // the instant every shard was told to start (unix seconds)
  LoadResult result;           // records carry their one-process run index
  // Its wall clock minus the coordinator's, in ms: measured by the coordinator (a pod on
  // another machine), not read from the file; 0 for local shards, which share one clock.
  double clock_offset_ms = 0;
};

// What shard `shard` of a plan can have sent: what its records file is checked against.
struct ShardRecordBounds {
  int shard = 0;
  int count = 1;
  // Its part of the schedule: records whose conversation % count == shard (open loop with
  // independent turns, trace replay), else whose run index % count == shard (closed loop,
  // sequential turns; their conversations are the shard's own too).
  bool by_conversation = false;
  std::int64_t max_records = 0;  // the most records it can send (the plan's count, or a bound)
  std::int64_t max_index = 0;    // every run index is below this
  int users = 0;                 // closed loop: worker ids are below this; 0: open loop
  std::vector<int> turns;        // turns of each conversation of the workload
  double max_time_s = 0;         // every time, in seconds from its epoch, is at most this
  std::uint64_t max_record_bytes = 0;  // one record's line at most (its tokens' ITLs, text)
  std::uint64_t max_bytes = 0;         // the whole file at most: read no more than this
};

// A run whose length the plan does not fix (a closed loop with a duration) still has at most
// this many records per shard: the coordinator holds them all in memory.
inline constexpr std::int64_t kMaxUnplannedShardRecords = 10'000'000;
// No run lasts longer than this beyond its warm-up and duration (30 days): a time past it
// was not measured.
inline constexpr double kMaxShardRunSpanS = 30 * 86400.0;

ShardRecordBounds shard_record_bounds(const ShardPlan& plan, int shard);

// JSON lines: a header (shard, counts, epochs, DriverSelf), one line per record, and a trailer
// with the record count and the FNV-1a 64 checksum of every byte before it.
std::string shard_records_text(const ShardResult& shard);

// Reads shard_records_text's text, checking that the trailer is there, its count and the
// header's match the records read, the checksum holds, the header's count is within the
// bounds and the text's size, and every record is the shard's own (index and conversation in
// its part, no index twice, worker, turn and status in range) with every time and duration
// finite and in range. Throws std::runtime_error "<where>: line N (record K): <field>: ..."
// saying what is wrong: a file cut short names how many records arrived.
ShardResult parse_shard_records(const std::string& text, const std::string& where,
                                const ShardRecordBounds& bounds);

// FNV-1a, 64 bits: a checksum against a copy cut or garbled on the way, not against malice.
std::uint64_t fnv1a64(const std::string& bytes);

}  // namespace kvsweep::driver
