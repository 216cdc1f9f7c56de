// VectorEnvCore: one GIL-released call steps N env cores into caller-owned batch
// buffers. Shapes and dtypes are checked once per call (noconvert: a wrong dtype is an
// error, never a temporary copy that would swallow the writes); the cores are kept alive
// by a tuple held next to the session.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <tuple>
#include <stdexcept>
#include <string>
#include <vector>

#include "interruptible.hpp"
#include "np_bitgen.hpp"
#include "vdsim/vector_env_core.hpp"

namespace py = pybind11;
using namespace vdsim;

namespace {

// An info column of the fast step: its key, "_" + key, column and batched dtype.
struct InfoCol {
  py::str key, mask_key;
  int64_t col;
  int kind;  // 0 float64, 1 int64, 2 bool
};

// A fresh C-contiguous (n0,) or (n0, n1) array (n1 < 0: 1-d) of dtype dt, by numpy's C
// API as pybind11 calls it but without pybind11's shape and stride vectors (two heap
// allocations per array): step_fast builds about fifteen arrays per call, and at small N
// (a dyno row steps in 0.5 us) they are most of its cost.
py::array fresh(const py::dtype& dt, py::ssize_t n0, py::ssize_t n1 = -1) {
  auto& api = py::detail::npy_api::get();
  Py_intptr_t dims[2] = {n0, n1};
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, dt.inc_ref().ptr(), n1 < 0 ? 1 : 2,
                                          dims, nullptr, nullptr, 0, nullptr);
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<py::array>(a);
}

struct Dtypes {
  py::dtype f64 = py::dtype::of<double>(), f32 = py::dtype::of<float>(),
            i64 = py::dtype::of<int64_t>(), b = py::dtype::of<bool>();
};

// What step_fast needs besides the session: the Python env's batch buffers (validated
// once by bind_buffers) and the info layout.
struct FastStep {
  bool ready = false;
  Dtypes dt;
  py::array obs, rewards, flags, terms, info, elapsed;
  std::vector<InfoCol> base, timing;
  std::vector<py::str> term_keys, term_mask_keys;
  py::str reward_terms_key{"reward_terms"}, reward_terms_mask_key{"_reward_terms"},
      time_limit_key{"TimeLimit.truncated"};
  // A step's output rows: the bound buffers.
  void into(VectorStepBuffers& b) {
    b.obs = static_cast<float*>(obs.mutable_data());
    b.rewards = static_cast<double*>(rewards.mutable_data());
    b.flags = static_cast<int32_t*>(flags.mutable_data());
    b.terms = static_cast<double*>(terms.mutable_data());
    b.info = static_cast<double*>(info.mutable_data());
  }
};

struct PyVectorEnvCore {
  py::tuple cores;  // keeps the Python-owned env cores alive as long as the session
  // The rows this session owns (replicate: copies of the first row's core).
  std::vector<std::unique_ptr<EnvCoreBase>> owned;
  std::unique_ptr<VectorEnvCore> impl;
  FastStep fast;
  // Each row's episode generators for resets in C++ (set_row_rng), and the numpy bit
  // generators they point into, kept alive here.
  std::vector<EpisodeRng> rngs;
  std::vector<py::object> rng_refs;  // 2 per row: np_random's, the latency stream's
  // Rows seeded in C++ (seed_rows) own their generators here until their env takes them
  // (row_rng_state, then set_row_rng with numpy objects).
  std::vector<std::unique_ptr<NpPcg64>> own_task, own_latency;
  // Rows whose rng_refs are the session's own likewise (set_row_rng(owned=True): a
  // restored row's generators), reported by row_rng_state as seed_rows's are.
  std::vector<uint8_t> owns_refs;
  void release(int64_t i) {
    rngs[i] = EpisodeRng{};
    rng_refs[2 * i] = py::none();
    rng_refs[2 * i + 1] = py::none();
    own_task[i].reset();
    own_latency[i].reset();
    owns_refs[i] = 0;
  }
  // The numpy state of row i's task (latency: false) or latency generator, wherever it is.
  py::object rng_state(int64_t i, bool latency) const {
    const auto& own = latency ? own_latency[i] : own_task[i];
    if (own) return vdsim_py::pcg64_state(*own);
    return rng_refs[2 * i + (latency ? 1 : 0)].attr("state");
  }
};

