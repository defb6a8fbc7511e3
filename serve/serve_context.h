// What serve's route handlers share: the options, the access guard, the caches of figures that
// no longer change, the live monitors; and how a handler opens the store and answers errors.
#pragma once

#include <httplib.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "figures/compare.h"
#include "serve/access_guard.h"
#include "serve/live_monitor.h"
#include "serve/serve_options.h"
#include "store/store.h"

namespace kvsweep::serve {

// Thread contract: shared by every server thread; each member guards itself.
class ServeContext {
 public:
  explicit ServeContext(ServeOptions options);

  const ServeOptions& options() const { return options_; }
  AccessGuard& guard() { return guard_; }
  bool stopping() const { return stopping_.load(); }
  void stop() { stopping_ = true; }

  // The headline of the experiment list, cached while the experiment's row and cells do not
  // change (a finished experiment's never do).
  std::string headline(const store::StoreReader& store, const store::ExperimentRow& e);
  // `kvsweep compare previous experiment`, cached for runs that are not running.
  figures::CompareResult compare_runs(const store::StoreReader& store, std::int64_t previous,
                                      std::int64_t experiment);
  // The monitor of this set of URLs, made on first use; monitors nobody polled for a while
  // are dropped.
  std::shared_ptr<LiveMonitor> monitor(const std::vector<std::string>& urls, double now_wall_s);
  // A place for one open live stream from `client` (its address), held until the returned
  // handle is destroyed. Throws HttpError 503 when the client or the server has its
  // limits.max_streams_per_client or max_streams open: beyond, a stream would take a worker
  // that other requests need.
  std::shared_ptr<void> open_stream(const std::string& client);
  // `message` with the store's path as given or made absolute shown as its file name only:
  // a remote client learns nothing of this machine's directories.
  std::string without_store_path(std::string message) const;

 private:
  const ServeOptions options_;
  AccessGuard guard_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;                                                       // guards the maps below
  std::map<std::int64_t, std::pair<std::string, std::string>> headlines_;  // id -> (key, text)
  std::map<std::pair<std::int64_t, std::int64_t>, figures::CompareResult> compares_;
  std::map<std::string, std::shared_ptr<LiveMonitor>> monitors_;
  int streams_ = 0;
  std::map<std::string, int> streams_by_client_;
};

// An error a handler answers with its status and message (as a page, or JSON under /api/).
struct HttpError {
  int status;
  std::string message;
};

// Opens the store read-only for one request. 503 when there is none yet or it cannot be read
// (the message says why); a store being written is read as of its last commit.
store::Store open_store(const ServeContext& context);

// Runs `handler`, answering what it throws: NotFound as 404, HttpError as its status,
// std::invalid_argument as 400, anything else from the store as 503; as an HTML page, or as
// {"error": ...} JSON for /api/ paths.
void answer(const httplib::Request& req, httplib::Response& res,
            const std::function<void()>& handler);

void send_json(httplib::Response& res, const nlohmann::ordered_json& body);
void send_html(httplib::Response& res, const std::string& html);
void send_error(const httplib::Request& req, httplib::Response& res, int status,
                const std::string& message);

// Registers every page, API and static route (routes.cc).
void add_routes(httplib::Server& server, ServeContext& context);

}  // namespace kvsweep::serve
