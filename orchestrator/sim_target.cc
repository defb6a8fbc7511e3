// The embedded target: a simulated fleet started in this process on loopback.
#include "orchestrator/sim_target.h"

#include <nlohmann/json.hpp>

#include "driver/http_fetch.h"
#include "orchestrator/readiness.h"

namespace kvsweep::orchestrator {
namespace {

constexpr double kAdminTimeoutS = 10;

sim::FleetOptions fleet_options(const TargetSpec& target, const std::string& model,
                                std::uint64_t seed) {
  sim::FleetOptions options;
  options.replicas = target.replicas;
  options.profile = target.profile;
  options.model = model;
  options.seed = seed;
  return options;
}

void post_or_throw(const std::string& url, const std::string& body, const std::string& what) {
  const auto r = driver::http_post_json(url, body, kAdminTimeoutS);
  if (!r.error.empty()) throw TargetError(what + ": " + url + ": " + r.error);
  if (r.status != 200) {
    throw TargetError(what + ": " + url + ": HTTP " + std::to_string(r.status) + ": " +
                      r.body.substr(0, 300));
  }
}

}  // namespace

SimTarget::SimTarget(const TargetSpec& target, const std::string& model, std::uint64_t seed)
    : spec_(target), model_(model), fleet_(fleet_options(target, model, seed)) {}

SimTarget::~SimTarget() = default;

std::string SimTarget::describe() const {
  return "sim x" + std::to_string(spec_.replicas) + " (" + spec_.profile + ")";
}

void SimTarget::start() { fleet_.start(); }

void SimTarget::apply(const Treatment& treatment) {
  const nlohmann::json body{{"strategy", treatment.strategy}};
  post_or_throw(fleet_.router_url() + "/admin/strategy", body.dump(),
                "applying strategy=" + treatment.strategy);
}

void SimTarget::wait_ready(std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> urls = fleet_.replica_urls();
  urls.insert(urls.begin(), fleet_.router_url());
  wait_healthy(urls, deadline);
  check_serves_model(fleet_.router_url(), model_, deadline);
}

void SimTarget::reset_prefix_cache() {
  for (const auto& url : fleet_.replica_urls()) {
    post_or_throw(url + "/reset_prefix_cache", "{}", "resetting the prefix cache");
  }
}

std::string SimTarget::base_url() const { return fleet_.router_url(); }

std::vector<std::string> SimTarget::metrics_urls() const {
  std::vector<std::string> urls;
  for (const auto& url : fleet_.replica_urls()) urls.push_back(url + "/metrics");
  return urls;
}

}  // namespace kvsweep::orchestrator
