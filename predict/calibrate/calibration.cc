#include "predict/calibrate/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "common/error_kinds.h"
#include "common/join.h"
#include "predict/calibrate/nelder_mead.h"

namespace kvsweep::predict {
namespace {

// A figure the replay did not produce (the cell failed, or had no ITL) while the run measured
// it counts as this log error: e^3, twenty times off, so the fit steers away from it.
constexpr double kMissingLogError = 3.0;
// The robust loss's scale: log errors below it count as their square, above it about linearly
// (soft L1), so one figure the model cannot reach (a p90 that falls between two modes of the
// real distribution) does not pull every coefficient towards it.
constexpr double kLossScale = 0.1;

double robust_loss(double log_error) {
  const double z = log_error / kLossScale;
  return 2 * kLossScale * kLossScale * (std::sqrt(1 + z * z) - 1);
}

// Below this sensitivity a coefficient cannot be told from the others (calibration.h): doubling
// it, the others compensating, moves the figures under 3.5%, within a percentile's step and a
// real run's noise.
constexpr double kMinSensitivity = 0.05;
// The central difference's step in log space: wide enough to move percentiles by whole steps.
constexpr double kJacobianStep = 0.4;

// The profile's fields in coefficient_names() order.
constexpr double sim::TimingProfile::*kCoefficients[] = {
    &sim::TimingProfile::base_us, &sim::TimingProfile::per_prefill_token_us,
    &sim::TimingProfile::per_decode_token_us, &sim::TimingProfile::per_kv_usage_us,
    &sim::TimingProfile::per_context_token_us};

double& coefficient(sim::TimingProfile& p, std::size_t i) { return p.*kCoefficients[i]; }
double coefficient(const sim::TimingProfile& p, std::size_t i) { return p.*kCoefficients[i]; }

// 4 significant digits: what a profile file states, no false precision.
double round4(double value) {
  if (!(value > 0)) return value;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(value)));
  return std::round(value * scale) / scale;
}

class Fit {
 public:
  Fit(const FitRun& run, const sim::TimingProfile& start, std::vector<std::size_t> free,
      CellReplayer& replay, const CalibrationOptions& options)
      : run_(run), start_(start), free_(std::move(free)), replay_(replay), options_(options) {
    for (std::size_t i = 0; i < run.cells.size(); ++i) {
      if (!run.cells[i].held_out) fit_cells_.push_back(i);
    }
    for (const std::size_t k : free_) {
      const double value = coefficient(start, k);
      scale_.push_back(value > 0 ? value : 1.0);
    }
  }

  sim::TimingProfile profile_at(const std::vector<double>& x) const {
    sim::TimingProfile p = start_;
    for (std::size_t k = 0; k < free_.size(); ++k) {
      coefficient(p, free_[k]) = scale_[k] * std::exp(x[k]);
    }
    return p;
  }

  // Log errors of every figure the fitted cells measured, in a fixed order.
  std::vector<double> residuals(const std::vector<double>& x) {
    const auto predicted = replay_.figures(profile_at(x), fit_cells_);
    std::vector<double> r;
    for (std::size_t j = 0; j < fit_cells_.size(); ++j) {
      const CalibrationFigures& measured = run_.cells[fit_cells_[j]].measured;
      for (std::size_t f = 0; f < kFigureCount; ++f) {
        if (!measured.values[f]) continue;
        const auto e = predicted[j] ? log_error(*predicted[j], measured, static_cast<Figure>(f))
                                    : std::nullopt;
        r.push_back(e ? *e : kMissingLogError);
      }
    }
    return r;
  }

  double objective(const std::vector<double>& x) {
    const std::vector<double> r = residuals(x);
    double sum = 0;
    for (const double e : r) sum += robust_loss(e);
    const double value = r.empty() ? 0 : sum / static_cast<double>(r.size());
    if (options_.progress) {
      char line[96];
      std::snprintf(line, sizeof line, "replay %d: loss %.5f", replay_.replays(), value);
      options_.progress(line);
    }
    return value;
  }

