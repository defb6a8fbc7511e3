// A derivative-free minimiser for the calibration's few coefficients: each evaluation of the
// objective is a whole replay in virtual time, deterministic but not smooth (a request that
// moves to the next step moves a percentile by a step), so no gradient is taken.
#pragma once

#include <functional>
#include <vector>

namespace kvsweep::predict {

struct NelderMeadOptions {
  double initial_step = 0.3;  // the first simplex: start + step along each axis
  int max_evaluations = 200;
  // Stops when the simplex's values differ by less than this (absolute) and its points by
  // less than x_tolerance along every axis.
  double f_tolerance = 1e-6;
  double x_tolerance = 1e-4;
};

struct NelderMeadResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
  bool converged = false;  // false: stopped at max_evaluations
};

// Minimises f from `start` with the standard coefficients (reflection 1, expansion 2,
// contraction 0.5, shrink 0.5). f is called with vectors of start's size. Throws
// std::invalid_argument for an empty start.
NelderMeadResult nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                             const std::vector<double>& start, const NelderMeadOptions& options);

}  // namespace kvsweep::predict
