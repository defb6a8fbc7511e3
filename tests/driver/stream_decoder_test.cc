// Tests for driver/stream_decoder.cc: which events count as content, usage, [DONE], metrics.
#include "driver/stream_decoder.h"

#include <gtest/gtest.h>

#include <string>

namespace kvsweep::driver {
namespace {

std::string event(const std::string& json) { return "data: " + json + "\n\n"; }

const std::string kRole =
    event(R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})");
std::string content(const std::string& text) {
  return event(R"({"choices":[{"index":0,"delta":{"content":")" + text + R"("}}]})");
}
const std::string kUsage =
    event(R"({"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":3,"total_tokens":53,)"
          R"("prompt_tokens_details":{"cached_tokens":32}}})");
const std::string kDone = "data: [DONE]\n\n";

RequestRecord finished(const StreamDecoder& decoder, double sent_s) {
  RequestRecord record;
  record.sent_s = sent_s;
  decoder.finish(record);
  return record;
}

TEST(StreamDecoder, RoleChunkIsNotTheFirstToken) {
  StreamDecoder decoder;
  decoder.feed(kRole, 10.100);
  decoder.feed(content("Hel"), 10.500);
  decoder.feed(content("lo"), 10.520);
  decoder.feed(content("!"), 10.560);
  decoder.feed(kUsage, 10.570);
  decoder.feed(kDone, 10.570);
  const RequestRecord record = finished(decoder, 10.0);
  EXPECT_TRUE(record.ok) << record.error;
  EXPECT_EQ(record.error_kind, "");
  EXPECT_DOUBLE_EQ(record.first_token_s, 10.5);
  EXPECT_NEAR(record.ttft_ms, 500.0, 1e-6);
  EXPECT_NEAR(record.e2e_ms, 560.0, 1e-6);  // the usage chunk is not content either
  EXPECT_EQ(record.output_tokens, 3);
  EXPECT_FALSE(record.tokens_estimated);
  EXPECT_EQ(record.prompt_tokens, 50);
  EXPECT_EQ(record.cached_tokens, 32);
  EXPECT_NEAR(record.tpot_ms, 30.0, 1e-6);  // (560 - 500) / (3 - 1)
  ASSERT_EQ(record.itl_ms.size(), 2u);
  EXPECT_NEAR(record.itl_ms[0], 20.0, 1e-6);
  EXPECT_NEAR(record.itl_ms[1], 40.0, 1e-6);
}

TEST(StreamDecoder, UsageOnlyChunkIsNotContent) {
  StreamDecoder decoder;
  decoder.feed(kUsage + kDone, 1.0);
  EXPECT_EQ(decoder.content_events(), 0);
  const RequestRecord record = finished(decoder, 0.5);
  EXPECT_TRUE(record.ok);
  EXPECT_EQ(record.first_token_s, -1);
  EXPECT_EQ(record.output_tokens, 3);
  EXPECT_TRUE(record.itl_ms.empty());
}

TEST(StreamDecoder, MissingUsageCountsContentEventsAndMarksEstimated) {
  StreamDecoder decoder;
  decoder.feed(kRole + content("a") + content("b"), 2.0);
  decoder.feed(content("c") + kDone, 2.3);
  const RequestRecord record = finished(decoder, 1.0);
  EXPECT_TRUE(record.ok);
  EXPECT_EQ(record.output_tokens, 3);
  EXPECT_TRUE(record.tokens_estimated);
  EXPECT_EQ(record.prompt_tokens, -1);  // unknown, not 0 (docs/metrics.md)
  EXPECT_EQ(record.cached_tokens, -1);
  ASSERT_EQ(record.itl_ms.size(), 2u);
  EXPECT_DOUBLE_EQ(record.itl_ms[0], 0.0);  // same read, same timestamp
  EXPECT_NEAR(record.itl_ms[1], 300.0, 1e-6);
}

TEST(StreamDecoder, ContinuousUsageSplitsAGapPerToken) {
  // Cumulative completion_tokens 1, 3, 4: the second event carries two tokens.
  const auto chunk = [](const std::string& text, int completion) {
    return event(R"({"choices":[{"delta":{"content":")" + text +
                 R"("}}],"usage":{"prompt_tokens":9,"completion_tokens":)" +
                 std::to_string(completion) + "}}");
  };
  StreamDecoder decoder;
  decoder.feed(chunk("a", 1), 1.0);
  decoder.feed(chunk("bc", 3), 1.1);
  decoder.feed(chunk("d", 4), 1.15);
  decoder.feed(kDone, 1.15);
  const RequestRecord record = finished(decoder, 0.0);
  EXPECT_EQ(record.output_tokens, 4);
  ASSERT_EQ(record.itl_ms.size(), 3u);
  EXPECT_NEAR(record.itl_ms[0], 50.0, 1e-6);
  EXPECT_NEAR(record.itl_ms[1], 50.0, 1e-6);
  EXPECT_NEAR(record.itl_ms[2], 50.0, 1e-6);
  EXPECT_NEAR(record.tpot_ms, 50.0, 1e-6);  // (1150 - 1000) / 3
}

