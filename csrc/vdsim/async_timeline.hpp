// Mode B timing: one worker computes one control sample at a time in virtual time.
//
// Sample k is observed at t_k = k Tc and starts computing at t_start = max(t_k, finish of
// the previous sample); it finishes at t_start + c_k and its command applies at
//   apply_tick = ceil((t_start + c_k) / dt)   (integer ticks, with the clock's tolerance).
// Overrun policies when a computation runs past the next grid point:
//   skip:  samples falling due while the worker is busy are not taken; the next sample
//          is the first grid point at or after the finish.
//   queue: every grid sample is taken at its own time and computed in order, so delay
//          accumulates while c_k > Tc.
// The timeline only does the arithmetic; the session's command schedule applies the
// commands, so every kind of delay goes through the same queue.
#pragma once
#include <algorithm>
#include <cstdint>

#include "schedule.hpp"

namespace vdsim {

enum class OverrunPolicy { Skip = 0, Queue = 1 };

struct SampleTiming {
  int64_t k = 0;            // grid index of the sample
  int64_t sample_tick = 0;  // k * period_ticks
  int64_t call_tick = 0;    // tick at which the worker starts on it (controller call)
  double t_start = 0.0;     // [s], exact start of the computation
  double c = 0.0;           // computation delay [s]
  double t_finish = 0.0;    // t_start + c [s]
  int64_t apply_tick = 0;   // ceil(t_finish / dt)
  bool overrun = false;     // the computation ran past grid point k + 1
};

class AsyncTimeline {
 public:
  AsyncTimeline() = default;
  AsyncTimeline(double dt, int64_t period_ticks, OverrunPolicy policy)
      : dt_(dt), period_(period_ticks), policy_(policy) {}

  void reset() {
    next_k_ = 0;
    worker_free_ = 0.0;
    n_overrun_ = n_skipped_ = 0;
  }

  double period_s() const { return static_cast<double>(period_) * dt_; }
  double grid_time(int64_t k) const { return static_cast<double>(k * period_) * dt_; }

  // Grid index of the next sample to take.
  int64_t next_k() const { return next_k_; }

  // Tick at which the worker starts on sample k (k == next_k()).
  int64_t call_tick(int64_t k) const {
    const int64_t grid = k * period_;
    if (policy_ == OverrunPolicy::Skip) return grid;
    return std::max(grid, ceil_ticks(worker_free_, dt_));
  }

  // Exact time [s] at which the worker starts on sample k (k == next_k()).
  double start_time(int64_t k) const { return std::max(grid_time(k), worker_free_); }

  // Records sample k (k == next_k()) computed in c seconds and advances to the next one.
  SampleTiming commit(int64_t k, double c) {
    SampleTiming s;
    s.k = k;
    s.sample_tick = k * period_;
    s.call_tick = call_tick(k);
    s.t_start = start_time(k);
    s.c = c;
    s.t_finish = s.t_start + c;
    s.apply_tick = ceil_ticks(s.t_finish, dt_);
    // Past grid point k + 1: the first grid point at or after the finish is beyond it.
    const int64_t first_free = ceil_ticks(s.t_finish, period_s());
    s.overrun = first_free > k + 1;
    n_overrun_ += s.overrun ? 1 : 0;
    worker_free_ = s.t_finish;
    if (policy_ == OverrunPolicy::Skip) {
      next_k_ = std::max(k + 1, first_free);
      n_skipped_ += next_k_ - (k + 1);
    } else {
      next_k_ = k + 1;
    }
    return s;
  }

  int64_t n_overrun() const { return n_overrun_; }
  int64_t n_skipped() const { return n_skipped_; }
  OverrunPolicy policy() const { return policy_; }
  int64_t period_ticks() const { return period_; }
  template <class Ar>
  void archive(Ar& ar) {
    ar(dt_, period_, policy_, next_k_, worker_free_, n_overrun_, n_skipped_);
  }

 private:
  double dt_ = 5e-4;
  int64_t period_ = 40;
  OverrunPolicy policy_ = OverrunPolicy::Skip;
  int64_t next_k_ = 0;
  double worker_free_ = 0.0;
  int64_t n_overrun_ = 0, n_skipped_ = 0;
};

}  // namespace vdsim
