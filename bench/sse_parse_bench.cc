// Prints how many SSE events per second driver/sse_parser and driver/stream_decoder handle.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "driver/sse_parser.h"
#include "driver/stream_decoder.h"

namespace {

using kvsweep::driver::SseEvent;
using kvsweep::driver::SseParser;
using kvsweep::driver::StreamDecoder;

constexpr int kEvents = 200000;
constexpr int kRepeats = 5;

// A vLLM-shaped chat stream: role chunk, one content chunk per token, usage, [DONE].
std::string recorded_stream() {
  std::string stream =
      "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
      "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
  for (int i = 0; i < kEvents; ++i) {
    stream +=
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" token" +
        std::to_string(i % 100) + "\"},\"finish_reason\":null}]}\n\n";
  }
  stream += "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":" +
            std::to_string(kEvents) + "}}\n\ndata: [DONE]\n\n";
  return stream;
}

template <typename Feed>
double best_seconds(const std::string& stream, std::size_t chunk, Feed feed) {
  double best = 1e9;
  for (int r = 0; r < kRepeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    feed(stream, chunk);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s < best) best = s;
  }
  return best;
}

}  // namespace

int main() {
  const std::string stream = recorded_stream();
  std::printf("stream: %d events, %.1f MB\n", kEvents + 3, stream.size() / 1e6);
  std::printf("%-10s %18s %18s\n", "chunk", "parser events/s", "decoder events/s");
  for (std::size_t chunk : {std::size_t{64}, std::size_t{1500}, std::size_t{16384}}) {
    std::size_t parsed = 0;
    const double parse_s = best_seconds(stream, chunk, [&](const std::string& s, std::size_t n) {
      SseParser parser;
      std::vector<SseEvent> events;
      parsed = 0;
      for (std::size_t pos = 0; pos < s.size(); pos += n) {
        events.clear();
        parser.feed(std::string_view(s).substr(pos, n), events);
        parsed += events.size();
      }
    });
    int content = 0;
    const double decode_s = best_seconds(stream, chunk, [&](const std::string& s, std::size_t n) {
      StreamDecoder decoder;
      for (std::size_t pos = 0; pos < s.size(); pos += n) {
        decoder.feed(std::string_view(s).substr(pos, n), static_cast<double>(pos));
      }
      content = decoder.content_events();
    });
    if (static_cast<int>(parsed) != kEvents + 3 || content != kEvents) {
      std::fprintf(stderr, "wrong count: parsed %zu, content %d\n", parsed, content);
      return 1;
    }
    std::printf("%-10zu %18.3g %18.3g\n", chunk, parsed / parse_s, parsed / decode_s);
  }
  return 0;
}
