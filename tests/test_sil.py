"""Software in the loop (vdsim_gym.sil, docs/SIL.md): the wire format, the lockstep server
against the same controller stepping the env in process (bit for bit), the counters of
every kind of bad datagram, the watchdog, fuzzed datagrams and the CLI with its
controller in another process. Loopback only."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import LatencyModel
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.errors import ConfigError
from vdsim_gym.sil import (
    ShmTransport,
    UdpTransport,
    run_controller,
    serve_lockstep,
    serve_wallclock,
)
from vdsim_gym.sil import protocol as wire
from vdsim_gym.sil.server import LOST_AFTER
from vdsim_gym.traces.trace import read_trace
from vdsim_gym.wrappers import RecordTrace

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sil"


def _policy(env: gym.Env) -> Any:
    pol = stanley_pi(env.unwrapped)
    return lambda obs: pol.predict(obs[None], deterministic=True)[0][0]


def _serve_with(transport: Any, controller: Any, serve: Any) -> Any:
    """``serve()`` while ``controller()`` runs in a thread; the thread joined and the
    transport closed whatever happens."""
    t = threading.Thread(target=controller)
    t.start()
    try:
        return serve()
    finally:
        t.join(30)
        transport.close()


# ------------------------------------------------------------------ wire format

def test_messages_have_the_documented_layout() -> None:
    """The byte table of docs/SIL.md: sizes, field order, little-endian."""
    assert wire.hello() == b"VDSH\x01\x00"
    obs = wire.observation(7, 80, 0.04, np.array([1.5, -2.0]))
    assert len(obs) == 28 + 16 and obs[:4] == b"VDSO"
    assert struct.unpack_from("<HHIQd", obs, 4) == (1, 2, 7, 80, 0.04)
    assert np.frombuffer(obs[28:], "<f8").tolist() == [1.5, -2.0]
    cmd = wire.command(7, np.array([0.25, -1.0]))
    assert cmd[:12] == b"VDSC\x01\x00\x02\x00\x07\x00\x00\x00" and len(cmd) == 12 + 16
    assert wire.parse_command(cmd, 2)[0] == 7
    assert wire.end(wire.EndReason.CONTROLLER_LOST) == b"VDSE\x01\x00\x02\x00"
    assert wire.parse_observation(obs)[:3] == (7, 80, 0.04)


@pytest.mark.parametrize("data,why", [
    (b"", "shorter than"), (b"VDSC\x01\x00", "shorter than"),
    (b"XXXX\x01\x00\x02\x00\x00\x00\x00\x00" + bytes(16), "magic"),
    (b"VDSC\x02\x00\x02\x00\x00\x00\x00\x00" + bytes(16), "version"),
    (b"VDSC\x01\x00\x03\x00\x00\x00\x00\x00" + bytes(24), "action has 2"),
    (b"VDSC\x01\x00\x02\x00\x00\x00\x00\x00" + bytes(15), "bytes"),
    (wire.command(0, np.array([np.nan, 0.0])), "non-finite"),
    (wire.command(0, np.array([np.inf, 0.0])), "non-finite"),
])
def test_a_bad_command_is_malformed_naming_why(data: bytes, why: str) -> None:
    with pytest.raises(wire.Malformed, match=why):
        wire.parse_command(data, 2)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_parse_or_are_malformed(data: bytes) -> None:
    """Fuzz: any datagram is a command or Malformed, never another error."""
    for n in (1, 2):
        try:
            seq, values = wire.parse_command(data, n)
        except wire.Malformed:
            continue
        assert len(values) == n and np.isfinite(values).all() and 0 <= seq < 2**32


# ------------------------------------------------------------------ lockstep runs

@pytest.mark.parametrize("env_id,kw", [
    ("VDSim-DLC-v0", {"latency": LatencyModel.fixed(0.03)}),
    ("VDSim-PathFollow-v0", {"course_length": 60.0,
                             "latency": LatencyModel.uniform(0.005, 0.05, seed=3),
                             "overrun": "skip"}),
])
def test_a_lockstep_run_equals_the_controller_in_process(tmp_path, env_id: str,
                                                         kw: dict) -> None:
    """The same controller over UDP and in process: the same trace, bit for bit, and
    every sample answered in time."""
    env = RecordTrace(gym.make(env_id, **kw), tmp_path / "sil.vdtrace")
    transport = UdpTransport()
    done: dict[str, Any] = {}
    stats = _serve_with(transport, lambda: done.update(
        r=run_controller(transport.address, _policy(gym.make(env_id, **kw)))),
        lambda: serve_lockstep(env, transport, seed=3, out=tmp_path / "run"))
    env.close()
    ref = RecordTrace(gym.make(env_id, **kw), tmp_path / "ref.vdtrace")
    ctrl = _policy(ref)
    obs, _ = ref.reset(seed=3)
    n = 0
    while True:
        obs, _, term, trunc, _ = ref.step(ctrl(obs))
        n += 1
        if term or trunc:
            break
    ref.close()
    sil, want = read_trace(tmp_path / "sil.vdtrace"), read_trace(tmp_path / "ref.vdtrace")
    assert sil.channels.keys() == want.channels.keys()
    for name in want.channels:
        np.testing.assert_array_equal(sil[name], want[name], err_msg=name)
    assert done["r"] == (n, wire.EndReason.EPISODE_END)
    assert (stats.n_samples, stats.n_commands, stats.n_failsafe) == (n, n, 0)
    assert stats.end_reason == "episode_end"
    written = json.loads((tmp_path / "run" / "stats.json").read_text())
    assert written["n_samples"] == n and written["latency"]["max"] <= 0.05 + 1e-12
    assert len((tmp_path / "run" / "samples.csv").read_text().splitlines()) == n + 1


def test_measured_latency_applies_the_controllers_wall_time(tmp_path) -> None:
    """``LatencyModel.measured()``: each command applies after the controller's wall time
    (mode B with a real controller), and the delays load as an empirical model."""
    import csv
    import time as _time

    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.measured())
    transport = UdpTransport()

    def slow(obs: np.ndarray) -> np.ndarray:
        _time.sleep(0.004)
        return np.zeros(2)

    stats = _serve_with(transport, lambda: run_controller(transport.address, slow),
                        lambda: serve_lockstep(env, transport, duration=0.3, out=tmp_path))
    with open(tmp_path / "samples.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == stats.n_samples == 15
    for r in rows:
        assert float(r["c_k"]) == float(r["wall_s"]) >= 0.004
        assert int(r["apply_tick"]) > int(r["sample_tick"])
    model = LatencyModel.empirical(tmp_path / "samples.csv")  # the run, swept in mode B
    assert min(model.samples) >= 0.004 and len(model.samples) == 15


def _raw_client(address: tuple[str, int]) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(10)
    s.connect(address)
    return s


def test_every_bad_datagram_is_counted_and_dropped(tmp_path) -> None:
    """A misbehaving controller: garbage, a wrong length, non-finite values, an action
    outside the action space, an answer to a sample never sent, a duplicate, a stranger's
    command, a missed deadline (the fail-safe action applies) and its late answer. The
    run goes on and counts each."""
    env = gym.make("VDSim-DLC-v0")
    transport = UdpTransport()
    out: dict[str, Any] = {}

    def misbehave() -> None:
        c, stranger = _raw_client(transport.address), _raw_client(transport.address)
        c.send(b"hi")  # before the hello: malformed
        c.send(wire.hello())
        seq = wire.parse_observation(c.recv(65536))[0]
        assert seq == 0
        c.send(b"VDSC garbage")  # malformed
        c.send(wire.command(0, np.zeros(3)))  # wrong n: malformed
        c.send(wire.command(0, np.array([np.nan, 0.0])))  # non-finite: malformed
        c.send(wire.command(0, np.array([1.5, 0.0])))  # outside [-1, 1]: malformed
        c.send(wire.command(5, np.zeros(2)))  # answers no sample sent: malformed
        stranger.send(wire.command(0, np.zeros(2)))  # foreign
        c.send(wire.command(0, np.array([0.01, 0.1])))  # the answer
        c.send(wire.command(0, np.array([0.01, 0.1])))  # duplicate (seen at sample 1)
        assert wire.parse_observation(c.recv(65536))[0] == 1
        assert wire.parse_observation(c.recv(65536))[0] == 2  # sample 1 timed out
        c.send(wire.command(1, np.zeros(2)))  # late
        c.send(wire.command(2, np.zeros(2)))
        for _ in range(100):
            data = c.recv(65536)
            if data[:4] == wire.END_MAGIC:
                out["end"] = wire.parse_end(data)
                break
            c.send(wire.command(wire.parse_observation(data)[0], np.zeros(2)))
        c.close()
        stranger.close()

    stats = _serve_with(transport, misbehave, lambda: serve_lockstep(
        env, transport, timeout=1.0, duration=0.2, out=tmp_path))
    assert out["end"] == wire.EndReason.DURATION
    assert stats.n_samples == 10 and stats.n_failsafe == 1 and stats.n_commands == 9
    assert (stats.n_malformed, stats.n_foreign, stats.n_duplicate, stats.n_late) == \
        (6, 1, 1, 1)
    rows = (tmp_path / "samples.csv").read_text().splitlines()
    assert rows[2].split(",")[6] == "1"  # sample 1 took the fail-safe action


def test_a_controller_that_goes_silent_ends_the_run_with_its_trace(tmp_path) -> None:
    env = RecordTrace(gym.make("VDSim-DLC-v0"), tmp_path / "trace.vdtrace")
    transport = UdpTransport()
    c = _raw_client(transport.address)
    c.send(wire.hello())
    stats = serve_lockstep(env, transport, timeout=0.01, failsafe=[0.0, -0.2], out=tmp_path)
    env.close()
    transport.close()
    assert stats.end_reason == "controller_lost"
    assert stats.n_failsafe == LOST_AFTER == stats.n_samples and stats.n_commands == 0
    assert len(read_trace(tmp_path / "trace.vdtrace")["t"]) > 1
    c.close()


def test_sigterm_stops_the_cli_with_what_ran_written(tmp_path) -> None:
    """SIGTERM (as Ctrl-C) mid-run: exit 130, the controller told (end: stopped), the
    trace, samples and stats of what ran written."""
    import signal
    import time as _time

    proc = subprocess.Popen(
        [sys.executable, "-m", "vdsim_gym.cli", "serve", "VDSim-DLC-v0", "--udp",
         "127.0.0.1:0", "--out", str(tmp_path)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir(),
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        port = int(proc.stdout.readline().split()[2].rsplit(":", 1)[1])
        got: dict[str, Any] = {}

        def slow(obs: np.ndarray) -> np.ndarray:
            if got.setdefault("n", 0) == 5:
                proc.send_signal(signal.SIGTERM)
            got["n"] += 1
            _time.sleep(0.005)
            return np.zeros(2)

        answered, reason = run_controller(("127.0.0.1", port), slow)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err
    assert reason == wire.EndReason.STOPPED and answered >= 5
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["end_reason"] == "stopped" and stats["n_samples"] >= 5
    assert stats["wall_s"] > 0 and "p50" in stats["latency"]
    assert read_trace(tmp_path / "trace.vdtrace").manifest["stopped_early"]


def test_bad_server_options_are_refused() -> None:
    with pytest.raises(ConfigError, match="--allow-remote"):
        UdpTransport("192.0.2.1", 0)
    env = gym.make("VDSim-DLC-v0")
    transport = UdpTransport()
    with pytest.raises(ConfigError, match="failsafe must be 2 values"):
        serve_lockstep(env, transport, failsafe=[0.0])
    with pytest.raises(ConfigError, match="no controller said hello"):
        serve_lockstep(env, transport, hello_timeout=0.05)
    transport.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=20))
def test_the_server_survives_random_datagrams(datagrams: list[bytes]) -> None:
    """Fuzz the server: random datagrams from the controller's address are counted, never
    a crash; the run ends by its watchdog with every datagram accounted for."""
    env = gym.make("VDSim-Dyno-v0")
    transport = UdpTransport()
    c = _raw_client(transport.address)
    c.send(wire.hello())
    for data in datagrams:  # waiting in the socket when the first sample is sent
        c.send(data)
    try:
        stats = serve_lockstep(env, transport, timeout=1e-3)
    finally:
        transport.close()
        c.close()
    assert stats.end_reason == "controller_lost"
    assert stats.n_malformed + stats.n_commands + stats.n_late + stats.n_stale + \
        stats.n_duplicate == len(datagrams)


@pytest.fixture(scope="module")
def c_clients(tmp_path_factory) -> dict[str, Path]:
    """examples/sil's clients, built with the system compiler (warnings are errors)."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert cc is not None, "a C compiler is a prerequisite of this package (README)"
    folder = tmp_path_factory.mktemp("sil_clients")
    built = {}
    for name, extra in (("zero_client", []), ("stanley_client", ["-ffp-contract=off"])):
        built[name] = folder / name
        subprocess.run([cc, "-O2", *extra, "-Wall", "-Wextra", "-Werror", "-o",
                        str(built[name]), str(EXAMPLES / f"{name}.c"), "-lm"], check=True)
    return built


