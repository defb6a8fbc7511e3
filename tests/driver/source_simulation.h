// Virtual-time runs of a RequestSource for tests: no clock and no sockets, as a predictor runs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "driver/request_source.h"

namespace kvsweep::driver {

inline Workload workload_of(int conversations, int turns) {
  Workload workload;
  for (int c = 0; c < conversations; ++c) {
    Conversation conversation;
    conversation.system_prompt = "sys";
    for (int t = 0; t < turns; ++t) {
      conversation.user.push_back("c" + std::to_string(c) + "u" + std::to_string(t));
      conversation.assistant.push_back("c" + std::to_string(c) + "a" + std::to_string(t));
    }
    workload.conversations.push_back(std::move(conversation));
  }
  return workload;
}

inline LoadOptions open_loop(double rate, std::int64_t requests) {
  LoadOptions options;
  options.base_url = "http://127.0.0.1:1";
  options.request_rate = rate;
  options.num_requests = requests;
  return options;
}

inline LoadOptions closed_loop(int users, std::int64_t requests) {
  LoadOptions options;
  options.base_url = "http://127.0.0.1:1";
  options.concurrency = users;
  options.num_requests = requests;
  return options;
}

struct Sent {
  Job job;
  double sent_s = 0;
  double done_s = 0;
};

// Drives a source in virtual time, as a predictor would: every request takes service_s(job)
// and succeeds unless fail(job). Returns the jobs in the order they were sent.
inline std::vector<Sent> simulate(const LoadOptions& options, const Workload& workload,
                                  const std::function<double(const Job&)>& service_s,
                                  const std::function<bool(const Job&)>& fail = {}) {
  validate_load_options(options, workload);
  RequestSource source(options, workload);
  using Done = std::pair<double, std::int64_t>;  // (time, job index)
  std::priority_queue<Done, std::vector<Done>, std::greater<>> running;
  std::vector<Sent> sent;
  double now = 0;
  for (int step = 0; step < 1000000; ++step) {
    while (std::optional<Job> job = source.next(now)) {
      const double done = now + service_s(*job);
      running.emplace(done, job->index);
      sent.push_back({std::move(*job), now, done});
    }
    if (source.exhausted() && source.in_flight() == 0) return sent;
    double next = std::numeric_limits<double>::infinity();
    if (const auto wake = source.wake_s()) next = *wake;
    if (!running.empty()) next = std::min(next, running.top().first);
    if (std::isinf(next)) {
      ADD_FAILURE() << "stuck at " << now << " with " << source.in_flight() << " in flight";
      return sent;
    }
    EXPECT_GE(next, now);
    now = std::max(now, next);
    while (!running.empty() && running.top().first <= now) {
      const std::int64_t index = running.top().second;
      running.pop();
      const Job& job = sent[static_cast<std::size_t>(index)].job;
      const bool ok = !fail || !fail(job);
      source.complete(index, ok, now, "reply" + std::to_string(index));
    }
  }
  ADD_FAILURE() << "did not finish";
  return sent;
}

}  // namespace kvsweep::driver
