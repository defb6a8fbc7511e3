// The migration to schema 14: every experiment's setup rewritten in the shape this kvsweep
// writes (store/experiment_setup.h), row by row in C++ because the shapes differ by writer and
// by age ("strategies" for arms, a baseline inside the setup, `kvsweep load`'s own keys).
#pragma once

#include "store/sqlite_handles.h"

namespace kvsweep::store {

// Decodes and re-encodes every experiments.setup_json inside the caller's transaction; a row
// that is not a JSON object is left as it was (reports show it as unreadable).
void rewrite_setups(const SqliteDb& db);

}  // namespace kvsweep::store
