// The state archive (csrc/vdsim/archive.hpp) on its own and on the header-only parts of
// the core: every kind of member written and read back bit for bit (write -> read ->
// write gives the same bytes; shared pointees stay shared), the layout check that finds
// a member missing from an archive() list, the refusal of truncated, corrupted and
// foreign blobs (std::invalid_argument), and the dyno env core (drive_cycle_task.hpp, all
// header-only) with latency, a network, a sensor delay, an action history, randomization
// and the robot driver's delay line, loaded and stepped on bit for bit against the
// original through resets.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.hpp"
#include "vdsim/archive.hpp"
#include "vdsim/async_timeline.hpp"
#include "vdsim/drive_cycle_task.hpp"
#include "vdsim/latency.hpp"
#include "vdsim/schedule.hpp"
#include "vdsim/sensor.hpp"

namespace blob = vdsim::blob;
using vdsim_test::bits;

namespace {

// ---------------------------------------------------------------- synthetic types

struct Inner {
  double a = 1.5;
  int32_t b = 2;
  bool c = true;
  template <class Ar>
  void archive(Ar& ar) { ar(a, b, c); }
  bool operator==(const Inner& o) const { return bits(a) == bits(o.a) && b == o.b && c == o.c; }
};

enum class Kind : uint8_t { X = 1, Y = 7 };

struct Everything {
  int8_t i8 = 0;
  uint64_t u64 = 0;
  float f = 0.0f;
  double d = 0.0;
  Kind kind = Kind::X;
  bool flag = false;
  double grid[2][3] = {};
  Inner inners[2];
  std::array<double, 3> arr{};
  std::array<Inner, 2> arr_in{};
  std::vector<double> vd;
  std::vector<Inner> vi;
  std::vector<int64_t> empty;
  std::deque<Inner> dq;
  std::string s;
  std::vector<std::pair<std::string, int>> pairs;
  std::optional<double> some, none;
  std::atomic<int64_t> at{0};
  std::shared_ptr<const Inner> p1, p2, p3;
  std::shared_ptr<Inner> p4;
  std::shared_ptr<const std::vector<double>> pv;  // (a shared pointee of a std type)
  int* scratch = nullptr;  // skipped: a pointer rebound by its owner

  template <class Ar>
  void archive(Ar& ar) {
    ar(i8, u64, f, d, kind, flag, grid, inners, arr, arr_in, vd, vi, empty, dq, s, pairs, some,
       none, at, p1, p2, p3, p4, pv);
    ar.skip(scratch);
  }
};

void fill(Everything& e) {
  e.i8 = -3;
  e.u64 = 0xDEADBEEFCAFEF00Dull;
  e.f = -0.0f;
  uint64_t nan_bits = 0x7FF800000000BEEFull;  // a NaN with a payload
  std::memcpy(&e.d, &nan_bits, sizeof e.d);
  e.kind = Kind::Y;
  e.flag = true;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) e.grid[i][j] = i * 10 + j + 0.25;
  e.inners[1] = {-2.0, 9, false};
  e.arr = {1.0, -0.0, std::numeric_limits<double>::infinity()};
  e.arr_in[0].b = 42;
  e.vd = {0.1, 0.2, 0.3};
  e.vi = {{3.0, 4, false}, {5.0, 6, true}};
  e.dq = {{7.0, 8, true}};
  e.s = std::string("a string\0with a zero", 20);
  e.pairs = {{"one", 1}, {"two", 2}};
  e.some = 2.5;
  e.at.store(77);
  auto shared = std::make_shared<Inner>(Inner{8.0, 8, false});
  e.p1 = shared;
  e.p2 = shared;  // the same pointee
  e.p4 = shared;  // and once more, non-const
  e.pv = std::make_shared<const std::vector<double>>(std::vector<double>{1, 2, 3});
}