def _transport(kind: str) -> tuple[Any, str]:
    """A server transport and the address a client names it by."""
    if kind == "udp":
        t = UdpTransport()
        return t, f"udp:127.0.0.1:{t.address[1]}"
    t = ShmTransport(f"vdsim_test_{os.getpid()}_{next(_names)}")
    return t, t.address


_names = itertools.count()


@pytest.mark.parametrize("kind", ["udp", "shm"])
def test_the_c_client_runs_a_lockstep_episode(tmp_path, c_clients, kind: str) -> None:
    """examples/sil/zero_client.c drives a lockstep run with its constant action, over
    UDP and over shared memory: the trace is the in-process run's with that action, bit
    for bit."""
    kw = {"latency": LatencyModel.fixed(0.01)}
    env = RecordTrace(gym.make("VDSim-DLC-v0", **kw), tmp_path / "sil.vdtrace")
    transport, where = _transport(kind)
    client = subprocess.Popen([str(c_clients["zero_client"]), where, "2", "0.05", "0.2"],
                              stdout=subprocess.PIPE, text=True)
    try:
        stats = serve_lockstep(env, transport, seed=1, duration=1.0)
        out, _ = client.communicate(timeout=30)
    finally:
        transport.close()
        env.close()
    assert out.split() == [str(stats.n_samples), str(int(wire.EndReason.DURATION))]
    ref = RecordTrace(gym.make("VDSim-DLC-v0", **kw), tmp_path / "ref.vdtrace")
    ref.reset(seed=1)
    for _ in range(stats.n_samples):
        ref.step(np.array([0.05, 0.2]))
    ref.close()
    sil, want = read_trace(tmp_path / "sil.vdtrace"), read_trace(tmp_path / "ref.vdtrace")
    for name in want.channels:
        np.testing.assert_array_equal(sil[name], want[name], err_msg=name)
    assert stats.n_commands == stats.n_samples == 50
    if kind == "shm":  # the region's name is gone with the server
        assert not Path("/dev/shm", where[4:]).exists()


