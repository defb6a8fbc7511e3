// Tests for driver/load_run.cc: open and closed loops, endpoints and failures against 127.0.0.1.
#include "driver/load_run.h"

#include <gtest/gtest.h>

#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "driver/arrival_schedule.h"
#include "driver/turn_major_order.h"
#include "tests/driver/test_server.h"

namespace kvsweep::driver {
namespace {

using test_support::LoopbackServer;

struct Seen {
  std::string path;
  nlohmann::json body;
  httplib::Headers headers;
};

// Serves both endpoints; the n-th request (from 0) is answered by script(n, ...). Counts how
// many handlers run at once (answers are whole bodies, so a handler spans its request).
class ScriptServer {
 public:
  using Script =
      std::function<void(int n, const Seen&, httplib::Response&, const std::atomic<bool>& closing)>;

  explicit ScriptServer(Script script)
      : script_(std::move(script)),
        server_([this](httplib::Server& server, const std::atomic<bool>& closing) {
          const auto handler = [this, &closing](const httplib::Request& request,
                                                httplib::Response& response) {
            Seen seen{request.path, nlohmann::json::parse(request.body, nullptr, false),
                      request.headers};
            int n = 0;
            {
              std::lock_guard<std::mutex> lock(mutex_);
              n = static_cast<int>(seen_.size());
              seen_.push_back(seen);
              max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
            }
            script_(n, seen, response, closing);
            std::lock_guard<std::mutex> lock(mutex_);
            --in_flight_;
          };
          server.Post("/v1/chat/completions", handler);
          server.Post("/v1/completions", handler);
        }) {}

  std::string base_url() const { return server_.base_url(); }
  std::vector<Seen> seen() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }
  int max_in_flight() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return max_in_flight_;
  }

 private:
  Script script_;
  mutable std::mutex mutex_;
  std::vector<Seen> seen_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  LoopbackServer server_;  // last: stopped before the members its handler uses go away
};

std::string stream_of(const std::string& text) {
  return test_support::sse_role() + test_support::sse_content(text) +
         test_support::sse_usage(5, 1, 0) + test_support::kSseDone;
}

void answer(httplib::Response& response, const std::string& text = "x") {
  response.set_content(stream_of(text), "text/event-stream");
}

ScriptServer::Script quick() {
  return [](int, const Seen&, httplib::Response& r, const std::atomic<bool>&) { answer(r); };
}

Workload small_workload(int conversations, int turns) {
  Workload workload;
  for (int c = 0; c < conversations; ++c) {
    Conversation conversation;
    conversation.system_prompt = "system prompt";
    for (int t = 0; t < turns; ++t) {
      conversation.user.push_back("c" + std::to_string(c) + " user " + std::to_string(t));
      conversation.assistant.push_back("c" + std::to_string(c) + " reply " + std::to_string(t));
    }
    workload.conversations.push_back(std::move(conversation));
  }
  return workload;
}

LoadOptions open_loop_to(const std::string& base_url, double rate) {
  LoadOptions options;
  options.base_url = base_url;
  options.model = "test-model";
  options.max_tokens = 3;
  options.request_rate = rate;
  options.connect_timeout_s = 5;
  options.request_timeout_s = 20;
  return options;
}

LoadOptions closed_loop_to(const std::string& base_url, int concurrency) {
  LoadOptions options = open_loop_to(base_url, 0);
  options.concurrency = concurrency;
  return options;
}

std::vector<std::string> contents(const nlohmann::json& body) {
  std::vector<std::string> out;
  for (const auto& message : body["messages"]) out.push_back(message["content"]);
  return out;
}

