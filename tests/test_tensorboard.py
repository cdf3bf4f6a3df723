"""TensorBoard output: the logger's event files, run_ddpg.py --tensorboard, across a resume."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ddpg import logger
from ddpg.logger import Logger

import tb_helpers

pytest.importorskip("tensorboardX", reason='pip install "mxnet-ddpg[tensorboard]"')
pytest.importorskip("tensorboard", reason="the event files are read back with tensorboard")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "examples"))
import run_ddpg  # noqa: E402
from ddpg.experiment.script import run_script  # noqa: E402
sys.path.pop(0)

import failing_env  # noqa: E402  (registers FailOncePendulum-v0)

SMALL = ["--epoch-length", "100", "--memory-start-size", "50", "--batch-size", "16",
         "--memory-size", "5000", "--ctx", "cpu", "--seed", "3", "--no-progress-bar",
         "--policy-hidden-sizes", "16", "16", "--qfunc-hidden-sizes", "16", "16", "16"]


def test_a_logger_writes_each_row_at_its_step_key(tmp_path):
    log = Logger()
    log.set_log_tabular_only(True)
    log.add_tensorboard_output(str(tmp_path))
    log.add_tensorboard_output(str(tmp_path))  # twice: still one output
    for steps, value in ((100, 0.5), (250, np.float32(-1.25))):
        log.record_tabular("TotalEnvSteps", steps)
        log.record_tabular("Loss", value)
        log.record_tabular("Env", "Pendulum-v1")  # text: not a scalar
        log.dump_tabular()
    log.record_scalar("train/EpisodeReturn", 3.5, 120)
    log.record_text("notes", "some *text*", 7)
    assert log.has_scalar_outputs()
    log.remove_tensorboard_output(str(tmp_path))
    assert not log.has_scalar_outputs()
    log.record_scalar("train/EpisodeReturn", 1.0, 300)  # no output left: goes nowhere
    curves = tb_helpers.scalars(str(tmp_path))
    assert curves == {"TotalEnvSteps": [(100, 100.0), (250, 250.0)],
                      "Loss": [(100, 0.5), (250, -1.25)],
                      "train/EpisodeReturn": [(120, 3.5)]}
    text, = tb_helpers.accumulator(str(tmp_path)).Tensors("notes/text_summary")
    assert (text.step, text.tensor_proto.string_val[0]) == (7, b"some *text*")


def test_rows_without_the_step_key_go_at_their_position(tmp_path):
    log = Logger()
    log.set_log_tabular_only(True)
    log.add_tensorboard_output(str(tmp_path), step_key="Itr")
    for value in (1.0, 2.0, 3.0):
        log.record_tabular("Value", value)
        log.dump_tabular()
    log.reset()
    assert tb_helpers.scalars(str(tmp_path)) == {"Value": [(0, 1.0), (1, 2.0), (2, 3.0)]}


def test_a_second_output_opened_in_the_same_second_keeps_the_first_ones_events(
        tmp_path, monkeypatch):
    """tensorboardX names an event file by the second and opens it with "wb": a resume
    starting in the second its crashed process started must not truncate that file."""
    import time
    monkeypatch.setattr(time, "time", lambda: 1796299660.25)
    for steps, purge_step in ((100, None), (200, 150)):
        log = Logger()
        log.set_log_tabular_only(True)
        log.add_tensorboard_output(str(tmp_path), purge_step=purge_step)
        log.record_tabular("TotalEnvSteps", steps)
        log.dump_tabular()
        log.reset()
    assert len(tb_helpers.event_files(str(tmp_path))) == 2
    assert tb_helpers.scalars(str(tmp_path)) == {"TotalEnvSteps": [(100, 100.0),
                                                                   (200, 200.0)]}


def test_without_tensorboardx_the_logger_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # import fails
    with pytest.raises(ImportError, match=r'pip install "mxnet-ddpg\[tensorboard\]"'):
        Logger().add_tensorboard_output(str(tmp_path))


def test_run_ddpg_tensorboard_without_tensorboardx_is_a_one_line_error(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(SystemExit) as exit_info:
        run_script(run_ddpg.main, ["--tensorboard", "--log-dir", str(tmp_path / "run"),
                                   "--n-epochs", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--tensorboard needs tensorboardX" in err
    assert 'pip install "mxnet-ddpg[tensorboard]"' in err
    assert not os.path.exists(str(tmp_path / "run"))  # refused before anything was made


def test_run_ddpg_tensorboard_needs_a_log_dir(capsys):
    with pytest.raises(SystemExit):
        run_script(run_ddpg.main, ["--tensorboard", "--no-log-dir", "--n-epochs", "1"])
    assert capsys.readouterr().err.split(": ", 1)[1] == (
        "error: --tensorboard writes its event files into the run's folder: "
        "leave out --no-log-dir\n")


def test_run_ddpg_refuses_a_tensorboard_interval_below_one(capsys):
    with pytest.raises(SystemExit):
        run_script(run_ddpg.main, ["--tensorboard-every", "0", "--n-epochs", "1"])
    assert "--tensorboard-every must be a positive" in capsys.readouterr().err


def test_the_core_imports_and_trains_without_the_optional_packages(tmp_path):
    """tensorboardX, tensorboard, onnx and onnxruntime made unimportable: ddpg, ddpg.experiment.export
    and a short run_ddpg.py run still work."""
    code = ("import sys\n"
            "for name in ('tensorboardX', 'tensorboard', 'onnx', 'onnxruntime'):\n"
            "    sys.modules[name] = None\n"
            "import ddpg, ddpg.experiment.export, ddpg.experiment\n"
            "sys.path.insert(0, %r)\n"
            "import run_ddpg\n"
            "run_ddpg.main(%r)\n" % (
                os.path.join(REPO, "examples"),
                ["--n-epochs", "1", "--eval-samples", "100", "--log-dir", str(tmp_path)]
                + SMALL))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert len(tb_helpers.read_rows(str(tmp_path / "progress.csv"))) == 1
    assert not tb_helpers.event_files(str(tmp_path))


# ---------------------------------------------------------------------------------------------
# run_ddpg.py --tensorboard: straight, and crashed then resumed

RUN = ["--env", failing_env.MODULE_ENV_ID, "--eval-samples", "50", "--n-epochs", "3",
       "--tensorboard", "--tensorboard-every", "1"] + SMALL


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same run twice: straight through, and failed in epoch 1 (after epoch 0's
    checkpoint, having logged events past it) then resumed from that checkpoint."""
    folder = tmp_path_factory.mktemp("tensorboard")
    straight, crashed = str(folder / "straight"), str(folder / "crashed")
    marker = str(folder / "failed")
    saved = os.environ.get(failing_env.MARKER_VARIABLE)
    os.environ[failing_env.MARKER_VARIABLE] = marker
    logger.reset()
    logger.set_log_tabular_only(True)
    try:
        with open(marker, "w") as marker_file:  # the straight run must not fail
            marker_file.write("no failure\n")
        run_ddpg.main(RUN + ["--log-dir", straight])
        os.remove(marker)
        failing_env.FailOncePendulum.steps_in_process = 0
        with pytest.raises(RuntimeError, match="injected failure"):
            run_ddpg.main(RUN + ["--log-dir", crashed])
        first_events = tb_helpers.event_files(crashed)
        run_ddpg.main(["--resume", os.path.join(crashed, "params")])
    finally:
        logger.reset()
        if saved is None:
            os.environ.pop(failing_env.MARKER_VARIABLE, None)
        else:
            os.environ[failing_env.MARKER_VARIABLE] = saved
    return straight, crashed, first_events


