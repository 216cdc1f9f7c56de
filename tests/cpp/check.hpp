// A tiny check harness for the C++ unit tests (no test framework, no dependencies).
//
//   CHECK(cond)          counts a pass, or prints file:line and the expression and counts
//                        a failure; the test goes on either way.
//   CHECK_EQ(a, b)       the same for a == b, printing both values on failure.
//   CHECK_MSG(cond, msg) with a message (anything streamable) printed on failure.
//   return check_summary("name");  at the end of main: prints "<name>: N checks passed,
//                        M failed" and returns the exit code (0 only when M == 0).
//
// tests/test_cpp_units.py compiles each tests/cpp/*.cpp, runs it, and asserts both exit
// code 0 and at least its expected number of passed checks (so a body that silently stops
// checking fails too).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

namespace vdsim_test {

struct Counts {
  int64_t passed = 0;
  int64_t failed = 0;
};

// The bit pattern of a double, for bit-for-bit comparisons (signed zeros, NaN payloads).
inline uint64_t bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline Counts& counts() {
  static Counts c;
  return c;
}

inline void report(bool ok, const char* file, int line, const std::string& what) {
  if (ok) {
    ++counts().passed;
    return;
  }
  ++counts().failed;
  std::cout << file << ":" << line << ": CHECK failed: " << what << std::endl;
}

template <class T>
std::string show(const T& v) {
  std::ostringstream os;
  os << std::setprecision(17) << v;
  return os.str();
}

inline int check_summary(const char* name) {
  std::cout << name << ": " << counts().passed << " checks passed, " << counts().failed
            << " failed" << std::endl;
  return counts().failed == 0 ? 0 : 1;
}

}  // namespace vdsim_test

#define CHECK(cond) ::vdsim_test::report(static_cast<bool>(cond), __FILE__, __LINE__, #cond)

#define CHECK_MSG(cond, msg)                                                         \
  do {                                                                               \
    const bool check_ok_ = static_cast<bool>(cond);                                  \
    std::ostringstream check_os_;                                                    \
    if (!check_ok_) check_os_ << #cond << " (" << msg << ")";                        \
    ::vdsim_test::report(check_ok_, __FILE__, __LINE__, check_os_.str());            \
  } while (0)

#define CHECK_EQ(a, b)                                                               \
  do {                                                                               \
    const auto check_a_ = (a);                                                       \
    const auto check_b_ = (b);                                                       \
    const bool check_ok_ = check_a_ == check_b_;                                     \
    std::string check_what_;                                                         \
    if (!check_ok_)                                                                  \
      check_what_ = std::string(#a " == " #b " (") + ::vdsim_test::show(check_a_) +   \
                    " vs " + ::vdsim_test::show(check_b_) + ")";                     \
    ::vdsim_test::report(check_ok_, __FILE__, __LINE__, check_what_);                \
  } while (0)
