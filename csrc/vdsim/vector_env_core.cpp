#include "vector_env_core.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>

namespace vdsim {

namespace {

// The caller's token, relayed to the workers through the session's cancel flag.
class RelayStop : public StopToken {
 public:
  RelayStop(StopToken* outer, std::atomic<bool>& flag) : outer_(outer), flag_(flag) {}
  bool stop_requested() override {
    if (flag_.load(std::memory_order_relaxed)) return true;
    if (outer_ != nullptr && outer_->stop_requested()) {
      flag_.store(true, std::memory_order_relaxed);
      return true;
    }
    return false;
  }

 private:
  StopToken* outer_;
  std::atomic<bool>& flag_;
};

}  // namespace

VectorEnvCore::VectorEnvCore(std::vector<EnvCoreBase*> cores, int threads)
    : cores_(std::move(cores)) {
  if (cores_.empty()) throw std::invalid_argument("VectorEnvCore needs at least one core");
  const EnvSpec& s = cores_.front()->spec();
  for (const EnvCoreBase* c : cores_) {
    const EnvSpec& o = c->spec();
    if (o.obs_names != s.obs_names || o.action_names != s.action_names ||
        o.term_names != s.term_names || o.info_names != s.info_names)
      throw std::invalid_argument("VectorEnvCore: every env core must have the same spec");
  }
  obs_n_ = s.obs_size();
  act_n_ = s.action_size();
  term_n_ = s.term_size();
  info_n_ = s.info_size();
  if (act_n_ > kMaxActions) throw std::invalid_argument("VectorEnvCore: action row too long");
  // 0: every core for a batch of kAutoPoolMin envs or more, inline below (waking a worker
  // costs more than it saves on a small batch, measured: docs/VECTOR.md, "Threads").
  if (threads <= 0)
    threads = size() >= kAutoPoolMin
                  ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                  : 1;
  threads_ = threads;
  workers_.reserve(threads_ - 1);
  for (int w = 1; w < threads_; ++w) workers_.emplace_back([this] { worker_loop(); });
  // Several chunks per thread: the work balances when one thread starts late.
  chunk_ = std::max<int64_t>(1, size() / (4 * threads_));
}

VectorEnvCore::~VectorEnvCore() { close(); }

bool VectorEnvCore::set_vehicle(int64_t i, const VehicleParams& v) {
  std::lock_guard<std::mutex> call(call_mu_);
  return cores_.at(static_cast<size_t>(i))->set_vehicle(v);
}

bool VectorEnvCore::set_actuator(int64_t i, const ActuatorParams& a, int64_t dead_ticks) {
  std::lock_guard<std::mutex> call(call_mu_);
  return cores_.at(static_cast<size_t>(i))->set_actuator(a, dead_ticks);
}

std::unique_ptr<EnvCoreBase> VectorEnvCore::snapshot_row(int64_t i) const {
  std::lock_guard<std::mutex> call(call_mu_);
  return cores_.at(static_cast<size_t>(i))->clone();
}

bool VectorEnvCore::restore_row(int64_t i, const EnvCoreBase& snapshot) {
  std::lock_guard<std::mutex> call(call_mu_);
  return cores_.at(static_cast<size_t>(i))->restore(snapshot);
}

void VectorEnvCore::close() {
  std::lock_guard<std::mutex> call(call_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  closed_ = true;
}

void VectorEnvCore::run_range(int64_t lo, int64_t hi) {
  const VectorStepBuffers& b = job_;
  const auto* a32 = static_cast<const float*>(b.actions);
  const auto* a64 = static_cast<const double*>(b.actions);
  double widened[kMaxActions];
  for (int64_t i = lo; i < hi; ++i) {
    const bool reset = b.reset_mask && b.reset_mask[i];
    if (!b.physics_only && (reset || b.reset_only || (b.step_mask && !b.step_mask[i]))) {
      if (!reset && b.reset_only) continue;  // neither reset nor stepped: left alone
      double* terms = b.terms + i * term_n_;
      b.rewards[i] = 0.0;
      b.flags[i] = 0;
      std::fill(terms, terms + term_n_, 0.0);
      if (reset && !cores_[i]->reset_episode(b.rngs[i], b.obs + i * obs_n_, b.info + i * info_n_))
        throw std::logic_error("env " + std::to_string(i) + ": its task resets in Python");
      continue;
    }
    const double* action = widened;
    if (b.actions_f32) {
      for (int64_t j = 0; j < act_n_; ++j) widened[j] = a32[i * act_n_ + j];
    } else {
      action = a64 + i * act_n_;
    }
    if (b.physics_only) {
      cores_[i]->advance_physics(action);
      continue;
    }
    double* terms = b.terms + i * term_n_;
    double* info = b.info + i * info_n_;
    b.flags[i] = cores_[i]->step(action, b.obs + i * obs_n_, terms, info,
                                 std::numeric_limits<double>::quiet_NaN());
    b.rewards[i] = info[0];
  }
}

// Chunks of envs are claimed from one counter by the caller and by the workers that are
// awake (dynamic, not a static partition): a worker the OS wakes late, or not at all
// while the other core is busy (a shared 2-core machine, torch's threads), finds the
// work done and costs nothing, so a step is never slower than inline by more than the
// wake-up call. Which thread steps an env does not change its result.
void VectorEnvCore::run_chunks() {
  const int64_t n = size();
  for (;;) {
    if (failed_.load(std::memory_order_relaxed)) return;
    const int64_t lo = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (lo >= n) return;
    run_range(lo, std::min(n, lo + chunk_));
  }
}

void VectorEnvCore::step(const VectorStepBuffers& b) {
  std::lock_guard<std::mutex> call(call_mu_);
  if (closed_) throw std::runtime_error("VectorEnvCore is closed");
  job_ = b;
  cancel_.store(false, std::memory_order_relaxed);
  RelayStop relay(current_stop_token(), cancel_);
  ScopedStop scope(&relay);
  if (threads_ == 1) {  // inline: no handoff
    run_range(0, size());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = nullptr;
    failed_.store(false, std::memory_order_relaxed);
    next_.store(0, std::memory_order_relaxed);
    open_ = true;
    ++generation_;
  }
  cv_start_.notify_all();
  std::exception_ptr mine;
  try {
    run_chunks();
  } catch (...) {
    mine = std::current_exception();
    failed_.store(true, std::memory_order_relaxed);
  }
  std::unique_lock<std::mutex> lock(mu_);
  open_ = false;  // a worker waking from here on skips this step
  // A long step keeps polling the caller's token while the workers finish their chunks,
  // so a stop (Ctrl-C) reaches them even after this thread has no chunk left.
  while (!cv_done_.wait_for(lock, std::chrono::milliseconds(20), [this] { return active_ == 0; })) {
    lock.unlock();
    relay.stop_requested();
    lock.lock();
  }
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

void VectorEnvCore::worker_loop() {
  FlagStop stop(cancel_);
  ScopedStop scope(&stop);
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_start_.wait(lock, [&] { return stop_ || (open_ && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      ++active_;  // under the lock: the caller cannot close the step before this counts
    }
    std::exception_ptr err;
    try {
      run_chunks();
    } catch (...) {
      err = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
    bool last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (err && !error_) error_ = err;
      last = --active_ == 0;
    }
    if (last) cv_done_.notify_one();
  }
}

}  // namespace vdsim