// The rows a reset mask names, checked: a (N,) bool or uint8 array whose rows have their
// generators set and whose tasks draw their start in C++.
const uint8_t* reset_rows_of(PyVectorEnvCore& v, const py::array& mask) {
  const int64_t n = v.impl->size();
  if (mask.ndim() != 1 || mask.shape(0) != n || !(mask.flags() & py::array::c_style) ||
      mask.itemsize() != 1 || (mask.dtype().kind() != 'b' && mask.dtype().kind() != 'u'))
    throw std::invalid_argument("reset_mask must be a C-contiguous (" + std::to_string(n) +
                                ",) bool or uint8 array");
  const auto* m = static_cast<const uint8_t*>(mask.data());
  for (int64_t i = 0; i < n; ++i)
    if (m[i] && (!v.rngs[i].task || !v.impl->core(i).draws_start()))
      throw std::logic_error("env " + std::to_string(i) +
                             " cannot reset in C++ (no generator set, or its task draws "
                             "in Python)");
  return m;
}

std::vector<InfoCol> info_cols(const std::vector<std::tuple<std::string, int64_t, int>>& cols,
                               int64_t info_n) {
  std::vector<InfoCol> out;
  for (const auto& [key, j, kind] : cols) {
    if (j < 0 || j >= info_n || kind < 0 || kind > 2)
      throw std::invalid_argument("bad info column " + key);
    out.push_back({py::str(key), py::str("_" + key), j, kind});
  }
  return out;
}

// One info value as the Python scalar of its kind.
py::object scalar(double v, int kind) {
  if (kind == 1) return py::int_(static_cast<long long>(v));
  if (kind == 2) return py::bool_(v != 0.0);
  return py::float_(v);
}

// A fresh (N,) array of one info column in its batched dtype.
py::array info_column(const Dtypes& dt, const double* info, int64_t n, int64_t stride,
                      int64_t col, int kind) {
  if (kind == 1) {
    py::array a = fresh(dt.i64, n);
    auto* o = static_cast<int64_t*>(a.mutable_data());
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<int64_t>(info[i * stride + col]);
    return a;
  }
  if (kind == 2) {
    py::array a = fresh(dt.b, n);
    auto* o = static_cast<bool*>(a.mutable_data());
    for (int64_t i = 0; i < n; ++i) o[i] = info[i * stride + col] != 0.0;
    return a;
  }
  py::array a = fresh(dt.f64, n);
  auto* o = static_cast<double*>(a.mutable_data());
  for (int64_t i = 0; i < n; ++i) o[i] = info[i * stride + col];
  return a;
}

// The actions as a C-contiguous (N, m) float32/float64 array within [-tol, tol] (NaN
// fails), or nullptr: the Python side converts or raises the error that names the row.
const void* checked_actions(const py::handle& actions, int64_t n, int64_t m, double tol,
                            bool& f32) {
  if (!py::isinstance<py::array>(actions)) return nullptr;
  auto a = py::reinterpret_borrow<py::array>(actions);
  if (a.ndim() != 2 || a.shape(0) != n || a.shape(1) != m || !(a.flags() & py::array::c_style))
    return nullptr;
  const py::dtype dt = a.dtype();
  if (dt.kind() != 'f' || (dt.itemsize() != 4 && dt.itemsize() != 8)) return nullptr;
  f32 = dt.itemsize() == 4;
  const int64_t k = n * m;
  if (f32) {
    const float* p = static_cast<const float*>(a.data());
    for (int64_t i = 0; i < k; ++i)
      if (!(p[i] >= -tol && p[i] <= tol)) return nullptr;
  } else {
    const double* p = static_cast<const double*>(a.data());
    for (int64_t i = 0; i < k; ++i)
      if (!(p[i] >= -tol && p[i] <= tol)) return nullptr;
  }
  return a.data();
}

std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

template <typename T>
T* buffer(py::array& a, py::ssize_t n, py::ssize_t cols, const char* what, const char* dtype) {
  const bool shape_ok = cols == 0 ? (a.ndim() == 1 && a.shape(0) == n)
                                  : (a.ndim() == 2 && a.shape(0) == n && a.shape(1) == cols);
  if (!shape_ok) {
    const std::string want = cols == 0 ? "(" + std::to_string(n) + ",)"
                                       : "(" + std::to_string(n) + ", " + std::to_string(cols) + ")";
    throw std::invalid_argument(std::string(what) + " must have shape " + want + ", got " +
                                shape_str(a));
  }
  if (!py::isinstance<py::array_t<T>>(a) || !(a.flags() & py::array::c_style))
    throw std::invalid_argument(std::string(what) + " must be a C-contiguous " + dtype +
                                " array");
  if (!a.writeable()) throw std::invalid_argument(std::string(what) + " must be writeable");
  return static_cast<T*>(a.mutable_data());
}