bool same(const Everything& a, const Everything& b) {
  bool ok = a.i8 == b.i8 && a.u64 == b.u64 && std::memcmp(&a.f, &b.f, 4) == 0 &&
            bits(a.d) == bits(b.d) && a.kind == b.kind && a.flag == b.flag &&
            std::memcmp(a.grid, b.grid, sizeof a.grid) == 0 && a.inners[0] == b.inners[0] &&
            a.inners[1] == b.inners[1] && a.arr_in == b.arr_in && a.vd == b.vd &&
            a.vi == b.vi && a.empty == b.empty && a.dq == b.dq && a.s == b.s &&
            a.pairs == b.pairs && a.some == b.some && a.none == b.none &&
            a.at.load() == b.at.load();
  for (int i = 0; i < 3; ++i) ok = ok && bits(a.arr[i]) == bits(b.arr[i]);
  ok = ok && !a.p1 == !b.p1 && (!a.p1 || *a.p1 == *b.p1) && !a.p3 && !b.p3 &&
       !a.pv == !b.pv && (!a.pv || *a.pv == *b.pv);
  return ok;
}

// Members a list forgot, listed twice, and classes reached only through containers.
struct Forgot {
  double a = 0.0, b = 0.0;
  int32_t c = 0;
  template <class Ar>
  void archive(Ar& ar) { ar(a, c); }  // b forgotten
};
struct ForgotLast {
  double a = 0.0, b = 0.0;
  template <class Ar>
  void archive(Ar& ar) { ar(a); }  // b forgotten, at the end
};
struct Twice {
  double a = 0.0, b = 0.0;
  template <class Ar>
  void archive(Ar& ar) { ar(a, a, b); }
};
struct Holder {
  std::vector<Forgot> v;  // Forgot is walked as a default element
  template <class Ar>
  void archive(Ar& ar) { ar(v); }
};
struct Complete {
  bool a = false;
  double b = 0.0;
  int16_t c = 0;
  std::vector<Inner> v;
  template <class Ar>
  void archive(Ar& ar) { ar(c, a, v, b); }  // any order: sorted by address
};
struct Poly {
  virtual ~Poly() = default;
  double a = 0.0;
  template <class Ar>
  void archive(Ar& ar) { ar(a); }
};

template <class T>
std::vector<std::string> problems() {
  T t;
  blob::Layout l;
  l.root(t);
  return l.problems();
}

bool mentions(const std::vector<std::string>& ps, const std::string& what) {
  for (const std::string& p : ps)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (...) {
    return "another exception";
  }
  return "";
}

// ---------------------------------------------------------------- a numpy-like bit generator

struct FakeBitGen {
  vdsim::SplitMix64 rng;
  vdsim::NpBitGen gen;
  explicit FakeBitGen(uint64_t seed) : rng(seed) {
    gen.state = this;
    gen.next_uint64 = [](void* st) { return static_cast<FakeBitGen*>(st)->rng.next(); };
    gen.next_uint32 = [](void* st) {
      return static_cast<uint32_t>(static_cast<FakeBitGen*>(st)->rng.next() >> 32);
    };
    gen.next_double = [](void* st) { return static_cast<FakeBitGen*>(st)->rng.uniform(); };
    gen.next_raw = [](void* st) { return static_cast<FakeBitGen*>(st)->rng.next(); };
  }
};

// The checksum of a blob made consistent with its (edited) header again: what a blob that
// another build wrote looks like (save()'s layout: magic, format, fingerprint, type,
// build, payload size, checksum, payload).
void reseal(std::string& b) {
  size_t pos = sizeof blob::kMagic + 4 + 8;
  for (int s = 0; s < 2; ++s) {  // the type's and the build's names
    uint32_t n;
    std::memcpy(&n, b.data() + pos, 4);
    pos += 4 + n;
  }
  uint64_t size;
  std::memcpy(&size, b.data() + pos, 8);
  const size_t summed = pos + 8;
  const size_t start = summed + 8;
  const uint64_t sum = blob::mix(blob::checksum(b.data(), summed),
                                 blob::checksum(b.data() + start, static_cast<size_t>(size)));
  std::memcpy(&b[summed], &sum, 8);
}

// ---------------------------------------------------------------- tests

