// Plain parameter structs in SI units. Defaults are the generic sedan of DESIGN.md;
// envs/vehicles/generic_sedan.yaml must agree field by field (tests/test_config.py).
#pragma once
#include <cmath>
#include <limits>

namespace vdsim {

constexpr double kGravity = 9.80665;  // m/s^2

// One Magic Formula curve y = D sin(C atan(B x - E (B x - atan(B x)))) with D = mu(Fz) Fz.
struct MFCurve {
  double B = 8.0;   // stiffness factor at the nominal load [-]
  double C = 1.3;   // shape factor [-]
  double D = 1.0;   // peak factor, multiplies mu * Fz [-]
  double E = -1.0;  // curvature factor [-]
  template <class Ar>
  void archive(Ar& ar) { ar(B, C, D, E); }
};

// Combined slip by the Magic Formula's weighting functions (Pacejka, Tyre and Vehicle
// Dynamics, 3rd ed., eqs. 4.E50-4.E67, without shifts, camber and the kappa-induced side
// force): Fx = Gxa(alpha, kappa) Fx0(kappa), Fy = Gyk(kappa, alpha) Fy0(alpha) with
// G = cos(C atan(B s - E (B s - atan(B s)))), Bxa = rbx1 cos(atan(rbx2 kappa)),
// Byk = rby1 cos(atan(rby2 (alpha - rby3))) (CommonRoad's r_by3 negated: their slip angle
// has the other sign). weighting = false: the friction ellipse.
// Defaults: CommonRoad's vehicle 2 (commonroad-vehicle-models, parameters_vehicle2).
struct CombinedSlipParams {
  bool weighting = false;
  double rbx1 = 13.276, rbx2 = -13.778, rcx1 = 1.2568, rex1 = 0.65225;
  double rby1 = 7.1433, rby2 = 9.1916, rby3 = 0.027856, rcy1 = 1.0719, rey1 = -0.27572;
  template <class Ar>
  void archive(Ar& ar) { ar(weighting, rbx1, rbx2, rcx1, rex1, rby1, rby2, rby3, rcy1, rey1); }
};

struct TireParams {
  MFCurve lateral{8.0, 1.3, 1.0, -1.0};
  MFCurve longitudinal{10.0, 1.65, 1.0, 0.97};
  double mu = 1.0;            // road friction scale [-]
  double fz_nominal = 4000;   // nominal load Fz0 where B, C, D, E hold as given [N]
  double pdy2 = -0.10;        // friction load sensitivity: mu(Fz) = mu (1 + pdy2 dfz) [-]
  double pky2 = 1.0;          // lateral stiffness peaks at Fz = pky2 Fz0 [-] (<= 0: plain MF)
  // Lateral relaxation length sigma [m]: the slip tan(alpha) the tire acts on lags the
  // kinematic one, d/dt = (V / sigma) (kinematic - lagged), V = max(|v_x,wheel|, the slip
  // speed floor). 0: no lag.
  double relaxation_length = 0.3;
  CombinedSlipParams combined{};
  template <class Ar>
  void archive(Ar& ar) {
    ar(lateral, longitudinal, mu, fz_nominal, pdy2, pky2, relaxation_length, combined);
  }
};

struct VehicleParams {
  double mass = 1500.0;                 // kg
  double yaw_inertia = 2500.0;          // Iz [kg m^2]
  double cg_to_front = 1.2;             // a [m]
  double cg_to_rear = 1.5;              // b [m]
  double track = 1.55;                  // [m], same front and rear
  double cg_height = 0.55;              // h_cg [m]
  double wheel_radius = 0.32;           // [m]
  double wheel_inertia = 1.0;           // per wheel incl. driveline share [kg m^2]
  double drive_torque_max = 1500.0;     // total at the wheels [N m]
  double drive_power_max = 150e3;       // total at the wheels [W]
  double brake_torque_max = 2000.0;     // per wheel [N m]
  double front_drive_share = 1.0;       // 0 = rear drive, 1 = front drive [-]
  double front_brake_share = 0.6;       // share of total brake torque on the front axle [-]
  // L2: viscous coupling across each axle's differential, torque c (omega_other - omega)
  // on each wheel [N m s/rad]: 0 = open, a few hundred = limited slip, large = locked.
  double diff_coupling_front = 0.0;
  double diff_coupling_rear = 0.0;
  double steering_ratio = 15.0;         // steering wheel / road wheel [-], NaN = not stated
  double max_steer = 0.6;               // road-wheel angle limit [rad]
  double drag_coefficient = 0.30;       // Cd [-]
  double frontal_area = 2.2;            // [m^2]
  double air_density = 1.225;           // [kg/m^3]
  double rolling_resistance = 0.012;    // f_r, force = f_r * sum(Fz) [-]
  double load_transfer_tau = 0.02;      // lag of the quasi-static load transfer [s]
  // L2: front axle's share of the lateral load transfer (its share of the total roll
  // stiffness, rigid body, roll centres at the ground) [-]; NaN: split by static load
  // share (b/L front, a/L rear).
  double roll_stiffness_front = 0.6;
  // Lateral force compliance steer of each axle [rad/N]: the steer its lateral force winds
  // off (positive: out of the turn; it lumps the suspension's and steering's compliance
  // and roll steer). Modelled by the equivalent axle cornering stiffness, exact in the
  // linear range: 1 / C_eff = 1 / C + c with C the axle's stiffness at static load; the
  // force peak is unchanged (axle_tire below; docs/PHYSICS.md, "Compliance steer").
  double compliance_steer_front = 2.5e-6;
  double compliance_steer_rear = 0.0;
  double body_width = 1.8;              // [m], for cone gates and footprint
  double front_overhang = 0.95;         // front axle to bumper [m]
  double rear_overhang = 1.05;          // rear axle to bumper [m]
  // Acceleration command (longitudinal="accel"; accel_cascade.hpp): the range of a target
  // and the cascade's PI gains on the acceleration error and its accelerometer filter.
  double max_acceleration = 3.0;        // largest target [m/s^2] (env action +1)
  double max_deceleration = 8.0;        // largest braking target [m/s^2] (env action -1)
  double accel_kp = 0.05;               // pedal per m/s^2 of error [s^2/m]
  double accel_ki = 0.5;                // pedal per m/s of integrated error [s/m]
  double accel_filter_tau = 0.02;       // measured-ax filter time constant [s]
  TireParams tire{};

