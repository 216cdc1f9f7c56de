"""``--trust`` on the commands that load run folders: passed to ``load_controller`` (and so
to ``load_policy``), off by default."""

from __future__ import annotations

import pytest

from vdsim_gym.cli import main


@pytest.mark.parametrize("command", [
    ["sweep", "--controller", "stanley", "--delays", "0ms", "--seeds", "1", "--no-plot",
     "--no-progress"],
    ["compare", "--policies", "stanley", "--delays", "0ms", "--seeds", "1", "--no-plot"],
    ["tolerance", "--controllers", "stanley", "--seeds", "1", "--no-plot", "--quiet"],
], ids=["sweep", "compare", "tolerance"])
@pytest.mark.parametrize("trust", [False, True])
def test_trust_reaches_the_loader(command, trust, tmp_path, monkeypatch):
    import vdsim_gym.eval.sweeps.specs as sweep_cli

    seen = []
    real = sweep_cli.load_controller

    def spy(spec, algo=None, *, trust=False):
        seen.append(trust)
        raise KeyboardInterrupt  # stop before any work: only the loading is under test

    monkeypatch.setattr(sweep_cli, "load_controller", spy)
    argv = [*command, "--out", str(tmp_path / "out"), *(["--trust"] if trust else [])]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 130  # the interrupt, reported as Ctrl-C
    assert seen == [trust]
    assert real is not spy
