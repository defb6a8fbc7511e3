// Fault injection for one replica: injected errors, added latency, death, streams cut mid-way.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace kvsweep::sim {

// What a replica does wrong, for tests of clients and runners. All zero/false: healthy.
// Draws come from the replica's own RNG, seeded from the fleet seed and its index.
struct FaultOptions {
  double error_rate = 0;        // fraction of completions answered error_status (OpenAI shape)
  int error_status = 503;       // 500 or 503 (vLLM under overload / a crashed worker)
  double added_latency_ms = 0;  // every completion waits this long before reaching the engine
  double cut_stream_rate = 0;   // fraction of streamed completions dropped mid-way
  int cut_after_tokens = 2;     // a cut stream loses its connection after this many tokens
  bool down = false;            // dead: its port refuses connections, the router answers 502
};

// Applies the fields present in `patch` (same names as FaultOptions) to *faults; other fields
// keep their values. Returns a message naming the bad field, or nullopt.
std::optional<std::string> apply_fault_patch(const nlohmann::json& patch, FaultOptions* faults);

nlohmann::json fault_json(const FaultOptions& faults);

}  // namespace kvsweep::sim