TEST(OpenLoop, ScheduleFromTheSeedTurnMajorOrderAndLagRecorded) {
  ScriptServer server(quick());
  const Workload workload = small_workload(3, 2);
  LoadOptions options = open_loop_to(server.base_url(), 200);
  options.num_requests = 8;
  options.seed = 5;
  const LoadResult result = run_load(options, workload);

  const std::vector<double> expected_times = gamma_arrival_times(200, 1, 8, 5);
  // Turn-major, shuffled within each turn by the seed (turn_major_order.h).
  std::vector<std::pair<int, int>> expected_turns;
  const TurnMajorOrder order(workload.conversations, 5);
  for (TurnPosition p = order.first(); expected_turns.size() < 8; p = order.after(p)) {
    expected_turns.emplace_back(p.conversation, p.turn);
  }
  ASSERT_EQ(expected_turns[3].second, 1);
  ASSERT_EQ(expected_turns[6].second, 0);  // the second lap
  ASSERT_EQ(result.records.size(), 8u);
  const std::vector<Seen> seen = server.seen();
  ASSERT_EQ(seen.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    const RequestRecord& record = result.records[i];
    SCOPED_TRACE("request " + std::to_string(i) + ": " + record.error);
    EXPECT_TRUE(record.ok);
    EXPECT_EQ(record.scheduled_s, expected_times[i]);
    EXPECT_GE(record.sent_s, record.scheduled_s);
    EXPECT_GE(record.schedule_lag_ms, 0);
    EXPECT_NEAR(record.schedule_lag_ms, (record.sent_s - record.scheduled_s) * 1000, 1e-9);
    EXPECT_EQ(record.conversation, expected_turns[i].first);
    EXPECT_EQ(record.turn, expected_turns[i].second);
    EXPECT_FALSE(record.warmup);
  }
  // Bodies arrive in send order with one connection per request in flight; match by content.
  for (std::size_t i = 0; i < 8; ++i) {
    const auto& [c, t] = expected_turns[i];
    std::vector<std::string> want;
    for (const ChatMessage& m : messages_for_turn(workload.conversations[c], t)) {
      want.push_back(m.content);
    }
    bool found = false;
    for (const Seen& s : seen) found = found || contents(s.body) == want;
    EXPECT_TRUE(found) << i;
  }
}

// The schedule is computed once, on the run thread: the number of transfer threads changes who
// carries a request, never which request is due when.
TEST(OpenLoop, TheScheduleIsTheSameWhateverTheNumberOfThreads) {
  ScriptServer server(quick());
  const Workload workload = small_workload(5, 3);
  // A slow rate: cpp-httplib serves each connection on one of a few threads, so requests must
  // not pile up on many connections (each worker keeps its own).
  LoadOptions options = open_loop_to(server.base_url(), 25);
  options.num_requests = 15;
  options.seed = 21;
  std::vector<std::tuple<double, int, int>> schedules[2];
  for (const int threads : {1, 3}) {
    options.threads = threads;
    const LoadResult result = run_load(options, workload);
    ASSERT_EQ(result.records.size(), 15u);
    for (const RequestRecord& record : result.records) {
      EXPECT_TRUE(record.ok) << record.error;
      schedules[threads == 3].emplace_back(record.scheduled_s, record.conversation, record.turn);
    }
  }
  EXPECT_EQ(schedules[0], schedules[1]);
}

TEST(OpenLoop, MaxConcurrencyCapsInFlightAndTheWaitIsLag) {
  ScriptServer server([](int, const Seen&, httplib::Response& r, const std::atomic<bool>& c) {
    test_support::sleep_unless_closing(100, c);
    answer(r);
  });
  LoadOptions options = open_loop_to(server.base_url(), std::numeric_limits<double>::infinity());
  options.num_requests = 9;
  options.max_concurrency = 3;
  const LoadResult result = run_load(options, small_workload(4, 1));
  ASSERT_EQ(result.records.size(), 9u);
  EXPECT_LE(server.max_in_flight(), 3);
  EXPECT_GE(server.max_in_flight(), 1);
  for (const RequestRecord& record : result.records) {
    EXPECT_TRUE(record.ok) << record.error;
    EXPECT_EQ(record.scheduled_s, 0);
  }
  // The 4th request can only go once one of the first three took its 100 ms.
  EXPECT_GE(result.records[3].schedule_lag_ms, 100);
  EXPECT_GE(result.records[8].schedule_lag_ms, 200);
}

TEST(OpenLoop, TraceArrivalTimesAreHonoured) {
  ScriptServer server(quick());
  Workload workload = small_workload(3, 1);
  workload.arrival_s = {0.0, 0.05, 0.25};
  LoadOptions options = open_loop_to(server.base_url(), 0);  // the trace sets the times
  const LoadResult result = run_load(options, workload);
  ASSERT_EQ(result.records.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(result.records[i].ok) << result.records[i].error;
    EXPECT_EQ(result.records[i].conversation, static_cast<int>(i));
    EXPECT_EQ(result.records[i].scheduled_s, workload.arrival_s[i]);
    EXPECT_GE(result.records[i].sent_s, workload.arrival_s[i]);
  }
}

