// Numerics for building courses (the smooth DLC reference line): a box-constrained QP by
// ADMM and a banded SPD solve, in plain loops so the courses are bit-identical on any
// BLAS thread count and in any process. Long loops release the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "np_bitgen.hpp"
#include "vdsim/box_qp.hpp"
#include "vdsim/random_course.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

using DIn = py::array_t<double, py::array::c_style | py::array::forcecast>;
using IIn = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

void check_square(const DIn& a, const char* what) {
  if (a.ndim() != 2 || a.shape(0) != a.shape(1))
    throw std::invalid_argument(std::string(what) + " must be a square 2-D array");
}

}  // namespace

void bind_courses(py::module_& m) {
  m.def(
      "limit_long_accel",
      [](DIn v_in, double ds, double accel) {
        if (v_in.ndim() != 1) throw std::invalid_argument("limit_long_accel: v must be 1-d");
        const py::ssize_t n = v_in.shape(0);
        py::array_t<double> out(n);
        std::copy(v_in.data(), v_in.data() + n, out.mutable_data());
        limit_long_accel(out.mutable_data(), n, ds, accel);
        return out;
      },
      py::arg("v"), py::arg("ds"), py::arg("accel"),
      "A speed profile lowered so that |v dv/ds| <= accel: a backward (braking) and a "
      "forward (accelerating) pass, bit for bit the plain Python loops of the tests");

  m.def(
      "random_course",
      [](py::handle bit_generator, int64_t n, double length, double k_bound, double v_lo,
         double v_hi, double max_lat_accel) {
        if (n < 2) throw std::invalid_argument("random_course: need n >= 2 points");
        RandomCourseSpec spec{n, length, k_bound, v_lo, v_hi, max_lat_accel};
        NumpyDraws rng(vdsim_py::np_bitgen(bit_generator));
        std::vector<double> x, y, speed, kappa;
        const bool finite = draw_random_course(spec, rng, x, y, speed, kappa);
        py::array_t<double> p({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(2)});
        py::array_t<double> v(static_cast<py::ssize_t>(n));
        double* out = p.mutable_data();
        for (int64_t i = 0; i < n; ++i) out[2 * i] = x[i], out[2 * i + 1] = y[i];
        std::copy(speed.begin(), speed.end(), v.mutable_data());
        return py::make_tuple(std::move(p), std::move(v), finite);
      },
      py::arg("bit_generator"), py::arg("n"), py::arg("length"), py::arg("k_bound"),
      py::arg("v_lo"), py::arg("v_hi"), py::arg("max_lat_accel"),
      "A random course drawn from a numpy BitGenerator (vdsim/random_course.hpp): "
      "(path (n, 2), speed (n,), whether every value is finite)");

  m.def("solve_box_qp",
        [](DIn hess, DIn a, DIn lo, DIn hi, IIn fixed_idx, DIn fixed_val, double rho,
           double sigma, double alpha, int64_t max_iter, double tol) {
          check_square(hess, "hess");
          const int64_t n = hess.shape(0);
          if (a.ndim() != 2 || a.shape(1) != n)
            throw std::invalid_argument("a must have shape (m, n) with n = hess.shape[0]");
          const int64_t rows = a.shape(0);
          if (lo.size() != rows || hi.size() != rows)
            throw std::invalid_argument("lo and hi need one bound per row of a");
          if (fixed_idx.size() != fixed_val.size())
            throw std::invalid_argument("fixed_idx and fixed_val differ in length");
          BoxQpOptions opt;
          opt.rho = rho;
          opt.sigma = sigma;
          opt.alpha = alpha;
          opt.max_iter = max_iter;
          opt.tol = tol;
          BoxQpResult r;
          {
            py::gil_scoped_release release;
            r = solve_box_qp(hess.data(), a.data(), lo.data(), hi.data(), n, rows,
                             fixed_idx.data(), fixed_val.data(), fixed_idx.size(), opt);
          }
          py::array_t<double> y(n);
          std::copy(r.y.begin(), r.y.end(), y.mutable_data());
          return py::make_tuple(y, r.iterations, r.primal_residual, r.dual_residual);
        },
        py::arg("hess"), py::arg("a"), py::arg("lo"), py::arg("hi"), py::arg("fixed_idx"),
        py::arg("fixed_val"), py::arg("rho"), py::arg("sigma") = 1e-6, py::arg("alpha") = 1.6,
        py::arg("max_iter") = 5000, py::arg("tol") = 1e-6,
        "min 1/2 y'Hy s.t. lo <= A y <= hi, y[fixed_idx] = fixed_val (ADMM, deterministic): "
        "(y, iterations, primal_residual, dual_residual)");
  m.def("solve_spd_banded",
        [](DIn mat, DIn rhs) {
          check_square(mat, "mat");
          if (rhs.ndim() != 1 || rhs.shape(0) != mat.shape(0))
            throw std::invalid_argument("rhs must be 1-D with one entry per row of mat");
          const BandedCholesky chol(mat.data(), mat.shape(0));
          std::vector<double> b(rhs.data(), rhs.data() + rhs.size());
          chol.solve(b);
          py::array_t<double> out(static_cast<py::ssize_t>(b.size()));
          std::copy(b.begin(), b.end(), out.mutable_data());
          return out;
        },
        py::arg("mat"), py::arg("rhs"),
        "x with mat x = rhs for a symmetric positive definite banded mat (Cholesky in band "
        "storage, plain loops: deterministic)");
}
