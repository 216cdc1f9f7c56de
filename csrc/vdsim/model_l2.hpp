// L2: planar two-track model, per-wheel Magic Formula with combined slip, quasi-static
// longitudinal and lateral load transfer, four wheel spins (open differential: the
// powertrain splits torque equally left/right).
#pragma once
#include "model_common.hpp"

namespace vdsim {

// pts (optional): what each wheel's spin rate depends on besides its spin (wheel_rates).
void deriv_l2(const State& s, const WheelInputs& in, const ModelContext& ctx, State& ds,
              Aux* aux, WheelPoints* pts = nullptr);
// The wheel-spin rates only (ds[kW0..]; the rest untouched), bit-identical to deriv_l2's.
void deriv_l2_wheels(const State& s, const WheelInputs& in, const ModelContext& ctx,
                     State& ds);

}  // namespace vdsim
