// How a migration that rewrites rows tells a person waiting on a large store that it moves.
#pragma once

#include <functional>
#include <string>

namespace kvsweep::store {

// Called with one line per step ("<path>: migrating from schema version 6 to 7", "... 200000
// of at most 1900000 rows"); never for a new file, which is created rather than migrated.
using MigrationProgress = std::function<void(const std::string& line)>;

// Writes "kvsweep: <line>" to stderr: what Store::open does unless told otherwise, so every
// writing command shows a long migration without each having to ask.
void print_migration_progress(const std::string& line);

}  // namespace kvsweep::store
