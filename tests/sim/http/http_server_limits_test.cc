// Tests for what sim/http/http_server.cc allows its peers: header, idle and write timeouts, the
// connection cap, backpressure on a client that does not read, and accepting when out of
// descriptors. Real sockets on 127.0.0.1; no assertion on how fast anything happens.
#include <gtest/gtest.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "sim/http/http_server.h"
#include "sim/http/openai_api.h"
#include "tests/sim/descriptor_hog.h"
#include "tests/sim/http/server_thread.h"
#include "tests/sim/raw_client.h"

namespace kvsweep::sim {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::DescriptorHog;
using testing::eventually;
using testing::RawClient;
using testing::ServerThread;

constexpr const char* kRequest = "GET /x HTTP/1.1\r\nHost: t\r\n\r\n";

HttpHandler answer_ok() {
  return [](const HttpRequest&, std::shared_ptr<Exchange> exchange) {
    exchange->respond(HttpResponse{200, "text/plain", "ok", {}});
  };
}

TEST(HttpServerLimits, SlowlorisHeadersAndSilentConnectionsAreClosedAfterTheHeaderTimeout) {
  HttpServerOptions options;
  options.header_timeout = 1000ms;
  ServerThread server(answer_ok(), options);
  // 100 clients trickle a header a line every 200 ms, never ending it; 10 more send nothing.
  struct Slow {
    RawClient client;
    Clock::time_point opened;
    std::optional<Clock::duration> closed_after;
  };
  std::vector<Slow> slow;
  for (int i = 0; i < 110; ++i) {
    const Clock::time_point opened = Clock::now();
    slow.push_back(Slow{RawClient(server.port()), opened, std::nullopt});
    if (i < 100) {
      ASSERT_TRUE(slow.back().client.send("GET /x HTTP/1.1\r\nHost: t\r\n"));
    }
  }
  const auto give_up = Clock::now() + 30s;  // a liveness bound: unbounded servers never close
  int open = static_cast<int>(slow.size());
  for (int line = 0; open > 0 && Clock::now() < give_up; ++line) {
    for (std::size_t i = 0; i < slow.size(); ++i) {
      Slow& s = slow[i];
      if (s.closed_after) continue;
      if (s.client.peer_gone() ||
          (i < 100 && !s.client.send("X-Slow-" + std::to_string(line) + ": y\r\n"))) {
        s.closed_after = Clock::now() - s.opened;
        --open;
      }
    }
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(open, 0) << "connections the server never closed";
  for (const Slow& s : slow) {
    EXPECT_GE(*s.closed_after, options.header_timeout) << "closed before its deadline";
    EXPECT_EQ(s.client.received(), "") << "a header timeout is a plain close";
  }
  EXPECT_EQ(server.stats().header_timeouts.load(), 110u);
  EXPECT_TRUE(eventually([&] { return server.stats().connections_open.load() == 0; }));
  // A client that sends its request in time is served as ever.
  RawClient prompt(server.port());
  ASSERT_TRUE(prompt.send(kRequest));
  EXPECT_NE(prompt.read_until("\r\n\r\nok").find("HTTP/1.1 200"), std::string::npos);
}

TEST(HttpServerLimits, AKeepAliveConnectionLeftIdleIsClosedAfterTheIdleTimeout) {
  HttpServerOptions options;
  options.idle_timeout = 500ms;
  ServerThread server(answer_ok(), options);
  RawClient client(server.port());
  const Clock::time_point sent = Clock::now();  // the idle time starts later, at the answer
  ASSERT_TRUE(client.send(kRequest));
  ASSERT_NE(client.read_until("\r\n\r\nok").find("\r\n\r\nok"), std::string::npos);
  ASSERT_TRUE(client.closed_by_peer(20s)) << "an idle keep-alive connection stayed open";
  EXPECT_GE(Clock::now() - sent, options.idle_timeout);
  EXPECT_EQ(server.stats().idle_timeouts.load(), 1u);
  EXPECT_EQ(server.stats().header_timeouts.load(), 0u);
}

TEST(HttpServerLimits, OneConnectionOverTheCapIsAnswered503InOpenAiShape) {
  HttpServerOptions options;
  options.max_connections = 5;
  ServerThread server(answer_ok(), options);
  std::vector<RawClient> held;
  for (int i = 0; i < 5; ++i) {
    held.emplace_back(server.port());
    ASSERT_TRUE(held.back().send(kRequest));
    ASSERT_NE(held.back().read_until("\r\n\r\nok").find("200 OK"), std::string::npos);
  }
  RawClient extra(server.port());
  ASSERT_TRUE(extra.send(kRequest));
  ASSERT_TRUE(extra.closed_by_peer(20s)) << "the refused connection stayed open";
  const std::string reply = extra.received();
  EXPECT_EQ(reply.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("Retry-After: 1\r\n"), std::string::npos) << reply;
  EXPECT_NE(reply.find("\r\n\r\n" +
                       error_body(ApiError{503, "ServiceUnavailableError",
                                           "too many connections: this server holds at most 5 "
                                           "at once; retry later",
                                           ""})),
            std::string::npos)
      << reply;
  EXPECT_EQ(server.stats().connections_refused.load(), 1u);
  // The five held connections are still served; once one leaves, a new one is welcome.
  held[0].clear();
  ASSERT_TRUE(held[0].send(kRequest));
  EXPECT_NE(held[0].read_until("\r\n\r\nok").find("200 OK"), std::string::npos);
  held.pop_back();
  ASSERT_TRUE(eventually([&] { return server.stats().connections_open.load() == 4; }));
  RawClient next(server.port());
  ASSERT_TRUE(next.send(kRequest));
  EXPECT_NE(next.read_until("\r\n\r\nok").find("200 OK"), std::string::npos);
}

// A handler that streams `total` bytes in 16 KiB chunks as fast as the exchange takes them,
// honouring backpressure, and records what happened.
struct Producer {
  std::size_t total = 0;
  std::atomic<std::size_t> produced{0};
  std::atomic<int> ends{0};
  std::atomic<bool> aborted{false};

  HttpHandler handler() {
    return [this](const HttpRequest&, std::shared_ptr<Exchange> exchange) {
      exchange->on_end([this](bool was_aborted) {
        aborted = was_aborted;
        ++ends;
      });
      exchange->begin_stream(200, "text/event-stream", {});
      write(exchange);
    };
  }
  void write(const std::shared_ptr<Exchange>& exchange) {
    const std::string chunk(16384, 'x');
    while (produced < total && !exchange->ended()) {
      if (exchange->backlogged()) {
        return exchange->on_drained([this, exchange] { write(exchange); });
      }
      exchange->write_chunk(chunk);
      produced += chunk.size();
    }
    if (produced >= total) exchange->finish();
  }
};

TEST(HttpServerLimits, AClientThatStopsReadingPausesItsStreamThenTimesOut) {
  HttpServerOptions options;
  options.send_queue_limit = 64 * 1024;
  options.write_timeout = 1000ms;
  Producer producer;
  producer.total = std::size_t{256} << 20;
  ServerThread server(producer.handler(), options);
  RawClient reader(server.port(), 4096);  // a small window, and it never reads
  ASSERT_TRUE(reader.send(kRequest));
  ASSERT_TRUE(eventually([&] { return producer.ends.load() == 1; }, 30s))
      << "the stalled stream never ended";
  EXPECT_TRUE(producer.aborted.load());
  EXPECT_EQ(server.stats().write_timeouts.load(), 1u);
  // At most the limit plus the one chunk that crossed it ever waited in the queue.
  EXPECT_LE(server.stats().send_queue_peak_bytes.load(),
            static_cast<std::int64_t>(options.send_queue_limit + 16384 + 1024));
  EXPECT_LT(producer.produced.load(), producer.total) << "the producer never paused";
  EXPECT_TRUE(eventually([&] { return server.stats().send_queue_bytes.load() == 0; }));
  EXPECT_TRUE(eventually([&] { return server.stats().connections_open.load() == 0; }));
}

TEST(HttpServerLimits, APausedStreamResumesAsTheClientReadsAndLosesNothing) {
  HttpServerOptions options;
  options.send_queue_limit = 64 * 1024;
  Producer producer;
  producer.total = std::size_t{8} << 20;
  ServerThread server(producer.handler(), options);
  RawClient reader(server.port(), 4096);
  ASSERT_TRUE(reader.send(kRequest));
  // Let the queue fill and the producer pause before reading at all.
  ASSERT_TRUE(eventually([&] { return server.stats().send_queue_peak_bytes.load() > 0; }));
  std::this_thread::sleep_for(200ms);
  const std::string body = reader.read_until("0\r\n\r\n", 60s);
  ASSERT_NE(body.find("0\r\n\r\n"), std::string::npos) << "the stream did not finish";
  std::size_t payload = 0;  // the x's of the chunks, after the response header
  for (std::size_t i = body.find("\r\n\r\n"); i < body.size(); ++i) payload += body[i] == 'x';
  EXPECT_EQ(payload, producer.total);
  EXPECT_EQ(producer.ends.load(), 1);
  EXPECT_FALSE(producer.aborted.load());
  EXPECT_LE(server.stats().send_queue_peak_bytes.load(),
            static_cast<std::int64_t>(options.send_queue_limit + 16384 + 1024));
}

double thread_cpu_seconds(pthread_t thread) {
  clockid_t clock{};
  if (pthread_getcpuclockid(thread, &clock) != 0) return -1;
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

TEST(HttpServerLimits, OutOfDescriptorsPausesAcceptingWithoutSpinningAndResumes) {
  if (testing::kSanitizedBuild) GTEST_SKIP() << "the sanitizer runtime needs descriptors too";
  ServerThread server(answer_ok());
  RawClient established(server.port());
  ASSERT_TRUE(established.send(kRequest));
  ASSERT_NE(established.read_until("\r\n\r\nok").find("200 OK"), std::string::npos);

  std::optional<RawClient> waiting;
  {
    DescriptorHog hog;
    hog.release_one();  // exactly one left: the client's socket takes it, the server gets none
    waiting.emplace(server.port());  // the kernel completes it; accept() fails with EMFILE
    ASSERT_TRUE(eventually([&] { return server.stats().accept_errors.load() > 0; }))
        << "accept never failed: the descriptors were not exhausted";

    // CPU of the server's io thread over a second of wall time: a spinning accept loop burns a
    // whole core (ratio near 1, or whatever share the machine gives it); backing off, nothing.
    const double cpu_before = thread_cpu_seconds(server.native_handle());
    const Clock::time_point wall_before = Clock::now();
    std::this_thread::sleep_for(1s);
    const double cpu = thread_cpu_seconds(server.native_handle()) - cpu_before;
    const double wall = std::chrono::duration<double>(Clock::now() - wall_before).count();
    EXPECT_LT(cpu / wall, 0.05) << "the io thread spent " << cpu << " s of CPU in " << wall
                                << " s while out of descriptors";

    // The connection already open is still served.
    established.clear();
    ASSERT_TRUE(established.send(kRequest));
    EXPECT_NE(established.read_until("\r\n\r\nok").find("200 OK"), std::string::npos);
  }  // the descriptors come back here
  ASSERT_TRUE(waiting->send(kRequest));
  EXPECT_NE(waiting->read_until("\r\n\r\nok", 20s).find("200 OK"), std::string::npos)
      << "accepting did not resume once descriptors were free";
}

}  // namespace
}  // namespace kvsweep::sim
