// The integer substep clock, the command schedule and the delay line.
//
// Two mechanisms carry every delay, on the one integer clock:
// - CommandSchedule, a queue of (apply_tick, command): a command takes effect at a tick
//   chosen when it is sent (computation latency in modes A and B and in the envs, with
//   skip and queue overruns; the gym latency wrapper); the vehicle session keeps one more
//   per actuation channel for the channels' dead times (SimConfig::steer_dead_ticks,
//   longitudinal_dead_ticks).
// - DelayLine, a transport delay of a fixed number of calls on a stream that gets a value
//   every call (the steering actuator's dead time, a substep per call; the robot driver's
//   transport delay, a driver step per call; the dyno's pedal-mode line). It is the
//   schedule's special case, a value sent every tick with apply tick = tick + n and the
//   last applied one held, starting from a fill value (tests/cpp/test_delay_lines.cpp
//   checks that the two agree value for value), kept as a ring because it runs every
//   substep.
//
// Quantization, one rule per kind of delay (seconds -> ticks only through the helpers
// below, and vdsim_gym.timing in Python, which calls them):
// - computation latency c_k: the apply tick is ceil((t_start + c_k) / dt) (ceil_ticks):
//   a command never acts before it is computed;
// - a dead time given as a configuration (actuator dead_time, control period, time
//   step): a whole number of substeps, else an error (whole_ticks);
// - a count that must fit within a limit (the integration step within max_step, a trace
//   decimation within its rate, the bench's substeps cover a step: floor_ticks, or
//   ceil_ticks for a count that must cover);
// - the robot driver's transport delay delay_s: the nearest whole number of driver steps,
//   half to even, with a warning when it is not whole (nearest_ticks): the reference
//   driver's rule, where the step dt is the caller's and not known in advance; the same
//   rounding for times on a sampled record (the drive cycle's preview, trace rows).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <vector>

#include "fminmax.hpp"

namespace vdsim {

struct Command {
  double steer = 0.0;         // road-wheel steer request [rad]
  double longitudinal = 0.0;  // force [N] or pedal [-1, 1], per the session's mode
  template <class Ar>
  void archive(Ar& ar) { ar(steer, longitudinal); }
};

// Relative tolerance for deciding that a float time is a whole number of substeps.
constexpr double kTickTol = 1e-9;

// Largest tick count any conversion returns: 2^53 substeps (every integer up to it is a
// double, and 2^53 * 1 us is 285 years). Larger quotients would overflow int64 on
// conversion (undefined behaviour) or lose whole ticks; Python refuses them first.
constexpr int64_t kMaxTicks = int64_t{1} << 53;

// Whole substeps in `seconds`; -1 when it is not a whole multiple of dt, -2 when the
// quotient is not finite or its magnitude exceeds kMaxTicks.
inline int64_t whole_ticks(double seconds, double dt) {
  const double q = seconds / dt;
  if (!(std::fabs(q) <= static_cast<double>(kMaxTicks))) return -2;
  const double n = std::nearbyint(q);
  if (std::fabs(q - n) > kTickTol * fmax_inl(1.0, std::fabs(q))) return -1;
  return static_cast<int64_t>(n);
}

namespace detail {
// seconds / dt in ticks by `round` (std::ceil or std::floor), where a quotient within
// tolerance of an integer counts as that integer. Saturates at +-kMaxTicks (NaN:
// kMaxTicks): callers validate their inputs, this only keeps the conversion defined.
inline int64_t tolerant_ticks(double seconds, double dt, double (*round)(double)) {
  const double q = seconds / dt;
  if (!(q <= static_cast<double>(kMaxTicks))) return kMaxTicks;
  if (q < -static_cast<double>(kMaxTicks)) return -kMaxTicks;
  const double n = std::nearbyint(q);
  if (std::fabs(q - n) <= kTickTol * fmax_inl(1.0, std::fabs(q))) return static_cast<int64_t>(n);
  return static_cast<int64_t>(round(q));
}
}  // namespace detail

// ceil(seconds / dt) in ticks, a quotient within tolerance of an integer counting as that
// integer (0.06 / 0.0005 is 120, not 121): an apply tick for a delay.
inline int64_t ceil_ticks(double seconds, double dt) {
  return detail::tolerant_ticks(seconds, dt, [](double q) { return std::ceil(q); });
}

// floor(seconds / dt) with the same tolerance (the most whole ticks that fit in `seconds`:
// a step or a decimation no longer than a limit).
inline int64_t floor_ticks(double seconds, double dt) {
  return detail::tolerant_ticks(seconds, dt, [](double q) { return std::floor(q); });
}

// round(seconds / dt) to the nearest integer, half to even, saturating at +-kMaxTicks
// (NaN: kMaxTicks); `exact` says whether the quotient was within kTickTol of it.
inline int64_t nearest_ticks(double seconds, double dt, bool* exact = nullptr) {
  const double q = seconds / dt;
  if (!(q <= static_cast<double>(kMaxTicks))) {
    if (exact) *exact = false;
    return kMaxTicks;
  }
  if (q < -static_cast<double>(kMaxTicks)) {
    if (exact) *exact = false;
    return -kMaxTicks;
  }
  const double n = std::nearbyint(q);  // the default rounding mode: half to even
  if (exact) *exact = std::fabs(q - n) <= kTickTol * fmax_inl(1.0, std::fabs(q));
  return static_cast<int64_t>(n);
}

class CommandSchedule {
 public:
  struct Entry {
    int64_t apply_tick;
    Command command;
    int64_t sample_tick = -1;  // the tick it was sampled at (-1: the reset command)
    template <class Ar>
    void archive(Ar& ar) { ar(apply_tick, command, sample_tick); }
  };