// Issue 15 item 3: at 0.01 requests/s the first arrival is ~100 s away; a 0.5 s cell must end
// after its duration with nothing sent, not wait for it (and at 1e-12 it never ended).
TEST(OpenLoop, DurationRunsFromTheCellStartEvenWhenNoArrivalFallsInIt) {
  ScriptServer server(quick());
  for (const double rate : {0.01, 1e-12}) {
    LoadOptions options = open_loop_to(server.base_url(), rate);
    options.duration_s = 0.5;
    const LoadResult result = run_load(options, small_workload(2, 1));
    EXPECT_TRUE(result.records.empty()) << rate;
  }
  EXPECT_TRUE(server.seen().empty());
}

TEST(OpenLoop, DurationBoundedRunIsTheSameScheduleForASeed) {
  ScriptServer server(quick());
  LoadOptions options = open_loop_to(server.base_url(), 100);
  options.duration_s = 0.3;
  options.warmup_s = 0.2;
  options.seed = 9;
  const LoadResult first = run_load(options, small_workload(5, 2));
  const LoadResult second = run_load(options, small_workload(5, 2));
  ASSERT_EQ(first.records.size(), second.records.size());
  double measured_start = -1;
  int measured = 0;
  for (std::size_t i = 0; i < first.records.size(); ++i) {
    const RequestRecord& record = first.records[i];
    EXPECT_EQ(record.scheduled_s, second.records[i].scheduled_s);
    EXPECT_EQ(record.warmup, record.scheduled_s < 0.2) << i;
    if (record.warmup) continue;
    if (measured_start < 0) measured_start = record.scheduled_s;
    EXPECT_LT(record.scheduled_s - measured_start, 0.3);
    ++measured;
  }
  EXPECT_GT(measured, 5);  // ~30 expected at 100 req/s for 0.3 s
}

