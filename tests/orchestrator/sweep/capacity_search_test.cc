// The capacity search against fleets whose capacity is known exactly (a load passes when it is
// at most the capacity): it brackets the capacity within the precision, a guide saves probes,
// undecided and uncounted probes are tried again, and its bounds end it.
#include "orchestrator/sweep/capacity_search.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>

namespace kvsweep::orchestrator {
namespace {

SearchSpec rate_search(double low = 1, double high = 1000, double precision = 0.1) {
  SearchSpec spec;
  spec.factor = "load.request_rate";
  spec.low = low;
  spec.high = high;
  spec.precision = precision;
  return spec;
}

// Runs the search to its end against `verdict`; returns the search.
CapacitySearch run(CapacitySearch search, const std::function<ProbeOutcome(double)>& verdict) {
  for (int guard = 0; search.next_load() && guard < 1000; ++guard) {
    const double load = *search.next_load();
    search.record(load, verdict(load));
  }
  return search;
}

std::function<ProbeOutcome(double)> capacity_of(double capacity) {
  return [capacity](double load) {
    return load <= capacity ? ProbeOutcome::kPass : ProbeOutcome::kFail;
  };
}

TEST(CapacitySearch, BracketsARateWithinThePrecision) {
  for (const double capacity : {1.7, 9.99, 37.3, 512.0, 999.0}) {
    const CapacitySearch s = run(CapacitySearch(rate_search(), false), capacity_of(capacity));
    const CapacityResult& r = s.result();
    ASSERT_TRUE(r.done);
    ASSERT_TRUE(r.capacity) << capacity;
    ASSERT_TRUE(r.first_failing) << capacity;
    EXPECT_LE(*r.capacity, capacity);
    EXPECT_GT(*r.first_failing, capacity);
    EXPECT_LE(*r.first_failing, *r.capacity * 1.1 * (1 + 1e-9)) << capacity;
  }
}

TEST(CapacitySearch, ConcurrencyIsWholeAndEndsOneApart) {
  SearchSpec spec = rate_search(1, 4096, 0.01);
  spec.factor = "concurrency";
  const CapacitySearch s = run(CapacitySearch(spec, true), capacity_of(23));
  EXPECT_EQ(s.result().capacity, 23);
  EXPECT_EQ(s.result().first_failing, 24);
  for (const SearchProbe& p : s.probes()) EXPECT_EQ(p.load, static_cast<int>(p.load));
}

TEST(CapacitySearch, GrowsGeometricallyThenBisects) {
  const CapacitySearch s = run(CapacitySearch(rate_search(1, 1000, 0.1), false), capacity_of(20));
  std::vector<double> loads;
  for (const SearchProbe& p : s.probes()) loads.push_back(p.load);
  // Doubling from the lower bound until 32 fails, then geometric middles of 16..32.
  const std::vector<double> expected = {1, 2, 4, 8, 16, 32, 22.6, 19, 20.7};
  EXPECT_EQ(loads, expected);
  EXPECT_EQ(s.result().capacity, 19);
  EXPECT_EQ(s.result().first_failing, 20.7);
}

// A guess within the precision of the capacity is bracketed by two probes; over many fleets a
// guess 5% off needs at most half the probes of the unguided search.
TEST(CapacitySearch, AGuideWithinThePrecisionSavesHalfTheProbes) {
  std::size_t guided = 0;
  std::size_t unguided = 0;
  for (double capacity = 2; capacity < 900; capacity *= 1.37) {
    for (const double error : {0.95, 1.05}) {
      const CapacitySearch g =
          run(CapacitySearch(rate_search(), false, capacity * error), capacity_of(capacity));
      const CapacitySearch u = run(CapacitySearch(rate_search(), false), capacity_of(capacity));
      ASSERT_LE(*g.result().first_failing, *g.result().capacity * 1.1 * (1 + 1e-9));
      EXPECT_LE(*g.result().capacity, capacity);
      EXPECT_GT(*g.result().first_failing, capacity);
      guided += g.probes().size();
      unguided += u.probes().size();
    }
  }
  EXPECT_LE(2 * guided, unguided) << guided << " guided, " << unguided << " unguided probes";
}

TEST(CapacitySearch, AGuideFarOffStillFindsTheCapacity) {
  for (const double guess : {0.2, 7.0}) {
    const CapacitySearch s = run(CapacitySearch(rate_search(), false, 50 * guess), capacity_of(50));
    EXPECT_LE(*s.result().capacity, 50) << guess;
    EXPECT_GT(*s.result().first_failing, 50) << guess;
    EXPECT_LE(*s.result().first_failing, *s.result().capacity * 1.1 * (1 + 1e-9));
  }
}

TEST(CapacitySearch, AnUndecidedLoadIsTriedAgainThenCountsAsFailing) {
  SearchSpec spec = rate_search(1, 64);
  spec.max_tries = 3;
  const CapacitySearch s = run(CapacitySearch(spec, false), [](double load) {
    return load < 8    ? ProbeOutcome::kPass
           : load == 8 ? ProbeOutcome::kUndecided
                       : ProbeOutcome::kFail;
  });
  int tries_at_8 = 0;
  for (const SearchProbe& p : s.probes()) tries_at_8 += p.load == 8 ? 1 : 0;
  EXPECT_EQ(tries_at_8, 3);
  EXPECT_LT(*s.result().capacity, 8);
  EXPECT_EQ(s.result().first_failing, 8);
  ASSERT_EQ(s.warnings().size(), 1u);
  EXPECT_NE(s.warnings()[0].find("undecided in 3 tries"), std::string::npos);
}

TEST(CapacitySearch, AnUndecidedLoadThatPassesOnItsSecondTryPasses) {
  int calls_at_4 = 0;
  const CapacitySearch s = run(CapacitySearch(rate_search(1, 64), false), [&](double load) {
    if (load == 4) return ++calls_at_4 == 1 ? ProbeOutcome::kUndecided : ProbeOutcome::kPass;
    return load <= 5 ? ProbeOutcome::kPass : ProbeOutcome::kFail;
  });
  EXPECT_EQ(calls_at_4, 2);
  EXPECT_GE(*s.result().capacity, 4);
}

TEST(CapacitySearch, AClientBoundProbeNeverCountsAsFailing) {
  // The driver cannot send 16/s or more: the server never failed, so there is no failing
  // load, and the search says the load generator is why.
  const CapacitySearch s = run(CapacitySearch(rate_search(1, 1000), false), [](double load) {
    return load >= 16 ? ProbeOutcome::kNotCounted : ProbeOutcome::kPass;
  });
  EXPECT_EQ(s.result().capacity, 8);
  EXPECT_FALSE(s.result().first_failing);
  EXPECT_NE(s.result().why.find("load generator could not drive 16"), std::string::npos)
      << s.result().why;
  EXPECT_EQ(s.warnings().size(), 1u);
}

TEST(CapacitySearch, OneUncountedTryIsRepeatedAndTheSearchGoesOn) {
  int calls_at_2 = 0;
  const CapacitySearch s = run(CapacitySearch(rate_search(1, 64), false), [&](double load) {
    if (load == 2 && ++calls_at_2 == 1) return ProbeOutcome::kNotCounted;
    return load <= 10 ? ProbeOutcome::kPass : ProbeOutcome::kFail;
  });
  EXPECT_EQ(calls_at_2, 2);
  EXPECT_LE(*s.result().capacity, 10);
  EXPECT_GT(*s.result().first_failing, 10);
}

TEST(CapacitySearch, TheBoundsEndIt) {
  const CapacitySearch above = run(CapacitySearch(rate_search(1, 64), false), capacity_of(500));
  EXPECT_EQ(above.result().capacity, 64);
  EXPECT_FALSE(above.result().first_failing);
  EXPECT_NE(above.result().why.find("raise search.high"), std::string::npos);
  const CapacitySearch below =
      run(CapacitySearch(rate_search(1, 64), false, 10.0), capacity_of(0.5));
  EXPECT_FALSE(below.result().capacity);
  EXPECT_EQ(below.result().first_failing, 1);
  EXPECT_NE(below.result().why.find("lower search.low"), std::string::npos);
}

TEST(CapacitySearch, MaxProbesEndsIt) {
  SearchSpec spec = rate_search(1, 1000, 0.001);
  spec.max_probes = 5;
  const CapacitySearch s = run(CapacitySearch(spec, false), capacity_of(300));
  EXPECT_EQ(s.probes().size(), 5u);
  EXPECT_NE(s.result().why.find("max_probes"), std::string::npos);
}

// A resumed sweep replays its stored verdicts: they must be asked for in the same order.
TEST(CapacitySearch, AVerdictForAnotherLoadIsRefused) {
  CapacitySearch s(rate_search(), false);
  EXPECT_THROW(s.record(3, ProbeOutcome::kPass), std::logic_error);
  s.record(1, ProbeOutcome::kPass);
  EXPECT_EQ(s.next_load(), 2);
}

}  // namespace
}  // namespace kvsweep::orchestrator
