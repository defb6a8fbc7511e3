// libFuzzer target: SSE framing over bytes cut into chunks at fuzzer-chosen offsets. Checks
// the parser's promise that chunk boundaries do not change the events.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "driver/sse_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The first byte picks the chunk length, the rest is the stream.
  const std::size_t chunk = 1 + data[0] % 17;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  kvsweep::driver::SseParser whole;
  std::vector<kvsweep::driver::SseEvent> expected;
  whole.feed(bytes, expected);
  kvsweep::driver::SseParser pieces;
  std::vector<kvsweep::driver::SseEvent> got;
  for (std::size_t at = 0; at < bytes.size(); at += chunk)
    pieces.feed(bytes.substr(at, chunk), got);
  if (got.size() != expected.size()) std::abort();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i].event != expected[i].event || got[i].data != expected[i].data) std::abort();
  }
  return 0;
}
