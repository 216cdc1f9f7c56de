// Domain randomization drawn and applied in the env core (vdsim_gym.sim.randomization
// names the ranges and their rules; this is their one implementation): per episode, one
// uniform draw per range from the env's numpy generator in draw order (after the task's
// own draws), each applied to the plant and the env core before the reset.
#pragma once
#include <cstdint>
#include <vector>

#include "async_timeline.hpp"
#include "latency.hpp"
#include "params.hpp"

namespace vdsim {

// The draws, in vdsim_gym.sim.randomization.DRAW_KEYS' order (the values' columns).
enum RandomKey : int {
  kRandMass = 0,          // a scale of mass and yaw inertia
  kRandCgX,               // a shift of the CG toward the front axle [m]
  kRandFriction,          // a scale of the tire's peak friction (both slip stiffnesses kept)
  kRandCornering,         // a scale of the tire's lateral stiffness at zero slip
  kRandActuatorLag,       // the steering actuator's time constant [s]
  kRandLatencyMean,       // the computation delay's mean [s]
  kRandLatencyJitter,     // its jitter, a fraction of the mean
  kRandSteerDelay,        // the steering channel's dead time [s] (snapped to ticks)
  kRandLongitudinalDelay, // the longitudinal channel's [s] (snapped to ticks)
  kRandLoss,              // the network's loss probability per command
  kRandObsDelay,          // the sensor delay [s]
  kRandDriverDelay,       // the robot driver's transport delay [s] (snapped to its steps)
  kRandKeys
};

// What an env randomizes and the nominal parameters the draws apply to.
struct RandomizationSpec {
  std::vector<int> keys;       // RandomKey of each range, in draw order
  std::vector<double> lo, hi;  // each range's bounds
  VehicleParams vehicle{};     // the nominal vehicle (mass .. cornering)
  ActuatorParams actuator{};   // the nominal steering chain (actuator_lag)
  int64_t actuator_dead_ticks = 0;
  int64_t steer_dead_ticks = 0, longitudinal_dead_ticks = 0;  // the nominal channels
  NetworkSpec network{};       // the nominal network, its drop replaced (loss)
  OverrunPolicy overrun = OverrunPolicy::Skip;
  template <class Ar>
  void archive(Ar& ar) {
    ar(keys, lo, hi, vehicle, actuator, actuator_dead_ticks, steer_dead_ticks,
       longitudinal_dead_ticks, network, overrun);
  }
  bool has(RandomKey k) const {
    for (int key : keys)
      if (key == k) return true;
    return false;
  }
};

// An episode's draws by key (the snapped values for the channels and the driver), NaN
// where the env does not randomize the key.
struct RandomDraws {
  double value[kRandKeys];
  template <class Ar>
  void archive(Ar& ar) { ar(value); }
};

// The nominal vehicle with the vehicle draws applied, as Randomization.vehicle does (the
// same operations in the same order).
inline VehicleParams randomized_vehicle(const VehicleParams& nominal, const RandomDraws& d,
                                        const RandomizationSpec& s) {
  VehicleParams v = nominal;
  if (s.has(kRandMass)) {
    v.mass = nominal.mass * d.value[kRandMass];
    v.yaw_inertia = nominal.yaw_inertia * d.value[kRandMass];
  }
  if (s.has(kRandCgX)) {
    v.cg_to_front = nominal.cg_to_front - d.value[kRandCgX];
    v.cg_to_rear = nominal.cg_to_rear + d.value[kRandCgX];
  }
  if (s.has(kRandFriction)) {
    const double f = d.value[kRandFriction];
    v.tire.mu = nominal.tire.mu * f;
    v.tire.lateral.B = nominal.tire.lateral.B / f;
    v.tire.longitudinal.B = nominal.tire.longitudinal.B / f;
  }
  if (s.has(kRandCornering)) v.tire.lateral.B = v.tire.lateral.B * d.value[kRandCornering];
  return v;
}

}  // namespace vdsim
