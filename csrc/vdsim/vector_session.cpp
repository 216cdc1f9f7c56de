#include "vector_session.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

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

VectorSession::VectorSession(std::vector<PathEnvCore*> cores, int threads)
    : cores_(std::move(cores)) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_ = threads;
  workers_.reserve(threads_ - 1);
  for (int w = 1; w < threads_; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
}

VectorSession::~VectorSession() { close(); }

void VectorSession::close() {
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

void VectorSession::run_range(int64_t lo, int64_t hi) {
  const VectorStepBuffers& b = job_;
  const auto* a32 = static_cast<const float*>(b.actions);
  const auto* a64 = static_cast<const double*>(b.actions);
  for (int64_t i = lo; i < hi; ++i) {
    const double a0 = b.actions_f32 ? a32[2 * i] : a64[2 * i];
    const double a1 = b.actions_f32 ? a32[2 * i + 1] : a64[2 * i + 1];
    if (b.physics_only) {
      cores_[i]->advance_physics(a0, a1);
      continue;
    }
    double* terms = b.terms + i * kTermSize;
    if (b.step_mask && !b.step_mask[i]) {
      b.rewards[i] = 0.0;
      b.flags[i] = 0;
      std::fill(terms, terms + kTermSize, 0.0);
      continue;
    }
    double* info = b.info + i * kStepInfoSize;
    b.flags[i] = cores_[i]->step(a0, a1, b.obs + i * kPathObsSize, terms, info);
    b.rewards[i] = info[0];
  }
}

void VectorSession::step(const VectorStepBuffers& b) {
  std::lock_guard<std::mutex> call(call_mu_);
  if (closed_) throw std::runtime_error("VectorSession is closed");
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
    pending_ = threads_ - 1;
    error_ = nullptr;
    ++generation_;
  }
  cv_start_.notify_all();
  std::exception_ptr mine;
  try {
    run_range(chunk_begin(0), chunk_begin(1));
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mu_);
  // A long step keeps polling the caller's token while the workers finish, so a stop
  // (Ctrl-C) reaches them even after this thread's own chunk is done.
  while (!cv_done_.wait_for(lock, std::chrono::milliseconds(20), [this] { return pending_ == 0; })) {
    lock.unlock();
    relay.stop_requested();
    lock.lock();
  }
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

void VectorSession::worker_loop(int w) {
  FlagStop stop(cancel_);
  ScopedStop scope(&stop);
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    std::exception_ptr err;
    try {
      run_range(chunk_begin(w), chunk_begin(w + 1));
    } catch (...) {
      err = std::current_exception();
    }
    bool last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (err && !error_) error_ = err;
      last = --pending_ == 0;
    }
    if (last) cv_done_.notify_one();
  }
}

}  // namespace vdsim
