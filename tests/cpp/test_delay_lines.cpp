// The transport delay: the one DelayLine (csrc/vdsim/schedule.hpp) on its own, against
// the command schedule fed the same stream and against a FIFO trimmed to n + 1 (the
// obviously correct forms), and where it is used: the robot driver's transport delay
// (csrc/vdsim/robot_driver.hpp), the dyno session's pedal-mode line
// (csrc/vdsim/dyno_session.hpp) and the steering actuator's dead time
// (csrc/vdsim/actuator.hpp).
//
// Expectations from the headers and the docs: the driver returns the fresh command of
// delay_steps calls ago, (0, 0) until one exists, and `pedal` stays the fresh command
// (docs/DYNO.md, "Transport delay"; the number of steps is round(delay_s / dt), half to
// even, computed in Python by vdsim_gym.dyno.delay_steps and passed in); the actuator's
// dead time is a whole number of substeps (ActuatorParams::dead_time; Python converts it
// with whole_ticks and refuses others) and the ring returns the request of dead_ticks
// substeps ago, the reset value until then. So a step input comes out exactly N calls or
// ticks later.
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "check.hpp"
#include "vdsim/actuator.hpp"
#include "vdsim/dyno_session.hpp"
#include "vdsim/robot_driver.hpp"
#include "vdsim/schedule.hpp"

using vdsim::ActuatorParams;
using vdsim::Command;
using vdsim::CommandSchedule;
using vdsim::DelayLine;
using vdsim::DynoParams;
using vdsim::DynoSession;
using vdsim::DynoSimConfig;
using vdsim::Pedal;
using vdsim::RobotDriver;
using vdsim::RobotDriverParams;
using vdsim::SteerActuator;

