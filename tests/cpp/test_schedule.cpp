// csrc/vdsim/schedule.hpp: the seconds-to-ticks helpers and the command schedule.
//
// Expectations come from the header's comments and docs/ARCHITECTURE.md ("Time"):
// whole_ticks is the whole number of substeps in `seconds` (-1 when not whole, -2 when
// the quotient is not finite or beyond kMaxTicks = 2^53); ceil_ticks is ceil(seconds / dt)
// where a quotient within 1e-9 relative (at least 1e-9 absolute) of an integer counts as
// that integer, saturating at +-kMaxTicks (NaN: kMaxTicks). The schedule keeps commands
// ordered by apply tick, equal ticks in arrival order, and apply_due applies every due
// command, so the command in force at tick t is the last one (in that order) with
// apply tick <= t (tests/test_schedule.py states the same reference in Python).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "check.hpp"
#include "vdsim/schedule.hpp"

using vdsim::ceil_ticks;
using vdsim::Command;
using vdsim::CommandSchedule;
using vdsim::kMaxTicks;
using vdsim::whole_ticks;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

void test_whole_multiples() {
  // Float quotients that land just above an integer: a plain ceil would be one too many.
  CHECK(0.14 / 0.02 > 7.0);
  CHECK_EQ(std::ceil(0.14 / 0.02), 8.0);
  CHECK_EQ(ceil_ticks(0.14, 0.02), int64_t{7});
  CHECK_EQ(whole_ticks(0.14, 0.02), int64_t{7});
  CHECK(std::ceil((0.1 + 0.2) / 0.1) == 4.0);
  CHECK_EQ(ceil_ticks(0.1 + 0.2, 0.1), int64_t{3});
  CHECK_EQ(whole_ticks(0.1 + 0.2, 0.1), int64_t{3});
  double t = 0.0;  // 18 control periods of 10 ms summed in floating point
  for (int i = 0; i < 18; ++i) t += 0.01;
  CHECK(t / 0.0005 > 360.0);
  CHECK_EQ(ceil_ticks(t, 0.0005), int64_t{360});
  CHECK_EQ(whole_ticks(t, 0.0005), int64_t{360});
  // The docs' example: 0.06 s of 0.5 ms substeps is 120 ticks.
  CHECK_EQ(ceil_ticks(0.06, 0.0005), int64_t{120});
  CHECK_EQ(whole_ticks(0.06, 0.0005), int64_t{120});
  CHECK_EQ(whole_ticks(0.02, 0.0005), int64_t{40});
  CHECK_EQ(whole_ticks(0.0, 0.0005), int64_t{0});
  CHECK_EQ(ceil_ticks(0.0, 0.0005), int64_t{0});

  // Every n substeps written as a product or a sum, for a long range.
  int64_t bad_product = -1, bad_sum = -1;
  double sum = 0.0;
  for (int64_t n = 0; n <= 200000; ++n) {
    const double s = static_cast<double>(n) * 0.0005;
    if (bad_product < 0 && (whole_ticks(s, 0.0005) != n || ceil_ticks(s, 0.0005) != n))
      bad_product = n;
    if (bad_sum < 0 && n % 20 == 0 &&
        (whole_ticks(sum, 0.0005) != n || ceil_ticks(sum, 0.0005) != n))
      bad_sum = n;
    if (n % 20 == 0) sum += 0.01;  // sum is n / 20 periods of 10 ms at the next multiple
  }
  CHECK_MSG(bad_product < 0, "first n with n * dt not n ticks: " << bad_product);
  CHECK_MSG(bad_sum < 0, "first n with a sum of 10 ms steps not n ticks: " << bad_sum);
}

