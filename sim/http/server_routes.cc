// The HTTP surface every sim server shares: a route table, vLLM's paths, OpenAI-shaped errors.
#include "sim/http/server_routes.h"

namespace kvsweep::sim {

void RouteTable::add(std::string method, std::string path, RouteHandler handler) {
  routes_.push_back(Route{std::move(method), std::move(path), std::move(handler)});
}

void RouteTable::dispatch(const HttpRequest& request, std::shared_ptr<Exchange> exchange) const {
  const std::string_view path = request_path(request);
  for (const Route& route : routes_) {
    if (route.path == path && route.method == request.method) {
      return route.handler(request, std::move(exchange));
    }
  }
  reply_error(*exchange, not_found_error("Not Found: " + request.method + " " + std::string(path)));
}

RouteTable vllm_routes(VllmSurface surface) {
  RouteTable table;
  auto completions = std::move(surface.completions);
  table.add("POST", "/v1/chat/completions",
            [completions](const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
              completions(ApiKind::kChat, request, std::move(exchange));
            });
  table.add("POST", "/v1/completions",
            [completions](const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
              completions(ApiKind::kCompletion, request, std::move(exchange));
            });
  table.add(
      "GET", "/v1/models",
      [models = std::move(surface.models)](const HttpRequest&, std::shared_ptr<Exchange> exchange) {
        models(std::move(exchange));
      });
  table.add("GET", "/health",
            [](const HttpRequest&, std::shared_ptr<Exchange> exchange) { reply_empty(*exchange); });
  table.add("GET", "/metrics",
            [text = std::move(surface.metrics_text)](const HttpRequest&,
                                                     std::shared_ptr<Exchange> exchange) {
              exchange->respond(HttpResponse{200, std::string(kMetricsContentType), text(), {}});
            });
  table.add(
      "POST", "/reset_prefix_cache",
      [reset = std::move(surface.reset_prefix_cache)](
          const HttpRequest&, std::shared_ptr<Exchange> exchange) { reset(std::move(exchange)); });
  return table;
}

std::string_view request_path(const HttpRequest& request) {
  const std::string_view target = request.target;
  return target.substr(0, target.find('?'));
}

void reply_error(Exchange& exchange, const ApiError& error, HttpHeaders headers) {
  exchange.respond(json_response(error.status, error_body(error), std::move(headers)));
}

void reply_empty(Exchange& exchange) { exchange.respond(HttpResponse{200, "", "", {}}); }

void reply_models(Exchange& exchange, const std::vector<std::string>& entries) {
  exchange.respond(json_response(200, models_list_body(entries)));
}

}  // namespace kvsweep::sim
