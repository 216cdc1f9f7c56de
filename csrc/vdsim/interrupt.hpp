// Cooperative interruption of long loops (Ctrl-C while the GIL is released).
//
// Whoever runs core work on a thread may install a StopToken for that thread
// (ScopedStop); Session::advance polls it every kPollEvery substeps and throws
// Interrupted when it says stop. The core knows nothing of Python: the bindings install a
// token that checks Python's signals, the vector session one that reads its cancel flag.
// A normal env step (tens of substeps) never reaches a poll.
#pragma once
#include <atomic>
#include <cstdint>
#include <stdexcept>

namespace vdsim {

class StopToken {
 public:
  virtual ~StopToken() = default;
  virtual bool stop_requested() = 0;
};

// A stop raised by a token; the state of the interrupted object is partly advanced.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// A token that reads a flag another thread sets.
class FlagStop : public StopToken {
 public:
  explicit FlagStop(const std::atomic<bool>& flag) : flag_(flag) {}
  bool stop_requested() override { return flag_.load(std::memory_order_relaxed); }

 private:
  const std::atomic<bool>& flag_;
};

// 2^13 substeps: ~10 ms of L2 physics between polls.
constexpr int64_t kPollEvery = int64_t{1} << 13;

inline StopToken*& current_stop_token() {
  static thread_local StopToken* token = nullptr;
  return token;
}

// Installs `token` for this thread for the scope; restores the previous one.
class ScopedStop {
 public:
  explicit ScopedStop(StopToken* token) : prev_(current_stop_token()) {
    current_stop_token() = token;
  }
  ~ScopedStop() { current_stop_token() = prev_; }
  ScopedStop(const ScopedStop&) = delete;
  ScopedStop& operator=(const ScopedStop&) = delete;

 private:
  StopToken* prev_;
};

// Called with a loop counter; polls the thread's token every kPollEvery iterations.
inline void poll_stop(int64_t k) {
  if ((k & (kPollEvery - 1)) != kPollEvery - 1) return;
  StopToken* token = current_stop_token();
  if (token != nullptr && token->stop_requested()) throw Interrupted();
}

}  // namespace vdsim
