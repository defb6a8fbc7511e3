// A simulated replica pinned to one io thread of a fleet that runs several, reached from the
// others.
#include "sim/pinned_replica.h"

#include <boost/asio/post.hpp>
#include <future>
#include <stdexcept>

namespace kvsweep::sim {

PinnedReplica::PinnedReplica(ReplicaServer& replica, boost::asio::io_context& home,
                             boost::asio::io_context& router_home)
    : replica_(replica), home_(home), router_home_(router_home), available_(replica.available()) {}

void PinnedReplica::handle(const HttpRequest& request, std::shared_ptr<Exchange> exchange) {
  if (at_home()) return replica_.handle(request, std::move(exchange));
  // Called on the exchange's thread: it may hand the exchange on. Calls made on it from here on
  // (the connection's abort, a drain notice) are posted to the replica's thread.
  exchange->move_to(home_);
  boost::asio::post(home_, [this, request, exchange = std::move(exchange)]() mutable {
    replica_.handle(request, std::move(exchange));
  });
}

void PinnedReplica::check_health(std::chrono::milliseconds timeout,
                                 std::function<void(bool ok, std::string why)> done) {
  auto answer = [this, done = std::move(done)](bool ok, std::string why) {
    if (router_home_.get_executor().running_in_this_thread()) return done(ok, std::move(why));
    boost::asio::post(router_home_,
                      [done, ok, why = std::move(why)]() mutable { done(ok, std::move(why)); });
  };
  if (at_home()) return replica_.check_health(timeout, std::move(answer));
  boost::asio::post(home_, [this, timeout, answer = std::move(answer)]() mutable {
    replica_.check_health(timeout, std::move(answer));
  });
}

// As check_health: read on the replica's thread, answered on the router's.
void PinnedReplica::read_load(std::chrono::milliseconds timeout,
                              std::function<void(std::optional<BackendLoad>)> done) {
  auto answer = [this, done = std::move(done)](std::optional<BackendLoad> load) {
    if (router_home_.get_executor().running_in_this_thread()) return done(load);
    boost::asio::post(router_home_, [done, load] { done(load); });
  };
  if (at_home()) return replica_.read_load(timeout, std::move(answer));
  boost::asio::post(home_, [this, timeout, answer = std::move(answer)]() mutable {
    replica_.read_load(timeout, std::move(answer));
  });
}

void PinnedReplica::run_at_home(const std::function<void()>& call) const {
  if (at_home()) return call();
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  boost::asio::post(home_, [&call, done] {
    try {
      call();
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  });
  // A stopped thread never runs the call: give up rather than wait forever (fleet stop).
  while (finished.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (home_.stopped()) throw std::runtime_error("replica thread stopped");
  }
  finished.get();
}

void PinnedReplica::restart() {
  run_at_home([this] { replica_.restart(); });
}

ReplicaSettings PinnedReplica::settings() const {
  ReplicaSettings settings;
  run_at_home([this, &settings] { settings = replica_.settings(); });
  return settings;
}

bool PinnedReplica::apply(const ReplicaSettings& next) {
  bool applied = false;
  run_at_home([this, &next, &applied] { applied = replica_.apply(next); });
  return applied;
}

}  // namespace kvsweep::sim
