// One request as the load driver saw it: timestamps, tokens, outcome. Definitions: docs/metrics.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvsweep::driver {

// Kinds of per-request failure, counted as wrk counts its errors. "" means success.
inline constexpr const char* kErrorConnect = "connect";  // refused, DNS, reset before reply
// The client ran out of a resource before the request reached the network: socket() failed
// with EMFILE/ENFILE (descriptor limit). Never the server's fault, so never "connect".
inline constexpr const char* kErrorClientResources = "client_resources";
inline constexpr const char* kErrorHttpStatus = "http_status";    // 4xx/5xx other than 429
inline constexpr const char* kErrorRateLimited = "rate_limited";  // 429: the server shed load
inline constexpr const char* kErrorTimeout = "timeout";  // connect/first byte/total: `error` says

inline constexpr const char* kErrorStreamDropped = "stream_dropped";  // cut before [DONE]
inline constexpr const char* kErrorMalformed = "malformed";           // bad SSE or JSON
inline constexpr const char* kErrorServer = "server_error";  // an error event in a 200 stream
inline constexpr const char* kErrorCancelled = "cancelled";  // run stopped (Ctrl-C)

struct RequestRecord {
  std::int64_t index = 0;  // order in which the request was sent, from 0
  int worker = 0;          // closed loop: the virtual user that sent it; open loop: 0
  int conversation = 0;    // dataset conversation index
  int turn = 0;            // 0-based turn within the conversation
  // The dataset turn's fingerprint (driver::turn_fingerprint): proves a replay sent the same text.
  std::uint64_t prompt_hash = 0;
  bool warmup = false;  // excluded from every statistic

  bool ok = false;
  std::string error_kind;  // one of kError*, "" when ok
  std::string error;       // human-readable reason ("HTTP 503: overloaded")
  int http_status = 0;     // 0 when no status line arrived

  // Seconds on the steady clock since the run's epoch (LoadResult::epoch_wall_s).
  double scheduled_s = -1;     // open loop only; -1 in closed loop
  double sent_s = 0;           // handed to the transport
  double schedule_lag_ms = 0;  // sent - scheduled (open loop; >= 0); 0 in closed loop
  double first_token_s = -1;   // first content-bearing event; -1 if none
  double last_token_s = -1;    // last content-bearing event; -1 if none
  // When the driver saw the request end, however it ended: its last byte, an error, a
  // timeout or the run's cancellation. -1 only while it runs. A failure without tokens still
  // occupied the run until then, so the cell's window reaches it (docs/metrics.md).
  double ended_s = -1;

  double ttft_ms = 0;          // first_token - sent
  double e2e_ms = 0;           // last_token - sent
  double tpot_ms = 0;          // (e2e - ttft) / (output_tokens - 1); 0 when output_tokens <= 1
  std::vector<double> itl_ms;  // gaps between content-bearing events, split per token

  int prompt_tokens = -1;         // usage.prompt_tokens; -1 when the server sent none (unknown)
  int output_tokens = 0;          // usage.completion_tokens, else content events counted
  int cached_tokens = -1;         // usage.prompt_tokens_details.cached_tokens; -1 when absent
  bool tokens_estimated = false;  // true when output_tokens was counted, not reported

  std::string response_text;  // generated text; only with LoadOptions::keep_response_text
  std::string replica;        // response header x-kvsweep-replica when present
};

}  // namespace kvsweep::driver
