// One simulated vLLM replica engine, driven in real time on an Asio event loop.
#include "sim/engine/engine.h"

#include <time.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <unordered_map>
#include <utility>

#include "sim/engine/scheduler.h"

namespace kvsweep::sim {
namespace {

// CPU time of the calling thread: the scheduler's cost without the wall time the io thread
// spends elsewhere (HTTP, other replicas) or waiting.
double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

// Everything here runs on the io thread (see engine.h), so nothing is locked. The scheduler
// is pure; this wrapper only adds time: plan a step, wait its modelled duration on a timer,
// apply it, deliver the updates, plan the next one. Idle means no timer armed.
struct Engine::Impl {
  Impl(boost::asio::io_context& io, TimingProfile p, std::uint64_t s)
      : io(io), profile(std::move(p)), seed(s), scheduler(profile, seed), timer(io) {}

  void schedule_step_soon();
  // `chained`: called by finish_step, so this step starts when the last one's modelled time
  // ended (its timer's expiry), not when the io thread got round to it.
  void start_step(bool chained = false);
  void finish_step();

  boost::asio::io_context& io;
  TimingProfile profile;
  std::uint64_t seed;
  Scheduler scheduler;
  KvEventListener kv_listener;
  boost::asio::steady_timer timer;
  // Shared, so delivery can hold a callback alive while it runs: a callback that cancels its
  // own request (or restarts the engine) takes it out of this map mid-call.
  std::unordered_map<std::uint64_t, std::shared_ptr<Callback>> callbacks;
  StepPlan current;           // the step in flight, if step_running
  bool step_running = false;  // a timer is armed for `current`
  bool step_posted = false;   // start_step() is queued on the io_context
  std::uint64_t prompt_tokens_total = 0;
  std::uint64_t generation_tokens_total = 0;
  std::uint64_t requests_finished = 0;
  std::uint64_t requests_stopped = 0;
  std::uint64_t steps_total = 0;
  double step_seconds_total = 0;
  double scheduler_cpu_seconds_total = 0;
  // Handlers hold a weak reference, so one that is already queued when the engine is destroyed
  // (a timer that fired but has not run yet) sees it gone and does nothing.
  std::shared_ptr<int> alive = std::make_shared<int>(0);
};

// Deferred rather than immediate, so that requests submitted in the same turn of the event loop
// are admitted into the same step, as vLLM's busy loop drains its input queue before planning.
void Engine::Impl::schedule_step_soon() {
  if (step_running || step_posted) return;
  step_posted = true;
  boost::asio::post(io, [this, weak = std::weak_ptr<int>(alive)] {
    if (weak.expired()) return;
    step_posted = false;
    start_step();
  });
}

void Engine::Impl::start_step(bool chained) {
  if (step_running) return;
  const double cpu_before = thread_cpu_seconds();
  current = scheduler.plan();
  scheduler_cpu_seconds_total += thread_cpu_seconds() - cpu_before;
  if (current.empty()) return;  // idle until the next submit
  step_running = true;
  const auto duration = std::chrono::microseconds(static_cast<std::int64_t>(current.duration_us));
  // A busy engine's steps follow each other on the GPU's timeline: a host that wakes this
  // thread late (a loaded machine) delays when a step's tokens are delivered, but not when the
  // next step ends, as a GPU does not slow down for its host. Otherwise every late wake-up
  // would add to every later step, and the fleet would run slower than its profile.
  if (chained) {
    timer.expires_at(timer.expiry() + duration);
  } else {
    timer.expires_after(duration);
  }
  timer.async_wait([this, weak = std::weak_ptr<int>(alive)](const boost::system::error_code& ec) {
    if (ec || weak.expired()) return;
    finish_step();
  });
}

void Engine::Impl::finish_step() {
  const double cpu_before = thread_cpu_seconds();
  std::vector<SeqResult> results = scheduler.apply(current);
  scheduler_cpu_seconds_total += thread_cpu_seconds() - cpu_before;
  ++steps_total;
  step_seconds_total += current.duration_us * 1e-6;
  current = StepPlan{};
  step_running = false;
  for (const SeqResult& result : results) {
    generation_tokens_total += static_cast<std::uint64_t>(result.new_tokens);
    if (result.new_tokens > 0 && result.output_tokens == 1) {
      prompt_tokens_total += static_cast<std::uint64_t>(result.prompt_tokens);
    }
    if (result.finished) ++requests_finished;
    if (result.stopped) ++requests_stopped;
  }
  // A callback may submit or cancel (even another request of this batch), so look each one up
  // at delivery time and take finished ones out before calling them.
  for (const SeqResult& result : results) {
    auto found = callbacks.find(result.id);
    if (found == callbacks.end()) continue;
    TokenUpdate update;
    update.new_tokens = result.new_tokens;
    update.output_tokens = result.output_tokens;
    update.prompt_tokens = result.prompt_tokens;
    update.cached_tokens = result.cached_tokens;
    update.finished = result.finished;
    if (result.finished) {
      update.finish_reason = result.stopped ? "stop" : "length";
      const std::shared_ptr<Callback> callback = std::move(found->second);
      callbacks.erase(found);
      (*callback)(update);
    } else {
      const std::shared_ptr<Callback> callback = found->second;
      (*callback)(update);
    }
  }
  start_step(/*chained=*/true);
}

Engine::Engine(boost::asio::io_context& io, TimingProfile profile, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(io, std::move(profile), seed)) {}

Engine::~Engine() = default;

void Engine::submit(EngineRequest request, Callback callback) {
  impl_->callbacks[request.id] = std::make_shared<Callback>(std::move(callback));
  impl_->scheduler.add(request.id, std::move(request.prompt), request.max_tokens,
                       request.ignore_eos);
  impl_->schedule_step_soon();
}

void Engine::cancel(std::uint64_t id) {
  // Its part of a step in flight still costs time (the GPU ran it); apply() drops the results.
  impl_->scheduler.abort(id);
  impl_->callbacks.erase(id);
}

bool Engine::reset_prefix_cache() { return impl_->scheduler.reset_prefix_cache(); }

void Engine::set_prefix_caching(bool enabled) {
  Impl& e = *impl_;
  if (e.scheduler.prefix_caching() == enabled) return;
  // Kept in the profile too, so that restart() builds its new scheduler with it.
  e.profile.enable_prefix_caching = enabled;
  e.scheduler.set_prefix_caching(enabled);
  e.scheduler.reset_prefix_cache();
}

bool Engine::prefix_caching() const { return impl_->scheduler.prefix_caching(); }

void Engine::restart() {
  Impl& e = *impl_;
  e.timer.cancel();
  e.current = StepPlan{};
  e.step_running = false;
  e.callbacks.clear();
  // Removed events for everything cached, so an index fed by this engine forgets it too.
  e.scheduler.clear();
  e.scheduler = Scheduler(e.profile, e.seed);
  e.scheduler.set_kv_event_listener(e.kv_listener);
  e.prompt_tokens_total = 0;
  e.generation_tokens_total = 0;
  e.requests_finished = 0;
  e.requests_stopped = 0;
  e.steps_total = 0;
  e.step_seconds_total = 0;
  e.scheduler_cpu_seconds_total = 0;
  // Handlers queued by the old state (a fired timer, a posted start) must see nothing to do.
  e.alive = std::make_shared<int>(0);
  e.step_posted = false;
}

void Engine::set_kv_event_listener(KvEventListener listener) {
  impl_->kv_listener = listener;
  impl_->scheduler.set_kv_event_listener(std::move(listener));
}

EngineMetrics Engine::metrics() const {
  const Scheduler& scheduler = impl_->scheduler;
  EngineMetrics m;
  m.prefix_cache_queries = scheduler.stats().prefix_cache_queries;
  m.prefix_cache_hits = scheduler.stats().prefix_cache_hits;
  m.kv_cache_usage = scheduler.kv_cache_usage();
  m.num_running = scheduler.num_running();
  m.num_waiting = scheduler.num_waiting();
  m.num_preemptions = scheduler.stats().num_preemptions;
  m.prompt_tokens_total = impl_->prompt_tokens_total;
  m.generation_tokens_total = impl_->generation_tokens_total;
  m.requests_finished = impl_->requests_finished;
  m.requests_stopped = impl_->requests_stopped;
  m.steps_total = impl_->steps_total;
  m.step_seconds_total = impl_->step_seconds_total;
  m.scheduler_cpu_seconds_total = impl_->scheduler_cpu_seconds_total;
  m.num_gpu_blocks = profile().num_gpu_blocks;
  m.block_size = profile().block_size;
  m.enable_prefix_caching = prefix_caching();
  return m;
}

const TimingProfile& Engine::profile() const { return impl_->profile; }

}  // namespace kvsweep::sim
