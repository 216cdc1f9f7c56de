// Computation-delay models with their own seeded generator, so a run's delays depend on
// its seed only (not on a process-wide RNG). The generator and the transforms are
// spelled out here rather than taken from <random>, whose distributions differ between
// standard libraries: the same seed gives the same delays on every platform.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fminmax.hpp"

namespace vdsim {

enum class LatencyKind { Fixed = 0, Uniform = 1, Normal = 2, Measured = 3, Empirical = 4 };

// A model's parameters: each kind reads its own fields, the others stay 0.
struct LatencySpec {
  LatencyKind kind = LatencyKind::Fixed;
  double c = 0.0;     // fixed: the delay [s]
  double lo = 0.0;    // uniform: lower bound [s]
  double hi = 0.0;    // uniform: upper bound [s]
  double mu = 0.0;    // normal: mean before clipping at 0 [s]
  double sd = 0.0;    // normal: standard deviation [s]
  uint64_t seed = 0;  // uniform / normal / empirical
  // empirical: recorded delays [s] (ascending), drawn uniformly with replacement
  std::vector<double> samples;

  template <class Ar>
  void archive(Ar& ar) { ar(kind, c, lo, hi, mu, sd, seed, samples); }
};

// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-tested 64-bit generator.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  template <class Ar>
  void archive(Ar& ar) { ar(state_); }

 private:
  uint64_t state_;
};

class LatencySampler {
 public:
  LatencySampler() = default;
  explicit LatencySampler(const LatencySpec& spec) : spec_(spec), rng_(spec.seed) {}
  template <class Ar>
  void archive(Ar& ar) { ar(spec_, rng_); }

  void reseed(uint64_t seed) { rng_ = SplitMix64(seed); }
  const LatencySpec& spec() const { return spec_; }

  // The next computation delay c_k >= 0 [s]. Measured delays are supplied by the caller (the controller's timed compute).
  double draw() {
    switch (spec_.kind) {
      case LatencyKind::Uniform:
        return spec_.lo + (spec_.hi - spec_.lo) * rng_.uniform();
      case LatencyKind::Normal: {
        // Box-Muller, cosine branch; 1 - u keeps the logarithm finite.
        const double u1 = 1.0 - rng_.uniform(), u2 = rng_.uniform();
        const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        return fmax_inl(0.0, spec_.mu + spec_.sd * z);  // a computation cannot end before it starts
      }
      case LatencyKind::Empirical: {
        // One recorded delay, each with probability 1/n (a bootstrap draw).
        const size_t n = spec_.samples.size();
        if (n == 0) return 0.0;
        const size_t i = static_cast<size_t>(rng_.uniform() * static_cast<double>(n));
        return spec_.samples[std::min(i, n - 1)];
      }
      default:
        return spec_.c;
    }
  }

 private:
  LatencySpec spec_{};
  SplitMix64 rng_{0};
};

// A network between controller and plant (NetworkChannel): each command is lost or
// delivered late. Loss: Bernoulli with probability `drop`, or (burst) a Gilbert-Elliott
// chain stepped once per command: in the bad state every command is lost, in the good
// one with probability `drop`; the chain moves good -> bad with p_gb and bad -> good with
// p_bg before each command (long-run loss pi_B + pi_G drop, pi_B = p_gb / (p_gb + p_bg);
// a bad run lasts 1 / p_bg commands on average). A delivered command takes `jitter`'s
// delay on top of its computation.
struct NetworkSpec {
  double drop = 0.0;
  bool burst = false;
  double p_gb = 0.0, p_bg = 1.0;
  LatencySpec jitter{};  // Fixed c = 0: no network delay
  uint64_t seed = 0;
  template <class Ar>
  void archive(Ar& ar) { ar(drop, burst, p_gb, p_bg, jitter, seed); }
};

class NetworkChannel {
 public:
  NetworkChannel() = default;
  explicit NetworkChannel(const NetworkSpec& s) : spec_(s), jitter_(s.jitter) { reseed(0); }

  // One stream for the losses and one for the delays, both from the run's seed.
  void reseed(uint64_t seed) {
    rng_ = SplitMix64(spec_.seed ^ seed);
    jitter_.reseed(spec_.jitter.seed ^ seed ^ 0x6A09E667F3BCC909ull);
    bad_ = false;
  }
  // Whether the next command is lost (steps the chain once).
  bool lost() {
    if (spec_.burst) {
      const double u = rng_.uniform();
      bad_ = bad_ ? !(u < spec_.p_bg) : (u < spec_.p_gb);
      if (bad_) return true;
    }
    return spec_.drop > 0.0 && rng_.uniform() < spec_.drop;
  }
  double delay() { return jitter_.draw(); }
  template <class Ar>
  void archive(Ar& ar) { ar(spec_, jitter_, rng_, bad_); }

 private:
  NetworkSpec spec_{};
  LatencySampler jitter_{};
  SplitMix64 rng_{0};
  bool bad_ = false;
};

}  // namespace vdsim
