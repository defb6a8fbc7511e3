// A shard plan as JSON: every LoadOptions field a shard's run depends on, and the workload.
#include "driver/shard_plan.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/error_kinds.h"
#include "common/json_text.h"

namespace kvsweep::driver {
namespace {

using nlohmann::json;

constexpr int kPlanVersion = 1;

// JSON has no infinity: an infinite request rate (everything due at once) is written "inf".
json number(double value) { return std::isinf(value) ? json("inf") : json(value); }

class Reader {
 public:
  Reader(const json& object, std::string where) : object_(object), where_(std::move(where)) {
    if (!object_.is_object()) fail("", "expected an object");
  }

  template <class T>
  T get(const char* name, T fallback) const {
    const auto it = object_.find(name);
    if (it == object_.end()) return fallback;
    try {
      return it->template get<T>();
    } catch (const json::exception&) {
      fail(name, "wrong type: " + std::string(it->type_name()));
    }
  }

  double number_or_inf(const char* name, double fallback) const {
    const auto it = object_.find(name);
    if (it != object_.end() && it->is_string() && it->get<std::string>() == "inf") {
      return std::numeric_limits<double>::infinity();
    }
    return get<double>(name, fallback);
  }

  const json& required(const char* name) const {
    const auto it = object_.find(name);
    if (it == object_.end()) fail(name, "missing");
    return *it;
  }

  [[noreturn]] void fail(const std::string& name, const std::string& problem) const {
    throw UsageError(where_ + (name.empty() ? "" : ": " + name) + ": " + problem);
  }

  const std::string& where() const { return where_; }

