// Tests for closed-loop runs of driver/load_run.cc (N users walking multi-turn conversations,
// as every sweep cell without a request rate runs): whole runs against a scripted chat server
// on 127.0.0.1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "driver/load_run.h"
#include "tests/driver/test_server.h"

namespace kvsweep::driver {
namespace {

using test_support::LoopbackServer;
using test_support::StreamStep;

struct Received {
  nlohmann::json body;
  std::string authorization;
  std::string accept;
  int remote_port = 0;  // the client's side of the connection: equal ports = one connection
};

// A /v1/chat/completions server whose n-th request (from 0) is answered by script(n, ...).
class ChatServer {
 public:
  using Script = std::function<void(int n, httplib::Response&, const std::atomic<bool>& closing)>;

  explicit ChatServer(Script script)
      : script_(std::move(script)),
        server_([this](httplib::Server& server, const std::atomic<bool>& closing) {
          server.Post("/v1/chat/completions", [this, &closing](const httplib::Request& request,
                                                               httplib::Response& response) {
            int n = 0;
            {
              std::lock_guard<std::mutex> lock(mutex_);
              n = static_cast<int>(received_.size());
              received_.push_back({nlohmann::json::parse(request.body, nullptr, false),
                                   request.get_header_value("Authorization"),
                                   request.get_header_value("Accept"), request.remote_port});
            }
            script_(n, response, closing);
          });
        }) {}

  std::string base_url() const { return server_.base_url(); }
  std::vector<Received> received() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }

 private:
  Script script_;
  mutable std::mutex mutex_;
  std::vector<Received> received_;
  LoopbackServer server_;  // last: stopped before the members its handler uses go away
};

// Three content events after a role chunk, with usage: 3 tokens, 21 prompt, 16 cached.
void scripted_stream(httplib::Response& response, const std::atomic<bool>& closing,
                     int first_delay_ms) {
  response.set_header("x-kvsweep-replica", "replica-7");
  test_support::stream_steps(response,
                             {{0, test_support::sse_role()},
                              {first_delay_ms, test_support::sse_content("A")},
                              {30, test_support::sse_content("B")},
                              {30, test_support::sse_content("C")},
                              {0, test_support::sse_usage(21, 3, 16)},
                              {0, test_support::kSseDone}},
                             closing);
}

void quick_stream(httplib::Response& response, const std::atomic<bool>& closing) {
  test_support::stream_steps(response,
                             {{0, test_support::sse_role() + test_support::sse_content("x") +
                                      test_support::sse_usage(5, 1, 0) + test_support::kSseDone}},
                             closing);
}

std::vector<Conversation> small_dataset(int conversations, int turns) {
  std::vector<Conversation> dataset;
  for (int c = 0; c < conversations; ++c) {
    Conversation conversation;
    conversation.system_prompt = "system prompt";
    for (int t = 0; t < turns; ++t) {
      conversation.user.push_back("c" + std::to_string(c) + " user " + std::to_string(t));
      conversation.assistant.push_back("c" + std::to_string(c) + " reply " + std::to_string(t));
    }
    dataset.push_back(std::move(conversation));
  }
  return dataset;
}

// A port with nothing listening: bind an ephemeral port, then close it.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// run_load over `conversations` alone: a closed loop when options.concurrency > 0.
LoadResult run_closed_loop(const LoadOptions& options,
                           const std::vector<Conversation>& conversations,
                           const std::function<void(const Progress&)>& on_progress = {}) {
  Workload workload;
  workload.conversations = conversations;
  return run_load(options, workload, on_progress);
}

LoadOptions options_for(const std::string& base_url) {
  LoadOptions options;
  options.concurrency = 1;  // one user unless a test says otherwise
  options.base_url = base_url;
  options.model = "test-model";
  options.max_tokens = 3;
  options.connect_timeout_s = 5;
  options.request_timeout_s = 20;
  return options;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ClosedLoop, BodiesCarryTheTurnsInOrderAndWrapAroundTheDataset) {
  ChatServer server(
      [](int, httplib::Response& r, const std::atomic<bool>& c) { quick_stream(r, c); });
  const auto dataset = small_dataset(2, 2);
  LoadOptions options = options_for(server.base_url());
  options.concurrency = 1;
  options.num_requests = 5;
  options.api_key = "secret-key";
  const LoadResult result = run_closed_loop(options, dataset);

  const std::vector<std::pair<int, int>> expected = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 0}};
  ASSERT_EQ(result.records.size(), expected.size());
  const std::vector<Received> received = server.received();
  ASSERT_EQ(received.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const RequestRecord& record = result.records[i];
    EXPECT_TRUE(record.ok) << i << ": " << record.error;
    EXPECT_EQ(record.index, static_cast<std::int64_t>(i));
    EXPECT_EQ(record.conversation, expected[i].first) << i;
    EXPECT_EQ(record.turn, expected[i].second) << i;
    EXPECT_EQ(record.scheduled_s, -1);

    const nlohmann::json& body = received[i].body;
    ASSERT_TRUE(body.is_object()) << i;
    EXPECT_EQ(body["model"], "test-model");
    EXPECT_EQ(body["max_tokens"], 3);
    EXPECT_EQ(body["stream"], true);
    EXPECT_EQ(body["stream_options"]["include_usage"], true);
    const auto messages = messages_for_turn(dataset[expected[i].first], expected[i].second);
    ASSERT_EQ(body["messages"].size(), messages.size()) << i;
    for (std::size_t m = 0; m < messages.size(); ++m) {
      EXPECT_EQ(body["messages"][m]["role"], messages[m].role);
      EXPECT_EQ(body["messages"][m]["content"], messages[m].content);
    }
    EXPECT_EQ(received[i].authorization, "Bearer secret-key");
    EXPECT_EQ(received[i].accept, "text/event-stream");
    // Keep-alive: one user, one connection (cpp-httplib serves 5 requests per connection).
    EXPECT_EQ(received[i].remote_port, received[0].remote_port) << i;
  }
  EXPECT_FALSE(result.interrupted);
  EXPECT_GT(result.epoch_wall_s, 1.6e9);
}

