// Tests for driver/sse_parser.cc: framing under any chunking, line ends, comments, data lines.
#include "driver/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvsweep::driver {
namespace {

// A stream as vLLM sends it (role chunk, content, usage, [DONE]) plus a keep-alive comment,
// a named event and a multi-line data field.
const std::string kRecordedStream =
    ": keep-alive\n\n"
    "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\n"
    "event: note\ndata: first line\ndata: second line\n\n"
    "data: {\"choices\":[],\"usage\":{\"completion_tokens\":1}}\n\n"
    "data: [DONE]\n\n";

std::vector<SseEvent> parse_in_pieces(const std::string& text,
                                      const std::vector<std::size_t>& cuts) {
  SseParser parser;
  std::vector<SseEvent> events;
  std::size_t begin = 0;
  for (std::size_t cut : cuts) {
    parser.feed(std::string_view(text).substr(begin, cut - begin), events);
    begin = cut;
  }
  parser.feed(std::string_view(text).substr(begin), events);
  return events;
}

void expect_recorded_events(const std::vector<SseEvent>& events, const std::string& context) {
  ASSERT_EQ(events.size(), 5u) << context;
  EXPECT_EQ(events[0].data, "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}")
      << context;
  EXPECT_EQ(events[1].data, "{\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}") << context;
  EXPECT_EQ(events[2].event, "note") << context;
  EXPECT_EQ(events[2].data, "first line\nsecond line") << context;
  EXPECT_EQ(events[3].data, "{\"choices\":[],\"usage\":{\"completion_tokens\":1}}") << context;
  EXPECT_EQ(events[4].data, "[DONE]") << context;
  EXPECT_EQ(events[4].event, "") << context;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

TEST(SseParser, WholeStreamInOneChunk) {
  expect_recorded_events(parse_in_pieces(kRecordedStream, {}), "one chunk");
}

TEST(SseParser, SameEventsWhenSplitAtEveryByteOffset) {
  for (std::size_t cut = 0; cut <= kRecordedStream.size(); ++cut) {
    expect_recorded_events(parse_in_pieces(kRecordedStream, {cut}),
                           "cut at " + std::to_string(cut));
  }
}

TEST(SseParser, SameEventsFedOneByteAtATime) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < kRecordedStream.size(); ++i) cuts.push_back(i);
  expect_recorded_events(parse_in_pieces(kRecordedStream, cuts), "byte by byte");
}

TEST(SseParser, CrLfLineEndsUnderEveryChunking) {
  const std::string crlf = replace_all(kRecordedStream, "\n", "\r\n");
  for (std::size_t cut = 0; cut <= crlf.size(); ++cut) {
    expect_recorded_events(parse_in_pieces(crlf, {cut}), "CRLF, cut at " + std::to_string(cut));
  }
}

TEST(SseParser, BareCrLineEndsUnderEveryChunking) {
  const std::string cr = replace_all(kRecordedStream, "\n", "\r");
  for (std::size_t cut = 0; cut <= cr.size(); ++cut) {
    expect_recorded_events(parse_in_pieces(cr, {cut}), "CR, cut at " + std::to_string(cut));
  }
}

TEST(SseParser, CommentsAreSkippedAndDoNotDispatch) {
  SseParser parser;
  std::vector<SseEvent> events;
  parser.feed(":ping\n\n: another\ndata: x\n: between\ndata: y\n\n", events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x\ny");
}

TEST(SseParser, OnlyOneLeadingSpaceIsDropped) {
  SseParser parser;
  std::vector<SseEvent> events;
  parser.feed("data:no-space\n\ndata:  two-spaces\n\ndata\n\n", events);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "no-space");
  EXPECT_EQ(events[1].data, " two-spaces");
  EXPECT_EQ(events[2].data, "");  // a field name alone is a data line with an empty value
}

TEST(SseParser, UnfinishedEventIsHeldUntilItsBlankLine) {
  SseParser parser;
  std::vector<SseEvent> events;
  parser.feed("data: partial", events);
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(parser.has_partial_event());
  parser.feed("\n", events);
  EXPECT_TRUE(events.empty());
  parser.feed("\n", events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "partial");
  EXPECT_FALSE(parser.has_partial_event());
}

TEST(SseParser, LongLinesHaveNoLimit) {
  const std::string payload(4 * 1024 * 1024, 'a');  // 4 MiB in one data line
  const std::string stream = "data: " + payload + "\n\n";
  std::vector<std::size_t> cuts;
  for (std::size_t cut = 1000; cut < stream.size(); cut += 65536) cuts.push_back(cut);
  const std::vector<SseEvent> events = parse_in_pieces(stream, cuts);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data.size(), payload.size());
  EXPECT_EQ(events[0].data, payload);
}

// Issue 15 item 6: a line with no end once grew to 2 GB in 10 s.
TEST(SseParser, ALineWithoutEndIsHeldOnlyUpToTheEventLimit) {
  SseParser parser(4096);
  std::vector<SseEvent> events;
  parser.feed("data: {\"ok\":1}\n\n", events);
  ASSERT_EQ(events.size(), 1u);
  parser.feed("data: ", events);
  const std::string chunk(1000, 'x');
  for (int i = 0; i < 10000 && !parser.too_large(); ++i) {
    parser.feed(chunk, events);
    EXPECT_LE(parser.buffered_bytes(), 4096u);
  }
  EXPECT_TRUE(parser.too_large());
  EXPECT_EQ(parser.buffered_bytes(), 0u);     // given up: nothing held
  parser.feed("\n\ndata: late\n\n", events);  // nothing more is parsed
  EXPECT_EQ(events.size(), 1u);
}

TEST(SseParser, ManyDataLinesCountTowardsTheEventLimit) {
  SseParser parser(4096);
  std::vector<SseEvent> events;
  const std::string line = "data: " + std::string(100, 'y') + "\n";
  for (int i = 0; i < 100 && !parser.too_large(); ++i) parser.feed(line, events);
  EXPECT_TRUE(parser.too_large());
  EXPECT_TRUE(events.empty());
  // Events under the limit, however many, pass.
  SseParser roomy(4096);
  for (int i = 0; i < 1000; ++i) roomy.feed(line + "\n", events);
  EXPECT_FALSE(roomy.too_large());
  EXPECT_EQ(events.size(), 1000u);
}

}  // namespace
}  // namespace kvsweep::driver
