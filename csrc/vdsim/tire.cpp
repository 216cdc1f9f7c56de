// The four-lane tire evaluations, built for the baseline target and for AVX2 (tire.hpp).
#include "tire.hpp"

namespace vdsim {

namespace {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VDSIM_TIRE4_AVX2 1
// flatten: the lanes' helpers inlined into this body, so they are compiled for AVX2 too.
__attribute__((target("avx2"), flatten)) void forces_avx2(
    const TireLanes& t, const TireShape& s, const double fz[4], const double kappa[4],
    const double tan_alpha[4], TireForces out[4], TireAtLoad rec[4]) {
  tire_forces4_lanes(t, s, fz, kappa, tan_alpha, out, rec);
}
__attribute__((target("avx2"), flatten)) void fx_at_avx2(
    const TireLanes& t, const TireShape& s, const TireAtLoad* const rec[4],
    const double kappa[4], double out[4]) {
  tire_fx_at4_lanes(t, s, rec, kappa, out);
}
bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
const bool kAvx2 = cpu_has_avx2();
#else
const bool kAvx2 = false;
#endif

}  // namespace

void tire_forces4(const TireLanes& t, const TireShape& s, const double fz[4],
                  const double kappa[4], const double tan_alpha[4], TireForces out[4],
                  TireAtLoad rec[4]) {
#ifdef VDSIM_TIRE4_AVX2
  if (kAvx2) return forces_avx2(t, s, fz, kappa, tan_alpha, out, rec);
#endif
  tire_forces4_lanes(t, s, fz, kappa, tan_alpha, out, rec);
}

void tire_fx_at4(const TireLanes& t, const TireShape& s, const TireAtLoad* const rec[4],
                 const double kappa[4], double out[4]) {
#ifdef VDSIM_TIRE4_AVX2
  if (kAvx2) return fx_at_avx2(t, s, rec, kappa, out);
#endif
  tire_fx_at4_lanes(t, s, rec, kappa, out);
}

bool tire_forces4_with(Tire4Build b, const TireLanes& t, const TireShape& s,
                       const double fz[4], const double kappa[4], const double tan_alpha[4],
                       TireForces out[4], TireAtLoad rec[4]) {
  if (b == Tire4Build::Baseline) {
    tire_forces4_lanes(t, s, fz, kappa, tan_alpha, out, rec);
    return true;
  }
#ifdef VDSIM_TIRE4_AVX2
  if (kAvx2) {
    forces_avx2(t, s, fz, kappa, tan_alpha, out, rec);
    return true;
  }
#endif
  return false;
}

bool tire_fx_at4_with(Tire4Build b, const TireLanes& t, const TireShape& s,
                      const TireAtLoad* const rec[4], const double kappa[4], double out[4]) {
  if (b == Tire4Build::Baseline) {
    tire_fx_at4_lanes(t, s, rec, kappa, out);
    return true;
  }
#ifdef VDSIM_TIRE4_AVX2
  if (kAvx2) {
    fx_at_avx2(t, s, rec, kappa, out);
    return true;
  }
#endif
  return false;
}

Tire4Build tire4_build() { return kAvx2 ? Tire4Build::Avx2 : Tire4Build::Baseline; }

}  // namespace vdsim
