// Tests for the checks kvsweep serve makes before any route (issue 28, items 3 to 5): requests
// from another site (Origin, Sec-Fetch-Site) and through another name (Host: DNS rebinding)
// refused, with or without a token; Host parsed whole; one Host and one Authorization header;
// bytes that are not UTF-8 in a path or query answered 400 with a JSON error; no absolute store
// path in what a remote client is told. Real server, real store, raw HTTP on loopback.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/web_server.h"
#include "store/store.h"
#include "tests/reports/small_experiment.h"
#include "tests/sim/raw_client.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::serve {
namespace {

using namespace std::chrono_literals;
using sim::testing::RawClient;

constexpr const char* kSiteToken = "site-checks-token-0123456789";

struct SiteAnswer {
  explicit SiteAnswer(const std::string& token = "", bool with_store = true) {
    if (with_store) {
      store::Store store = store::Store::open(db);
      testing::write_small_experiment(store);
    }
    ServeOptions options;
    options.db_path = db;
    options.port = 0;
    options.token = token;
    options.allowed_hosts = {"kvsweep.internal"};
    server = std::make_unique<WebServer>(options);
    port = static_cast<std::uint16_t>(server->start());
  }
  // The whole answer to a request written by hand (headers end with "\r\n").
  std::string raw(const std::string& request_line, const std::string& headers) const {
    RawClient client(port);
    client.send(request_line + "\r\n" + headers + "\r\n");
    return client.read_response(20s);
  }
  int status(const std::string& target, const std::string& headers) const {
    const std::string answer = raw("GET " + target + " HTTP/1.1", headers);
    return answer.size() > 12 ? std::stoi(answer.substr(9, 3)) : 0;
  }
  testing::TempDir dir;
  std::string db = std::filesystem::absolute(dir.file("kvsweep.db")).string();
  std::unique_ptr<WebServer> server;
  std::uint16_t port = 0;
};

const std::string kHost = "Host: 127.0.0.1\r\n";
const std::string kAuth = std::string("Authorization: Bearer ") + kSiteToken + "\r\n";

TEST(ServeSiteChecks, ACrossSiteRequestIsRefusedWithOrWithoutAToken) {
  for (const std::string token : {"", kSiteToken}) {
    SiteAnswer served(token);
    const std::string auth = token.empty() ? "" : kAuth;
    const std::string own = kHost + auth;
    EXPECT_EQ(served.status("/api/experiments", own), 200) << token;
    EXPECT_EQ(served.status("/api/experiments", own + "Origin: http://127.0.0.1\r\n"), 200);
    EXPECT_EQ(served.status("/api/experiments", own + "Sec-Fetch-Site: same-origin\r\n"), 200);
    // A page elsewhere making serve fetch a URL (a port scan by its answers) or reading the API.
    EXPECT_EQ(served.status("/api/live?url=http://127.0.0.1:1/metrics",
                            own + "Origin: https://evil.example\r\n"),
              403)
        << token;
    EXPECT_EQ(served.status("/api/live?url=http://127.0.0.1:1/metrics",
                            own + "Sec-Fetch-Site: cross-site\r\n"),
              403);
    EXPECT_EQ(served.status("/live?urls=http://127.0.0.1:1/metrics",
                            own + "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"),
              403)
        << "following a link to the live page makes it fetch";
    EXPECT_EQ(served.status("/api/experiments", own + "Sec-Fetch-Site: same-site\r\n"), 403);
    // A link followed from elsewhere to a page that fetches nothing still opens.
    EXPECT_EQ(
        served.status("/", own + "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\n"),
        200);
    const std::string login =
        served.raw("POST /login HTTP/1.1",
                   kHost +
                       "Origin: http://evil.example\r\nContent-Type: "
                       "application/x-www-form-urlencoded\r\nContent-Length: 8\r\n\r\ntoken=ab");
    EXPECT_EQ(login.rfind("HTTP/1.1 403", 0), 0u) << login.substr(0, 100);
  }
}

TEST(ServeSiteChecks, AHostThatIsNotThisServersNameIsRefusedWithOrWithoutAToken) {
  for (const std::string token : {"", kSiteToken}) {
    SiteAnswer served(token);
    const std::string auth = token.empty() ? "" : kAuth;
    EXPECT_EQ(served.status("/api/experiments", "Host: localhost:8765\r\n" + auth), 200);
    EXPECT_EQ(served.status("/api/experiments", "Host: [::1]:8765\r\n" + auth), 200);
    EXPECT_EQ(served.status("/api/experiments", "Host: kvsweep.internal\r\n" + auth), 200)
        << "an --allowed-host";
    EXPECT_EQ(served.status("/api/experiments", "Host: attacker.example:8765\r\n" + auth), 403);
    // Only the text before the first ':' was read: this passed as 127.0.0.1.
    EXPECT_EQ(served.status("/api/experiments", "Host: 127.0.0.1:evil.com\r\n" + auth), 403);
    EXPECT_EQ(served.status("/api/experiments", "Host: 127.0.0.1:80:80\r\n" + auth), 403);
    EXPECT_EQ(served.status("/api/experiments", auth), 400) << "no Host";
    // Two Host headers: the first counted, so a second could name anything.
    EXPECT_EQ(served.status("/api/experiments", kHost + "Host: attacker.example\r\n" + auth), 400);
  }
}

TEST(ServeSiteChecks, TwoAuthorizationHeadersAreRefused) {
  SiteAnswer served(kSiteToken);
  EXPECT_EQ(served.status("/api/experiments", kHost + kAuth), 200);
  EXPECT_EQ(served.status("/api/experiments", kHost + kAuth + "Authorization: Bearer x\r\n"), 400);
  EXPECT_EQ(served.status("/api/experiments", kHost + "Authorization: Bearer x\r\n" + kAuth), 400);
}

// Every JSON route with a byte that is not UTF-8 in its path or its query: 400 with a JSON
// error that names the cause, never an empty 500 or the JSON library's words.
TEST(ServeSiteChecks, NonUtf8InAPathOrQueryIs400WithAJsonError) {
  SiteAnswer served;
  const std::vector<std::string> targets = {
      "/api/experiments/%ff",
      "/api/experiments?x=%ff",
      "/api/experiments/1?charts=%ff",
      "/api/experiments/1/cells/%ff",
      "/api/experiments/1/cells/1?charts=%c3%28",
      "/api/compare?a=%ff&b=1",
      "/api/history?scenario=%ff",
      "/api/history?metric=%ed%a0%80",
      "/api/running?charts=%ff",
      "/api/live?url=http://127.0.0.1:1/%ff",
      "/api/live?baseline=1&arm=%ff",
      "/api/live/stream?arm=%ff",
      "/api/no-such-route/%ff",
      "/api/%ff=1",
  };
  for (const std::string& target : targets) {
    const std::string answer = served.raw("GET " + target + " HTTP/1.1", kHost);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << target << "\n" << answer.substr(0, 300);
    const std::size_t body = answer.find("\r\n\r\n");
    ASSERT_NE(body, std::string::npos) << target;
    const auto json = nlohmann::json::parse(answer.substr(body + 4), nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << target << ": " << answer.substr(body + 4);
    EXPECT_NE(json.value("error", "").find("not valid UTF-8"), std::string::npos) << target;
    EXPECT_EQ(answer.find("json.exception"), std::string::npos) << target;
  }
}

// A remote client is told the store's file name, never where it lives on this machine.
TEST(ServeSiteChecks, NoAbsoluteStorePathReachesAClient) {
  SiteAnswer missing("", /*with_store=*/false);
  const std::string parent = std::filesystem::path(missing.db).parent_path().string();
  for (const std::string target : {"/", "/api/experiments", "/api/experiments/1"}) {
    const std::string answer = missing.raw("GET " + target + " HTTP/1.1", kHost);
    EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << target;
    EXPECT_NE(answer.find("kvsweep.db"), std::string::npos) << target;
    EXPECT_EQ(answer.find(parent), std::string::npos) << target << ": " << answer;
  }
  SiteAnswer served;
  const std::string store_parent = std::filesystem::path(served.db).parent_path().string();
  for (const std::string target : {"/api/experiments", "/api/experiments/99", "/experiments/99",
                                   "/api/compare?a=nope&b=1", "/api/live?baseline=99&arm=random"}) {
    const std::string answer = served.raw("GET " + target + " HTTP/1.1", kHost);
    EXPECT_EQ(answer.find(store_parent), std::string::npos) << target << ": " << answer;
  }
}

}  // namespace
}  // namespace kvsweep::serve