TEST(ClosedLoop, MetricsFromAScriptedStreamAndWarmupExcluded) {
  constexpr int kFirstDelayMs = 150;
  ChatServer server([](int, httplib::Response& r, const std::atomic<bool>& c) {
    scripted_stream(r, c, kFirstDelayMs);
  });
  LoadOptions options = options_for(server.base_url());
  options.concurrency = 2;
  options.num_requests = 4;
  options.warmup_requests = 2;
  std::vector<Progress> progress;
  const LoadResult result = run_closed_loop(options, small_dataset(3, 2),
                                            [&](const Progress& p) { progress.push_back(p); });

  ASSERT_EQ(result.records.size(), 6u);
  EXPECT_EQ(server.received().size(), 6u);
  int measured = 0;
  for (const RequestRecord& record : result.records) {
    SCOPED_TRACE("request " + std::to_string(record.index));
    EXPECT_EQ(record.warmup, record.index < 2);
    if (!record.warmup) ++measured;
    ASSERT_TRUE(record.ok) << record.error;
    EXPECT_EQ(record.http_status, 200);
    EXPECT_EQ(record.replica, "replica-7");
    EXPECT_EQ(record.output_tokens, 3);
    EXPECT_FALSE(record.tokens_estimated);
    EXPECT_EQ(record.prompt_tokens, 21);
    EXPECT_EQ(record.cached_tokens, 16);
    // The role chunk arrives at once; the first content only after kFirstDelayMs. A TTFT below
    // that would mean the role chunk was counted.
    EXPECT_GE(record.ttft_ms, kFirstDelayMs);
    EXPECT_LT(record.ttft_ms, 30000);
    EXPECT_GE(record.e2e_ms, record.ttft_ms);
    EXPECT_NEAR(record.tpot_ms, (record.e2e_ms - record.ttft_ms) / 2, 1e-9);
    ASSERT_EQ(record.itl_ms.size(), 2u);
    EXPECT_NEAR(record.itl_ms[0] + record.itl_ms[1], record.e2e_ms - record.ttft_ms, 1e-6);
    EXPECT_NEAR(record.first_token_s - record.sent_s, record.ttft_ms / 1000, 1e-9);
    EXPECT_GE(record.worker, 0);
    EXPECT_LT(record.worker, 2);
  }
  EXPECT_EQ(measured, 4);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().done, 4);
  EXPECT_EQ(progress.back().total, 4);
  EXPECT_EQ(progress.back().failed, 0);
  EXPECT_GE(progress.back().p50_ttft_ms, kFirstDelayMs);
}

TEST(ClosedLoop, EachFailureIsARecordOfItsKindAndTheRunCompletes) {
  ChatServer server([](int n, httplib::Response& response, const std::atomic<bool>& closing) {
    switch (n) {
      case 1:
        response.status = 500;
        response.set_content(R"({"error":{"message":"engine overloaded"}})", "application/json");
        return;
      case 2:  // connection closed mid-body, before [DONE]
        test_support::stream_steps(response,
                                   {{0, test_support::sse_role() + test_support::sse_content("A")}},
                                   closing, /*finish=*/false);
        return;
      case 3:  // properly terminated body that never says [DONE]
        test_support::stream_steps(response, {{0, test_support::sse_content("A")}}, closing);
        return;
      case 4:  // slower than the request timeout
        test_support::stream_steps(response, {{3000, test_support::kSseDone}}, closing);
        return;
      case 5:
        test_support::stream_steps(
            response, {{0, "data: {\"choices\": [oops\n\n" + test_support::kSseDone}}, closing);
        return;
      default:
        quick_stream(response, closing);
    }
  });
  LoadOptions options = options_for(server.base_url());
  options.concurrency = 1;
  options.num_requests = 7;
  options.request_timeout_s = 0.5;
  const LoadResult result = run_closed_loop(options, small_dataset(10, 2));

  struct Expected {
    const char* kind;
    int conversation;
    int turn;
  };
  // A failed turn moves the user on to the next conversation.
  const std::vector<Expected> expected = {
      {"", 0, 0},
      {kErrorHttpStatus, 0, 1},
      {kErrorStreamDropped, 1, 0},
      {kErrorStreamDropped, 2, 0},
      {kErrorTimeout, 3, 0},
      {kErrorMalformed, 4, 0},
      {"", 5, 0},
  };
  ASSERT_EQ(result.records.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const RequestRecord& record = result.records[i];
    SCOPED_TRACE("request " + std::to_string(i) + ": " + record.error);
    EXPECT_EQ(record.error_kind, expected[i].kind);
    EXPECT_EQ(record.ok, std::string(expected[i].kind).empty());
    EXPECT_EQ(record.conversation, expected[i].conversation);
    EXPECT_EQ(record.turn, expected[i].turn);
  }
  EXPECT_EQ(result.records[1].http_status, 500);
  EXPECT_EQ(result.records[1].error, "HTTP 500: engine overloaded");  // OpenAI's error.message
  EXPECT_EQ(result.records[2].http_status, 200);
  EXPECT_EQ(result.records[2].first_token_s >= 0, true);  // content before the cut is kept
  EXPECT_FALSE(result.interrupted);
}