  double wheelbase() const { return cg_to_front + cg_to_rear; }
  // Every member, for the archive (archive.hpp: the env cores' pickling).
  template <class Ar>
  void archive(Ar& ar) {
    ar(mass, yaw_inertia, cg_to_front, cg_to_rear, track, cg_height, wheel_radius,
       wheel_inertia, drive_torque_max, drive_power_max, brake_torque_max, front_drive_share,
       front_brake_share, diff_coupling_front, diff_coupling_rear, steering_ratio, max_steer,
       drag_coefficient, frontal_area, air_density, rolling_resistance, load_transfer_tau,
       roll_stiffness_front, compliance_steer_front, compliance_steer_rear, body_width,
       front_overhang, rear_overhang, max_acceleration, max_deceleration, accel_kp, accel_ki,
       accel_filter_tau, tire);
  }
  // Full-pedal brake torque of all four wheels [N m]: the one place the 4 is written.
  double total_brake_torque() const { return 4.0 * brake_torque_max; }
};

// Low-speed treatment, shared by both models.
struct LowSpeedParams {
  double slip_speed_floor = 2.5;   // slip denominators use max(|vx_wheel|, this) [m/s]
  double kinematic_blend_speed = 1.0;  // below this, vy and r relax to kinematic [m/s]
  double kinematic_tau = 0.05;     // relaxation time of that blend [s]
  double rolling_speed_eps = 0.1;  // rolling resistance fades in over this speed [m/s]
  template <class Ar>
  void archive(Ar& ar) {
    ar(slip_speed_floor, kinematic_blend_speed, kinematic_tau, rolling_speed_eps);
  }
};

// Steering actuator chain: dead time -> first-order lag -> rate limit -> saturation.
// enabled = false is bit-identical to no chain.
struct ActuatorParams {
  bool enabled = false;
  double dead_time = 0.0;   // [s], a whole number of substeps (Python refuses others);
                            // the session uses SimConfig::actuator_dead_ticks
  double time_constant = 0.0;  // first-order lag [s], 0 = none
  double rate_limit = std::numeric_limits<double>::infinity();  // [rad/s]
  double max_angle = std::numeric_limits<double>::infinity();   // [rad]
  template <class Ar>
  void archive(Ar& ar) { ar(enabled, dead_time, time_constant, rate_limit, max_angle); }
};

enum class Level { L1 = 1, L2 = 2 };
enum class Longitudinal { Force = 0, Pedal = 1, Accel = 2 };
enum class Integrator { Euler = 0, Heun = 1, RK4 = 2, SemiImplicit = 3, Etd2 = 4, Etd3 = 5 };

// etd2 and etd3: the exponential integrators (etd2.hpp, etd3.hpp), with the step-size
// rule, the continuous cascade and the fast tire algebra.
inline bool exponential(Integrator m) { return m == Integrator::Etd2 || m == Integrator::Etd3; }

}  // namespace vdsim
