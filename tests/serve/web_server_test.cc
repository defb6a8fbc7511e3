// Tests for serve/web_server.cc and its routes over a real store in a temp dir,
// through real HTTP on loopback: the token on every route, the bind policy, 404s, a store
// being written, the JSON API, the live stream and a /metrics URL that does not answer.
#include "serve/web_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "figures/run_comparison.h"
#include "store/sqlite_handles.h"
#include "tests/reports/small_experiment.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::serve {
namespace {

using Json = nlohmann::json;
constexpr const char* kServeToken = "serve-test-token-0123456789";

// Every route a browser or a script may ask for, good ids and bad.
const std::vector<std::string>& every_route() {
  static const std::vector<std::string> kRoutes = {
      "/",
      "/experiments/1",
      "/experiments/1/report.html",
      "/experiments/1/cells/2",
      "/compare?a=1&b=1",
      "/history",
      "/running",
      "/running?fragment=1",
      "/live",
      "/live?baseline=1&arm=random",
      "/static/serve.js",
      "/api/experiments",
      "/api/experiments/1",
      "/api/experiments/1/cells/1",
      "/api/compare?a=1&b=1",
      "/api/history",
      "/api/running",
      "/api/live",
      "/api/live/stream",
      "/experiments/99",
      "/no-such-page",
      "/login",
  };
  return kRoutes;
}

struct Served {
  explicit Served(const std::string& token = "", bool with_store = true) {
    if (with_store) {
      store::Store store = store::Store::open(db);
      testing::write_small_experiment(store);
    }
    ServeOptions options;
    options.db_path = db;
    options.port = 0;
    options.token = token;
    server = std::make_unique<WebServer>(options);
    port = server->start();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    return c;
  }
  testing::TempDir dir;
  std::string db = dir.file("kvsweep.db");
  std::unique_ptr<WebServer> server;
  int port = 0;
};

TEST(WebServer, ANonLoopbackBindWithoutATokenIsRefused) {
  ServeOptions options;
  options.bind = "0.0.0.0";
  try {
    WebServer server(options);
    FAIL() << "expected a refusal";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--token-env"), std::string::npos) << e.what();
  }
  options.token = "short";
  EXPECT_THROW(WebServer{options}, std::invalid_argument);
}

TEST(WebServer, WithATokenEveryRouteWithoutItAnswers401) {
  Served served(kServeToken);
  httplib::Client c = served.client();
  for (const std::string& route : every_route()) {
    const auto res = c.Get(route.c_str());
    ASSERT_TRUE(res) << route;
    EXPECT_EQ(res->status, 401) << route;
    EXPECT_EQ(res->body.find("small-sim"), std::string::npos) << route << " leaked the store";
    const auto wrong = c.Get(route.c_str(), {{"Authorization", "Bearer not-the-token-at-all"}});
    EXPECT_EQ(wrong->status, 401) << route;
  }
  const auto post = c.Post("/login", "token=wrong", "application/x-www-form-urlencoded");
  EXPECT_EQ(post->status, 401);
}

TEST(WebServer, TheTokenOrTheOneTimeLoginLetsIn) {
  Served served(kServeToken);
  httplib::Client c = served.client();
  const httplib::Headers bearer = {{"Authorization", std::string("Bearer ") + kServeToken}};
  EXPECT_EQ(c.Get("/", bearer)->status, 200);
  EXPECT_EQ(c.Get("/api/experiments/1", bearer)->status, 200);

  const std::string login = served.server->one_time_login_url();
  ASSERT_NE(login.find("/login?once="), std::string::npos);
  EXPECT_EQ(login.find(kServeToken), std::string::npos);
  const std::string path = login.substr(login.find("/login"));
  const auto first = c.Get(path.c_str());
  ASSERT_EQ(first->status, 303);
  const std::string cookie = first->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  const std::string session = cookie.substr(0, cookie.find(';'));
  EXPECT_EQ(c.Get("/api/experiments", {{"Cookie", session}})->status, 200);
  EXPECT_EQ(c.Get(path.c_str())->status, 401);  // spent

  const auto posted =
      c.Post("/login", std::string("token=") + kServeToken, "application/x-www-form-urlencoded");
  ASSERT_EQ(posted->status, 303);
}

TEST(WebServer, PagesCarryTheirCspAndUnknownIdsAre404Pages) {
  Served served;
  httplib::Client c = served.client();
  const auto page = c.Get("/experiments/1");
  ASSERT_EQ(page->status, 200);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
  EXPECT_NE(page->body.find("Experiment 1: small-sim"), std::string::npos);
  EXPECT_NE(page->body.find("<svg"), std::string::npos);
  for (const char* missing : {"/experiments/99", "/experiments/1/cells/9", "/nope",
                              "/experiments/99/report.html", "/compare?a=1&b=77"}) {
    const auto res = c.Get(missing);
    EXPECT_EQ(res->status, 404) << missing;
    EXPECT_NE(res->body.find("<h1>Not found</h1>"), std::string::npos) << missing;
  }
  const auto api = c.Get("/api/experiments/99");
  EXPECT_EQ(api->status, 404);
  EXPECT_EQ(Json::parse(api->body)["error"], "no experiment 99 in kvsweep.db");  // no directory
  EXPECT_EQ(c.Get("/live?baseline=1&arm=nope")->status, 404);
  EXPECT_EQ(c.Get("/api/history?window=x")->status, 400);
}

TEST(WebServer, AMissingStoreIsSaidNotCreated) {
  Served served("", /*with_store=*/false);
  httplib::Client c = served.client();
  const auto res = c.Get("/");
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("the first kvsweep run creates it"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(served.db));
}

TEST(WebServer, AnOpenServerAnswersLoopbackHostNamesOnly) {
  Served served;
  httplib::Client c = served.client();
  EXPECT_EQ(c.Get("/", {{"Host", "localhost:8765"}})->status, 200);
  // A page of another site that rebound its DNS name to 127.0.0.1.
  EXPECT_EQ(c.Get("/api/experiments", {{"Host", "attacker.example:8765"}})->status, 403);
}

// A sweep holding the store's write lock (recording a cell) does not hold a page up.
TEST(WebServer, AStoreBeingWrittenStillAnswers) {
  Served served;
  store::SqliteDb writer = store::SqliteDb::open(served.db);
  store::Transaction recording(writer);
  writer.exec("INSERT INTO experiments (name, status) VALUES ('uncommitted', 'running')");
  httplib::Client c = served.client();
  const auto res = c.Get("/api/experiments");
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(Json::parse(res->body)["experiments"].size(), 1u);
}

TEST(WebServer, TheApiNamesWhatThePagesShow) {
  Served served;
  httplib::Client c = served.client();
  const Json list = Json::parse(c.Get("/api/experiments")->body);
  ASSERT_EQ(list["experiments"].size(), 1u);
  const Json& e = list["experiments"][0];
  EXPECT_EQ(e["name"], "small-sim");
  EXPECT_EQ(e["status"], "done");
  EXPECT_EQ(e["cells_done"], 4);
  EXPECT_EQ(e["cells_total"], 4);
  EXPECT_EQ(e["duration_s"], 730.0);  // 04:30:00 to 04:42:10
  EXPECT_NE(e["headline"].get<std::string>().find("Concurrency 16"), std::string::npos);

  const Json cell = Json::parse(c.Get("/api/experiments/1/cells/4?charts=svg")->body);
  EXPECT_EQ(cell["strategy"], "prefix-hash");
  EXPECT_EQ(cell["concurrency"], 16);
  EXPECT_EQ(cell["replicas"].size(), 2u);
  EXPECT_EQ(cell["ttft_cdf"].size(), 201u);
  EXPECT_EQ(cell["charts"].size(), 2u);

  EXPECT_EQ(Json::parse(c.Get("/api/compare?a=small-sim~0&b=1")->body)["a"],
            "experiment 1 (small-sim, simulated)");
  EXPECT_EQ(c.Get("/api/compare?a=small-sim~1&b=1")->status, 404);  // one run only
  const Json compare = Json::parse(c.Get("/api/compare?a=1:1&b=1:3")->body);
  EXPECT_EQ(compare["a"], "experiment 1 cell 1 (simulated)");
  EXPECT_FALSE(compare["rows"].empty());

  const Json running = Json::parse(c.Get("/api/running")->body);
  EXPECT_EQ(running["any_running"], false);
  EXPECT_EQ(running["latest"]["id"], 1);
}

// The history page compares only the newest runs by default (a year of nights would take
// minutes); compare=N and compare=all widen it, and a point not compared says so.
TEST(WebServer, HistoryComparesTheNewestRunsAndSaysWhichWereNot) {
  Served served;
  {
    store::Store store = store::Store::open(served.db);
    for (int night = 0; night < 3; ++night) testing::write_small_experiment(store);
  }
  httplib::Client c = served.client();
  auto compared_by_run = [&c](const std::string& query) {
    const auto res = c.Get("/api/history?scenario=small-sim" + query);
    EXPECT_EQ(res->status, 200) << query;
    const Json view = Json::parse(res->body);
    std::map<std::int64_t, bool> out;
    for (const auto& series : view["series"]) {
      for (const auto& point : series["points"]) {
        const bool compared = point["compared"].get<bool>();
        out[point["experiment_id"].get<std::int64_t>()] = compared;
        // The same figures compared with themselves: no regression; not compared: null.
        if (compared) {
          EXPECT_EQ(point["regression"], false) << query;
        } else {
          EXPECT_TRUE(point["regression"].is_null()) << query;
        }
      }
    }
    EXPECT_EQ(view["runs"], 4) << query;
    return std::make_pair(out, view["compared_runs"].get<int>());
  };
  using Marks = std::map<std::int64_t, bool>;
  EXPECT_EQ(compared_by_run(""),
            std::make_pair(Marks{{1, false}, {2, true}, {3, true}, {4, true}}, 3));
  EXPECT_EQ(compared_by_run("&compare=2"),
            std::make_pair(Marks{{1, false}, {2, false}, {3, true}, {4, true}}, 2));
  EXPECT_EQ(compared_by_run("&compare=0"),
            std::make_pair(Marks{{1, false}, {2, false}, {3, false}, {4, false}}, 0));
  EXPECT_EQ(compared_by_run("&compare=all"),
            std::make_pair(Marks{{1, false}, {2, true}, {3, true}, {4, true}}, 3));
  const auto bad = c.Get("/api/history?compare=-1");
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("compare: expected a whole number"), std::string::npos);
  const auto page = c.Get("/history?scenario=small-sim&compare=1");
  ASSERT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("1 of the 4 runs are compared"), std::string::npos);
  EXPECT_NE(page->body.find("not compared"), std::string::npos);
}