@pytest.mark.parametrize("env_id,kw,kind", [
    ("VDSim-DLC-v0", {"latency": LatencyModel.fixed(0.02)}, "udp"),
    ("VDSim-PathFollow-v0", {"course_length": 60.0,
                             "latency": LatencyModel.uniform(0.0, 0.04, seed=5)}, "udp"),
    ("VDSim-PathFollow-v0", {"course_length": 60.0,
                             "latency": LatencyModel.uniform(0.0, 0.04, seed=5)}, "shm"),
])
def test_the_reference_c_client_is_the_stanley_pi_baseline(tmp_path, c_clients, env_id: str,
                                                           kw: dict, kind: str) -> None:
    """examples/sil/stanley_client.c with ``stanley_pi_args``: its lockstep run is the
    package's stanley_pi stepping the env in process, bit for bit (the same law in C, the
    observations and actions exact on the wire), over UDP and shared memory."""
    from vdsim_gym.sil import stanley_pi_args

    env = RecordTrace(gym.make(env_id, **kw), tmp_path / "sil.vdtrace")
    transport, where = _transport(kind)
    client = subprocess.Popen([str(c_clients["stanley_client"]), where,
                               *stanley_pi_args(env)], stdout=subprocess.PIPE, text=True)
    try:
        stats = serve_lockstep(env, transport, seed=2)
        out, _ = client.communicate(timeout=30)
    finally:
        transport.close()
        env.close()
    ref = RecordTrace(gym.make(env_id, **kw), tmp_path / "ref.vdtrace")
    policy = stanley_pi(ref.unwrapped)
    obs, _ = ref.reset(seed=2)
    n = 0
    while True:
        obs, _, term, trunc, _ = ref.step(policy.predict(obs, deterministic=True)[0])
        n += 1
        if term or trunc:
            break
    ref.close()
    assert out.split() == [str(n), str(int(wire.EndReason.EPISODE_END))]
    assert stats.n_commands == stats.n_samples == n
    sil, want = read_trace(tmp_path / "sil.vdtrace"), read_trace(tmp_path / "ref.vdtrace")
    for name in want.channels:
        np.testing.assert_array_equal(sil[name], want[name], err_msg=name)


