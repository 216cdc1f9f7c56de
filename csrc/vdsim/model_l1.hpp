// L1: nonlinear single-track (bicycle) model with axle tires evaluated per tire at half
// the axle load (with roll_stiffness_front set: the two tires at half the load -+ the
// axle's share of the lateral transfer, L2's equivalent), quasi-static longitudinal load
// transfer and front/rear wheel spin.
#pragma once
#include "model_common.hpp"

namespace vdsim {

// pts (optional): what each wheel's spin rate depends on besides its spin (wheel_rates).
void deriv_l1(const State& s, const WheelInputs& in, const ModelContext& ctx, State& ds,
              Aux* aux, WheelPoints* pts = nullptr);
// The wheel-spin rates only (ds[kW0..]; the rest untouched), bit-identical to deriv_l1's.
void deriv_l1_wheels(const State& s, const WheelInputs& in, const ModelContext& ctx,
                     State& ds);

}  // namespace vdsim
