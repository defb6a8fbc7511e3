// Test helpers for whole-fleet tests over loopback: SSE splitting, JSON events, metric scrapes.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/prometheus_text.h"

namespace kvsweep::sim::testing {

// "data: ...\n\n" events of an SSE body, in order.
inline std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> events;
  std::size_t start = 0;
  while (start < body.size()) {
    const std::size_t end = body.find("\n\n", start);
    const std::string event = body.substr(start, end == std::string::npos ? end : end - start);
    if (event.rfind("data: ", 0) == 0) events.push_back(event.substr(6));
    if (end == std::string::npos) break;
    start = end + 2;
  }
  return events;
}

inline double metric_sum(const std::string& url, const std::string& name) {
  httplib::Client client(url);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) throw std::runtime_error("scrape failed: " + url);
  return sum_metric(parse_prometheus_text(res->body), name).value_or(-1);
}

inline std::string metrics_text(const std::string& url) {
  httplib::Client client(url);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) throw std::runtime_error("scrape failed: " + url);
  return res->body;
}

}  // namespace kvsweep::sim::testing
