// Turn-major order over a workload's conversations, shuffled (seeded) within each turn.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/conversation.h"

namespace kvsweep::driver {

// Where a turn sits in the open loop's order: lap, then turn, then its rank among the
// conversations that have that turn. Smaller comes first.
struct TurnPosition {
  std::int64_t lap = 0;
  int turn = 0;
  int rank = 0;
  int conversation = 0;

  friend bool operator<(const TurnPosition& a, const TurnPosition& b) {
    if (a.lap != b.lap) return a.lap < b.lap;
    if (a.turn != b.turn) return a.turn < b.turn;
    return a.rank < b.rank;
  }
  friend bool operator>(const TurnPosition& a, const TurnPosition& b) { return b < a; }
};

// Turn 0 of every conversation, then turn 1 of every conversation that has one, and so on,
// lap after lap. Within a turn the conversations come in a seeded shuffle, the same on every
// lap: in file order, turn k of conversation c would be request c + k * N of a lap, so with N
// a multiple of the replica count strict round-robin routing would send every turn of a
// conversation to the same replica (issue 14, item 5). Single-turn workloads keep their own
// order: there is no later turn to line up, and some datasets order prompts on purpose
// (shared-prefix `ordered`, a JSONL file).
// Holds one index per turn of the workload (a permutation per turn and its inverse).
class TurnMajorOrder {
 public:
  TurnMajorOrder(const std::vector<Conversation>& conversations, std::uint64_t seed);

  bool shuffled() const { return shuffled_; }
  int max_turns() const { return static_cast<int>(order_.size()); }

  // The position of `turn` of `conversation` (which must have that turn) in lap `lap`.
  TurnPosition position(std::int64_t lap, int turn, int conversation) const;

  // The first position after `p` in the order (wraps into the next lap).
  TurnPosition after(const TurnPosition& p) const;
  // The first position of the order.
  TurnPosition first() const;

 private:
  TurnPosition at(std::int64_t lap, int turn, int rank) const;

  bool shuffled_ = false;
  std::vector<std::vector<int>> order_;  // order_[turn][rank] = conversation
  std::vector<std::vector<int>> rank_;   // rank_[conversation][turn] = rank
};

}  // namespace kvsweep::driver
