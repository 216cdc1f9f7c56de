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

void check_draws(const DIn& d) {
  if (d.ndim() != 1 || d.shape(0) != kRandomCourseDraws)
    throw std::invalid_argument("a random course takes " + std::to_string(kRandomCourseDraws) +
                                " draws in [0, 1)");
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

  // The exact-arithmetic stages of courses.random_course (vdsim/random_course.hpp);
  // numpy's sin, cos and pow run between them.
  m.def(
      "random_course_arguments",
      [](DIn d, int64_t n, double length, double ramp) {
        check_draws(d);
        if (n < 2) throw std::invalid_argument("random_course_arguments: need n >= 2 points");
        py::array_t<double> work({static_cast<py::ssize_t>(kRandomCourseRows + 1),
                                  static_cast<py::ssize_t>(n)});
        const double ds = random_course_arguments(d.data(), n, length, ramp,
                                                  work.mutable_data());
        return py::make_tuple(std::move(work), ds);
      },
      py::arg("draws"), py::arg("n"), py::arg("length"), py::arg("ramp"),
      "Stage 1 of a random course: (work, ds), work's rows 0-6 the sinusoids' arguments, "
      "row 7 the ramp's t");
  m.def(
      "random_course_profile",
      [](DIn work, DIn t3, DIn d, double ds, double k_bound, double v_lo, double v_hi,
         double max_lat_accel, double long_accel) {
        check_draws(d);
        if (work.ndim() != 2 || work.shape(0) != kRandomCourseRows + 1 || work.shape(1) < 2)
          throw std::invalid_argument("random_course_profile: work must have shape (8, n >= 2)");
        const int64_t n = work.shape(1);
        if (t3.ndim() != 1 || t3.shape(0) != n)
          throw std::invalid_argument("random_course_profile: t3 must have shape (n,)");
        py::array_t<double> v(n), mid(n - 1);
        bool finite = false;
        const double peak = random_course_profile(
            work.data(), t3.data(), d.data(), n, ds, k_bound, v_lo, v_hi, max_lat_accel,
            long_accel, v.mutable_data(), mid.mutable_data(), &finite);
        return py::make_tuple(peak, std::move(v), std::move(mid), finite);
      },
      py::arg("work"), py::arg("t3"), py::arg("draws"), py::arg("ds"), py::arg("k_bound"),
      py::arg("v_lo"), py::arg("v_hi"), py::arg("max_lat_accel"), py::arg("long_accel"),
      "Stage 2 of a random course, after sin of work's rows 0-6 and t3 = t ** 3: "
      "(peak, v, mid, finite)");
  m.def(
      "random_course_path",
      [](DIn cos_mid, DIn sin_mid, double ds) {
        if (cos_mid.ndim() != 1 || sin_mid.ndim() != 1 || cos_mid.shape(0) != sin_mid.shape(0))
          throw std::invalid_argument("random_course_path: cos_mid and sin_mid must be 1-d, "
                                      "of one length");
        const int64_t n = cos_mid.shape(0) + 1;
        py::array_t<double> path({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(2)});
        random_course_path(cos_mid.data(), sin_mid.data(), n, ds, path.mutable_data());
        return path;
      },
      py::arg("cos_mid"), py::arg("sin_mid"), py::arg("ds"),
      "Stage 3 of a random course: the path (n, 2) from (0, 0) by steps of ds");

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