// The masked rows' episode resets in C++ into the bound buffers (reward 0, no flags, zero
// terms, the episode's step count 0); the other rows are left alone.
void reset_in_core(PyVectorEnvCore& v, const py::array& mask) {
  FastStep& f = v.fast;
  if (!f.ready) throw std::runtime_error("bind_buffers() first");
  VectorStepBuffers b;
  b.reset_mask = reset_rows_of(v, mask);
  b.rngs = v.rngs.data();
  b.reset_only = true;
  f.into(b);
  vdsim_py::run_interruptible([&] { v.impl->step(b); });
  auto* elapsed = static_cast<int64_t*>(f.elapsed.mutable_data());
  for (int64_t i = 0; i < v.impl->size(); ++i)
    if (b.reset_mask[i]) elapsed[i] = 0;
}

// The session over these rows: the pool, and a generator slot per row.
void open_session(PyVectorEnvCore& v, std::vector<EnvCoreBase*> ptrs, int threads) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0 (0: auto)");
  const size_t n = ptrs.size();
  v.impl = std::make_unique<VectorEnvCore>(std::move(ptrs), threads);
  v.rngs.resize(n);
  v.rng_refs.resize(2 * n);
  v.own_task.resize(n);
  v.own_latency.resize(n);
  v.owns_refs.assign(n, 0);
}

}  // namespace