// A run's comparison stored when it ended is read, not computed again, however old the run:
// a stored regression a compare of these identical runs would not find shows, and a row made
// against another run or with other options is not used.
TEST(WebServer, HistoryReadsTheComparisonsStoredWhenRunsEnded) {
  Served served;
  {
    store::Store store = store::Store::open(served.db);
    for (int night = 0; night < 3; ++night) testing::write_small_experiment(store);
    const std::string options = figures::compare_options_key({});
    store.set_run_comparison({2, 1, "2026-11-22T05:00:00Z", options, "[]"});
    store.set_run_comparison(
        {3, 2, "2026-11-22T05:00:00Z", options,
         figures::regressions_to_json({{"random", 16, {"ttft_p95_ms", "ttft_mean_ms"}}})});
    store.set_run_comparison({4, 2, "2026-11-22T05:00:00Z", options, "[]"});  // not run 3
  }
  httplib::Client c = served.client();
  const Json view =
      Json::parse(c.Get("/api/history?scenario=small-sim&metric=ttft_p95_ms&compare=0")->body);
  EXPECT_EQ(view["compared_runs"], 2);
  int regressions = 0;
  for (const auto& series : view["series"]) {
    for (const auto& point : series["points"]) {
      const auto run = point["experiment_id"].get<int>();
      EXPECT_EQ(point["compared"], run == 2 || run == 3) << run;
      const bool marked = run == 3 && series["strategy"] == "random" && series["concurrency"] == 16;
      if (point["compared"].get<bool>()) {
        EXPECT_EQ(point["regression"], marked) << run;
      }
      if (marked) {
        ++regressions;
        EXPECT_EQ(point["regressed_metrics"], "ttft_p95_ms, ttft_mean_ms");
      }
    }
  }
  EXPECT_EQ(regressions, 1);
  // With compare=1 the run whose stored row does not fit is compared here: no regression.
  const Json widened = Json::parse(c.Get("/api/history?scenario=small-sim&compare=1")->body);
  EXPECT_EQ(widened["compared_runs"], 3);
}

