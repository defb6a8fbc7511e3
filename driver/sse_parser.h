// Server-sent-events framing: bytes in arbitrary chunks → whole events (no JSON, no timing).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvsweep::driver {

// The default bound on one event (its data lines and any unfinished line): a chat chunk is a
// few hundred bytes, a final chunk with usage or logprobs a few kilobytes; 16 MiB is thousands
// of times that, and what a server sending a line without end may make the driver hold.
inline constexpr std::size_t kDefaultMaxSseEventBytes = std::size_t{16} << 20;

struct SseEvent {
  std::string event;  // the `event:` field; "" when the server sent none
  std::string data;   // every `data:` line of the event, joined with '\n'
};

// Incremental parser following the WHATWG event-stream rules that matter to us: lines end in
// "\n", "\r\n" or "\r" (a "\r\n" split across two chunks is still one line end), lines starting
// with ':' are comments, one optional space after the field's colon is dropped, and a blank
// line dispatches the event when it carried any data. Lines have no fixed length limit
// (aiohttp's 64 KiB buffer is what broke vLLM's client at long context, load-drivers.md 4.1),
// only a bound on the whole event, max_event_bytes: past it the parser holds nothing more,
// stops, and too_large() says so, so a line without end costs at most that much memory.
class SseParser {
 public:
  explicit SseParser(std::size_t max_event_bytes = kDefaultMaxSseEventBytes)
      : max_event_bytes_(max_event_bytes) {}

  // Appends every event completed by `chunk` to `out`; bytes of an unfinished line are kept.
  // Does nothing once too_large().
  void feed(std::string_view chunk, std::vector<SseEvent>& out);

  // An event (its data so far plus its unfinished line) passed max_event_bytes.
  bool too_large() const { return too_large_; }
  std::size_t max_event_bytes() const { return max_event_bytes_; }
  // Bytes held for the event being assembled: never more than max_event_bytes.
  std::size_t buffered_bytes() const { return line_.size() + event_.data.size(); }

  // True when bytes of an event that never saw its blank line are pending.
  bool has_partial_event() const { return !line_.empty() || has_data_ || !event_.event.empty(); }

 private:
  void handle_line(std::string_view line, std::vector<SseEvent>& out);
  bool over_limit(std::size_t more) const { return buffered_bytes() + more > max_event_bytes_; }
  void give_up();  // too large: frees what was held

  std::size_t max_event_bytes_;
  bool too_large_ = false;

  std::string line_;       // the current line so far
  bool skip_lf_ = false;   // the previous chunk ended in '\r': a leading '\n' is its pair
  SseEvent event_;         // the event being assembled
  bool has_data_ = false;  // event_ has seen at least one data line (data may be "")
};

}  // namespace kvsweep::driver