# ------------------------------------------------------------------ wall clock

def _samples(folder: Path) -> list[dict[str, str]]:
    import csv

    with open(folder / "samples.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("kind", ["udp", "shm"])
def test_a_wallclock_run_applies_each_command_when_it_arrives(tmp_path, c_clients,
                                                              kind: str) -> None:
    """Mode C with the controller in its own process: the plant runs on the wall clock,
    each sample's command is latched when its answer arrives (at or after its sample
    tick), every sample is accounted for, and the measured delays load as an empirical
    latency model for mode B. No timing threshold: the machine may be loaded."""
    env = gym.make("VDSim-DLC-v0", control_period=0.005)
    transport, where = _transport(kind)
    client = subprocess.Popen([str(c_clients["zero_client"]), where, "2", "0.05", "0.2"],
                              stdout=subprocess.PIPE, text=True)
    try:
        stats = serve_wallclock(env, transport, duration=0.5, out=tmp_path)
        out, _ = client.communicate(timeout=30)
    finally:
        transport.close()
    assert out.split() == [str(stats.n_samples), str(int(wire.EndReason.DURATION))]
    assert stats.mode == "wallclock" and stats.end_reason == "duration"
    assert stats.n_samples > 0 and stats.n_commands + stats.n_failsafe == stats.n_samples
    assert stats.n_malformed == stats.n_foreign == 0
    assert 0 < stats.wallclock["rtf"] and set(stats.latency) == {"p50", "p90", "p99", "max"}
    rows = _samples(tmp_path)
    assert len(rows) == stats.n_samples
    ks = [int(r["k"]) for r in rows]
    assert ks == sorted(set(ks)) and ks[0] == 0  # slot indices, skipped ones left out
    latched = [r for r in rows if int(r["apply_tick"]) >= 0]
    assert len(latched) >= len(rows) - 1  # all but one a stop came during
    ticks = [int(r["sample_tick"]) for r in rows]
    assert ticks == sorted(ticks)  # the plant's tick when read (a lagging plant: behind)
    for r in latched:
        assert int(r["apply_tick"]) >= int(r["sample_tick"])
        assert float(r["c_k"]) == pytest.approx(
            (int(r["apply_tick"]) - int(r["sample_tick"])) * 5e-4)
    trace = read_trace(tmp_path / "trace.vdtrace")
    steer = trace["u_steer"][trace["t"] > float(latched[0]["t_apply"]) + 1e-3]
    np.testing.assert_allclose(steer, 0.05 * env.unwrapped.physics.vehicle.max_steer)
    model = LatencyModel.empirical(tmp_path / "samples.csv")
    assert len(model.samples) == len(latched)


def test_a_wallclock_run_ends_with_the_episode(tmp_path, c_clients) -> None:
    """Full lock leaves the DLC's corridor: the wall-clock run ends there, as the stepped
    episode does, with the end message's reason episode_end."""
    env = gym.make("VDSim-DLC-v0")
    transport, where = _transport("shm")
    client = subprocess.Popen([str(c_clients["zero_client"]), where, "2", "1.0", "0.3"],
                              stdout=subprocess.PIPE, text=True)
    try:
        stats = serve_wallclock(env, transport, out=tmp_path)
        out, _ = client.communicate(timeout=30)
    finally:
        transport.close()
    assert stats.end_reason == "episode_end"
    assert out.split() == [str(stats.n_samples), str(int(wire.EndReason.EPISODE_END))]
    trace = read_trace(tmp_path / "trace.vdtrace")
    assert trace["t"][-1] < 2.0 and not trace.manifest["stopped_early"]


def test_a_silent_controller_gets_the_failsafe_on_the_wall_clock(tmp_path) -> None:
    """A controller that says hello and never answers: each sample waits ``timeout``,
    then the fail-safe action is latched; LOST_AFTER in a row end the run (the trace
    kept, the end message sent)."""
    env = gym.make("VDSim-DLC-v0")
    transport = UdpTransport()
    c = _raw_client(transport.address)
    c.send(wire.hello())
    try:
        stats = serve_wallclock(env, transport, timeout=0.01, failsafe=[0.0, -0.5],
                                out=tmp_path)
    finally:
        transport.close()
    assert stats.end_reason == "controller_lost"
    assert stats.n_failsafe == LOST_AFTER == stats.n_samples and stats.n_commands == 0
    rows = _samples(tmp_path)
    assert [r["failsafe"] for r in rows] == ["1"] * LOST_AFTER
    seen = []
    while True:
        data = c.recv(65536)
        if data[:4] == wire.END_MAGIC:
            break
        seen.append(wire.parse_observation(data)[0])
    assert wire.parse_end(data) == wire.EndReason.CONTROLLER_LOST and len(seen) == LOST_AFTER
    trace = read_trace(tmp_path / "trace.vdtrace")
    assert trace.manifest["stopped_early"] and (trace["u_pedal"] < 0).any()
    c.close()


def test_a_python_controller_on_the_wall_clock_over_shared_memory(tmp_path) -> None:
    """The Python client (run_controller) over shared memory, in its own thread: the run
    ends with the episode; answers counted."""
    env = gym.make("VDSim-Dyno-v0")
    transport = ShmTransport(f"vdsim_test_{os.getpid()}_{next(_names)}")
    got: dict[str, Any] = {}
    stats = _serve_with(transport, lambda: got.update(
        r=run_controller(transport.address, lambda obs: np.array([0.1]))),
        lambda: serve_wallclock(env, transport, duration=1.0, timeout=2.0))
    assert got["r"] == (stats.n_samples, wire.EndReason.DURATION)
    assert stats.n_commands == stats.n_samples > 0


def test_a_shared_memory_region_refuses_bad_names_and_a_second_server(tmp_path) -> None:
    with pytest.raises(ConfigError, match="letters, digits"):
        ShmTransport("../etc/passwd")
    name = f"vdsim_test_{os.getpid()}_{next(_names)}"
    first = ShmTransport(name)
    try:
        assert oct(os.stat(f"/dev/shm/{name}").st_mode & 0o777) == "0o600"
        with pytest.raises(ConfigError, match="exists"):
            ShmTransport(name)
    finally:
        first.close()
    assert not os.path.exists(f"/dev/shm/{name}")
    with pytest.raises(ConfigError, match="start the server"):
        run_controller(f"shm:{name}", lambda obs: obs, timeout=0.05)


def test_a_hostile_slot_is_counted_never_read_past_its_end() -> None:
    """Bytes written straight into the region's command slot, claiming a length past the
    slot (and then garbage of the right length), by a writer whose stores are not the
    protocol's single atomic ones (Python's struct writes: a torn seq can show the
    slot's old message as new): every message read is malformed, none read past the
    slot, and the run goes on with the real controller's commands."""
    import mmap
    import struct as _struct
    import time as _time

    from vdsim_gym import _core

    env = gym.make("VDSim-Dyno-v0")
    transport = ShmTransport(f"vdsim_test_{os.getpid()}_{next(_names)}")
    slot = 64 + 8256  # the controller -> simulator slot (docs/SIL.md)

    def hostile_then_answer() -> None:
        link = _core.ShmLink(transport.name, False)
        link.send(wire.hello())
        first = link.recv(10.0)
        assert first is not None
        with open(f"/dev/shm/{transport.name}", "r+b") as f, \
                mmap.mmap(f.fileno(), 0) as region:
            for length, body in ((2**31, b""), (12, b"VDSCxxxxxxxx")):
                seq = _struct.unpack_from("<I", region, slot)[0]
                _struct.pack_into("<I", region, slot, seq + 1)  # taken
                _struct.pack_into("<II", region, slot + 8, length, os.getpid())
                region[slot + 16:slot + 16 + len(body)] = body
                _struct.pack_into("<I", region, slot, seq + 2)  # whole
                _time.sleep(0.1)  # read by the server (it polls, then wakes every 50 ms)
        seq0 = wire.parse_observation(first[0])[0]
        link.send(wire.command(seq0, np.array([0.1])))
        while (got := link.recv(10.0)) is not None and got[0][:4] != wire.END_MAGIC:
            link.send(wire.command(wire.parse_observation(got[0])[0], np.array([0.1])))
        link.close()

    stats = _serve_with(transport, hostile_then_answer,
                        lambda: serve_lockstep(env, transport, duration=1.0, timeout=5.0))
    assert stats.n_malformed >= 2 and stats.n_commands == stats.n_samples == 10, stats


def test_a_second_shared_memory_writer_is_foreign(tmp_path) -> None:
    """Two processes write commands into the region: the one that said hello is the
    controller, the other's messages count as foreign and are never applied."""
    env = gym.make("VDSim-Dyno-v0")
    transport = ShmTransport(f"vdsim_test_{os.getpid()}_{next(_names)}")
    script = (
        "import sys, time\n"
        "from vdsim_gym import _core\n"
        "from vdsim_gym.sil import protocol as wire\n"
        "import numpy as np\n"
        "link = _core.ShmLink(sys.argv[1], False)\n"
        "for k in range(3):\n"
        "    link.send(wire.command(0, np.array([1.0])))\n"
        "    time.sleep(0.05)\n")
    got: dict[str, Any] = {}

    def controller(obs: np.ndarray) -> np.ndarray:
        if "stranger" not in got:  # while the server waits for sample 0's answer
            got["stranger"] = subprocess.run([sys.executable, "-c", script, transport.name],
                                             cwd=tempfile.gettempdir(), check=True)
        return np.array([0.1])

    stats = _serve_with(transport, lambda: got.update(
        r=run_controller(transport.address, controller)),
        lambda: serve_lockstep(env, transport, duration=1.0, timeout=5.0))
    assert stats.n_foreign >= 1 and stats.n_commands == stats.n_samples


# ------------------------------------------------------------------ the command line

def test_the_cli_serves_a_controller_in_another_process(tmp_path) -> None:
    """``vdsim-gym serve`` in its own process prints its port; the controller (here in the
    test's process) runs the episode; the files are written and the exit code is 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "vdsim_gym.cli", "serve", "VDSim-DLC-v0", "--udp",
         "127.0.0.1:0", "--out", str(tmp_path), "--latency", "fixed:20ms", "--duration",
         "1.0", "--env-kwargs", '{"preset": "iso3888_2"}'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=tempfile.gettempdir(), env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on 127.0.0.1:"), line + proc.stderr.read()
        port = int(line.split()[2].rsplit(":", 1)[1])
        ctrl = _policy(gym.make("VDSim-DLC-v0", preset="iso3888_2",
                                latency=LatencyModel.fixed(0.02)))
        answered, reason = run_controller(("127.0.0.1", port), ctrl)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert (answered, reason) == (50, wire.EndReason.DURATION)
    assert "50 samples, 50 commands applied" in out
    assert json.loads((tmp_path / "stats.json").read_text())["latency"]["p50"] == \
        pytest.approx(0.02)
    assert len(read_trace(tmp_path / "trace.vdtrace")["t"]) > 50


def test_the_cli_runs_the_wall_clock_over_shared_memory_and_stops_on_sigterm(
        tmp_path, c_clients) -> None:
    """``vdsim-gym serve --shm NAME --mode wallclock`` with the C client; SIGTERM
    mid-run stops it in order: exit 130, the client told (end: stopped), every file of
    what ran written, the region's name removed."""
    import signal
    import time as _time

    name = f"vdsim_test_{os.getpid()}_{next(_names)}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vdsim_gym.cli", "serve", "VDSim-Dyno-v0", "--shm", name,
         "--mode", "wallclock", "--out", str(tmp_path)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir(),
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"listening on shared memory {name}"), line
        client = subprocess.Popen([str(c_clients["zero_client"]), f"shm:{name}", "1", "0.2"],
                                  stdout=subprocess.PIPE, text=True)
        _time.sleep(1.0)  # the dyno's period is 0.1 s: a few samples
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        answered, reason = client.communicate(timeout=30)[0].split()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err, err
    assert int(reason) == wire.EndReason.STOPPED and int(answered) >= 1
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["mode"] == "wallclock" and stats["end_reason"] == "stopped"
    assert stats["n_samples"] == int(answered) and "rtf" in stats["wallclock"]
    assert read_trace(tmp_path / "trace.vdtrace").manifest["stopped_early"]
    assert not os.path.exists(f"/dev/shm/{name}")


@pytest.mark.parametrize("args,message", [
    (["--udp", "127.0.0.1:0", "--mode", "wallclock", "--latency", "fixed:20ms"],
     "--latency is for --mode lockstep"),
    (["--udp", "127.0.0.1:0", "--overrun", "queue"], "--overrun is for --mode wallclock"),
    (["--shm", "a/b"], "letters, digits"),
])
def test_cli_option_errors_are_one_line(tmp_path, args: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "vdsim_gym.cli", "serve", "VDSim-DLC-v0",
                           *args, "--out", str(tmp_path)], capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), timeout=60)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
