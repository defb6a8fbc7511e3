// What serve's route handlers share, and how they open the store and answer errors.
#include "serve/serve_context.h"

#include <filesystem>
#include <stdexcept>

#include "serve/page_render.h"
#include "serve/store_views.h"

namespace kvsweep::serve {
namespace {

// Kept at most; past this a cache starts over (it only saves recomputing).
constexpr std::size_t kMaxCached = 1024;
constexpr std::size_t kMaxMonitors = 32;
// A monitor nobody polled for this long is dropped with its history.
constexpr double kMonitorIdleS = 600;

bool is_api(const httplib::Request& req) { return req.path.rfind("/api/", 0) == 0; }

}  // namespace

ServeContext::ServeContext(ServeOptions options)
    : options_(std::move(options)), guard_(options_.token) {}

std::string ServeContext::headline(const store::StoreReader& store, const store::ExperimentRow& e) {
  // A cell finishing or an experiment resumed changes the key: the headline is recomputed.
  std::string key = e.status + "|" + e.finished_at;
  for (const auto& c : store.cells(e.id)) key += "|" + c.status + c.finished_at;
  {
    std::lock_guard lock(mutex_);
    const auto it = headlines_.find(e.id);
    if (it != headlines_.end() && it->second.first == key) return it->second.second;
  }
  std::string text = experiment_headline(store, e);
  std::lock_guard lock(mutex_);
  if (headlines_.size() >= kMaxCached) headlines_.clear();
  headlines_[e.id] = {key, text};
  return text;
}

figures::CompareResult ServeContext::compare_runs(const store::StoreReader& store,
                                                  std::int64_t previous, std::int64_t experiment) {
  {
    std::lock_guard lock(mutex_);
    const auto it = compares_.find({previous, experiment});
    if (it != compares_.end()) return it->second;
  }
  figures::CompareResult result = figures::compare_experiments(store, previous, experiment, {});
  const auto a = store.experiment(previous);
  const auto b = store.experiment(experiment);
  const bool settled = a && b && a->status != "running" && b->status != "running";
  std::lock_guard lock(mutex_);
  if (compares_.size() >= kMaxCached) compares_.clear();
  if (settled) compares_[{previous, experiment}] = result;
  return result;
}

std::shared_ptr<LiveMonitor> ServeContext::monitor(const std::vector<std::string>& urls,
                                                   double now_wall_s) {
  std::string key;
  for (const auto& url : urls) key += url + "\n";
  std::lock_guard lock(mutex_);
  for (auto it = monitors_.begin(); it != monitors_.end();) {
    const bool idle = now_wall_s - it->second->last_polled_wall_s() > kMonitorIdleS;
    it = idle && it->first != key ? monitors_.erase(it) : std::next(it);
  }
  auto& slot = monitors_[key];
  if (!slot) {
    if (monitors_.size() > kMaxMonitors) {
      // The least recently polled other monitor goes.
      auto oldest = monitors_.end();
      for (auto it = monitors_.begin(); it != monitors_.end(); ++it) {
        if (it->first == key) continue;
        if (oldest == monitors_.end() ||
            it->second->last_polled_wall_s() < oldest->second->last_polled_wall_s()) {
          oldest = it;
        }
      }
      if (oldest != monitors_.end()) monitors_.erase(oldest);
    }
    monitors_[key] = std::make_shared<LiveMonitor>(urls, options_.live);
  }
  return monitors_[key];
}

std::shared_ptr<void> ServeContext::open_stream(const std::string& client) {
  std::lock_guard lock(mutex_);
  const ServerLimits& limits = options_.limits;
  if (streams_ >= limits.max_streams) {
    throw HttpError{503, std::to_string(streams_) +
                             " live streams are open, the most this server keeps "
                             "(--max-streams); close one or try again later"};
  }
  int& mine = streams_by_client_[client];
  if (mine >= limits.max_streams_per_client) {
    throw HttpError{503, "this client has " + std::to_string(mine) +
                             " live streams open, the most one client may (--max-streams-per-"
                             "client); close one or try again later"};
  }
  ++mine;
  ++streams_;
  return std::shared_ptr<void>(nullptr, [this, client](void*) {
    std::lock_guard release_lock(mutex_);
    --streams_;
    if (--streams_by_client_[client] <= 0) streams_by_client_.erase(client);
  });
}

std::string ServeContext::without_store_path(std::string message) const {
  const std::string& given = options_.db_path;
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(given, ec).lexically_normal().string();
  const std::string name = std::filesystem::path(given).filename().string();
  for (const std::string& path : {absolute, given}) {
    if (path.empty() || path == name) continue;
    for (std::size_t at = message.find(path); at != std::string::npos;
         at = message.find(path, at + name.size())) {
      message.replace(at, path.size(), name);
    }
  }
  return message;
}

store::Store open_store(const ServeContext& context) {
  const std::string& path = context.options().db_path;
  if (!std::filesystem::exists(path)) {
    throw HttpError{503, context.without_store_path("no store at " + path +
                                                    " yet: the first kvsweep run creates it")};
  }
  try {
    return store::Store::open_read_only(path);
  } catch (const std::runtime_error& e) {
    throw HttpError{503, context.without_store_path(e.what())};
  }
}

void send_json(httplib::Response& res, const nlohmann::ordered_json& body) {
  // Bytes that are not UTF-8 (a stored name, say) become U+FFFD rather than an exception.
  res.set_content(body.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n",
                  "application/json");
}

void send_html(httplib::Response& res, const std::string& html) {
  res.set_content(html, "text/html; charset=utf-8");
}

void send_error(const httplib::Request& req, httplib::Response& res, int status,
                const std::string& message) {
  res.status = status;
  if (is_api(req)) {
    send_json(res, {{"error", message}, {"status", status}});
    return;
  }
  const std::string title = status == 404 ? "Not found" : "Error " + std::to_string(status);
  send_html(res, render_page("error", title, "",
                             {{"status", status}, {"title", title}, {"message", message}}));
}

void answer(const httplib::Request& req, httplib::Response& res,
            const std::function<void()>& handler) {
  try {
    handler();
  } catch (const NotFound& e) {
    send_error(req, res, 404, e.message);
  } catch (const HttpError& e) {
    send_error(req, res, e.status, e.message);
  } catch (const std::invalid_argument& e) {
    send_error(req, res, 400, e.what());
  } catch (const nlohmann::ordered_json::exception&) {
    // The JSON library's own words describe this program, not the request.
    send_error(req, res, 500, "this answer could not be encoded as JSON");
  } catch (const std::logic_error& e) {
    send_error(req, res, 500, e.what());
  } catch (const std::exception& e) {
    // SQLite's "database is locked" past the busy timeout, a file gone: try again later.
    send_error(req, res, 503, e.what());
  }
}

}  // namespace kvsweep::serve
