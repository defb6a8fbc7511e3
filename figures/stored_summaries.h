// Summaries for the cells a store already holds: those stored before schema 9, and any whose
// process was killed between recording the cell and summarizing it (the sweep writes both in
// one transaction, so only an older kvsweep leaves such cells).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "store/store.h"

namespace kvsweep::figures {

// Summarizes every done cell that has no summary of the current format and whose experiment
// still has its raw rows, each in its own transaction (an interrupted pass keeps what it did
// and the next one goes on). Tells `progress` the count first and then at most every 2
// seconds. Returns how many cells it summarized.
std::int64_t summarize_stored_cells(store::Store& store,
                                    const std::function<void(const std::string&)>& progress);

}  // namespace kvsweep::figures
