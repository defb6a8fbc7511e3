// Tests for sim/http/site_guard.cc on the servers that use it (issue 28, items 3 and 5): the
// fleet's router and a replica (`sim serve`) and the proxy, on loopback, raw HTTP. A request
// through another name (Host: DNS rebinding), from another site (Origin, Sec-Fetch-Site), with
// two Host or Authorization headers, or an /admin/* body not sent as application/json is
// refused before any route runs; the same request done right is answered.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "sim/fleet.h"
#include "sim/proxy.h"
#include "tests/sim/raw_client.h"

namespace kvsweep::sim {
namespace {

using namespace std::chrono_literals;
using testing::RawClient;

std::string answer(std::uint16_t port, const std::string& method, const std::string& path,
                   const std::string& headers, const std::string& body = "") {
  RawClient client(port);
  client.send(method + " " + path + " HTTP/1.1\r\n" + headers +
              "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  return client.read_response(20s);
}

int status_of(const std::string& response) {
  return response.size() > 12 ? std::stoi(response.substr(9, 3)) : 0;
}

std::uint16_t port_of(const std::string& url) {
  return static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

// Every refusal the guard makes, and its right-done twin answered, on one server.
void expect_guarded(std::uint16_t port, const std::string& server) {
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  const std::string json = "Content-Type: application/json\r\n";
  SCOPED_TRACE(server);
  EXPECT_EQ(status_of(answer(port, "GET", "/health", host)), 200);
  EXPECT_EQ(status_of(answer(port, "GET", "/health", "Host: localhost\r\n")), 200);
  EXPECT_EQ(status_of(answer(port, "GET", "/health", "Host: sim.internal:80\r\n")), 200)
      << "an allowed host";
  // DNS rebinding: a page's own name pointed at 127.0.0.1.
  EXPECT_EQ(status_of(answer(port, "GET", "/health", "Host: attacker.example\r\n")), 403);
  EXPECT_EQ(status_of(answer(port, "GET", "/metrics", "Host: 127.0.0.1:evil.com\r\n")), 403);
  EXPECT_EQ(status_of(answer(port, "GET", "/health", host + "Host: attacker.example\r\n")), 400);
  EXPECT_EQ(status_of(answer(port, "GET", "/health", "")), 400) << "no Host";
  EXPECT_EQ(status_of(answer(port, "GET", "/health",
                             host + "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n")),
            400);
  // A page of another site.
  EXPECT_EQ(status_of(answer(port, "GET", "/v1/models", host + "Origin: https://evil.example\r\n")),
            403);
  EXPECT_EQ(status_of(answer(port, "POST", "/reset_prefix_cache",
                             host + "Sec-Fetch-Site: cross-site\r\n")),
            403);
  EXPECT_EQ(status_of(answer(port, "GET", "/v1/models",
                             host + "Origin: http://127.0.0.1:" + std::to_string(port) + "\r\n")),
            200)
      << "its own origin";
}

// The router's admin routes: a browser's text/plain body (sent cross-site without a
// preflight) is refused 415 even from loopback without Origin; application/json is taken.
void expect_admin_needs_json(std::uint16_t port) {
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  const std::string strategy = R"({"strategy":"random"})";
  for (const std::string path :
       {"/admin/strategy", "/admin/faults", "/admin/engine", "/admin/restart"}) {
    const std::string plain =
        answer(port, "POST", path, host + "Content-Type: text/plain\r\n", "{}");
    EXPECT_EQ(status_of(plain), 415) << path << "\n" << plain;
    EXPECT_NE(plain.find("application/json"), std::string::npos) << path;
    EXPECT_EQ(status_of(answer(port, "POST", path, host, "{}")), 415) << path << ": no type";
    EXPECT_EQ(status_of(answer(port, "POST", path,
                               host + "Content-Type: application/json\r\n"
                                      "Origin: https://evil.example\r\n",
                               "{}")),
              403)
        << path;
  }
  EXPECT_EQ(status_of(answer(port, "POST", "/admin/strategy",
                             host + "Content-Type: application/json; charset=utf-8\r\n", strategy)),
            200);
}

FleetOptions guarded_fleet() {
  FleetOptions options;
  options.replicas = 2;
  options.server.allowed_hosts = {"sim.internal"};
  return options;
}

TEST(SiteGuard, SimServesRouterAndReplicasRefuseOtherSitesAndNames) {
  Fleet fleet(guarded_fleet());
  fleet.start();
  expect_guarded(port_of(fleet.router_url()), "router");
  expect_guarded(port_of(fleet.replica_urls().front()), "replica 0");
  expect_admin_needs_json(port_of(fleet.router_url()));
  fleet.stop();
}

TEST(SiteGuard, TheProxyRefusesOtherSitesAndNames) {
  Fleet upstream(FleetOptions{});
  upstream.start();
  ProxyOptions options;
  options.upstreams = upstream.replica_urls();
  options.port = 0;
  options.server.allowed_hosts = {"sim.internal"};
  Proxy proxy(options);
  proxy.start();
  expect_guarded(port_of(proxy.url()), "proxy");
  expect_admin_needs_json(port_of(proxy.url()));
  proxy.stop();
  upstream.stop();
}

}  // namespace
}  // namespace kvsweep::sim