void test_tolerance_and_ceil() {
  // dt = 0.5: seconds / dt is exact, so q is what is written.
  const double dt = 0.5;
  // Relative 1e-9: 120 + 1e-7 is within (8.3e-10 relative), 120 + 2e-7 is not.
  CHECK_EQ(whole_ticks((120.0 + 1e-7) * dt, dt), int64_t{120});
  CHECK_EQ(ceil_ticks((120.0 + 1e-7) * dt, dt), int64_t{120});
  CHECK_EQ(ceil_ticks((120.0 - 1e-7) * dt, dt), int64_t{120});
  CHECK_EQ(whole_ticks((120.0 - 1e-7) * dt, dt), int64_t{120});
  CHECK_EQ(whole_ticks((120.0 + 2e-7) * dt, dt), int64_t{-1});
  CHECK_EQ(ceil_ticks((120.0 + 2e-7) * dt, dt), int64_t{121});
  CHECK_EQ(ceil_ticks((120.0 - 2e-7) * dt, dt), int64_t{120});
  // Below |q| = 1 the tolerance is 1e-9 absolute.
  CHECK_EQ(ceil_ticks(1e-10 * dt, dt), int64_t{0});
  CHECK_EQ(whole_ticks(1e-10 * dt, dt), int64_t{0});
  CHECK_EQ(ceil_ticks(5e-9 * dt, dt), int64_t{1});
  CHECK_EQ(whole_ticks(5e-9 * dt, dt), int64_t{-1});
  // The tolerance is relative: at 1e8 ticks it is 0.1 tick, so a quarter tick is not
  // whole; at 1e12 ticks it is 1000 ticks, so every quotient counts as the nearest
  // integer (ceil_ticks then rounds down a quarter tick, as its comment allows).
  CHECK_EQ(whole_ticks((1e8 + 0.25) * dt, dt), int64_t{-1});
  CHECK_EQ(ceil_ticks((1e8 + 0.25) * dt, dt), int64_t{100000001});
  CHECK_EQ(whole_ticks((1e8 + 0.05) * dt, dt), int64_t{100000000});
  CHECK_EQ(ceil_ticks((1e8 + 0.05) * dt, dt), int64_t{100000000});
  CHECK_EQ(whole_ticks((1e12 + 0.25) * dt, dt), int64_t{1000000000000});
  CHECK_EQ(ceil_ticks((1e12 + 0.25) * dt, dt), int64_t{1000000000000});
  CHECK_EQ(whole_ticks((1e12 + 100.0) * dt, dt), int64_t{1000000000100});
  // Not whole: ceil; whole_ticks says -1.
  CHECK_EQ(ceil_ticks(0.25, dt), int64_t{1});
  CHECK_EQ(whole_ticks(0.25, dt), int64_t{-1});
  CHECK_EQ(ceil_ticks(0.0007, 0.0005), int64_t{2});  // 1.4 substeps
  CHECK_EQ(whole_ticks(0.0007, 0.0005), int64_t{-1});
  CHECK_EQ(ceil_ticks(0.0101, 0.0005), int64_t{21});  // 20.2 substeps
  CHECK_EQ(whole_ticks(0.0101, 0.0005), int64_t{-1});
  // Negative seconds: ceil goes toward zero, the tolerance holds on that side too.
  CHECK_EQ(ceil_ticks(-2.5 * dt, dt), int64_t{-2});
  CHECK_EQ(ceil_ticks(-(3.0 + 1e-10) * dt, dt), int64_t{-3});
  CHECK_EQ(ceil_ticks(-(3.0 - 0.25) * dt, dt), int64_t{-2});
  CHECK_EQ(ceil_ticks(-1e-10 * dt, dt), int64_t{0});
  CHECK_EQ(whole_ticks(-2.5 * dt, dt), int64_t{-1});
}

