// Plain endpoints: no kubectl; one factor's level picks the URL the load goes to.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/targets/kube/factor_levels.h"
#include "orchestrator/targets/kube/kube_targets.h"
#include "orchestrator/targets/readiness.h"

namespace kvsweep::orchestrator::kube {
namespace {

class EndpointsTarget : public PlannedTarget {
 public:
  EndpointsTarget(const ScenarioSpec& spec, Log log) : spec_(spec), log_(std::move(log)) {
    const TargetSpec& target = spec_.target;
    check_cold_method(spec_, "endpoints", {"reset", "restart"});
    if (target.cold_method == "restart" && scenario_needs_cold(spec_)) {
      throw TargetError(
          "target.cold_method: kind endpoints cannot restart plain endpoints; use "
          "reset (POST /reset_prefix_cache) or a warm / as-is cache");
    }
    const auto factors = target_factors(spec_);
    if (factors.size() > 1) {
      std::vector<std::string> names;
      for (const KnobLevels& f : factors) names.push_back(f.name);
      throw TargetError("factors " + join(names) +
                        ": kind endpoints switches the URL by one factor only (or set "
                        "target.base_url in named arms); the load driver applies concurrency, "
                        "seed and every load.* field");
    }
    if (factors.empty()) {
      require_field(target.base_url, "target.base_url", "endpoints", "where the load goes");
      url_ = target.base_url;
      metrics_ = target.metrics.urls;
      return;
    }
    factor_ = factors.front().name;
    levels_ = factors.front().levels;
    for (const auto& level : levels_) check_level(level);
    select(levels_.front());
  }

  std::string describe() const override {
    if (factor_.empty()) return "endpoints " + url_;
    std::string text = "endpoints by " + factor_ + " (";
    for (std::size_t i = 0; i < levels_.size(); ++i) {
      const std::string& level = levels_[i];
      text += (i == 0 ? "" : ", ") + level + "=" + action(level).base_url;
    }
    return text + ")";
  }

  CommandLogs start() override { return {}; }

  std::vector<std::vector<std::string>> planned_commands(const Treatment* /*previous*/,
                                                         const Treatment& t) const override {
    try {
      const std::string* level = level_of(t);
      if (!t.base_url.empty()) return {{"use", t.base_url}};
      return {{"use", level != nullptr ? action(*level).base_url : default_url()}};
    } catch (const TargetError& e) {
      return {{"<cannot apply: " + std::string(e.what()) + ">"}};
    }
  }

  CommandLogs apply(const Treatment& t) override {
    const std::string* level = level_of(t);
    if (!t.base_url.empty()) {  // an arm's own server
      url_ = t.base_url;
      metrics_ = spec_.target.metrics.urls;
    } else if (level != nullptr) {
      select(*level);
    } else if (factor_.empty()) {
      url_ = spec_.target.base_url;
      metrics_ = spec_.target.metrics.urls;
    }
    return {};
  }

  CommandLogs wait_ready() override {
    const ReadinessSpec& r = spec_.target.readiness;
    wait_model_listed(url_, spec_.model, r.models_s, r.poll_s, *log_);
    wait_completion(url_, spec_.model, r.completion_s, r.poll_s, *log_);
    return {};
  }

  CommandLogs make_cold() override {
    if (spec_.target.cold_method != "reset") {
      throw TargetError(
          "cold: kind endpoints cannot restart plain endpoints; use cold_method "
          "reset");
    }
    reset_prefix_caches({url_}, spec_.target.command_timeout_s, *log_);
    return {};
  }

  Endpoints endpoints() const override { return {url_, metrics_}; }

 private:
  void check_level(const std::string& level) const {
    const auto levels = spec_.target.levels.find(factor_);
    const bool has = levels != spec_.target.levels.end() && levels->second.count(level) > 0;
    if (has && !levels->second.at(level).base_url.empty()) return;
    std::vector<std::string> known;
    if (levels != spec_.target.levels.end()) {
      for (const auto& [name, action] : levels->second) {
        if (!action.base_url.empty()) known.push_back(name);
      }
    }
    throw TargetError("factor " + factor_ + ": level \"" + level + "\" needs target.levels." +
                      factor_ + "." + level + ".base_url (levels with a base_url: " +
                      (known.empty() ? "none" : join(known)) + ")");
  }

  const LevelAction& action(const std::string& level) const {
    return spec_.target.levels.at(factor_).at(level);
  }

  // The treatment's level of the URL factor; nullptr when it sets none. Throws TargetError for
  // a factor or level this target cannot apply.
  const std::string* level_of(const Treatment& t) const {
    const std::string* found = nullptr;
    for (const auto& [name, level] : t.levels) {
      if (name != factor_) {
        throw TargetError("factor " + name + ": kind endpoints " +
                          (factor_.empty() ? "has no factor of its own"
                                           : "switches the URL by " + factor_ + " only"));
      }
      check_level(level);
      found = &level;
    }
    return found;
  }

  std::string default_url() const { return factor_.empty() ? spec_.target.base_url : url_; }

  void select(const std::string& level) {
    const LevelAction& chosen = action(level);
    url_ = chosen.base_url;
    metrics_ = chosen.metrics_urls.empty() ? spec_.target.metrics.urls : chosen.metrics_urls;
  }

  ScenarioSpec spec_;
  Log log_;
  std::string factor_;                // the factor that picks the URL; "" = target.base_url
  std::vector<std::string> levels_;   // its levels, in the order written
  std::string url_;                   // where the load goes now
  std::vector<std::string> metrics_;  // that URL's /metrics
};

}  // namespace

std::unique_ptr<PlannedTarget> make_endpoints_target(const ScenarioSpec& spec, Log log) {
  return std::make_unique<EndpointsTarget>(spec, std::move(log));
}

}  // namespace kvsweep::orchestrator::kube
