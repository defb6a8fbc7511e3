// What the fleet and the proxy promise hostile or slow peers, over loopback: a stream's memory is
// bounded when its client stops reading (the generation, or the relayed upstream, waits), the
// write timeout ends it, /admin/* needs a token beyond loopback, and several io threads serve
// streams, routing and admin together.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/prometheus_text.h"
#include "sim/fleet.h"
#include "sim/http/openai_api.h"
#include "sim/proxy.h"
#include "tests/sim/descriptor_hog.h"
#include "tests/sim/fleet_client.h"
#include "tests/sim/raw_client.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::sim {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::DescriptorHog;
using testing::eventually;
using testing::metric_sum;
using testing::RawClient;
using testing::sse_data;

json limits_chat(const std::string& user, int max_tokens, bool stream) {
  json body{{"model", "sim-model"},
            {"messages", json::array({json{{"role", "user"}, {"content", user}}})},
            {"max_tokens", max_tokens},
            {"ignore_eos", true},
            {"stream", stream}};
  if (stream) {
    body["stream_options"] = json{{"include_usage", true}, {"continuous_usage_stats", true}};
  }
  return body;
}

std::string post_request(const json& body) {
  const std::string text = body.dump();
  return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
         "application/json\r\n"
         "Content-Length: " +
         std::to_string(text.size()) + "\r\n\r\n" + text;
}

