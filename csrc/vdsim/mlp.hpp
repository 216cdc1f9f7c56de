// A trained policy's actor as a plain multilayer perceptron, for one decision at the cost
// of its arithmetic (vdsim_gym.policies.compiled): the observation normalized as SB3's
// VecNormalize does, then dense layers with a hidden activation, the last one linear,
// then the action: clipped to [-1, 1] (PPO's deterministic action, an SB3 predict's
// clip to the Box) or squashed by tanh (SAC and TQC's actor). The features and the
// normalization in doubles, the layers in float32 as torch's are (the multiply-adds four
// to a vector register), the hidden tanh by ``tanh_exp`` (below); torch sums and rounds
// in its own order, so the two agree to float32's rounding, not bit for bit
// (tests/agents/test_compiled_policy.py states the tolerance).
//
// A run trained with --features predicted_state reads, after the env's n_obs columns,
// the prediction across its known delay (vdsim_gym.controllers.features): a feature stage
// computes it from the row as the Python features do (the single-track model of a path
// env, or the ACC's gap law), each column rounded to float32 as theirs are, so the
// decision stays one call.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gap_prediction.hpp"
#include "single_track.hpp"

namespace vdsim {

// tanh x = sign(x) (1 - 2 / (e^{2|x|} + 1)), e^t = 2^k e^r with k = round(t / ln 2),
// r = t - k ln 2 in [-ln2 / 2, ln2 / 2] (ln 2 in two parts, so r is exact to rounding)
// and e^r by its Taylor series to r^7 (the rest below 5e-9 there): within 1e-8 of
// libm's tanh in absolute terms, below the float32 rounding the layer applies next (6e-8
// at 1), and cheaper (no call; 128 of them are most of a 64x64 actor's time). Below
// |x| = 1e-4 tanh x = x to 4e-13; above 20, +-1.
inline double tanh_exp(double x) {
  const double ax = std::fabs(x);
  if (!(ax >= 1e-4)) return x;  // NaN passes through
  if (ax > 20.0) return x > 0.0 ? 1.0 : -1.0;
  const double t = 2.0 * ax;
  const int64_t k = static_cast<int64_t>(t * 1.4426950408889634 + 0.5);  // t / ln 2
  const double kd = static_cast<double>(k);
  const double r = (t - kd * 6.93147180369123816490e-01) - kd * 1.90821492927058770002e-10;
  const double p =
      1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 +
      r * (1.0 / 720 + r * (1.0 / 5040)))))));
  uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;  // 2^k, k in [0, 58]
  double two_k;
  std::memcpy(&two_k, &bits, sizeof two_k);
  const double y = 1.0 - 2.0 / (p * two_k + 1.0);
  return x > 0.0 ? y : -y;
}

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
    wt_.resize(layers);  // each layer's weights transposed, (in, out) row-major, float32
    bf_.resize(layers);
    for (size_t l = 0; l < layers; ++l) {
      const int64_t n_in = widths_[l], n_out = widths_[l + 1];
      wt_[l].assign(w_[l].size(), 0.0f);
      for (int64_t i = 0; i < n_out; ++i)
        for (int64_t j = 0; j < n_in; ++j)
          wt_[l][j * n_out + i] = static_cast<float>(w_[l][i * n_in + j]);
      bf_[l].assign(b_[l].begin(), b_[l].end());
    }
    int64_t widest = 0;
    for (int64_t w : widths_) widest = std::max(widest, w);
    a_.assign(static_cast<size_t>(widest), 0.0f);
    z_.assign(static_cast<size_t>(widest), 0.0f);
  }

  // The single-track prediction of a path env: its 7 columns (e_y, e_psi, vx, vy, r,
  // kappa_ref, prev_steer) and scales; appended: the predicted e_y, e_psi, vy, r over
  // their scales.
  void set_path_features(const SingleTrackModel& model, const std::array<int64_t, 7>& cols,
                         const std::array<double, 7>& scale, double max_steer, double delay,
                         double max_step, int64_t n_obs) {
    check_features(n_obs, 4, cols.data(), 7);
    path_ = model;
    cols_ = std::vector<int64_t>(cols.begin(), cols.end());
    scale_ = std::vector<double>(scale.begin(), scale.end());
    max_steer_ = max_steer, delay_ = delay, max_step_ = max_step;
    features_ = Features::kPath;
  }
  // The ACC's gap law: its 5 columns (ego_speed, gap, rel_speed, lead_present,
  // prev_accel) and scales; appended: the predicted ego_speed, gap, rel_speed.
  void set_gap_features(const std::array<int64_t, 5>& cols, const std::array<double, 5>& scale,
                        double a_max, double d_max, double delay, int64_t n_obs) {
    check_features(n_obs, 3, cols.data(), 5);
    for (int k = 0; k < 5; ++k) gap_.col[k] = cols[k], gap_.scale[k] = scale[k];
    a_max_ = a_max, d_max_ = d_max, delay_ = delay;
    features_ = Features::kGap;
  }

  int64_t n_inputs() const { return widths_.front(); }
  // The observation columns a row must have: the env's (with features) or the inputs.
  int64_t n_read() const { return features_ == Features::kNone ? widths_.front() : n_obs_; }
  int64_t n_actions() const { return widths_.back(); }

  // One row: `obs` holds at least n_inputs() values (their stride `step`); `out` gets
  // n_actions() values.
  template <class T>
  void act(const T* obs, int64_t step, float* out) {
    const int64_t n0 = widths_[0];
    if (features_ != Features::kNone) {
      for (int64_t j = 0; j < n_obs_; ++j) row_[j] = static_cast<double>(obs[j * step]);
      predict_features();
    }
    for (int64_t j = 0; j < n0; ++j) {
      double x = features_ == Features::kNone ? static_cast<double>(obs[j * step]) : row_[j];
      if (!mean_.empty()) {
        x = (x - mean_[j]) * inv_std_[j];
        if (clip_ > 0.0) x = std::clamp(x, -clip_, clip_);
      }
      a_[j] = static_cast<float>(x);  // torch's input: the normalized row as float32
    }
    const size_t layers = wt_.size();
    for (size_t l = 0; l < layers; ++l) {
      const int64_t n_in = widths_[l], n_out = widths_[l + 1];
      // z = b + sum_j a_j W[:, j], j ascending: each z_i sums in one order whatever the
      // CPU's vector width (the loop over i is the one a compiler vectorizes)
      const float* wt = wt_[l].data();
      float* z = z_.data();
      std::copy(bf_[l].begin(), bf_[l].end(), z);
      for (int64_t j = 0; j < n_in; ++j) {
        const float aj = a_[j];
        const float* col = wt + j * n_out;
        for (int64_t i = 0; i < n_out; ++i) z[i] += col[i] * aj;
      }
      const bool hidden = l + 1 < layers;
      for (int64_t i = 0; i < n_out; ++i) {
        float v = z[i];
        if (hidden)
          v = act_ == Activation::kTanh ? static_cast<float>(tanh_exp(v)) : std::max(v, 0.0f);
        a_[i] = v;
      }
    }
    const int64_t m = widths_.back();
    for (int64_t i = 0; i < m; ++i) {
      const double v = a_[i];
      out[i] = static_cast<float>(squash_ ? std::tanh(v) : std::clamp(v, -1.0, 1.0));
    }
  }

 private:
  enum class Features { kNone, kPath, kGap };

  void check_features(int64_t n_obs, int64_t k, const int64_t* cols, int n_cols) {
    if (n_obs + k > widths_.front())
      throw std::invalid_argument("MlpPolicy: the actor reads fewer columns than the "
                                  "observation and its features");
    for (int i = 0; i < n_cols; ++i)
      if (cols[i] < 0 || cols[i] >= n_obs)
        throw std::invalid_argument("MlpPolicy: a feature column is out of range");
    n_obs_ = n_obs;
    n_features_ = k;
    row_.assign(static_cast<size_t>(widths_.front()), 0.0);
    pred_.assign(static_cast<size_t>(n_obs), 0.0);
  }

  // row_[n_obs_ .. n_obs_ + n_features_) = the predicted columns of row_[0 .. n_obs_),
  // each rounded to float32 (the Python features' dtype).
  void predict_features() {
    const double d[1] = {delay_};
    if (features_ == Features::kPath) {
      int64_t c[7];
      double sc[7];
      for (int k = 0; k < 7; ++k) c[k] = cols_[k], sc[k] = scale_[k];
      single_track_predict_obs<double>(path_, row_.data(), 1, n_obs_, c, sc, max_steer_, d,
                                       false, max_step_, pred_.data());
      const int64_t take[4] = {c[0], c[1], c[3], c[4]};  // e_y, e_psi, vy, r
      for (int k = 0; k < 4; ++k)
        row_[n_obs_ + k] = static_cast<double>(static_cast<float>(pred_[take[k]]));
    } else {
      predict_gap_obs(row_.data(), 1, n_obs_, gap_, a_max_, d_max_, d, false, pred_.data());
      for (int k = 0; k < 3; ++k)
        row_[n_obs_ + k] = static_cast<double>(static_cast<float>(pred_[gap_.col[k]]));
    }
  }

  Features features_ = Features::kNone;
  int64_t n_obs_ = 0, n_features_ = 0;
  SingleTrackModel path_{};
  GapColumns gap_{};
  std::vector<int64_t> cols_;
  std::vector<double> scale_;
  double max_steer_ = 0.0, delay_ = 0.0, max_step_ = 0.0, a_max_ = 0.0, d_max_ = 0.0;
  std::vector<double> row_, pred_;  // the row with its features, the prediction (scratch)
  std::vector<std::vector<double>> w_, b_;
  std::vector<std::vector<float>> wt_, bf_;  // the layers as evaluated
  std::vector<int64_t> widths_;
  Activation act_;
  std::vector<double> mean_, inv_std_;
  double clip_;
  bool squash_;
  std::vector<float> a_, z_;  // the layer activations (scratch)
};

}  // namespace vdsim