  // Keeps the queue ordered by apply tick; equal ticks keep arrival order.
  void push(int64_t apply_tick, const Command& c, int64_t sample_tick = -1) {
    auto it = queue_.end();
    while (it != queue_.begin() && std::prev(it)->apply_tick > apply_tick) --it;
    queue_.insert(it, Entry{apply_tick, c, sample_tick});
  }

  // Applies every command whose tick has come; returns true when `current` changed.
  bool apply_due(int64_t tick, Command& current) {
    bool changed = false;
    while (!queue_.empty() && queue_.front().apply_tick <= tick) {
      applied_ = queue_.front();
      current = applied_.command;
      queue_.pop_front();
      changed = true;
    }
    return changed;
  }

  // A command put in force directly at `tick` (the plant's command_now, reset).
  void set_in_force(int64_t tick, const Command& c, int64_t sample_tick) {
    applied_ = Entry{tick, c, sample_tick};
  }
  // The command in force: the last one applied (or set), with its ticks.
  const Entry& in_force() const { return applied_; }
  // The one in force during substep `tick` (at or after the last apply): the last pending
  // command due by then, else the one in force now.
  const Entry& in_force_during(int64_t tick) const {
    const Entry* e = &applied_;
    for (const Entry& q : queue_) {
      if (q.apply_tick > tick) break;
      e = &q;
    }
    return *e;
  }
  const std::deque<Entry>& entries() const { return queue_; }  // pending, by apply tick

  size_t pending() const { return queue_.size(); }
  void clear() { queue_.clear(); }
  // Removes the pending commands due after `tick` (older commands that a newer one, due
  // at `tick`, overtook: a network discards them); returns how many.
  size_t discard_after(int64_t tick) {
    size_t n = 0;
    while (!queue_.empty() && queue_.back().apply_tick > tick) {
      queue_.pop_back();
      ++n;
    }
    return n;
  }
  // The tick of the next pending command, or -1.
  int64_t next_tick() const { return queue_.empty() ? -1 : queue_.front().apply_tick; }
  template <class Ar>
  void archive(Ar& ar) { ar(queue_, applied_); }

 private:
  std::deque<Entry> queue_;
  Entry applied_{0, Command{}, -1};
};

// A transport delay of n calls: push(v) returns the value pushed n calls before, `fill`
// until one exists (and v itself when n <= 0). n may change from call to call (the robot
// driver's n follows its caller's dt): the line keeps the last n + 1 values, so after a
// longer n it returns `fill` until it holds enough again, as a FIFO trimmed to n + 1
// would. reset() empties it.
template <class T>
class DelayLine {
 public:
  DelayLine() = default;
  explicit DelayLine(int64_t n, const T& fill = T{}) : delay_(std::max<int64_t>(n, 0)) {
    reserve(delay_);
    reset(fill);
  }

  void reset(const T& fill) {
    fill_ = fill;
    count_ = 0;
    head_ = 0;
  }
  void reset() { reset(fill_); }

  T push(const T& v) { return push(v, delay_); }
  T push(const T& v, int64_t n) {
    if (n <= 0) {
      count_ = 0;
      return v;
    }
    reserve(n);
    const size_t cap = ring_.size();
    ring_[head_] = v;
    head_ = head_ + 1 == cap ? 0 : head_ + 1;
    count_ = std::min<size_t>(count_ + 1, static_cast<size_t>(n) + 1);
    if (count_ <= static_cast<size_t>(n)) return fill_;
    // the newest value sits at head_ - 1; the one of n calls before at head_ - 1 - n
    return ring_[(head_ + cap - 1 - static_cast<size_t>(n)) % cap];
  }

  size_t size() const { return count_; }  // values held (at most n + 1)
  // The ring as it is (its capacity, head and count), so that it continues the same.
  template <class Ar>
  void archive(Ar& ar) { ar(ring_, head_, count_, delay_, fill_); }

 private:
  // Room for n + 1 values, keeping the ones held in order.
  void reserve(int64_t n) {
    const size_t need = static_cast<size_t>(n) + 1;
    if (ring_.size() >= need) return;
    std::vector<T> grown(need, fill_);
    const size_t cap = ring_.size();
    for (size_t i = 0; i < count_; ++i)  // oldest first
      grown[i] = ring_[(head_ + cap - count_ + i) % cap];
    ring_.swap(grown);
    head_ = count_ % need;
  }

  std::vector<T> ring_;
  size_t head_ = 0, count_ = 0;
  int64_t delay_ = 0;
  T fill_{};
};

}  // namespace vdsim
