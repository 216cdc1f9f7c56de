// fmax and fmin inline, with one rule on every C library: the C library's are calls that
// GCC does not inline (it would need -ffinite-math-only and -fno-signed-zeros), and the
// physics calls them several times per wheel and derivative.
//
// The rule is x86-64 glibc's (maxsd / minsd, NaN ignored), under which every published
// figure was computed:
// - fmax(x, y) = x > y ? x : y, fmin(x, y) = x < y ? x : y: of two equal values (+0 and
//   -0 included) y is returned;
// - a NaN argument is ignored: fmax(NaN, y) = y, fmax(x, NaN) = x; both NaN: NaN.
// C's fmax leaves the signed-zero case open; glibc's generic C version returns x there.
#pragma once

namespace vdsim {

inline double fmax_inl(double x, double y) { return (x > y || y != y) ? x : y; }
inline double fmin_inl(double x, double y) { return (x < y || y != y) ? x : y; }

}  // namespace vdsim
