// Tests for kvsweep serve's limits (serve/web_server.cc, connection_gate.cc):
// a real server over a real store in a temp dir and raw-socket clients on loopback (slowloris,
// oversized requests, one request per connection). Bounds are liveness bounds, never timing
// assertions; the hostile-client cases of issue 28 are in slow_clients_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/web_server.h"
#include "store/sqlite_handles.h"
#include "tests/reports/small_experiment.h"
#include "tests/sim/raw_client.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::serve {
namespace {

using namespace std::chrono_literals;
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

// 100 clients send part of a request line and nothing more (slowloris): each is closed
// unanswered at the header deadline, and a whole request sent meanwhile is answered at once:
// the clients wait in the connection gate, not on a worker.
TEST(ServeLimits, PartialRequestsAreClosedAtTheHeaderDeadlineAndTheApiStillAnswers) {
  ServerLimits limits;
  limits.header_timeout_s = 1;
  LimitedServer served(limits);
  std::vector<RawClient> slow;
  for (int i = 0; i < 100; ++i) {
    slow.emplace_back(served.port);
    ASSERT_TRUE(slow.back().send("GET /api/experim"));
  }
  RawClient prompt(served.port);
  ASSERT_TRUE(prompt.send(kApiRequest));
  const std::string answer = prompt.read_response(20s);
  EXPECT_TRUE(answered_200_with_the_store(answer)) << answer.substr(0, 200);

  const auto give_up = std::chrono::steady_clock::now() + 30s;
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

// Each connection carries one request: the answer says "Connection: close" and the server
// closes it, so no worker ever waits for a client's next request.
TEST(ServeLimits, EachConnectionCarriesOneRequest) {
  LimitedServer served(ServerLimits{});
  RawClient client(served.port);
  ASSERT_TRUE(client.send(std::string(kApiRequest) + kApiRequest));  // a second one pipelined
  const std::string answer = client.read_response(20s);
  ASSERT_TRUE(answered_200_with_the_store(answer)) << answer.substr(0, 300);
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer.substr(0, 300);
  EXPECT_TRUE(client.closed_by_peer(20s)) << "the connection stayed open after its answer";
  EXPECT_EQ(client.received().find("HTTP/1.1", 10), std::string::npos) << "answered twice";
}

}  // namespace
}  // namespace kvsweep::serve
