// Parameter structs: plain read/write fields, filled from vdsim_gym.config dataclasses.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "vdsim/model_common.hpp"
#include "vdsim/params.hpp"
#include "vdsim/schedule.hpp"
#include "vdsim/tire.hpp"

namespace py = pybind11;
using namespace vdsim;

#define RW(cls, field) .def_readwrite(#field, &cls::field)

namespace {

// The shape of tire p with the default physics' evaluation (etd2: the fast curves and
// fast_algebra), as the four-lane bindings below and their scalar references use it.
TireShape etd2_shape(const TireParams& p) {
  TireShape shape = TireShape::from(p);
  shape.use_fast(true, p);
  shape.use_fast_algebra(true, p);
  return shape;
}

}  // namespace

void bind_params(py::module_& m) {
  py::enum_<Level>(m, "Level").value("L1", Level::L1).value("L2", Level::L2);
  py::enum_<Longitudinal>(m, "Longitudinal")
      .value("force", Longitudinal::Force)
      .value("pedal", Longitudinal::Pedal)
      .value("accel", Longitudinal::Accel);
  py::enum_<Integrator>(m, "Integrator")
      .value("euler", Integrator::Euler)
      .value("heun", Integrator::Heun)
      .value("rk4", Integrator::RK4)
      .value("semi_implicit", Integrator::SemiImplicit)
      .value("etd2", Integrator::Etd2)
      .value("etd3", Integrator::Etd3);

  py::class_<MFCurve>(m, "MFCurve").def(py::init<>()) RW(MFCurve, B) RW(MFCurve, C)
      RW(MFCurve, D) RW(MFCurve, E);
  py::class_<CombinedSlipParams>(m, "CombinedSlipParams").def(py::init<>())
      RW(CombinedSlipParams, weighting) RW(CombinedSlipParams, rbx1)
      RW(CombinedSlipParams, rbx2) RW(CombinedSlipParams, rcx1) RW(CombinedSlipParams, rex1)
      RW(CombinedSlipParams, rby1) RW(CombinedSlipParams, rby2) RW(CombinedSlipParams, rby3)
      RW(CombinedSlipParams, rcy1) RW(CombinedSlipParams, rey1);
  py::class_<TireParams>(m, "TireParams").def(py::init<>()) RW(TireParams, lateral)
      RW(TireParams, longitudinal) RW(TireParams, mu) RW(TireParams, fz_nominal)
      RW(TireParams, pdy2) RW(TireParams, pky2) RW(TireParams, combined)
      RW(TireParams, relaxation_length);
  py::class_<VehicleParams>(m, "VehicleParams")
      .def(py::init<>()) RW(VehicleParams, mass) RW(VehicleParams, yaw_inertia)
      RW(VehicleParams, cg_to_front) RW(VehicleParams, cg_to_rear) RW(VehicleParams, track)
      RW(VehicleParams, cg_height) RW(VehicleParams, wheel_radius)
      RW(VehicleParams, wheel_inertia) RW(VehicleParams, drive_torque_max)
      RW(VehicleParams, drive_power_max) RW(VehicleParams, brake_torque_max)
      .def("total_brake_torque", &VehicleParams::total_brake_torque)
      RW(VehicleParams, front_drive_share) RW(VehicleParams, front_brake_share)
      RW(VehicleParams, steering_ratio) RW(VehicleParams, max_steer)
      RW(VehicleParams, roll_stiffness_front) RW(VehicleParams, diff_coupling_front)
      RW(VehicleParams, diff_coupling_rear)
      RW(VehicleParams, compliance_steer_front) RW(VehicleParams, compliance_steer_rear)
      RW(VehicleParams, drag_coefficient) RW(VehicleParams, frontal_area)
      RW(VehicleParams, air_density) RW(VehicleParams, rolling_resistance)
      RW(VehicleParams, load_transfer_tau) RW(VehicleParams, body_width)
      RW(VehicleParams, front_overhang) RW(VehicleParams, rear_overhang)
      RW(VehicleParams, max_acceleration) RW(VehicleParams, max_deceleration)
      RW(VehicleParams, accel_kp) RW(VehicleParams, accel_ki)
      RW(VehicleParams, accel_filter_tau)
      RW(VehicleParams, tire);
  py::class_<LowSpeedParams>(m, "LowSpeedParams").def(py::init<>())
      RW(LowSpeedParams, slip_speed_floor) RW(LowSpeedParams, kinematic_blend_speed)
      RW(LowSpeedParams, kinematic_tau) RW(LowSpeedParams, rolling_speed_eps);
  py::class_<ActuatorParams>(m, "ActuatorParams").def(py::init<>())
      RW(ActuatorParams, enabled) RW(ActuatorParams, dead_time)
      RW(ActuatorParams, time_constant) RW(ActuatorParams, rate_limit)
      RW(ActuatorParams, max_angle);

  // Pure tire functions, exposed for tests against a Python reference; fast: the
  // bounded-error evaluation integrator="semi_implicit" uses (tire.hpp).
  m.def("axle_tire", &axle_tire, py::arg("vehicle"), py::arg("axle"),
        "The tire an axle's wheels use (0 front, 1 rear): the vehicle's tire with the "
        "compliance steer's equivalent lateral stiffness (model_common.hpp).");
  // fast_algebra: the load laws by reciprocals, as integrator="etd2" evaluates them.
  m.def("tire_forces", [](const TireParams& p, double fz, double kappa, double tan_alpha,
                          bool fast, bool fast_algebra) {
        TireShape shape = TireShape::from(p);
        shape.use_fast(fast, p);
        shape.use_fast_algebra(fast_algebra, p);
        const TireForces f = tire_forces(p, shape, fz, kappa, tan_alpha);
        return py::make_tuple(f.fx, f.fy);
      }, py::arg("params"), py::arg("fz"), py::arg("kappa"), py::arg("tan_alpha"),
      py::arg("fast") = false, py::arg("fast_algebra") = false);
  // tire_forces4 (the L2 model's four tires at once) on (N, 4) arrays, row by row: front
  // tire for lanes 0 and 1, rear for 2 and 3; the shape from the front tire with the
  // default physics' evaluation (fast curves, fast_algebra). Returns fx, fy, rec.dx and
  // rec.sy, each (N, 4), for the bit-for-bit test against tire_forces.
  // build: "auto" (the one in use: AVX2 where the CPU has it), "baseline" or "avx2" (a
  // ValueError where this CPU has none).
  auto build_of = [](const std::string& name) -> std::optional<Tire4Build> {
    if (name == "auto") return std::nullopt;
    if (name == "baseline") return Tire4Build::Baseline;
    if (name == "avx2") return Tire4Build::Avx2;
    throw std::invalid_argument("build must be 'auto', 'baseline' or 'avx2', got '" + name + "'");
  };
  m.def("tire4_build",
        [] { return vdsim::tire4_build() == Tire4Build::Avx2 ? "avx2" : "baseline"; },
        "The build of the four-lane tire evaluations in use on this CPU ('avx2' or "
        "'baseline'); both give the same bits");
  m.def("tire_forces4", [build_of](const TireParams& front, const TireParams& rear,
                           py::array_t<double, py::array::c_style | py::array::forcecast> fz,
                           py::array_t<double, py::array::c_style | py::array::forcecast> kappa,
                           py::array_t<double, py::array::c_style | py::array::forcecast> tan_a,
                           const std::string& build) {
        const std::optional<Tire4Build> b = build_of(build);
        if (fz.ndim() != 2 || fz.shape(1) != 4 || kappa.size() != fz.size() ||
            tan_a.size() != fz.size())
          throw std::invalid_argument("tire_forces4: fz, kappa, tan_alpha of shape (N, 4)");
        const TireShape shape = etd2_shape(front);
        if (!can_batch(front, rear, shape))
          throw std::invalid_argument("tire_forces4: these tires take the scalar path");
        const py::ssize_t n = fz.shape(0);
        py::array_t<double> out({static_cast<py::ssize_t>(4), n, static_cast<py::ssize_t>(4)});
        double* o = out.mutable_data();
        const TireLanes tires = TireLanes::of(front, rear);
        for (py::ssize_t r = 0; r < n; ++r) {
          TireForces f[4];
          TireAtLoad rec[4];
          if (!b) {
            tire_forces4(tires, shape, fz.data() + 4 * r, kappa.data() + 4 * r,
                         tan_a.data() + 4 * r, f, rec);
          } else if (!tire_forces4_with(*b, tires, shape, fz.data() + 4 * r,
                                        kappa.data() + 4 * r, tan_a.data() + 4 * r, f, rec)) {
            throw std::invalid_argument("tire_forces4: this CPU has no AVX2");
          }
          for (int i = 0; i < 4; ++i) {
            o[(0 * n + r) * 4 + i] = f[i].fx;
            o[(1 * n + r) * 4 + i] = f[i].fy;
            o[(2 * n + r) * 4 + i] = rec[i].dx;
            o[(3 * n + r) * 4 + i] = rec[i].sy;
          }
        }
        return out;
      }, py::arg("front"), py::arg("rear"), py::arg("fz"), py::arg("kappa"),
      py::arg("tan_alpha"), py::arg("build") = "auto");
  // tire_fx_at4 (the etd2 Jacobian's four tires at once) on (N, 4) arrays of recorded
  // constants (dx, sy: TireAtLoad, valid) and slips, front tire for lanes 0 and 1; the
  // shape as tire_forces4's. Returns fx (N, 4), for the bit-for-bit test against
  // tire_fx_at.
  m.def("tire_fx_at4", [build_of](const TireParams& front, const TireParams& rear,
                          py::array_t<double, py::array::c_style | py::array::forcecast> dx,
                          py::array_t<double, py::array::c_style | py::array::forcecast> sy,
                          py::array_t<double, py::array::c_style | py::array::forcecast> kappa,
                          const std::string& build) {
        const std::optional<Tire4Build> b = build_of(build);
        if (dx.ndim() != 2 || dx.shape(1) != 4 || sy.size() != dx.size() ||
            kappa.size() != dx.size())
          throw std::invalid_argument("tire_fx_at4: dx, sy, kappa of shape (N, 4)");
        const TireShape shape = etd2_shape(front);
        if (!can_batch(front, rear, shape))
          throw std::invalid_argument("tire_fx_at4: these tires take the scalar path");
        const py::ssize_t n = dx.shape(0);
        py::array_t<double> out({n, static_cast<py::ssize_t>(4)});
        const TireLanes tires = TireLanes::of(front, rear);
        for (py::ssize_t r = 0; r < n; ++r) {
          TireAtLoad recs[4];
          const TireAtLoad* rp[4];
          for (int i = 0; i < 4; ++i) {
            recs[i] = {true, dx.data()[4 * r + i], sy.data()[4 * r + i]};
            rp[i] = &recs[i];
          }
          double* o = out.mutable_data() + 4 * r;
          if (!b) {
            tire_fx_at4(tires, shape, rp, kappa.data() + 4 * r, o);
          } else if (!tire_fx_at4_with(*b, tires, shape, rp, kappa.data() + 4 * r, o)) {
            throw std::invalid_argument("tire_fx_at4: this CPU has no AVX2");
          }
        }
        return out;
      }, py::arg("front"), py::arg("rear"), py::arg("dx"), py::arg("sy"), py::arg("kappa"),
      py::arg("build") = "auto");
  // tire_fx_at of one tire from its recorded constants (valid), with tire_forces4's shape.
  m.def("tire_fx_at", [](const TireParams& p, const TireParams& shape_tire, double dx,
                         double sy, double fz, double kappa, double tan_alpha) {
        const TireShape shape = etd2_shape(shape_tire);
        return tire_fx_at(p, shape, TireAtLoad{true, dx, sy}, fz, kappa, tan_alpha);
      }, py::arg("params"), py::arg("shape_tire"), py::arg("dx"), py::arg("sy"), py::arg("fz"),
      py::arg("kappa"), py::arg("tan_alpha"));
  // tire_forces with its TireAtLoad record: (fx, fy, rec.dx, rec.sy), the same shape and
  // evaluation as tire_forces4 (front tire's shape, fast curves, fast_algebra).
  m.def("tire_forces_recorded", [](const TireParams& p, const TireParams& shape_tire,
                                   double fz, double kappa, double tan_alpha) {
        const TireShape shape = etd2_shape(shape_tire);
        TireAtLoad rec;
        const TireForces f = tire_forces(p, shape, fz, kappa, tan_alpha, &rec);
        return py::make_tuple(f.fx, f.fy, rec.dx, rec.sy);
      }, py::arg("params"), py::arg("shape_tire"), py::arg("fz"), py::arg("kappa"),
      py::arg("tan_alpha"));
  m.def("fast_atan", py::vectorize(&fast_atan), py::arg("x"));
  m.def("fast_sin_pi", py::vectorize(&fast_sin_pi), py::arg("a"));
  m.def("mf_shape", py::vectorize([](double bx, double C, double E, bool fast) {
          return fast ? mf_shape_fast(bx, C, E) : mf_shape(bx, C, E);
        }), py::arg("bx"), py::arg("C"), py::arg("E"), py::arg("fast") = false);
  m.def("mf_peak_u", &mf_peak_u, py::arg("curve"));
  m.def("whole_ticks", &whole_ticks, py::arg("seconds"), py::arg("dt"));
  m.def("ceil_ticks", &ceil_ticks, py::arg("seconds"), py::arg("dt"));
  m.def("floor_ticks", &floor_ticks, py::arg("seconds"), py::arg("dt"));
  m.def("nearest_ticks", [](double seconds, double dt) {
          bool exact = false;
          const int64_t n = nearest_ticks(seconds, dt, &exact);
          return py::make_tuple(n, exact);
        }, py::arg("seconds"), py::arg("dt"));
}
