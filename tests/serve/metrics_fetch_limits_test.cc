// Tests for the bounds on what serve's live page fetches (issue 28, item 2): a /metrics source
// that streams 300 MB (a local server started here) is cut at the reply cap, in serve's
// /api/live and in driver::http_get as the runner's scrapes call it, with this process's peak
// RSS (from /proc) kept far below the 300 MB; the source is said to be cut and why; one request
// names at most --max-urls URLs.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "driver/http_fetch.h"
#include "serve/web_server.h"
#include "store/store.h"
#include "tests/reports/small_experiment.h"
#include "tests/sim/raw_client.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::serve {
namespace {

using namespace std::chrono_literals;
using sim::testing::RawClient;

constexpr std::size_t kSourceBytes = std::size_t{300} << 20;
// The most this process's peak RSS may grow while one 300 MB source is read: the cap, the
// server's and curl's buffers, with a wide margin (the sanitizers' shadow memory included).
constexpr std::size_t kRssGrowthBound = std::size_t{64} << 20;

// A /metrics server on loopback whose every reply is 300 MB of Prometheus comment lines, sent
// until the client stops reading; it counts what it sent.
class EndlessMetricsSource {
 public:
  EndlessMetricsSource() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_, 8) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      throw std::runtime_error("cannot listen on loopback");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~EndlessMetricsSource() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }
  std::size_t sent() const { return sent_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) continue;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      const std::string head =
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
      ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
      std::string chunk;
      while (chunk.size() < 65536) chunk += "# HELP padding a line of a reply without end\n";
      std::size_t sent = 0;
      while (sent < kSourceBytes && !stop_) {
        const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      sent_ += sent;
      ::close(fd);
    }
  }
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> sent_{0};
  std::thread thread_;
};

// A field of /proc/self/status in bytes ("VmHWM:    123456 kB").
std::size_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

// Peak RSS from now on: the kernel's high-water mark, reset to the current RSS first.
struct PeakRss {
  PeakRss() {
    std::ofstream("/proc/self/clear_refs") << "5";
    start = status_bytes("VmRSS");
  }
  std::size_t growth() const {
    const std::size_t peak = status_bytes("VmHWM");
    return peak > start ? peak - start : 0;
  }
  std::size_t start = 0;
};

TEST(ServeMetricsFetch, A300MbSourceIsCutAtTheReplyCapAndSaidSo) {
  testing::TempDir dir;
  const std::string db = dir.file("kvsweep.db");
  {
    store::Store store = store::Store::open(db);
    testing::write_small_experiment(store);
  }
  ServeOptions options;
  options.db_path = db;
  options.port = 0;
  options.live.max_reply_bytes = std::size_t{1} << 20;
  options.live.timeout_s = 60;  // only the cap may stop this fetch
  WebServer server(options);
  const auto port = static_cast<std::uint16_t>(server.start());
  EndlessMetricsSource source;

  const PeakRss rss;
  RawClient client(port);
  client.send("GET /api/live?url=" + source.url() + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string answer = client.read_response(120s);
  const std::size_t growth = rss.growth();
  // The source counts what it sent once the client has gone (or it sent everything).
  ASSERT_TRUE(sim::testing::eventually([&] { return source.sent() > 0; }, 60s));
  std::printf(
      "peak RSS growth reading a 300 MB source through /api/live: %zu KiB, source sent %zu KiB\n",
      growth >> 10, source.sent() >> 10);
  ASSERT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer.substr(0, 300);
  const auto view = nlohmann::json::parse(answer.substr(answer.find("\r\n\r\n") + 4));
  const auto& status = view.at("sources").at(0);
  EXPECT_EQ(status.at("url"), source.url());
  EXPECT_TRUE(status.at("stale").get<bool>());
  EXPECT_EQ(status.at("error"), "reply over 1048576 bytes: cut") << status.dump();
  EXPECT_LT(growth, kRssGrowthBound) << "peak RSS grew " << (growth >> 20) << " MiB";
  EXPECT_LT(source.sent(), kSourceBytes) << "the whole 300 MB was read";
}

// The runner's scrapes call driver::http_get without a cap of their own: the default one holds.
TEST(ServeMetricsFetch, TheRunnersFetchIsCappedByDefault) {
  EndlessMetricsSource source;
  const PeakRss rss;
  const driver::HttpResponse reply = driver::http_get(source.url(), 60);
  const std::size_t growth = rss.growth();
  // The source counts what it sent once the client has gone (or it sent everything).
  ASSERT_TRUE(sim::testing::eventually([&] { return source.sent() > 0; }, 60s));
  std::printf(
      "peak RSS growth reading a 300 MB source through http_get: %zu KiB, source sent %zu KiB\n",
      growth >> 10, source.sent() >> 10);
  EXPECT_EQ(reply.error,
            "reply over " + std::to_string(driver::kDefaultMaxReplyBytes) + " bytes: cut");
  EXPECT_TRUE(reply.body.empty());
  EXPECT_LT(growth, kRssGrowthBound) << "peak RSS grew " << (growth >> 20) << " MiB";
  EXPECT_LT(source.sent(), kSourceBytes);
}

TEST(ServeMetricsFetch, OneRequestNamesAtMostMaxUrls) {
  testing::TempDir dir;
  ServeOptions options;
  options.db_path = dir.file("kvsweep.db");
  options.port = 0;
  options.live.max_urls = 3;
  options.live.timeout_s = 0.2;
  WebServer server(options);
  const auto port = static_cast<std::uint16_t>(server.start());
  std::string query;
  for (int i = 0; i < 4; ++i) query += "&url=http://127.0.0.1:1/metrics" + std::to_string(i);
  RawClient client(port);
  client.send("GET /api/live?" + query.substr(1) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string answer = client.read_response(20s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer.substr(0, 300);
  EXPECT_NE(answer.find("at most 3 /metrics URLs in one request (--max-urls)"), std::string::npos)
      << answer;
}

}  // namespace
}  // namespace kvsweep::serve