// The body of a chunked HTTP response as the client application sees it.
std::string dechunk(const std::string& response) {
  std::string body;
  std::size_t at = response.find("\r\n\r\n") + 4;
  while (at < response.size()) {
    const std::size_t line_end = response.find("\r\n", at);
    if (line_end == std::string::npos) break;
    const std::size_t size = std::stoul(response.substr(at, line_end - at), nullptr, 16);
    if (size == 0) break;
    body += response.substr(line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
  return body;
}

double limits_metric(const std::string& url, const std::string& name) {
  return metric_sum(url, name);
}

double write_timeouts(const std::string& url) {
  for (const PrometheusSample& s : parse_prometheus_text(testing::metrics_text(url))) {
    if (s.name == "kvsweep_http_timeouts_total" && s.labels.at("phase") == "write") return s.value;
  }
  return -1;
}

// A profile whose steps take 10 us: a stream of thousands of tokens in well under a second,
// so a client that does not read falls behind at once.
class FastProfile {
 public:
  FastProfile() {
    std::ofstream out(dir_.file("fast-test.yaml"));
    out << "name: fast-test\nsource: \"tests/sim/server_limits_test.cc\"\nbase_us: 10\n"
           "per_prefill_token_us: 0\nper_decode_token_us: 0\nmax_num_seqs: 64\n"
           "max_num_batched_tokens: 4096\nnum_gpu_blocks: 8192\nblock_size: 16\n"
           "max_model_len: 65536\ndefault_max_tokens: 64\n";
  }
  FleetOptions fleet(int replicas, int io_threads) const {
    FleetOptions options;
    options.replicas = replicas;
    options.profile = "fast-test";
    options.profile_dirs = {dir_.path().string()};
    options.io_threads = io_threads;
    options.seed = 3;
    return options;
  }

 private:
  kvsweep::testing::TempDir dir_;
};

std::uint16_t port_of(const std::string& url) {
  return static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

TEST(ServerLimits, ABindBeyondLoopbackWithoutAnAdminTokenIsRefusedBeforeBinding) {
  FleetOptions fleet;
  fleet.host = "0.0.0.0";
  try {
    Fleet refused(fleet);
    ADD_FAILURE() << "a fleet on 0.0.0.0 without a token was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("admin_token: host 0.0.0.0 is reachable beyond", 0), 0u)
        << e.what();
  }
  ProxyOptions proxy;
  proxy.upstreams = {"http://127.0.0.1:1"};
  proxy.host = "::";
  EXPECT_THROW(Proxy{proxy}, std::invalid_argument);
  // Any address of 127.0.0.0/8 is loopback: no token needed, and it serves there.
  fleet.host = "127.0.0.2";
  fleet.replicas = 1;
  Fleet loopback(fleet);
  loopback.start();
  EXPECT_EQ(loopback.router_url().rfind("http://127.0.0.2:", 0), 0u);
  httplib::Client client(loopback.router_url());
  auto res = client.Get("/admin/strategy");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
}

TEST(ServerLimits, WithATokenAdminAnswers401UnlessTheRequestCarriesIt) {
  FleetOptions options;
  options.replicas = 1;
  options.admin_token = "s3cret-token";
  Fleet fleet(options);
  fleet.start();
  httplib::Client client(fleet.router_url());
  for (const httplib::Headers& headers :
       {httplib::Headers{}, httplib::Headers{{"Authorization", "Bearer wrong"}},
        httplib::Headers{{"Authorization", "s3cret-token"}}}) {
    auto res = client.Get("/admin/strategy", headers);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 401);
    EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer");
    EXPECT_EQ(json::parse(res->body)["error"]["type"], "AuthenticationError") << res->body;
  }
  auto refused = client.Post("/admin/strategy", R"({"strategy":"random"})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  const httplib::Headers bearer{{"Authorization", "Bearer s3cret-token"}};
  auto res = client.Get("/admin/strategy", bearer);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["strategy"], "round-robin") << "the refused POST changed it";
  // Serving paths stay open.
  for (const char* path : {"/health", "/v1/models", "/metrics"}) {
    auto open = client.Get(path);
    ASSERT_TRUE(open);
    EXPECT_EQ(open->status, 200) << path;
  }
  ProxyOptions proxy;
  proxy.upstreams = fleet.replica_urls();
  proxy.port = 0;
  proxy.admin_token = "other-token";
  Proxy router(proxy);
  router.start();
  httplib::Client proxy_client(router.url());
  auto proxy_res = proxy_client.Post("/admin/restart", "", "application/json");
  ASSERT_TRUE(proxy_res);
  EXPECT_EQ(proxy_res->status, 401);
}

TEST(ServerLimits, ASlowReaderGetsEveryTokenInOrderAfterItsStreamWasPaused) {
  FastProfile profile;
  FleetOptions options = profile.fleet(2, 2);
  options.server.send_queue_limit = 256 * 1024;
  Fleet fleet(options);
  fleet.start();
  const int tokens = 20000;  // megabytes: more than the kernel's socket buffers hold
  RawClient reader(port_of(fleet.router_url()), 4096);
  ASSERT_TRUE(reader.send(post_request(limits_chat("tell me everything", tokens, true))));
  // Not reading yet: the stream fills the queue and its generation waits.
  ASSERT_TRUE(eventually([&] {
    return limits_metric(fleet.router_url(), "kvsweep_http_send_queue_peak_bytes") >=
           options.server.send_queue_limit;
  })) << "the queue never filled";
  reader.set_receive_buffer(1 << 20);
  const std::string reply = reader.read_until("data: [DONE]", 60s);
  const auto events = sse_data(dechunk(reply));
  ASSERT_GE(events.size(), 3u) << reply.substr(0, 400);
  ASSERT_EQ(events.back(), "[DONE]");
  int expected = 0;
  std::string finish;
  for (std::size_t i = 1; i + 2 < events.size(); ++i) {
    const json chunk = json::parse(events[i]);
    EXPECT_EQ(chunk["usage"]["completion_tokens"], ++expected) << events[i];
    if (!chunk["choices"][0]["finish_reason"].is_null())
      finish = chunk["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(expected, tokens);
  EXPECT_EQ(finish, "length");
  EXPECT_EQ(json::parse(events[events.size() - 2])["usage"]["completion_tokens"], tokens);
  EXPECT_LE(limits_metric(fleet.router_url(), "kvsweep_http_send_queue_peak_bytes"),
            options.server.send_queue_limit + 2048);
}

TEST(ServerLimits, AFleetClientThatStopsReadingHoldsABoundedQueueThenTimesOut) {
  FastProfile profile;
  FleetOptions options = profile.fleet(2, 2);
  options.server.send_queue_limit = 32 * 1024;
  options.server.write_timeout = 1000ms;
  Fleet fleet(options);
  fleet.start();
  RawClient stalled(port_of(fleet.router_url()), 4096);
  ASSERT_TRUE(stalled.send(post_request(limits_chat("never read", 30000, true))));
  ASSERT_TRUE(eventually([&] { return write_timeouts(fleet.router_url()) == 1; }, 60s))
      << "the stalled stream was never timed out";
  ASSERT_TRUE(eventually(
      [&] { return limits_metric(fleet.router_url(), "kvsweep_router_in_flight") == 0; }));
  // The engine made tokens far faster than the client took them; only the limit (and the one
  // token chunk that crossed it) ever waited.
  const double peak = limits_metric(fleet.router_url(), "kvsweep_http_send_queue_peak_bytes");
  EXPECT_GE(peak, options.server.send_queue_limit) << "the queue never reached its limit";
  EXPECT_LE(peak, options.server.send_queue_limit + 2048);
  // The queue is freed when the connection is closed, which may come a moment after the
  // router counted the request out.
  EXPECT_TRUE(eventually([&] {
    return limits_metric(fleet.router_url(), "kvsweep_http_send_queue_bytes") == 0;
  })) << "the timed-out stream's queue was never freed";
  // The timed-out request was cancelled in its engine.
  double running = 0;
  for (const std::string& url : fleet.replica_urls()) {
    running += limits_metric(url, "vllm:num_requests_running") +
               limits_metric(url, "vllm:num_requests_waiting");
  }
  EXPECT_EQ(running, 0);
}

// A server that answers the first request on its port with an endless-looking stream, chunked
// or (whole = true) one body of `total` bytes announced by Content-Length, written as fast as
// the kernel takes it, and counts what it wrote.
class FloodingUpstream {
 public:
  explicit FloodingUpstream(std::size_t total, bool whole = false) : total_(total), whole_(whole) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::listen(listener_, 4) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      throw std::runtime_error("flooding upstream: cannot listen");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FloodingUpstream() {
    ::shutdown(listener_, SHUT_RDWR);
    thread_.join();
    ::close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::size_t written() const { return written_; }
  bool done() const { return done_; }

 private:
  void serve() {
    const int fd = ::accept(listener_, nullptr, nullptr);
    if (fd < 0) {
      done_ = true;
      return;
    }
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    const std::string head =
        whole_ ? "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(total_) + "\r\n\r\n"
               : "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: "
                 "chunked\r\n\r\n";
    const std::string chunk =
        whole_ ? std::string(16384, 'x') : "4000\r\n" + std::string(16384, 'x') + "\r\n";
    bool ok = ::send(fd, head.data(), head.size(), MSG_NOSIGNAL) > 0;
    while (ok && written_ < total_) {
      // Blocks once nobody reads: only a close by the proxy ends it early.
      ok = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(chunk.size());
      if (ok) written_ += chunk.size();
    }
    ::close(fd);
    done_ = true;
  }

  std::size_t total_;
  bool whole_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<std::size_t> written_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(ServerLimits, AProxyClientThatStopsReadingStopsTheRelayFromItsUpstream) {
  FloodingUpstream upstream(std::size_t{512} << 20);
  ProxyOptions options;
  options.upstreams = {upstream.url()};
  options.port = 0;
  options.health.probe_interval = 0ms;  // the flooding upstream answers one connection only
  options.server.send_queue_limit = 64 * 1024;
  options.server.write_timeout = 1000ms;
  Proxy proxy(options);
  proxy.start();
  RawClient stalled(port_of(proxy.url()), 4096);
  ASSERT_TRUE(stalled.send(post_request(limits_chat("flood me", 10, true))));
  ASSERT_TRUE(eventually([&] { return upstream.done(); }, 60s))
      << "the upstream was never cut off (wrote " << upstream.written() << " bytes)";
  EXPECT_EQ(write_timeouts(proxy.url()), 1);
  // The proxy read at most the limit plus one 16 KiB read ahead of the client; the rest stayed
  // in the kernel's buffers and the upstream waited (TCP flow control) until the proxy hung up.
  const double peak = limits_metric(proxy.url(), "kvsweep_http_send_queue_peak_bytes");
  EXPECT_GE(peak, options.server.send_queue_limit) << "the queue never reached its limit";
  EXPECT_LE(peak, options.server.send_queue_limit + 16384 + 1024);
  EXPECT_LT(upstream.written(), std::size_t{512} << 20);
  EXPECT_EQ(limits_metric(proxy.url(), "kvsweep_router_in_flight"), 0);
}

// The value of `name` in a raw /metrics response, -1 when absent.
double metric_in(const std::string& response, const std::string& name) {
  const std::size_t body = response.find("\r\n\r\n");
  if (body == std::string::npos) return -1;
  for (const PrometheusSample& s : parse_prometheus_text(response.substr(body + 4))) {
    if (s.name == name) return s.value;
  }
  return -1;
}

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

TEST(ServerLimits, OutOfDescriptorsTheFleetServesItsOpenConnectionsAndHealthOnceTheyReturn) {
  if (testing::kSanitizedBuild) GTEST_SKIP() << "the sanitizer runtime needs descriptors too";
  FleetOptions options;
  options.replicas = 2;
  Fleet fleet(options);
  fleet.start();
  const std::uint16_t port = port_of(fleet.router_url());
  const std::string health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  const std::string metrics = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  RawClient established(port);
  ASSERT_TRUE(established.send(health));
  ASSERT_EQ(established.read_response().rfind("HTTP/1.1 200 OK", 0), 0u);

  std::optional<RawClient> waiting;
  {
    DescriptorHog hog;
    hog.release_one();  // the new client's socket takes the last one; the router's accept fails
    waiting.emplace(port);
    // Over the connection already open: the router counts the failed accept and still answers.
    double accept_errors = 0;
    ASSERT_TRUE(eventually([&] {
      established.clear();
      if (!established.send(metrics)) return false;
      accept_errors = metric_in(established.read_response(), "kvsweep_http_accept_errors_total");
      return accept_errors > 0;
    })) << "accept never failed: the descriptors were not exhausted";
    // CPU of the whole process over a second while this thread sleeps: a spinning accept loop
    // burns what the machine gives it; a paused one next to nothing (the fleet is idle).
    const double cpu_before = process_cpu_seconds();
    const auto wall_before = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(1s);
    const double cpu = process_cpu_seconds() - cpu_before;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
    EXPECT_LT(cpu / wall, 0.05) << "the fleet spent " << cpu << " s of CPU in " << wall
                                << " s while out of descriptors";
    established.clear();
    ASSERT_TRUE(established.send(health));
    EXPECT_EQ(established.read_response().rfind("HTTP/1.1 200 OK", 0), 0u);
  }  // the descriptors come back here
  ASSERT_TRUE(waiting->send(health));
  EXPECT_EQ(waiting->read_response(20s).rfind("HTTP/1.1 200 OK", 0), 0u)
      << "the connection that waited in the backlog was never served";
  httplib::Client client(fleet.router_url());
  auto res = client.Get("/health");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
}

TEST(ServerLimits, AProxyAnswers502RatherThanHoldAWholeUpstreamReplyOver64MiB) {
  FloodingUpstream upstream(std::size_t{256} << 20, /*whole=*/true);
  ProxyOptions options;
  options.upstreams = {upstream.url()};
  options.port = 0;
  options.health.probe_interval = 0ms;  // the flooding upstream answers one connection only
  Proxy proxy(options);
  proxy.start();
  httplib::Client client(proxy.url());
  client.set_read_timeout(60);
  auto res = client.Post("/v1/chat/completions", limits_chat("a huge reply", 10, false).dump(),
                         "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 502);
  EXPECT_NE(res->body.find("reply larger than 64 MiB without chunked encoding"), std::string::npos)
      << res->body.substr(0, 300);
  ASSERT_TRUE(eventually([&] { return upstream.done(); }, 60s)) << "the upstream was not cut off";
  EXPECT_LT(upstream.written(), std::size_t{256} << 20);
}

// Streams from several client threads at once, each checked whole.
void stream_concurrently(const std::string& url, int clients, int tokens,
                         std::set<std::string>* replicas_seen) {
  std::vector<std::thread> threads;
  std::vector<std::string> failures(static_cast<std::size_t>(clients));
  std::vector<std::string> replicas(static_cast<std::size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client(url);
      client.set_read_timeout(60);
      auto res = client.Post("/v1/chat/completions",
                             limits_chat("client " + std::to_string(c), tokens, true).dump(),
                             "application/json");
      auto& failure = failures[static_cast<std::size_t>(c)];
      if (!res) {
        failure = httplib::to_string(res.error());
        return;
      }
      const auto events = sse_data(res->body);
      if (res->status != 200 || events.empty() || events.back() != "[DONE]") {
        failure = "status " + std::to_string(res->status) + ": " + res->body.substr(0, 200);
        return;
      }
      const json usage = json::parse(events[events.size() - 2])["usage"];
      if (usage["completion_tokens"] != tokens) failure = "usage " + usage.dump();
      replicas[static_cast<std::size_t>(c)] = res->get_header_value("x-kvsweep-replica");
    });
  }
  for (auto& thread : threads) thread.join();
  for (int c = 0; c < clients; ++c) {
    EXPECT_EQ(failures[static_cast<std::size_t>(c)], "") << "client " << c;
    replicas_seen->insert(replicas[static_cast<std::size_t>(c)]);
  }
}

TEST(ServerLimits, TwoIoThreadsServeStreamsRoutingAndAdminTogether) {
  FastProfile profile;
  FleetOptions options = profile.fleet(4, 2);
  options.strategy = "kv-aware";  // KV events cross from the replicas' threads to the router
  Fleet fleet(options);
  fleet.start();
  std::set<std::string> seen;
  stream_concurrently(fleet.router_url(), 16, 200, &seen);
  EXPECT_GE(seen.size(), 2u) << "every stream went to one replica";
  httplib::Client client(fleet.router_url());
  for (const char* path : {"/v1/models", "/admin/health", "/admin/faults"}) {
    auto res = client.Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  }
  auto reset = client.Post("/reset_prefix_cache", "", "application/json");
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->status, 200) << reset->body;
  auto restart = client.Post("/admin/restart", "", "application/json");
  ASSERT_TRUE(restart);
  EXPECT_EQ(restart->status, 200);
  // A replica taken down from the router's admin (its thread closes its port) and back.
  auto down = client.Post("/admin/faults", R"({"replica": 1, "down": true})", "application/json");
  ASSERT_TRUE(down);
  EXPECT_EQ(down->status, 200);
  httplib::Client direct(fleet.replica_urls()[1]);
  EXPECT_FALSE(direct.Get("/health")) << "a replica that is down still answers on its port";
  auto up = client.Post("/admin/faults", R"({"replica": 1, "down": false})", "application/json");
  ASSERT_TRUE(up);
  auto health = direct.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  seen.clear();
  stream_concurrently(fleet.router_url(), 8, 50, &seen);
  EXPECT_TRUE(eventually(
      [&] { return limits_metric(fleet.router_url(), "kvsweep_router_in_flight") == 0; }));

  // The proxy over this fleet's replicas, on two threads too.
  ProxyOptions proxy_options;
  proxy_options.upstreams = fleet.replica_urls();
  proxy_options.port = 0;
  proxy_options.io_threads = 2;
  proxy_options.strategy = "least-load";
  Proxy proxy(proxy_options);
  proxy.start();
  seen.clear();
  stream_concurrently(proxy.url(), 12, 100, &seen);
  EXPECT_GE(seen.size(), 2u);
  EXPECT_TRUE(
      eventually([&] { return limits_metric(proxy.url(), "kvsweep_router_in_flight") == 0; }));
}

// Found by fuzz_sim_http: a request path that is not UTF-8 made the 404's JSON body throw
// inside the handler, which ended the whole fleet. The answer is JSON with U+FFFD instead.
TEST(ServerLimits, APathThatIsNotUtf8GetsAJson404AndTheFleetServesOn) {
  FleetOptions options;
  options.replicas = 1;
  Fleet fleet(options);
  fleet.start();
  for (const std::string& url : {fleet.router_url(), fleet.replica_urls().front()}) {
    RawClient client(port_of(url));
    ASSERT_TRUE(
        client.send("GET /v1/\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
    const std::string response = client.read_response();
    ASSERT_NE(response.find("HTTP/1.1 404"), std::string::npos) << url << ": " << response;
    const std::string body = response.substr(response.find("\r\n\r\n") + 4);
    const json parsed = json::parse(body);
    EXPECT_NE(parsed["error"]["message"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos)
        << body;
  }
  httplib::Client client(fleet.router_url());
  auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

}  // namespace
}  // namespace kvsweep::sim
