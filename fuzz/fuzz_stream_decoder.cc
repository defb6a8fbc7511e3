// libFuzzer target: one streamed chat/completions response body through the decoder, in two
// chunks, then finish() into a record: hostile JSON, usage, [DONE] and error events.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "driver/request_record.h"
#include "driver/stream_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  kvsweep::driver::StreamDecoder decoder;
  decoder.keep_text(size % 2 == 0);
  const std::size_t half = bytes.size() / 2;
  decoder.feed(bytes.substr(0, half), 0.001);
  decoder.feed(bytes.substr(half), 0.002);
  kvsweep::driver::RequestRecord record;
  record.sent_s = 0;
  record.http_status = 200;
  decoder.finish(record);
  return 0;
}
