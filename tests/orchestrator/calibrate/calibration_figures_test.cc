// Tests for figures_of (orchestrator/calibrate/stored_run.cc) and
// predict/calibrate/calibration_figures.cc: which figures a cell has, and the log error between two
// cells' figures.
#include <gtest/gtest.h>

#include <cmath>

#include "orchestrator/calibrate/stored_run.h"

namespace kvsweep::orchestrator {
namespace {

using predict::CalibrationFigures;
using predict::Figure;
using predict::figure_name;
using predict::log_error;

figures::CellMetrics metrics(std::int64_t ok, std::size_t itl_count) {
  figures::CellMetrics m;
  m.ok = ok;
  m.ttft_ms.count = static_cast<std::size_t>(ok);
  m.ttft_ms.mean = 12;
  m.ttft_ms.median = 10;
  m.ttft_ms.p90 = 20;
  m.itl_ms.count = itl_count;
  m.itl_ms.mean = 3;
  m.itl_ms.median = 2.5;
  m.itl_ms.p90 = 4;
  m.output_throughput = 800;
  m.max_concurrent_requests = 7;
  m.kv_hit_rate_server = 0.25;
  return m;
}

TEST(CalibrationFigures, ReadsEveryFigureOfACell) {
  const CalibrationFigures f = figures_of(metrics(10, 90));
  EXPECT_EQ(f[Figure::kTtftMean], 12);
  EXPECT_EQ(f[Figure::kTtftP50], 10);
  EXPECT_EQ(f[Figure::kTtftP90], 20);
  EXPECT_EQ(f[Figure::kItlMean], 3);
  EXPECT_EQ(f[Figure::kItlP50], 2.5);
  EXPECT_EQ(f[Figure::kItlP90], 4);
  EXPECT_EQ(f[Figure::kOutputTokS], 800);
  EXPECT_EQ(f.max_in_flight, 7);
  EXPECT_EQ(f.kv_hit, 0.25);
  EXPECT_EQ(figure_name(Figure::kOutputTokS), "output tok/s");
}

// One-token replies have no ITL, and a cell with nothing ok has no figure at all: both are
// absent, never a 0 a fit would chase.
TEST(CalibrationFigures, AFigureACellDidNotHaveIsAbsent) {
  const CalibrationFigures no_itl = figures_of(metrics(10, 0));
  EXPECT_FALSE(no_itl[Figure::kItlP50]);
  EXPECT_TRUE(no_itl[Figure::kTtftP50]);
  const CalibrationFigures nothing = figures_of(metrics(0, 0));
  for (const auto& v : nothing.values) EXPECT_FALSE(v);
}

TEST(CalibrationFigures, TheLogErrorIsOfPredictedOverMeasured) {
  const CalibrationFigures measured = figures_of(metrics(10, 90));
  figures::CellMetrics faster = metrics(10, 90);
  faster.ttft_ms.median = 5;
  const CalibrationFigures predicted = figures_of(faster);
  EXPECT_DOUBLE_EQ(*log_error(predicted, measured, Figure::kTtftP50), std::log(0.5));
  EXPECT_DOUBLE_EQ(*log_error(predicted, measured, Figure::kItlP90), 0);
  EXPECT_FALSE(log_error(figures_of(metrics(10, 0)), measured, Figure::kItlP50));
}

}  // namespace
}  // namespace kvsweep::orchestrator