// A tiny /metrics server on loopback whose TTFT histogram grows between scrapes.
struct MetricsServer {
  MetricsServer() {
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      const int n = scrapes++ * 10;
      res.set_content("vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} " + std::to_string(n) +
                          "\nvllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} " +
                          std::to_string(n) + "\n",
                      "text/plain");
    });
    port = http.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { http.listen_after_bind(); });
    while (!http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~MetricsServer() {
    http.stop();
    thread.join();
  }
  httplib::Server http;
  std::atomic<int> scrapes{0};
  int port = 0;
  std::thread thread;
};

TEST(WebServer, TheLiveStreamSendsEventsAndADeadUrlIsStale) {
  MetricsServer metrics;
  testing::TempDir dir;
  {
    store::Store store = store::Store::open(dir.file("kvsweep.db"));
    testing::write_small_experiment(store);
  }
  ServeOptions options;
  options.db_path = dir.file("kvsweep.db");
  options.port = 0;
  options.live.interval_s = 0.5;
  options.live.timeout_s = 0.3;
  WebServer server(options);
  const int port = server.start();
  // A port nothing listens on (connections refused), and one that accepts connections but
  // never answers (httplib's listening socket, its accept loop never run): both are stale.
  int refused_port = 0;
  {
    httplib::Server closed;
    refused_port = closed.bind_to_any_port("127.0.0.1");
    closed.stop();  // closes the listening socket
  }
  httplib::Server silent;
  const int silent_port = silent.bind_to_any_port("127.0.0.1");
  auto url = [](int p) { return "http://127.0.0.1:" + std::to_string(p) + "/metrics"; };
  const std::string query = "?baseline=1&arm=random&concurrency=8&url=" + url(metrics.port) +
                            "&url=" + url(refused_port) + "&url=" + url(silent_port);
  std::string stream;
  int events = 0;
  {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(10, 0);
    c.Get(("/api/live/stream" + query).c_str(), [&](const char* data, std::size_t size) {
      stream.append(data, size);
      events = 0;
      for (auto at = stream.find("event: live"); at != std::string::npos;
           at = stream.find("event: live", at + 1)) {
        ++events;
      }
      return events < 3;  // three rounds of scrapes, then hang up
    });
  }
  ASSERT_GE(events, 3) << stream;
  const std::string last = stream.substr(stream.rfind("data: ") + 6);
  const Json view = Json::parse(last.substr(0, last.find('\n')));
  EXPECT_EQ(view["sources"][0]["stale"], false);
  EXPECT_EQ(view["sources"][1]["stale"], true);
  EXPECT_FALSE(view["sources"][1]["error"].get<std::string>().empty());
  EXPECT_EQ(view["sources"][2]["stale"], true);
  EXPECT_FALSE(view["sources"][2]["error"].get<std::string>().empty());
  EXPECT_EQ(view["fresh_sources"], 1);
  EXPECT_DOUBLE_EQ(view["latest"]["ttft_p50_ms"].get<double>(), 50);  // all <= 0.1 s
  EXPECT_EQ(view["baseline"]["arm"], "random");
  EXPECT_EQ(view["baseline"]["concurrency"], 8);
  EXPECT_TRUE(view["baseline"]["ttft_p50_ms"].is_number());
  server.stop();  // with the stream gone, stop returns
}

}  // namespace
}  // namespace kvsweep::serve