void test_huge_and_non_finite() {
  const double max_d = static_cast<double>(kMaxTicks);
  CHECK_EQ(kMaxTicks, int64_t{9007199254740992});
  // whole_ticks: up to 2^53 is a count, beyond (either sign) or not finite is -2.
  CHECK_EQ(whole_ticks(max_d, 1.0), kMaxTicks);
  CHECK_EQ(whole_ticks(max_d - 1.0, 1.0), kMaxTicks - 1);
  CHECK_EQ(whole_ticks(max_d + 2.0, 1.0), int64_t{-2});
  CHECK_EQ(whole_ticks(-(max_d + 2.0), 1.0), int64_t{-2});
  CHECK_EQ(whole_ticks(1e300, 1e-300), int64_t{-2});  // the quotient overflows to inf
  CHECK_EQ(whole_ticks(1e300, 0.0005), int64_t{-2});
  CHECK_EQ(whole_ticks(-1e300, 0.0005), int64_t{-2});
  CHECK_EQ(whole_ticks(kInf, 0.0005), int64_t{-2});
  CHECK_EQ(whole_ticks(-kInf, 0.0005), int64_t{-2});
  CHECK_EQ(whole_ticks(kNaN, 0.0005), int64_t{-2});
  CHECK_EQ(whole_ticks(1.0, 0.0), int64_t{-2});  // 1 / 0 = inf
  CHECK_EQ(whole_ticks(0.0, 0.0), int64_t{-2});  // 0 / 0 = NaN
  CHECK_EQ(whole_ticks(1.0, kNaN), int64_t{-2});
  // ceil_ticks saturates at +-2^53; NaN gives +2^53.
  CHECK_EQ(ceil_ticks(max_d, 1.0), kMaxTicks);
  CHECK_EQ(ceil_ticks(-max_d, 1.0), -kMaxTicks);
  CHECK_EQ(ceil_ticks(max_d + 2.0, 1.0), kMaxTicks);
  CHECK_EQ(ceil_ticks(-(max_d + 2.0), 1.0), -kMaxTicks);
  CHECK_EQ(ceil_ticks(1e300, 0.0005), kMaxTicks);
  CHECK_EQ(ceil_ticks(-1e300, 0.0005), -kMaxTicks);
  CHECK_EQ(ceil_ticks(kInf, 0.0005), kMaxTicks);
  CHECK_EQ(ceil_ticks(-kInf, 0.0005), -kMaxTicks);
  CHECK_EQ(ceil_ticks(kNaN, 0.0005), kMaxTicks);
  CHECK_EQ(ceil_ticks(1.0, 0.0), kMaxTicks);
  CHECK_EQ(ceil_ticks(-1.0, 0.0), -kMaxTicks);
  CHECK_EQ(ceil_ticks(0.0, 0.0), kMaxTicks);
  // 2^53 microseconds is some 285 years, as the header says.
  CHECK(ceil_ticks(285.0 * 365.25 * 86400.0, 1e-6) < kMaxTicks);
  CHECK_EQ(ceil_ticks(286.0 * 365.25 * 86400.0, 1e-6), kMaxTicks);
  CHECK_EQ(whole_ticks(286.0 * 365.25 * 86400.0, 1e-6), int64_t{-2});
}

Command cmd(double steer) { return Command{steer, -steer}; }

void test_schedule_basics() {
  CommandSchedule s;
  Command current = cmd(9.0);
  CHECK_EQ(s.pending(), size_t{0});
  CHECK_EQ(s.next_tick(), int64_t{-1});
  CHECK(!s.apply_due(1000, current));
  CHECK_EQ(current.steer, 9.0);

  // Pushed out of order: kept by apply tick; equal ticks keep arrival order.
  s.push(5, cmd(1.0));
  s.push(2, cmd(2.0));
  s.push(8, cmd(3.0));
  s.push(2, cmd(4.0));
  s.push(5, cmd(5.0));
  s.push(0, cmd(6.0));
  CHECK_EQ(s.pending(), size_t{6});
  CHECK_EQ(s.next_tick(), int64_t{0});
  CHECK(s.apply_due(0, current));
  CHECK_EQ(current.steer, 6.0);
  CHECK_EQ(current.longitudinal, -6.0);
  CHECK_EQ(s.next_tick(), int64_t{2});
  CHECK(!s.apply_due(1, current));  // nothing due at tick 1
  CHECK_EQ(current.steer, 6.0);
  CHECK_EQ(s.pending(), size_t{5});
  CHECK(s.apply_due(2, current));  // both tick-2 commands: the later arrival is in force
  CHECK_EQ(current.steer, 4.0);
  CHECK_EQ(s.pending(), size_t{3});
  CHECK_EQ(s.next_tick(), int64_t{5});
  CHECK(!s.apply_due(4, current));
  CHECK(s.apply_due(7, current));  // a tick past 5 applies both tick-5 commands
  CHECK_EQ(current.steer, 5.0);
  CHECK_EQ(s.pending(), size_t{1});
  CHECK_EQ(s.next_tick(), int64_t{8});
  CHECK(s.apply_due(100, current));
  CHECK_EQ(current.steer, 3.0);
  CHECK_EQ(s.pending(), size_t{0});
  CHECK_EQ(s.next_tick(), int64_t{-1});
  CHECK(!s.apply_due(100, current));

  // Every due command at once: the last in order wins, all leave the queue.
  s.push(3, cmd(0.3));
  s.push(1, cmd(0.1));
  s.push(2, cmd(0.2));
  s.push(50, cmd(0.5));
  CHECK(s.apply_due(10, current));
  CHECK_EQ(current.steer, 0.3);
  CHECK_EQ(s.pending(), size_t{1});
  CHECK_EQ(s.next_tick(), int64_t{50});

  // A tick already past applies at the next apply_due.
  s.push(4, cmd(0.4));
  CHECK_EQ(s.next_tick(), int64_t{4});
  CHECK(s.apply_due(11, current));
  CHECK_EQ(current.steer, 0.4);
  CHECK_EQ(s.pending(), size_t{1});

  // clear drops everything pending; the command in force stays.
  s.push(60, cmd(0.6));
  s.push(12, cmd(0.7));
  CHECK_EQ(s.pending(), size_t{3});
  s.clear();
  CHECK_EQ(s.pending(), size_t{0});
  CHECK_EQ(s.next_tick(), int64_t{-1});
  CHECK(!s.apply_due(kMaxTicks, current));
  CHECK_EQ(current.steer, 0.4);

  // Negative and huge apply ticks are ordered like any other.
  s.push(kMaxTicks, cmd(7.0));
  s.push(-5, cmd(8.0));
  CHECK_EQ(s.next_tick(), int64_t{-5});
  CHECK(s.apply_due(-5, current));
  CHECK_EQ(current.steer, 8.0);
  CHECK(!s.apply_due(kMaxTicks - 1, current));
  CHECK(s.apply_due(kMaxTicks, current));
  CHECK_EQ(current.steer, 7.0);
}

