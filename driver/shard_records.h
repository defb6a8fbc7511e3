// A shard's result as a file: every record, counted and checksummed, so that the coordinator
// knows it has all of them or names the shard whose records did not all arrive.
#pragma once

#include <cstdint>
#include <string>

#include "driver/load_options.h"

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

// JSON lines: a header (shard, counts, epochs, DriverSelf), one line per record, and a trailer
// with the record count and the FNV-1a 64 checksum of every byte before it.
std::string shard_records_text(const ShardResult& shard);

// Reads shard_records_text's text, checking that the trailer is there, its count and the
// header's match the records read, and the checksum holds. Throws std::runtime_error
// "<where>: ..." saying what is missing: a file cut short names how many records arrived.
ShardResult parse_shard_records(const std::string& text, const std::string& where);

// FNV-1a, 64 bits: a checksum against a copy cut or garbled on the way, not against malice.
std::uint64_t fnv1a64(const std::string& bytes);

}  // namespace kvsweep::driver
