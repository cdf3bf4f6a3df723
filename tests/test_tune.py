"""Sweeps on Ray Tune (ddpg.experiment.tune, examples/sweep.py).

The parsing, validation and summary tests need no Ray. The sweep tests run real trials of
a few hundred steps on a local Ray (2 CPUs) whose files go to a temporary folder; they are
skipped when Ray is not installed (pip install -r requirements-ray.txt; CI installs it).
"""
import csv
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from ddpg import experiment
from ddpg.experiment import tune as ddpg_tune
from ddpg.experiment.presets import parse_args_with_preset
from ddpg.experiment.results import find_progress_files

import tb_helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, "tests")
SWEEP = os.path.join(REPO, "examples", "sweep.py")
RAY_MISSING = "Ray is not installed: pip install -r requirements-ray.txt (CI installs it)"
#: Trials of a few hundred steps with small networks.
SMALL = {"n_epochs": 3, "epoch_length": 100, "memory_start_size": 50, "batch_size": 32,
         "qfunc_hidden_sizes": [16, 16], "policy_hidden_sizes": [16, 16]}


try:
    import tensorboard  # noqa: F401  pylint: disable=unused-import
    import tensorboardX  # noqa: F401  pylint: disable=unused-import
    HAVE_TENSORBOARD = True
except ImportError:
    HAVE_TENSORBOARD = False


def read_rows(path):
    with open(path, newline="") as csv_file:
        return list(csv.DictReader(csv_file))


# ---------------------------------------------------------------------------------------------
# without Ray
# ---------------------------------------------------------------------------------------------

