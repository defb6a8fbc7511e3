// The capacity search's decisions: bracket, then bisect; repeats of undecided and uncounted
// probes; why it ended.
#include "orchestrator/sweep/capacity_search.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "figures/units.h"

namespace kvsweep::orchestrator {
namespace {

// Rates are probed on a grid of three significant digits (a 0.5% step at most, far inside any
// precision a search asks for), so probe loads read as written and keys stay short.
double three_significant(double value) {
  if (value <= 0) return value;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(value)));
  return std::round(value * scale) / scale;
}

}  // namespace

const char* probe_outcome_name(ProbeOutcome outcome) {
  switch (outcome) {
    case ProbeOutcome::kPass:
      return "pass";
    case ProbeOutcome::kFail:
      return "fail";
    case ProbeOutcome::kUndecided:
      return "undecided";
    case ProbeOutcome::kNotCounted:
      return "not counted";
  }
  return "undecided";
}

CapacitySearch::CapacitySearch(const SearchSpec& spec, bool integer, std::optional<double> start)
    : spec_(spec), integer_(integer) {
  // Guided, the first moves are as small as the precision (a good guess is bracketed at
  // once) and grow from there; unguided, every move is the growth factor, as GuideLLM doubles.
  first_step_ = start ? 1 + spec_.precision : spec_.growth;
  accelerate_ = start.has_value();
  next_ = snap(start.value_or(spec_.low));
}

double CapacitySearch::snap(double load) const {
  load = std::clamp(load, spec_.low, spec_.high);
  return integer_ ? std::round(load) : three_significant(load);
}

std::string CapacitySearch::show(double load) const { return figures::format_number(load); }

void CapacitySearch::finish(const std::string& why) {
  next_.reset();
  attempt_ = 0;
  result_.done = true;
  result_.capacity = pass_;
  result_.first_failing = fail_;
  result_.why = why;
}

void CapacitySearch::record(double load, ProbeOutcome outcome) {
  if (!next_ || load != *next_) {
    throw std::logic_error("capacity search: a verdict for " + show(load) + " where " +
                           (next_ ? show(*next_) : std::string("nothing")) + " was asked for");
  }
  probes_.push_back({load, attempt_, outcome});
  if (static_cast<int>(probes_.size()) >= spec_.max_probes && outcome != ProbeOutcome::kPass &&
      outcome != ProbeOutcome::kFail) {
    finish("stopped after " + std::to_string(probes_.size()) + " probes (search.max_probes)");
    return;
  }
  switch (outcome) {
    case ProbeOutcome::kUndecided:
      if (attempt_ + 1 < spec_.max_tries) {
        ++attempt_;
        return;  // the same load again
      }
      warnings_.push_back(show(load) + ": undecided in " + std::to_string(spec_.max_tries) +
                          " tries, counted as failing (a capacity is a load known to pass)");
      count(load, ProbeOutcome::kFail);
      return;
    case ProbeOutcome::kNotCounted:
      if (attempt_ == 0) {
        warnings_.push_back(show(load) +
                            ": the load generator fell short (client-bound or short of its "
                            "concurrency); not counted, tried once more");
        ++attempt_;
        return;
      }
      finish("the load generator could not drive " + show(load) +
             " in two tries (client-bound or short of its concurrency): the server was never "
             "failed there; capacity is at least the highest passing load. More load generators "
             "(load.shards) can go further");
      return;
    case ProbeOutcome::kPass:
    case ProbeOutcome::kFail:
      count(load, outcome);
      return;
  }
}

void CapacitySearch::count(double load, ProbeOutcome counted) {
  if (counted == ProbeOutcome::kPass) {
    pass_ = std::max(pass_.value_or(load), load);
  } else {
    fail_ = std::min(fail_.value_or(load), load);
  }
  attempt_ = 0;
  if (static_cast<int>(probes_.size()) >= spec_.max_probes) {
    finish("stopped after " + std::to_string(probes_.size()) + " probes (search.max_probes)");
    return;
  }
  choose_next(load, counted);
}

double CapacitySearch::step_factor(int moves) const {
  return accelerate_ ? std::pow(first_step_, std::pow(2.0, std::min(moves, 16))) : first_step_;
}

void CapacitySearch::choose_next(double last, ProbeOutcome counted) {
  if (pass_ && fail_) {
    const bool close_enough =
        *fail_ <= *pass_ * (1 + spec_.precision) * (1 + 1e-9) || (integer_ && *fail_ - *pass_ <= 1);
    if (close_enough) {
      finish("the highest passing and lowest failing loads are within the precision (" +
             show(spec_.precision * 100) + "%)");
      return;
    }
    double middle = snap(std::sqrt(*pass_ * *fail_));
    if (integer_) middle = std::clamp(middle, *pass_ + 1, *fail_ - 1);
    if (middle <= *pass_ || middle >= *fail_) {
      finish("no probe fits between " + show(*pass_) + " and " + show(*fail_));
      return;
    }
    next_ = middle;
    return;
  }
  if (counted == ProbeOutcome::kPass) {
    if (last >= spec_.high) {
      finish("passes at the upper bound (" + show(spec_.high) +
             "): the capacity is at least that; raise search.high");
      return;
    }
    const double factor = step_factor(moves_up_++);
    double up = snap(last * factor);
    if (up <= last) up = integer_ ? last + 1 : snap(last * (1 + spec_.precision));
    next_ = std::min(up, spec_.high);
    return;
  }
  if (last <= spec_.low) {
    finish("fails at the lower bound (" + show(spec_.low) +
           "): the capacity is below it; lower search.low");
    return;
  }
  const double factor = step_factor(moves_down_++);
  double down = snap(last / factor);
  if (down >= last) down = integer_ ? last - 1 : snap(last / (1 + spec_.precision));
  next_ = std::max(down, spec_.low);
}

}  // namespace kvsweep::orchestrator
