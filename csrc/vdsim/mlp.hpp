// A trained policy's actor as a plain multilayer perceptron, for one decision at the cost
// of its arithmetic (vdsim_gym.policies.compiled): the observation normalized as SB3's
// VecNormalize does, then dense layers with a hidden activation, the last one linear,
// then the action: clipped to [-1, 1] (PPO's deterministic action, an SB3 predict's
// clip to the Box) or squashed by tanh (SAC and TQC's actor). Doubles throughout; torch
// computes in float32, so the two agree to float32's rounding, not bit for bit
// (tests/agents/test_compiled_policy.py states the tolerance).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vdsim {

class MlpPolicy {
 public:
  enum class Activation { kTanh, kRelu };

  // weights[l]: (out_l, in_l) row-major; biases[l]: out_l. inputs: the leading columns of
  // the observation the actor reads (mean, inv_std over them; clip_obs: VecNormalize's
  // clip, 0 for none). squash: tanh on the output, else a clip to [-1, 1].
  MlpPolicy(std::vector<std::vector<double>> weights, std::vector<std::vector<double>> biases,
            std::vector<int64_t> widths, Activation act, std::vector<double> mean,
            std::vector<double> inv_std, double clip_obs, bool squash)
      : w_(std::move(weights)), b_(std::move(biases)), widths_(std::move(widths)), act_(act),
        mean_(std::move(mean)), inv_std_(std::move(inv_std)), clip_(clip_obs),
        squash_(squash) {
    const size_t layers = w_.size();
    if (layers == 0 || b_.size() != layers || widths_.size() != layers + 1)
      throw std::invalid_argument("MlpPolicy: one weight, bias and width per layer");
    for (size_t l = 0; l < layers; ++l) {
      if (w_[l].size() != static_cast<size_t>(widths_[l] * widths_[l + 1]) ||
          b_[l].size() != static_cast<size_t>(widths_[l + 1]))
        throw std::invalid_argument("MlpPolicy: a layer's shape does not chain");
    }
    if (!mean_.empty() && (mean_.size() != static_cast<size_t>(widths_[0]) ||
                           inv_std_.size() != mean_.size()))
      throw std::invalid_argument("MlpPolicy: normalization of another width than the input");
    int64_t widest = 0;
    for (int64_t w : widths_) widest = std::max(widest, w);
    a_.assign(static_cast<size_t>(widest), 0.0);
    z_.assign(static_cast<size_t>(widest), 0.0);
  }

  int64_t n_inputs() const { return widths_.front(); }
  int64_t n_actions() const { return widths_.back(); }

  // One row: `obs` holds at least n_inputs() values (their stride `step`); `out` gets
  // n_actions() values.
  template <class T>
  void act(const T* obs, int64_t step, float* out) {
    const int64_t n0 = widths_[0];
    for (int64_t j = 0; j < n0; ++j) {
      double x = static_cast<double>(obs[j * step]);
      if (!mean_.empty()) {
        x = (x - mean_[j]) * inv_std_[j];
        if (clip_ > 0.0) x = std::clamp(x, -clip_, clip_);
      }
      a_[j] = x;
    }
    const size_t layers = w_.size();
    for (size_t l = 0; l < layers; ++l) {
      const int64_t n_in = widths_[l], n_out = widths_[l + 1];
      const double* w = w_[l].data();
      for (int64_t i = 0; i < n_out; ++i) {
        double s = b_[l][i];
        const double* row = w + i * n_in;
        for (int64_t j = 0; j < n_in; ++j) s += row[j] * a_[j];
        z_[i] = s;
      }
      const bool hidden = l + 1 < layers;
      for (int64_t i = 0; i < n_out; ++i) {
        double v = z_[i];
        if (hidden) v = act_ == Activation::kTanh ? std::tanh(v) : std::max(v, 0.0);
        a_[i] = v;
      }
    }
    const int64_t m = widths_.back();
    for (int64_t i = 0; i < m; ++i)
      out[i] = static_cast<float>(squash_ ? std::tanh(a_[i]) : std::clamp(a_[i], -1.0, 1.0));
  }

 private:
  std::vector<std::vector<double>> w_, b_;
  std::vector<int64_t> widths_;
  Activation act_;
  std::vector<double> mean_, inv_std_;
  double clip_;
  bool squash_;
  std::vector<double> a_, z_;  // the layer activations (scratch)
};

}  // namespace vdsim
