// The simulator's side of a SIL run (docs/SIL.md): the controller that said hello first,
// each observation sent and the command answering it awaited, every other message
// counted by kind and dropped, and, for the wall-clock mode, one sample taken, answered
// and latched on the real-time runner (sil_sample) without Python in between.
//
// Wire format (little-endian): hello "VDSH" u16 version; observation "VDSO" u16 version,
// u16 n, u32 seq, u64 sample_tick, f64 t_sample, n f64; command "VDSC" u16 version, u16 n,
// u32 seq, n f64; end "VDSE" u16 version, u16 reason.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "env_core.hpp"
#include "sil_link.hpp"

namespace vdsim {

struct SilCounters {
  int64_t n_samples = 0, n_commands = 0, n_late = 0, n_stale = 0, n_duplicate = 0,
          n_malformed = 0, n_foreign = 0, n_failsafe = 0;
};

class SilExchange {
 public:
  static constexpr uint16_t kVersion = 1;
  static constexpr double kActionTol = 1.0 + 1e-6;  // _checks.ACTION_TOL: the bound itself
  static constexpr size_t kObsHead = 28, kCommandHead = 12;
  enum Answer { kCommand = 0, kFailsafe = 1, kStopped = 2 };

  // failsafe: the action applied to a sample without an answer in time; spin_s: how long
  // a wait polls before it sleeps.
  SilExchange(SilLink& link, std::vector<double> failsafe, double spin_s)
      : link_(link), failsafe_(std::move(failsafe)), spin_(spin_s), buf_(65536) {}

  const SilCounters& counters() const { return c_; }
  int misses() const { return misses_; }
  bool has_client() const { return has_client_; }
  uint64_t client() const { return client_; }
  const std::vector<double>& failsafe() const { return failsafe_; }

  // Waits for a hello (other messages count as malformed); false at the deadline or a stop.
  bool wait_hello(double timeout_s, const std::function<bool()>& stop) {
    const auto deadline = Clock::now() + seconds(timeout_s);
    for (;;) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      uint64_t from = 0;
      const long n = link_.recv_from(buf_.data(), buf_.size(), left, spin_, from, stop);
      if (n == -2 || n == -1) return false;
      if (n == 6 && std::memcmp(buf_.data(), "VDSH", 4) == 0 && u16(buf_.data() + 4) == kVersion) {
        client_ = from;
        has_client_ = true;
        return true;
      }
      ++c_.n_malformed;
    }
  }