TEST(ClosedLoop, ConnectionRefusedIsAConnectFailurePerRequest) {
  LoadOptions options = options_for("http://127.0.0.1:" + std::to_string(closed_port()));
  options.concurrency = 2;
  options.num_requests = 4;
  const LoadResult result = run_closed_loop(options, small_dataset(3, 2));
  ASSERT_EQ(result.records.size(), 4u);
  for (const RequestRecord& record : result.records) {
    EXPECT_FALSE(record.ok);
    EXPECT_EQ(record.error_kind, kErrorConnect) << record.error;
    EXPECT_EQ(record.http_status, 0);
    EXPECT_EQ(record.turn, 0);  // every failure starts a fresh conversation
  }
}

TEST(ClosedLoop, DurationBoundStopsSendingAndLetsInFlightFinish) {
  ChatServer server([](int, httplib::Response& r, const std::atomic<bool>& c) {
    test_support::stream_steps(r, {{20, test_support::sse_content("x") + test_support::kSseDone}},
                               c);
  });
  LoadOptions options = options_for(server.base_url());
  options.concurrency = 2;
  options.duration_s = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const LoadResult result = run_closed_loop(options, small_dataset(4, 3));
  EXPECT_LT(seconds_since(start), 20.0);
  ASSERT_FALSE(result.records.empty());
  for (const RequestRecord& record : result.records) {
    EXPECT_TRUE(record.ok) << record.index << ": " << record.error;
    EXPECT_TRUE(record.tokens_estimated);  // no usage chunk in this stream
    EXPECT_EQ(record.output_tokens, 1);
  }
  EXPECT_EQ(result.records.size(), server.received().size());
  EXPECT_FALSE(result.interrupted);
}

TEST(ClosedLoop, StopFlagCancelsInFlightKeepingTheStatusReceived) {
  ChatServer server([](int, httplib::Response& response, const std::atomic<bool>& closing) {
    std::vector<StreamStep> steps;
    for (int i = 0; i < 400; ++i) steps.push_back({25, test_support::sse_content("t")});
    test_support::stream_steps(response, std::move(steps), closing);
  });
  std::atomic<bool> stop{false};
  LoadOptions options = options_for(server.base_url());
  options.concurrency = 3;
  options.duration_s = 120;
  options.stop = &stop;
  const auto start = std::chrono::steady_clock::now();
  // Raised from the progress callback, about a second in, while every stream is mid-flight.
  const LoadResult result =
      run_closed_loop(options, small_dataset(4, 2), [&](const Progress&) { stop = true; });
  EXPECT_LT(seconds_since(start), 30.0);
  EXPECT_TRUE(result.interrupted);
  ASSERT_EQ(result.records.size(), 3u);
  for (const RequestRecord& record : result.records) {
    EXPECT_FALSE(record.ok);
    EXPECT_EQ(record.error_kind, kErrorCancelled);
    EXPECT_EQ(record.http_status, 200);  // the server had answered before the stop
    EXPECT_GE(record.ended_s, record.sent_s);
  }
}

TEST(ClosedLoop, RejectsBadOptionsNamingTheOption) {
  const auto dataset = small_dataset(1, 1);
  const auto message_of = [&](LoadOptions options, const std::vector<Conversation>& data) {
    try {
      run_closed_loop(options, data);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  LoadOptions good = options_for("http://127.0.0.1:1");
  good.num_requests = 1;

  LoadOptions bad = good;
  bad.concurrency = 0;
  EXPECT_NE(message_of(bad, dataset).find("concurrency"), std::string::npos);
  bad = good;
  bad.num_requests = 0;
  EXPECT_NE(message_of(bad, dataset).find("duration_s"), std::string::npos);
  bad = good;
  bad.base_url.clear();
  EXPECT_NE(message_of(bad, dataset).find("base_url"), std::string::npos);
  EXPECT_NE(message_of(good, {}).find("conversations"), std::string::npos);
}

}  // namespace
}  // namespace kvsweep::driver