def test_every_progress_column_is_a_scalar_at_the_env_steps(runs):
    straight, _, _ = runs
    curves = tb_helpers.assert_events_match_progress(straight)
    assert [step for step, _ in curves["AverageReturn"]] == [100, 200, 300]


def test_episode_returns_and_losses_are_logged_as_they_happen(runs):
    straight, _, _ = runs
    curves = tb_helpers.scalars(straight)
    rows = tb_helpers.read_rows(os.path.join(straight, "progress.csv"))
    # 50-step episodes end at steps 50, 100, ..., 300
    returns = curves["train/EpisodeReturn"]
    assert [step for step, _ in returns] == list(range(50, 301, 50))
    assert [value for _, value in curves["train/EpisodeLength"]] == [50.0] * 6
    # each epoch's exploration statistics are those of the episodes it finished (the one
    # ending on an epoch's last step is counted in the next epoch's row)
    assert float(rows[1]["AverageEsReturn"]) == pytest.approx(
        np.mean([value for step, value in returns if step in (100, 150)]), rel=1e-6)
    # an update after every step from step 50 on, each one's loss at its step; their mean
    # per epoch is the epoch's AverageQLoss / AveragePolicyLoss
    losses = curves["train/QLoss"]
    assert [step for step, _ in losses] == list(range(50, 301))
    assert [step for step, _ in curves["train/PolicyLoss"]] == list(range(50, 301))
    for row, (low, high) in zip(rows, ((0, 100), (100, 200), (200, 300))):
        for tag, key in (("train/QLoss", "AverageQLoss"),
                         ("train/PolicyLoss", "AveragePolicyLoss")):
            values = [value for step, value in curves[tag] if low < step <= high]
            assert np.mean(values) == pytest.approx(float(row[key]), rel=1e-5), (tag, row)


def test_the_hyperparameters_are_logged_as_text(runs):
    straight, _, _ = runs
    text, = tb_helpers.accumulator(straight).Tensors("hyperparameters/text_summary")
    body = text.tensor_proto.string_val[0].decode()
    assert text.step == 0 and body.startswith("```\n") and body.endswith("\n```")
    with open(os.path.join(straight, "params.json")) as params:
        assert json.loads(body[4:-4]) == json.load(params)


def test_a_resumed_run_continues_the_same_curves(runs):
    straight, crashed, first_events = runs
    # the failed process had logged updates past its checkpoint (step 100) ...
    first, = first_events
    assert max(step for step, _ in tb_helpers.scalars(first)["train/QLoss"]) > 100
    # ... which TensorBoard drops: every curve is the straight run's, each step once
    curves = tb_helpers.assert_events_match_progress(crashed)
    expected = tb_helpers.scalars(straight)
    for timing in (curves, expected):  # wall-clock seconds differ between runs
        assert [step for step, _ in timing.pop("Time")] == [100, 200, 300]
    assert curves == expected
    assert len(tb_helpers.event_files(crashed)) == 2


def test_loss_points_are_at_most_every_n_updates(tmp_path, quiet_logger):
    folder = str(tmp_path / "run")
    run_ddpg.main(["--n-epochs", "1", "--eval-samples", "100", "--log-dir", folder,
                   "--tensorboard", "--tensorboard-every", "7"] + SMALL)
    curves = tb_helpers.scalars(folder)
    updates = int(tb_helpers.read_rows(os.path.join(folder, "progress.csv"))[0]["NumUpdates"])
    assert len(curves["train/QLoss"]) == updates // 7 > 0
    # cart-pole steps: updates begin at step 50 (memory_start_size), one per step
    assert [step for step, _ in curves["train/QLoss"]] == [49 + 7 * k
                                                            for k in range(1, updates // 7 + 1)]
