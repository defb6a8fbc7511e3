// Tests for kvsweep serve's limits (orchestrator/serve/web_server.cc, bounded_task_queue.cc):
// a real server over a real store in a temp dir and raw-socket clients on loopback (slowloris,
// oversized requests, long keep-alive), and the bounded worker pool on its own. Bounds are
// liveness bounds, never timing assertions.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "orchestrator/serve/bounded_task_queue.h"
#include "orchestrator/serve/web_server.h"
#include "store/sqlite_handles.h"
#include "tests/reports/small_experiment.h"
#include "tests/sim/raw_client.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::orchestrator::serve {
namespace {

using namespace std::chrono_literals;
using sim::testing::eventually;
using sim::testing::RawClient;

constexpr const char* kApiRequest = "GET /api/experiments HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

struct LimitedServer {
  explicit LimitedServer(const ServerLimits& limits) {
    store::Store store = store::Store::open(db);
    testing::write_small_experiment(store);
    ServeOptions options;
    options.db_path = db;
    options.port = 0;
    options.limits = limits;
    server = std::make_unique<WebServer>(options);
    port = static_cast<std::uint16_t>(server->start());
  }
  testing::TempDir dir;
  std::string db = dir.file("kvsweep.db");
  std::unique_ptr<WebServer> server;
  std::uint16_t port = 0;
};

bool answered_200_with_the_store(const std::string& response) {
  return response.rfind("HTTP/1.1 200", 0) == 0 && response.find("small-sim") != std::string::npos;
}

// 100 clients send part of a request line and nothing more (slowloris): each is closed once its
// request has been silent for the read timeout, and a whole request waiting behind them is
// answered. Without the timeout they would hold the server's threads for good.
TEST(ServeLimits, PartialRequestsAreClosedAfterTheReadTimeoutAndTheApiStillAnswers) {
  ServerLimits limits;
  limits.read_timeout_s = 1;
  limits.max_queued = 128;  // every slow client is accepted: the timeout is what frees threads
  LimitedServer served(limits);
  std::vector<RawClient> slow;
  for (int i = 0; i < 100; ++i) {
    slow.emplace_back(served.port);
    ASSERT_TRUE(slow.back().send("GET /api/experim"));
  }
  RawClient prompt(served.port);
  ASSERT_TRUE(prompt.send(kApiRequest));
  // A liveness bound: 100 connections over 16 threads at 1 s each take about 7 s.
  const std::string answer = prompt.read_response(60s);
  EXPECT_TRUE(answered_200_with_the_store(answer)) << answer.substr(0, 200);

  const auto give_up = std::chrono::steady_clock::now() + 60s;
  std::size_t closed = 0;
  for (RawClient& client : slow) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (client.closed_by_peer(std::max(left, 0ms))) ++closed;
    EXPECT_EQ(client.received(), "") << "a silent request is closed, not answered";
  }
  EXPECT_EQ(closed, slow.size()) << "connections the server never closed";
}

// A body over the limit is answered 413 and never kept (httplib reads it through and drops it),
// whatever its type (httplib's own 8 KiB limit covers form bodies only); a request line over
// httplib's 8 KiB is answered 414. Without the payload limit the 1 MiB body would be taken
// whole and the login refused (401).
TEST(ServeLimits, AnOversizedBodyIs413AndAnOversizedUrlIs414) {
  ServerLimits limits;
  LimitedServer served(limits);
  RawClient post(served.port);
  const std::string body(1024 * 1024, 'a');
  ASSERT_TRUE(
      post.send("POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                "application/octet-stream\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body));
  const std::string refused = post.read_until("\r\n\r\n", 20s);
  EXPECT_EQ(refused.rfind("HTTP/1.1 413", 0), 0u) << refused.substr(0, 200);

  RawClient long_query(served.port);
  ASSERT_TRUE(long_query.send("GET /api/history?scenario=" + std::string(20000, 'a') +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::string too_long = long_query.read_until("\r\n\r\n", 20s);
  EXPECT_EQ(too_long.rfind("HTTP/1.1 414", 0), 0u) << too_long.substr(0, 200);

  // The server still answers.
  RawClient after(served.port);
  ASSERT_TRUE(after.send(kApiRequest));
  EXPECT_TRUE(answered_200_with_the_store(after.read_response(20s)));
}

// One connection serves keep_alive_max_count requests, the last said "Connection: close",
// then it is closed; a connection left idle after an answer is closed after the keep-alive
// timeout.
TEST(ServeLimits, KeepAliveEndsAfterItsCountAndWhenLeftIdle) {
  ServerLimits limits;
  limits.keep_alive_max_count = 3;
  limits.keep_alive_timeout_s = 1;
  LimitedServer served(limits);
  RawClient client(served.port);
  for (int i = 1; i <= 3; ++i) {
    client.clear();
    ASSERT_TRUE(client.send(kApiRequest)) << "request " << i;
    const std::string answer = client.read_response(20s);
    ASSERT_TRUE(answered_200_with_the_store(answer)) << "request " << i;
    const bool closes = answer.find("Connection: close") != std::string::npos;
    EXPECT_EQ(closes, i == 3) << "request " << i << ":\n" << answer.substr(0, 300);
  }
  EXPECT_TRUE(client.closed_by_peer(20s)) << "the connection outlived its request count";

  RawClient idle(served.port);
  ASSERT_TRUE(idle.send(kApiRequest));
  const std::string answer = idle.read_response(20s);
  ASSERT_TRUE(answered_200_with_the_store(answer));
  EXPECT_EQ(answer.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(idle.closed_by_peer(30s)) << "an idle keep-alive connection stayed open";
}

// With every thread busy and max_queued connections waiting, enqueue() (httplib's accept
// loop) waits for room instead of queueing without bound; it goes on once a thread frees.
TEST(BoundedTaskQueue, EnqueueWaitsWhileMaxQueuedJobsWaitThenGoesOn) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  const auto job = [&] {
    ++started;
    released.wait();
    ++finished;
  };
  BoundedTaskQueue queue(/*threads=*/1, /*max_queued=*/2);
  queue.enqueue(job);
  ASSERT_TRUE(eventually([&] { return started.load() == 1; }));
  queue.enqueue(job);  // waits in the queue
  queue.enqueue(job);  // so does this one: the queue is full now
  std::atomic<bool> fourth_enqueued{false};
  std::thread accept_loop([&] {
    queue.enqueue(job);
    fourth_enqueued = true;
  });
  // Correct code never lets it through here, so this cannot fail spuriously.
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(fourth_enqueued.load()) << "enqueue() queued beyond max_queued";
  release.set_value();
  EXPECT_TRUE(eventually([&] { return fourth_enqueued.load(); }));
  accept_loop.join();
  queue.shutdown();
  EXPECT_EQ(finished.load(), 4);
}

}  // namespace
}  // namespace kvsweep::orchestrator::serve
