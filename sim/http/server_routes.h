// The HTTP surface every sim server shares: a route table, vLLM's paths, OpenAI-shaped errors.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/http/http_exchange.h"
#include "sim/http/openai_api.h"

namespace kvsweep::sim {

using RouteHandler = std::function<void(const HttpRequest&, std::shared_ptr<Exchange>)>;

// Method + path -> handler. The query string is not part of the path. Anything not in the
// table, a known path with another method included, is answered 404 in OpenAI's shape:
// "Not Found: GET /v2/nothing" (vLLM answers an unknown path so too).
// Thread contract: built before serving; dispatch() then runs on the io thread.
class RouteTable {
 public:
  void add(std::string method, std::string path, RouteHandler handler);
  void dispatch(const HttpRequest& request, std::shared_ptr<Exchange> exchange) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    RouteHandler handler;
  };
  std::vector<Route> routes_;
};

// What a vLLM-like server answers; each server (a replica for itself, the router for its
// fleet) says how. Every member must be set.
struct VllmSurface {
  // POST /v1/chat/completions (kChat) and POST /v1/completions (kCompletion).
  std::function<void(ApiKind, const HttpRequest&, std::shared_ptr<Exchange>)> completions;
  // GET /v1/models: answer with reply_models() or reply_error(), now or later.
  std::function<void(std::shared_ptr<Exchange>)> models;
  // GET /metrics: the Prometheus text.
  std::function<std::string()> metrics_text;
  // POST /reset_prefix_cache: answer with reply_empty() once reset, or reply_error().
  std::function<void(std::shared_ptr<Exchange>)> reset_prefix_cache;
};

// A table with the surface's routes and GET /health (200, empty: the server is up when it
// answers at all). Servers add their own routes (the router's /admin/...) to it.
RouteTable vllm_routes(VllmSurface surface);

// The path of a request target: "/admin/health?since=3" -> "/admin/health".
std::string_view request_path(const HttpRequest& request);

// The replies the shared paths give, for handlers answering later.
void reply_error(Exchange& exchange, const ApiError& error, HttpHeaders headers = {});
void reply_empty(Exchange& exchange);  // 200 with no body: /health, /reset_prefix_cache
// 200 with models_list_body(entries) (openai_api.h).
void reply_models(Exchange& exchange, const std::vector<std::string>& entries);
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace kvsweep::sim
