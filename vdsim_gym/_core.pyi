# Generated from the built vdsim_gym._core by `python tools/gen_core_stubs.py` (pybind11-stubgen); do not edit.
# tests/test_typing.py fails while this file differs from a fresh one.
"""
vdsim C++ core (private; use vdsim_gym)
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
import typing_extensions
__all__: list[str] = ['ACCKernel', 'AUX_SIZE', 'AccEnvCore', 'AccTaskParams', 'AccWeights', 'ActuatorParams', 'AsyncTimeline', 'BaselineKernel', 'CYCLE_PREVIEW_S', 'CombinedSlipParams', 'Command', 'CommandEnvCore', 'CompositeKernel', 'ConeField', 'CourseData', 'CycleAction', 'CycleFollowerKernel', 'CycleSpeeds', 'DYNO_MAX_PHASES', 'DYNO_TRACE_ROW_SIZE', 'DriveCycleParams', 'DriverMode', 'DynoBenchCore', 'DynoEnvCore', 'DynoParams', 'DynoRealTimeRunner', 'DynoSession', 'DynoSimConfig', 'ENV_FLAGS', 'EnvCoreBase', 'EnvSpec', 'EvalStepper', 'GymStepper', 'IDMKernel', 'Integrator', 'LatencyKind', 'LatencySampler', 'LatencySpec', 'Level', 'Longitudinal', 'LowSpeedParams', 'MFCurve', 'MlpPolicyKernel', 'NetworkChannel', 'NetworkSpec', 'OBS_CLIP', 'OverrunPolicy', 'PATH_FLAGS', 'PATH_OBS_NAMES', 'PATH_PREVIEW_DISTANCES', 'PATH_STEP_INFO_NAMES', 'PATH_TERM_NAMES', 'PISpeedKernel', 'PathEnvCore', 'PathObserver', 'PathTracker', 'Pcg64', 'PedalActuatorParams', 'RandomizationSpec', 'RealTimeRunner', 'RewardWeights', 'RobotDriverCore', 'RobotDriverParams', 'STATE_SIZE', 'SampleTiming', 'SensorSchedule', 'Session', 'ShmLink', 'SilCounters', 'SilExchange', 'SilLink', 'SimConfig', 'SingleTrackModel', 'SpeedEnvCore', 'StanleyKernel', 'TRACE_ROW_SIZE', 'TaskParams', 'TickHook', 'TireParams', 'UdpLink', 'VectorEnvCore', 'VehicleParams', 'axle_tire', 'ceil_ticks', 'default_step_tol', 'disc_hits_footprint', 'draw_latency_seed', 'fast_atan', 'fast_sin_pi', 'floor_ticks', 'limit_long_accel', 'mf_peak_u', 'mf_shape', 'nearest_ticks', 'numpy_draws', 'predict_gap_obs', 'random_course', 'sil_sample', 'solve_box_qp', 'solve_spd_banded', 'tire4_build', 'tire_forces', 'tire_forces4', 'tire_forces_recorded', 'tire_fx_at', 'tire_fx_at4', 'whole_ticks']
class Level:
    """
    Members:
    
      L1
    
      L2
    """
    L1: typing.ClassVar[Level]
    L2: typing.ClassVar[Level]
    __members__: typing.ClassVar[dict[str, Level]]
    @typing.overload
    def __eq__(self, other: Level) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Level) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Longitudinal:
    """
    Members:
    
      force
    
      pedal
    
      accel
    """
    __members__: typing.ClassVar[dict[str, Longitudinal]]
    accel: typing.ClassVar[Longitudinal]
    force: typing.ClassVar[Longitudinal]
    pedal: typing.ClassVar[Longitudinal]
    @typing.overload
    def __eq__(self, other: Longitudinal) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Longitudinal) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Integrator:
    """
    Members:
    
      euler
    
      heun
    
      rk4
    
      semi_implicit
    
      etd2
    
      etd3
    """
    __members__: typing.ClassVar[dict[str, Integrator]]
    etd2: typing.ClassVar[Integrator]
    etd3: typing.ClassVar[Integrator]
    euler: typing.ClassVar[Integrator]
    heun: typing.ClassVar[Integrator]
    rk4: typing.ClassVar[Integrator]
    semi_implicit: typing.ClassVar[Integrator]
    @typing.overload
    def __eq__(self, other: Integrator) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Integrator) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class MFCurve:
    def __init__(self) -> None:
        ...
    @property
    def B(self) -> float:
        ...
    @B.setter
    def B(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def C(self) -> float:
        ...
    @C.setter
    def C(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def D(self) -> float:
        ...
    @D.setter
    def D(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def E(self) -> float:
        ...
    @E.setter
    def E(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class CombinedSlipParams:
    weighting: bool
    def __init__(self) -> None:
        ...
    @property
    def rbx1(self) -> float:
        ...
    @rbx1.setter
    def rbx1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rbx2(self) -> float:
        ...
    @rbx2.setter
    def rbx2(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rby1(self) -> float:
        ...
    @rby1.setter
    def rby1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rby2(self) -> float:
        ...
    @rby2.setter
    def rby2(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rby3(self) -> float:
        ...
    @rby3.setter
    def rby3(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rcx1(self) -> float:
        ...
    @rcx1.setter
    def rcx1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rcy1(self) -> float:
        ...
    @rcy1.setter
    def rcy1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rex1(self) -> float:
        ...
    @rex1.setter
    def rex1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rey1(self) -> float:
        ...
    @rey1.setter
    def rey1(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class TireParams:
    combined: CombinedSlipParams
    lateral: MFCurve
    longitudinal: MFCurve
    def __init__(self) -> None:
        ...
    @property
    def fz_nominal(self) -> float:
        ...
    @fz_nominal.setter
    def fz_nominal(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu(self) -> float:
        ...
    @mu.setter
    def mu(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def pdy2(self) -> float:
        ...
    @pdy2.setter
    def pdy2(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def pky2(self) -> float:
        ...
    @pky2.setter
    def pky2(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def relaxation_length(self) -> float:
        ...
    @relaxation_length.setter
    def relaxation_length(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class VehicleParams:
    tire: TireParams
    def __init__(self) -> None:
        ...
    def total_brake_torque(self) -> float:
        ...
    @property
    def accel_filter_tau(self) -> float:
        ...
    @accel_filter_tau.setter
    def accel_filter_tau(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def accel_ki(self) -> float:
        ...
    @accel_ki.setter
    def accel_ki(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def accel_kp(self) -> float:
        ...
    @accel_kp.setter
    def accel_kp(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def air_density(self) -> float:
        ...
    @air_density.setter
    def air_density(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def body_width(self) -> float:
        ...
    @body_width.setter
    def body_width(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def brake_torque_max(self) -> float:
        ...
    @brake_torque_max.setter
    def brake_torque_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def cg_height(self) -> float:
        ...
    @cg_height.setter
    def cg_height(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def cg_to_front(self) -> float:
        ...
    @cg_to_front.setter
    def cg_to_front(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def cg_to_rear(self) -> float:
        ...
    @cg_to_rear.setter
    def cg_to_rear(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def compliance_steer_front(self) -> float:
        ...
    @compliance_steer_front.setter
    def compliance_steer_front(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def compliance_steer_rear(self) -> float:
        ...
    @compliance_steer_rear.setter
    def compliance_steer_rear(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def diff_coupling_front(self) -> float:
        ...
    @diff_coupling_front.setter
    def diff_coupling_front(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def diff_coupling_rear(self) -> float:
        ...
    @diff_coupling_rear.setter
    def diff_coupling_rear(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def drag_coefficient(self) -> float:
        ...
    @drag_coefficient.setter
    def drag_coefficient(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def drive_power_max(self) -> float:
        ...
    @drive_power_max.setter
    def drive_power_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def drive_torque_max(self) -> float:
        ...
    @drive_torque_max.setter
    def drive_torque_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def front_brake_share(self) -> float:
        ...
    @front_brake_share.setter
    def front_brake_share(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def front_drive_share(self) -> float:
        ...
    @front_drive_share.setter
    def front_drive_share(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def front_overhang(self) -> float:
        ...
    @front_overhang.setter
    def front_overhang(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def frontal_area(self) -> float:
        ...
    @frontal_area.setter
    def frontal_area(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def load_transfer_tau(self) -> float:
        ...
    @load_transfer_tau.setter
    def load_transfer_tau(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mass(self) -> float:
        ...
    @mass.setter
    def mass(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_acceleration(self) -> float:
        ...
    @max_acceleration.setter
    def max_acceleration(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_deceleration(self) -> float:
        ...
    @max_deceleration.setter
    def max_deceleration(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_steer(self) -> float:
        ...
    @max_steer.setter
    def max_steer(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rear_overhang(self) -> float:
        ...
    @rear_overhang.setter
    def rear_overhang(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def roll_stiffness_front(self) -> float:
        ...
    @roll_stiffness_front.setter
    def roll_stiffness_front(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rolling_resistance(self) -> float:
        ...
    @rolling_resistance.setter
    def rolling_resistance(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def steering_ratio(self) -> float:
        ...
    @steering_ratio.setter
    def steering_ratio(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def track(self) -> float:
        ...
    @track.setter
    def track(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def wheel_inertia(self) -> float:
        ...
    @wheel_inertia.setter
    def wheel_inertia(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def wheel_radius(self) -> float:
        ...
    @wheel_radius.setter
    def wheel_radius(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def yaw_inertia(self) -> float:
        ...
    @yaw_inertia.setter
    def yaw_inertia(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class LowSpeedParams:
    def __init__(self) -> None:
        ...
    @property
    def kinematic_blend_speed(self) -> float:
        ...
    @kinematic_blend_speed.setter
    def kinematic_blend_speed(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def kinematic_tau(self) -> float:
        ...
    @kinematic_tau.setter
    def kinematic_tau(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rolling_speed_eps(self) -> float:
        ...
    @rolling_speed_eps.setter
    def rolling_speed_eps(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def slip_speed_floor(self) -> float:
        ...
    @slip_speed_floor.setter
    def slip_speed_floor(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class ActuatorParams:
    enabled: bool
    def __init__(self) -> None:
        ...
    @property
    def dead_time(self) -> float:
        ...
    @dead_time.setter
    def dead_time(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_angle(self) -> float:
        ...
    @max_angle.setter
    def max_angle(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rate_limit(self) -> float:
        ...
    @rate_limit.setter
    def rate_limit(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def time_constant(self) -> float:
        ...
    @time_constant.setter
    def time_constant(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class SimConfig:
    actuator: ActuatorParams
    integrator: Integrator
    level: Level
    longitudinal: Longitudinal
    low: LowSpeedParams
    def __init__(self) -> None:
        ...
    @property
    def actuator_dead_ticks(self) -> int:
        ...
    @actuator_dead_ticks.setter
    def actuator_dead_ticks(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def longitudinal_dead_ticks(self) -> int:
        ...
    @longitudinal_dead_ticks.setter
    def longitudinal_dead_ticks(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def steer_dead_ticks(self) -> int:
        ...
    @steer_dead_ticks.setter
    def steer_dead_ticks(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def step_ticks(self) -> int:
        ...
    @step_ticks.setter
    def step_ticks(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def step_tol(self) -> float:
        ...
    @step_tol.setter
    def step_tol(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def substep_dt(self) -> float:
        ...
    @substep_dt.setter
    def substep_dt(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class Command:
    def __init__(self, steer: typing.SupportsFloat | typing.SupportsIndex = 0.0, longitudinal: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    @property
    def longitudinal(self) -> float:
        ...
    @longitudinal.setter
    def longitudinal(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def steer(self) -> float:
        ...
    @steer.setter
    def steer(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class Session:
    def __init__(self, vehicle: VehicleParams, config: SimConfig) -> None:
        ...
    def advance(self, n: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        n substeps (GIL released; Ctrl-C stops a long advance)
        """
    def command_in_force(self, tick: typing.SupportsInt | typing.SupportsIndex | None = None) -> tuple[int, int, float, float]:
        """
        (sample_tick, apply_tick, steer, longitudinal) of the command in force now, or during substep `tick` (at or after now); sample_tick -1: not a sample
        """
    def command_now(self, steer: typing.SupportsFloat | typing.SupportsIndex, longitudinal: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def discard_after(self, tick: typing.SupportsInt | typing.SupportsIndex) -> int:
        """
        Drops the pending commands due after `tick` (a network's overtaken packets); how many
        """
    def drop_pending(self) -> None:
        ...
    def get_aux(self, out: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
    def get_state(self, out: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
    def record_trace_row(self) -> None:
        """
        The row of the current tick (a run's closing row), unless already recorded
        """
    def reset(self, x: typing.SupportsFloat | typing.SupportsIndex, y: typing.SupportsFloat | typing.SupportsIndex, psi: typing.SupportsFloat | typing.SupportsIndex, vx: typing.SupportsFloat | typing.SupportsIndex, vy: typing.SupportsFloat | typing.SupportsIndex, r: typing.SupportsFloat | typing.SupportsIndex, initial: Command = ...) -> None:
        ...
    def schedule(self, apply_tick: typing.SupportsInt | typing.SupportsIndex, steer: typing.SupportsFloat | typing.SupportsIndex, longitudinal: typing.SupportsFloat | typing.SupportsIndex, sample_tick: typing.SupportsInt | typing.SupportsIndex = -1) -> None:
        """
        A command applying at apply_tick, sampled at sample_tick
        """
    def set_actuator(self, actuator: ActuatorParams, dead_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the steering actuator chain (its dead time in ticks); reset() after
        """
    def set_state(self, state: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
    def set_vehicle(self, vehicle: VehicleParams) -> None:
        """
        Replace the vehicle parameters and all that the session derives from them (axle tires, tire shape, coupling, slip lag), as the constructor does; reset() after. A refused vehicle (ValueError) leaves the session unchanged.
        """
    def take_trace(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The rows recorded so far, (n, TRACE_ROW_SIZE); moved out
        """
    @property
    def actuator(self) -> ActuatorParams:
        """
        A copy of the steering actuator parameters in use
        """
    @property
    def command(self) -> tuple[float, float]:
        ...
    @property
    def pending(self) -> int:
        ...
    @property
    def realized_steer(self) -> float:
        ...
    @property
    def steps_rejected(self) -> int:
        """
        integration steps rejected and retaken since the last reset
        """
    @property
    def steps_taken(self) -> int:
        """
        integration steps taken since the last reset
        """
    @property
    def tick(self) -> int:
        ...
    @property
    def time(self) -> float:
        ...
    @property
    def trace_decimation(self) -> int:
        """
        Record a trace row every d substeps (0: off); reset() and take_trace() clear the rows
        """
    @trace_decimation.setter
    def trace_decimation(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def vehicle(self) -> VehicleParams:
        """
        A copy of the vehicle parameters in use
        """
class Pcg64:
    """
    numpy's PCG64 seeded by SeedSequence, in C++ (vdsim/numpy_draws.hpp)
    """
    def __init__(self, entropy: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        From SeedSequence's entropy words (little-endian 32-bit)
        """
    @property
    def capsule(self) -> typing_extensions.CapsuleType:
        """
        The bitgen_t capsule, as a numpy BitGenerator's (valid while this object is)
        """
    @property
    def state(self) -> dict:
        """
        numpy's PCG64.state of this generator
        """
class LatencyKind:
    """
    Members:
    
      fixed
    
      uniform
    
      normal
    
      measured
    
      empirical
    """
    __members__: typing.ClassVar[dict[str, LatencyKind]]
    empirical: typing.ClassVar[LatencyKind]
    fixed: typing.ClassVar[LatencyKind]
    measured: typing.ClassVar[LatencyKind]
    normal: typing.ClassVar[LatencyKind]
    uniform: typing.ClassVar[LatencyKind]
    @typing.overload
    def __eq__(self, other: LatencyKind) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: LatencyKind) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class OverrunPolicy:
    """
    Members:
    
      skip
    
      queue
    """
    __members__: typing.ClassVar[dict[str, OverrunPolicy]]
    queue: typing.ClassVar[OverrunPolicy]
    skip: typing.ClassVar[OverrunPolicy]
    @typing.overload
    def __eq__(self, other: OverrunPolicy) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: OverrunPolicy) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class LatencySpec:
    kind: LatencyKind
    def __init__(self) -> None:
        ...
    @property
    def c(self) -> float:
        ...
    @c.setter
    def c(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def hi(self) -> float:
        ...
    @hi.setter
    def hi(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def lo(self) -> float:
        ...
    @lo.setter
    def lo(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mu(self) -> float:
        ...
    @mu.setter
    def mu(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def samples(self) -> list[float]:
        ...
    @samples.setter
    def samples(self, arg0: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
    @property
    def sd(self) -> float:
        ...
    @sd.setter
    def sd(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def seed(self) -> int:
        ...
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class NetworkSpec:
    burst: bool
    jitter: LatencySpec
    def __init__(self) -> None:
        ...
    @property
    def drop(self) -> float:
        ...
    @drop.setter
    def drop(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def p_bg(self) -> float:
        ...
    @p_bg.setter
    def p_bg(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def p_gb(self) -> float:
        ...
    @p_gb.setter
    def p_gb(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def seed(self) -> int:
        ...
    @seed.setter
    def seed(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class NetworkChannel:
    def __init__(self, spec: NetworkSpec) -> None:
        ...
    def delay(self) -> float:
        """
        The next command's network delay [s]
        """
    def lost(self) -> bool:
        """
        Whether the next command is lost (one draw)
        """
    def lost_many(self, n: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.bool]:
        """
        The next n commands' losses (tests and statistics)
        """
    def reseed(self, seed: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class LatencySampler:
    def __init__(self, spec: LatencySpec) -> None:
        ...
    def draw(self) -> float:
        ...
    def draw_many(self, n: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def reseed(self, seed: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class TickHook:
    """
    What the real-time runner calls after every substep (mode C's sensor captures): an env core, or a SessionSensor
    """
class SensorSchedule:
    """
    The sensor delay's capture ticks (sensor.hpp): what the callback form's event loop stops the plant at
    """
    def __init__(self, age: LatencySpec, substep_dt: typing.SupportsFloat | typing.SupportsIndex, period_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def captures(self) -> list:
        """
        (grid index, capture tick) of the planned captures not yet released
        """
    def plan(self, until: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Plans the captures up to tick `until` (drawing their ages in grid order)
        """
    def release_before(self, j: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def reset(self, seed: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class SampleTiming:
    @property
    def apply_tick(self) -> int:
        ...
    @property
    def c(self) -> float:
        ...
    @property
    def call_tick(self) -> int:
        ...
    @property
    def k(self) -> int:
        ...
    @property
    def overrun(self) -> bool:
        ...
    @property
    def sample_tick(self) -> int:
        ...
    @property
    def t_finish(self) -> float:
        ...
    @property
    def t_start(self) -> float:
        ...
class AsyncTimeline:
    def __init__(self, substep_dt: typing.SupportsFloat | typing.SupportsIndex, period_ticks: typing.SupportsInt | typing.SupportsIndex, policy: OverrunPolicy) -> None:
        ...
    def call_tick(self, k: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def commit(self, k: typing.SupportsInt | typing.SupportsIndex, c: typing.SupportsFloat | typing.SupportsIndex) -> SampleTiming:
        ...
    def grid_time(self, k: typing.SupportsInt | typing.SupportsIndex) -> float:
        ...
    def reset(self) -> None:
        ...
    @property
    def n_overrun(self) -> int:
        ...
    @property
    def n_skipped(self) -> int:
        ...
    @property
    def next_k(self) -> int:
        ...
    @property
    def period_ticks(self) -> int:
        ...
class RandomizationSpec:
    """
    What an env core randomizes per episode (randomization.hpp): the ranges in draw order and the nominal parameters
    """
    actuator: ActuatorParams
    network: NetworkSpec
    overrun: OverrunPolicy
    vehicle: VehicleParams
    def __init__(self) -> None:
        ...
    @property
    def actuator_dead_ticks(self) -> int:
        ...
    @actuator_dead_ticks.setter
    def actuator_dead_ticks(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def hi(self) -> list[float]:
        ...
    @hi.setter
    def hi(self, arg0: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
    @property
    def keys(self) -> list[int]:
        ...
    @keys.setter
    def keys(self, arg0: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    @property
    def lo(self) -> list[float]:
        ...
    @lo.setter
    def lo(self, arg0: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
    @property
    def longitudinal_dead_ticks(self) -> int:
        ...
    @longitudinal_dead_ticks.setter
    def longitudinal_dead_ticks(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def steer_dead_ticks(self) -> int:
        ...
    @steer_dead_ticks.setter
    def steer_dead_ticks(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class EnvSpec:
    @property
    def action_names(self) -> tuple:
        ...
    @property
    def default_weights(self) -> dict:
        """
        term name -> the task's default reward weight
        """
    @property
    def flags(self) -> dict:
        """
        flag name -> bit: the shared ones and the task's own
        """
    @property
    def info_names(self) -> tuple:
        ...
    @property
    def obs_names(self) -> tuple:
        ...
    @property
    def summary_names(self) -> tuple:
        ...
    @property
    def term_names(self) -> tuple:
        ...
class RewardWeights:
    def __init__(self) -> None:
        ...
    @property
    def cone(self) -> float:
        ...
    @cone.setter
    def cone(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def heading(self) -> float:
        ...
    @heading.setter
    def heading(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def progress(self) -> float:
        ...
    @progress.setter
    def progress(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def smoothness(self) -> float:
        ...
    @smoothness.setter
    def smoothness(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def speed(self) -> float:
        ...
    @speed.setter
    def speed(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def terminal(self) -> float:
        ...
    @terminal.setter
    def terminal(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def tracking(self) -> float:
        ...
    @tracking.setter
    def tracking(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class TaskParams:
    terminate_on_cone: bool
    weights: RewardWeights
    def __init__(self) -> None:
        ...
    @property
    def beta_min_speed(self) -> float:
        ...
    @beta_min_speed.setter
    def beta_min_speed(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def cone_radius(self) -> float:
        ...
    @cone_radius.setter
    def cone_radius(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def corridor_half_width(self) -> float:
        ...
    @corridor_half_width.setter
    def corridor_half_width(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def spin_beta(self) -> float:
        ...
    @spin_beta.setter
    def spin_beta(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def spin_heading(self) -> float:
        ...
    @spin_heading.setter
    def spin_heading(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def stall_speed_fraction(self) -> float:
        ...
    @stall_speed_fraction.setter
    def stall_speed_fraction(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def stall_time(self) -> float:
        ...
    @stall_time.setter
    def stall_time(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ticks_per_period(self) -> int:
        ...
    @ticks_per_period.setter
    def ticks_per_period(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class PathTracker:
    def __init__(self, path: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
    def point_at(self, s: typing.SupportsFloat | typing.SupportsIndex) -> tuple[float, float]:
        ...
    def project(self, x: typing.SupportsFloat | typing.SupportsIndex, y: typing.SupportsFloat | typing.SupportsIndex, hint: typing.SupportsInt | typing.SupportsIndex = -1) -> tuple:
        """
        (s, index, e_y, heading, kappa, v_ref) of the closest path point
        """
    @property
    def length(self) -> float:
        ...
class PathObserver:
    def observe(self, X: typing.SupportsFloat | typing.SupportsIndex, Y: typing.SupportsFloat | typing.SupportsIndex, psi: typing.SupportsFloat | typing.SupportsIndex, vx: typing.SupportsFloat | typing.SupportsIndex, vy: typing.SupportsFloat | typing.SupportsIndex, r: typing.SupportsFloat | typing.SupportsIndex, ax: typing.SupportsFloat | typing.SupportsIndex, ay: typing.SupportsFloat | typing.SupportsIndex, delta_rw: typing.SupportsFloat | typing.SupportsIndex, prev_steer: typing.SupportsFloat | typing.SupportsIndex, prev_long: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float32]:
        """
        The path env's observation (float32, PATH_OBS_NAMES) at this finite state; projects from the previous call's segment
        """
    def reset(self) -> None:
        """
        Forget the projection hint (the next observation searches the whole path)
        """
    @property
    def obs_scale(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
class CourseData:
    """
    A course's path, cones and corridor, built once and shared by the path cores that take it (set_course_data)
    """
    def __init__(self, path: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], cones: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], corridor_half_width: typing.SupportsFloat | typing.SupportsIndex, start_speed: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def length(self) -> float:
        ...
class ConeField:
    def __init__(self, cones: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], path: PathTracker) -> None:
        ...
    def reset_hits(self) -> None:
        ...
    def update(self, x: typing.SupportsFloat | typing.SupportsIndex, y: typing.SupportsFloat | typing.SupportsIndex, psi: typing.SupportsFloat | typing.SupportsIndex, s: typing.SupportsFloat | typing.SupportsIndex, front: typing.SupportsFloat | typing.SupportsIndex, rear: typing.SupportsFloat | typing.SupportsIndex, half_width: typing.SupportsFloat | typing.SupportsIndex, radius: typing.SupportsFloat | typing.SupportsIndex) -> int:
        ...
    @property
    def hits(self) -> numpy.typing.NDArray[numpy.bool]:
        ...
    @property
    def total_hits(self) -> int:
        ...
class EnvCoreBase(TickHook):
    def summary(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The episode so far (summary_names): steps, return, time, the task's fields
        """
    @property
    def action_names(self) -> tuple:
        ...
    @property
    def info_names(self) -> tuple:
        ...
    @property
    def obs_names(self) -> tuple:
        ...
    @property
    def spec(self) -> EnvSpec:
        """
        This core's spec (with its action history's columns)
        """
    @property
    def summary_names(self) -> tuple:
        ...
    @property
    def term_names(self) -> tuple:
        ...
class PathEnvCore(EnvCoreBase):
    @staticmethod
    def default_spec() -> EnvSpec:
        """
        The spec of this env core with the task's default parameters and no action history: names, default reward weights, flag bits (what the Python env module reads at import)
        """
    def __getstate__(self) -> bytes:
        ...
    def __init__(self, session: Session, task: TaskParams) -> None:
        """
        A path task core with its own session built from the (validated) session's params
        """
    def __reduce_ex__(self, protocol: typing.SupportsInt | typing.SupportsIndex) -> tuple:
        ...
    def __setstate__(self, arg0: bytes) -> None:
        ...
    def advance_physics(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Benchmark reference: one control period of physics only
        """
    def after_tick(self) -> None:
        """
        Mode C: the sensor's captures due at the plant's tick now
        """
    def apply_command(self, steer: typing.SupportsFloat | typing.SupportsIndex, longitudinal: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def clear_latency(self) -> None:
        ...
    def clear_network(self) -> None:
        ...
    def clear_obs_delay(self) -> None:
        ...
    def command_for(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[float, float]:
        """
        The plant command (steer, longitudinal) of an action now
        """
    def command_from_action(self, a_steer: typing.SupportsFloat | typing.SupportsIndex, a_long: typing.SupportsFloat | typing.SupportsIndex) -> tuple[float, float]:
        ...
    def command_in_force(self, tick: typing.SupportsInt | typing.SupportsIndex | None = None) -> tuple[int, int, float, float]:
        """
        (sample_tick, apply_tick, steer, longitudinal) of the command in force now, or during substep `tick` (at or after now: a pending one due by then); sample_tick -1 is the reset command
        """
    def course_arrays(self) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], float]:
        """
        This course's path (n, 2), speed (n,) and start speed (copies)
        """
    def draw_start(self, bit_generator: typing.Any) -> tuple:
        """
        This episode's start (reset()'s state), drawn from a numpy BitGenerator (the env's np_random.bit_generator), with what the task sets with it
        """
    def latch(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Mode C: the action's command takes effect now
        """
    def obs_scale(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Physical value of each observation column = obs * scale: the task's scales, then 1 for the action history's columns
        """
    def observer(self) -> PathObserver:
        """
        A PathObserver on this core's course (set_course_data first) and vehicle
        """
    def peek(self, obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64]) -> int:
        """
        Mode C: the observation and info of the plant now (no advance, no scoring); flags
        """
    def randomize_episode(self, bit_generator: typing.Any) -> None:
        """
        This episode's draws from a numpy BitGenerator, applied (reset after)
        """
    def reset(self, state: typing.Annotated[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], "FixedSize(6)"], obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64], latency_seed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Place the plant; with latency, restart the timeline and reseed the delays
        """
    def restore(self, snapshot: PathEnvCore) -> None:
        """
        This core becomes a copy of `snapshot` (a snapshot() of a core of this type): the same actions then step it bit for bit as they stepped the snapshot's source
        """
    def run_to_end(self) -> None:
        """
        The plant advanced to run_end without a sample (GIL released)
        """
    def sensor_read(self, obs: typing.Annotated[numpy.typing.ArrayLike, numpy.float32]) -> int:
        """
        Mode C: the newest grid sample's captured observation into obs's task columns; its capture tick
        """
    def set_action_history(self, k: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Append the last k actions to the observation (changes obs_names; reset after)
        """
    def set_actuator(self, actuator: ActuatorParams, dead_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's steering actuator chain; reset() after
        """
    def set_channel_delays(self, steer_ticks: typing.SupportsInt | typing.SupportsIndex, longitudinal_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's per-channel actuation dead times [ticks]; reset() after
        """
    def set_course_data(self, data: CourseData) -> None:
        """
        The course of a CourseData, shared (its path and cones are not copied)
        """
    def set_latency(self, spec: LatencySpec, policy: OverrunPolicy) -> None:
        """
        Mode-B latency (takes effect at the next reset)
        """
    def set_network(self, spec: NetworkSpec, policy: OverrunPolicy) -> None:
        """
        A network between controller and plant: losses, bursts, delay (next reset)
        """
    def set_obs_delay(self, age: LatencySpec) -> None:
        """
        A sensor delay: each step's observation is the plant's at its capture tick, the age drawn from `age` per grid sample (next reset)
        """
    def set_random_course(self, n: typing.SupportsInt | typing.SupportsIndex, length: typing.SupportsFloat | typing.SupportsIndex, k_bound: typing.SupportsFloat | typing.SupportsIndex, v_lo: typing.SupportsFloat | typing.SupportsIndex, v_hi: typing.SupportsFloat | typing.SupportsIndex, max_lat_accel: typing.SupportsFloat | typing.SupportsIndex, corridor_half_width: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        A new random course every episode, drawn by draw_start (courses.random_course_spec)
        """
    def set_randomization(self, spec: RandomizationSpec) -> None:
        """
        Draw and apply these ranges every episode (randomize_episode, reset_episode)
        """
    def set_vehicle(self, vehicle: VehicleParams) -> None:
        """
        Replace the plant's vehicle parameters (and the task's values derived from them, e.g. the footprint); reset() after
        """
    def snapshot(self) -> PathEnvCore:
        """
        A copy of this core, parameters, configuration and whole state (plant, task, command schedule, delay lines, sensor ring, network chain, generators, episode counters): what restore() puts back
        """
    def step(self, a_steer: typing.SupportsFloat | typing.SupportsIndex, a_long: typing.SupportsFloat | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], terms: numpy.typing.NDArray[numpy.float64], info: numpy.typing.NDArray[numpy.float64], measured_delay: typing.SupportsFloat | typing.SupportsIndex = ...) -> int:
        """
        One env step (GIL released); measured_delay [s] for LatencyKind.measured
        """
    @property
    def action_history(self) -> int:
        ...
    @property
    def cone_hits(self) -> numpy.typing.NDArray[numpy.bool]:
        ...
    @property
    def control_period(self) -> float:
        ...
    @property
    def course_points_built(self) -> int:
        """
        Points of the course built so far: a drawn course is built as far as it is read (its whole length once asked for: course_arrays, path_length)
        """
    @property
    def course_serial(self) -> int:
        """
        Bumped at every new course
        """
    @property
    def draws_start(self) -> bool:
        """
        Whether draw_start() draws the task's start in C++
        """
    @property
    def episode_draws(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The last episode's draws by RandomKey (DRAW_KEYS' order; NaN where none)
        """
    @property
    def grid_rows(self) -> bool:
        """
        An evaluation's grid rows: the plant stops at each grid tick a step passes and records its state there (EvalStepper.columns reads them); setting it clears the rows
        """
    @grid_rows.setter
    def grid_rows(self, arg1: bool) -> None:
        ...
    @property
    def has_latency(self) -> bool:
        ...
    @property
    def has_network(self) -> bool:
        ...
    @property
    def has_obs_delay(self) -> bool:
        ...
    @property
    def n_discarded(self) -> int:
        ...
    @property
    def n_lost(self) -> int:
        ...
    @property
    def n_overrun(self) -> int:
        ...
    @property
    def n_skipped(self) -> int:
        ...
    @property
    def next_k(self) -> int:
        ...
    @property
    def next_sample(self) -> tuple[int, int, float]:
        """
        (k, call_tick, t_start [s]) of the next sample
        """
    @property
    def path_length(self) -> float:
        ...
    @property
    def pending_commands(self) -> list:
        """
        The scheduled commands not yet applied, by apply tick: (sample_tick, apply_tick, steer, longitudinal)
        """
    @property
    def randomizes(self) -> bool:
        ...
    @property
    def run_end(self) -> int:
        """
        An evaluation's end tick (None: none, the largest int64): no step advances the plant past it (run_to_end advances it there)
        """
    @run_end.setter
    def run_end(self, arg1: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def session(self) -> Session:
        ...
    @property
    def task(self) -> TaskParams:
        ...
    @property
    def task_info_size(self) -> int:
        ...
    @property
    def tick(self) -> int:
        """
        The plant's substep counter
        """
    @property
    def time(self) -> float:
        """
        The plant's time [s]
        """
    @property
    def time_limit_ticks(self) -> int:
        """
        Episode time limit in substeps from reset (0: none); truncates with TIME_LIMIT
        """
    @time_limit_ticks.setter
    def time_limit_ticks(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class SpeedEnvCore(EnvCoreBase):
    @staticmethod
    def default_spec() -> EnvSpec:
        """
        The spec of this env core with the task's default parameters and no action history: names, default reward weights, flag bits (what the Python env module reads at import)
        """
    def __getstate__(self) -> bytes:
        ...
    def __init__(self, session: Session, ticks_per_period: typing.SupportsInt | typing.SupportsIndex, w_speed: typing.SupportsFloat | typing.SupportsIndex = 1.0, w_smoothness: typing.SupportsFloat | typing.SupportsIndex = 0.05) -> None:
        """
        The speed-tracking test task (one longitudinal action), its own session
        """
    def __reduce_ex__(self, protocol: typing.SupportsInt | typing.SupportsIndex) -> tuple:
        ...
    def __setstate__(self, arg0: bytes) -> None:
        ...
    def advance_physics(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Benchmark reference: one control period of physics only
        """
    def after_tick(self) -> None:
        """
        Mode C: the sensor's captures due at the plant's tick now
        """
    def clear_latency(self) -> None:
        ...
    def clear_network(self) -> None:
        ...
    def clear_obs_delay(self) -> None:
        ...
    def command_for(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[float, float]:
        """
        The plant command (steer, longitudinal) of an action now
        """
    def command_in_force(self, tick: typing.SupportsInt | typing.SupportsIndex | None = None) -> tuple[int, int, float, float]:
        """
        (sample_tick, apply_tick, steer, longitudinal) of the command in force now, or during substep `tick` (at or after now: a pending one due by then); sample_tick -1 is the reset command
        """
    def latch(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Mode C: the action's command takes effect now
        """
    def obs_scale(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Physical value of each observation column = obs * scale: the task's scales, then 1 for the action history's columns
        """
    def peek(self, obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64]) -> int:
        """
        Mode C: the observation and info of the plant now (no advance, no scoring); flags
        """
    def randomize_episode(self, bit_generator: typing.Any) -> None:
        """
        This episode's draws from a numpy BitGenerator, applied (reset after)
        """
    def reset(self, state: typing.Annotated[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], "FixedSize(2)"], obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64], latency_seed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Place the plant; with latency, restart the timeline and reseed the delays
        """
    def restore(self, snapshot: SpeedEnvCore) -> None:
        """
        This core becomes a copy of `snapshot` (a snapshot() of a core of this type): the same actions then step it bit for bit as they stepped the snapshot's source
        """
    def run_to_end(self) -> None:
        """
        The plant advanced to run_end without a sample (GIL released)
        """
    def sensor_read(self, obs: typing.Annotated[numpy.typing.ArrayLike, numpy.float32]) -> int:
        """
        Mode C: the newest grid sample's captured observation into obs's task columns; its capture tick
        """
    def set_action_history(self, k: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Append the last k actions to the observation (changes obs_names; reset after)
        """
    def set_actuator(self, actuator: ActuatorParams, dead_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's steering actuator chain; reset() after
        """
    def set_channel_delays(self, steer_ticks: typing.SupportsInt | typing.SupportsIndex, longitudinal_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's per-channel actuation dead times [ticks]; reset() after
        """
    def set_latency(self, spec: LatencySpec, policy: OverrunPolicy) -> None:
        """
        Mode-B latency (takes effect at the next reset)
        """
    def set_network(self, spec: NetworkSpec, policy: OverrunPolicy) -> None:
        """
        A network between controller and plant: losses, bursts, delay (next reset)
        """
    def set_obs_delay(self, age: LatencySpec) -> None:
        """
        A sensor delay: each step's observation is the plant's at its capture tick, the age drawn from `age` per grid sample (next reset)
        """
    def set_randomization(self, spec: RandomizationSpec) -> None:
        """
        Draw and apply these ranges every episode (randomize_episode, reset_episode)
        """
    def set_vehicle(self, vehicle: VehicleParams) -> None:
        """
        Replace the plant's vehicle parameters (and the task's values derived from them, e.g. the footprint); reset() after
        """
    def snapshot(self) -> SpeedEnvCore:
        """
        A copy of this core, parameters, configuration and whole state (plant, task, command schedule, delay lines, sensor ring, network chain, generators, episode counters): what restore() puts back
        """
    def step(self, action: typing.SupportsFloat | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], terms: numpy.typing.NDArray[numpy.float64], info: numpy.typing.NDArray[numpy.float64], measured_delay: typing.SupportsFloat | typing.SupportsIndex = ...) -> int:
        """
        One env step (GIL released); measured_delay [s] for LatencyKind.measured
        """
    @property
    def action_history(self) -> int:
        ...
    @property
    def control_period(self) -> float:
        ...
    @property
    def draws_start(self) -> bool:
        """
        Whether draw_start() draws the task's start in C++
        """
    @property
    def episode_draws(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The last episode's draws by RandomKey (DRAW_KEYS' order; NaN where none)
        """
    @property
    def grid_rows(self) -> bool:
        """
        An evaluation's grid rows: the plant stops at each grid tick a step passes and records its state there (EvalStepper.columns reads them); setting it clears the rows
        """
    @grid_rows.setter
    def grid_rows(self, arg1: bool) -> None:
        ...
    @property
    def has_latency(self) -> bool:
        ...
    @property
    def has_network(self) -> bool:
        ...
    @property
    def has_obs_delay(self) -> bool:
        ...
    @property
    def n_discarded(self) -> int:
        ...
    @property
    def n_lost(self) -> int:
        ...
    @property
    def n_overrun(self) -> int:
        ...
    @property
    def n_skipped(self) -> int:
        ...
    @property
    def next_k(self) -> int:
        ...
    @property
    def next_sample(self) -> tuple[int, int, float]:
        """
        (k, call_tick, t_start [s]) of the next sample
        """
    @property
    def pending_commands(self) -> list:
        """
        The scheduled commands not yet applied, by apply tick: (sample_tick, apply_tick, steer, longitudinal)
        """
    @property
    def randomizes(self) -> bool:
        ...
    @property
    def run_end(self) -> int:
        """
        An evaluation's end tick (None: none, the largest int64): no step advances the plant past it (run_to_end advances it there)
        """
    @run_end.setter
    def run_end(self, arg1: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def session(self) -> Session:
        ...
    @property
    def task_info_size(self) -> int:
        ...
    @property
    def tick(self) -> int:
        """
        The plant's substep counter
        """
    @property
    def time(self) -> float:
        """
        The plant's time [s]
        """
    @property
    def time_limit_ticks(self) -> int:
        """
        Episode time limit in substeps from reset (0: none); truncates with TIME_LIMIT
        """
    @time_limit_ticks.setter
    def time_limit_ticks(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class CommandEnvCore(EnvCoreBase):
    @staticmethod
    def default_spec() -> EnvSpec:
        """
        The spec of this env core with the task's default parameters and no action history: names, default reward weights, flag bits (what the Python env module reads at import)
        """
    def __getstate__(self) -> bytes:
        ...
    def __init__(self, session: Session, ticks_per_period: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        The command task (ClosedLoopEval's callback form): the plant command as the action, the plant's state as the observation; its own session
        """
    def __reduce_ex__(self, protocol: typing.SupportsInt | typing.SupportsIndex) -> tuple:
        ...
    def __setstate__(self, arg0: bytes) -> None:
        ...
    def advance_physics(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Benchmark reference: one control period of physics only
        """
    def after_tick(self) -> None:
        """
        Mode C: the sensor's captures due at the plant's tick now
        """
    def clear_latency(self) -> None:
        ...
    def clear_network(self) -> None:
        ...
    def clear_obs_delay(self) -> None:
        ...
    def command_for(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[float, float]:
        """
        The plant command (steer, longitudinal) of an action now
        """
    def command_in_force(self, tick: typing.SupportsInt | typing.SupportsIndex | None = None) -> tuple[int, int, float, float]:
        """
        (sample_tick, apply_tick, steer, longitudinal) of the command in force now, or during substep `tick` (at or after now: a pending one due by then); sample_tick -1 is the reset command
        """
    def latch(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Mode C: the action's command takes effect now
        """
    def obs_scale(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Physical value of each observation column = obs * scale: the task's scales, then 1 for the action history's columns
        """
    def peek(self, obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64]) -> int:
        """
        Mode C: the observation and info of the plant now (no advance, no scoring); flags
        """
    def randomize_episode(self, bit_generator: typing.Any) -> None:
        """
        This episode's draws from a numpy BitGenerator, applied (reset after)
        """
    def reset(self, state: typing.Annotated[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], "FixedSize(6)"], obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64], latency_seed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Place the plant; with latency, restart the timeline and reseed the delays
        """
    def restore(self, snapshot: CommandEnvCore) -> None:
        """
        This core becomes a copy of `snapshot` (a snapshot() of a core of this type): the same actions then step it bit for bit as they stepped the snapshot's source
        """
    def run_to_end(self) -> None:
        """
        The plant advanced to run_end without a sample (GIL released)
        """
    def sensor_read(self, obs: typing.Annotated[numpy.typing.ArrayLike, numpy.float32]) -> int:
        """
        Mode C: the newest grid sample's captured observation into obs's task columns; its capture tick
        """
    def set_action_history(self, k: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Append the last k actions to the observation (changes obs_names; reset after)
        """
    def set_actuator(self, actuator: ActuatorParams, dead_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's steering actuator chain; reset() after
        """
    def set_channel_delays(self, steer_ticks: typing.SupportsInt | typing.SupportsIndex, longitudinal_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's per-channel actuation dead times [ticks]; reset() after
        """
    def set_latency(self, spec: LatencySpec, policy: OverrunPolicy) -> None:
        """
        Mode-B latency (takes effect at the next reset)
        """
    def set_network(self, spec: NetworkSpec, policy: OverrunPolicy) -> None:
        """
        A network between controller and plant: losses, bursts, delay (next reset)
        """
    def set_obs_delay(self, age: LatencySpec) -> None:
        """
        A sensor delay: each step's observation is the plant's at its capture tick, the age drawn from `age` per grid sample (next reset)
        """
    def set_randomization(self, spec: RandomizationSpec) -> None:
        """
        Draw and apply these ranges every episode (randomize_episode, reset_episode)
        """
    def set_vehicle(self, vehicle: VehicleParams) -> None:
        """
        Replace the plant's vehicle parameters (and the task's values derived from them, e.g. the footprint); reset() after
        """
    def snapshot(self) -> CommandEnvCore:
        """
        A copy of this core, parameters, configuration and whole state (plant, task, command schedule, delay lines, sensor ring, network chain, generators, episode counters): what restore() puts back
        """
    def step(self, a_steer: typing.SupportsFloat | typing.SupportsIndex, a_long: typing.SupportsFloat | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], terms: numpy.typing.NDArray[numpy.float64], info: numpy.typing.NDArray[numpy.float64], measured_delay: typing.SupportsFloat | typing.SupportsIndex = ...) -> int:
        """
        One env step (GIL released); measured_delay [s] for LatencyKind.measured
        """
    @property
    def action_history(self) -> int:
        ...
    @property
    def control_period(self) -> float:
        ...
    @property
    def draws_start(self) -> bool:
        """
        Whether draw_start() draws the task's start in C++
        """
    @property
    def episode_draws(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The last episode's draws by RandomKey (DRAW_KEYS' order; NaN where none)
        """
    @property
    def grid_rows(self) -> bool:
        """
        An evaluation's grid rows: the plant stops at each grid tick a step passes and records its state there (EvalStepper.columns reads them); setting it clears the rows
        """
    @grid_rows.setter
    def grid_rows(self, arg1: bool) -> None:
        ...
    @property
    def has_latency(self) -> bool:
        ...
    @property
    def has_network(self) -> bool:
        ...
    @property
    def has_obs_delay(self) -> bool:
        ...
    @property
    def n_discarded(self) -> int:
        ...
    @property
    def n_lost(self) -> int:
        ...
    @property
    def n_overrun(self) -> int:
        ...
    @property
    def n_skipped(self) -> int:
        ...
    @property
    def next_k(self) -> int:
        ...
    @property
    def next_sample(self) -> tuple[int, int, float]:
        """
        (k, call_tick, t_start [s]) of the next sample
        """
    @property
    def pending_commands(self) -> list:
        """
        The scheduled commands not yet applied, by apply tick: (sample_tick, apply_tick, steer, longitudinal)
        """
    @property
    def randomizes(self) -> bool:
        ...
    @property
    def run_end(self) -> int:
        """
        An evaluation's end tick (None: none, the largest int64): no step advances the plant past it (run_to_end advances it there)
        """
    @run_end.setter
    def run_end(self, arg1: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def session(self) -> Session:
        ...
    @property
    def task_info_size(self) -> int:
        ...
    @property
    def tick(self) -> int:
        """
        The plant's substep counter
        """
    @property
    def time(self) -> float:
        """
        The plant's time [s]
        """
    @property
    def time_limit_ticks(self) -> int:
        """
        Episode time limit in substeps from reset (0: none); truncates with TIME_LIMIT
        """
    @time_limit_ticks.setter
    def time_limit_ticks(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class AccWeights:
    def __init__(self) -> None:
        ...
    @property
    def alive(self) -> float:
        ...
    @alive.setter
    def alive(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def collision(self) -> float:
        ...
    @collision.setter
    def collision(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def comfort(self) -> float:
        ...
    @comfort.setter
    def comfort(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def gap(self) -> float:
        ...
    @gap.setter
    def gap(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def jerk(self) -> float:
        ...
    @jerk.setter
    def jerk(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def safety(self) -> float:
        ...
    @safety.setter
    def safety(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def speed(self) -> float:
        ...
    @speed.setter
    def speed(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class AccTaskParams:
    weights: AccWeights
    def __init__(self) -> None:
        ...
    @property
    def min_distance(self) -> float:
        ...
    @min_distance.setter
    def min_distance(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ticks_per_period(self) -> int:
        ...
    @ticks_per_period.setter
    def ticks_per_period(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def time_headway(self) -> float:
        ...
    @time_headway.setter
    def time_headway(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ttc_cap(self) -> float:
        ...
    @ttc_cap.setter
    def ttc_cap(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ttc_safe(self) -> float:
        ...
    @ttc_safe.setter
    def ttc_safe(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class AccEnvCore(EnvCoreBase):
    @staticmethod
    def default_spec() -> EnvSpec:
        """
        The spec of this env core with the task's default parameters and no action history: names, default reward weights, flag bits (what the Python env module reads at import)
        """
    def __getstate__(self) -> bytes:
        ...
    def __init__(self, session: Session, task: AccTaskParams) -> None:
        """
        The car-following task core (VDSim-ACC-v0), its own session
        """
    def __reduce_ex__(self, protocol: typing.SupportsInt | typing.SupportsIndex) -> tuple:
        ...
    def __setstate__(self, arg0: bytes) -> None:
        ...
    def advance_physics(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Benchmark reference: one control period of physics only
        """
    def after_tick(self) -> None:
        """
        Mode C: the sensor's captures due at the plant's tick now
        """
    def clear_latency(self) -> None:
        ...
    def clear_network(self) -> None:
        ...
    def clear_obs_delay(self) -> None:
        ...
    def command_for(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[float, float]:
        """
        The plant command (steer, longitudinal) of an action now
        """
    def command_in_force(self, tick: typing.SupportsInt | typing.SupportsIndex | None = None) -> tuple[int, int, float, float]:
        """
        (sample_tick, apply_tick, steer, longitudinal) of the command in force now, or during substep `tick` (at or after now: a pending one due by then); sample_tick -1 is the reset command
        """
    def draw_start(self, bit_generator: typing.Any) -> tuple:
        """
        This episode's start (reset()'s state), drawn from a numpy BitGenerator (the env's np_random.bit_generator), with what the task sets with it
        """
    def latch(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Mode C: the action's command takes effect now
        """
    def obs_scale(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Physical value of each observation column = obs * scale: the task's scales, then 1 for the action history's columns
        """
    def peek(self, obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64]) -> int:
        """
        Mode C: the observation and info of the plant now (no advance, no scoring); flags
        """
    def randomize_episode(self, bit_generator: typing.Any) -> None:
        """
        This episode's draws from a numpy BitGenerator, applied (reset after)
        """
    def reset(self, state: typing.Annotated[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], "FixedSize(2)"], obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64], latency_seed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Place the plant; with latency, restart the timeline and reseed the delays
        """
    def restore(self, snapshot: AccEnvCore) -> None:
        """
        This core becomes a copy of `snapshot` (a snapshot() of a core of this type): the same actions then step it bit for bit as they stepped the snapshot's source
        """
    def run_to_end(self) -> None:
        """
        The plant advanced to run_end without a sample (GIL released)
        """
    def scenario(self) -> tuple[int, numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], float, float]:
        """
        This episode's family (-1: the fixed scenario), lead speed and distance (copies), set speed and ego start speed
        """
    def sensor_read(self, obs: typing.Annotated[numpy.typing.ArrayLike, numpy.float32]) -> int:
        """
        Mode C: the newest grid sample's captured observation into obs's task columns; its capture tick
        """
    def set_action_history(self, k: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Append the last k actions to the observation (changes obs_names; reset after)
        """
    def set_actuator(self, actuator: ActuatorParams, dead_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's steering actuator chain; reset() after
        """
    def set_channel_delays(self, steer_ticks: typing.SupportsInt | typing.SupportsIndex, longitudinal_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's per-channel actuation dead times [ticks]; reset() after
        """
    def set_drawn(self, families: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], periods: typing.SupportsInt | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, set_speed: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Each episode's scenario drawn by draw_start: a family of `families` (indices in FAMILIES), `periods` periods of `dt` [s], set_speed NaN: drawn
        """
    def set_episode_limit_ticks(self, ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        The time limit draw_start sets [substeps]; -1: the env's own
        """
    def set_fixed(self, ego_speed0: typing.SupportsFloat | typing.SupportsIndex, set_speed: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        Every episode on set_scenario's scenario, from (ego_speed0, set_speed)
        """
    def set_latency(self, spec: LatencySpec, policy: OverrunPolicy) -> None:
        """
        Mode-B latency (takes effect at the next reset)
        """
    def set_network(self, spec: NetworkSpec, policy: OverrunPolicy) -> None:
        """
        A network between controller and plant: losses, bursts, delay (next reset)
        """
    def set_obs_delay(self, age: LatencySpec) -> None:
        """
        A sensor delay: each step's observation is the plant's at its capture tick, the age drawn from `age` per grid sample (next reset)
        """
    def set_randomization(self, spec: RandomizationSpec) -> None:
        """
        Draw and apply these ranges every episode (randomize_episode, reset_episode)
        """
    def set_scenario(self, lead_speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], distance: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
    def set_vehicle(self, vehicle: VehicleParams) -> None:
        """
        Replace the plant's vehicle parameters (and the task's values derived from them, e.g. the footprint); reset() after
        """
    def snapshot(self) -> AccEnvCore:
        """
        A copy of this core, parameters, configuration and whole state (plant, task, command schedule, delay lines, sensor ring, network chain, generators, episode counters): what restore() puts back
        """
    def step(self, action: typing.SupportsFloat | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], terms: numpy.typing.NDArray[numpy.float64], info: numpy.typing.NDArray[numpy.float64], measured_delay: typing.SupportsFloat | typing.SupportsIndex = ...) -> int:
        """
        One env step (GIL released); measured_delay [s] for LatencyKind.measured
        """
    @property
    def action_history(self) -> int:
        ...
    @property
    def control_period(self) -> float:
        ...
    @property
    def draws_start(self) -> bool:
        """
        Whether draw_start() draws the task's start in C++
        """
    @property
    def episode_draws(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The last episode's draws by RandomKey (DRAW_KEYS' order; NaN where none)
        """
    @property
    def grid_rows(self) -> bool:
        """
        An evaluation's grid rows: the plant stops at each grid tick a step passes and records its state there (EvalStepper.columns reads them); setting it clears the rows
        """
    @grid_rows.setter
    def grid_rows(self, arg1: bool) -> None:
        ...
    @property
    def has_latency(self) -> bool:
        ...
    @property
    def has_network(self) -> bool:
        ...
    @property
    def has_obs_delay(self) -> bool:
        ...
    @property
    def n_discarded(self) -> int:
        ...
    @property
    def n_lost(self) -> int:
        ...
    @property
    def n_overrun(self) -> int:
        ...
    @property
    def n_skipped(self) -> int:
        ...
    @property
    def next_k(self) -> int:
        ...
    @property
    def next_sample(self) -> tuple[int, int, float]:
        """
        (k, call_tick, t_start [s]) of the next sample
        """
    @property
    def pending_commands(self) -> list:
        """
        The scheduled commands not yet applied, by apply tick: (sample_tick, apply_tick, steer, longitudinal)
        """
    @property
    def periods(self) -> int:
        ...
    @property
    def randomizes(self) -> bool:
        ...
    @property
    def run_end(self) -> int:
        """
        An evaluation's end tick (None: none, the largest int64): no step advances the plant past it (run_to_end advances it there)
        """
    @run_end.setter
    def run_end(self, arg1: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def session(self) -> Session:
        ...
    @property
    def task_info_size(self) -> int:
        ...
    @property
    def tick(self) -> int:
        """
        The plant's substep counter
        """
    @property
    def time(self) -> float:
        """
        The plant's time [s]
        """
    @property
    def time_limit_ticks(self) -> int:
        """
        Episode time limit in substeps from reset (0: none); truncates with TIME_LIMIT
        """
    @time_limit_ticks.setter
    def time_limit_ticks(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class VectorEnvCore:
    @staticmethod
    def replicate(firsts: collections.abc.Sequence, group: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], threads: typing.SupportsInt | typing.SupportsIndex = 0) -> VectorEnvCore:
        """
        A session of len(group) rows: row i a copy of firsts[group[i]] (its parameters, configuration and state) owned by the session, the first row of each group that core itself; threads as the constructor's
        """
    def __init__(self, cores: collections.abc.Sequence, threads: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        N env cores (one spec) stepped together; threads=0: all cores from 16 envs up, else inline; 1: inline
        """
    def __len__(self) -> int:
        ...
    def advance_physics(self, actions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Benchmark reference: every env's physics for one control period (command now, advance), without latency, task, observation or reward (GIL released)
        """
    def bind_buffers(self, obs: numpy.ndarray, rewards: numpy.ndarray, flags: numpy.ndarray, terms: numpy.ndarray, info: numpy.ndarray, elapsed: numpy.ndarray, term_keys: collections.abc.Sequence[str], base_cols: collections.abc.Sequence[tuple[str, typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]], timing_cols: collections.abc.Sequence[tuple[str, typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]]) -> None:
        """
        The env's batch buffers and info layout for step_fast (checked once here)
        """
    def close(self) -> None:
        """
        Stop and join the workers (idempotent)
        """
    def release_row_rng(self, i: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Row i draws from no generator until set_row_rng or seed_rows
        """
    def reset_rows(self, mask: numpy.ndarray) -> None:
        """
        Reset the masked envs in C++ (their tasks draw their starts from set_row_rng's generators) into the bound buffers
        """
    def restore_row(self, i: typing.SupportsInt | typing.SupportsIndex, snapshot: EnvCoreBase) -> None:
        """
        Row i becomes a copy of `snapshot` (a snapshot_row of a row of this task)
        """
    def row_core(self, i: typing.SupportsInt | typing.SupportsIndex) -> EnvCoreBase:
        """
        Row i's env core (its task's *EnvCore type), alive as long as the session
        """
    def row_draws(self, i: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
        """
        Row i's last episode draws (DRAW_KEYS' order, NaN where none), None without randomization
        """
    def row_rng(self, i: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
        """
        Row i's generators (None: none set): their numpy states (task, latency or None), the latency model's seed and whether the session owns them
        """
    def row_rng_state(self, i: typing.SupportsInt | typing.SupportsIndex) -> typing.Any:
        """
        The numpy states of row i's generators while the row owns them (seed_rows, set_row_rng(owned=True)), else None
        """
    def row_summary(self, i: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        Row i's episode so far (its core's summary(): summary_names)
        """
    def seed_rows(self, mask: numpy.ndarray, task_words: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32], task_offsets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], latency_words: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32], latency_offsets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], model_seeds: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64]) -> None:
        """
        Seed the masked rows' generators in C++ (numpy's SeedSequence and PCG64) and reset them
        """
    def set_actuator(self, i: typing.SupportsInt | typing.SupportsIndex, actuator: ActuatorParams, dead_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace env i's steering actuator chain between steps (reset the env after)
        """
    def set_row_rng(self, i: typing.SupportsInt | typing.SupportsIndex, bit_generator: typing.Any, latency_bit_generator: typing.Any, model_seed: typing.SupportsInt | typing.SupportsIndex, owned: bool = False) -> None:
        """
        Env i's episode generators for resets in C++ (reset_rows, step_fast's reset_mask); owned: the session's own, reported by row_rng_state as seed_rows's
        """
    def set_vehicle(self, i: typing.SupportsInt | typing.SupportsIndex, vehicle: VehicleParams) -> None:
        """
        Replace env i's vehicle parameters between steps (reset the env after)
        """
    def snapshot_row(self, i: typing.SupportsInt | typing.SupportsIndex) -> EnvCoreBase:
        """
        A copy of row i's env core (its task's *EnvCore type, as row_core(i).snapshot())
        """
    def step(self, actions: numpy.ndarray, step_mask: numpy.ndarray, obs: numpy.ndarray, rewards: numpy.ndarray, flags: numpy.ndarray, terms: numpy.ndarray, info: numpy.ndarray) -> None:
        """
        One env step of every env whose step_mask is nonzero (GIL released)
        """
    def step_fast(self, actions: typing.Any, max_steps: typing.SupportsInt | typing.SupportsIndex, timing: bool, tol: typing.SupportsFloat | typing.SupportsIndex, rows: bool = False, reset_mask: typing.Any = None) -> typing.Any:
        """
        Every env's step with Gymnasium's return values built in C++ (see the source)
        """
    @property
    def closed(self) -> bool:
        ...
    @property
    def num_envs(self) -> int:
        ...
    @property
    def threads(self) -> int:
        ...
class DynoParams:
    def __init__(self) -> None:
        ...
    def effective_mass(self) -> float:
        ...
    def total_brake_torque(self) -> float:
        ...
    @property
    def brake_torque_max(self) -> float:
        ...
    @brake_torque_max.setter
    def brake_torque_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def front_power_max(self) -> float:
        ...
    @front_power_max.setter
    def front_power_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def front_share(self) -> float:
        ...
    @front_share.setter
    def front_share(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def front_torque_max(self) -> float:
        ...
    @front_torque_max.setter
    def front_torque_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def grade(self) -> float:
        ...
    @grade.setter
    def grade(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def gravity(self) -> float:
        ...
    @gravity.setter
    def gravity(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def limiter_taper(self) -> float:
        ...
    @limiter_taper.setter
    def limiter_taper(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def mass(self) -> float:
        ...
    @mass.setter
    def mass(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_substep(self) -> float:
        ...
    @max_substep.setter
    def max_substep(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rear_power_max(self) -> float:
        ...
    @rear_power_max.setter
    def rear_power_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def rear_torque_max(self) -> float:
        ...
    @rear_torque_max.setter
    def rear_torque_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def road_load_a(self) -> float:
        ...
    @road_load_a.setter
    def road_load_a(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def road_load_b(self) -> float:
        ...
    @road_load_b.setter
    def road_load_b(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def road_load_c(self) -> float:
        ...
    @road_load_c.setter
    def road_load_c(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def roller_inertia(self) -> float:
        ...
    @roller_inertia.setter
    def roller_inertia(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def speed_limit(self) -> float:
        ...
    @speed_limit.setter
    def speed_limit(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def speed_update(self) -> int:
        ...
    @speed_update.setter
    def speed_update(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def torque_lag_hz(self) -> float:
        ...
    @torque_lag_hz.setter
    def torque_lag_hz(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def torque_lag_zeta(self) -> float:
        ...
    @torque_lag_zeta.setter
    def torque_lag_zeta(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def wheel_inertia(self) -> float:
        ...
    @wheel_inertia.setter
    def wheel_inertia(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def wheel_radius(self) -> float:
        ...
    @wheel_radius.setter
    def wheel_radius(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class DynoBenchCore:
    @staticmethod
    def demand(params: DynoParams, throttle: typing.SupportsFloat | typing.SupportsIndex, v: typing.SupportsFloat | typing.SupportsIndex) -> tuple[float, float]:
        ...
    @staticmethod
    def substeps(dt: typing.SupportsFloat | typing.SupportsIndex, max_substep: typing.SupportsFloat | typing.SupportsIndex) -> int:
        ...
    def __init__(self, params: DynoParams) -> None:
        ...
    def reset(self, v: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def step(self, throttle: typing.SupportsFloat | typing.SupportsIndex, brake: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex) -> float:
        ...
    @property
    def accel(self) -> float:
        ...
    @property
    def axle_torque(self) -> tuple[float, float]:
        ...
    @property
    def params(self) -> DynoParams:
        ...
    @property
    def v(self) -> float:
        ...
class DriverMode:
    """
    Members:
    
      speed
    
      accel
    """
    __members__: typing.ClassVar[dict[str, DriverMode]]
    accel: typing.ClassVar[DriverMode]
    speed: typing.ClassVar[DriverMode]
    @typing.overload
    def __eq__(self, other: DriverMode) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: DriverMode) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class RobotDriverParams:
    mode: DriverMode
    openpilot_hold: bool
    def __init__(self) -> None:
        ...
    @property
    def accel_filter_s(self) -> float:
        ...
    @accel_filter_s.setter
    def accel_filter_s(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ki(self) -> float:
        ...
    @ki.setter
    def ki(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ki_accel(self) -> float:
        ...
    @ki_accel.setter
    def ki_accel(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def kp(self) -> float:
        ...
    @kp.setter
    def kp(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def kp_accel(self) -> float:
        ...
    @kp_accel.setter
    def kp_accel(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_accel(self) -> float:
        ...
    @max_accel.setter
    def max_accel(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_brake(self) -> float:
        ...
    @max_brake.setter
    def max_brake(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_decel(self) -> float:
        ...
    @max_decel.setter
    def max_decel(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_throttle(self) -> float:
        ...
    @max_throttle.setter
    def max_throttle(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ramp_band(self) -> float:
        ...
    @ramp_band.setter
    def ramp_band(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def standstill_brake(self) -> float:
        ...
    @standstill_brake.setter
    def standstill_brake(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def standstill_ref(self) -> float:
        ...
    @standstill_ref.setter
    def standstill_ref(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def stop_accel(self) -> float:
        ...
    @stop_accel.setter
    def stop_accel(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def stop_speed(self) -> float:
        ...
    @stop_speed.setter
    def stop_speed(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class RobotDriverCore:
    def __init__(self, params: RobotDriverParams) -> None:
        ...
    def copy(self) -> RobotDriverCore:
        ...
    def reset(self) -> None:
        ...
    def step(self, v_ref: typing.SupportsFloat | typing.SupportsIndex, v: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, a_ref: typing.SupportsFloat | typing.SupportsIndex, has_a_ref: bool, delay_steps: typing.SupportsInt | typing.SupportsIndex) -> tuple[float, float]:
        ...
    @property
    def filtered_accel(self) -> float:
        ...
    @property
    def integral(self) -> float:
        ...
    @property
    def line_size(self) -> int:
        ...
    @property
    def params(self) -> RobotDriverParams:
        ...
    @property
    def pedal(self) -> float:
        ...
    @property
    def ramp(self) -> float:
        ...
class PedalActuatorParams:
    enabled: bool
    def __init__(self) -> None:
        ...
    @property
    def rate_limit(self) -> float:
        ...
    @rate_limit.setter
    def rate_limit(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def time_constant(self) -> float:
        ...
    @time_constant.setter
    def time_constant(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class DynoSimConfig:
    actuator: PedalActuatorParams
    driver: RobotDriverParams
    driver_on: bool
    def __init__(self) -> None:
        ...
    @property
    def accel_filter_s(self) -> float:
        ...
    @accel_filter_s.setter
    def accel_filter_s(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def delay_steps(self) -> int:
        ...
    @delay_steps.setter
    def delay_steps(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def substep_dt(self) -> float:
        ...
    @substep_dt.setter
    def substep_dt(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class CycleAction:
    """
    Members:
    
      speed
    
      accel
    
      pedal
    """
    __members__: typing.ClassVar[dict[str, CycleAction]]
    accel: typing.ClassVar[CycleAction]
    pedal: typing.ClassVar[CycleAction]
    speed: typing.ClassVar[CycleAction]
    @typing.overload
    def __eq__(self, other: CycleAction) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: CycleAction) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class DriveCycleParams:
    action: CycleAction
    observe_driver_delay: bool
    def __init__(self) -> None:
        ...
    @property
    def ref_accel_max(self) -> float:
        ...
    @ref_accel_max.setter
    def ref_accel_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ref_decel_max(self) -> float:
        ...
    @ref_decel_max.setter
    def ref_decel_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ref_speed_max(self) -> float:
        ...
    @ref_speed_max.setter
    def ref_speed_max(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def ticks_per_period(self) -> int:
        ...
    @ticks_per_period.setter
    def ticks_per_period(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def w_energy(self) -> float:
        ...
    @w_energy.setter
    def w_energy(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def w_pedal_jerk(self) -> float:
        ...
    @w_pedal_jerk.setter
    def w_pedal_jerk(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def w_tracking(self) -> float:
        ...
    @w_tracking.setter
    def w_tracking(self, arg0: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class DynoSession:
    def record_trace_row(self) -> None:
        ...
    def take_trace(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def tick(self) -> int:
        ...
    @property
    def time(self) -> float:
        ...
    @property
    def trace_decimation(self) -> int:
        ...
    @trace_decimation.setter
    def trace_decimation(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class CycleSpeeds:
    """
    A cycle's speed, speed-trace tolerance band (lower, upper) [m/s] and phase index (-1: none) per control period, held once for every dyno core that drives it
    """
    def __init__(self, speed: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lower: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], upper: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], phase: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> None:
        ...
    def __len__(self) -> int:
        ...
class DynoEnvCore(EnvCoreBase):
    @staticmethod
    def default_spec() -> EnvSpec:
        """
        The spec of this env core with the task's default parameters and no action history: names, default reward weights, flag bits (what the Python env module reads at import)
        """
    def __getstate__(self) -> bytes:
        ...
    def __init__(self, task: DriveCycleParams, bench: DynoParams, config: DynoSimConfig) -> None:
        """
        The drive-cycle task on the chassis dyno (VDSim-Dyno-v0)
        """
    def __reduce_ex__(self, protocol: typing.SupportsInt | typing.SupportsIndex) -> tuple:
        ...
    def __setstate__(self, arg0: bytes) -> None:
        ...
    def advance_physics(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Benchmark reference: one control period of physics only
        """
    def after_tick(self) -> None:
        """
        Mode C: the sensor's captures due at the plant's tick now
        """
    def clear_latency(self) -> None:
        ...
    def clear_network(self) -> None:
        ...
    def clear_obs_delay(self) -> None:
        ...
    def command_for(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple[float, float]:
        """
        The plant command (steer, longitudinal) of an action now
        """
    def command_in_force(self, tick: typing.SupportsInt | typing.SupportsIndex | None = None) -> tuple[int, int, float, float]:
        """
        (sample_tick, apply_tick, steer, longitudinal) of the command in force now, or during substep `tick` (at or after now: a pending one due by then); sample_tick -1 is the reset command
        """
    def draw_start(self, bit_generator: typing.Any) -> tuple:
        """
        This episode's start (reset()'s state), drawn from a numpy BitGenerator (the env's np_random.bit_generator), with what the task sets with it
        """
    def latch(self, action: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Mode C: the action's command takes effect now
        """
    def obs_scale(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Physical value of each observation column = obs * scale: the task's scales, then 1 for the action history's columns
        """
    def peek(self, obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64]) -> int:
        """
        Mode C: the observation and info of the plant now (no advance, no scoring); flags
        """
    def randomize_episode(self, bit_generator: typing.Any) -> None:
        """
        This episode's draws from a numpy BitGenerator, applied (reset after)
        """
    def reference(self, action: typing.SupportsFloat | typing.SupportsIndex) -> float:
        ...
    def reset(self, state: typing.Annotated[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], "FixedSize(1)"], obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64], latency_seed: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        """
        Place the plant; with latency, restart the timeline and reseed the delays
        """
    def restore(self, snapshot: DynoEnvCore) -> None:
        """
        This core becomes a copy of `snapshot` (a snapshot() of a core of this type): the same actions then step it bit for bit as they stepped the snapshot's source
        """
    def run_to_end(self) -> None:
        """
        The plant advanced to run_end without a sample (GIL released)
        """
    def sensor_read(self, obs: typing.Annotated[numpy.typing.ArrayLike, numpy.float32]) -> int:
        """
        Mode C: the newest grid sample's captured observation into obs's task columns; its capture tick
        """
    def set_action_history(self, k: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Append the last k actions to the observation (changes obs_names; reset after)
        """
    def set_actuator(self, actuator: ActuatorParams, dead_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's steering actuator chain; reset() after
        """
    def set_channel_delays(self, steer_ticks: typing.SupportsInt | typing.SupportsIndex, longitudinal_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Replace the plant's per-channel actuation dead times [ticks]; reset() after
        """
    def set_cycles(self, cycles: collections.abc.Sequence[tuple]) -> None:
        """
        The env's cycles, (CycleSpeeds, time limit [substeps]; -1: the env's own) each; draw_start picks one per episode
        """
    def set_driver_delay_steps(self, steps: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        The robot driver's transport delay [driver steps] (a per-episode draw; reset() after)
        """
    def set_latency(self, spec: LatencySpec, policy: OverrunPolicy) -> None:
        """
        Mode-B latency (takes effect at the next reset)
        """
    def set_network(self, spec: NetworkSpec, policy: OverrunPolicy) -> None:
        """
        A network between controller and plant: losses, bursts, delay (next reset)
        """
    def set_obs_delay(self, age: LatencySpec) -> None:
        """
        A sensor delay: each step's observation is the plant's at its capture tick, the age drawn from `age` per grid sample (next reset)
        """
    def set_randomization(self, spec: RandomizationSpec) -> None:
        """
        Draw and apply these ranges every episode (randomize_episode, reset_episode)
        """
    def set_vehicle(self, vehicle: VehicleParams) -> None:
        """
        Replace the plant's vehicle parameters (and the task's values derived from them, e.g. the footprint); reset() after
        """
    def snapshot(self) -> DynoEnvCore:
        """
        A copy of this core, parameters, configuration and whole state (plant, task, command schedule, delay lines, sensor ring, network chain, generators, episode counters): what restore() puts back
        """
    def step(self, action: typing.SupportsFloat | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], terms: numpy.typing.NDArray[numpy.float64], info: numpy.typing.NDArray[numpy.float64], measured_delay: typing.SupportsFloat | typing.SupportsIndex = ...) -> int:
        """
        One env step (GIL released); measured_delay [s] for LatencyKind.measured
        """
    @property
    def action_history(self) -> int:
        ...
    @property
    def axle_torque(self) -> tuple[float, float]:
        ...
    @property
    def control_period(self) -> float:
        ...
    @property
    def cycle_index(self) -> int:
        """
        The index of this episode's cycle in set_cycles'
        """
    @property
    def distance(self) -> float:
        ...
    @property
    def draws_start(self) -> bool:
        """
        Whether draw_start() draws the task's start in C++
        """
    @property
    def driver_delay_steps(self) -> int:
        ...
    @property
    def driver_pedal(self) -> float:
        ...
    @property
    def energy_j(self) -> float:
        ...
    @property
    def episode_draws(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The last episode's draws by RandomKey (DRAW_KEYS' order; NaN where none)
        """
    @property
    def filtered_accel(self) -> float:
        ...
    @property
    def grid_rows(self) -> bool:
        """
        An evaluation's grid rows: the plant stops at each grid tick a step passes and records its state there (EvalStepper.columns reads them); setting it clears the rows
        """
    @grid_rows.setter
    def grid_rows(self, arg1: bool) -> None:
        ...
    @property
    def has_latency(self) -> bool:
        ...
    @property
    def has_network(self) -> bool:
        ...
    @property
    def has_obs_delay(self) -> bool:
        ...
    @property
    def n_discarded(self) -> int:
        ...
    @property
    def n_lost(self) -> int:
        ...
    @property
    def n_overrun(self) -> int:
        ...
    @property
    def n_skipped(self) -> int:
        ...
    @property
    def next_k(self) -> int:
        ...
    @property
    def next_sample(self) -> tuple[int, int, float]:
        """
        (k, call_tick, t_start [s]) of the next sample
        """
    @property
    def pedal(self) -> float:
        ...
    @property
    def pending_commands(self) -> list:
        """
        The scheduled commands not yet applied, by apply tick: (sample_tick, apply_tick, steer, longitudinal)
        """
    @property
    def periods(self) -> int:
        ...
    @property
    def randomizes(self) -> bool:
        ...
    @property
    def run_end(self) -> int:
        """
        An evaluation's end tick (None: none, the largest int64): no step advances the plant past it (run_to_end advances it there)
        """
    @run_end.setter
    def run_end(self, arg1: typing.SupportsInt | typing.SupportsIndex | None) -> None:
        ...
    @property
    def session(self) -> DynoSession:
        ...
    @property
    def speed(self) -> float:
        ...
    @property
    def task_info_size(self) -> int:
        ...
    @property
    def tick(self) -> int:
        """
        The plant's substep counter
        """
    @property
    def time(self) -> float:
        """
        The plant's time [s]
        """
    @property
    def time_limit_ticks(self) -> int:
        """
        Episode time limit in substeps from reset (0: none); truncates with TIME_LIMIT
        """
    @time_limit_ticks.setter
    def time_limit_ticks(self, arg1: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
class RealTimeRunner:
    def __init__(self, session: Session, substep_dt: typing.SupportsFloat | typing.SupportsIndex, n_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def join(self) -> None:
        ...
    def lock(self) -> None:
        """
        Acquire the session's mutex (the GIL is released while waiting)
        """
    def note_command(self) -> None:
        """
        Under the lock: a command was latched
        """
    def request_stop(self) -> None:
        ...
    def set_hook(self, hook: TickHook) -> None:
        """
        Called after every substep on the runner's thread (before start())
        """
    def set_watchdog(self, timeout_ticks: typing.SupportsInt | typing.SupportsIndex, steer: typing.SupportsFloat | typing.SupportsIndex, longitudinal: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def sleep_until(self, seconds: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def start(self, sim_cpu: typing.SupportsInt | typing.SupportsIndex = -1) -> None:
        ...
    def tick_wall(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Wall time [s since start] at which each tick completed (after join)
        """
    def unlock(self) -> None:
        ...
    def wall_now(self) -> float:
        """
        Seconds of steady clock since start
        """
    @property
    def affinity_applied(self) -> bool:
        ...
    @property
    def failsafe_latches(self) -> int:
        ...
    @property
    def finished(self) -> bool:
        ...
    @property
    def max_lag(self) -> float:
        ...
    @property
    def ticks_done(self) -> int:
        ...
    @property
    def wall_elapsed(self) -> float:
        ...
class DynoRealTimeRunner:
    def __init__(self, session: DynoSession, substep_dt: typing.SupportsFloat | typing.SupportsIndex, n_ticks: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def join(self) -> None:
        ...
    def lock(self) -> None:
        """
        Acquire the session's mutex (the GIL is released while waiting)
        """
    def note_command(self) -> None:
        """
        Under the lock: a command was latched
        """
    def request_stop(self) -> None:
        ...
    def set_hook(self, hook: TickHook) -> None:
        """
        Called after every substep on the runner's thread (before start())
        """
    def set_watchdog(self, timeout_ticks: typing.SupportsInt | typing.SupportsIndex, steer: typing.SupportsFloat | typing.SupportsIndex, longitudinal: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def sleep_until(self, seconds: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def start(self, sim_cpu: typing.SupportsInt | typing.SupportsIndex = -1) -> None:
        ...
    def tick_wall(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Wall time [s since start] at which each tick completed (after join)
        """
    def unlock(self) -> None:
        ...
    def wall_now(self) -> float:
        """
        Seconds of steady clock since start
        """
    @property
    def affinity_applied(self) -> bool:
        ...
    @property
    def failsafe_latches(self) -> int:
        ...
    @property
    def finished(self) -> bool:
        ...
    @property
    def max_lag(self) -> float:
        ...
    @property
    def ticks_done(self) -> int:
        ...
    @property
    def wall_elapsed(self) -> float:
        ...
class GymStepper:
    def __call__(self, action: typing.Any, measured_delay: typing.SupportsFloat | typing.SupportsIndex = ..., log: typing.Any = None) -> typing.Any:
        """
        (obs, reward, flags, info), or None when the action needs the slow path
        """
    def __init__(self, core: typing.Any, obs: numpy.typing.NDArray[numpy.float32], terms: numpy.typing.NDArray[numpy.float64], info: numpy.typing.NDArray[numpy.float64], term_keys: collections.abc.Sequence, info_cols: collections.abc.Sequence, timing_cols: collections.abc.Sequence, log_cols: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], action_tol: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        A single env's step() in one call over an env core and its caller-owned rows; info_cols/timing_cols: (key, column, kind 0 float / 1 int / 2 bool)
        """
    @property
    def timing(self) -> bool:
        """
        Report the timing keys (latency on)
        """
    @timing.setter
    def timing(self, arg0: bool) -> None:
        ...
class EvalStepper:
    def __call__(self, action: typing.Any, c: typing.SupportsFloat | typing.SupportsIndex, wall: typing.SupportsFloat | typing.SupportsIndex) -> typing.Any:
        """
        The next observation (float32), or None when the action needs checking first
        """
    def __init__(self, core: typing.Any, obs: numpy.typing.NDArray[numpy.float32], terms: numpy.typing.NDArray[numpy.float64], info: numpy.typing.NDArray[numpy.float64], info_cols: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], apply_col: typing.SupportsInt | typing.SupportsIndex, lost_col: typing.SupportsInt | typing.SupportsIndex, overrun_col: typing.SupportsInt | typing.SupportsIndex, age_col: typing.SupportsInt | typing.SupportsIndex, timed: bool, map_command: bool, log: typing.Any, log_cols: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        ClosedLoopEval's env form, a sample per call over an env core and its rows (info columns -1: not reported)
        """
    def columns(self, final: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], t_end: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, networked: bool) -> tuple:
        """
        The run's columns from the rows: (t, states, commands, src, src_overrun, k, apply_tick, reals, flags); see bind_gym_step.cpp
        """
    def finish(self) -> None:
        """
        The plant advanced to the core's run end without a sample (the run's end)
        """
    def refresh(self) -> None:
        """
        After a reset: the next sample, age 0
        """
    def rows(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The recorded sample rows, (n, width)
        """
    def state_now(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        State and info columns now
        """
    @property
    def age(self) -> float:
        """
        obs_age of the observation the policy sees next [s]
        """
    @property
    def call_tick(self) -> int:
        ...
    @property
    def flags(self) -> int:
        ...
    @property
    def next_k(self) -> int:
        ...
    @property
    def now(self) -> int:
        ...
    @property
    def t_start(self) -> float:
        ...
class BaselineKernel:
    """
    A classical baseline evaluated in C++ (vdsim/baselines.hpp): __call__(obs, episode_start) -> float32 actions, or None when the arguments need converting
    """
    def __call__(self, obs: typing.Any, episode_start: typing.Any = None) -> typing.Any:
        ...
    def clear(self) -> None:
        """
        Forget every row's state (the controller's reset())
        """
    def load_rows(self, n: typing.SupportsInt | typing.SupportsIndex, values: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        """
        The rows' state from save_rows (a controller's pickle and deepcopy)
        """
    def save_rows(self) -> tuple[int, list[float]]:
        """
        (batch size or -1, the rows' state as numbers): what load_rows takes back
        """
    @property
    def n_obs(self) -> int:
        ...
    @property
    def outputs(self) -> int:
        ...
    @property
    def rows(self) -> int:
        """
        Rows of the last call (0 before it)
        """
class StanleyKernel(BaselineKernel):
    def __init__(self, columns: collections.abc.Sequence[tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsFloat | typing.SupportsIndex]], n_obs: typing.SupportsInt | typing.SupportsIndex, wheelbase: typing.SupportsFloat | typing.SupportsIndex, cg_to_front: typing.SupportsFloat | typing.SupportsIndex, max_steer: typing.SupportsFloat | typing.SupportsIndex, gain: typing.SupportsFloat | typing.SupportsIndex, soft_speed: typing.SupportsFloat | typing.SupportsIndex, yaw_damping: typing.SupportsFloat | typing.SupportsIndex, accel_gain: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        columns: (index, scale) of e_y, e_psi, vx, kappa_ref, r
        """
    def steer(self, obs: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Road-wheel steer [rad] of a (N, n_obs) batch
        """
    @property
    def accel_gain(self) -> float:
        ...
    @accel_gain.setter
    def accel_gain(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def cg_to_front(self) -> float:
        ...
    @cg_to_front.setter
    def cg_to_front(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def gain(self) -> float:
        ...
    @gain.setter
    def gain(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def max_steer(self) -> float:
        ...
    @max_steer.setter
    def max_steer(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def soft_speed(self) -> float:
        ...
    @soft_speed.setter
    def soft_speed(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def wheelbase(self) -> float:
        ...
    @wheelbase.setter
    def wheelbase(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def yaw_damping(self) -> float:
        ...
    @yaw_damping.setter
    def yaw_damping(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class PISpeedKernel(BaselineKernel):
    def __init__(self, columns: collections.abc.Sequence[tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsFloat | typing.SupportsIndex]], n_obs: typing.SupportsInt | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, kp: typing.SupportsFloat | typing.SupportsIndex, ki: typing.SupportsFloat | typing.SupportsIndex) -> None:
        """
        columns: (index, scale) of v_ref, vx
        """
    @property
    def dt(self) -> float:
        ...
    @dt.setter
    def dt(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def integral(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Each row's integral [m] (a copy)
        """
    @property
    def ki(self) -> float:
        ...
    @ki.setter
    def ki(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def kp(self) -> float:
        ...
    @kp.setter
    def kp(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class CompositeKernel(BaselineKernel):
    def __init__(self, lateral: BaselineKernel, longitudinal: BaselineKernel) -> None:
        ...
class ACCKernel(BaselineKernel):
    def __init__(self, columns: collections.abc.Sequence[tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsFloat | typing.SupportsIndex]], n_obs: typing.SupportsInt | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, a_max: typing.SupportsFloat | typing.SupportsIndex, d_max: typing.SupportsFloat | typing.SupportsIndex, time_headway: typing.SupportsFloat | typing.SupportsIndex, min_distance: typing.SupportsFloat | typing.SupportsIndex, emergency_ttc: typing.SupportsFloat | typing.SupportsIndex, exit_ttc: typing.Any, max_acceleration: typing.SupportsFloat | typing.SupportsIndex, max_deceleration: typing.SupportsFloat | typing.SupportsIndex, pid_speed: dict, pid_distance: dict) -> None:
        """
        columns: (index, scale) of ego_speed, set_speed, lead_present, gap, rel_speed
        """
    @property
    def modes(self) -> list:
        """
        Each row's mode: cruise, follow, emergency, or None before its first call
        """
class IDMKernel(BaselineKernel):
    def __init__(self, columns: collections.abc.Sequence[tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsFloat | typing.SupportsIndex]], n_obs: typing.SupportsInt | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, a_max: typing.SupportsFloat | typing.SupportsIndex, d_max: typing.SupportsFloat | typing.SupportsIndex, v0: typing.SupportsFloat | typing.SupportsIndex, time_headway: typing.SupportsFloat | typing.SupportsIndex, min_gap: typing.SupportsFloat | typing.SupportsIndex, idm_a_max: typing.SupportsFloat | typing.SupportsIndex, b_comfort: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex, max_acceleration: typing.SupportsFloat | typing.SupportsIndex, max_deceleration: typing.SupportsFloat | typing.SupportsIndex, track_set_speed: bool) -> None:
        """
        columns: (index, scale) of ego_speed, set_speed, lead_present, gap, rel_speed
        """
class CycleFollowerKernel(BaselineKernel):
    def __init__(self, preview: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], scale: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], n_obs: typing.SupportsInt | typing.SupportsIndex, speed_mode: bool, lookahead: typing.SupportsFloat | typing.SupportsIndex, horizon: typing.SupportsFloat | typing.SupportsIndex, speed: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsFloat | typing.SupportsIndex], v_max: typing.SupportsFloat | typing.SupportsIndex, a_max: typing.SupportsFloat | typing.SupportsIndex, d_max: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class SingleTrackModel:
    """
    The delay-compensating controllers' single-track model (vdsim/single_track.hpp; vdsim_gym.controllers.prediction.SingleTrackPredictor builds it)
    """
    def __init__(self, mass: typing.SupportsFloat | typing.SupportsIndex, yaw_inertia: typing.SupportsFloat | typing.SupportsIndex, cg_to_front: typing.SupportsFloat | typing.SupportsIndex, cg_to_rear: typing.SupportsFloat | typing.SupportsIndex, front: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], rear: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], sigma: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def predict(self, cols: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], max_step: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        (5, N) e_y, e_psi, vx, vy, r after each row's horizon (cols: (8, N) e_y, e_psi, vx, vy, r, delta, kappa, horizon), by each row's RK4 steps (`steps`); the GIL released, Ctrl-C polled
        """
    def predict_obs(self, obs: numpy.ndarray, cols: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], scale: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], max_steer: typing.SupportsFloat | typing.SupportsIndex, delays: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], max_step: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        A path env's observation batch (float32 or float64) as doubles with e_y, e_psi, vx, vy, r replaced by their prediction across each row's delay (PredictedObservation; rows whose delay is 0 kept as they were)
        """
    def steps(self, horizon: typing.SupportsFloat | typing.SupportsIndex, vx: typing.SupportsFloat | typing.SupportsIndex, max_step: typing.SupportsFloat | typing.SupportsIndex) -> int:
        """
        The RK4 steps of a row with this horizon [s] at speed vx [m/s]: the fewest of at most max_step and of at most 1.5 over the model's fastest rate there
        """
class SilLink:
    """
    A SIL transport (UdpLink or ShmLink)
    """
class ShmLink(SilLink):
    """
    One side of a SIL shared-memory region (docs/SIL.md): create=True makes it (the simulator), False opens it (a controller)
    """
    CAPACITY: typing.ClassVar[int] = 8240
    SIZE: typing.ClassVar[int] = 16576
    def __init__(self, name: str, create: bool) -> None:
        ...
    def close(self) -> None:
        """
        Unmaps the region (the creator also removes its name); idempotent
        """
    def recv(self, timeout: typing.SupportsFloat | typing.SupportsIndex, spin: typing.SupportsFloat | typing.SupportsIndex = 0.0002) -> tuple[bytes, int] | None:
        """
        The next message and its writer's pid, or None after timeout seconds (polls for spin seconds first, then sleeps until written)
        """
    def send(self, data: bytes) -> None:
        """
        Writes a message to this side's outgoing slot
        """
    @property
    def closed(self) -> bool:
        ...
    @property
    def name(self) -> str:
        ...
class UdpLink(SilLink):
    """
    A UDP socket bound to an IPv4 address
    """
    def __init__(self, host: str, port: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def close(self) -> None:
        ...
    @property
    def address(self) -> tuple[str, int]:
        """
        (host, port) bound
        """
    @property
    def closed(self) -> bool:
        ...
class SilCounters:
    @property
    def n_commands(self) -> int:
        ...
    @property
    def n_duplicate(self) -> int:
        ...
    @property
    def n_failsafe(self) -> int:
        ...
    @property
    def n_foreign(self) -> int:
        ...
    @property
    def n_late(self) -> int:
        ...
    @property
    def n_malformed(self) -> int:
        ...
    @property
    def n_samples(self) -> int:
        ...
    @property
    def n_stale(self) -> int:
        ...
class SilExchange:
    """
    The simulator's side of a SIL run over a link: the controller that said hello, each sample's command awaited, every other message counted by kind
    """
    COMMAND: typing.ClassVar[int] = 0
    FAILSAFE: typing.ClassVar[int] = 1
    STOPPED: typing.ClassVar[int] = 2
    def __init__(self, link: SilLink, failsafe: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], spin: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def ask(self, k: typing.SupportsInt | typing.SupportsIndex, tick: typing.SupportsInt | typing.SupportsIndex, t: typing.SupportsFloat | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], timeout: typing.SupportsFloat | typing.SupportsIndex, action: numpy.typing.NDArray[numpy.float64], stopping: typing.Any = None) -> tuple[int, float]:
        """
        Sample k's observation sent, its command awaited into action: (answer, wall); answer 0: a command, 1: the fail-safe action (no answer in time), 2: stopped
        """
    def drain(self) -> None:
        """
        Counts what waits after the run, without waiting
        """
    def end(self, reason: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Sends the end message
        """
    def wait_hello(self, timeout: typing.SupportsFloat | typing.SupportsIndex, stopping: typing.Any = None) -> bool:
        """
        Waits for a controller's hello; False at the timeout
        """
    @property
    def counters(self) -> SilCounters:
        ...
    @property
    def has_client(self) -> bool:
        ...
    @property
    def misses(self) -> int:
        """
        Fail-safe samples in a row
        """
class MlpPolicyKernel:
    """
    A trained actor as doubles (vdsim/mlp.hpp): normalization, dense layers, the action clipped or tanh-squashed
    """
    def __call__(self, obs: numpy.ndarray) -> numpy.typing.NDArray[numpy.float32]:
        """
        The actions (float32) of one observation or a batch
        """
    def __init__(self, weights: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]], biases: collections.abc.Sequence[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]], widths: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], activation: str, mean: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], inv_std: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], clip_obs: typing.SupportsFloat | typing.SupportsIndex, squash: bool) -> None:
        ...
    def set_gap_features(self, cols: typing.Annotated[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], "FixedSize(5)"], scale: typing.Annotated[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], "FixedSize(5)"], a_max: typing.SupportsFloat | typing.SupportsIndex, d_max: typing.SupportsFloat | typing.SupportsIndex, delay: typing.SupportsFloat | typing.SupportsIndex, n_obs: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Append the ACC gap law's ego_speed, gap, rel_speed (PredictedStateFeatures of the ACC) to each row before the layers
        """
    def set_path_features(self, model: SingleTrackModel, cols: typing.Annotated[collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], "FixedSize(7)"], scale: typing.Annotated[collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], "FixedSize(7)"], max_steer: typing.SupportsFloat | typing.SupportsIndex, delay: typing.SupportsFloat | typing.SupportsIndex, max_step: typing.SupportsFloat | typing.SupportsIndex, n_obs: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Append the single-track prediction's e_y, e_psi, vy, r (PredictedStateFeatures of a path env) to each row before the layers
        """
    @property
    def n_actions(self) -> int:
        ...
    @property
    def n_inputs(self) -> int:
        ...
def axle_tire(vehicle: VehicleParams, axle: typing.SupportsInt | typing.SupportsIndex) -> TireParams:
    """
    The tire an axle's wheels use (0 front, 1 rear): the vehicle's tire with the compliance steer's equivalent lateral stiffness (model_common.hpp).
    """
def ceil_ticks(seconds: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex) -> int:
    ...
def default_step_tol(integrator: Integrator) -> float:
    """
    The step-size rule's default tolerance [m/s] for an integrator (SimConfig::step_tol 0)
    """
def disc_hits_footprint(cx: typing.SupportsFloat | typing.SupportsIndex, cy: typing.SupportsFloat | typing.SupportsIndex, radius: typing.SupportsFloat | typing.SupportsIndex, x: typing.SupportsFloat | typing.SupportsIndex, y: typing.SupportsFloat | typing.SupportsIndex, psi: typing.SupportsFloat | typing.SupportsIndex, front: typing.SupportsFloat | typing.SupportsIndex, rear: typing.SupportsFloat | typing.SupportsIndex, half_width: typing.SupportsFloat | typing.SupportsIndex) -> bool:
    ...
def draw_latency_seed(bit_generator: typing.Any, model_seed: typing.SupportsInt | typing.SupportsIndex) -> int:
    """
    An episode's latency seed: model_seed ^ integers(2**63) from the bit generator (the env's latency stream), as the C++ in-batch reset draws it
    """
def fast_atan(x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Any:
    ...
def fast_sin_pi(a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> typing.Any:
    ...
def floor_ticks(seconds: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex) -> int:
    ...
def limit_long_accel(v: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], ds: typing.SupportsFloat | typing.SupportsIndex, accel: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    A speed profile lowered so that |v dv/ds| <= accel: a backward (braking) and a forward (accelerating) pass, bit for bit the plain Python loops of the tests
    """
def mf_peak_u(curve: MFCurve) -> float:
    ...
def mf_shape(bx: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], C: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], E: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], fast: typing.Annotated[numpy.typing.ArrayLike, numpy.bool] = False) -> typing.Any:
    ...
def nearest_ticks(seconds: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex) -> tuple[int, bool]:
    ...
def numpy_draws(bit_generator: typing.Any, kind: str, a: typing.SupportsFloat | typing.SupportsIndex = 0.0, b: typing.SupportsFloat | typing.SupportsIndex = 1.0, count: typing.SupportsInt | typing.SupportsIndex = 1) -> list:
    """
    Test hook: count C++ draws of numpy's random/uniform/integers
    """
def predict_gap_obs(obs: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], cols: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], scale: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], a_max: typing.SupportsFloat | typing.SupportsIndex, d_max: typing.SupportsFloat | typing.SupportsIndex, delays: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    An ACC observation batch with ego_speed, gap and rel_speed predicted across each row's delay (acc_dc.PredictedGap; rows whose delay is 0 kept as they were)
    """
def random_course(bit_generator: typing.Any, n: typing.SupportsInt | typing.SupportsIndex, length: typing.SupportsFloat | typing.SupportsIndex, k_bound: typing.SupportsFloat | typing.SupportsIndex, v_lo: typing.SupportsFloat | typing.SupportsIndex, v_hi: typing.SupportsFloat | typing.SupportsIndex, max_lat_accel: typing.SupportsFloat | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], bool]:
    """
    A random course drawn from a numpy BitGenerator (vdsim/random_course.hpp): (path (n, 2), speed (n,), whether every value is finite)
    """
@typing.overload
def sil_sample(runner: RealTimeRunner, core: EnvCoreBase, exchange: SilExchange, k: typing.SupportsInt | typing.SupportsIndex, slot: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, timeout: typing.SupportsFloat | typing.SupportsIndex, terminal_mask: typing.SupportsInt | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64], action: numpy.typing.NDArray[numpy.float64], stopping: typing.Any = None) -> tuple[int, int, int, int, float, float, float]:
    """
    One wall-clock SIL sample: a sleep until slot [s of the runner's clock], the core's observation then sent, its command awaited and latched under the runner's mutex; (answer, flags, sample_tick, latch_tick, wake, wall, latched). answer -1: the episode had ended at the snapshot (nothing sent); -2: the runner had finished (nothing read)
    """
@typing.overload
def sil_sample(runner: DynoRealTimeRunner, core: EnvCoreBase, exchange: SilExchange, k: typing.SupportsInt | typing.SupportsIndex, slot: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex, timeout: typing.SupportsFloat | typing.SupportsIndex, terminal_mask: typing.SupportsInt | typing.SupportsIndex, obs: numpy.typing.NDArray[numpy.float32], info: numpy.typing.NDArray[numpy.float64], action: numpy.typing.NDArray[numpy.float64], stopping: typing.Any = None) -> tuple[int, int, int, int, float, float, float]:
    """
    One wall-clock SIL sample: a sleep until slot [s of the runner's clock], the core's observation then sent, its command awaited and latched under the runner's mutex; (answer, flags, sample_tick, latch_tick, wake, wall, latched). answer -1: the episode had ended at the snapshot (nothing sent); -2: the runner had finished (nothing read)
    """
def solve_box_qp(hess: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lo: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], hi: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], fixed_idx: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], fixed_val: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rho: typing.SupportsFloat | typing.SupportsIndex, sigma: typing.SupportsFloat | typing.SupportsIndex = 1e-06, alpha: typing.SupportsFloat | typing.SupportsIndex = 1.6, max_iter: typing.SupportsInt | typing.SupportsIndex = 5000, tol: typing.SupportsFloat | typing.SupportsIndex = 1e-06) -> tuple[numpy.typing.NDArray[numpy.float64], int, float, float]:
    """
    min 1/2 y'Hy s.t. lo <= A y <= hi, y[fixed_idx] = fixed_val (ADMM, deterministic): (y, iterations, primal_residual, dual_residual)
    """
def solve_spd_banded(mat: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rhs: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    x with mat x = rhs for a symmetric positive definite banded mat (Cholesky in band storage, plain loops: deterministic)
    """
def tire4_build() -> str:
    """
    The build of the four-lane tire evaluations in use on this CPU ('avx2' or 'baseline'); both give the same bits
    """
def tire_forces(params: TireParams, fz: typing.SupportsFloat | typing.SupportsIndex, kappa: typing.SupportsFloat | typing.SupportsIndex, tan_alpha: typing.SupportsFloat | typing.SupportsIndex, fast: bool = False, fast_algebra: bool = False) -> tuple[float, float]:
    ...
def tire_forces4(front: TireParams, rear: TireParams, fz: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], kappa: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], tan_alpha: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], build: str = 'auto') -> numpy.typing.NDArray[numpy.float64]:
    ...
def tire_forces_recorded(params: TireParams, shape_tire: TireParams, fz: typing.SupportsFloat | typing.SupportsIndex, kappa: typing.SupportsFloat | typing.SupportsIndex, tan_alpha: typing.SupportsFloat | typing.SupportsIndex) -> tuple[float, float, float, float]:
    ...
def tire_fx_at(params: TireParams, shape_tire: TireParams, dx: typing.SupportsFloat | typing.SupportsIndex, sy: typing.SupportsFloat | typing.SupportsIndex, fz: typing.SupportsFloat | typing.SupportsIndex, kappa: typing.SupportsFloat | typing.SupportsIndex, tan_alpha: typing.SupportsFloat | typing.SupportsIndex) -> float:
    ...
def tire_fx_at4(front: TireParams, rear: TireParams, dx: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], sy: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], kappa: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], build: str = 'auto') -> numpy.typing.NDArray[numpy.float64]:
    ...
def whole_ticks(seconds: typing.SupportsFloat | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex) -> int:
    ...
AUX_SIZE: int = 22
CYCLE_PREVIEW_S: list[float] = [0.0, 0.5, 1.0, 2.0, 3.0, 5.0]
DYNO_MAX_PHASES: int = 4
DYNO_TRACE_ROW_SIZE: int = 10
ENV_FLAGS: dict[str, int] = {'terminated': 1, 'truncated': 2, 'time_limit': 65536}
OBS_CLIP: float = 10.0
PATH_FLAGS: dict[str, int] = {'terminated': 1, 'truncated': 2, 'non_finite': 32, 'spin_out': 16, 'off_corridor': 8, 'cone_hit': 4, 'stalled': 64, 'time_limit': 65536}
PATH_OBS_NAMES: tuple[str, ...] = ('e_y', 'e_psi', 'vx', 'vy', 'r', 'v_ref', 'ax', 'ay', 'delta_rw', 'prev_steer', 'prev_long', 'kappa_ref', 'preview_y_5m', 'preview_y_10m', 'preview_y_20m', 'preview_y_30m')
PATH_PREVIEW_DISTANCES: tuple[float, ...] = (5.0, 10.0, 20.0, 30.0)
PATH_STEP_INFO_NAMES: tuple[str, ...] = ('reward', 'e_y', 's', 't', 'vx', 'X', 'Y', 'psi', 'new_hits', 'cone_hits', 't_sample', 't_apply', 'c_k', 'overrun', 'skipped', 'n_overrun', 'n_skipped', 'sample_tick', 'apply_tick', 'lost', 'n_lost', 'n_discarded', 'obs_age', 'obs_tick')
PATH_TERM_NAMES: tuple[str, ...] = ('tracking', 'heading', 'speed', 'smoothness', 'progress', 'cone', 'terminal')
STATE_SIZE: int = 18
TRACE_ROW_SIZE: int = 32
__version__: str
