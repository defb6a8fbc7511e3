// Turn-major order over a workload's conversations, shuffled (seeded) within each turn.
#include "driver/turn_major_order.h"

#include <algorithm>
#include <random>

#include "driver/datasets/synthetic_text.h"

namespace kvsweep::driver {
namespace {

// derive_seed stream of the within-turn shuffles (datasets use 1..4 for their own streams,
// but they mix a different seed domain: this one is the run's seed).
constexpr std::uint64_t kTurnShuffleStream = 0x7475726e;  // "turn"

}  // namespace

TurnMajorOrder::TurnMajorOrder(const std::vector<Conversation>& conversations, std::uint64_t seed) {
  std::size_t max_turns = 0;
  for (const Conversation& c : conversations) max_turns = std::max(max_turns, c.user.size());
  order_.resize(max_turns);
  rank_.resize(conversations.size());
  for (std::size_t c = 0; c < conversations.size(); ++c) {
    rank_[c].resize(conversations[c].user.size());
    for (std::size_t t = 0; t < conversations[c].user.size(); ++t) {
      order_[t].push_back(static_cast<int>(c));
    }
  }
  shuffled_ = max_turns > 1;
  for (std::size_t t = 0; t < order_.size(); ++t) {
    if (shuffled_) {
      // std::shuffle's algorithm is not pinned by the standard; libstdc++ is our only library.
      std::mt19937_64 rng(derive_seed(seed, kTurnShuffleStream, t));
      std::shuffle(order_[t].begin(), order_[t].end(), rng);
    }
    for (std::size_t r = 0; r < order_[t].size(); ++r) {
      rank_[static_cast<std::size_t>(order_[t][r])][t] = static_cast<int>(r);
    }
  }
}

TurnPosition TurnMajorOrder::at(std::int64_t lap, int turn, int rank) const {
  return {lap, turn, rank, order_[static_cast<std::size_t>(turn)][static_cast<std::size_t>(rank)]};
}

TurnPosition TurnMajorOrder::position(std::int64_t lap, int turn, int conversation) const {
  return at(lap, turn,
            rank_[static_cast<std::size_t>(conversation)][static_cast<std::size_t>(turn)]);
}

TurnPosition TurnMajorOrder::first() const {
  // Every turn list is non-empty up to max_turns: turn t exists because some conversation
  // has at least t + 1 turns. The caller guarantees at least one conversation with a turn.
  return at(0, 0, 0);
}

TurnPosition TurnMajorOrder::after(const TurnPosition& p) const {
  if (static_cast<std::size_t>(p.rank) + 1 < order_[static_cast<std::size_t>(p.turn)].size()) {
    return at(p.lap, p.turn, p.rank + 1);
  }
  if (static_cast<std::size_t>(p.turn) + 1 < order_.size()) return at(p.lap, p.turn + 1, 0);
  return at(p.lap + 1, 0, 0);
}

}  // namespace kvsweep::driver
