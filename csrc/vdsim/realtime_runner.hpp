// Wall-clock mode C: a thread that ticks a plant every substep_dt of wall clock
// (absolute deadlines from its start, so no drift), while a control thread elsewhere
// snapshots the plant and latches commands under the same mutex (docs/EVAL_MODES.md,
// "C wallclock"). The core knows nothing of Python: the runner thread never needs the GIL.
//
// Plant interface: advance(1), command_now(c), tick(). The runner records the wall time
// at which each tick completed, its worst lag behind its deadline, and latches a
// fail-safe command when no command arrived for `timeout_ticks` substeps (watchdog).
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "schedule.hpp"
#include "sensor.hpp"

namespace vdsim {

template <class Plant>
class RealTimeRunner {
 public:
  using Clock = std::chrono::steady_clock;

  RealTimeRunner(Plant& plant, double substep_dt, int64_t n_ticks)
      : plant_(plant), dt_(substep_dt), n_(n_ticks) {
    tick_wall_.reserve(static_cast<size_t>(std::max<int64_t>(n_ticks, 0)));
  }
  ~RealTimeRunner() {
    request_stop();
    join();
  }
  RealTimeRunner(const RealTimeRunner&) = delete;
  RealTimeRunner& operator=(const RealTimeRunner&) = delete;

  // A fail-safe command whenever no command was noted for timeout_ticks substeps.
  void set_watchdog(int64_t timeout_ticks, const Command& failsafe) {
    watchdog_ = timeout_ticks > 0;
    timeout_ticks_ = timeout_ticks;
    failsafe_ = failsafe;
  }

  // Called after every substep on the runner's thread, under the mutex (a sensor delay's
  // captures); set before start(). nullptr: none.
  void set_hook(TickHook* hook) { hook_ = hook; }

  // Starts the thread (sim_cpu >= 0: pinned to that CPU where the OS allows it).
  void start(int sim_cpu) {
    t0_ = Clock::now();
    last_command_tick_ = plant_.tick();
    armed_ = true;
    thread_ = std::thread([this, sim_cpu] {
      affinity_applied_ = sim_cpu >= 0 && pin(sim_cpu);
      loop();
    });
  }
  void request_stop() { stop_.store(true); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  bool finished() const { return finished_.load(); }

  std::mutex& mutex() { return mu_; }
  // Under the mutex: a command was latched now (re-arms the watchdog).
  void note_command() {
    last_command_tick_ = plant_.tick();
    armed_ = true;
  }

  // Seconds of wall clock since start (steady clock).
  double wall_now() const {
    return std::chrono::duration<double>(Clock::now() - t0_).count();
  }
  void sleep_until(double seconds) const {
    std::this_thread::sleep_until(t0_ + to_duration(seconds));
  }

  int64_t ticks_done() const { return done_.load(); }
  double wall_elapsed() const { return wall_elapsed_; }
  double max_lag() const { return max_lag_; }
  int64_t failsafe_latches() const { return latches_.load(); }
  bool affinity_applied() const { return affinity_applied_; }
  const std::vector<double>& tick_wall() const { return tick_wall_; }

 private:
  static Clock::duration to_duration(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  static bool pin(int cpu) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
#else
    (void)cpu;
    return false;
#endif
  }

  void loop() {
    int64_t i = 0;
    for (; i < n_ && !stop_.load(); ++i) {
      const auto deadline = t0_ + to_duration(static_cast<double>(i) * dt_);
      std::this_thread::sleep_until(deadline);
      const double lag = std::chrono::duration<double>(Clock::now() - deadline).count();
      max_lag_ = std::max(max_lag_, lag);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (watchdog_ && armed_ && plant_.tick() - last_command_tick_ >= timeout_ticks_) {
          plant_.command_now(failsafe_);
          armed_ = false;
          latches_.fetch_add(1);
        }
        plant_.advance(1);
        if (hook_) hook_->after_tick();
      }
      tick_wall_.push_back(wall_now());
      done_.store(i + 1);
    }
    // The last substep occupies its slot: the run ends at its deadline, not before.
    if (i == n_ && !stop_.load()) std::this_thread::sleep_until(t0_ + to_duration(n_ * dt_));
    wall_elapsed_ = wall_now();
    finished_.store(true);
  }

  Plant& plant_;
  double dt_;
  int64_t n_;
  Clock::time_point t0_{};
  std::thread thread_;
  std::mutex mu_;
  std::atomic<bool> stop_{false}, finished_{false};
  std::atomic<int64_t> done_{0}, latches_{0};
  double max_lag_ = 0.0, wall_elapsed_ = 0.0;
  bool affinity_applied_ = false;
  bool watchdog_ = false, armed_ = true;
  int64_t timeout_ticks_ = 0, last_command_tick_ = 0;
  Command failsafe_{};
  TickHook* hook_ = nullptr;
  std::vector<double> tick_wall_;
};

}  // namespace vdsim
