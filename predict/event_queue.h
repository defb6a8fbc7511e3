// The predictor's clock: events in virtual time, earliest first, ties in the order they were added.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace kvsweep::predict {

// A min-heap of events keyed by (time, insertion number): two events due at the same virtual
// time come out in the order they were pushed, so a run is a fixed function of its inputs
// whatever the heap's internal layout. `Payload` is a small copyable value.
template <typename Payload>
class EventQueue {
 public:
  struct Event {
    double at_s = 0;
    std::uint64_t order = 0;
    Payload payload{};
  };

  void push(double at_s, Payload payload) { heap_.push(Event{at_s, next_order_++, payload}); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  Event pop() {
    Event event = heap_.top();
    heap_.pop();
    return event;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.at_s != b.at_s) return a.at_s > b.at_s;
      return a.order > b.order;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_order_ = 0;
};

}  // namespace kvsweep::predict