 private:
  const json& object_;
  std::string where_;
};

json options_json(const LoadOptions& o) {
  json headers = json::array();
  for (const auto& [name, value] : o.headers) headers.push_back({name, value});
  json j = {
      {"base_url", o.base_url},
      {"model", o.model},
      {"headers", headers},
      {"endpoint", o.endpoint == LoadOptions::Endpoint::kChat ? "chat" : "completions"},
      {"stream", o.stream},
      {"max_tokens", o.max_tokens},
      {"max_tokens_cap", o.max_tokens_cap},
      {"ignore_eos", o.ignore_eos},
      {"extra_body_json", o.extra_body_json},
      {"concurrency", o.concurrency},
      {"request_rate", number(o.request_rate)},
      {"burstiness", o.burstiness},
      {"max_concurrency", o.max_concurrency},
      {"seed", o.seed},
      {"shards", o.shard.count},
      {"turns", o.turns == LoadOptions::Turns::kSequential ? "sequential" : "independent"},
      {"think_time_s", o.think_time_s},
      {"num_requests", o.num_requests},
      {"duration_s", o.duration_s},
      {"warmup_requests", o.warmup_requests},
      {"warmup_conversations", o.warmup_conversations},
      {"warmup_s", o.warmup_s},
      {"threads", o.threads},
      {"new_connection_per_request", o.new_connection_per_request},
      {"connect_timeout_s", o.connect_timeout_s},
      {"first_byte_timeout_s", o.first_byte_timeout_s},
      {"request_timeout_s", o.request_timeout_s},
      {"max_event_bytes", o.max_event_bytes},
  };
  if (o.temperature) j["temperature"] = *o.temperature;
  return j;
}

LoadOptions parse_options(const json& j, const std::string& where) {
  const Reader r(j, where);
  LoadOptions o;
  o.base_url = r.get<std::string>("base_url", "");
  o.model = r.get<std::string>("model", "");
  const json& headers = r.required("headers");
  if (!headers.is_array()) r.fail("headers", "expected an array of [name, value]");
  for (const json& h : headers) {
    if (!h.is_array() || h.size() != 2 || !h[0].is_string() || !h[1].is_string()) {
      r.fail("headers", "expected an array of [name, value]");
    }
    o.headers.emplace_back(h[0].get<std::string>(), h[1].get<std::string>());
  }
  const auto endpoint = r.get<std::string>("endpoint", "chat");
  if (endpoint != "chat" && endpoint != "completions") r.fail("endpoint", "unknown " + endpoint);
  o.endpoint =
      endpoint == "chat" ? LoadOptions::Endpoint::kChat : LoadOptions::Endpoint::kCompletions;
  o.stream = r.get<bool>("stream", o.stream);
  o.max_tokens = r.get<int>("max_tokens", o.max_tokens);
  o.max_tokens_cap = r.get<int>("max_tokens_cap", o.max_tokens_cap);
  o.ignore_eos = r.get<bool>("ignore_eos", o.ignore_eos);
  if (j.contains("temperature")) o.temperature = r.get<double>("temperature", 0);
  o.extra_body_json = r.get<std::string>("extra_body_json", "");
  o.concurrency = r.get<int>("concurrency", 0);
  o.request_rate = r.number_or_inf("request_rate", 0);
  o.burstiness = r.get<double>("burstiness", o.burstiness);
  o.max_concurrency = r.get<int>("max_concurrency", 0);
  o.seed = r.get<std::uint64_t>("seed", o.seed);
  o.shard.count = r.get<int>("shards", 1);
  const auto turns = r.get<std::string>("turns", "independent");
  if (turns != "independent" && turns != "sequential") r.fail("turns", "unknown " + turns);
  o.turns =
      turns == "sequential" ? LoadOptions::Turns::kSequential : LoadOptions::Turns::kIndependent;
  o.think_time_s = r.get<double>("think_time_s", 0);
  o.num_requests = r.get<std::int64_t>("num_requests", 0);
  o.duration_s = r.get<double>("duration_s", 0);
  o.warmup_requests = r.get<std::int64_t>("warmup_requests", 0);
  o.warmup_conversations = r.get<int>("warmup_conversations", 0);
  o.warmup_s = r.get<double>("warmup_s", 0);
  o.threads = r.get<int>("threads", 0);
  o.new_connection_per_request = r.get<bool>("new_connection_per_request", false);
  o.connect_timeout_s = r.get<double>("connect_timeout_s", o.connect_timeout_s);
  o.first_byte_timeout_s = r.get<double>("first_byte_timeout_s", 0);
  o.request_timeout_s = r.get<double>("request_timeout_s", o.request_timeout_s);
  o.max_event_bytes = r.get<std::size_t>("max_event_bytes", o.max_event_bytes);
  return o;
}

json workload_json(const Workload& w) {
  json conversations = json::array();
  for (const Conversation& c : w.conversations) {
    json conversation = {{"user", c.user}, {"assistant", c.assistant}};
    if (!c.system_prompt.empty()) conversation["system"] = c.system_prompt;
    if (!c.max_tokens.empty()) conversation["max_tokens"] = c.max_tokens;
    if (c.replies_from_server) conversation["replies_from_server"] = true;
    conversations.push_back(std::move(conversation));
  }
  json j = {{"description", w.description}, {"conversations", std::move(conversations)}};
  if (!w.arrival_s.empty()) j["arrival_s"] = w.arrival_s;
  return j;
}

Workload parse_workload(const json& j, const std::string& where) {
  const Reader r(j, where);
  Workload w;
  w.description = r.get<std::string>("description", "");
  w.arrival_s = r.get<std::vector<double>>("arrival_s", {});
  const json& conversations = r.required("conversations");
  if (!conversations.is_array()) r.fail("conversations", "expected an array");
  w.conversations.reserve(conversations.size());
  for (std::size_t i = 0; i < conversations.size(); ++i) {
    const Reader c(conversations[i], where + ": conversations[" + std::to_string(i) + "]");
    Conversation conversation;
    conversation.system_prompt = c.get<std::string>("system", "");
    conversation.user = c.get<std::vector<std::string>>("user", {});
    conversation.assistant = c.get<std::vector<std::string>>("assistant", {});
    conversation.max_tokens = c.get<std::vector<int>>("max_tokens", {});
    conversation.replies_from_server = c.get<bool>("replies_from_server", false);
    if (conversation.assistant.size() != conversation.user.size()) {
      c.fail("assistant", "expected one reply per user turn");
    }
    w.conversations.push_back(std::move(conversation));
  }
  return w;
}

}  // namespace

std::string shard_plan_json(const ShardPlan& plan) {
  const json j = {{"kvsweep_shard_plan", kPlanVersion},
                  {"options", options_json(plan.options)},
                  {"api_key_env", plan.api_key_env},
                  {"workload", workload_json(plan.workload)}};
  return json_text(j);
}

ShardPlan parse_shard_plan(const std::string& text, const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(where + ": not JSON: " + e.what());
  }
  const Reader r(j, where);
  if (r.get<int>("kvsweep_shard_plan", 0) != kPlanVersion) {
    r.fail("kvsweep_shard_plan", "expected version " + std::to_string(kPlanVersion) +
                                     " (a plan written by another kvsweep?)");
  }
  ShardPlan plan;
  plan.options = parse_options(r.required("options"), where + ": options");
  plan.api_key_env = r.get<std::string>("api_key_env", "");
  plan.workload = parse_workload(r.required("workload"), where + ": workload");
  return plan;
}

}  // namespace kvsweep::driver