void test_round_trip() {
  Everything e;
  fill(e);
  const std::string b1 = blob::save(e, "test");
  Everything r;
  blob::load(r, b1, "test");
  CHECK(same(e, r));
  CHECK(r.p1.get() == r.p2.get());  // shared within the blob: one object again
  CHECK(static_cast<const void*>(r.p1.get()) == static_cast<const void*>(r.p4.get()));
  CHECK(r.p1.get() != e.p1.get());
  CHECK(r.p3 == nullptr);
  CHECK(r.scratch == nullptr);
  const std::string b2 = blob::save(r, "test");
  CHECK(b1 == b2);  // write -> read -> write: the same bytes
  // The same pointee is written once: a blob with p2 = null is not shorter by a whole
  // Inner's bytes plus its tag, only by nothing (the number is 8 bytes either way).
  Everything e2;
  fill(e2);
  e2.p2.reset();
  CHECK_EQ(blob::save(e2, "test").size(), b1.size());
  // default values too
  Everything d, rd;
  const std::string b3 = blob::save(d, "x");
  blob::load(rd, b3, "x");
  CHECK(same(d, rd));
  CHECK(blob::save(rd, "x") == b3);
}

void test_layout_check() {
  CHECK(problems<Everything>().empty());
  CHECK(problems<Complete>().empty());
  CHECK(problems<Poly>().empty());  // its vtable pointer is not a member
  const auto forgot = problems<Forgot>();
  CHECK_EQ(forgot.size(), size_t{1});
  CHECK(mentions(forgot, "Forgot::archive does not list bytes [8, 16)"));
  CHECK(mentions(problems<ForgotLast>(), "ForgotLast::archive does not list bytes [8, 16)"));
  CHECK(mentions(problems<Twice>(), "twice"));
  CHECK(mentions(problems<Holder>(), "Forgot::archive does not list"));
  // save and load refuse a type whose lists do not cover it
  bool refused = false;
  try {
    Holder h;
    blob::save(h, "x");
  } catch (const std::logic_error& e) {
    refused = std::string(e.what()).find("Forgot") != std::string::npos;
  }
  CHECK(refused);
  // the fingerprint depends on the type, not on the values
  Everything a, b;
  fill(b);
  blob::Layout la, lb;
  la.root(a);
  lb.root(b);
  CHECK_EQ(la.fingerprint(), lb.fingerprint());
  blob::Layout lc;
  Complete c;
  lc.root(c);
  CHECK(lc.fingerprint() != la.fingerprint());
}

void test_refusals() {
  Everything e;
  fill(e);
  const std::string good = blob::save(e, "build-a");
  // every truncation
  int refused = 0;
  for (size_t n = 0; n < good.size(); ++n) {
    Everything r;
    const std::string msg =
        invalid_argument_of([&] { blob::load(r, std::string_view(good).substr(0, n), "b"); });
    refused += !msg.empty() && msg != "another exception";
  }
  CHECK_EQ(static_cast<size_t>(refused), good.size());
  {
    Everything r;
    CHECK(invalid_argument_of([&] { blob::load(r, good.substr(0, good.size() - 1), "b"); })
              .find("truncated") != std::string::npos);
  }
  // every single flipped byte
  refused = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    Everything r;
    const std::string msg = invalid_argument_of([&] { blob::load(r, bad, "b"); });
    refused += !msg.empty() && msg != "another exception";
  }
  CHECK_EQ(static_cast<size_t>(refused), good.size());
  {
    std::string bad = good;
    bad.back() = static_cast<char>(bad.back() ^ 1);
    Everything r;
    CHECK(invalid_argument_of([&] { blob::load(r, bad, "b"); }).find("corrupted") !=
          std::string::npos);
  }
  {
    std::string bad = good;
    bad[0] = 'X';
    Everything r;
    CHECK(invalid_argument_of([&] { blob::load(r, bad, "b"); }).find("not a vdsim") !=
          std::string::npos);
  }
  {
    Everything r;
    CHECK(invalid_argument_of([&] { blob::load(r, good + "x", "b"); }).find("after the end") !=
          std::string::npos);
  }
  {  // another type
    Complete c;
    const std::string other = blob::save(c, "b");
    Everything r;
    const std::string msg = invalid_argument_of([&] { blob::load(r, other, "b"); });
    CHECK_MSG(msg.find("holds a") != std::string::npos && msg.find("Complete") != std::string::npos,
              msg);
  }
  // Inside the payload (a valid header around a payload of another type, as a reader
  // sees it): the tag of the first class refuses it.
  {
    blob::Writer w;
    Inner in;
    w.value(in);
    blob::Reader r(w.bytes().data(), w.bytes().size());
    Forgot f;
    const std::string msg = invalid_argument_of([&] { r.value(f); });
    CHECK_MSG(msg.find("Forgot here") != std::string::npos, msg);
  }
  {  // a vector length beyond the bytes left is refused before allocating
    blob::Writer w;
    const std::vector<double> v{1.0, 2.0};
    w.value(v);
    std::string bytes = w.bytes();
    const uint64_t huge = uint64_t{1} << 60;
    std::memcpy(&bytes[0], &huge, sizeof huge);
    blob::Reader r(bytes.data(), bytes.size());
    std::vector<double> out;
    CHECK(invalid_argument_of([&] { r.value(out); }).find("does not fit") != std::string::npos);
  }
  {  // a bool that is neither 0 nor 1
    const char byte = 5;
    blob::Reader r(&byte, 1);
    bool out;
    CHECK(invalid_argument_of([&] { r.value(out); }).find("bool") != std::string::npos);
  }
}

