// csrc/vdsim/async_timeline.hpp: mode B's computation-delay timeline.
//
// Expectations come from the header's comment, docs/ENVS.md ("Latency") and
// docs/EVAL_MODES.md ("B: virtual_async"): sample k is observed at t_k = k Tc and starts at
// t_start = max(t_k, finish of the previous sample); the controller is called at the first
// substep at or after t_start; its command applies at ceil((t_start + c_k) / dt) (with the
// clock's tolerance); an overrun is a finish past grid point k + 1 (c_k == Tc exactly is
// not one). skip: the next sample is the first grid point at or after the finish, the ones
// in between are skipped (c = 2.5 Tc: each step spans 3 periods, 2 skipped). queue: every
// grid sample is taken, in order, so with c > Tc the delay t_apply - t_sample grows by
// c - Tc per step.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "check.hpp"
#include "vdsim/async_timeline.hpp"
#include "vdsim/schedule.hpp"

using vdsim::AsyncTimeline;
using vdsim::Command;
using vdsim::CommandSchedule;
using vdsim::OverrunPolicy;
using vdsim::SampleTiming;

namespace {

constexpr double kDt = 5e-4;    // the default substep
constexpr int64_t kP = 40;      // Tc = 20 ms
constexpr double kTc = 0.02;

// Commits the next sample (k = next_k()) with delay c.
SampleTiming next(AsyncTimeline& tl, double c) { return tl.commit(tl.next_k(), c); }

void test_accessors() {
  AsyncTimeline tl(kDt, kP, OverrunPolicy::Queue);
  CHECK(tl.policy() == OverrunPolicy::Queue);
  CHECK_EQ(tl.period_ticks(), kP);
  CHECK_EQ(tl.next_k(), int64_t{0});
  CHECK(std::fabs(tl.period_s() - kTc) < 1e-15);
  CHECK(std::fabs(tl.grid_time(7) - 0.14) < 1e-15);
  CHECK_EQ(tl.n_overrun(), int64_t{0});
  CHECK_EQ(tl.n_skipped(), int64_t{0});
  AsyncTimeline def;  // the default: skip, 40 ticks of 0.5 ms
  CHECK(def.policy() == OverrunPolicy::Skip);
  CHECK_EQ(def.period_ticks(), int64_t{40});
}

// Delays that never overrun behave the same under both policies: one sample per period,
// called on its grid tick, applied ceil(c / dt) ticks later.
void test_no_overrun(OverrunPolicy policy) {
  struct Case {
    double c;
    int64_t ticks;  // ceil(c / dt)
  };
  const Case cases[] = {{0.0, 0}, {0.0007, 2}, {0.003, 6}, {0.01, 20}, {0.0101, 21},
                        {0.0005 * (3.0 + 1e-12), 3}, {0.0005 * 3.01, 4}};
  for (const Case& cs : cases) {
    AsyncTimeline tl(kDt, kP, policy);
    int64_t bad = -1;
    for (int64_t k = 0; k < 200; ++k) {
      const SampleTiming s = next(tl, cs.c);
      const bool ok = s.k == k && s.sample_tick == k * kP && s.call_tick == k * kP &&
                      s.apply_tick == k * kP + cs.ticks && !s.overrun && s.c == cs.c &&
                      s.t_finish == s.t_start + cs.c && tl.next_k() == k + 1;
      if (!ok && bad < 0) bad = k;
    }
    CHECK_MSG(bad < 0, "c = " << cs.c << ": first wrong sample " << bad);
    CHECK_EQ(tl.n_overrun(), int64_t{0});
    CHECK_EQ(tl.n_skipped(), int64_t{0});
  }
}

// c == Tc exactly is not an overrun: each command lands on the next grid point.
void test_c_equals_tc(OverrunPolicy policy) {
  AsyncTimeline tl(kDt, kP, policy);
  int64_t bad = -1;
  for (int64_t k = 0; k < 500; ++k) {
    const SampleTiming s = next(tl, kTc);
    const bool ok = s.k == k && s.call_tick == k * kP && s.apply_tick == (k + 1) * kP &&
                    !s.overrun;
    if (!ok && bad < 0) bad = k;
  }
  CHECK_MSG(bad < 0, "first wrong sample " << bad);
  CHECK_EQ(tl.next_k(), int64_t{500});
  CHECK_EQ(tl.n_overrun(), int64_t{0});
  CHECK_EQ(tl.n_skipped(), int64_t{0});
}

void test_skip_two_and_a_half_periods() {
  // c = 2.5 Tc: every step spans 3 periods, 2 skipped (docs/ENVS.md).
  AsyncTimeline tl(kDt, kP, OverrunPolicy::Skip);
  int64_t bad = -1;
  for (int64_t j = 0; j < 50; ++j) {
    const SampleTiming s = next(tl, 2.5 * kTc);
    const bool ok = s.k == 3 * j && s.sample_tick == 3 * j * kP && s.call_tick == 3 * j * kP &&
                    s.apply_tick == 3 * j * kP + 100 && s.overrun &&
                    tl.next_k() == 3 * (j + 1) && tl.n_skipped() == 2 * (j + 1) &&
                    tl.n_overrun() == j + 1;
    if (!ok && bad < 0) bad = j;
  }
  CHECK_MSG(bad < 0, "first wrong step " << bad);
  CHECK_EQ(tl.n_skipped(), int64_t{100});
  CHECK_EQ(tl.n_overrun(), int64_t{50});

  // reset() starts over: sample 0, worker free at 0, counters at 0.
  tl.reset();
  CHECK_EQ(tl.next_k(), int64_t{0});
  CHECK_EQ(tl.n_skipped(), int64_t{0});
  CHECK_EQ(tl.n_overrun(), int64_t{0});
  const SampleTiming s = next(tl, 0.0);
  CHECK_EQ(s.t_start, 0.0);
  CHECK_EQ(s.call_tick, int64_t{0});
  CHECK_EQ(s.apply_tick, int64_t{0});
  CHECK_EQ(tl.next_k(), int64_t{1});
}

void test_queue_two_and_a_half_periods() {
  // c = 2.5 Tc queued: every grid sample is taken; sample k starts when the worker frees
  // up at 2.5 k Tc, so the delay t_apply - t_sample grows by c - Tc = 60 ticks per step,
  // and the backlog (grid samples due at the call, not yet started) grows too.
  AsyncTimeline tl(kDt, kP, OverrunPolicy::Queue);
  int64_t bad = -1, bad_backlog = -1;
  for (int64_t k = 0; k < 100; ++k) {
    const SampleTiming s = next(tl, 2.5 * kTc);
    const bool ok = s.k == k && s.sample_tick == k * kP && s.call_tick == 100 * k &&
                    std::fabs(s.t_start - 0.05 * static_cast<double>(k)) < 1e-12 &&
                    s.apply_tick == 100 * (k + 1) && s.overrun && tl.next_k() == k + 1 &&
                    s.apply_tick - s.sample_tick == 100 + 60 * k;
    if (!ok && bad < 0) bad = k;
    const int64_t backlog = s.call_tick / kP - k;  // samples k+1 .. due by the call tick
    if (backlog != (3 * k) / 2 && bad_backlog < 0) bad_backlog = k;
  }
  CHECK_MSG(bad < 0, "first wrong sample " << bad);
  CHECK_MSG(bad_backlog < 0, "first sample with the wrong backlog " << bad_backlog);
  CHECK_EQ(tl.n_skipped(), int64_t{0});
  CHECK_EQ(tl.n_overrun(), int64_t{100});
}

void test_queue_drains() {
  // One long computation, then none: the queued samples catch up and the grid resumes.
  AsyncTimeline tl(kDt, kP, OverrunPolicy::Queue);
  const double delays[] = {0.05, 0.0, 0.0, 0.0, 0.01};
  // k: call tick, apply tick, overrun.
  const int64_t expect[][3] = {{0, 100, 1}, {100, 100, 1}, {100, 100, 0}, {120, 120, 0},
                               {160, 180, 0}};
  CommandSchedule schedule;
  for (int64_t k = 0; k < 5; ++k) {
    const SampleTiming s = next(tl, delays[k]);
    CHECK_EQ(s.k, k);
    CHECK_EQ(s.sample_tick, k * kP);
    CHECK_EQ(s.call_tick, expect[k][0]);
    CHECK_EQ(s.apply_tick, expect[k][1]);
    CHECK_EQ(s.overrun, expect[k][2] != 0);
    schedule.push(s.apply_tick, Command{static_cast<double>(k), 0.0});
  }
  CHECK_EQ(tl.n_overrun(), int64_t{2});
  CHECK_EQ(tl.n_skipped(), int64_t{0});
  // Through the command schedule: samples 0, 1 and 2 all apply at tick 100, so sample 2's
  // command (the last to arrive) is the one in force from tick 100.
  Command current{-1.0, 0.0};
  std::vector<double> in_force;
  for (int64_t tick = 0; tick <= 200; ++tick) {
    schedule.apply_due(tick, current);
    in_force.push_back(current.steer);
  }
  CHECK_EQ(in_force[99], -1.0);
  CHECK_EQ(in_force[100], 2.0);
  CHECK_EQ(in_force[119], 2.0);
  CHECK_EQ(in_force[120], 3.0);
  CHECK_EQ(in_force[179], 3.0);
  CHECK_EQ(in_force[180], 4.0);
  CHECK_EQ(in_force[200], 4.0);
  CHECK_EQ(schedule.pending(), size_t{0});
}

void test_mixed_delays() {
  const double delays[] = {0.03, 0.005, 0.041, 0.0201};
  {
    // skip: 1.5 Tc skips one sample, 2.05 Tc from sample 3 lands at 5.05 Tc (two skipped),
    // 1.005 Tc just passes grid point k + 1 (one skipped).
    AsyncTimeline tl(kDt, kP, OverrunPolicy::Skip);
    // k, call tick, apply tick, overrun, next_k, n_skipped
    const int64_t expect[][6] = {{0, 0, 60, 1, 2, 1}, {2, 80, 90, 0, 3, 1},
                                 {3, 120, 202, 1, 6, 3}, {6, 240, 281, 1, 8, 4}};
    for (int i = 0; i < 4; ++i) {
      const SampleTiming s = next(tl, delays[i]);
      CHECK_EQ(s.k, expect[i][0]);
      CHECK_EQ(s.call_tick, expect[i][1]);
      CHECK_EQ(s.apply_tick, expect[i][2]);
      CHECK_EQ(s.overrun, expect[i][3] != 0);
      CHECK_EQ(tl.next_k(), expect[i][4]);
      CHECK_EQ(tl.n_skipped(), expect[i][5]);
    }
    CHECK_EQ(tl.n_overrun(), int64_t{3});
  }
  {
    // queue: the same delays, every sample taken; sample 1 waits for the worker until
    // 30 ms (called at tick 60) and finishes before grid point 2, so it is no overrun.
    AsyncTimeline tl(kDt, kP, OverrunPolicy::Queue);
    const int64_t expect[][4] = {{0, 0, 60, 1}, {1, 60, 70, 0}, {2, 80, 162, 1},
                                 {3, 162, 203, 1}};
    for (int i = 0; i < 4; ++i) {
      const SampleTiming s = next(tl, delays[i]);
      CHECK_EQ(s.k, expect[i][0]);
      CHECK_EQ(s.call_tick, expect[i][1]);
      CHECK_EQ(s.apply_tick, expect[i][2]);
      CHECK_EQ(s.overrun, expect[i][3] != 0);
    }
    CHECK_EQ(tl.n_overrun(), int64_t{3});
    CHECK_EQ(tl.n_skipped(), int64_t{0});
    CHECK_EQ(tl.next_k(), int64_t{4});
  }
}

void test_grid_boundaries() {
  {
    // Finishing exactly on grid point 2 overruns (past point 1); the next sample is 2.
    AsyncTimeline tl(kDt, kP, OverrunPolicy::Skip);
    const SampleTiming s = next(tl, 2.0 * kTc);
    CHECK(s.overrun);
    CHECK_EQ(s.apply_tick, int64_t{80});
    CHECK_EQ(tl.next_k(), int64_t{2});
    CHECK_EQ(tl.n_skipped(), int64_t{1});
    const SampleTiming s2 = next(tl, 0.0);
    CHECK_EQ(s2.k, int64_t{2});
    CHECK_EQ(s2.call_tick, int64_t{80});
    CHECK_EQ(s2.apply_tick, int64_t{80});
  }
  {
    // The clock's tolerance: 0.07 / 0.02 is 3.5000000000000004 (next sample 4, three
    // skipped) and 0.06 s is 120 ticks, 3 periods exactly (next sample 3, two skipped).
    AsyncTimeline tl(kDt, kP, OverrunPolicy::Skip);
    const SampleTiming s = next(tl, 0.07);
    CHECK_EQ(s.apply_tick, int64_t{140});
    CHECK_EQ(tl.next_k(), int64_t{4});
    CHECK_EQ(tl.n_skipped(), int64_t{3});
    AsyncTimeline tl2(kDt, kP, OverrunPolicy::Skip);
    const SampleTiming s2 = next(tl2, 0.06);
    CHECK_EQ(s2.apply_tick, int64_t{120});
    CHECK_EQ(tl2.next_k(), int64_t{3});
    CHECK_EQ(tl2.n_skipped(), int64_t{2});
  }
  {
    // queue: a worker freeing up between substeps: the call is at the next substep,
    // t_start is the exact finish.
    AsyncTimeline tl(kDt, kP, OverrunPolicy::Queue);
    next(tl, 0.0301);
    const SampleTiming s = next(tl, 0.0);
    CHECK_EQ(s.k, int64_t{1});
    CHECK_EQ(s.call_tick, int64_t{61});  // ceil(60.2)
    CHECK_EQ(s.t_start, 0.0301);
    CHECK_EQ(s.apply_tick, int64_t{61});
    CHECK_EQ(tl.call_tick(2), int64_t{80});  // the worker is free again by grid point 2
    CHECK_EQ(tl.start_time(2), tl.grid_time(2));
  }
}

// Fixed-seed generator (no <random>: the same draws on every platform).
struct Lcg {
  uint64_t state;
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Random delay sequences against an integer reference written from the docs. dt = 2^-11 s
// and delays in quarter ticks (2^-13 s) make every time the timeline computes exact, so the
// reference can work in integer quarter ticks with no tolerance at all.
void test_against_integer_reference(OverrunPolicy policy) {
  const double dt = 1.0 / 2048.0;
  const double unit = dt / 4.0;  // one quarter tick [s]
  const int64_t P = 40, tc_u = 4 * P;
  Lcg rng{policy == OverrunPolicy::Skip ? 7u : 8u};
  int64_t wrong = 0, first_bad = -1, overruns = 0, skips = 0;
  for (int trial = 0; trial < 200; ++trial) {
    AsyncTimeline tl(dt, P, policy);
    int64_t k = 0, free_u = 0, n_overrun = 0, n_skipped = 0;
    for (int i = 0; i < 50; ++i) {
      int64_t c_u;
      switch (rng.below(6)) {
        case 0: c_u = tc_u; break;                  // exactly Tc
        case 1: c_u = 10 * P; break;                // 2.5 Tc
        case 2: c_u = 4 * rng.below(3 * P + 1); break;  // whole ticks up to 3 Tc
        default: c_u = rng.below(3 * tc_u + 1);     // quarter ticks up to 3 Tc
      }
      // Reference (docs/EVAL_MODES.md).
      const int64_t start_u = std::max(k * tc_u, free_u);
      const int64_t finish_u = start_u + c_u;
      const int64_t call_tick = ceil_div(start_u, 4);  // first substep at or after t_start
      const int64_t apply_tick = ceil_div(finish_u, 4);
      const int64_t first_free = ceil_div(finish_u, tc_u);  // first grid point at/after it
      const bool overrun = finish_u > (k + 1) * tc_u;       // past grid point k + 1
      const int64_t next_k = policy == OverrunPolicy::Skip ? std::max(k + 1, first_free) : k + 1;
      n_overrun += overrun;
      n_skipped += next_k - (k + 1);
      // The timeline.
      const bool was_next = tl.next_k() == k;
      const SampleTiming s = tl.commit(k, static_cast<double>(c_u) * unit);
      const bool ok = was_next && s.k == k && s.sample_tick == k * P &&
                      s.call_tick == call_tick &&
                      s.t_start == static_cast<double>(start_u) * unit &&
                      s.t_finish == static_cast<double>(finish_u) * unit &&
                      s.apply_tick == apply_tick && s.overrun == overrun &&
                      tl.next_k() == next_k && tl.n_overrun() == n_overrun &&
                      tl.n_skipped() == n_skipped;
      if (!ok) {
        ++wrong;
        if (first_bad < 0) first_bad = trial;
      }
      free_u = finish_u;
      k = next_k;
    }
    overruns += n_overrun;
    skips += n_skipped;
  }
  CHECK_MSG(wrong == 0,
            wrong << " samples differ from the reference, first in trial " << first_bad);
  CHECK(overruns > 1000);  // the draw exercises overruns (and skips, under skip)
  CHECK(policy == OverrunPolicy::Queue ? skips == 0 : skips > 1000);
}

}  // namespace

int main() {
  test_accessors();
  test_no_overrun(OverrunPolicy::Skip);
  test_no_overrun(OverrunPolicy::Queue);
  test_c_equals_tc(OverrunPolicy::Skip);
  test_c_equals_tc(OverrunPolicy::Queue);
  test_skip_two_and_a_half_periods();
  test_queue_two_and_a_half_periods();
  test_queue_drains();
  test_mixed_delays();
  test_grid_boundaries();
  test_against_integer_reference(OverrunPolicy::Skip);
  test_against_integer_reference(OverrunPolicy::Queue);
  return vdsim_test::check_summary("async_timeline");
}
