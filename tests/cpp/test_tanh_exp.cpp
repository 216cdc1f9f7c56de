// csrc/vdsim/mlp.hpp: tanh_exp, the compiled policy's hidden tanh, against libm's tanh.
//
// The header's claim: within 1e-8 of std::tanh in absolute terms everywhere (below the
// float32 rounding that follows it), x itself below |x| = 1e-4, +-1 above 20, odd, NaN
// through. Checked on a dense grid over
// [-25, 25], around the branch points, on 10^6 random arguments (log-uniform magnitudes),
// and the special values. A wrong Taylor coefficient or ln 2 split fails the grid.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "check.hpp"
#include "vdsim/mlp.hpp"

using vdsim::tanh_exp;

namespace {

double worst = 0.0;
double worst_at = 0.0;

void compare(double x) {
  const double err = std::fabs(tanh_exp(x) - std::tanh(x));
  if (err > worst) worst = err, worst_at = x;
}

}  // namespace

int main() {
  for (int64_t i = -2'500'000; i <= 2'500'000; ++i) compare(i * 1e-5);  // [-25, 25]
  for (double edge : {1e-4, 20.0, 0.5 * std::log(2.0), std::log(2.0)}) {
    for (int k = -50; k <= 50; ++k) {
      const double x = edge + k * 1e-12 * edge;
      compare(x);
      compare(-x);
    }
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mag(-12.0, 1.5);
  for (int i = 0; i < 1'000'000; ++i) {
    const double x = std::pow(10.0, mag(rng)) * (i % 2 ? 1.0 : -1.0);
    compare(x);
  }
  CHECK_MSG(worst <= 1e-8, "max |tanh_exp - tanh| = " << worst << " at x = " << worst_at);
  // odd, and the branches as the header says
  CHECK_EQ(tanh_exp(-0.7), -tanh_exp(0.7));
  CHECK_EQ(tanh_exp(5e-5), 5e-5);
  CHECK_EQ(tanh_exp(-5e-5), -5e-5);
  CHECK_EQ(tanh_exp(20.5), 1.0);
  CHECK_EQ(tanh_exp(-1e300), -1.0);
  CHECK_EQ(tanh_exp(std::numeric_limits<double>::infinity()), 1.0);
  CHECK(std::isnan(tanh_exp(std::numeric_limits<double>::quiet_NaN())));
  CHECK_EQ(tanh_exp(0.0), 0.0);
  return vdsim_test::check_summary("tanh_exp");
}
