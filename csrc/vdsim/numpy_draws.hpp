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
#include <cstddef>
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

// numpy's PCG64 seeded by numpy's SeedSequence (pool size 4), in C++: the generator a
// Gymnasium env gets from reset(seed=s) (np.random.Generator(PCG64(SeedSequence(s)))),
// made without Python for a vector env's rows (their seeded resets in one call). The
// entropy is SeedSequence's: the little-endian 32-bit words of the seed (of each element
// of a seed list, concatenated; [0] for 0). bitgen() serves NumpyDraws as numpy's own
// PCG64 does (next_uint32 halves a 64-bit output, the high half kept for the next call);
// state() is what numpy's PCG64.state holds, so the generator can move to a numpy object.
// tests/test_numpy_draws.py checks states and draws against numpy's.
class NpPcg64 {
 public:
  NpPcg64(const uint32_t* entropy, size_t n) {
    constexpr uint32_t kInitA = 0x43b0d7e5u, kMultA = 0x931e8875u, kInitB = 0x8b51f9ddu,
                       kMultB = 0x58f38dedu, kMixL = 0xca01f9ddu, kMixR = 0x4973f715u;
    uint32_t hash = kInitA;
    auto hashmix = [&hash](uint32_t v) {
      v ^= hash;
      hash *= kMultA;
      v *= hash;
      v ^= v >> 16;
      return v;
    };
    auto mix = [](uint32_t x, uint32_t y) {
      uint32_t r = kMixL * x - kMixR * y;
      r ^= r >> 16;
      return r;
    };
    uint32_t pool[4];
    for (size_t i = 0; i < 4; ++i) pool[i] = hashmix(i < n ? entropy[i] : 0u);
    for (size_t src = 0; src < 4; ++src)
      for (size_t dst = 0; dst < 4; ++dst)
        if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
    for (size_t src = 4; src < n; ++src)
      for (size_t dst = 0; dst < 4; ++dst) pool[dst] = mix(pool[dst], hashmix(entropy[src]));
    uint32_t words[8];  // generate_state(4, uint64) as 32-bit words
    uint32_t hc = kInitB;
    for (size_t i = 0; i < 8; ++i) {
      uint32_t v = pool[i % 4];
      v ^= hc;
      hc *= kMultB;
      v *= hc;
      v ^= v >> 16;
      words[i] = v;
    }
    uint64_t w[4];
    for (size_t k = 0; k < 4; ++k)
      w[k] = static_cast<uint64_t>(words[2 * k]) | (static_cast<uint64_t>(words[2 * k + 1]) << 32);
    const u128 seed = (static_cast<u128>(w[0]) << 64) | w[1];
    const u128 seq = (static_cast<u128>(w[2]) << 64) | w[3];
    state_ = 0;
    inc_ = (seq << 1) | 1u;
    step();
    state_ += seed;
    step();
    bg_ = NpBitGen{this, &next64_fn, &next32_fn, &next_double_fn, &next64_fn};
  }
  NpPcg64(const NpPcg64&) = delete;  // bg_ points at this object
  NpPcg64& operator=(const NpPcg64&) = delete;

  NpBitGen* bitgen() { return &bg_; }
  // numpy's PCG64.state: state and inc (128-bit: high, low words), has_uint32, uinteger.
  void state(uint64_t out[4], int& has_uint32, uint32_t& uinteger) const {
    out[0] = static_cast<uint64_t>(state_ >> 64), out[1] = static_cast<uint64_t>(state_);
    out[2] = static_cast<uint64_t>(inc_ >> 64), out[3] = static_cast<uint64_t>(inc_);
    has_uint32 = has_uint32_;
    uinteger = uinteger_;
  }

 private:
  using u128 = unsigned __int128;
  static constexpr u128 kMult =
      (static_cast<u128>(2549297995355413924ULL) << 64) | 4865540595714422341ULL;
  void step() { state_ = state_ * kMult + inc_; }
  uint64_t next64() {
    step();
    const uint64_t v = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
    const unsigned rot = static_cast<unsigned>(state_ >> 122);
    return (v >> rot) | (v << ((-rot) & 63u));
  }
  static uint64_t next64_fn(void* st) { return static_cast<NpPcg64*>(st)->next64(); }
  static uint32_t next32_fn(void* st) {
    auto* g = static_cast<NpPcg64*>(st);
    if (g->has_uint32_) {
      g->has_uint32_ = 0;
      return g->uinteger_;
    }
    const uint64_t next = g->next64();
    g->has_uint32_ = 1;
    g->uinteger_ = static_cast<uint32_t>(next >> 32);
    return static_cast<uint32_t>(next & 0xffffffffu);
  }
  static double next_double_fn(void* st) {
    return static_cast<double>(static_cast<NpPcg64*>(st)->next64() >> 11) *
           (1.0 / 9007199254740992.0);
  }
  u128 state_ = 0, inc_ = 0;
  int has_uint32_ = 0;
  uint32_t uinteger_ = 0;
  NpBitGen bg_{};
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
