// VectorEnvCore: steps N independent env cores (any task: EnvCoreBase, sizes from the
// spec) by one env step each, in parallel on a persistent worker pool (chunks claimed
// dynamically by the caller and the awake workers). The cores are not owned (the Python envs own them); each keeps
// its own state, schedule, latency timeline and delay generator, so a core's result does
// not depend on which worker runs it or on the number of threads.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "interrupt.hpp"
#include "env_core.hpp"

namespace vdsim {

// Caller-owned, row-major batch buffers of one vector step (N rows each).
struct VectorStepBuffers {
  const void* actions = nullptr;  // (N, action_size) float32 or float64
  bool actions_f32 = false;
  const uint8_t* step_mask = nullptr;  // (N,) nonzero: step this env; nullptr: step all
  float* obs = nullptr;                // (N, obs_size)
  double* rewards = nullptr;           // (N,)
  int32_t* flags = nullptr;            // (N,) StepFlag bits
  double* terms = nullptr;             // (N, term_size)
  double* info = nullptr;              // (N, info_size)
  // (N,) nonzero: reset this env instead (its task's start drawn in C++ from rngs[i],
  // EnvCoreBase::reset_episode); nullptr: none. Takes precedence over step_mask.
  const uint8_t* reset_mask = nullptr;
  const EpisodeRng* rngs = nullptr;    // (N,) with reset_mask
  bool reset_only = false;  // reset the reset_mask rows only; leave the others' rows alone
  bool physics_only = false;  // benchmark reference: advance_physics, no task
};

class VectorEnvCore {
 public:
  // threads = 0: std::thread::hardware_concurrency() for N >= kAutoPoolMin, else inline;
  // 1: inline on the caller (no pool).
  // Every core must have the same spec (std::invalid_argument otherwise).
  VectorEnvCore(std::vector<EnvCoreBase*> cores, int threads);
  ~VectorEnvCore();
  VectorEnvCore(const VectorEnvCore&) = delete;
  VectorEnvCore& operator=(const VectorEnvCore&) = delete;

  // Steps every masked env once, writing its rows; unmasked envs get reward 0, flags 0
  // and zero reward terms (obs and info rows are left alone, unless reset_mask resets the
  // env: then they hold its reset's). Blocks until all are done.
  // Throws std::runtime_error after close(), Interrupted when the caller's StopToken
  // (current_stop_token() of the calling thread) asks to stop: the workers stop at their
  // next poll and the envs are left partly stepped (the caller must reset them).
  void step(const VectorStepBuffers& b);
  // Replace env i's vehicle parameters / steering actuator (EnvCoreBase::set_vehicle,
  // set_actuator) between steps (never during one: it takes the step's lock); false when
  // the env's plant has none. The env needs a reset after (the Python env resets it).
  bool set_vehicle(int64_t i, const VehicleParams& v);
  bool set_actuator(int64_t i, const ActuatorParams& a, int64_t dead_ticks);
  // A copy of row i's core / row i becomes a copy of `snapshot` (false: another task's).
  std::unique_ptr<EnvCoreBase> snapshot_row(int64_t i) const;
  bool restore_row(int64_t i, const EnvCoreBase& snapshot);
  // Stops and joins the workers; step() after close() is an error of the caller.
  void close();
  bool closed() const { return closed_; }
  int64_t size() const { return static_cast<int64_t>(cores_.size()); }
  int threads() const { return threads_; }
  const EnvCoreBase& core(int64_t i) const { return *cores_[i]; }
  const EnvSpec& spec() const { return cores_.front()->spec(); }
  // threads = 0 uses the pool from this batch size up (inline below).
  static constexpr int64_t kAutoPoolMin = 16;
  // Largest action row a core may have (a float32 row is widened on the stack).
  static constexpr int64_t kMaxActions = 16;

 private:
  void run_range(int64_t lo, int64_t hi);  // the envs [lo, hi)
  void run_chunks();  // claims chunks of chunk_ envs from next_ until none are left
  void worker_loop();

  std::vector<EnvCoreBase*> cores_;
  int64_t obs_n_ = 0, act_n_ = 0, term_n_ = 0, info_n_ = 0;  // row sizes from the spec
  int threads_ = 1;
  bool closed_ = false;
  VectorStepBuffers job_{};

  // Pool: worker 0 is the caller; workers 1..T-1 sleep on cv_ between calls.
  std::vector<std::thread> workers_;
  mutable std::mutex call_mu_;  // one step() or close() at a time (another Python thread may call)
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  uint64_t generation_ = 0;  // bumped per step; a worker joins a step at most once
  bool open_ = false;        // the current step still takes workers
  int active_ = 0;           // workers inside the current step
  int64_t chunk_ = 1;        // envs per claimed chunk
  std::atomic<int64_t> next_{0};      // first env not yet claimed
  std::atomic<bool> failed_{false};   // a chunk threw: nobody claims more
  bool stop_ = false;
  std::exception_ptr error_;
  std::atomic<bool> cancel_{false};  // raised by the caller's thread, polled by the workers
};

}  // namespace vdsim