// A fixed-seed generator for the reference comparison (no <random>: the same draws everywhere).
struct Lcg {
  uint64_t state;
  uint64_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

void test_schedule_against_reference() {
  // Random pushes interleaved with ticks, some landing in the past. Reference, from the
  // header's contract: at each tick every pending command with apply tick <= tick is
  // applied in (apply tick, arrival) order, so the command in force becomes the last of
  // that batch in that order; with no batch it stays (tests/test_schedule.py states the
  // same rule for pushes made up front).
  struct Push {
    int64_t tick;
    double steer;
    bool applied;
  };
  Lcg rng{12345};
  int64_t wrong_command = 0, wrong_pending = 0, wrong_changed = 0, first_bad_trial = -1;
  int64_t past_pushes = 0;
  for (int trial = 0; trial < 300; ++trial) {
    CommandSchedule s;
    Command current = cmd(-1.0);
    double expected = -1.0;
    std::vector<Push> pushes;
    for (int64_t tick = 0; tick < 60; ++tick) {
      const int64_t n_push = rng.below(3);
      for (int64_t j = 0; j < n_push; ++j) {
        const Push p{tick - 3 + rng.below(25), static_cast<double>(pushes.size()), false};
        past_pushes += p.tick < tick;
        pushes.push_back(p);
        s.push(p.tick, cmd(p.steer));
      }
      const bool changed = s.apply_due(tick, current);
      int64_t batch_tick = std::numeric_limits<int64_t>::min();
      size_t batch = 0, pending = 0;
      for (Push& p : pushes) {
        if (p.applied) continue;
        if (p.tick > tick) {
          ++pending;
          continue;
        }
        p.applied = true;
        ++batch;
        if (p.tick >= batch_tick) {  // >=: a later arrival with the same tick goes last
          batch_tick = p.tick;
          expected = p.steer;
        }
      }
      const bool bad_command = current.steer != expected;
      const bool bad_pending = s.pending() != pending;
      const bool bad_changed = changed != (batch > 0);
      wrong_command += bad_command;
      wrong_pending += bad_pending;
      wrong_changed += bad_changed;
      if ((bad_command || bad_pending || bad_changed) && first_bad_trial < 0)
        first_bad_trial = trial;
    }
  }
  CHECK(past_pushes > 1000);  // the draw really exercises pushes into the past
  CHECK_MSG(wrong_command == 0, wrong_command << " ticks with another command in force than "
                                "the reference's, first in trial " << first_bad_trial);
  CHECK_MSG(wrong_pending == 0, wrong_pending << " ticks with a wrong pending() count");
  CHECK_MSG(wrong_changed == 0, wrong_changed << " ticks where apply_due's return was wrong");
}

}  // namespace

int main() {
  test_whole_multiples();
  test_tolerance_and_ceil();
  test_huge_and_non_finite();
  test_schedule_basics();
  test_schedule_against_reference();
  return vdsim_test::check_summary("schedule");
}
