// The shards' results joined into the one run they split: every record on one clock, ordered
// by run index, and the driver's figures of the whole and of each shard.
#pragma once

#include <vector>

#include "driver/shard_records.h"

namespace kvsweep::driver {

// One shard as the report shows it (docs/driver.md, "Shards").
struct ShardFigures {
  int index = 0;
  std::int64_t requests = 0;  // records, warm-up included
  std::int64_t measured = 0;
  std::int64_t failed = 0;     // measured requests that failed
  double start_skew_ms = 0;    // its records' epoch minus the start instant it was given
  double clock_offset_ms = 0;  // its clock minus the coordinator's, where measured (else 0)
  DriverSelf driver;           // its own figures: send delay, spans, CPU
};

struct MergedShards {
  LoadResult result;  // the whole run: records by run index, times on the earliest epoch
  std::vector<ShardFigures> shards;
};

// `shards` must be the count shards 0 .. count-1 of one run, each once (throws
// std::invalid_argument naming what is missing or doubled, and a run index two shards sent).
// Each shard's epoch is moved by its clock_offset_ms onto the coordinator's clock before the
// records are put on one clock. The whole run's DriverSelf: threads,
// cores and CPU summed, wall the longest, spans joined from the shards' first and last times,
// and send delay p50/p99/max the largest of the shards' (a bound: no quantile of the union
// exceeds the largest of the parts').
MergedShards merge_shards(std::vector<ShardResult> shards);

}  // namespace kvsweep::driver
