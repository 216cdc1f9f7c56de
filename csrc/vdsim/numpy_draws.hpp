// Draws from a numpy BitGenerator in C++, the same values numpy's Generator gives.
//
// An env's episode draws (its scenario's start, its latency seed) come from the env's
// `np_random`, a numpy Generator on a PCG64 bit generator (Gymnasium's seeding). The C++
// cores draw from that same bit generator through numpy's C interface (`bitgen_t`, the
// struct behind `BitGenerator.capsule`, numpy/random/bitgen.h): its raw stream is numpy's
// own, so the Python env and the C++ core advance one generator and a reset in C++ (the
// vector env's in-batch reset) draws what a Python reset would. The distributions are
// numpy's algorithms (numpy/random/src/distributions/distributions.c), written out for
// the three draws the tasks make:
// - random(): next_double (53 random bits),
// - uniform(low, high): low + (high - low) * next_double,
// - integers(n): Lemire's bounded method as numpy's random_bounded_uint64_fill runs it
//   for one value (32-bit draws below 2^32, 64-bit above).
// tests/test_numpy_draws.py checks every one against numpy's Generator, bit for bit.
#pragma once
#include <cstdint>
#include <stdexcept>

namespace vdsim {

// numpy's bitgen_t (numpy/random/bitgen.h), layout as numpy publishes it.
struct NpBitGen {
  void* state;
  uint64_t (*next_uint64)(void* st);
  uint32_t (*next_uint32)(void* st);
  double (*next_double)(void* st);
  uint64_t (*next_raw)(void* st);
};

class NumpyDraws {
 public:
  explicit NumpyDraws(NpBitGen* bg) : bg_(bg) {
    if (!bg_) throw std::invalid_argument("NumpyDraws: no bit generator");
  }
  // Generator.random()
  double random() { return bg_->next_double(bg_->state); }
  // Generator.uniform(low, high) for finite low <= high
  double uniform(double low, double high) { return low + (high - low) * random(); }
  // Generator.integers(n) for 0 < n <= 2^63 (dtype int64, endpoint False)
  uint64_t integers(uint64_t n) {
    if (n == 0) throw std::invalid_argument("integers(n) needs n > 0");
    const uint64_t rng = n - 1;  // the closed range numpy bounds
    if (rng == 0) return 0;
    if (rng <= 0xFFFFFFFFull) {
      if (rng == 0xFFFFFFFFull) return bg_->next_uint32(bg_->state);
      return lemire32(static_cast<uint32_t>(rng));
    }
    if (rng == 0xFFFFFFFFFFFFFFFFull) return bg_->next_uint64(bg_->state);
    return lemire64(rng);
  }

 private:
  uint32_t lemire32(uint32_t rng) {
    const uint32_t excl = rng + 1;
    uint64_t m = static_cast<uint64_t>(bg_->next_uint32(bg_->state)) * excl;
    uint32_t leftover = static_cast<uint32_t>(m & 0xFFFFFFFFull);
    if (leftover < excl) {
      const uint32_t threshold = (UINT32_MAX - rng) % excl;
      while (leftover < threshold) {
        m = static_cast<uint64_t>(bg_->next_uint32(bg_->state)) * excl;
        leftover = static_cast<uint32_t>(m & 0xFFFFFFFFull);
      }
    }
    return static_cast<uint32_t>(m >> 32);
  }
  uint64_t lemire64(uint64_t rng) {
    const uint64_t excl = rng + 1;
    unsigned __int128 m = static_cast<unsigned __int128>(bg_->next_uint64(bg_->state)) * excl;
    uint64_t leftover = static_cast<uint64_t>(m);
    if (leftover < excl) {
      const uint64_t threshold = (UINT64_MAX - rng) % excl;
      while (leftover < threshold) {
        m = static_cast<unsigned __int128>(bg_->next_uint64(bg_->state)) * excl;
        leftover = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  NpBitGen* bg_;
};

// What an episode's reset draws from, for a reset run in C++ (EnvCoreBase::reset_episode):
// the env's np_random and, when the env reports timing, the latency seed's generator
// and the latency model's own seed (CoreEnv._latency_seed: model_seed ^ integers(2^63)).
struct EpisodeRng {
  NpBitGen* task = nullptr;
  NpBitGen* latency = nullptr;  // nullptr: no latency seed drawn (seed 0)
  uint64_t model_seed = 0;
};

// CoreEnv's latency seed of an episode.
inline uint64_t draw_latency_seed(NpBitGen* bg, uint64_t model_seed) {
  if (!bg) return 0;
  return model_seed ^ NumpyDraws(bg).integers(uint64_t{1} << 63);
}

}  // namespace vdsim
