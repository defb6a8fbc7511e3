// VirtualFlight: one request of a virtual run between its send and its record's completion.
#pragma once

#include <cstdint>
#include <string>

#include "predict/replica_request.h"
#include "sim/router/route_decider.h"

namespace kvsweep::predict {

// What the schedule (virtual_load.cc) learns of a request as its events happen, and the
// bookkeeping (virtual_records.h) turns into its record. Times are the fleet's absolute
// virtual seconds.
struct VirtualFlight {
  ReplicaRequest request;
  bool wants_reply = false;
  sim::RouteDecision decision;
  bool routed = false;       // the router counted it (on_routed)
  bool server_done = false;  // the replica finished, rejected or dropped it
  int replica = -1;
  std::uint64_t engine_id = 0;
  double status_client_s = -1;  // when the status line reached the client; -1 not yet
  int tokens = 0;               // content events the client received
  double last_token_s = -1;     // client time of the latest one
  int prompt_tokens = -1;       // the usage the replica reports at the end
  int cached_tokens = -1;
  int output_tokens = 0;
  std::uint64_t piece_seed = 0;  // the replica's text seed for this request
  std::string reply;             // the generated text, when the source wants it (history)
  std::string error;             // the replica's 400 message; "" otherwise
  // Set when the client gave up: the record's outcome once kAbandon is processed.
  std::string abandon_kind;
  std::string abandon_error;
};

}  // namespace kvsweep::predict