void test_schedules_and_generators() {
  // A command schedule with pending commands, a delay line whose ring has wrapped, a
  // sensor schedule mid-episode, the latency generators mid-stream: after a round trip
  // each continues exactly as the original.
  vdsim::CommandSchedule cs;
  cs.set_in_force(3, {0.1, 0.2}, 1);
  cs.push(10, {0.3, 0.4}, 5);
  cs.push(8, {0.5, 0.6}, 6);
  vdsim::DelayLine<double> line(3, -1.0);
  for (int i = 0; i < 11; ++i) line.push(i * 0.5);
  vdsim::LatencySpec ls;
  ls.kind = vdsim::LatencyKind::Normal;
  ls.mu = 0.02;
  ls.sd = 0.01;
  ls.seed = 9;
  vdsim::LatencySampler sampler(ls);
  for (int i = 0; i < 5; ++i) sampler.draw();
  vdsim::NetworkSpec ns;
  ns.drop = 0.2;
  ns.burst = true;
  ns.p_gb = 0.3;
  ns.p_bg = 0.4;
  ns.jitter.kind = vdsim::LatencyKind::Empirical;
  ns.jitter.samples = {0.001, 0.002, 0.005};
  vdsim::NetworkChannel net(ns);
  net.reseed(77);
  for (int i = 0; i < 7; ++i) net.lost(), net.delay();
  vdsim::BasicSensorSchedule<float> sensor(ls, 5e-4, 40, 3);
  sensor.reset(5);
  sensor.plan(2000);
  for (size_t i = 0; i < sensor.size(); ++i) {
    sensor.row(i)[0] = static_cast<float>(i);
    if (i % 2) sensor.mark_done(i);
  }
  sensor.release_before(20);
  vdsim::AsyncTimeline tl(5e-4, 40, vdsim::OverrunPolicy::Skip);
  tl.reset();
  for (int k = 0; k < 9; ++k) tl.commit(tl.next_k(), 0.013 * (k % 4));

  auto copy_of = [](auto& x) {
    std::remove_reference_t<decltype(x)> y;
    blob::Writer w;
    w.value(x);
    blob::Reader r(w.bytes().data(), w.bytes().size());
    r.value(y);
    r.finish();
    blob::Writer w2;
    w2.value(y);
    CHECK(w.bytes() == w2.bytes());
    return y;
  };
  auto cs2 = copy_of(cs);
  auto line2 = copy_of(line);
  auto sampler2 = copy_of(sampler);
  auto net2 = copy_of(net);
  auto sensor2 = copy_of(sensor);
  auto tl2 = copy_of(tl);

  CHECK_EQ(cs2.pending(), cs.pending());
  CHECK_EQ(cs2.in_force().sample_tick, cs.in_force().sample_tick);
  vdsim::Command c1, c2;
  CHECK_EQ(cs.apply_due(9, c1), cs2.apply_due(9, c2));
  CHECK_EQ(bits(c1.steer), bits(c2.steer));
  for (int i = 0; i < 20; ++i) CHECK_EQ(bits(line.push(i + 0.125)), bits(line2.push(i + 0.125)));
  for (int i = 0; i < 20; ++i) CHECK_EQ(bits(sampler.draw()), bits(sampler2.draw()));
  for (int i = 0; i < 20; ++i) {
    CHECK_EQ(net.lost(), net2.lost());
    CHECK_EQ(bits(net.delay()), bits(net2.delay()));
  }
  sensor.plan(6000);
  sensor2.plan(6000);
  CHECK_EQ(sensor.size(), sensor2.size());
  for (size_t i = 0; i < sensor.size(); ++i) {
    CHECK_EQ(sensor.tick(i), sensor2.tick(i));
    CHECK_EQ(sensor.done(i), sensor2.done(i));
    CHECK_EQ(sensor.row(i)[0], sensor2.row(i)[0]);
  }
  for (int k = 0; k < 5; ++k) {
    const auto a = tl.commit(tl.next_k(), 0.031), b = tl2.commit(tl2.next_k(), 0.031);
    CHECK_EQ(a.apply_tick, b.apply_tick);
  }
  CHECK_EQ(tl.n_skipped(), tl2.n_skipped());
}