  // Each free coefficient's sensitivity at x: its column of the residuals' Jacobian, less its
  // projection on the other columns, as an RMS over the rows.
  std::vector<double> sensitivities(const std::vector<double>& x) {
    std::vector<std::vector<double>> columns;
    for (std::size_t k = 0; k < free_.size(); ++k) {
      std::vector<double> up = x, down = x;
      up[k] += kJacobianStep;
      down[k] -= kJacobianStep;
      const std::vector<double> r_up = residuals(up), r_down = residuals(down);
      std::vector<double> column(r_up.size());
      for (std::size_t i = 0; i < column.size(); ++i) {
        column[i] = (r_up[i] - r_down[i]) / (2 * kJacobianStep);
      }
      columns.push_back(std::move(column));
    }
    std::vector<double> out;
    for (std::size_t k = 0; k < columns.size(); ++k) {
      // Orthonormal basis of the other columns (modified Gram-Schmidt), then k's remainder.
      std::vector<std::vector<double>> basis;
      for (std::size_t o = 0; o < columns.size(); ++o) {
        if (o == k) continue;
        std::vector<double> v = columns[o];
        for (const auto& b : basis) {
          const double d = std::inner_product(v.begin(), v.end(), b.begin(), 0.0);
          for (std::size_t i = 0; i < v.size(); ++i) v[i] -= d * b[i];
        }
        const double norm = std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0));
        if (norm < 1e-12) continue;
        for (double& e : v) e /= norm;
        basis.push_back(std::move(v));
      }
      std::vector<double> rest = columns[k];
      for (const auto& b : basis) {
        const double d = std::inner_product(rest.begin(), rest.end(), b.begin(), 0.0);
        for (std::size_t i = 0; i < rest.size(); ++i) rest[i] -= d * b[i];
      }
      const double sum = std::inner_product(rest.begin(), rest.end(), rest.begin(), 0.0);
      out.push_back(rest.empty() ? 0 : std::sqrt(sum / static_cast<double>(rest.size())));
    }
    return out;
  }

  const std::vector<std::size_t>& fit_cells() const { return fit_cells_; }

 private:
  const FitRun& run_;
  const sim::TimingProfile& start_;
  std::vector<std::size_t> free_;  // indices into coefficient_names()
  std::vector<double> scale_;      // x = log(coefficient / scale)
  CellReplayer& replay_;
  const CalibrationOptions& options_;
  std::vector<std::size_t> fit_cells_;
};

[[noreturn]] void refuse(const FitRun& run, const std::vector<std::string>& reasons) {
  throw CalibrationRefused(
      "calibrate: " + run.name + " cannot constrain every coefficient:\n  " +
      join(reasons, "\n  ") +
      "\nkeep such a coefficient at the start profile's value with --fix NAME, or calibrate "
      "from a run that reaches that regime (other concurrency levels or request rates, so "
      "batches of several sizes; varied prompt lengths)");
}

std::array<std::optional<double>, kFigureCount> relative_errors(
    const std::optional<CalibrationFigures>& predicted, const CalibrationFigures& measured) {
  std::array<std::optional<double>, kFigureCount> out;
  for (std::size_t f = 0; f < kFigureCount; ++f) {
    if (!measured.values[f]) continue;
    if (!predicted) {
      out[f] = -1.0;  // nothing predicted: all of it missed
      continue;
    }
    if (const auto e = log_error(*predicted, measured, static_cast<Figure>(f))) {
      out[f] = std::exp(*e) - 1;
    }
  }
  return out;
}

