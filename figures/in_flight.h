// The requests-in-flight series of a cell, from its stored rows: time-weighted means, the
// backlog of due-but-unsent requests, and the steady window between ramp-up and drain.
#pragma once

#include <vector>

#include "store/rows.h"

namespace kvsweep::figures {

// A step function of time: value from each point's t until the next point's.
struct StepPoint {
  double t = 0;
  int value = 0;
};

// +1 at each start, -1 at each end, as a step series from 0, ordered by time (an end and a
// start at the same instant: the end first, so a slot handed on is never counted twice).
std::vector<StepPoint> step_series(const std::vector<double>& starts,
                                   const std::vector<double>& ends);

// The series' time-weighted mean over [t0, t1); 0 for an empty interval.
double time_weighted_mean(const std::vector<StepPoint>& series, double t0, double t1);

// The series' time-weighted median over [t0, t1): the least value v such that the series is
// at most v for half the interval or more.
double time_weighted_median(const std::vector<StepPoint>& series, double t0, double t1);

// The first time at or after t0 the series reaches `level`; t1 when it never does before t1.
double first_reach(const std::vector<StepPoint>& series, double level, double t0, double t1);

// Over the times in [t0, t1) where `gate` is above 0: how long that was, and the mean of
// `series` over them.
struct GatedMean {
  double seconds = 0;
  double mean = 0;
};
GatedMean mean_while(const std::vector<StepPoint>& series, const std::vector<StepPoint>& gate,
                     double t0, double t1);

// The series' value at t (0 before its first point).
int value_at(const std::vector<StepPoint>& series, double t);

// When a measured request stopped occupying the servers: its last token when it produced
// tokens, else when it ended (a failure), else (rows before schema 3) sent + e2e.
double busy_until_s(const store::RequestRow& r);

}  // namespace kvsweep::figures