void bind_vector(py::module_& m) {
  py::class_<PyVectorEnvCore>(m, "VectorEnvCore")
      .def(py::init([](py::sequence cores, int threads) {
             auto out = std::make_unique<PyVectorEnvCore>();
             out->cores = py::tuple(cores);
             std::vector<EnvCoreBase*> ptrs;
             ptrs.reserve(out->cores.size());
             for (auto c : out->cores) ptrs.push_back(c.cast<EnvCoreBase*>());
             open_session(*out, std::move(ptrs), threads);
             return out;
           }), py::arg("cores"), py::arg("threads") = 0,
           "N env cores (one spec) stepped together; threads=0: all cores from 16 envs up, else inline; 1: inline")
      .def_static("replicate", [](py::sequence firsts, const std::vector<int64_t>& group,
                                  int threads) {
             // Row i is a copy of firsts[group[i]] (EnvCoreBase::clone: its parameters,
             // configuration and state) made now and owned by the session, except the
             // first row of each group, which is that core itself (kept alive here): no
             // Python object per copied row unless row_core asks for one.
             auto out = std::make_unique<PyVectorEnvCore>();
             out->cores = py::tuple(firsts);
             const int64_t k = static_cast<int64_t>(out->cores.size());
             if (group.empty()) throw std::invalid_argument("replicate: no rows");
             std::vector<EnvCoreBase*> protos;
             for (auto c : out->cores) protos.push_back(c.cast<EnvCoreBase*>());
             std::vector<bool> seen(static_cast<size_t>(k), false);
             for (int64_t g : group)
               if (g < 0 || g >= k)
                 throw std::invalid_argument("replicate: a row's group is not one of firsts");
             std::vector<EnvCoreBase*> ptrs;
             ptrs.reserve(group.size());
             out->owned.reserve(group.size());
             {
               py::gil_scoped_release release;
               for (int64_t g : group) {
                 if (!seen[static_cast<size_t>(g)]) {
                   seen[static_cast<size_t>(g)] = true;
                   ptrs.push_back(protos[static_cast<size_t>(g)]);
                   continue;
                 }
                 out->owned.push_back(protos[static_cast<size_t>(g)]->clone());
                 ptrs.push_back(out->owned.back().get());
               }
             }
             for (size_t g = 0; g < seen.size(); ++g)
               if (!seen[g]) throw std::invalid_argument("replicate: a core of firsts has no row");
             open_session(*out, std::move(ptrs), threads);
             return out;
           }, py::arg("firsts"), py::arg("group"), py::arg("threads") = 0,
           "A session of len(group) rows: row i a copy of firsts[group[i]] (its parameters, "
           "configuration and state) owned by the session, the first row of each group that "
           "core itself; threads as the constructor's")
      .def("row_core", [](PyVectorEnvCore& v, int64_t i) -> EnvCoreBase* {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             return const_cast<EnvCoreBase*>(&v.impl->core(i));
           }, py::arg("i"), py::return_value_policy::reference_internal,
           "Row i's env core (its task's *EnvCore type), alive as long as the session")
      .def("snapshot_row", [](PyVectorEnvCore& v, int64_t i) {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             return v.impl->snapshot_row(i);
           }, py::arg("i"),
           "A copy of row i's env core (its task's *EnvCore type, as row_core(i).snapshot())")
      .def("restore_row", [](PyVectorEnvCore& v, int64_t i, const EnvCoreBase& snapshot) {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             if (!v.impl->restore_row(i, snapshot))
               throw std::invalid_argument("restore_row: the snapshot is a core of another task");
           }, py::arg("i"), py::arg("snapshot"),
           "Row i becomes a copy of `snapshot` (a snapshot_row of a row of this task)")
      .def("row_draws", [](PyVectorEnvCore& v, int64_t i) -> py::object {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             const RandomDraws* d = v.impl->core(i).randomization_draws();
             if (!d) return py::none();
             py::array_t<double> out(kRandKeys);
             std::copy(std::begin(d->value), std::end(d->value), out.mutable_data());
             return out;
           }, py::arg("i"), "Row i's last episode draws (DRAW_KEYS' order, NaN where none), "
           "None without randomization")
      .def("row_summary", [](PyVectorEnvCore& v, int64_t i) {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             const EnvCoreBase& c = v.impl->core(i);
             py::array_t<double> out(c.spec().summary_size());
             c.summary(out.mutable_data());
             return out;
           }, py::arg("i"), "Row i's episode so far (its core's summary(): summary_names)")
      .def("step", [](PyVectorEnvCore& v, py::array actions, py::array step_mask, py::array obs,
                      py::array rewards, py::array flags, py::array terms, py::array info) {
             if (v.impl->closed()) throw std::runtime_error("VectorEnvCore is closed");
             const py::ssize_t n = v.impl->size();
             const EnvSpec& spec = v.impl->spec();
             VectorStepBuffers b;
             b.actions_f32 = py::isinstance<py::array_t<float>>(actions);
             if (b.actions_f32) {
               b.actions = buffer<float>(actions, n, spec.action_size(), "actions",
                                         "float32 or float64");
             } else {
               b.actions = buffer<double>(actions, n, spec.action_size(), "actions",
                                          "float32 or float64");
             }
             b.step_mask = buffer<uint8_t>(step_mask, n, 0, "step_mask", "uint8");
             b.obs = buffer<float>(obs, n, spec.obs_size(), "obs", "float32");
             b.rewards = buffer<double>(rewards, n, 0, "rewards", "float64");
             b.flags = buffer<int32_t>(flags, n, 0, "flags", "int32");
             b.terms = buffer<double>(terms, n, spec.term_size(), "terms", "float64");
             b.info = buffer<double>(info, n, spec.info_size(), "info", "float64");
             for (py::ssize_t i = 0; i < n; ++i) {
               // Checked per call: Python may reconfigure a core's latency between steps.
               if (b.step_mask[i] && v.impl->core(i).measured_latency())
                 throw std::invalid_argument(
                     "env " + std::to_string(i) +
                     " has LatencyModel.measured(): the vector session draws delays from "
                     "the model and cannot take measured ones");
             }
             vdsim_py::run_interruptible([&] { v.impl->step(b); });
           }, py::arg("actions"), py::arg("step_mask"), py::arg("obs"), py::arg("rewards"),
           py::arg("flags"), py::arg("terms"), py::arg("info"),
           "One env step of every env whose step_mask is nonzero (GIL released)")
      .def("bind_buffers", [](PyVectorEnvCore& v, py::array obs, py::array rewards,
                              py::array flags, py::array terms, py::array info,
                              py::array elapsed, std::vector<std::string> term_keys,
                              const std::vector<std::tuple<std::string, int64_t, int>>& base,
                              const std::vector<std::tuple<std::string, int64_t, int>>& timing) {
             const py::ssize_t n = v.impl->size();
             const EnvSpec& spec = v.impl->spec();
             buffer<float>(obs, n, spec.obs_size(), "obs", "float32");
             buffer<double>(rewards, n, 0, "rewards", "float64");
             buffer<int32_t>(flags, n, 0, "flags", "int32");
             buffer<double>(terms, n, spec.term_size(), "terms", "float64");
             buffer<double>(info, n, spec.info_size(), "info", "float64");
             buffer<int64_t>(elapsed, n, 0, "elapsed", "int64");
             if (static_cast<int64_t>(term_keys.size()) != spec.term_size())
               throw std::invalid_argument("one key per reward term");
             FastStep f;
             f.obs = obs, f.rewards = rewards, f.flags = flags, f.terms = terms, f.info = info;
             f.elapsed = elapsed;
             f.base = info_cols(base, spec.info_size());
             f.timing = info_cols(timing, spec.info_size());
             for (const auto& k : term_keys) {
               f.term_keys.emplace_back(k);
               f.term_mask_keys.emplace_back("_" + k);
             }
             f.ready = true;
             v.fast = std::move(f);
           }, py::arg("obs"), py::arg("rewards"), py::arg("flags"), py::arg("terms"),
           py::arg("info"), py::arg("elapsed"), py::arg("term_keys"), py::arg("base_cols"),
           py::arg("timing_cols"),
           "The env's batch buffers and info layout for step_fast (checked once here)")
      .def("step_fast", [](PyVectorEnvCore& v, py::handle actions, int64_t max_steps,
                           bool timing, double tol, bool rows,
                           py::object reset_mask) -> py::object {
             // The common vector step in one call: every env steps (no autoreset row), and
             // the Gymnasium return values are built here: fresh obs, rewards,
             // terminated, truncated (the TimeLimit rule of max_steps > 0 included) and
             // infos in Gymnasium's vector format (arrays plus "_key" masks; the mask
             // shared by the keys of one step). Returns None when the actions need the
             // Python checks (conversion or an error naming the row); the rows are then
             // not stepped. Last item: the number of rows whose episode ended.
             // reset_mask (NEXT_STEP's autoreset rows): those rows reset in C++ instead of
             // stepping (reward 0, not ended), and report their reset info: the task's
             // keys; reward_terms and the timing keys are masked to the stepped rows
             // (absent when none stepped), as SyncVectorEnv batches them.
             if (v.impl->closed()) throw std::runtime_error("VectorEnvCore is closed");
             FastStep& f = v.fast;
             if (!f.ready) throw std::runtime_error("bind_buffers() first");
             const int64_t n = v.impl->size();
             const EnvSpec& spec = v.impl->spec();
             VectorStepBuffers b;
             b.actions = checked_actions(actions, n, spec.action_size(), tol, b.actions_f32);
             if (!b.actions) return py::none();
             for (int64_t i = 0; i < n; ++i)
               if (v.impl->core(i).measured_latency())
                 throw std::invalid_argument(
                     "env " + std::to_string(i) + " has LatencyModel.measured(): the vector "
                     "session draws delays from the model and cannot take measured ones");
             b.step_mask = nullptr;
             if (!reset_mask.is_none()) {
               if (rows) throw std::invalid_argument("rows=True takes no reset_mask");
               b.reset_mask = reset_rows_of(v, reset_mask.cast<py::array>());
               b.rngs = v.rngs.data();
             }
             f.into(b);
             vdsim_py::run_interruptible([&] { v.impl->step(b); });

             const int64_t obs_n = spec.obs_size(), term_n = spec.term_size();
             const int64_t info_n = spec.info_size();
             const Dtypes& dt = f.dt;
             py::array obs = fresh(dt.f32, n, obs_n);
             std::memcpy(obs.mutable_data(), b.obs, sizeof(float) * n * obs_n);
             py::array rewards = fresh(dt.f64, n);
             std::memcpy(rewards.mutable_data(), b.rewards, sizeof(double) * n);
             py::array terminated = fresh(dt.b, n), truncated = fresh(dt.b, n),
                       mask = fresh(dt.b, n);
             bool* te = static_cast<bool*>(terminated.mutable_data());
             bool* tr = static_cast<bool*>(truncated.mutable_data());
             bool* mk = static_cast<bool*>(mask.mutable_data());
             auto* elapsed = static_cast<int64_t*>(f.elapsed.mutable_data());
             int64_t ended = 0, n_reset = 0;
             for (int64_t i = 0; i < n; ++i) {
               const int32_t fl = b.flags[i];
               if (b.reset_mask && b.reset_mask[i]) {
                 elapsed[i] = 0;
                 te[i] = tr[i] = false;
                 mk[i] = true;
                 ++n_reset;
                 continue;
               }
               ++elapsed[i];
               te[i] = (fl & kFlagTerminated) != 0;
               tr[i] = (fl & kFlagTruncated) != 0 || (max_steps > 0 && elapsed[i] >= max_steps);
               mk[i] = true;
               ended += te[i] || tr[i];
             }
             if (rows) {
               // stable-baselines3's VecEnv step (DummyVecEnv over single envs): obs,
               // float32 rewards, dones, one dict per env of Python scalars (the task's
               // keys, reward_terms, the timing keys with latency, TimeLimit.truncated),
               // and the number of ended rows.
               py::list out(n);
               for (int64_t i = 0; i < n; ++i) {
                 const double* row = b.info + i * info_n;
                 py::dict d;
                 for (const InfoCol& c : f.base) d[c.key] = scalar(row[c.col], c.kind);
                 py::dict rt;
                 for (int64_t j = 0; j < term_n; ++j)
                   rt[f.term_keys[j]] = py::float_(b.terms[i * term_n + j]);
                 d[f.reward_terms_key] = std::move(rt);
                 if (timing)
                   for (const InfoCol& c : f.timing) d[c.key] = scalar(row[c.col], c.kind);
                 d[f.time_limit_key] = py::bool_(tr[i] && !te[i]);
                 out[i] = std::move(d);
               }
               // SB3's step values: float32 rewards, dones (terminated or truncated).
               py::array rewards32 = fresh(dt.f32, n), dones = fresh(dt.b, n);
               auto* r32 = static_cast<float*>(rewards32.mutable_data());
               auto* dn = static_cast<bool*>(dones.mutable_data());
               for (int64_t i = 0; i < n; ++i) {
                 r32[i] = static_cast<float>(b.rewards[i]);
                 dn[i] = te[i] || tr[i];
               }
               return py::make_tuple(std::move(obs), std::move(rewards32), std::move(dones),
                                     std::move(out), ended);
             }
             // The dicts through the C API: pybind11's item accessors cost about as much as
             // the arrays at small N.
             auto set = [](PyObject* d, const py::str& k, const py::handle& v) {
               if (PyDict_SetItem(d, k.ptr(), v.ptr()) != 0) throw py::error_already_set();
             };
             py::dict infos;
             for (const InfoCol& c : f.base) {
               set(infos.ptr(), c.key, info_column(dt, b.info, n, info_n, c.col, c.kind));
               set(infos.ptr(), c.mask_key, mask);
             }
             if (n_reset == n)  // no row stepped: the reset infos alone
               return py::make_tuple(std::move(obs), std::move(rewards), std::move(terminated),
                                     std::move(truncated), std::move(infos), ended);
             py::array stepped = mask;  // the rows that stepped
             if (n_reset) {
               stepped = fresh(dt.b, n);
               auto* st = static_cast<bool*>(stepped.mutable_data());
               for (int64_t i = 0; i < n; ++i) st[i] = !b.reset_mask[i];
             }
             py::dict reward_terms;
             for (int64_t j = 0; j < term_n; ++j) {
               set(reward_terms.ptr(), f.term_keys[j], info_column(dt, b.terms, n, term_n, j, 0));
               set(reward_terms.ptr(), f.term_mask_keys[j], stepped);
             }
             set(infos.ptr(), f.reward_terms_key, reward_terms);
             set(infos.ptr(), f.reward_terms_mask_key, stepped);
             if (timing)
               for (const InfoCol& c : f.timing) {
                 set(infos.ptr(), c.key, info_column(dt, b.info, n, info_n, c.col, c.kind));
                 set(infos.ptr(), c.mask_key, stepped);
               }
             return py::make_tuple(std::move(obs), std::move(rewards), std::move(terminated),
                                   std::move(truncated), std::move(infos), ended);
           }, py::arg("actions"), py::arg("max_steps"), py::arg("timing"), py::arg("tol"),
           py::arg("rows") = false, py::arg("reset_mask") = py::none(),
           "Every env's step with Gymnasium's return values built in C++ (see the source)")
      .def("set_row_rng", [](PyVectorEnvCore& v, int64_t i, py::object bit_generator,
                             py::object latency_bit_generator, uint64_t model_seed,
                             bool owned) {
             // Row i's generators for its resets in C++: its env's np_random's bit
             // generator and, when its resets draw a latency seed, that stream's (None:
             // seed 0). A seeded Python reset replaces them: set them again after it.
             // owned: the session's own, as seed_rows's (row_rng_state reports them until
             // the row's env takes them): a restored row's.
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             EpisodeRng r;
             r.task = vdsim_py::np_bitgen(bit_generator);
             r.latency = latency_bit_generator.is_none()
                             ? nullptr : vdsim_py::np_bitgen(latency_bit_generator);
             r.model_seed = model_seed;
             v.release(i);
             v.rngs[i] = r;
             v.rng_refs[2 * i] = std::move(bit_generator);
             v.rng_refs[2 * i + 1] = std::move(latency_bit_generator);
             v.owns_refs[i] = owned ? 1 : 0;
           }, py::arg("i"), py::arg("bit_generator"), py::arg("latency_bit_generator"),
           py::arg("model_seed"), py::arg("owned") = false,
           "Env i's episode generators for resets in C++ (reset_rows, step_fast's reset_mask); "
           "owned: the session's own, reported by row_rng_state as seed_rows's")
      .def("seed_rows", [](PyVectorEnvCore& v, py::array mask,
                           const py::array_t<uint32_t, py::array::c_style>& task_words,
                           const py::array_t<int64_t, py::array::c_style>& task_offsets,
                           const py::array_t<uint32_t, py::array::c_style>& latency_words,
                           const py::array_t<int64_t, py::array::c_style>& latency_offsets,
                           const py::array_t<uint64_t, py::array::c_style>& model_seeds) {
             // The masked rows seeded as Gymnasium seeds an env (a PCG64 from SeedSequence
             // of row i's entropy words task_words[task_offsets[i]:task_offsets[i + 1]]),
             // with their latency streams likewise (none where the offsets are equal),
             // then reset in C++ into the bound buffers. The rows own these generators
             // until their envs take them (row_rng_state).
             if (v.impl->closed()) throw std::runtime_error("VectorEnvCore is closed");
             const int64_t n = v.impl->size();
             if (task_offsets.size() != n + 1 || latency_offsets.size() != n + 1 ||
                 model_seeds.size() != n)
               throw std::invalid_argument("seed_rows: N + 1 offsets and N model seeds");
             const int64_t* to = task_offsets.data();
             const int64_t* lo = latency_offsets.data();
             if (mask.ndim() != 1 || mask.shape(0) != n || mask.itemsize() != 1)
               throw std::invalid_argument("seed_rows: a (N,) bool mask");
             const auto* m = static_cast<const uint8_t*>(mask.data());
             for (int64_t i = 0; i < n; ++i) {
               if (!m[i]) continue;
               if (!(0 <= to[i] && to[i] < to[i + 1] && to[i + 1] <= task_words.size()) ||
                   !(0 <= lo[i] && lo[i] <= lo[i + 1] && lo[i + 1] <= latency_words.size()))
                 throw std::invalid_argument("seed_rows: offsets out of range");
               v.release(i);
               v.own_task[i] = std::make_unique<NpPcg64>(task_words.data() + to[i],
                                                         static_cast<size_t>(to[i + 1] - to[i]));
               if (lo[i + 1] > lo[i])
                 v.own_latency[i] = std::make_unique<NpPcg64>(
                     latency_words.data() + lo[i], static_cast<size_t>(lo[i + 1] - lo[i]));
               v.rngs[i] = EpisodeRng{v.own_task[i]->bitgen(),
                                      v.own_latency[i] ? v.own_latency[i]->bitgen() : nullptr,
                                      model_seeds.data()[i]};
             }
             reset_in_core(v, mask);
           }, py::arg("mask"), py::arg("task_words"), py::arg("task_offsets"),
           py::arg("latency_words"), py::arg("latency_offsets"), py::arg("model_seeds"),
           "Seed the masked rows' generators in C++ (numpy's SeedSequence and PCG64) and reset "
           "them")
      .def("row_rng_state", [](PyVectorEnvCore& v, int64_t i) -> py::object {
             // Row i's generators' numpy states when the row owns them (seed_rows), else None.
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             if (!v.own_task[i] && !v.owns_refs[i]) return py::none();
             py::object lat = v.rngs[i].latency ? v.rng_state(i, true) : py::object(py::none());
             return py::make_tuple(v.rng_state(i, false), lat);
           }, py::arg("i"),
           "The numpy states of row i's generators while the row owns them (seed_rows, "
           "set_row_rng(owned=True)), else None")
      .def("row_rng", [](PyVectorEnvCore& v, int64_t i) -> py::object {
             // Row i's generators as a snapshot records them, whoever holds them.
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             const EpisodeRng& r = v.rngs[i];
             if (!r.task) return py::none();
             py::object lat = r.latency ? v.rng_state(i, true) : py::object(py::none());
             return py::make_tuple(v.rng_state(i, false), lat, r.model_seed,
                                   v.own_task[i] || v.owns_refs[i]);
           }, py::arg("i"),
           "Row i's generators (None: none set): their numpy states (task, latency or None), "
           "the latency model's seed and whether the session owns them")
      .def("release_row_rng", [](PyVectorEnvCore& v, int64_t i) {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             v.release(i);
           }, py::arg("i"), "Row i draws from no generator until set_row_rng or seed_rows")
      .def("reset_rows", [](PyVectorEnvCore& v, py::array mask) {
             // The masked rows' episode resets in C++ (their tasks' starts drawn from their
             // generators) into the bound buffers; the other rows are left alone.
             if (v.impl->closed()) throw std::runtime_error("VectorEnvCore is closed");
             reset_in_core(v, mask);
           }, py::arg("mask"),
           "Reset the masked envs in C++ (their tasks draw their starts from set_row_rng's "
           "generators) into the bound buffers")
      .def("advance_physics", [](PyVectorEnvCore& v, py::array_t<double> actions) {
             if (v.impl->closed()) throw std::runtime_error("VectorEnvCore is closed");
             VectorStepBuffers b;
             b.actions = buffer<double>(actions, v.impl->size(), v.impl->spec().action_size(),
                                        "actions", "float64");
             b.physics_only = true;
             vdsim_py::run_interruptible([&] { v.impl->step(b); });
           }, py::arg("actions"),
           "Benchmark reference: every env's physics for one control period (command now, "
           "advance), without latency, task, observation or reward (GIL released)")
      .def("set_vehicle", [](PyVectorEnvCore& v, int64_t i, const VehicleParams& p) {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             bool ok;
             {
               py::gil_scoped_release release;  // waits for a step in another thread
               ok = v.impl->set_vehicle(i, p);
             }
             if (!ok)
               throw std::invalid_argument("env " + std::to_string(i) +
                                           ": its plant has no vehicle parameters");
           }, py::arg("i"), py::arg("vehicle"),
           "Replace env i's vehicle parameters between steps (reset the env after)")
      .def("set_actuator", [](PyVectorEnvCore& v, int64_t i, const ActuatorParams& a,
                              int64_t dead_ticks) {
             if (i < 0 || i >= v.impl->size()) throw py::index_error("env index out of range");
             if (dead_ticks < 0) throw std::invalid_argument("dead_ticks must be >= 0");
             bool ok;
             {
               py::gil_scoped_release release;
               ok = v.impl->set_actuator(i, a, dead_ticks);
             }
             if (!ok)
               throw std::invalid_argument("env " + std::to_string(i) +
                                           ": its plant has no steering actuator");
           }, py::arg("i"), py::arg("actuator"), py::arg("dead_ticks"),
           "Replace env i's steering actuator chain between steps (reset the env after)")
      .def("close", [](PyVectorEnvCore& v) {
             py::gil_scoped_release release;
             v.impl->close();
           }, "Stop and join the workers (idempotent)")
      .def_property_readonly("closed", [](const PyVectorEnvCore& v) { return v.impl->closed(); })
      .def_property_readonly("num_envs", [](const PyVectorEnvCore& v) { return v.impl->size(); })
      .def_property_readonly("threads", [](const PyVectorEnvCore& v) { return v.impl->threads(); })
      .def("__len__", [](const PyVectorEnvCore& v) { return v.impl->size(); });
}