TEST(LoadRun, CompletionsEndpointStreamsText) {
  ScriptServer server([](int, const Seen&, httplib::Response& r, const std::atomic<bool>&) {
    r.set_content(test_support::sse(R"({"choices":[{"index":0,"text":"he"}]})") +
                      test_support::sse(R"({"choices":[{"index":0,"text":"llo"}]})") +
                      test_support::sse_usage(7, 2, 0) + test_support::kSseDone,
                  "text/event-stream");
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.endpoint = LoadOptions::Endpoint::kCompletions;
  options.num_requests = 1;
  options.keep_response_text = true;
  const LoadResult result = run_load(options, small_workload(1, 2));
  ASSERT_EQ(result.records.size(), 1u);
  const RequestRecord& record = result.records[0];
  EXPECT_TRUE(record.ok) << record.error;
  EXPECT_EQ(record.output_tokens, 2);
  EXPECT_EQ(record.response_text, "hello");
  const Seen seen = server.seen().at(0);
  EXPECT_EQ(seen.path, "/v1/completions");
  EXPECT_EQ(seen.body["prompt"], "system prompt\nc0 user 0");
}

TEST(LoadRun, NonStreamingResponseTtftEqualsE2e) {
  ScriptServer server([](int, const Seen&, httplib::Response& r, const std::atomic<bool>& c) {
    test_support::sleep_unless_closing(50, c);
    r.set_content(
        R"({"choices":[{"index":0,"message":{"role":"assistant","content":"full reply"}}],)"
        R"("usage":{"prompt_tokens":11,"completion_tokens":4,)"
        R"("prompt_tokens_details":{"cached_tokens":8}}})",
        "application/json");
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.stream = false;
  options.num_requests = 2;
  options.keep_response_text = true;
  const LoadResult result = run_load(options, small_workload(1, 2));
  ASSERT_EQ(result.records.size(), 2u);
  for (const RequestRecord& record : result.records) {
    EXPECT_TRUE(record.ok) << record.error;
    EXPECT_EQ(record.ttft_ms, record.e2e_ms);
    EXPECT_GE(record.ttft_ms, 50);
    EXPECT_EQ(record.output_tokens, 4);
    EXPECT_FALSE(record.tokens_estimated);
    EXPECT_EQ(record.prompt_tokens, 11);
    EXPECT_EQ(record.cached_tokens, 8);
    EXPECT_TRUE(record.itl_ms.empty());
    EXPECT_EQ(record.response_text, "full reply");
  }
  EXPECT_EQ(server.seen().at(0).body["stream"], false);
}

TEST(LoadRun, HeadersTemperatureAndExtraBodyArrive) {
  ScriptServer server(quick());
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 1;
  options.headers = {{"X-Session-ID", "abc"}, {"X-Other", "v 2"}};
  options.temperature = 0.5;
  options.extra_body_json = R"({"top_k": 3, "stream_options": {"continuous_usage_stats": true}})";
  options.api_key = "k";
  const LoadResult result = run_load(options, small_workload(1, 1));
  ASSERT_EQ(result.records.size(), 1u);
  EXPECT_TRUE(result.records[0].ok) << result.records[0].error;
  const Seen seen = server.seen().at(0);
  EXPECT_EQ(seen.headers.find("X-Session-ID")->second, "abc");
  EXPECT_EQ(seen.headers.find("X-Other")->second, "v 2");
  EXPECT_EQ(seen.headers.find("Authorization")->second, "Bearer k");
  EXPECT_EQ(seen.body["top_k"], 3);
  EXPECT_DOUBLE_EQ(seen.body["temperature"].get<double>(), 0.5);
  EXPECT_EQ(seen.body["stream_options"]["continuous_usage_stats"], true);
  EXPECT_EQ(seen.body["stream_options"]["include_usage"], true);  // merged, not replaced
}

TEST(LoadRun, RateLimitedAndTimeoutsByPhaseAreRecordsAndTheRunGoesOn) {
  ScriptServer server([](int n, const Seen&, httplib::Response& r, const std::atomic<bool>& c) {
    if (n == 0) {
      r.status = 429;
      r.set_content(R"({"error":{"message":"slow down"}})", "application/json");
    } else if (n == 1) {
      test_support::sleep_unless_closing(5000, c);  // no status line within the first-byte limit
      answer(r);
    } else {
      answer(r);
    }
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 3;
  options.first_byte_timeout_s = 0.3;
  const LoadResult result = run_load(options, small_workload(3, 1));
  ASSERT_EQ(result.records.size(), 3u);
  EXPECT_EQ(result.records[0].error_kind, kErrorRateLimited);
  EXPECT_EQ(result.records[0].http_status, 429);
  EXPECT_EQ(result.records[0].error, "HTTP 429: slow down");  // the server's message
  EXPECT_EQ(result.records[1].error_kind, kErrorTimeout);
  // The limit as the user wrote it, not "0.300000 s".
  EXPECT_EQ(result.records[1].error, "first byte timeout: no response within 300 ms of the send");
  EXPECT_TRUE(result.records[2].ok) << result.records[2].error;
}

// Issue 15 item 6: a server streaming one line without end once made the driver hold 2 GB in
// 10 s. Past max_event_bytes the request fails as "event too large" and the driver stops
// reading (the request ends long before its timeout, and the run goes on).
TEST(LoadRun, AnSseLineWithoutEndFailsAsEventTooLarge) {
  std::atomic<std::int64_t> written{0};
  ScriptServer server(
      [&written](int n, const Seen&, httplib::Response& r, const std::atomic<bool>& closing) {
        if (n > 0) return answer(r);
        r.set_chunked_content_provider(
            "text/event-stream", [&written, &closing](std::size_t, httplib::DataSink& sink) {
              const std::string head = test_support::sse_role() + "data: ";
              if (!sink.write(head.data(), head.size())) return false;
              const std::string chunk(64 * 1024, 'x');
              // Until the client hangs up (or, were it to read on, 1 GiB and the server's close).
              for (int i = 0; i < 16 * 1024 && !closing; ++i) {
                if (!sink.write(chunk.data(), chunk.size())) return false;
                written += static_cast<std::int64_t>(chunk.size());
              }
              return false;
            });
      });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 2;
  options.request_timeout_s = 120;
  options.max_event_bytes = 256 * 1024;
  const LoadResult result = run_load(options, small_workload(2, 1));
  ASSERT_EQ(result.records.size(), 2u);
  EXPECT_FALSE(result.records[0].ok);
  EXPECT_EQ(result.records[0].error_kind, kErrorMalformed);
  EXPECT_EQ(result.records[0].error.rfind("event too large: an SSE event passed 262144 bytes", 0),
            0u)
      << result.records[0].error;
  EXPECT_TRUE(result.records[1].ok) << result.records[1].error;
  // The client stopped reading: far less than the 1 GiB the server would send was written
  // (socket buffers hold a few MiB at most).
  EXPECT_LT(written.load(), std::int64_t{256} << 20);
}

TEST(LoadRun, ANonStreamedBodyPastTheLimitFailsAsResponseTooLarge) {
  ScriptServer server([](int, const Seen&, httplib::Response& r, const std::atomic<bool>&) {
    r.set_content(
        R"({"choices":[{"index":0,"message":{"content":")" + std::string(3 << 20, 'x') + R"("}}]})",
        "application/json");
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.stream = false;
  options.num_requests = 1;
  options.max_event_bytes = 1 << 20;
  const LoadResult result = run_load(options, small_workload(1, 1));
  ASSERT_EQ(result.records.size(), 1u);
  EXPECT_EQ(result.records[0].error_kind, kErrorMalformed);
  EXPECT_EQ(result.records[0].error.rfind("response too large: the body passed 1048576 bytes", 0),
            0u)
      << result.records[0].error;
}

TEST(LoadRun, TotalTimeoutSaysWhichPhase) {
  ScriptServer server([](int, const Seen&, httplib::Response& r, const std::atomic<bool>& c) {
    test_support::stream_steps(r, {{0, test_support::sse_role()}, {3000, test_support::kSseDone}},
                               c);
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 1;
  options.request_timeout_s = 0.4;
  const LoadResult result = run_load(options, small_workload(1, 1));
  ASSERT_EQ(result.records.size(), 1u);
  EXPECT_EQ(result.records[0].error_kind, kErrorTimeout);
  EXPECT_EQ(result.records[0].error.rfind("total timeout after 400 ms: ", 0), 0u)
      << result.records[0].error;
}

TEST(ClosedLoopRun, RepliesFromServerBecomeTheHistoryAndTurnsSetMaxTokens) {
  ScriptServer server([](int n, const Seen&, httplib::Response& r, const std::atomic<bool>&) {
    answer(r, "srv" + std::to_string(n));
  });
  Workload workload = small_workload(1, 3);
  workload.conversations[0].replies_from_server = true;
  workload.conversations[0].max_tokens = {5, 0, 7};
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 3;
  const LoadResult result = run_load(options, workload);
  ASSERT_EQ(result.records.size(), 3u);
  for (const RequestRecord& record : result.records) {
    EXPECT_TRUE(record.ok) << record.error;
    EXPECT_TRUE(record.response_text.empty());  // not kept unless asked
  }
  const std::vector<Seen> seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  const std::vector<std::string> third = contents(seen[2].body);
  const std::vector<std::string> want = {"system prompt", "c0 user 0", "srv0",
                                         "c0 user 1",     "srv1",      "c0 user 2"};
  EXPECT_EQ(third, want);
  EXPECT_EQ(seen[0].body["max_tokens"], 5);
  EXPECT_EQ(seen[1].body["max_tokens"], 3);
  EXPECT_EQ(seen[2].body["max_tokens"], 7);
  // Each record carries its turn's dataset fingerprint, whatever the server replied.
  const Conversation& c = workload.conversations[0];
  EXPECT_EQ(result.records[0].prompt_hash, turn_fingerprint(c, 0, 5));
  EXPECT_EQ(result.records[1].prompt_hash, turn_fingerprint(c, 1, 3));
  EXPECT_EQ(result.records[2].prompt_hash, turn_fingerprint(c, 2, 7));
}

TEST(ClosedLoopRun, WarmupByConversationsAndRequestsIsExcluded) {
  ScriptServer server(quick());
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 2;
  options.warmup_conversations = 1;
  const LoadResult by_conversation = run_load(options, small_workload(3, 2));
  ASSERT_EQ(by_conversation.records.size(), 4u);
  for (const RequestRecord& record : by_conversation.records) {
    EXPECT_EQ(record.warmup, record.conversation == 0) << record.index;
  }

  options.warmup_conversations = 0;
  options.warmup_requests = 3;
  std::vector<Progress> progress;
  const LoadResult by_request =
      run_load(options, small_workload(3, 2), [&](const Progress& p) { progress.push_back(p); });
  ASSERT_EQ(by_request.records.size(), 5u);
  for (const RequestRecord& record : by_request.records) {
    EXPECT_EQ(record.warmup, record.index < 3) << record.index;
  }
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().done, 2);
}

TEST(OpenLoop, WarmupRequestsComeFirstAndStopFlagEndsCleanly) {
  ScriptServer server(quick());
  LoadOptions options = open_loop_to(server.base_url(), 500);
  options.num_requests = 4;
  options.warmup_requests = 2;
  const LoadResult result = run_load(options, small_workload(2, 1));
  ASSERT_EQ(result.records.size(), 6u);
  for (const RequestRecord& record : result.records) {
    EXPECT_EQ(record.warmup, record.index < 2);
    EXPECT_TRUE(record.ok) << record.error;
  }

  std::atomic<bool> stop{true};
  options.stop = &stop;
  const LoadResult stopped = run_load(options, small_workload(2, 1));
  EXPECT_TRUE(stopped.interrupted);
}

TEST(LoadRun, EveryRequestRecordsWhenItEndedFailuresIncluded) {
  // Both requests get a status line and a role chunk, then nothing: each ends at its timeout.
  ScriptServer server([](int, const Seen&, httplib::Response& r, const std::atomic<bool>& c) {
    test_support::stream_steps(r, {{0, test_support::sse_role()}, {10000, test_support::kSseDone}},
                               c);
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 2;
  options.request_timeout_s = 0.4;
  const LoadResult result = run_load(options, small_workload(2, 1));
  ASSERT_EQ(result.records.size(), 2u);
  for (const RequestRecord& record : result.records) {
    EXPECT_EQ(record.error_kind, kErrorTimeout) << record.error;
    EXPECT_EQ(record.last_token_s, -1);  // no token: only ended_s says when it finished
    // libcurl starts its clock after sent_s is taken, so the end is at least the timeout later.
    EXPECT_GE(record.ended_s - record.sent_s, 0.4 - 1e-6) << record.index;
  }
  // One user: the second request was sent once the first had ended.
  EXPECT_GE(result.records[1].sent_s, result.records[0].ended_s);

  // A request that fails at once (nothing listening) has an end too.
  LoadOptions refused = closed_loop_to("http://127.0.0.1:1", 1);
  refused.num_requests = 1;
  const LoadResult failed = run_load(refused, small_workload(1, 1));
  ASSERT_EQ(failed.records.size(), 1u);
  EXPECT_EQ(failed.records[0].error_kind, kErrorConnect);
  EXPECT_GE(failed.records[0].ended_s, failed.records[0].sent_s);
}

TEST(LoadRun, ErrorReasonIsTheServersMessage) {
  ScriptServer server([](int n, const Seen&, httplib::Response& r, const std::atomic<bool>&) {
    r.status = n == 0 ? 404 : 400;
    if (n == 0) {  // vLLM's shape: the message at the top level
      r.set_content(R"({"object":"error","message":"The model `wrong-model` does not exist.",)"
                    R"("type":"NotFoundError","param":null,"code":404})",
                    "application/json");
    } else {  // not JSON: the body itself
      r.set_content("bad request, plain text", "text/plain");
    }
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 2;
  const LoadResult result = run_load(options, small_workload(2, 1));
  ASSERT_EQ(result.records.size(), 2u);
  EXPECT_EQ(result.records[0].error, "HTTP 404: The model `wrong-model` does not exist.");
  EXPECT_EQ(result.records[1].error, "HTTP 400: bad request, plain text");
}

TEST(LoadRun, BaseUrlWithOrWithoutV1ReachesTheSameEndpoint) {
  ScriptServer server(quick());
  for (const std::string suffix : {"", "/", "/v1", "/v1/", "/v1//"}) {
    LoadOptions options = closed_loop_to(server.base_url() + suffix, 1);
    options.num_requests = 1;
    const LoadResult result = run_load(options, small_workload(1, 1));
    ASSERT_EQ(result.records.size(), 1u);
    EXPECT_TRUE(result.records[0].ok) << suffix << ": " << result.records[0].error;
  }
  for (const Seen& seen : server.seen()) EXPECT_EQ(seen.path, "/v1/chat/completions");
}

TEST(LoadRun, MeasuredUnderwayFiresOnceAtTheFirstMeasuredAnswer) {
  ScriptServer server(quick());
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.warmup_requests = 2;
  options.num_requests = 3;
  std::vector<std::size_t> seen_when_fired;
  options.on_measured_underway = [&] { seen_when_fired.push_back(server.seen().size()); };
  const LoadResult result = run_load(options, small_workload(2, 2));
  ASSERT_EQ(result.records.size(), 5u);
  // Once, and not for the warm-up: one user, so the server had seen exactly the two warm-up
  // requests and the first measured one.
  ASSERT_EQ(seen_when_fired.size(), 1u);
  EXPECT_EQ(seen_when_fired[0], 3u);
}

TEST(LoadRun, NonStreamingResponseWithoutUsageHasUnknownPromptTokens) {
  ScriptServer server([](int, const Seen&, httplib::Response& r, const std::atomic<bool>&) {
    r.set_content(R"({"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]})",
                  "application/json");
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.stream = false;
  options.num_requests = 1;
  const LoadResult result = run_load(options, small_workload(1, 1));
  ASSERT_EQ(result.records.size(), 1u);
  EXPECT_TRUE(result.records[0].ok) << result.records[0].error;
  EXPECT_EQ(result.records[0].prompt_tokens, -1);  // unknown, not 0
  EXPECT_TRUE(result.records[0].tokens_estimated);
}

// Keep-alive reuses one connection for a closed-loop user; --new-connection-per-request opens
// one per request, as vLLM's client did (its TTFT then includes connection setup).
TEST(LoadRun, NewConnectionPerRequestOpensOneConnectionPerRequest) {
  std::mutex mutex;
  std::set<int> ports;
  test_support::LoopbackServer server([&](httplib::Server& s, const std::atomic<bool>&) {
    s.Post("/v1/chat/completions", [&](const httplib::Request& request, httplib::Response& r) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        ports.insert(request.remote_port);
      }
      answer(r);
    });
  });
  LoadOptions options = closed_loop_to(server.base_url(), 1);
  options.num_requests = 4;
  const LoadResult reused = run_load(options, small_workload(1, 1));
  ASSERT_EQ(reused.records.size(), 4u);
  EXPECT_EQ(ports.size(), 1u);

  ports.clear();
  options.new_connection_per_request = true;
  const LoadResult fresh = run_load(options, small_workload(1, 1));
  ASSERT_EQ(fresh.records.size(), 4u);
  for (const RequestRecord& record : fresh.records) EXPECT_TRUE(record.ok) << record.error;
  EXPECT_EQ(ports.size(), 4u);
}

TEST(LoadRun, RejectsBadOptionsNamingTheField) {
  const auto message_of = [](const LoadOptions& options) {
    try {
      run_load(options, small_workload(1, 1));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  LoadOptions options = open_loop_to("http://127.0.0.1:1", 10);
  options.num_requests = 1;
  options.concurrency = 4;
  EXPECT_NE(message_of(options).find("max_concurrency"), std::string::npos);
  options.concurrency = 0;
  options.extra_body_json = "[1]";
  EXPECT_EQ(message_of(options), "LoadOptions.extra_body_json: expected a JSON object, got array");
  options.extra_body_json.clear();
  options.burstiness = 0;
  EXPECT_NE(message_of(options).find("burstiness"), std::string::npos);
  options.burstiness = 1;
  options.request_rate = std::numeric_limits<double>::infinity();
  options.num_requests = 0;
  options.duration_s = 5;
  EXPECT_EQ(message_of(options).rfind("LoadOptions.num_requests: an infinite request_rate", 0), 0u)
      << message_of(options);
}

}  // namespace
}  // namespace kvsweep::driver
