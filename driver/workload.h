// What a load run replays: conversations, and for trace replay, when each one arrives.
#pragma once

#include <string>
#include <vector>

#include "driver/conversation.h"

namespace kvsweep::driver {

struct Workload {
  std::string description;                  // one line for reports: "sharegpt: 800 conversations"
  std::vector<Conversation> conversations;  // single-turn datasets are conversations of one turn
  // Trace replay only: arrival time of conversation i in seconds from the start of the run
  // (ascending, same size as conversations). Empty for every other dataset.
  std::vector<double> arrival_s;
};

}  // namespace kvsweep::driver
