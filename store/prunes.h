// Retention: which experiments `kvsweep prune` removes the raw rows of (the removal itself is
// Store::prune_raw_rows, prunes.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvsweep::store {

// `kvsweep prune --older-than`: ids of the experiments of the store at `path` whose started_at
// is an instant before `unix_s`, compared as numbers in SQL (julianday), never as text: as
// text, a cutoff in year 931 ("931-...") sorted after every run of 2026. A started_at SQLite
// cannot read as a time is before nothing. Oldest first; reads only, on a connection of its own.
std::vector<std::int64_t> experiments_started_before(const std::string& path, double unix_s);

}  // namespace kvsweep::store
