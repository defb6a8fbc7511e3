// Tests predict/event_queue.h: earliest first, ties in the order pushed.
#include "predict/event_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvsweep::predict {
namespace {

TEST(EventQueue, EarliestFirstAndTiesInPushOrder) {
  EventQueue<int> q;
  q.push(2.0, 1);
  q.push(1.0, 2);
  q.push(2.0, 3);
  q.push(1.0, 4);
  q.push(0.5, 5);
  std::vector<int> order;
  std::vector<double> times;
  while (!q.empty()) {
    const auto e = q.pop();
    order.push_back(e.payload);
    times.push_back(e.at_s);
  }
  EXPECT_EQ(order, (std::vector<int>{5, 2, 4, 1, 3}));
  EXPECT_EQ(times, (std::vector<double>{0.5, 1.0, 1.0, 2.0, 2.0}));
}

}  // namespace
}  // namespace kvsweep::predict
