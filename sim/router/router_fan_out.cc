// The router's answers gathered from every replica: /v1/models, /reset_prefix_cache, restart.
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/json_text.h"
#include "sim/router/router.h"

namespace kvsweep::sim {

void Router::fan_out(const HttpRequest& request,
                     std::function<void(std::vector<CollectedResponse>)> done) {
  // On the router's home, where collect_response answers: the gathering needs no lock.
  if (!io_.get_executor().running_in_this_thread()) {
    boost::asio::post(io_, [this, request, done = std::move(done)]() mutable {
      fan_out(request, std::move(done));
    });
    return;
  }
  struct Gather {
    std::vector<CollectedResponse> answers;
    std::size_t missing = 0;
    std::function<void(std::vector<CollectedResponse>)> done;
  };
  auto gather = std::make_shared<Gather>();
  gather->answers.resize(replicas_.size());
  gather->missing = replicas_.size();
  gather->done = std::move(done);
  for (std::size_t r = 0; r < replicas_.size(); ++r) {
    ServingBackend* serving = replicas_[r].serving;
    collect_response(
        io_, request, options_.fan_out_timeout,
        [serving](const HttpRequest& req, std::shared_ptr<Exchange> exchange) {
          serving->handle(req, std::move(exchange));
        },
        [gather, r](CollectedResponse answer) {
          gather->answers[r] = std::move(answer);
          if (--gather->missing == 0) gather->done(std::move(gather->answers));
        });
  }
}

void Router::models(std::shared_ptr<Exchange> exchange) {
  fan_out(HttpRequest{"GET", "/v1/models", "", {}}, [this, exchange](
                                                        std::vector<CollectedResponse> answers) {
    // Each model once, as the first replica that serves it describes it (its fields in its
    // order), in replica order; a replica that does not answer leaves out only its own models.
    std::vector<std::string> entries;
    std::set<std::string> seen;
    std::string failures;
    bool any = false;
    for (std::size_t r = 0; r < answers.size(); ++r) {
      const CollectedResponse& a = answers[r];
      const auto parsed = nlohmann::ordered_json::parse(a.body, nullptr, false);
      if (!a.error.empty() || a.status != 200 || !parsed.is_object() || !parsed.contains("data") ||
          !parsed["data"].is_array()) {
        failures += (failures.empty() ? "" : "; ") + name_of(r) + ": " + describe_collected(a);
        continue;
      }
      any = true;
      for (const auto& entry : parsed["data"]) {
        if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string()) continue;
        if (seen.insert(entry["id"].get<std::string>()).second) entries.push_back(json_text(entry));
      }
    }
    if (!any) {
      return reply_error(*exchange, ApiError{502, "BadGateway", "/v1/models: " + failures, ""});
    }
    reply_models(*exchange, entries);
  });
}

std::string Router::fan_out_failures(const std::vector<CollectedResponse>& answers) const {
  std::size_t failed = 0;
  std::string each;
  for (std::size_t r = 0; r < answers.size(); ++r) {
    const CollectedResponse& a = answers[r];
    failed += a.error.empty() && a.status / 100 == 2 ? 0 : 1;
    each += (each.empty() ? "" : "; ") + name_of(r) + ": " + describe_collected(a);
    if (a.error.empty() && a.status == 404) {
      each += " (vLLM serves this route only with VLLM_SERVER_DEV_MODE=1)";
    }
  }
  if (failed == 0) return "";
  const bool remote = !replicas_.front().address.empty();
  return std::to_string(failed) + " of " + std::to_string(answers.size()) +
         (remote ? " upstreams" : " replicas") + " failed: " + each;
}

void Router::reset_prefix_cache(std::shared_ptr<Exchange> exchange) {
  fan_out(
      HttpRequest{"POST", "/reset_prefix_cache", "", {}},
      [this, exchange](std::vector<CollectedResponse> answers) {
        for (std::size_t r = 0; r < answers.size(); ++r) {
          if (answers[r].error.empty() && answers[r].status / 100 == 2) {
            std::lock_guard lock(mutex_);
            decider_.on_prefix_cache_reset(static_cast<int>(r));
          }
        }
        const std::string failures = fan_out_failures(answers);
        if (failures.empty()) return reply_empty(*exchange);
        reply_error(*exchange, ApiError{502, "BadGateway", "reset_prefix_cache: " + failures, ""});
      });
}

void Router::restart_upstreams(std::shared_ptr<Exchange> exchange) {
  {
    std::lock_guard lock(mutex_);
    decider_.restart();  // forgets the index and session stickiness, as a redeploy would
  }
  fan_out(HttpRequest{"POST", "/reset_prefix_cache", "", {}},
          [this, exchange](std::vector<CollectedResponse> answers) {
            const std::string failures = fan_out_failures(answers);
            if (failures.empty()) {
              return exchange->respond(
                  json_response(200, "{\"restarted\":" + std::to_string(answers.size()) + "}"));
            }
            reply_error(*exchange, ApiError{502, "BadGateway",
                                            "restart: reset_prefix_cache: " + failures, ""});
          });
}

}  // namespace kvsweep::sim
