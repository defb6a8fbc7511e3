// Tests for driver/request_body.cc: the chat request JSON.
#include "driver/request_body.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kvsweep::driver {
namespace {

TEST(ChatRequestBody, StreamsWithUsageAtTemperatureZero) {
  ChatRequest request{"m1", {{"system", "s"}, {"user", "q \"quoted\""}}, 17, false};
  const nlohmann::json body = nlohmann::json::parse(chat_request_body(request));
  EXPECT_EQ(body["model"], "m1");
  EXPECT_EQ(body["max_tokens"], 17);
  EXPECT_EQ(body["ignore_eos"], false);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["temperature"], 0);
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][1]["content"], "q \"quoted\"");
}

}  // namespace
}  // namespace kvsweep::driver