def test_importing_ddpg_and_its_tune_module_does_not_import_ray():
    code = ("import sys, ddpg, ddpg.experiment, ddpg.experiment.search_space, ddpg.experiment.sweep_results, "
            "ddpg.experiment.tune; "
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_config_is_parsed_as_run_ddpg_parses_its_flags():
    config = {"preset": "pendulum", "qfunc_lr": 3e-4, "policy_hidden_sizes": [64, 64],
              "layer_norm": True, "gradient_steps": None, "scale_reward": -0.5}
    argv = ["--preset", "pendulum", "--qfunc-lr", "3e-4", "--policy-hidden-sizes", "64", "64",
            "--layer-norm", "--scale-reward=-0.5"]
    expected = parse_args_with_preset(experiment.build_parser(), argv)
    assert experiment.args_from_config(config) == expected
    assert expected.batch_size == 256 and expected.policy_lr == 1e-3  # the preset's
    overridden = experiment.args_from_config(config, ctx="cpu", log_dir="/x")
    assert (overridden.ctx, overridden.log_dir) == ("cpu", "/x")


@pytest.mark.parametrize("config,message", [
    ({"qfunc_learning_rate": 1e-3}, "unknown option name 'qfunc_learning_rate'"),
    ({"batch_size": "many"}, "invalid int value"),
    ({"strategy": "brownian"}, "invalid choice"),
    ({"layer_norm": "yes"}, "is a switch"),
    ({"preset": "walker"}, "known presets"),
])
def test_bad_configs_raise_value_errors(config, message):
    with pytest.raises(ValueError, match=message):
        experiment.args_from_config(config)


def test_cli_space_is_typed_and_checked():
    space = ddpg_tune.space_from_cli(
        grid=["qfunc-lr=1e-3,3e-4", "policy_hidden_sizes=64 64,400 300", "layer_norm=true,false"],
        choice=["batch_size=32,64"], uniform=["--discount=0.95,0.99"],
        loguniform=["policy_lr=1e-5,1e-3"],
        space_json='{"soft_target_tau": {"grid": [0.005, 0.01]}, "env": "Pendulum-v1"}',
        fixed={"preset": "pendulum", "n_epochs": 3})
    assert space == {
        "qfunc_lr": ddpg_tune.Search("grid", [1e-3, 3e-4]),
        "policy_hidden_sizes": ddpg_tune.Search("grid", [[64, 64], [400, 300]]),
        "layer_norm": ddpg_tune.Search("grid", [True, False]),
        "batch_size": ddpg_tune.Search("choice", [32, 64]),
        "discount": ddpg_tune.Search("uniform", [0.95, 0.99]),
        "policy_lr": ddpg_tune.Search("loguniform", [1e-5, 1e-3]),
        "soft_target_tau": ddpg_tune.Search("grid", [0.005, 0.01]),
        "env": "Pendulum-v1", "preset": "pendulum", "n_epochs": 3}
    assert ddpg_tune.space_to_json(space)["policy_lr"] == {"loguniform": [1e-5, 1e-3]}


@pytest.mark.parametrize("pieces,message", [
    ({"grid": ["qfunc_learning_rate=1,2"]}, "unknown hyperparameter name 'qfunc_learning_rate'"
                                            ".*valid names.*qfunc_lr"),
    ({"grid": ["seed=1,2"]}, "--seeds"),
    ({"fixed": {"ctx": "gpu"}}, "gpus-per-trial"),
    ({"fixed": {"log_dir": "x"}}, "own trial folder"),
    ({"grid": ["batch_size=32,x"]}, "batch_size takes int values"),
    ({"uniform": ["batch_size=32,64"]}, "batch_size takes int values.*grid or choice"),
    ({"loguniform": ["policy_lr=0,1e-3"]}, "positive bounds"),
    ({"uniform": ["policy_lr=1e-3,1e-4"]}, "low < high"),
    ({"uniform": ["policy_lr=1e-3"]}, "two numbers"),
    ({"grid": ["strategy=ou,brownian"]}, "strategy='brownian' is not a valid.*invalid choice"),
    ({"grid": ["qfunc_lr=1e-3"], "choice": ["qfunc-lr=1e-4"]}, "qfunc_lr is set twice"),
    ({"grid": ["qfunc_lr"]}, "NAME=V1,V2"),
    ({"space_json": "{not json"}, "not valid JSON"),
    ({"space_json": '{"qfunc_lr": {"sometimes": [1]}}'}, "KIND one of grid"),
    # the hyperparameters' ranges (ddpg.hyperparams), not only their types
    ({"grid": ["qfunc_lr=-1,2"]}, r"qfunc_lr=-1\.0 is not a valid run_ddpg\.py value: qfunc_lr "
                                  r"must be positive, got -1\.0"),
    ({"uniform": ["discount=0.5,1.5"]}, r"discount=1\.5 .*discount must be in \[0, 1\]"),
    ({"choice": ["batch_size=0,32"]}, "batch_size must be a positive integer, got 0"),
    ({"space_json": '{"soft_target_tau": {"grid": [0.01, 0]}}'}, r"soft_target_tau must be in "
                                                                  r"\(0, 1\], got 0"),
    ({"fixed": {"n_step": 0}}, "n_step must be a positive integer"),
    ({"grid": ["max_path_length=0,100"]}, "max_path_length must be a positive integer, got 0"),
])
def test_bad_spaces_are_refused_with_the_reason(pieces, message):
    with pytest.raises(ValueError, match=message):
        ddpg_tune.space_from_cli(**pieces)


def test_seeds_must_be_distinct_integers():
    assert ddpg_tune.check_seeds((3, 1)) == [3, 1]
    for bad in ([], [1, 1], [1.5], [True]):
        with pytest.raises(ValueError, match="seeds"):
            ddpg_tune.check_seeds(bad)


@pytest.mark.parametrize("settings,message", [
    ({"num_samples": 2}, "repeat identical trials"),
    ({"num_samples": 0}, "num_samples"),
    ({"max_concurrent": 0}, "max_concurrent"),
    ({"cpus_per_trial": 0}, "cpus_per_trial"),
    ({"gpus_per_trial": -0.5}, "gpus_per_trial"),
    ({"gpus_per_trial": 1.5}, "whole GPUs"),
    ({"threads_per_trial": 0}, "threads"),
    ({"checkpoint_freq": 0}, "checkpoint_freq"),
    ({"keep_checkpoints": 0}, "keep_checkpoints"),
    ({"seeds": [2, 2]}, "seeds must differ"),
])
def test_bad_sweep_settings_are_refused_without_ray(settings, message):
    with pytest.raises(ValueError, match=message):
        ddpg_tune.check_sweep({"qfunc_lr": {"grid": [1e-3, 1e-4]}}, **settings)


def test_good_sweep_settings_pass():
    space, settings = ddpg_tune.check_sweep(
        {"policy_lr": {"loguniform": [1e-5, 1e-3]}}, seeds=[1, 2], num_samples=4,
        cpus_per_trial=0.5, gpus_per_trial=0.25, checkpoint_freq=5, max_failures=-1)
    assert space == {"policy_lr": ddpg_tune.Search("loguniform", [1e-5, 1e-3])}
    assert settings["gpus_per_trial"] == 0.25 and settings["max_failures"] == -1


def write_trial(folder, name, config, returns):
    """A trial folder as a sweep leaves it: trial.json and our progress.csv."""
    trial = os.path.join(folder, name)
    os.makedirs(trial)
    with open(os.path.join(trial, "trial.json"), "w") as trial_file:
        json.dump({"config": config, "worker": {}}, trial_file)
    with open(os.path.join(trial, "progress.csv"), "w", newline="") as csv_file:
        writer = csv.writer(csv_file)
        writer.writerow(["Epoch", "AverageReturn", "TotalEnvSteps"])
        for epoch, value in enumerate(returns):
            writer.writerow([epoch, "" if value is None else repr(value), 100 * (epoch + 1)])
    os.makedirs(os.path.join(trial, "checkpoint_000001"))  # checkpoints are not runs
    return trial


def test_summary_groups_seeds_per_config_best_first(tmp_path):
    folder = str(tmp_path)
    finals = {(1e-3, 1): -300.0, (1e-3, 2): -200.0, (3e-4, 1): -150.0, (3e-4, 2): -170.0}
    for index, ((lr, seed), final) in enumerate(sorted(finals.items())):
        write_trial(folder, "ddpg_%05d" % index, {"preset": "pendulum", "qfunc_lr": lr,
                                                  "seed": seed}, [-900.0, None, final])
    # a trial that failed before its first evaluation
    write_trial(folder, "ddpg_00004", {"preset": "pendulum", "qfunc_lr": 1e-2, "seed": 1}, [])
    summary = ddpg_tune.summarize(folder)
    assert summary["varying"] == ["qfunc_lr"]
    labels = [config["label"] for config in summary["configs"]]
    assert labels == ["qfunc_lr=0.0003", "qfunc_lr=0.001", "qfunc_lr=0.01"]
    best = summary["configs"][0]
    assert best["seeds"] == [1, 2] and best["n_with_result"] == 2
    np.testing.assert_allclose([best["mean"], best["std"]],
                               [np.mean([-150.0, -170.0]), np.std([-150.0, -170.0])])
    assert summary["configs"][2]["mean"] is None
    assert ddpg_tune.summarize(folder, mode="min")["configs"][0]["label"] == "qfunc_lr=0.001"
    lines = ddpg_tune.format_summary(summary)
    assert lines[2].split()[:3] == ["1", "qfunc_lr=0.0003", "1"]
    assert "-160 +- 10" in lines[2] and "no result" in lines[4]
    json_path, csv_path = ddpg_tune.write_summary(summary)
    rows = read_rows(csv_path)
    assert [r["qfunc_lr"] for r in rows] == ["0.0003", "0.001", "0.01"]
    assert float(rows[0]["AverageReturn_mean"]) == best["mean"]
    with open(json_path) as json_file:
        assert json.load(json_file)["configs"][0]["config"]["qfunc_lr"] == 3e-4
    pytest.importorskip("matplotlib")
    output = ddpg_tune.plot_summary(summary, log=lambda message: None)
    assert os.path.getsize(output) > 0
    with pytest.raises(ValueError, match="no column 'AverageReward'.*AverageReturn"):
        ddpg_tune.summarize(folder, metric="AverageReward")


def run_cli(*args, timeout=120):
    return subprocess.run([sys.executable, SWEEP] + list(args), capture_output=True,
                          text=True, timeout=timeout)


def test_cli_refuses_an_unknown_hyperparameter_before_starting_ray(tmp_path):
    result = run_cli("--grid", "qfunc_learning_rate=1e-3,1e-4", "--storage", str(tmp_path))
    assert result.returncode == 2
    assert "unknown hyperparameter name 'qfunc_learning_rate'" in result.stderr
    assert "qfunc_lr" in result.stderr and not os.listdir(tmp_path)
    result = run_cli("--storage", str(tmp_path), "--", "--seed", "3")
    assert result.returncode == 2 and "--seeds" in result.stderr


def test_cli_refuses_a_value_out_of_range_before_starting_ray(tmp_path):
    result = run_cli("--grid", "qfunc_lr=-1,2", "--storage", str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "sweep.py: error: qfunc_lr=-1.0 is not a valid run_ddpg.py value: qfunc_lr must be "
        "positive, got -1.0")
    assert not os.listdir(str(tmp_path))


def test_cli_says_what_to_install_without_ray(tmp_path):
    # sys.modules["ray"] = None makes `import ray` fail as if Ray were not installed
    code = ("import runpy, sys; sys.modules['ray'] = None; sys.argv = [%r, '--storage', %r, "
            "'--', '--n-epochs', '1']; runpy.run_path(%r, run_name='__main__')"
            % (SWEEP, str(tmp_path), SWEEP))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2
    assert 'pip install "mxnet-ddpg[ray]"' in result.stderr


def test_cli_reports_an_unreachable_cluster(tmp_path):
    pytest.importorskip("ray", reason=RAY_MISSING)
    with socket.socket() as probe:  # a port nobody listens on once this is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run_cli("--address", "127.0.0.1:%d" % port, "--storage", str(tmp_path), "--",
                     "--n-epochs", "1", timeout=60)
    assert result.returncode == 2
    assert "cannot reach a Ray cluster at 127.0.0.1:%d" % port in result.stderr


