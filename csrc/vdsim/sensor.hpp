// The sensor pipeline's delay (obs_delay, docs/ENVS.md "Sensor delay"): when the controller
// samples at the grid tick j P (grid index j, P the control period in ticks), the
// observation it reads is the task's observation of the plant at the capture tick
//
//   c_j = max(j P - ceil(d_j / dt), c_{j-1}),   c_0 = 0 (the reset),
//
// with the age d_j drawn for every grid index in order, skipped ones included (so the
// sensor's stream does not depend on the computation delays). The max is the causal rule:
// a newer sample never arrives before an older one, so an observation is never older than
// the one read before it (Isaac Lab's lag rule, on the substep grid); nor is it older than
// the episode (the reset's observation stands in until the first capture).
//
// SensorSchedule plans the captures on the integer clock: plan(until) draws ages until a
// capture falls after `until`, so that every capture up to then is known before the plant
// passes it (the env core stops the plant at each capture, the event loop of the callback
// form likewise). Optionally it holds one row of `Value`s per planned capture (the env
// core's observation rows, a session's state in mode C; row_size 0: ticks only).
//
// Mode C (wall clock): the real-time runner calls a TickHook after every substep on its
// own thread, under its mutex; a hook takes the captures due then (EnvCore, SessionSensor).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "latency.hpp"
#include "schedule.hpp"

namespace vdsim {

class TickHook {
 public:
  virtual ~TickHook() = default;
  virtual void after_tick() = 0;
};

template <class Value>
class BasicSensorSchedule {
 public:
  BasicSensorSchedule() = default;
  BasicSensorSchedule(const LatencySpec& age, double dt, int64_t period, int64_t row_size = 0)
      : sampler_(age), dt_(dt), period_(period), row_size_(row_size) {}

  // A new episode (clock at 0): nothing planned, ages drawn afresh from the model's seed
  // mixed with `seed` (the episode's).
  void reset(uint64_t seed) {
    sampler_.reseed(sampler_.spec().seed ^ seed);
    head_ = n_ = 0;
    next_j_ = 1;
    last_tick_ = 0;
  }
  // Plans captures (drawing their ages in grid order) until the last one falls after
  // `until`: every capture at or before `until` is then planned.
  void plan(int64_t until) {
    while (n_ == 0 || tick(n_ - 1) <= until) {
      const int64_t age = ceil_ticks(sampler_.draw(), dt_);
      const int64_t c = std::max(next_j_ * period_ - age, last_tick_);
      if (n_ == cap_) reserve(std::max<size_t>(8, 2 * cap_));
      const size_t at = slot(n_++);
      j_[at] = next_j_++;
      tick_[at] = last_tick_ = c;
      done_[at] = 0;
    }
  }
  // The planned captures not yet released, in grid order (non-decreasing ticks).
  size_t size() const { return n_; }
  int64_t grid(size_t i) const { return j_[slot(i)]; }
  int64_t tick(size_t i) const { return tick_[slot(i)]; }
  bool done(size_t i) const { return done_[slot(i)] != 0; }
  void mark_done(size_t i) { done_[slot(i)] = 1; }
  Value* row(size_t i) { return rows_.data() + slot(i) * static_cast<size_t>(row_size_); }
  const Value* row(size_t i) const {
    return rows_.data() + slot(i) * static_cast<size_t>(row_size_);
  }
  // The capture of grid index j (planned, not released): its position, or -1.
  int64_t find(int64_t j) const {
    for (size_t i = 0; i < n_; ++i)
      if (grid(i) == j) return static_cast<int64_t>(i);
    return -1;
  }
  // Mode C: the position of the newest capture taken for a grid index at or before j (the
  // latest taken, should j's not be due yet), or -1 before any.
  int64_t newest_done(int64_t j) const {
    int64_t best = -1;
    for (size_t i = 0; i < n_ && grid(i) <= j; ++i)
      if (done(i)) best = static_cast<int64_t>(i);
    return best;
  }
  // Forgets the captures of grid indices before j (read, or skipped by an overrun).
  void release_before(int64_t j) {
    while (n_ > 0 && grid(0) < j) {
      head_ = (head_ + 1) % cap_;
      --n_;
    }
  }
  int64_t period() const { return period_; }
  // The ring as it is (capacity, head, count and every slot), so that it continues the same.
  template <class Ar>
  void archive(Ar& ar) {
    ar(sampler_, dt_, period_, row_size_, j_, tick_, done_, rows_, cap_, head_, n_, next_j_,
       last_tick_);
  }

 private:
  size_t slot(size_t i) const { return (head_ + i) % cap_; }
  // Grows the ring to `cap` entries, keeping the planned ones in order.
  void reserve(size_t cap) {
    std::vector<int64_t> j(cap), t(cap);
    std::vector<char> d(cap);
    std::vector<Value> r(cap * static_cast<size_t>(row_size_));
    for (size_t i = 0; i < n_; ++i) {
      const size_t s = slot(i);
      j[i] = j_[s];
      t[i] = tick_[s];
      d[i] = done_[s];
      std::copy_n(rows_.data() + s * static_cast<size_t>(row_size_), row_size_,
                  r.data() + i * static_cast<size_t>(row_size_));
    }
    j_.swap(j), tick_.swap(t), done_.swap(d), rows_.swap(r);
    cap_ = cap;
    head_ = 0;
  }

  LatencySampler sampler_;
  double dt_ = 1.0;
  int64_t period_ = 1;
  int64_t row_size_ = 0;
  std::vector<int64_t> j_, tick_;
  std::vector<char> done_;
  std::vector<Value> rows_;
  size_t cap_ = 0, head_ = 0, n_ = 0;
  int64_t next_j_ = 1, last_tick_ = 0;
};

using SensorSchedule = BasicSensorSchedule<float>;

}  // namespace vdsim
