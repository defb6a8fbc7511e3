// Server-sent-events framing: bytes in arbitrary chunks → whole events (no JSON, no timing).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::driver {

struct SseEvent {
  std::string event;  // the `event:` field; "" when the server sent none
  std::string data;   // every `data:` line of the event, joined with '\n'
};

// Incremental parser following the WHATWG event-stream rules that matter to us: lines end in
// "\n", "\r\n" or "\r" (a "\r\n" split across two chunks is still one line end), lines starting
// with ':' are comments, one optional space after the field's colon is dropped, and a blank
// line dispatches the event when it carried any data. Lines have no length limit: aiohttp's
// fixed buffer is what broke vLLM's client at long context (load-drivers.md 4.1).
class SseParser {
 public:
  // Appends every event completed by `chunk` to `out`; bytes of an unfinished line are kept.
  void feed(std::string_view chunk, std::vector<SseEvent>& out);

  // True when bytes of an event that never saw its blank line are pending.
  bool has_partial_event() const { return !line_.empty() || has_data_ || !event_.event.empty(); }

 private:
  void handle_line(std::string_view line, std::vector<SseEvent>& out);

  std::string line_;       // the current line so far
  bool skip_lf_ = false;   // the previous chunk ended in '\r': a leading '\n' is its pair
  SseEvent event_;         // the event being assembled
  bool has_data_ = false;  // event_ has seen at least one data line (data may be "")
};

}  // namespace kvsweep::driver