std::optional<double> mean_abs(const std::vector<CellErrors>& cells, bool held_out, bool after) {
  double sum = 0;
  int n = 0;
  for (const auto& c : cells) {
    if (c.held_out != held_out) continue;
    for (const auto& e : after ? c.after : c.before) {
      if (!e) continue;
      sum += std::abs(*e);
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

}  // namespace

const std::vector<std::string>& coefficient_names() {
  static const std::vector<std::string> names = {"base_us", "per_prefill_token_us",
                                                 "per_decode_token_us", "per_kv_usage_us",
                                                 "per_context_token_us"};
  return names;
}

CalibrationResult calibrate(const FitRun& run, CellReplayer& replay,
                            const sim::TimingProfile& given_start,
                            const CalibrationOptions& options) {
  // The servers' own pool, when their /metrics showed it: measured, not fitted.
  sim::TimingProfile start = given_start;
  std::string kv_pool;
  if (run.kv_pool) {
    start.num_gpu_blocks = run.kv_pool->num_gpu_blocks;
    start.block_size = run.kv_pool->block_size;
    kv_pool = "num_gpu_blocks " + std::to_string(given_start.num_gpu_blocks) + " -> " +
              std::to_string(start.num_gpu_blocks) + ", block_size " +
              std::to_string(given_start.block_size) + " -> " + std::to_string(start.block_size) +
              ": read from the servers' vllm:cache_config_info";
  } else {
    kv_pool = "num_gpu_blocks " + std::to_string(start.num_gpu_blocks) +
              " kept from the start profile: " + run.kv_pool_note;
  }
  const auto& names = coefficient_names();
  for (const auto& name : options.fixed) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw UsageError("--fix " + name + ": not a coefficient; valid: " + join(names));
    }
  }
  CalibrationResult result;
  result.start = given_start;
  result.kv_pool = kv_pool;
  std::vector<std::size_t> free;
  for (std::size_t k = 0; k < names.size(); ++k) {
    CoefficientFit c;
    c.name = names[k];
    c.start = c.fitted = coefficient(start, k);
    if (std::find(options.fixed.begin(), options.fixed.end(), c.name) != options.fixed.end()) {
      c.note = "kept (--fix)";
    } else if (k == 3 && !(start.per_kv_usage_us > 0)) {
      c.note = "kept: the start profile has no KV-usage term";
    } else if (k == 4 && !(start.per_context_token_us > 0)) {
      c.note = "kept: the start profile has no context term";
    } else {
      c.free = true;
      free.push_back(k);
    }
    result.coefficients.push_back(std::move(c));
  }
  if (free.empty()) throw UsageError("calibrate: every coefficient is fixed");

  Fit fit(run, start, free, replay, options);
  std::vector<std::size_t> all(run.cells.size());
  std::iota(all.begin(), all.end(), 0);
  const std::vector<double> origin(free.size(), 0.0);

  // What the run can constrain, before spending replays on a fit it cannot make. A step's
  // cost per sequence (per_decode_token_us) shows only as the batch changes: the fitted cells
  // must run batches of at least two sizes, 2x apart. A cell's batch a replica is its most
  // requests in flight over the replicas, at most max_num_seqs (a saturated fleet's cells all
  // run the cap, whatever the client keeps waiting).
  const int replicas = std::max(1, run.replicas);
  int most_in_flight = 0;
  double smallest_batch = 0, largest_batch = 0;
  for (const std::size_t i : fit.fit_cells()) {
    const int in_flight = run.cells[i].measured.max_in_flight;
    most_in_flight = std::max(most_in_flight, in_flight);
    const double batch = std::min(std::max(1.0, static_cast<double>(in_flight) / replicas),
                                  static_cast<double>(start.max_num_seqs));
    smallest_batch = smallest_batch == 0 ? batch : std::min(smallest_batch, batch);
    largest_batch = std::max(largest_batch, batch);
  }
  const bool decode_free = std::find(free.begin(), free.end(), std::size_t{2}) != free.end();
  if (decode_free && most_in_flight <= 1) {
    refuse(run, {"per_decode_token_us: no fitted cell ran two requests at once (the run never "
                 "queued or batched), so it says nothing about a step's cost per sequence, "
                 "which sets capacity"});
  }
  if (decode_free && largest_batch < 2 * smallest_batch) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "per_decode_token_us: every fitted cell ran about the same batch (%.0f to %.0f "
                  "sequences a replica), so a step's cost per sequence, which sets capacity, "
                  "cannot be told from its fixed part",
                  smallest_batch, largest_batch);
    refuse(run, {text});
  }

  const auto before = replay.figures(start, all);
  NelderMeadOptions nm;
  nm.initial_step = 0.3;
  nm.x_tolerance = 0.005;
  nm.f_tolerance = 1e-7;
  nm.max_evaluations = std::max(20, options.max_replays - replay.replays());
  const NelderMeadResult best =
      nelder_mead([&fit](const std::vector<double>& x) { return fit.objective(x); }, origin, nm);
  result.converged = best.converged;
  // Judged where the fit lands, not at the start: far from the truth a coefficient can look
  // weak (a decode cost tiny beside a large base) that the run pins down once near it. The
  // sensitivities shown are these.
  const std::vector<double> sensitivity = fit.sensitivities(best.x);
  std::vector<std::string> weak;
  for (std::size_t k = 0; k < free.size(); ++k) {
    CoefficientFit& c = result.coefficients[free[k]];
    c.sensitivity = sensitivity[k];
    if (sensitivity[k] >= kMinSensitivity) continue;
    char text[320];
    std::snprintf(text, sizeof text,
                  "%s: at the fitted point, the run's figures cannot tell it from the other "
                  "coefficients (sensitivity %.4f < %.2f: doubling it, the others compensating, "
                  "moves them %.1f%%)",
                  c.name.c_str(), sensitivity[k], kMinSensitivity,
                  100 * (std::exp(sensitivity[k] * std::log(2.0)) - 1));
    weak.push_back(text);
  }
  if (!weak.empty()) refuse(run, weak);
  result.fitted = fit.profile_at(best.x);
  for (std::size_t k = 0; k < free.size(); ++k) {
    result.coefficients[free[k]].fitted = coefficient(result.fitted, free[k]);
  }
  const auto after = replay.figures(result.fitted, all);
  for (std::size_t i = 0; i < run.cells.size(); ++i) {
    CellErrors e;
    e.label = run.cells[i].label;
    e.held_out = run.cells[i].held_out;
    e.before = relative_errors(before[i], run.cells[i].measured);
    e.after = relative_errors(after[i], run.cells[i].measured);
    e.kv_hit_measured = run.cells[i].measured.kv_hit;
    if (after[i]) e.kv_hit_after = after[i]->kv_hit;
    result.cells.push_back(std::move(e));
  }
  result.fitted_error_before = mean_abs(result.cells, false, false).value_or(0);
  result.fitted_error_after = mean_abs(result.cells, false, true).value_or(0);
  result.held_out_error_before = mean_abs(result.cells, true, false);
  result.held_out_error_after = mean_abs(result.cells, true, true);
  result.replays = replay.replays();
  return result;
}

sim::TimingProfile calibrated_profile(const CalibrationResult& result, const std::string& name,
                                      const std::string& run_source) {
  sim::TimingProfile p = result.fitted;
  for (std::size_t k = 0; k < coefficient_names().size(); ++k) {
    coefficient(p, k) = round4(coefficient(p, k));
  }
  p.name = name;
  char errors[160];
  std::snprintf(errors, sizeof errors, "mean |error| %.1f%% -> %.1f%% over its fitted cells",
                100 * result.fitted_error_before, 100 * result.fitted_error_after);
  p.source = "calibrated by kvsweep calibrate from " + run_source + ", starting from profile " +
             result.start.name + "; " + errors;
  return p;
}

}  // namespace kvsweep::predict
