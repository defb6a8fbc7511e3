// Tests for predict/calibrate/calibration.cc without a store, a scenario or a runner: the fit is
// handed cells and a replayer whose figures follow a closed-form step-time model, so the
// coefficients it must find are known exactly.
#include "predict/calibrate/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvsweep::predict {
namespace {

// A cell of the made-up run: its prompt length and the batch its replica ran.
struct Shape {
  double prompt_tokens = 0;
  int batch = 1;
};

// Figures of a cell under profile `p`: a decode step costs base + decode x batch (ITL), the
// first token base + prefill x prompt (TTFT), and the replica emits a token a sequence a step.
CalibrationFigures figures_under(const sim::TimingProfile& p, const Shape& s) {
  const double step_ms = (p.base_us + p.per_decode_token_us * s.batch) / 1000;
  const double first_ms = (p.base_us + p.per_prefill_token_us * s.prompt_tokens) / 1000;
  CalibrationFigures f;
  f[Figure::kTtftMean] = first_ms * 1.05;
  f[Figure::kTtftP50] = first_ms;
  f[Figure::kTtftP90] = first_ms * 1.3;
  f[Figure::kItlMean] = step_ms * 1.02;
  f[Figure::kItlP50] = step_ms;
  f[Figure::kItlP90] = step_ms * 1.2;
  f[Figure::kOutputTokS] = s.batch * 1000 / step_ms;
  f.max_in_flight = s.batch;
  f.ok = 100;
  return f;
}

class ClosedFormReplayer final : public CellReplayer {
 public:
  explicit ClosedFormReplayer(std::vector<Shape> shapes) : shapes_(std::move(shapes)) {}
  std::vector<std::optional<CalibrationFigures>> figures(
      const sim::TimingProfile& profile, const std::vector<std::size_t>& cells) override {
    ++replays_;
    std::vector<std::optional<CalibrationFigures>> out;
    for (const std::size_t i : cells) out.push_back(figures_under(profile, shapes_.at(i)));
    return out;
  }
  int replays() const override { return replays_; }

 private:
  std::vector<Shape> shapes_;
  int replays_ = 0;
};

sim::TimingProfile profile(double base, double prefill, double decode) {
  sim::TimingProfile p;
  p.name = "made-up";
  p.base_us = base;
  p.per_prefill_token_us = prefill;
  p.per_decode_token_us = decode;
  return p;
}

FitRun run_of(const sim::TimingProfile& truth, const std::vector<Shape>& shapes,
              std::size_t held_out) {
  FitRun run;
  run.name = "a made-up run";
  run.replicas = 1;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    run.cells.push_back(
        {"cell " + std::to_string(i), figures_under(truth, shapes[i]), i == held_out});
  }
  run.kv_pool_note = "no /metrics";
  return run;
}

TEST(PredictCalibrate, RecoversTheCoefficientsOfAClosedFormEngine) {
  const sim::TimingProfile truth = profile(2600, 41, 57);
  const std::vector<Shape> shapes = {{200, 2}, {800, 8}, {400, 32}, {1600, 16}};
  const FitRun run = run_of(truth, shapes, 3);
  ClosedFormReplayer replayer(shapes);
  CalibrationOptions options;
  options.max_replays = 400;
  const CalibrationResult r = calibrate(run, replayer, profile(5200, 20.5, 114), options);
  EXPECT_NEAR(r.fitted.base_us / truth.base_us, 1, 0.02) << r.fitted.base_us;
  EXPECT_NEAR(r.fitted.per_prefill_token_us / truth.per_prefill_token_us, 1, 0.02)
      << r.fitted.per_prefill_token_us;
  EXPECT_NEAR(r.fitted.per_decode_token_us / truth.per_decode_token_us, 1, 0.02)
      << r.fitted.per_decode_token_us;
  EXPECT_GT(r.fitted_error_before, 0.3);
  EXPECT_LT(r.fitted_error_after, 0.01);
  ASSERT_TRUE(r.held_out_error_after);
  EXPECT_LT(*r.held_out_error_after, 0.02);  // the cell it never saw, predicted
  EXPECT_EQ(r.replays, replayer.replays());
  ASSERT_EQ(r.cells.size(), shapes.size());
  EXPECT_TRUE(r.cells[3].held_out);
  EXPECT_FALSE(r.coefficients[3].free);  // no KV-usage term in the start
  EXPECT_NE(r.kv_pool.find("kept from the start profile: no /metrics"), std::string::npos)
      << r.kv_pool;
  const sim::TimingProfile kept = calibrated_profile(r, "fitted", "a made-up run");
  EXPECT_EQ(kept.name, "fitted");
  EXPECT_EQ(kept.source.rfind("calibrated by kvsweep calibrate from a made-up run, starting from "
                              "profile made-up; ",
                              0),
            0u)
      << kept.source;
}

// Every fitted cell ran the same batch: a step's cost per sequence cannot be told from its fixed
// part, and the fit refuses before any replay, naming the run.
TEST(PredictCalibrate, ARunOfOneBatchSizeIsRefusedBeforeAnyReplay) {
  const sim::TimingProfile truth = profile(2600, 41, 57);
  const std::vector<Shape> shapes = {{200, 8}, {800, 8}, {1600, 8}};
  ClosedFormReplayer replayer(shapes);
  try {
    calibrate(run_of(truth, shapes, shapes.size()), replayer, profile(5200, 20.5, 114));
    FAIL() << "fitted a run that cannot constrain per_decode_token_us";
  } catch (const CalibrationRefused& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("calibrate: a made-up run cannot constrain"), std::string::npos) << what;
    EXPECT_NE(what.find("per_decode_token_us: every fitted cell ran about the same batch"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(replayer.replays(), 0);
}

}  // namespace
}  // namespace kvsweep::predict
