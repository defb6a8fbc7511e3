// A cell's verdict and replica split, as parts of its summary.
#include "figures/summary_parts.h"

#include <string>

namespace kvsweep::figures {
namespace {

// Aliases, not using-declarations: this file is compiled with others in one unity unit.
using SummaryJson = summary_json::Json;
using SummaryReader = summary_json::Reader;

// The Mann-Kendall test both judgements carry, under "test".
SummaryJson test_to_summary(const TrendTest& t) {
  return {{"points", t.points},
          {"s", summary_json::number(t.s)},
          {"z", summary_json::number(t.z)},
          {"p_upward", summary_json::number(t.p_upward)},
          {"slope_per_s", summary_json::number(t.slope_per_s)}};
}

void test_from_summary(const SummaryReader& parent, TrendTest& out) {
  const SummaryJson* test = parent.object("test");
  if (test == nullptr) return;
  const SummaryReader t = parent.inner("test", *test);
  t.read_int("points", out.points);
  t.read("s", out.s);
  t.read("z", out.z);
  t.read("p_upward", out.p_upward);
  t.read("slope_per_s", out.slope_per_s);
}

SummaryJson trend_to_summary(const RiseJudgement& j) {
  return {{"evaluated", j.evaluated},
          {"rising", j.rising},
          {"points", j.points},
          {"median", summary_json::number(j.median)},
          {"test", test_to_summary(j.test)}};
}

void trend_from_summary(const SummaryReader& parent, const char* key, RiseJudgement& out) {
  const SummaryJson* v = parent.object(key);
  if (v == nullptr) return;
  const SummaryReader r = parent.inner(key, *v);
  r.read("evaluated", out.evaluated);
  r.read("rising", out.rising);
  r.read_int("points", out.points);
  r.read("median", out.median);
  test_from_summary(r, out.test);
}

SummaryJson growth_to_summary(const GrowthJudgement& j) {
  return {{"evaluated", j.evaluated},
          {"rising", j.rising},
          {"points", j.points},
          {"t0", summary_json::number(j.t0)},
          {"t1", summary_json::number(j.t1)},
          {"median", summary_json::number(j.median)},
          {"from", summary_json::number(j.from)},
          {"to", summary_json::number(j.to)},
          {"growth", summary_json::number(j.growth)},
          {"min_growth", summary_json::number(j.min_growth)},
          {"test", test_to_summary(j.test)}};
}

void growth_from_summary(const SummaryReader& parent, const char* key, GrowthJudgement& out) {
  const SummaryJson* v = parent.object(key);
  if (v == nullptr) return;
  const SummaryReader r = parent.inner(key, *v);
  r.read("evaluated", out.evaluated);
  r.read("rising", out.rising);
  r.read_int("points", out.points);
  r.read("t0", out.t0);
  r.read("t1", out.t1);
  r.read("median", out.median);
  r.read("from", out.from);
  r.read("to", out.to);
  r.read("growth", out.growth);
  r.read("min_growth", out.min_growth);
  test_from_summary(r, out.test);
}

CellVerdict summary_verdict_of(const SummaryReader& r, const std::string& name) {
  for (const CellVerdict v : {CellVerdict::kValid, CellVerdict::kClientBound,
                              CellVerdict::kShortOfConcurrency, CellVerdict::kOverCapacity}) {
    if (name == verdict_name(v)) return v;
  }
  r.fail("verdict", "a verdict's name");
}

}  // namespace

SummaryJson validity_to_summary(const CellValidity& v) {
  SummaryJson j = {
      {"load_known", v.load_known},
      {"open_loop", v.open_loop},
      {"request_rate", summary_json::number(v.request_rate)},
      {"cap", v.cap},
      {"in_flight_mean", summary_json::number(v.in_flight_mean)},
      {"in_flight_fraction", summary_json::optional_number(v.in_flight_fraction)},
      {"little_in_flight", summary_json::optional_number(v.little_in_flight)},
      {"send_rate", summary_json::optional_number(v.send_rate)},
      {"scheduled_rate", summary_json::optional_number(v.scheduled_rate)},
      {"backlog_s", summary_json::number(v.backlog_s)},
      {"in_flight_while_backlogged", summary_json::optional_number(v.in_flight_while_backlogged)},
      {"ttft_trend", trend_to_summary(v.ttft_trend)},
      {"backlog_trend", trend_to_summary(v.backlog_trend)},
      {"in_flight_trend", growth_to_summary(v.in_flight_trend)},
      {"window_arrivals", v.window_arrivals},
      {"window_completions", v.window_completions},
      {"completions_short", v.completions_short},
      {"queue_scrapes", v.queue_scrapes},
      {"queue_trend", growth_to_summary(v.queue_trend)},
      {"running_trend", growth_to_summary(v.running_trend)},
      {"in_flight_in_servers", v.in_flight_in_servers},
      {"requests", v.requests},
      {"failed", v.failed},
      {"main_failure", v.main_failure},
      {"driver_measured", v.driver_measured},
      {"driver_cpu_utilisation", summary_json::optional_number(v.driver_cpu_utilisation)},
      {"send_delay_p99_ms", summary_json::optional_number(v.send_delay_p99_ms)},
      {"send_shortfall", summary_json::optional_number(v.send_shortfall)},
      {"stopped_over_capacity", v.stopped_over_capacity},
      {"client_bound", v.client_bound},
      {"short_of_concurrency", v.short_of_concurrency},
      {"over_capacity", v.over_capacity},
      {"verdict", verdict_name(v.verdict)},
      {"reasons", v.reasons},
      {"not_evaluated", v.not_evaluated},
      {"notes", v.notes},
  };
  if (v.steady) {
    const SteadyFigures& s = *v.steady;
    j["steady"] = {{"start_s", summary_json::number(s.start_s)},
                   {"end_s", summary_json::number(s.end_s)},
                   {"requests", s.requests},
                   {"request_throughput", summary_json::number(s.request_throughput)},
                   {"output_throughput", summary_json::number(s.output_throughput)},
                   {"ttft_ms", summary_json::summary(s.ttft_ms)},
                   {"tpot_ms", summary_json::summary(s.tpot_ms)},
                   {"in_flight_mean", summary_json::number(s.in_flight_mean)}};
  } else {
    j["steady"] = nullptr;
  }
  return j;
}

void validity_from_summary(const SummaryReader& r, CellValidity& v) {
  r.read("load_known", v.load_known);
  r.read("open_loop", v.open_loop);
  r.read("request_rate", v.request_rate);
  r.read_int("cap", v.cap);
  r.read("in_flight_mean", v.in_flight_mean);
  r.read("in_flight_fraction", v.in_flight_fraction);
  r.read("little_in_flight", v.little_in_flight);
  r.read("send_rate", v.send_rate);
  r.read("scheduled_rate", v.scheduled_rate);
  r.read("backlog_s", v.backlog_s);
  r.read("in_flight_while_backlogged", v.in_flight_while_backlogged);
  if (const SummaryJson* steady = r.find("steady")) {
    if (steady->is_null()) {
      v.steady.reset();
    } else {
      if (!steady->is_object()) r.fail("steady", "an object or null");
      const SummaryReader s = r.inner("steady", *steady);
      SteadyFigures f;
      s.read("start_s", f.start_s);
      s.read("end_s", f.end_s);
      s.read_int("requests", f.requests);
      s.read("request_throughput", f.request_throughput);
      s.read("output_throughput", f.output_throughput);
      s.read("ttft_ms", f.ttft_ms);
      s.read("tpot_ms", f.tpot_ms);
      s.read("in_flight_mean", f.in_flight_mean);
      v.steady = f;
    }
  }
  trend_from_summary(r, "ttft_trend", v.ttft_trend);
  trend_from_summary(r, "backlog_trend", v.backlog_trend);
  growth_from_summary(r, "in_flight_trend", v.in_flight_trend);
  r.read_int("window_arrivals", v.window_arrivals);
  r.read_int("window_completions", v.window_completions);
  r.read("completions_short", v.completions_short);
  r.read_int("queue_scrapes", v.queue_scrapes);
  growth_from_summary(r, "queue_trend", v.queue_trend);
  growth_from_summary(r, "running_trend", v.running_trend);
  r.read("in_flight_in_servers", v.in_flight_in_servers);
  r.read_int("requests", v.requests);
  r.read_int("failed", v.failed);
  r.read("main_failure", v.main_failure);
  r.read("driver_measured", v.driver_measured);
  r.read("driver_cpu_utilisation", v.driver_cpu_utilisation);
  r.read("send_delay_p99_ms", v.send_delay_p99_ms);
  r.read("send_shortfall", v.send_shortfall);
  r.read("stopped_over_capacity", v.stopped_over_capacity);
  r.read("client_bound", v.client_bound);
  r.read("short_of_concurrency", v.short_of_concurrency);
  r.read("over_capacity", v.over_capacity);
  std::string verdict;
  r.read("verdict", verdict);
  if (!verdict.empty()) v.verdict = summary_verdict_of(r, verdict);
  r.read_strings("reasons", v.reasons);
  r.read_strings("not_evaluated", v.not_evaluated);
  r.read_strings("notes", v.notes);
}

SummaryJson replicas_to_summary(const ReplicaBreakdown& b) {
  SummaryJson replicas = SummaryJson::array();
  for (const ReplicaFigures& f : b.replicas) {
    replicas.push_back({{"replica", f.replica},
                        {"requests", f.requests},
                        {"failed", f.failed},
                        {"share", summary_json::number(f.share)},
                        {"cache_hit_client", summary_json::optional_number(f.cache_hit_client)}});
  }
  SummaryJson sources = SummaryJson::array();
  for (const SourceFigures& f : b.sources) {
    sources.push_back({{"source", f.source},
                       {"queries", summary_json::number(f.queries)},
                       {"share", summary_json::number(f.share)},
                       {"kv_hit_server", summary_json::optional_number(f.kv_hit_server)}});
  }
  return {{"replicas", replicas}, {"sources", sources}};
}

ReplicaBreakdown replicas_from_summary(const SummaryReader& parent, const char* key) {
  ReplicaBreakdown b;
  const SummaryJson* v = parent.object(key);
  if (v == nullptr) return b;
  const SummaryReader r = parent.inner(key, *v);
  const auto each = [&](const char* list, auto&& read_one) {
    const SummaryJson* items = r.find(list);
    if (items == nullptr) return;
    if (!items->is_array()) r.fail(list, "an array");
    for (const SummaryJson& item : *items) {
      if (!item.is_object()) r.fail(list, "an array of objects");
      read_one(r.inner(list, item));
    }
  };
  each("replicas", [&](const SummaryReader& item) {
    ReplicaFigures f;
    item.read("replica", f.replica);
    item.read_int("requests", f.requests);
    item.read_int("failed", f.failed);
    item.read("share", f.share);
    item.read("cache_hit_client", f.cache_hit_client);
    b.replicas.push_back(std::move(f));
  });
  each("sources", [&](const SummaryReader& item) {
    SourceFigures f;
    item.read("source", f.source);
    item.read("queries", f.queries);
    item.read("share", f.share);
    item.read("kv_hit_server", f.kv_hit_server);
    b.sources.push_back(std::move(f));
  });
  return b;
}

}  // namespace kvsweep::figures
