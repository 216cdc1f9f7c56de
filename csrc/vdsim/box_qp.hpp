// A small box-constrained QP solved by ADMM (the OSQP iteration), for building course
// reference lines. Written out in plain loops, not BLAS: the result must be bit for bit
// the same on any thread count and in any process (threaded BLAS splits sums
// differently with its thread count, and the rounding follows).
#pragma once
#include <cstdint>
#include <vector>

namespace vdsim {

struct BoxQpOptions {
  double sigma = 1e-6;  // proximal term of the x-update
  double rho = 0.1;     // ADMM penalty
  double alpha = 1.6;   // over-relaxation
  int64_t max_iter = 5000;
  double tol = 1e-6;    // stop when primal and dual residuals (max norm) are below
};

struct BoxQpResult {
  std::vector<double> y;  // the full solution, fixed entries included
  int64_t iterations = 0;
  double primal_residual = 0.0, dual_residual = 0.0;
};

// Symmetric positive definite banded matrix in lower band storage: band(i, d) holds
// entry (i, i - d) for d = 0..bw. Cholesky factorization and solves in O(n bw^2).
class BandedCholesky {
 public:
  // `dense` is n x n row-major and symmetric; entries beyond the detected band are zero.
  BandedCholesky(const double* dense, int64_t n);
  void solve(std::vector<double>& b) const;  // in place: b <- K^-1 b
  int64_t bandwidth() const { return bw_; }

 private:
  double& l(int64_t i, int64_t d) { return band_[i * (bw_ + 1) + d]; }
  double l(int64_t i, int64_t d) const { return band_[i * (bw_ + 1) + d]; }
  int64_t n_ = 0, bw_ = 0;
  std::vector<double> band_;
};

// min 1/2 y' H y  s.t.  lo <= A y <= hi  and  y[fixed_idx[k]] = fixed_val[k].
// H is n x n (row-major, symmetric PSD, banded after eliminating the fixed entries plus
// rho A'A), A is m x n row-major (its zeros are skipped). Throws std::invalid_argument
// for a fixed index out of range or a non-positive pivot (H not PSD).
BoxQpResult solve_box_qp(const double* H, const double* A, const double* lo, const double* hi,
                         int64_t n, int64_t m, const int64_t* fixed_idx,
                         const double* fixed_val, int64_t n_fixed, const BoxQpOptions& opt);

}  // namespace vdsim