// The dyno env core, every part of it in use, against its loaded copy.
std::unique_ptr<vdsim::DynoEnvCore> rich_dyno_core() {
  vdsim::DriveCycleParams p;
  p.observe_driver_delay = true;
  vdsim::DynoSimConfig cfg;
  cfg.delay_steps = 3;
  cfg.actuator.enabled = true;
  cfg.actuator.time_constant = 0.1;
  cfg.actuator.rate_limit = 2.0;
  auto core = std::make_unique<vdsim::DynoEnvCore>(p, vdsim::DynoParams{}, cfg);
  std::vector<vdsim::DriveCycleTask::Cycle> cycles;
  for (int c = 0; c < 2; ++c) {
    auto d = std::make_shared<vdsim::DriveCycleTask::CycleData>();
    for (int k = 0; k < 300; ++k) {
      const double v = 8.0 + 4.0 * std::sin(k / (15.0 + 5 * c));
      d->speed.push_back(v);
      d->lower.push_back(v - 0.5);
      d->upper.push_back(v + 0.5);
      d->phase.push_back(static_cast<int8_t>(k / 100));
    }
    cycles.push_back({d, c == 0 ? -1 : 400});
  }
  core->task().set_cycles(cycles);
  vdsim::LatencySpec lat;
  lat.kind = vdsim::LatencyKind::Uniform;
  lat.lo = 0.0;
  lat.hi = 0.15;
  lat.seed = 3;
  core->set_latency(lat, vdsim::OverrunPolicy::Skip);
  vdsim::NetworkSpec net;
  net.drop = 0.1;
  net.burst = true;
  net.p_gb = 0.1;
  net.p_bg = 0.5;
  net.jitter.kind = vdsim::LatencyKind::Uniform;
  net.jitter.hi = 0.05;
  core->set_network(net, vdsim::OverrunPolicy::Skip);
  vdsim::LatencySpec age;
  age.kind = vdsim::LatencyKind::Normal;
  age.mu = 0.08;
  age.sd = 0.05;
  core->set_obs_delay(age);
  core->set_action_history(3);
  core->set_time_limit_ticks(700);
  vdsim::RandomizationSpec rs;
  rs.keys = {vdsim::kRandDriverDelay, vdsim::kRandLatencyMean, vdsim::kRandLatencyJitter};
  rs.lo = {0.1, 0.01, 0.0};
  rs.hi = {0.4, 0.08, 0.5};
  core->set_randomization(rs);
  return core;
}

// One episode's reset of `core` from `gen` (what reset_episode does).
void reset(vdsim::DynoEnvCore& core, FakeBitGen& gen, float* obs, double* info) {
  vdsim::EpisodeRng rng;
  rng.task = &gen.gen;
  rng.latency = &gen.gen;
  rng.model_seed = 5;
  core.reset_episode(rng, obs, info);
}

