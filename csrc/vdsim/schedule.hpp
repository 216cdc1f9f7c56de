// The integer substep clock and the command schedule: a queue of (apply_tick, command).
// Every kind of delay (evaluation latency, gym latency wrapper, robot driver transport
// delay) is expressed as an apply tick in this one queue.
#pragma once
#include <cmath>
#include <cstdint>
#include <deque>

namespace vdsim {

struct Command {
  double steer = 0.0;         // road-wheel steer request [rad]
  double longitudinal = 0.0;  // force [N] or pedal [-1, 1], per the session's mode
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
  if (std::fabs(q - n) > kTickTol * std::fmax(1.0, std::fabs(q))) return -1;
  return static_cast<int64_t>(n);
}

// ceil(seconds / dt) in ticks, where a quotient within tolerance of an integer counts as
// that integer (0.06 / 0.0005 is 120, not 121). Saturates at +-kMaxTicks (NaN: kMaxTicks):
// callers validate their inputs, this only keeps the conversion defined.
inline int64_t ceil_ticks(double seconds, double dt) {
  const double q = seconds / dt;
  if (!(q <= static_cast<double>(kMaxTicks))) return kMaxTicks;
  if (q < -static_cast<double>(kMaxTicks)) return -kMaxTicks;
  const double n = std::nearbyint(q);
  if (std::fabs(q - n) <= kTickTol * std::fmax(1.0, std::fabs(q))) return static_cast<int64_t>(n);
  return static_cast<int64_t>(std::ceil(q));
}

class CommandSchedule {
 public:
  struct Entry {
    int64_t apply_tick;
    Command command;
  };

  // Keeps the queue ordered by apply tick; equal ticks keep arrival order.
  void push(int64_t apply_tick, const Command& c) {
    auto it = queue_.end();
    while (it != queue_.begin() && std::prev(it)->apply_tick > apply_tick) --it;
    queue_.insert(it, Entry{apply_tick, c});
  }

  // Applies every command whose tick has come; returns true when `current` changed.
  bool apply_due(int64_t tick, Command& current) {
    bool changed = false;
    while (!queue_.empty() && queue_.front().apply_tick <= tick) {
      current = queue_.front().command;
      queue_.pop_front();
      changed = true;
    }
    return changed;
  }

  size_t pending() const { return queue_.size(); }
  void clear() { queue_.clear(); }
  // The tick of the next pending command, or -1.
  int64_t next_tick() const { return queue_.empty() ? -1 : queue_.front().apply_tick; }

 private:
  std::deque<Entry> queue_;
};

}  // namespace vdsim
