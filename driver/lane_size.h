// How many transfers a libcurl lane (transfer_lane.h) carries: the one figure the descriptor
// budget needs of the lanes, in a header of its own so the budget does not include the lanes
// (which include the stream transfers, which check the budget).
#pragma once

namespace kvsweep::driver {

// Transfers one lane carries at most, and connections its cache keeps.
//
// Why lanes: libcurl 7.88 keeps a multi handle's connections to one host in one list and
// walks it for every new transfer (is one idle and reusable?) and whenever a finished
// transfer's connection goes back to a full cache (which idle one is oldest?). With 10,000
// streams open on one multi handle, that walk made a request cost 7.5 times what it costs with
// 10 open (callgrind/perf, docs/performance.md). A lane holds at most this many, so every walk
// is bounded whatever the number of open streams; a run uses as many lanes as it needs.
inline constexpr int kLaneTransfers = 64;

}  // namespace kvsweep::driver