  // Sends sample k's observation (n_obs float32 values, sent as f64) and waits up to
  // timeout_s for its command: kCommand (action filled), kFailsafe (the fail-safe action
  // filled; counted) or kStopped (stop() said so; nothing counted but the sample). wall:
  // seconds from the send to the answer.
  int ask(uint32_t k, int64_t tick, double t, const float* obs, size_t n_obs, double timeout_s,
          double* action, double& wall, const std::function<bool()>& stop) {
    send_observation(k, tick, t, obs, n_obs);
    ++c_.n_samples;
    const auto sent = Clock::now();
    const auto deadline = sent + seconds(timeout_s);
    for (;;) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      uint64_t from = 0;
      const long n = link_.recv_from(buf_.data(), buf_.size(), left, spin_, from, stop);
      if (n == -2) {
        wall = std::chrono::duration<double>(Clock::now() - sent).count();
        return kStopped;
      }
      if (n == -1) {  // the deadline: the fail-safe action
        wall = std::chrono::duration<double>(Clock::now() - sent).count();
        ++misses_;
        ++c_.n_failsafe;
        answered_[k] = false;
        std::copy(failsafe_.begin(), failsafe_.end(), action);
        return kFailsafe;
      }
      if (classify(buf_.data(), static_cast<size_t>(n), from, k, action)) {
        wall = std::chrono::duration<double>(Clock::now() - sent).count();
        misses_ = 0;
        ++c_.n_commands;
        answered_[k] = true;
        last_applied_ = static_cast<int64_t>(k);
        return kCommand;
      }
    }
  }

  // The end message, then what is already waiting (a late answer to the last sample)
  // counted without waiting; an answer to the sample after the last is malformed.
  void end(uint16_t reason) {
    unsigned char m[8];
    std::memcpy(m, "VDSE", 4);
    put16(m + 4, kVersion);
    put16(m + 6, reason);
    if (has_client_) link_.send_to(m, sizeof m, client_);
  }
  void drain() {
    std::vector<double> scratch(failsafe_.size());
    uint64_t next = 0;
    for (const auto& kv : answered_) next = std::max<uint64_t>(next, kv.first + 1ull);
    for (;;) {
      uint64_t from = 0;
      const long n = link_.recv_from(buf_.data(), buf_.size(), 0.0, 0.0, from, nullptr);
      if (n < 0) return;
      if (classify(buf_.data(), static_cast<size_t>(n), from, static_cast<uint32_t>(next),
                   scratch.data()))
        ++c_.n_malformed;
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  static Clock::duration seconds(double s) {
    s = s > 0 ? (s < 1e6 ? s : 1e6) : 0.0;
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }
  static uint16_t u16(const unsigned char* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  static void put16(unsigned char* p, uint16_t v) { std::memcpy(p, &v, 2); }

  void send_observation(uint32_t k, int64_t tick, double t, const float* obs, size_t n_obs) {
    out_.resize(kObsHead + 8 * n_obs);
    unsigned char* p = out_.data();
    std::memcpy(p, "VDSO", 4);
    put16(p + 4, kVersion);
    put16(p + 6, static_cast<uint16_t>(n_obs));
    std::memcpy(p + 8, &k, 4);
    const uint64_t tk = static_cast<uint64_t>(tick);
    std::memcpy(p + 12, &tk, 8);
    std::memcpy(p + 20, &t, 8);
    for (size_t i = 0; i < n_obs; ++i) {
      const double v = obs[i];
      std::memcpy(p + kObsHead + 8 * i, &v, 8);
    }
    link_.send_to(out_.data(), out_.size(), client_);
  }

  // Whether a message is the command of sample k (its values into action); else counts
  // why not: foreign, malformed (magic, version, n, length, non-finite or out-of-range
  // values, a seq never sent), duplicate, stale (older than one applied) or late.
  bool classify(const unsigned char* m, size_t n, uint64_t from, uint32_t k, double* action) {
    if (from != client_) {
      ++c_.n_foreign;
      return false;
    }
    const size_t n_act = failsafe_.size();
    if (n < kCommandHead || std::memcmp(m, "VDSC", 4) != 0 || u16(m + 4) != kVersion ||
        u16(m + 6) != n_act || n != kCommandHead + 8 * n_act) {
      ++c_.n_malformed;
      return false;
    }
    uint32_t seq;
    std::memcpy(&seq, m + 8, 4);
    for (size_t j = 0; j < n_act; ++j) {
      double v;
      std::memcpy(&v, m + kCommandHead + 8 * j, 8);
      if (!std::isfinite(v) || std::fabs(v) > kActionTol) {  // never applied
        ++c_.n_malformed;
        return false;
      }
      action[j] = v;
    }
    if (seq == k) return true;
    const auto it = answered_.find(seq);
    if (seq > k || it == answered_.end()) {
      ++c_.n_malformed;  // answers no sample sent
    } else if (it->second) {
      ++c_.n_duplicate;
    } else if (static_cast<int64_t>(seq) < last_applied_) {
      ++c_.n_stale;
    } else {
      ++c_.n_late;
    }
    return false;
  }

  SilLink& link_;
  std::vector<double> failsafe_;
  double spin_;
  std::vector<unsigned char> buf_, out_;
  SilCounters c_;
  std::unordered_map<uint32_t, bool> answered_;  // seq -> a command applied (or fail-safe)
  int64_t last_applied_ = -1;
  int misses_ = 0;
  uint64_t client_ = 0;
  bool has_client_ = false;
};

// One wall-clock sample (mode C) of an env core ticked by a real-time runner: a sleep
// until the sample's slot [s of the runner's clock]; then, under the runner's mutex, the
// plant's tick and the core's observation and info as they are; then, unless the task
// reports a terminal state, the observation sent and its command awaited (the plant runs
// on meanwhile), and latched under the mutex at once: it acts from the next substep.
// Nothing of Python runs between the wake and the latch. Fills obs, info, action.
struct SilSample {
  // SilExchange's answer; -1: the episode had ended at the snapshot (nothing sent); -2:
  // the runner had finished when the slot came (nothing read).
  int answer = -2;
  int flags = 0;
  int64_t sample_tick = 0, latch_tick = -1;
  double wake = 0.0;  // the runner's wall clock at the wake [s]
  double wall = 0.0;  // from the send to the answer [s]
  double latched = 0.0;  // the runner's wall clock when the command was latched [s]
};

template <class Runner>
SilSample sil_sample(Runner& runner, EnvCoreBase& core, SilExchange& ex, uint32_t k,
                     double slot, double dt, double timeout_s, int terminal_mask, float* obs,
                     double* info, double* action, const std::function<bool()>& stop) {
  SilSample s;
  runner.sleep_until(slot);
  s.wake = runner.wall_now();
  if (runner.finished()) return s;
  {
    std::lock_guard<std::mutex> lock(runner.mutex());
    s.sample_tick = core.plant_tick();
    s.flags = core.peek(obs, info);
  }
  s.answer = -1;
  if (s.flags & terminal_mask) return s;
  s.answer = ex.ask(k, s.sample_tick, static_cast<double>(s.sample_tick) * dt, obs,
                    core.spec().obs_size(), timeout_s, action, s.wall, stop);
  if (s.answer == SilExchange::kStopped) return s;
  std::lock_guard<std::mutex> lock(runner.mutex());
  core.latch(action);
  runner.note_command();
  s.latch_tick = core.plant_tick();
  s.latched = runner.wall_now();
  return s;
}

}  // namespace vdsim