namespace {

// docs/DYNO.md's rule: round(delay_s / dt), half to even: schedule.hpp's nearest_ticks.
int64_t driver_delay_steps(double delay_s, double dt) {
  return vdsim::nearest_ticks(delay_s, dt);
}

void test_nearest_ticks() {
  bool exact = false;
  CHECK_EQ(vdsim::nearest_ticks(0.3, 0.02, &exact), int64_t{15});
  CHECK(exact);  // 0.3 / 0.02 = 14.999999999999998: within the clock's tolerance
  CHECK_EQ(vdsim::nearest_ticks(0.31, 0.02, &exact), int64_t{16});  // 15.5: half to even
  CHECK(!exact);
  CHECK_EQ(vdsim::nearest_ticks(0.29, 0.02, &exact), int64_t{14});  // 14.5 -> 14
  CHECK(!exact);
  CHECK_EQ(vdsim::nearest_ticks(-0.05, 0.02, &exact), int64_t{-2});  // -2.5 -> -2
  CHECK_EQ(vdsim::nearest_ticks(1e300, 1e-3, &exact), vdsim::kMaxTicks);  // saturates
  CHECK(!exact);
  CHECK_EQ(vdsim::nearest_ticks(-1e300, 1e-3, &exact), -vdsim::kMaxTicks);
  CHECK_EQ(vdsim::nearest_ticks(std::numeric_limits<double>::quiet_NaN(), 1e-3, &exact),
           vdsim::kMaxTicks);
  CHECK(!exact);
  CHECK_EQ(vdsim::nearest_ticks(0.06, 0.0005), int64_t{120});  // without the flag
}

// The line is the schedule's special case: a value sent every tick with apply tick
// tick + n, the last applied held, `fill` in force at the start.
void test_line_equals_schedule(int64_t n) {
  for (int round = 0; round < 2; ++round) {
    const double fill = round == 0 ? 0.0 : -0.25;
    DelayLine<double> line(n, fill);
    CommandSchedule schedule;
    Command current{fill, 0.0};
    int64_t bad = -1;
    for (int64_t tick = 0; tick < 300; ++tick) {
      const double v = std::sin(0.1 * static_cast<double>(tick)) + 0.01 * static_cast<double>(tick);
      schedule.push(tick + n, Command{v, 0.0});
      schedule.apply_due(tick, current);
      const double got = line.push(v);
      if (got != current.steer && bad < 0) bad = tick;
    }
    CHECK_MSG(bad < 0, "n " << n << ", fill " << fill << ": first tick that differs " << bad);
    CHECK_EQ(schedule.pending(), static_cast<size_t>(n));  // the line holds them too
    CHECK_EQ(line.size(), static_cast<size_t>(n) + (n > 0 ? 1 : 0));
  }
}

// A delay that changes from call to call (the robot driver's n follows its caller's dt)
// against a FIFO trimmed to n + 1 and read at its front: the same values, and reset()
// empties both.
void test_line_variable_delay() {
  DelayLine<double> line;
  std::deque<double> fifo;
  const double fill = 0.0;
  int64_t bad = -1;
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  for (int64_t i = 0; i < 2000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t r = static_cast<int64_t>(state >> 59);  // 0..31
    const int64_t n = i % 97 < 80 ? r % 6 : r - 4;        // mostly short, some long, some <= 0
    const double v = static_cast<double>(i) + 0.5;
    if (i == 1000) {  // reset() empties the line
      line.reset();
      fifo.clear();
    }
    double expected;
    if (n <= 0) {
      fifo.clear();
      expected = v;
    } else {
      fifo.push_back(v);
      while (static_cast<int64_t>(fifo.size()) > n + 1) fifo.pop_front();
      expected = static_cast<int64_t>(fifo.size()) <= n ? fill : fifo.front();
    }
    const double got = line.push(v, n);
    if ((got != expected || line.size() != fifo.size()) && bad < 0) bad = i;
  }
  CHECK_MSG(bad < 0, "first call that differs from the trimmed FIFO " << bad);
}

Pedal split(double p) { return Pedal{std::fmax(p, 0.0), std::fmax(-p, 0.0)}; }
bool same(const Pedal& a, const Pedal& b) {
  return a.throttle == b.throttle && a.brake == b.brake;
}

void test_driver_quantization() {
  CHECK_EQ(driver_delay_steps(0.3, 0.02), int64_t{15});
  CHECK_EQ(driver_delay_steps(1.25, 0.5), int64_t{2});  // 2.5: half to even
  CHECK_EQ(driver_delay_steps(1.75, 0.5), int64_t{4});  // 3.5: half to even
  CHECK_EQ(driver_delay_steps(0.25, 0.5), int64_t{0});  // 0.5 rounds to 0: no delay
}

// A speed step: v_ref 0 (standstill: brake 0.3) for 5 calls, then 10 m/s (full throttle
// from the PI at v = 0). With N calls of delay the car sees (0, 0) for N calls, the brake,
// then the throttle from call 5 + N on.
void test_driver_step(int64_t n) {
  RobotDriver d{RobotDriverParams{}};
  d.reset();
  int64_t bad = -1;
  for (int64_t i = 0; i < 40; ++i) {
    const double v_ref = i < 5 ? 0.0 : 10.0;
    const Pedal out = d.step(v_ref, 0.0, 0.02, 0.0, false, n);
    const double fresh = i < 5 ? -0.3 : 1.0;
    Pedal expected{};
    if (i >= n) expected = i >= 5 + n ? Pedal{1.0, 0.0} : Pedal{0.0, 0.3};
    if (d.pedal() != fresh || !same(out, expected)) {
      if (bad < 0) bad = i;
    }
  }
  CHECK_MSG(bad < 0, "delay " << n << ": first wrong call " << bad);
  CHECK(d.line_size() <= static_cast<size_t>(n) + 1);  // the line holds n + 1 commands
}

// Any command sequence: out[i] = fresh[i - N], (0, 0) before; reset empties the line.
void test_driver_sequence(int64_t n) {
  RobotDriver d{RobotDriverParams{}};
  d.reset();
  std::vector<Pedal> fresh, out;
  for (int round = 0; round < 2; ++round) {
    fresh.clear();
    out.clear();
    for (int64_t i = 0; i < 60; ++i) {
      const double v_ref = 3.0 + 2.0 * std::sin(0.37 * static_cast<double>(i));  // varied
      out.push_back(d.step(v_ref, 2.5, 0.02, 0.0, false, n));
      fresh.push_back(split(d.pedal()));
    }
    int64_t bad = -1;
    for (int64_t i = 0; i < 60; ++i) {
      const Pedal expected = i >= n ? fresh[static_cast<size_t>(i - n)] : Pedal{};
      if (!same(out[static_cast<size_t>(i)], expected) && bad < 0) bad = i;
    }
    CHECK_MSG(bad < 0, "delay " << n << ", round " << round << ": first wrong call " << bad);
    d.reset();  // the second round starts from an empty line again
    CHECK_EQ(d.line_size(), size_t{0});
  }
}

void test_driver_zero_delay_clears() {
  RobotDriver d{RobotDriverParams{}};
  d.reset();
  for (int i = 0; i < 5; ++i) d.step(10.0, 0.0, 0.02, 0.0, false, 3);
  CHECK_EQ(d.line_size(), size_t{4});
  const Pedal out = d.step(10.0, 0.0, 0.02, 0.0, false, 0);  // delay off: fresh, line dropped
  CHECK(same(out, split(d.pedal())));
  CHECK_EQ(d.line_size(), size_t{0});
}

ActuatorParams plain_actuator(double dead_time) {
  ActuatorParams p;
  p.enabled = true;
  p.dead_time = dead_time;
  return p;  // no lag, no rate limit, no saturation: only the dead time acts
}

// The ring alone: a request sequence comes out exactly N ticks later, the reset value first.
void test_dead_time(double dead_time, int64_t expected_ticks) {
  const double dt = 5e-4;
  const int64_t n = vdsim::whole_ticks(dead_time, dt);
  CHECK_EQ(n, expected_ticks);
  SteerActuator a(plain_actuator(dead_time), dt, n);
  for (int round = 0; round < 2; ++round) {
    const double init = round == 0 ? 0.0 : -0.05;
    a.reset(init);
    std::vector<double> req, out;
    int64_t first_step = -1;
    for (int64_t t = 0; t < 200; ++t) {
      const double r = t < 7 ? init : 0.1 + 1e-3 * static_cast<double>(t);
      req.push_back(r);
      out.push_back(a.step(r));
      if (first_step < 0 && out.back() != init) first_step = t;
    }
    CHECK_EQ(first_step, 7 + n);
    // Within a few ulps: the lag and rate-limit stages compute lag + (x - lag) and
    // out + (lag - out) even when off, which can round (the requests differ by 1e-3 per
    // tick, so a tick early or late is far outside this bound).
    int64_t bad = -1;
    for (int64_t t = 0; t < 200; ++t) {
      const double expected = t >= n ? req[static_cast<size_t>(t - n)] : init;
      if (std::fabs(out[static_cast<size_t>(t)] - expected) > 1e-15 && bad < 0) bad = t;
    }
    CHECK_MSG(bad < 0, "dead time " << dead_time << ", round " << round << ": tick " << bad);
  }
}

void test_dead_time_with_lag_and_limits() {
  const double dt = 5e-4;
  const int64_t n = vdsim::whole_ticks(0.01, dt);  // 20 ticks
  CHECK_EQ(n, int64_t{20});
  {
    // A first-order lag after the dead time: nothing moves before tick 5 + N, then the
    // exact zero-order-hold response 0.1 (1 - (1 - alpha)^(m + 1)).
    ActuatorParams p = plain_actuator(0.01);
    p.time_constant = 0.02;
    SteerActuator a(p, dt, n);
    a.reset(0.0);
    const double alpha = 1.0 - std::exp(-dt / 0.02);
    int64_t first = -1;
    double worst = 0.0;
    for (int64_t t = 0; t < 300; ++t) {
      const double y = a.step(t < 5 ? 0.0 : 0.1);
      if (first < 0 && y != 0.0) first = t;
      if (t >= 5 + n) {
        const double m = static_cast<double>(t - 5 - n);
        worst = std::fmax(worst, std::fabs(y - 0.1 * (1.0 - std::pow(1.0 - alpha, m + 1.0))));
      }
    }
    CHECK_EQ(first, 5 + n);
    CHECK_MSG(worst < 1e-12, "largest deviation from the ZOH step response " << worst);
  }
  {
    // Rate limit 10 rad/s (0.005 rad per tick) and saturation at 0.05 rad after the dead
    // time: the ramp starts at tick 5 + N and stops at the limit 10 ticks later.
    ActuatorParams p = plain_actuator(0.01);
    p.rate_limit = 10.0;
    p.max_angle = 0.05;
    SteerActuator a(p, dt, n);
    a.reset(0.0);
    std::vector<double> y;
    for (int64_t t = 0; t < 100; ++t) y.push_back(a.step(t < 5 ? 0.0 : 0.1));
    CHECK_EQ(y[static_cast<size_t>(4 + n)], 0.0);
    CHECK(std::fabs(y[static_cast<size_t>(5 + n)] - 0.005) < 1e-15);
    CHECK(std::fabs(y[static_cast<size_t>(13 + n)] - 0.045) < 1e-15);
    CHECK(std::fabs(y[static_cast<size_t>(14 + n)] - 0.05) < 1e-15);
    CHECK_EQ(y[99], 0.05);  // saturated: exactly the limit
  }
  {
    // No dead time: the request acts in its own substep; a negative count is clamped to 0.
    for (int64_t dead : {int64_t{0}, int64_t{-3}}) {
      SteerActuator a(plain_actuator(0.0), dt, dead);
      a.reset(0.0);
      CHECK_EQ(a.step(0.2), 0.2);
      CHECK(std::fabs(a.step(-0.1) - -0.1) < 1e-15);
    }
  }
}

// The dyno session's pedal-mode line (no driver law): a pedal scheduled for tick 5
// reaches the bench at tick 5 + N, clamped to [-1, 1]; the schedule and the line add.
void test_dyno_pedal_line(int64_t n) {
  DynoSimConfig cfg;
  cfg.substep_dt = 0.02;
  cfg.driver_on = false;
  cfg.delay_steps = n;
  DynoSession s(DynoParams{}, cfg);
  s.reset(0.0);
  s.command_now(Command{0.0, 0.0});
  s.schedule(5, Command{0.0, 0.5});
  s.schedule(12, Command{0.0, 1.7});   // clamped to full throttle
  s.schedule(20, Command{0.0, -0.4});  // brake
  int64_t bad = -1;
  for (int64_t t = 0; t < 40; ++t) {
    s.advance(1);  // the substep at tick t; pedal() is what reached the bench in it
    const int64_t src = t - n;
    double expected = 0.0;
    if (src >= 20) expected = -0.4;
    else if (src >= 12) expected = 1.0;
    else if (src >= 5) expected = 0.5;
    const bool ok = s.pedal() == expected && s.throttle() == std::fmax(expected, 0.0) &&
                    s.brake() == std::fmax(-expected, 0.0);
    if (!ok && bad < 0) bad = t;
  }
  CHECK_MSG(bad < 0, "delay " << n << ": first wrong tick " << bad);
  CHECK_EQ(s.tick(), int64_t{40});
}

// With the driver: the pedal reaching the bench is the driver's fresh pedal N ticks ago.
void test_dyno_driver_line(int64_t n) {
  DynoSimConfig cfg;
  cfg.substep_dt = 0.02;
  cfg.driver_on = true;
  cfg.delay_steps = n;
  DynoSession s(DynoParams{}, cfg);
  s.reset(0.0);
  s.command_now(Command{0.0, 0.0});
  s.schedule(3, Command{0.0, 8.0});  // v_ref 8 m/s from tick 3
  std::vector<double> fresh, reached;
  for (int64_t t = 0; t < 80; ++t) {
    s.advance(1);
    fresh.push_back(s.driver().pedal());
    reached.push_back(s.pedal());
  }
  int64_t bad = -1;
  for (int64_t t = 0; t < 80; ++t) {
    const double expected = t >= n ? fresh[static_cast<size_t>(t - n)] : 0.0;
    if (reached[static_cast<size_t>(t)] != expected && bad < 0) bad = t;
  }
  CHECK_MSG(bad < 0, "delay " << n << ": first wrong tick " << bad);
  CHECK_EQ(fresh[2], -0.3);  // standstill brake until the reference arrives at tick 3
  CHECK(fresh[3] > 0.0);
  int64_t first_throttle = -1;
  for (int64_t t = 0; t < 80 && first_throttle < 0; ++t)
    if (reached[static_cast<size_t>(t)] > 0.0) first_throttle = t;
  CHECK_EQ(first_throttle, 3 + n);
}

}  // namespace

int main() {
  test_nearest_ticks();
  for (int64_t n : {0, 1, 3, 40}) test_line_equals_schedule(n);
  test_line_variable_delay();
  test_driver_quantization();
  for (int64_t n : {0, 1, 2, 4, 15}) {
    test_driver_step(n);
    test_driver_sequence(n);
    test_dyno_pedal_line(n);
    test_dyno_driver_line(n);
  }
  test_driver_zero_delay_clears();
  test_dead_time(0.0, 0);
  test_dead_time(0.0005, 1);
  test_dead_time(0.005, 10);
  test_dead_time(0.0125, 25);
  test_dead_time_with_lag_and_limits();
  return vdsim_test::check_summary("delay_lines");
}