void test_dyno_core() {
  auto core = rich_dyno_core();
  const vdsim::EnvSpec& spec = core->spec();
  const size_t no = spec.obs_names.size(), nt = spec.term_names.size(),
               ni = spec.info_names.size();
  std::vector<float> obs(no), obs2(no);
  std::vector<double> terms(nt), terms2(nt), info(ni), info2(ni);
  FakeBitGen gen(11);
  reset(*core, gen, obs.data(), info.data());
  vdsim::SplitMix64 actions(4);
  for (int i = 0; i < 150; ++i) {
    const double a = 2.0 * actions.uniform() - 1.0;
    if (core->step(&a, obs.data(), terms.data(), info.data()) & (vdsim::kFlagTerminated |
                                                                 vdsim::kFlagTruncated))
      reset(*core, gen, obs.data(), info.data());
  }
  const std::string b1 = blob::save(*core, "test");
  auto twin = vdsim::DynoEnvCore::blank();
  blob::load(*twin, b1, "test");
  CHECK(blob::save(*twin, "test") == b1);  // write -> read -> write
  FakeBitGen gen2 = gen;  // the same stream from here on
  gen2.gen.state = &gen2;
  int resets = 0, mismatched = 0;
  for (int i = 0; i < 600; ++i) {
    const double a = 2.0 * actions.uniform() - 1.0;
    const int f1 = core->step(&a, obs.data(), terms.data(), info.data());
    const int f2 = twin->step(&a, obs2.data(), terms2.data(), info2.data());
    const bool same_step =
        f1 == f2 && std::memcmp(obs.data(), obs2.data(), no * sizeof(float)) == 0 &&
        std::memcmp(terms.data(), terms2.data(), nt * sizeof(double)) == 0 &&
        std::memcmp(info.data(), info2.data(), ni * sizeof(double)) == 0;
    mismatched += !same_step;
    if (f1 & (vdsim::kFlagTerminated | vdsim::kFlagTruncated)) {
      reset(*core, gen, obs.data(), info.data());
      reset(*twin, gen2, obs2.data(), info2.data());
      mismatched += std::memcmp(obs.data(), obs2.data(), no * sizeof(float)) != 0;
      ++resets;
    }
  }
  CHECK_EQ(mismatched, 0);
  CHECK(resets >= 1);
  CHECK(blob::save(*core, "test") == blob::save(*twin, "test"));  // every member equal
  double s1[64], s2[64];
  core->summary(s1);
  twin->summary(s2);
  CHECK(std::memcmp(s1, s2, spec.summary_names.size() * sizeof(double)) == 0);
  // the loaded core reads its cycles and randomization as shared objects of its own
  CHECK(twin->randomizes());
  CHECK_EQ(twin->task().cycle_index(), core->task().cycle_index());
  // A blob of another build's layout (its fingerprint changed, its checksum made
  // consistent again): refused, naming both builds.
  std::string bad = b1;
  bad[sizeof blob::kMagic + 4] = static_cast<char>(bad[sizeof blob::kMagic + 4] ^ 1);
  auto other = vdsim::DynoEnvCore::blank();
  CHECK(invalid_argument_of([&] { blob::load(*other, bad, "test"); }).find("corrupted") !=
        std::string::npos);
  reseal(bad);
  const std::string msg = invalid_argument_of([&] { blob::load(*other, bad, "this-build"); });
  CHECK_MSG(msg.find("another layout") != std::string::npos &&
                msg.find("test") != std::string::npos &&
                msg.find("this-build") != std::string::npos, msg);
  reseal(bad);  // (idempotent)
  std::string fmt = b1;  // another archive format
  fmt[sizeof blob::kMagic] = static_cast<char>(fmt[sizeof blob::kMagic] + 1);
  CHECK(invalid_argument_of([&] { blob::load(*other, fmt, "b"); }).find("format") !=
        std::string::npos);
}

}  // namespace

int main() {
  test_round_trip();
  test_layout_check();
  test_refusals();
  test_schedules_and_generators();
  test_dyno_core();
  return vdsim_test::check_summary("test_archive");
}
