// Server-sent-events framing: bytes in arbitrary chunks → whole events.
#include "driver/sse_parser.h"

namespace kvsweep::driver {

void SseParser::give_up() {
  too_large_ = true;
  line_ = std::string();
  event_ = SseEvent{};
  has_data_ = false;
}

void SseParser::feed(std::string_view chunk, std::vector<SseEvent>& out) {
  if (too_large_) return;
  std::size_t pos = 0;
  if (skip_lf_ && !chunk.empty()) {
    skip_lf_ = false;
    if (chunk.front() == '\n') pos = 1;
  }
  while (pos < chunk.size()) {
    const std::size_t end = chunk.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) {
      if (over_limit(chunk.size() - pos)) return give_up();
      line_.append(chunk.substr(pos));
      return;
    }
    // Parse straight from the chunk when no earlier bytes of this line are buffered, so the
    // common case (whole lines in one read) copies nothing.
    if (over_limit(end - pos)) return give_up();
    if (line_.empty()) {
      handle_line(chunk.substr(pos, end - pos), out);
    } else {
      line_.append(chunk.substr(pos, end - pos));
      handle_line(line_, out);
      line_.clear();
    }
    pos = end + 1;
    if (chunk[end] == '\r') {
      if (pos == chunk.size()) {
        skip_lf_ = true;
      } else if (chunk[pos] == '\n') {
        ++pos;
      }
    }
  }
}

void SseParser::handle_line(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {
    if (has_data_) out.push_back(std::move(event_));
    event_ = SseEvent{};
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;  // comment, e.g. a keep-alive ping
  std::string_view field = line;
  std::string_view value;
  if (const std::size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) event_.data.push_back('\n');
    event_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.event.assign(value);
  }
  // `id:` and `retry:` only matter to reconnecting browsers; a benchmark never reconnects.
}

}  // namespace kvsweep::driver
