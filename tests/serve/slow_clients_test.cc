// Tests for kvsweep serve against clients that hold connections (issue 28, item 1): slow header
// senders, open live streams and a full connection bound, on a real server with a token over a
// real store, raw-socket clients on loopback. Throughout, a normal authenticated GET must be
// answered within a second (before the connection gate, 16 such clients held every worker and
// a GET waited 15 s and more).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/web_server.h"
#include "store/store.h"
#include "tests/reports/small_experiment.h"
#include "tests/sim/raw_client.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::serve {
namespace {

using namespace std::chrono_literals;
using sim::testing::eventually;
using sim::testing::RawClient;

constexpr const char* kSlowClientsToken = "slow-clients-token-0123456789";

std::string request(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
         kSlowClientsToken + "\r\n\r\n";
}

struct TokenServer {
  explicit TokenServer(const ServerLimits& limits) {
    store::Store store = store::Store::open(db);
    testing::write_small_experiment(store);
    ServeOptions options;
    options.db_path = db;
    options.port = 0;
    options.token = kSlowClientsToken;
    options.limits = limits;
    server = std::make_unique<WebServer>(options);
    port = static_cast<std::uint16_t>(server->start());
  }
  // A normal authenticated GET, answered 200 within a second.
  bool answers_within_a_second() const {
    RawClient client(port);
    if (!client.send(request("/api/experiments"))) return false;
    const std::string answer = client.read_response(1s);
    return answer.rfind("HTTP/1.1 200", 0) == 0 && answer.find("small-sim") != std::string::npos;
  }
  testing::TempDir dir;
  std::string db = dir.file("kvsweep.db");
  std::unique_ptr<WebServer> server;
  std::uint16_t port = 0;
};

// `count` connections that each send a request header one byte every 100 ms, without the
// token; a connection the server closes is opened again at once, so `count` are always held.
class Trickler {
 public:
  Trickler(std::uint16_t port, int count) {
    thread_ = std::thread([this, port, count] {
      const std::string header = "GET /api/experiments HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
      std::vector<std::unique_ptr<RawClient>> clients;
      std::vector<std::size_t> sent(static_cast<std::size_t>(count), 0);
      for (int i = 0; i < count; ++i) clients.push_back(std::make_unique<RawClient>(port));
      while (!stop_) {
        for (std::size_t i = 0; i < clients.size(); ++i) {
          const bool gone = clients[i]->peer_gone();
          if (gone && clients[i]->received().empty()) ++closed_;
          if (gone || sent[i] + 4 >= header.size()) {
            clients[i] = std::make_unique<RawClient>(port);
            sent[i] = 0;
          }
          clients[i]->send(header.substr(sent[i]++, 1));  // never the blank line that ends it
        }
        ++rounds_;
        std::this_thread::sleep_for(100ms);
      }
    });
  }
  ~Trickler() {
    stop_ = true;
    thread_.join();
  }
  int rounds() const { return rounds_; }
  int closed_unanswered() const { return closed_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> rounds_{0};
  std::atomic<int> closed_{0};
  std::thread thread_;
};

// 16 clients trickle a header, without the token, and reconnect when closed; meanwhile a GET
// with the token is answered within a second, every time, until every slow client has been
// closed at the header deadline at least once.
TEST(ServeSlowClients, SixteenSlowHeaderSendersDoNotHoldTheServer) {
  ServerLimits limits;
  limits.header_timeout_s = 1;
  TokenServer served(limits);
  Trickler slow(served.port, 16);
  ASSERT_TRUE(eventually([&] { return slow.rounds() >= 3; }));
  int asked = 0;
  int late = 0;
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  while ((slow.closed_unanswered() < 16 || asked < 8) &&
         std::chrono::steady_clock::now() < give_up) {
    ++asked;
    late += served.answers_within_a_second() ? 0 : 1;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GE(slow.closed_unanswered(), 16) << "slow clients were not closed at the deadline";
  EXPECT_EQ(late, 0) << late << " of " << asked << " GETs were not answered within a second";
}

// Live streams are bounded per client address (4) and in all (8), below the 16 workers: one
// more is answered 503 at once, not queued, and a GET is still answered within a second. A
// stream whose client went frees its place.
TEST(ServeSlowClients, OpenStreamsAreBoundedPerClientAndInAll) {
  ServerLimits limits;
  limits.max_streams = 8;
  limits.max_streams_per_client = 4;
  TokenServer served(limits);
  std::vector<std::unique_ptr<RawClient>> open;
  // The status line of a stream opened from `source`.
  const auto open_stream = [&](const char* source) {
    auto client = std::make_unique<RawClient>(served.port, 0, source);
    client->send(request("/api/live/stream"));
    std::string head = client->read_until("\r\n\r\n", 20s);
    if (head.rfind("HTTP/1.1 503", 0) == 0) head = client->read_response(20s);  // its reason
    open.push_back(std::move(client));
    return head.substr(0, head.find("\r\n"));
  };
  for (int i = 0; i < 4; ++i) EXPECT_EQ(open_stream("127.0.0.1"), "HTTP/1.1 200 OK") << i;
  EXPECT_EQ(open_stream("127.0.0.1"), "HTTP/1.1 503 Service Unavailable") << "a 5th per client";
  for (int i = 0; i < 4; ++i) EXPECT_EQ(open_stream("127.0.0.2"), "HTTP/1.1 200 OK") << i;
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(open_stream("127.0.0.3"), "HTTP/1.1 503 Service Unavailable") << "beyond 8 in all";
  }
  EXPECT_NE(open[4]->received().find("(--max-streams-per-client)"), std::string::npos)
      << open[4]->received();
  EXPECT_NE(open[9]->received().find("(--max-streams)"), std::string::npos) << open[9]->received();
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(served.answers_within_a_second()) << "GET " << i << " with 8 streams open";
  }
  open.front().reset();  // a page closed: its stream ends and frees its place
  EXPECT_TRUE(eventually([&] {
    RawClient again(served.port, 0, "127.0.0.3");
    again.send(request("/api/live/stream"));
    return again.read_until("\r\n\r\n", 5s).rfind("HTTP/1.1 200", 0) == 0;
  }));
}

// With the connection bound held by silent clients without the token, a GET with it is still
// answered: the connection that waited longest for its request makes room. With every
// connection a request being served (open streams), one more is answered 503 at once.
TEST(ServeSlowClients, AFullConnectionBoundStillLetsARequestIn) {
  ServerLimits limits;
  limits.max_connections = 4;
  limits.threads = 6;
  limits.max_streams = 4;
  limits.header_timeout_s = 60;  // only the bound frees them here
  TokenServer served(limits);
  std::vector<std::unique_ptr<RawClient>> silent;
  for (int i = 0; i < 4; ++i) silent.push_back(std::make_unique<RawClient>(served.port));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(served.answers_within_a_second()) << i;
  EXPECT_TRUE(silent[0]->closed_by_peer(5s)) << "the longest-waiting connection stays";

  silent.clear();
  std::vector<std::unique_ptr<RawClient>> streams;
  for (int i = 0; i < 4; ++i) {
    streams.push_back(std::make_unique<RawClient>(served.port, 0, "127.0.0.1"));
    streams.back()->send(request("/api/live/stream"));
    ASSERT_EQ(streams.back()->read_until("\r\n\r\n", 20s).rfind("HTTP/1.1 200", 0), 0u) << i;
  }
  RawClient one_more(served.port);
  const std::string refused = one_more.read_until("\r\n\r\n", 20s);
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("--max-connections"), std::string::npos) << refused;
}

}  // namespace
}  // namespace kvsweep::serve