TEST(StreamDecoder, UsageOnlyOnTheLastContentChunkDoesNotSplitItsGap) {
  // Some servers put the final usage on the last content chunk instead of a usage-only one:
  // that chunk holds one token, not all 3 of the completion.
  StreamDecoder decoder;
  decoder.feed(content("a"), 1.0);
  decoder.feed(content("b"), 1.1);
  decoder.feed(event(R"({"choices":[{"delta":{"content":"c"}}],"usage":{"prompt_tokens":9,)"
                     R"("completion_tokens":3}})"),
               1.3);
  decoder.feed(kDone, 1.3);
  const RequestRecord record = finished(decoder, 0.0);
  EXPECT_EQ(record.output_tokens, 3);
  EXPECT_FALSE(record.tokens_estimated);
  ASSERT_EQ(record.itl_ms.size(), 2u);
  EXPECT_NEAR(record.itl_ms[0], 100.0, 1e-6);
  EXPECT_NEAR(record.itl_ms[1], 200.0, 1e-6);
}

TEST(StreamDecoder, ErrorEventInAnOkStreamFailsTheRequest) {
  // vLLM reports an engine failure mid-stream as a data event with an "error" object.
  StreamDecoder decoder;
  decoder.feed(kRole, 1.0);
  decoder.feed(content("a"), 1.1);
  decoder.feed(event(R"({"error":{"object":"error","message":"EngineCore died","code":500}})"),
               1.2);
  decoder.feed(kDone, 1.2);
  const RequestRecord record = finished(decoder, 0.0);
  EXPECT_FALSE(record.ok);
  EXPECT_EQ(record.error_kind, "server_error");
  EXPECT_EQ(record.error, "error event in stream: EngineCore died");
}

TEST(StreamDecoder, CompletionsTextCountsAsContent) {
  StreamDecoder decoder;
  decoder.feed(event(R"({"choices":[{"text":"hi"}]})") + kDone, 3.0);
  EXPECT_EQ(decoder.content_events(), 1);
}

TEST(StreamDecoder, MalformedJsonFailsTheRequest) {
  StreamDecoder decoder;
  decoder.feed(content("a") + "data: {\"choices\": [\n\n" + kDone, 1.0);
  EXPECT_TRUE(decoder.malformed());
  const RequestRecord record = finished(decoder, 0.0);
  EXPECT_FALSE(record.ok);
  EXPECT_EQ(record.error_kind, kErrorMalformed);
  EXPECT_NE(record.error.find("undecodable JSON"), std::string::npos) << record.error;
}

TEST(StreamDecoder, StreamWithoutDoneIsDropped) {
  StreamDecoder decoder;
  decoder.feed(kRole + content("a") + kUsage, 1.0);
  const RequestRecord record = finished(decoder, 0.0);
  EXPECT_FALSE(record.ok);
  EXPECT_EQ(record.error_kind, kErrorStreamDropped);
  EXPECT_EQ(record.output_tokens, 3);  // what arrived is still recorded
}

TEST(StreamDecoder, EventsAfterDoneAreIgnored) {
  StreamDecoder decoder;
  decoder.feed(content("a") + kDone + content("b") + "data: not json\n\n", 1.0);
  const RequestRecord record = finished(decoder, 0.0);
  EXPECT_TRUE(record.ok);
  EXPECT_EQ(decoder.content_events(), 1);
}

TEST(StreamDecoder, AnEventTooLargeFailsTheRequestWhateverCameBefore) {
  StreamDecoder decoder(2048);
  decoder.feed(kRole + content("Hi"), 0.1);
  EXPECT_FALSE(decoder.event_too_large());
  decoder.feed("data: " + std::string(4096, 'z'), 0.2);
  EXPECT_TRUE(decoder.event_too_large());
  decoder.feed("\n\n" + kUsage + kDone, 0.3);
  const RequestRecord record = finished(decoder, 0);
  EXPECT_FALSE(record.ok);
  EXPECT_EQ(record.error_kind, kErrorMalformed);
  EXPECT_EQ(record.error.rfind("event too large: an SSE event passed 2048 bytes", 0), 0u)
      << record.error;
  EXPECT_EQ(record.output_tokens, 1);  // what arrived before still counts
}

}  // namespace
}  // namespace kvsweep::driver
