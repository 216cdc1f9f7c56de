#include "box_qp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vdsim {

BandedCholesky::BandedCholesky(const double* dense, int64_t n) : n_(n) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j)
      if (dense[i * n + j] != 0.0) bw_ = std::max(bw_, i - j);
  band_.assign(static_cast<size_t>(n * (bw_ + 1)), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d <= std::min(i, bw_); ++d) l(i, d) = dense[i * n + (i - d)];
  // In place: L(i, j) for j in [i - bw, i]; the diagonal ends up holding L(i, i).
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = std::min(i, bw_); d >= 0; --d) {
      const int64_t j = i - d;
      double s = l(i, d);
      for (int64_t k = std::max<int64_t>(0, i - bw_); k < j; ++k)
        s -= l(i, i - k) * l(j, j - k);
      if (d == 0) {
        if (!(s > 0.0)) throw std::invalid_argument("box QP: matrix is not positive definite");
        l(i, 0) = std::sqrt(s);
      } else {
        l(i, d) = s / l(j, 0);
      }
    }
  }
}

void BandedCholesky::solve(std::vector<double>& b) const {
  for (int64_t i = 0; i < n_; ++i) {  // L z = b
    double s = b[i];
    for (int64_t k = std::max<int64_t>(0, i - bw_); k < i; ++k) s -= l(i, i - k) * b[k];
    b[i] = s / l(i, 0);
  }
  for (int64_t i = n_ - 1; i >= 0; --i) {  // L' y = z
    double s = b[i];
    for (int64_t k = i + 1; k <= std::min(n_ - 1, i + bw_); ++k) s -= l(k, k - i) * b[k];
    b[i] = s / l(i, 0);
  }
}

namespace {

// A sparse row-major copy of the free columns of A.
struct SparseRows {
  std::vector<int64_t> start, col;
  std::vector<double> val;
  void mul(const std::vector<double>& x, std::vector<double>& out) const {  // out = A x
    for (size_t r = 0; r + 1 < start.size(); ++r) {
      double s = 0.0;
      for (int64_t k = start[r]; k < start[r + 1]; ++k) s += val[k] * x[col[k]];
      out[r] = s;
    }
  }
  void mul_t(const std::vector<double>& v, std::vector<double>& out) const {  // out = A' v
    std::fill(out.begin(), out.end(), 0.0);
    for (size_t r = 0; r + 1 < start.size(); ++r)
      for (int64_t k = start[r]; k < start[r + 1]; ++k) out[col[k]] += val[k] * v[r];
  }
};

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace

BoxQpResult solve_box_qp(const double* H, const double* A, const double* lo, const double* hi,
                         int64_t n, int64_t m, const int64_t* fixed_idx,
                         const double* fixed_val, int64_t n_fixed, const BoxQpOptions& opt) {
  std::vector<double> y(static_cast<size_t>(n), 0.0);
  std::vector<char> is_fixed(static_cast<size_t>(n), 0);
  for (int64_t k = 0; k < n_fixed; ++k) {
    if (fixed_idx[k] < 0 || fixed_idx[k] >= n)
      throw std::invalid_argument("box QP: fixed index out of range");
    is_fixed[fixed_idx[k]] = 1;
    y[fixed_idx[k]] = fixed_val[k];
  }
  std::vector<int64_t> free;
  for (int64_t i = 0; i < n; ++i)
    if (!is_fixed[i]) free.push_back(i);
  const int64_t nf = static_cast<int64_t>(free.size());

  // Eliminate the fixed entries: q = H[free, fixed] y_fixed, bounds shifted by A[:, fixed].
  std::vector<double> q(nf, 0.0), lo_f(m), hi_f(m);
  for (int64_t a = 0; a < nf; ++a)
    for (int64_t j = 0; j < n; ++j)
      if (is_fixed[j]) q[a] += H[free[a] * n + j] * y[j];
  SparseRows af;
  af.start.push_back(0);
  for (int64_t r = 0; r < m; ++r) {
    double shift = 0.0;
    for (int64_t j = 0; j < n; ++j)
      if (is_fixed[j]) shift += A[r * n + j] * y[j];
    lo_f[r] = lo[r] - shift;
    hi_f[r] = hi[r] - shift;
    for (int64_t a = 0; a < nf; ++a) {
      const double v = A[r * n + free[a]];
      if (v != 0.0) {
        af.col.push_back(a);
        af.val.push_back(v);
      }
    }
    af.start.push_back(static_cast<int64_t>(af.col.size()));
  }

  // K = H_ff + sigma I + rho A_f' A_f, banded for the reference-line problems.
  std::vector<double> K(static_cast<size_t>(nf * nf), 0.0);
  for (int64_t a = 0; a < nf; ++a) {
    for (int64_t b = 0; b < nf; ++b) K[a * nf + b] = H[free[a] * n + free[b]];
    K[a * nf + a] += opt.sigma;
  }
  for (int64_t r = 0; r < m; ++r)
    for (int64_t k1 = af.start[r]; k1 < af.start[r + 1]; ++k1)
      for (int64_t k2 = af.start[r]; k2 < af.start[r + 1]; ++k2)
        K[af.col[k1] * nf + af.col[k2]] += opt.rho * af.val[k1] * af.val[k2];
  const BandedCholesky chol(K.data(), nf);

  std::vector<double> x(nf, 0.0), x_new(nf), rhs(nf), z(m), z_t(m), z_new(m), lam(m, 0.0),
      w(m), dual_vec(nf);
  af.mul(x, z);
  for (int64_t r = 0; r < m; ++r) z[r] = std::clamp(z[r], lo_f[r], hi_f[r]);
  BoxQpResult res;
  for (res.iterations = 0; res.iterations < opt.max_iter;) {
    ++res.iterations;
    for (int64_t r = 0; r < m; ++r) w[r] = opt.rho * z[r] - lam[r];
    af.mul_t(w, rhs);
    for (int64_t a = 0; a < nf; ++a) rhs[a] += opt.sigma * x[a] - q[a];
    chol.solve(rhs);
    x_new = rhs;
    af.mul(x_new, z_t);
    for (int64_t a = 0; a < nf; ++a) x[a] = opt.alpha * x_new[a] + (1.0 - opt.alpha) * x[a];
    for (int64_t r = 0; r < m; ++r) {
      const double z_rel = opt.alpha * z_t[r] + (1.0 - opt.alpha) * z[r];
      z_new[r] = std::clamp(z_rel + lam[r] / opt.rho, lo_f[r], hi_f[r]);
      lam[r] += opt.rho * (z_rel - z_new[r]);
      w[r] = z_new[r] - z[r];
    }
    af.mul_t(w, dual_vec);
    res.dual_residual = opt.rho * max_abs(dual_vec);
    z.swap(z_new);
    af.mul(x, z_t);
    for (int64_t r = 0; r < m; ++r) z_t[r] -= z[r];
    res.primal_residual = max_abs(z_t);
    if (res.primal_residual < opt.tol && res.dual_residual < opt.tol) break;
  }
  for (int64_t a = 0; a < nf; ++a) y[free[a]] = x[a];
  res.y = std::move(y);
  return res;
}

}  // namespace vdsim
