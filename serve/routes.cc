// serve's routes: every page, the JSON API behind it, the live stream and the script.
#include <chrono>
#include <limits>
#include <thread>

#include "common/error_kinds.h"
#include "common/wall_clock.h"
#include "reports/html_report.h"
#include "reports/report_view.h"
#include "reports/svg_chart.h"
#include "reports/templates_embedded.h"
#include "serve/compare_view.h"
#include "serve/history_view.h"
#include "serve/live_view.h"
#include "serve/page_render.h"
#include "serve/running_view.h"
#include "serve/serve_context.h"
#include "serve/store_views.h"

namespace kvsweep::serve {
namespace {

using Json = nlohmann::ordered_json;
namespace mustache = kainjow::mustache;

// Page numbers and ids from a route's digits (the route's regex took digits only).
std::int64_t id_of(const httplib::Request& req, std::size_t match) {
  const std::string digits = req.matches[match];
  if (digits.size() > 15) throw NotFound{"no experiment " + digits};
  return std::stoll(digits);
}

bool wants_charts(const httplib::Request& req) { return req.get_param_value("charts") == "svg"; }

std::string param_or(const httplib::Request& req, const char* name, const std::string& fallback) {
  return req.has_param(name) ? req.get_param_value(name) : fallback;
}

int int_param(const httplib::Request& req, const char* name, int fallback) {
  if (!req.has_param(name) || req.get_param_value(name).empty()) return fallback;
  const std::string v = req.get_param_value(name);
  if (v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError(std::string(name) + ": expected a whole number, got \"" + v + "\"");
  }
  return std::stoi(v);
}

// The charts of one cell: its TTFT CDF (drawn from its quantiles), and per replica its share
// of the requests and its cache hit rate.
Json cell_charts(const Json& view) {
  Json charts = Json::array();
  reports::ChartSeries cdf{"TTFT", {}};
  for (const auto& p : view["ttft_cdf"]) cdf.points.push_back({p["ttft_ms"].get<double>(), 0});
  reports::ChartFrame f;
  f.title = "TTFT CDF";
  f.x_label = "TTFT (ms)";
  f.y_label = "fraction of requests";
  charts.push_back({{"svg", reports::svg_cdf_chart(f, {cdf})}});
  reports::BarData replicas;
  replicas.series = {"share of requests", "cache hit (client)"};
  replicas.values.resize(2);
  for (const auto& r : view["replicas"]) {
    replicas.categories.push_back(r["replica"].get<std::string>());
    replicas.values[0].push_back(r["share_pct"].get<double>());
    replicas.values[1].push_back(r["cache_hit_client_pct"].is_null()
                                     ? std::numeric_limits<double>::quiet_NaN()
                                     : r["cache_hit_client_pct"].get<double>());
  }
  f.title = "Per replica: share of requests and cache hit";
  f.x_label = "replica";
  f.y_label = "%";
  charts.push_back({{"svg", reports::svg_grouped_bars(f, replicas)}});
  return charts;
}

void experiments_routes(httplib::Server& server, ServeContext& context) {
  auto list = [&context](const store::StoreReader& store) {
    return experiments_view(
        store, [&](const store::ExperimentRow& e) { return context.headline(store, e); },
        unix_now_s());
  };
  server.Get("/", [&context, list](const httplib::Request& req, httplib::Response& res) {
    answer(req, res, [&] {
      const store::Store store = open_store(context);
      send_html(res, render_page("experiments", "Experiments", "experiments", list(store)));
    });
  });
  server.Get("/api/experiments",
             [&context, list](const httplib::Request& req, httplib::Response& res) {
               answer(req, res, [&] { send_json(res, list(open_store(context))); });
             });
  server.Get(R"(/experiments/(\d+))", [&context](const httplib::Request& req,
                                                 httplib::Response& res) {
    answer(req, res, [&] {
      const store::Store store = open_store(context);
      const std::int64_t id = id_of(req, 1);
      if (!store.experiment(id)) throw NotFound{"no experiment " + std::to_string(id)};
      const figures::ReportModel model = figures::build_report_model(store, id);
      mustache::data report = reports::report_view(model, [](const std::string& s) { return s; });
      mustache::data charts{mustache::data::type::list};
      for (const std::string& svg : reports::report_charts(model)) {
        mustache::data d;
        d.set("svg", svg);  // svg_chart.cc escapes every string it embeds
        charts.push_back(d);
      }
      report.set("charts", charts);
      const Json view = experiment_view(store, model);
      send_html(res, render_page("experiment",
                                 "Experiment " + std::to_string(id) + " " + model.experiment.name,
                                 "experiments", view, report));
    });
  });
  server.Get(R"(/experiments/(\d+)/report\.html)",
             [&context](const httplib::Request& req, httplib::Response& res) {
               answer(req, res, [&] {
                 const store::Store store = open_store(context);
                 const std::int64_t id = id_of(req, 1);
                 if (!store.experiment(id)) throw NotFound{"no experiment " + std::to_string(id)};
                 send_html(res, reports::render_html(store, id));
               });
             });
  server.Get(R"(/api/experiments/(\d+))", [&context](const httplib::Request& req,
                                                     httplib::Response& res) {
    answer(req, res, [&] { send_json(res, experiment_view(open_store(context), id_of(req, 1))); });
  });
  auto cell = [&context](const httplib::Request& req, httplib::Response& res, bool page) {
    answer(req, res, [&] {
      const int k = static_cast<int>(std::min<std::int64_t>(id_of(req, 2), 1 << 30));
      Json view = cell_view(open_store(context), id_of(req, 1), k);
      if (!page) {
        if (wants_charts(req)) view["charts"] = cell_charts(view);
        send_json(res, view);
        return;
      }
      view["charts"] = cell_charts(view);
      send_html(res, render_page("cell",
                                 "Cell " + std::to_string(k) + " of experiment " +
                                     std::to_string(id_of(req, 1)),
                                 "experiments", view));
    });
  };
  server.Get(R"(/experiments/(\d+)/cells/(\d+))",
             [cell](const httplib::Request& req, httplib::Response& res) { cell(req, res, true); });
  server.Get(
      R"(/api/experiments/(\d+)/cells/(\d+))",
      [cell](const httplib::Request& req, httplib::Response& res) { cell(req, res, false); });
}

void compare_routes(httplib::Server& server, ServeContext& context) {
  auto compare = [&context](const httplib::Request& req, httplib::Response& res, bool page) {
    answer(req, res, [&] {
      const store::Store store = open_store(context);
      const std::string a = req.get_param_value("a");
      const std::string b = req.get_param_value("b");
      Json view = {{"choices", experiment_choices(store)}, {"a_query", a}, {"b_query", b}};
      if (!a.empty() && !b.empty()) view["result"] = compare_view(store, a, b, {});
      if (!page) {
        if (!view.contains("result"))
          throw UsageError("give a and b: /api/compare?a=3&b=4 (or 3:1, 4:1 for cells)");
        send_json(res, view["result"]);
        return;
      }
      send_html(res, render_page("compare", "Compare", "compare", view));
    });
  };
  server.Get("/compare", [compare](const httplib::Request& req, httplib::Response& res) {
    compare(req, res, true);
  });
  server.Get("/api/compare", [compare](const httplib::Request& req, httplib::Response& res) {
    compare(req, res, false);
  });
}

void history_routes(httplib::Server& server, ServeContext& context) {
  auto history = [&context](const httplib::Request& req, httplib::Response& res, bool page) {
    answer(req, res, [&] {
      const store::Store store = open_store(context);
      std::string scenario = req.get_param_value("scenario");
      if (scenario.empty()) {
        if (const auto latest = store.latest_experiment()) scenario = latest->name;
      }
      const std::string metric = param_or(req, "metric", "ttft_p95_ms");
      const int window = int_param(req, "window", 5);
      if (window < 1) throw UsageError("window: expected 1 or more");
      std::size_t compared_runs = kDefaultComparedRuns;
      if (param_or(req, "compare", "") == "all") {
        compared_runs = kAllRuns;
      } else {
        // A whole number (int_param refuses anything else, a sign included) or "all".
        compared_runs = static_cast<std::size_t>(
            int_param(req, "compare", static_cast<int>(kDefaultComparedRuns)));
      }
      const Json view = history_view(
          store, scenario, metric, window,
          [&](std::int64_t a, std::int64_t b) { return context.compare_runs(store, a, b); },
          page || wants_charts(req), compared_runs);
      if (page) {
        send_html(res, render_page("history", "History of " + scenario, "history", view));
      } else {
        send_json(res, view);
      }
    });
  };
  server.Get("/history", [history](const httplib::Request& req, httplib::Response& res) {
    history(req, res, true);
  });
  server.Get("/api/history", [history](const httplib::Request& req, httplib::Response& res) {
    history(req, res, false);
  });
}

void running_routes(httplib::Server& server, ServeContext& context) {
  server.Get("/running", [&context](const httplib::Request& req, httplib::Response& res) {
    answer(req, res, [&] {
      const Json view = running_view(open_store(context), unix_now_s(), true);
      // The page's script asks for the changing part alone, once a second.
      const bool fragment = req.get_param_value("fragment") == "1";
      send_html(res, fragment ? reports::render_embedded("serve_running_body.html",
                                                         template_data(view), reports::xml_escape)
                              : render_page("running", "Running", "running", view));
    });
  });
  server.Get("/api/running", [&context](const httplib::Request& req, httplib::Response& res) {
    answer(req, res, [&] {
      send_json(res, running_view(open_store(context), unix_now_s(), wants_charts(req)));
    });
  });
}

// What the live page and its API are asked: the URLs (given, or the running sweep's), and
// the baseline.
struct LiveQuery {
  std::vector<std::string> urls;
  bool follow_running = false;
  std::optional<std::int64_t> experiment_id;
  std::string arm;
  int concurrency = 0;  // 0: the running sweep's, else the baseline's first level
};

LiveQuery live_query(const httplib::Request& req, const LiveSettings& settings) {
  LiveQuery q;
  const auto add_url = [&q, &settings](std::string url) {
    url.erase(0, url.find_first_not_of(" \t\r"));
    url.erase(url.find_last_not_of(" \t\r") + 1);
    if (url.empty()) return;
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      throw UsageError("url: expected an http:// or https:// /metrics URL, got \"" + url + "\"");
    }
    if (q.urls.size() >= settings.max_urls) {
      throw UsageError("url: at most " + std::to_string(settings.max_urls) +
                       " /metrics URLs in one request (--max-urls)");
    }
    q.urls.push_back(url);
  };
  for (std::size_t i = 0; i < req.get_param_value_count("url"); ++i) {
    add_url(req.get_param_value("url", i));
  }
  const std::string lines = req.get_param_value("urls");  // the form's text area, one a line
  for (std::size_t at = 0; at < lines.size();) {
    std::size_t end = lines.find('\n', at);
    if (end == std::string::npos) end = lines.size();
    add_url(lines.substr(at, end - at));
    at = end + 1;
  }
  q.follow_running = req.get_param_value("follow") == "running";
  const std::string baseline = req.get_param_value("baseline");
  if (!baseline.empty()) {
    if (baseline.size() > 15 || baseline.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError("baseline: expected an experiment id, got \"" + baseline + "\"");
    }
    q.experiment_id = std::stoll(baseline);
  }
  q.arm = req.get_param_value("arm");
  q.concurrency = int_param(req, "concurrency", 0);
  return q;
}

// The live view for a query: the monitor's next poll and the baseline at the matching level.
Json live_json(ServeContext& context, const LiveQuery& asked, bool charts) {
  LiveQuery q = asked;
  const double now = unix_now_s();
  Json follow = nullptr;
  std::optional<Baseline> baseline;
  {
    const store::Store store = open_store(context);
    if (q.follow_running) {
      const RunningTarget running = running_target(store);
      follow = {{"experiment_id", running.experiment_id},
                {"concurrency", running.concurrency},
                {"metrics_urls", running.metrics_urls}};
      q.urls.insert(q.urls.end(), running.metrics_urls.begin(), running.metrics_urls.end());
      if (q.concurrency == 0) q.concurrency = running.concurrency;
    }
    if (q.experiment_id && !q.arm.empty()) {
      baseline = find_baseline(store, *q.experiment_id, q.arm, q.concurrency);
    }
  }
  Json view = q.urls.empty() ? live_view(LiveSnapshot{now, {}, {}}, context.options().live,
                                         baseline, now, charts)
                             : live_view(context.monitor(q.urls, now)->poll(now),
                                         context.options().live, baseline, now, charts);
  view["following"] = follow;
  return view;
}

void live_routes(httplib::Server& server, ServeContext& context) {
  server.Get("/live", [&context](const httplib::Request& req, httplib::Response& res) {
    answer(req, res, [&] {
      const LiveQuery q = live_query(req, context.options().live);
      Json view = live_json(context, q, true);
      {
        const store::Store store = open_store(context);
        view["choices"] = baseline_choices(store, q.experiment_id, q.arm, q.concurrency);
      }
      std::string urls;
      for (const auto& u : q.urls) urls += u + "\n";
      view["urls_text"] = urls;
      view["follow_running"] = q.follow_running;
      // The page's script reopens the same query as a stream.
      view["stream_query"] = req.target.substr(
          req.target.find('?') == std::string::npos ? req.target.size() : req.target.find('?'));
      view["watching"] = !q.urls.empty() || q.follow_running;
      send_html(res, render_page("live", "Live vs baseline", "live", view));
    });
  });
  server.Get("/api/live", [&context](const httplib::Request& req, httplib::Response& res) {
    answer(req, res, [&] {
      send_json(res,
                live_json(context, live_query(req, context.options().live), wants_charts(req)));
    });
  });
  // Server-sent events: one `live` event per round of scrapes, until the client goes.
  server.Get("/api/live/stream", [&context](const httplib::Request& req, httplib::Response& res) {
    answer(req, res, [&] {
      const LiveQuery q = live_query(req, context.options().live);
      const bool charts = wants_charts(req);
      // Refused with 503 beyond the bounds: each open stream holds a worker.
      std::shared_ptr<void> place = context.open_stream(req.remote_addr);
      live_json(context, q, charts);  // a bad baseline is answered now, with its status
      res.set_header("Cache-Control", "no-store");
      res.set_chunked_content_provider(
          "text/event-stream", [&context, q, charts, place](std::size_t, httplib::DataSink& sink) {
            if (context.stopping()) return false;
            std::string event;
            try {
              event = "event: live\ndata: " + live_json(context, q, charts).dump() + "\n\n";
            } catch (const std::exception& e) {
              event = "event: error\ndata: " + Json({{"error", e.what()}}).dump() + "\n\n";
            }
            if (!sink.write(event.data(), event.size())) return false;
            const auto until = std::chrono::steady_clock::now() +
                               std::chrono::duration<double>(context.options().live.interval_s);
            while (std::chrono::steady_clock::now() < until) {
              if (context.stopping() || !sink.is_writable()) return false;
              std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            return true;
          });
    });
  });
}

}  // namespace

void add_routes(httplib::Server& server, ServeContext& context) {
  experiments_routes(server, context);
  compare_routes(server, context);
  history_routes(server, context);
  running_routes(server, context);
  live_routes(server, context);
  server.Get("/static/serve.js", [](const httplib::Request&, httplib::Response& res) {
    const auto script = reports::embedded_template("serve.js");
    res.set_content(script ? std::string(*script) : std::string(),
                    "text/javascript; charset=utf-8");
  });
  // Last: anything else is a page that does not exist.
  server.Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    send_error(req, res, 404, "no page " + req.path);
  });
}

}  // namespace kvsweep::serve
