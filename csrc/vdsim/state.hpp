// Plant state shared by both levels, and what each wheel receives from the powertrain.
#pragma once
#include <array>

#include "tire.hpp"

namespace vdsim {

// Body frame follows ISO 8855: x forward, y left, z up; psi and r counter-clockwise.
enum StateIndex : int {
  kX = 0,    // ground position of the CG [m]
  kY = 1,    // [m]
  kPsi = 2,  // heading [rad]
  kVx = 3,   // body-frame velocity of the CG [m/s]
  kVy = 4,   // [m/s]
  kR = 5,    // yaw rate [rad/s]
  kW0 = 6,   // wheel spins [rad/s]: L2 FL, FR, RL, RR; L1 front axle, rear axle
  kAxF = 10, // lagged longitudinal acceleration driving load transfer [m/s^2]
  kAyF = 11, // lagged lateral acceleration driving load transfer [m/s^2]
  kTa0 = 12, // lagged lateral slip tan(alpha) per wheel (relaxation length; else unused)
  // The acceleration cascade's filtered measured ax [m/s^2] and integral [m/s] when it is
  // integrated with the vehicle (longitudinal="accel" with integrator="etd2",
  // accel_cascade.hpp); else unused (0).
  kAm = 16,
  kAi = 17,
  kStateSize = 18,
};

using State = std::array<double, kStateSize>;

// Wheel order FL, FR, RL, RR (L1 uses 0 = front axle, 1 = rear axle).
struct WheelInputs {
  double steer = 0.0;                  // road-wheel angle of the front wheels [rad]
  double cos_steer = 1.0, sin_steer = 0.0;  // of steer (wheel_inputs sets all three)
  std::array<double, 4> drive{};       // drive torque [N m], signed
  std::array<double, 4> brake{};       // brake torque capacity [N m], >= 0
  template <class Ar>
  void archive(Ar& ar) { ar(steer, cos_steer, sin_steer, drive, brake); }
};

// Quantities computed alongside the derivative, for observation.
struct WheelOut {
  double fx = 0.0, fy = 0.0, fz = 0.0;  // tire forces in the wheel frame and load [N]
  double kappa = 0.0, alpha = 0.0;      // slip ratio [-] and slip angle [rad]
  double tan_alpha_kin = 0.0;           // the kinematic (unlagged) slip tan(alpha) [-]
  template <class Ar>
  void archive(Ar& ar) { ar(fx, fy, fz, kappa, alpha, tan_alpha_kin); }
};

struct Aux {
  double ax = 0.0, ay = 0.0;  // body-frame acceleration of the CG [m/s^2]
  std::array<WheelOut, 4> wheel{};
  template <class Ar>
  void archive(Ar& ar) { ar(ax, ay, wheel); }
};

// The wheels' linearized coupling to the body (model_common.hpp, record_hub).
struct HubCoupling {
  double et[4][3] = {};
  double gb[4][3] = {};
  double kself[4] = {};
  double j_lin[4] = {};  // the spin rate's slope at zero slip, -R^2 C_x / (I den) [1/s]
  double radius = 1.0;  // [m]
  int n_wheels = 4;      // the wheel slots in use (L1: 2)
  template <class Ar>
  void archive(Ar& ar) { ar(et, gb, kself, j_lin, radius, n_wheels); }
};

// What a wheel's spin rate depends on besides its spin, captured by a full derivative
// evaluation (model_common.hpp, wheel_rates): the etd2 integrator's Jacobian evaluations
// perturb the spins only, so they reuse the loads, hub speeds and slip angles.
struct WheelPoint {
  int axle = 0;            // the axle tire used (0 front, 1 rear)
  int n_tires = 1;         // 1: scale * F(fz[0]); 2: F(fz[0]) + F(fz[1]) (L1's split axle)
  double scale = 1.0;
  double fz[2] = {0.0, 0.0};
  TireAtLoad tire[2];      // the tire's constants at fz (tire.hpp)
  double vxw = 0.0, den = 1.0, tan_a = 0.0;  // hub speed, slip denominator, tire's slip
  double drive = 0.0, brake = 0.0, inertia = 1.0, coupling = 0.0;
  template <class Ar>
  void archive(Ar& ar) {
    ar(axle, n_tires, scale, fz, tire, vxw, den, tan_a, drive, brake, inertia, coupling);
  }
};
// deriv_l2 sets every field of its WheelPoints one by one: a new field must be set there.
static_assert(sizeof(WheelPoint) == 2 * sizeof(int) + 10 * sizeof(double) +
                                        2 * sizeof(TireAtLoad),
              "a WheelPoint field was added: set it in deriv_l2 (model_l2.cpp)");
struct WheelPoints {
  WheelPoint w[4];
  int n = 0;
  HubCoupling hub;  // the wheels' coupling to the body at the same state
  template <class Ar>
  void archive(Ar& ar) { ar(w, n, hub); }
};

}  // namespace vdsim