# ---------------------------------------------------------------------------------------------
# sweeps on a local Ray
# ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    """A local Ray with 2 CPUs, its session files in a short temporary folder (Ray's socket
    paths must stay under ~107 characters), shut down afterwards. The workers can import
    tests/failing_env.py; its marker file lives in the returned folder."""
    ray = pytest.importorskip("ray", reason=RAY_MISSING)
    pytest.importorskip("ray.tune", reason=RAY_MISSING)
    faults = tmp_path_factory.mktemp("faults")
    temp_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    saved = {name: os.environ.get(name) for name in ("RAY_AUTH_TOKEN", "RAY_TMPDIR")}
    if "RAY_AUTH_MODE" not in os.environ and "RAY_AUTH_TOKEN" not in os.environ:
        # Ray keeps token authentication on and would save a new token in ~/.ray otherwise
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    os.environ["RAY_TMPDIR"] = temp_dir  # Tune's lock files, else in /tmp/_ray_lockfiles
    paths = [TESTS] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    try:
        ray.init(num_cpus=2, include_dashboard=False, _temp_dir=temp_dir, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(paths),
                                           "DDPG_TEST_FAIL_MARKER": str(faults / "failed")}})
        yield faults
    finally:
        ray.shutdown()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def two_trials(local_ray, tmp_path_factory):
    storage = str(tmp_path_factory.mktemp("sweeps"))
    space = dict(SMALL, env="cartpole", eval_samples=100, qfunc_lr=1e-3)
    grid = ddpg_tune.run_sweep(space, seeds=[1, 2], storage=storage, name="two",
                               cpus_per_trial=1, max_concurrent=2, verbose=0)
    return grid, os.path.join(storage, "two")


def test_max_concurrent_caps_the_trials_running_at_once(local_ray, tmp_path):
    """Two 1-CPU trials on 2 CPUs would run together; max_concurrent=1 runs them in turn."""
    space = dict(SMALL, env="cartpole", eval_samples=100, n_epochs=1)
    grid = ddpg_tune.run_sweep(space, seeds=[1, 2], storage=str(tmp_path), name="one",
                               cpus_per_trial=1, max_concurrent=1, verbose=0)
    assert grid.num_terminated == 2
    windows = []
    for trial in trial_folders(str(tmp_path / "one")):
        with open(os.path.join(trial, "trial.json")) as trial_file:
            worker = json.load(trial_file)["worker"]
        windows.append((worker["started"], worker["finished"]))
    (_, first_end), (second_start, _) = sorted(windows)
    assert second_start >= first_end


def trial_folders(folder):
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)
                  if os.path.isfile(os.path.join(folder, name, "trial.json")))


def test_sweep_runs_both_trials_to_the_end(two_trials):
    grid, folder = two_trials
    assert len(grid) == 2 and grid.num_errors == 0 and grid.num_terminated == 2
    assert sorted(result.config["seed"] for result in grid) == [1, 2]
    for result in grid:
        frame = result.metrics_dataframe
        assert list(frame["Epoch"]) == [0, 1, 2]
        assert list(frame["TotalEnvSteps"]) == [100, 200, 300]
        assert np.isfinite(frame["AverageReturn"]).all()
        # the trial's own progress.csv holds the rows it reported
        rows = read_rows(os.path.join(result.path, "progress.csv"))
        assert [float(r["AverageReturn"]) for r in rows] == list(frame["AverageReturn"])
    # one progress.csv per trial (Tune's own CSV logger is off; checkpoints are not runs)
    assert len(find_progress_files([folder])) == 2 == len(trial_folders(folder))


def test_each_trial_set_its_threads_before_mxnet_loaded(two_trials):
    _, folder = two_trials
    pids = set()
    for trial in trial_folders(folder):
        with open(os.path.join(trial, "trial.json")) as trial_file:
            worker = json.load(trial_file)["worker"]
        assert worker["mxnet_loaded_before_thread_settings"] is False
        assert worker["threads"] == 1  # 1 CPU per trial
        for variable in ddpg_tune.THREAD_VARIABLES:
            assert worker[variable] == "1", variable
        assert worker["ctx"] == "cpu(0)" and worker["resumed_at_epoch"] is None
        pids.add(worker["pid"])
        with open(os.path.join(trial, "run_args.json")) as args_file:
            run_args = json.load(args_file)
        assert run_args["env"] == "cartpole" and run_args["n_epochs"] == 3
    assert len(pids) == 2  # a process per trial


def test_trial_checkpoints_restore_into_ddpg(two_trials):
    grid, _ = two_trials
    for result in grid:
        checkpoints = sorted(d for d in os.listdir(result.path) if d.startswith("checkpoint_"))
        assert len(checkpoints) == 2  # keep_checkpoints=2 of the 3 epochs' checkpoints
        with result.checkpoint.as_directory() as saved:
            args = experiment.args_from_config(result.config, ctx="cpu",
                                               no_progress_bar=True)
            env, max_path_length = experiment.make_env(args)
            algo = experiment.make_algorithm(args, env, max_path_length)
            algo.restore(os.path.join(saved, "ddpg"))
            assert (algo.epoch, algo.total_env_steps) == (3, 300)
            assert len(read_rows(os.path.join(saved, "progress_checkpoint.csv"))) == 3


def test_sweep_results_table(two_trials):
    _, folder = two_trials
    summary = ddpg_tune.summarize(folder)
    assert len(summary["configs"]) == 1 and summary["varying"] == []
    config = summary["configs"][0]
    assert config["seeds"] == [1, 2] and config["n_with_result"] == 2
    finals = [float(read_rows(os.path.join(run["folder"], "progress.csv"))[-1]
                    ["AverageReturn"]) for run in config["runs"]]
    np.testing.assert_allclose([config["mean"], config["std"]],
                               [np.mean(finals), np.std(finals)])
    assert config["config"]["qfunc_lr"] == 1e-3 and "seed" not in config["config"]
    with open(os.path.join(folder, "sweep.json")) as sweep_file:
        assert json.load(sweep_file)["seeds"] == [1, 2]
    with pytest.raises(ValueError, match="already holds a sweep"):
        ddpg_tune.run_sweep(dict(SMALL), seeds=[1], storage=os.path.dirname(folder),
                            name="two")


def failing_sweep(storage, marker, max_failures):
    if os.path.exists(marker):
        os.remove(marker)
    space = dict(SMALL, env="failing_env:FailOncePendulum-v0", eval_samples=50,
                 tensorboard=HAVE_TENSORBOARD)
    return ddpg_tune.run_sweep(space, seeds=[1], storage=storage, name="failing",
                               max_failures=max_failures, verbose=0)


def check_continued(folder):
    trial, = trial_folders(folder)
    rows = read_rows(os.path.join(trial, "progress.csv"))
    assert [(r["Epoch"], r["TotalEnvSteps"]) for r in rows] == \
        [("0", "100"), ("1", "200"), ("2", "300")]
    with open(os.path.join(trial, "trial.json")) as trial_file:
        assert json.load(trial_file)["worker"]["resumed_at_epoch"] == 1
    if HAVE_TENSORBOARD:
        # the trial's event files continue across its restart: each step once, as progress.csv
        curves = tb_helpers.assert_events_match_progress(trial)
        assert [step for step, _ in curves["train/EpisodeReturn"]] == list(range(50, 301, 50))


def test_resume_continues_a_failed_trial_from_its_checkpoint(local_ray, tmp_path):
    marker = str(local_ray / "failed")
    grid = failing_sweep(str(tmp_path), marker, max_failures=0)
    assert grid.num_errors == 1 and os.path.exists(marker)
    folder = str(tmp_path / "failing")
    trial, = trial_folders(folder)
    assert len(read_rows(os.path.join(trial, "progress.csv"))) == 1  # failed in epoch 1
    resumed = ddpg_tune.resume_sweep(str(tmp_path), "failing", verbose=0)
    assert resumed.num_errors == 0 and resumed.num_terminated == 1
    check_continued(folder)


def test_a_failed_trial_restarts_from_its_checkpoint(local_ray, tmp_path):
    grid = failing_sweep(str(tmp_path), str(local_ray / "failed"), max_failures=1)
    assert grid.num_errors == 0 and grid.num_terminated == 1
    check_continued(str(tmp_path / "failing"))
