// Tests for predict/calibrate/nelder_mead.cc: it finds the minimum of functions whose
// minimum is known, stops on a flat one, and says when it ran out of evaluations.
#include "predict/calibrate/nelder_mead.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace kvsweep::predict {
namespace {

TEST(NelderMead, FindsTheMinimumOfAShiftedQuadraticInThreeDimensions) {
  const auto f = [](const std::vector<double>& x) {
    return std::pow(x[0] - 1.5, 2) + 3 * std::pow(x[1] + 0.7, 2) + 0.5 * std::pow(x[2] - 0.2, 2);
  };
  NelderMeadOptions options;
  options.max_evaluations = 1000;
  options.x_tolerance = 1e-6;
  options.f_tolerance = 1e-12;
  const NelderMeadResult r = nelder_mead(f, {0, 0, 0}, options);
  EXPECT_TRUE(r.converged);
  ASSERT_EQ(r.x.size(), 3u);
  EXPECT_NEAR(r.x[0], 1.5, 1e-4);
  EXPECT_NEAR(r.x[1], -0.7, 1e-4);
  EXPECT_NEAR(r.x[2], 0.2, 1e-4);
  EXPECT_NEAR(r.value, 0, 1e-8);
  EXPECT_LE(r.evaluations, 1000);
}

// Rosenbrock's banana: a curved valley, the classic test a naive simplex method fails.
TEST(NelderMead, FollowsRosenbrocksValleyToItsMinimum) {
  const auto f = [](const std::vector<double>& x) {
    return 100 * std::pow(x[1] - x[0] * x[0], 2) + std::pow(1 - x[0], 2);
  };
  NelderMeadOptions options;
  options.max_evaluations = 2000;
  options.initial_step = 0.5;
  options.x_tolerance = 1e-7;
  options.f_tolerance = 1e-14;
  const NelderMeadResult r = nelder_mead(f, {-1.2, 1.0}, options);
  EXPECT_NEAR(r.x[0], 1.0, 1e-3);
  EXPECT_NEAR(r.x[1], 1.0, 2e-3);
}

TEST(NelderMead, StopsOnAFlatFunctionAndAtTheEvaluationLimit) {
  int calls = 0;
  const NelderMeadResult flat = nelder_mead(
      [&calls](const std::vector<double>&) {
        ++calls;
        return 4.0;
      },
      {1, 2}, {});
  EXPECT_EQ(flat.value, 4.0);
  EXPECT_EQ(flat.evaluations, calls);
  EXPECT_LE(calls, 200);

  NelderMeadOptions few;
  few.max_evaluations = 12;
  const NelderMeadResult cut =
      nelder_mead([](const std::vector<double>& x) { return std::pow(x[0] - 100, 2); }, {0}, few);
  EXPECT_FALSE(cut.converged);
  EXPECT_LE(cut.evaluations, 12 + 2);  // an iteration that began under the limit ends
  EXPECT_LT(cut.value, 100 * 100);     // it still went downhill
}

TEST(NelderMead, RefusesAnEmptyStart) {
  EXPECT_THROW(nelder_mead([](const std::vector<double>&) { return 0.0; }, {}, {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace kvsweep::predict
