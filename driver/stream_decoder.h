// One streamed chat or completions response: SSE events → content timing, usage, [DONE],
// per-request metrics.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "driver/request_record.h"
#include "driver/sse_parser.h"

namespace kvsweep::driver {

// Fed the body bytes of one 2xx response as they arrive, each chunk with the steady-clock time
// it was read (events in the same read share it: that is all the resolution a socket gives).
// Not thread-safe; one decoder per request.
class StreamDecoder {
 public:
  explicit StreamDecoder(std::size_t max_event_bytes = kDefaultMaxSseEventBytes)
      : parser_(max_event_bytes) {}

  // Does nothing once event_too_large().
  void feed(std::string_view bytes, double now_s);

  // One event passed max_event_bytes: the caller stops reading (the request failed as
  // malformed, "event too large: ...").
  bool event_too_large() const { return parser_.too_large(); }

  // Keep the concatenated content text (for replies_from_server histories); off by default
  // because most runs never read it and 10,000 streams would hold it all.
  void keep_text(bool keep) { keep_text_ = keep; }
  const std::string& text() const { return text_; }

  bool saw_done() const { return done_; }
  bool malformed() const { return !malformed_.empty(); }
  int content_events() const { return static_cast<int>(content_.size()); }

  // Writes timings, tokens and outcome into `record` (whose sent_s must be set), per
  // docs/metrics.md. Only for a transfer that ended cleanly with a 2xx status: transport
  // failures are classified by the caller, except an event too large, which is always this
  // decoder's to report. Outcome: an event too large, then an error event, then malformed
  // JSON, then a missing [DONE].
  void finish(RequestRecord& record) const;

 private:
  struct ContentEvent {
    double time_s = 0;
    int tokens = 1;  // tokens this event carried (continuous usage stats), else 1
  };

  void handle_event(const SseEvent& event, double now_s);

  SseParser parser_;
  std::vector<SseEvent> scratch_;  // reused across feeds to avoid an allocation per chunk
  std::vector<ContentEvent> content_;
  bool done_ = false;
  std::string malformed_;       // first decoding problem, "" when none
  std::string server_error_;    // first error event the server sent, "" when none
  int prompt_tokens_ = -1;      // last usage.prompt_tokens seen; -1 when none
  int completion_tokens_ = -1;  // last usage.completion_tokens seen; -1 when none
  int cached_tokens_ = -1;
  bool keep_text_ = false;
  std::string text_;
};

}  // namespace kvsweep::driver
