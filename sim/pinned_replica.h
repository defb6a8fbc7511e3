// A simulated replica pinned to one io thread of a fleet that runs several, reached from the
// others.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "sim/http/backend.h"
#include "sim/http/replica_server.h"

namespace kvsweep::sim {

// The router's view of a ReplicaServer that lives on `home`: both seams (backend.h), callable
// from any of the fleet's io threads. handle() hands the exchange to the replica's thread
// (Exchange::move_to), so the engine, the generation and their listeners run there and the
// bytes are posted back to the client's connection; on the replica's own thread it calls
// straight through. Health answers are delivered on `router_home`. available() reads a copy
// kept up to date by the fleet (set_available), so routing never waits; restart(), settings()
// and apply() run on the replica's thread and wait for it, which is safe because the router
// calls them only from its home and no io thread ever waits for that one.
class PinnedReplica final : public ServingBackend, public ReplicaControl {
 public:
  PinnedReplica(ReplicaServer& replica, boost::asio::io_context& home,
                boost::asio::io_context& router_home);

  void handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) override;
  void check_health(std::chrono::milliseconds timeout,
                    std::function<void(bool ok, std::string why)> done) override;
  void read_load(std::chrono::milliseconds timeout,
                 std::function<void(std::optional<BackendLoad>)> done) override;

  bool available() const override { return available_.load(); }
  void restart() override;
  ReplicaSettings settings() const override;
  bool apply(const ReplicaSettings& next) override;

  // What the replica's down listener says (on the replica's thread).
  void set_available(bool available) { available_ = available; }
  boost::asio::io_context& home() const { return home_; }

 private:
  bool at_home() const { return home_.get_executor().running_in_this_thread(); }
  // Runs `call` on the replica's thread and waits for it; throws std::runtime_error when that
  // thread has stopped (the fleet is stopping).
  void run_at_home(const std::function<void()>& call) const;

  ReplicaServer& replica_;
  boost::asio::io_context& home_;
  boost::asio::io_context& router_home_;
  std::atomic<bool> available_{true};
};

}  // namespace kvsweep::sim
