// The seam between the router and whatever serves a routed request.
#pragma once

#include <memory>

#include "sim/http_exchange.h"

namespace kvsweep::sim {

// A replica as the router sees it. The fleet's replicas are in process (ReplicaServer); a
// later HTTP upstream (kvsweep proxy) can implement the same two calls.
// Thread contract: called on the io thread; the exchange is answered on it too.
class Backend {
 public:
  virtual ~Backend() = default;
  // Answers the request through the exchange (now or later), as if it had arrived directly.
  virtual void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) = 0;
  // Forgets cached prefixes not in use; fire and forget.
  virtual void reset_prefix_cache() = 0;
};

}  // namespace kvsweep::sim
