"""benchmarks/learning.py end to end on a few hundred steps, ddpg.experiment.plot, and ddpg.experiment.results."""
import csv
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from ddpg.experiment.results import aggregate, find_progress_files, group_of, read_curve

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCHMARKS = os.path.join(REPO, "benchmarks")
BENCH = os.path.join(BENCHMARKS, "learning.py")
SMALL = ["--epoch-length", "200", "--memory-start-size", "100", "--eval-samples", "200",
         "--batch-size", "32", "--qfunc-hidden-sizes", "16", "16", "--policy-hidden-sizes",
         "16", "16", "--ctx", "cpu"]


def bench(*args):
    return subprocess.run([sys.executable, BENCH] + list(args), capture_output=True,
                          text=True, timeout=240)


@pytest.fixture(scope="module")
def bench_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    result = bench("--task", "pendulum", "--seeds", "1", "2", "--steps", "400", "--parallel",
                   "2", "--final-eval-episodes", "3", "--out", str(out), "--", *SMALL)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out, result.stdout


def final_returns(out):
    finals = []
    for seed in (1, 2):
        with open(os.path.join(out, "pendulum", "seed_%d" % seed, "progress.csv")) as f:
            rows = list(csv.DictReader(f))
        assert [r["Epoch"] for r in rows] == ["0", "1"]  # 400 steps / 200 per epoch
        assert rows[-1]["TotalEnvSteps"] == "400"
        assert all(r["AverageReturn"] != "" for r in rows)  # evaluated every epoch
        finals.append([float(r["AverageReturn"]) for r in rows])
    return np.array(finals)


def test_benchmark_writes_runs_and_summary(bench_out):
    out, stdout = bench_out
    returns = final_returns(out)
    with open(os.path.join(out, "pendulum", "summary.json")) as f:
        summary = json.load(f)
    assert summary["seeds"] == [1, 2] and summary["unfinished_seeds"] == []
    assert summary["env"] == "Pendulum-v1"
    np.testing.assert_allclose(summary["final_return"]["mean"], returns[:, -1].mean())
    np.testing.assert_allclose(summary["final_return"]["std"], returns[:, -1].std())
    np.testing.assert_allclose(summary["best_return"]["mean"], returns.max(axis=1).mean())
    # two evaluations per seed: the mean of the final 10 is the mean of both
    np.testing.assert_allclose(summary["last10_return"]["mean"], returns.mean(axis=1).mean())
    np.testing.assert_allclose(summary["last10_return"]["std"], returns.mean(axis=1).std())
    np.testing.assert_allclose(summary["max_of_mean_curve"]["value"],
                               returns.mean(axis=0).max())
    assert summary["env_steps"] == {"min": 400, "max": 400}
    # folders relative to the run root (--out), so that the file means the same anywhere
    assert summary["task_dir"] == "pendulum"
    assert [summary["per_seed"][s]["folder"] for s in ("1", "2")] == [
        os.path.join("pendulum", "seed_1"), os.path.join("pendulum", "seed_2")]
    with open(os.path.join(out, "pendulum", "summary.json")) as f:
        assert str(out) not in f.read()
    walls = summary["wall_time_s"]["per_seed"]
    assert all(walls[s] > 0 for s in ("1", "2"))
    np.testing.assert_allclose(summary["wall_time_s"]["total"], walls["1"] + walls["2"])
    for seed in (1, 2):
        folder = os.path.join(out, "pendulum", "seed_%d" % seed)
        with open(os.path.join(folder, "params.json")) as f:
            params = json.load(f)
        assert params["preset"] == "pendulum" and params["seed"] == seed
        assert params["n_epochs"] == 2 and params["batch_size"] == 32
        assert params["discount"] == 0.98  # from the preset
        assert os.path.exists(os.path.join(folder, "benchmark.json"))
    headline = "final AverageReturn %.1f +- %.1f" % (returns[:, -1].mean(), returns[:, -1].std())
    assert headline in stdout


def test_a_benchmark_s_files_name_no_folder_of_the_machine(bench_out):
    out, _ = bench_out
    folder = os.path.join(str(out), "pendulum", "seed_1")
    with open(os.path.join(folder, "benchmark.json")) as f:
        command = json.load(f)["command"]
    # as typed from the repository; the run folder (outside it) relative to itself
    assert command[:2] == [os.path.basename(sys.executable),
                           os.path.join("examples", "run_ddpg.py")]
    assert command[command.index("--log-dir") + 1] == "."
    with open(os.path.join(folder, "params.json")) as f:
        assert json.load(f)["log_dir"] == "."
    with open(os.path.join(folder, "final_eval.json")) as f:
        assert json.load(f)["checkpoint"] == "params"
    for name in ("benchmark.json", "params.json", "final_eval.json"):
        with open(os.path.join(folder, name)) as f:
            text = f.read()
        assert str(out) not in text and sys.executable not in text, name


def test_final_policy_is_evaluated_on_more_episodes(bench_out):
    """--final-eval-episodes: each seed's last checkpoint, its own seed, in the summary."""
    out, stdout = bench_out
    means = []
    for seed in (1, 2):
        with open(os.path.join(out, "pendulum", "seed_%d" % seed, "final_eval.json")) as f:
            final_eval = json.load(f)
        assert final_eval["episodes"] == 3 and len(final_eval["returns"]) == 3
        assert final_eval["epoch"] == 2 and final_eval["seed"] == seed + 1000
        np.testing.assert_allclose(final_eval["mean"], np.mean(final_eval["returns"]))
        assert all(-2000 < r < 0 for r in final_eval["returns"])  # 200 Pendulum steps
        means.append(final_eval["mean"])
    with open(os.path.join(out, "pendulum", "summary.json")) as f:
        summary = json.load(f)["final_eval"]
    assert summary["episodes"] == 3
    np.testing.assert_allclose([summary["mean"], summary["std"]], [np.mean(means), np.std(means)])
    assert "final policy, 3 episodes per seed: %.1f +- %.1f" % (np.mean(means),
                                                                np.std(means)) in stdout


def test_finished_runs_are_skipped_and_summary_reprinted(bench_out):
    out, first_stdout = bench_out
    csv_path = os.path.join(out, "pendulum", "seed_1", "progress.csv")
    before = os.stat(csv_path).st_mtime_ns
    again = bench("--task", "pendulum", "--seeds", "1", "2", "--steps", "400", "--out",
                  str(out), "--final-eval-episodes", "3", "--", *SMALL)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("already finished, skipped") == 2
    assert "final policy over" not in again.stdout  # evaluations kept, not rerun
    assert os.stat(csv_path).st_mtime_ns == before
    only = bench("--summarize-only", "--out", str(out))
    assert only.returncode == 0, only.stderr[-3000:]
    headline = [line for line in first_stdout.splitlines() if "final AverageReturn" in line]
    assert headline and headline[-1] in only.stdout


def progress_rows(folder):
    with open(os.path.join(folder, "progress.csv")) as f:
        return [{key: value for key, value in row.items() if key != "Time"}
                for row in csv.DictReader(f)]


def test_an_interrupted_run_is_continued_from_its_checkpoint(bench_out, tmp_path):
    """A folder with a checkpoint but no marker (here: the run's first epoch, made by
    run_ddpg.py alone, as a run stopped after it) is continued to the number of epochs
    asked for, and gives the numbers of the run that was never stopped."""
    out, _ = bench_out
    folder = tmp_path / "pendulum" / "seed_1"
    first = subprocess.run([sys.executable, os.path.join(REPO, "examples", "run_ddpg.py"),
                            "--preset", "pendulum", "--seed", "1", "--log-dir", str(folder),
                            "--no-progress-bar", "--n-epochs", "1"] + SMALL,
                           capture_output=True, text=True, timeout=240)
    assert first.returncode == 0, first.stderr[-3000:]
    assert len(progress_rows(folder)) == 1
    (folder / "output.log").write_text("the first piece's output\n")
    result = bench("--task", "pendulum", "--seeds", "1", "--steps", "400",
                   "--final-eval-episodes", "0", "--out", str(tmp_path), "--", *SMALL)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "interrupted after epoch 1 of 2; continued from its checkpoint" in result.stdout
    assert not (tmp_path / "pendulum" / ".failed").exists()
    assert progress_rows(folder) == progress_rows(os.path.join(out, "pendulum", "seed_1"))
    with open(folder / "benchmark.json") as f:
        marker = json.load(f)
    with open(folder / "benchmark_pieces.json") as f:
        pieces = json.load(f)["pieces"]
    assert marker["pieces"] == len(pieces) == 2
    assert pieces[0]["command"][pieces[0]["command"].index("--preset") + 1] == "pendulum"
    assert pieces[1]["command"][2:6] == ["--resume", "params", "--n-epochs", "2"]
    assert all(piece["wall_time_s"] > 0 for piece in pieces)
    assert marker["wall_time_s"] == pytest.approx(sum(p["wall_time_s"] for p in pieces))
    with open(folder / "output.log") as f:
        log = f.read()
    assert log.startswith("the first piece's output\n") and "epoch #1 | Training started" in log
    # asked for with other settings: left alone, with a warning
    os.remove(folder / "benchmark.json")
    other = bench("--task", "pendulum", "--seeds", "1", "--steps", "600",
                  "--final-eval-episodes", "0", "--out", str(tmp_path), "--", *SMALL)
    assert "asked for with other settings" in other.stdout
    assert len(progress_rows(folder)) == 2


def test_plot_writes_a_png(bench_out, tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pytest.skip("matplotlib is not installed: pip install -r requirements-test.txt")
    out, _ = bench_out
    png = tmp_path / "curve.png"
    result = subprocess.run(
        [sys.executable, "-m", "ddpg.plot", os.path.join(str(out), "pendulum"), "-o", str(png),
         "--hline", "SB3 zoo=-152", "--title", "smoke"],
        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "pendulum (Pendulum-v1): 2 run(s)" in result.stdout
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


@pytest.mark.parametrize("command, args, status", [
    ("ddpg.plot", ["no-such-folder", "-o", "curve.png"], 2),
    ("ddpg.export", ["no-such-folder/params", "-o", "exported/policy"], 1),
])
def test_the_short_commands_report_errors_with_their_exit_status(tmp_path, command, args,
                                                                   status):
    """python -m ddpg.plot / ddpg.export: one line naming the command, and a failing exit
    status (a script checking $? must see the failure)."""
    result = subprocess.run([sys.executable, "-m", command] + args, capture_output=True,
                            text=True, timeout=120, cwd=str(tmp_path))
    assert result.returncode == status, (result.stdout, result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m %s: error: " % command), lines
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.parametrize("command", ["ddpg.export", "ddpg.plot"])
def test_help_prints_only_the_help(tmp_path, command):
    """--help starts no MXNet engine line (MXNet's exit hook would start the engine, which
    announces itself on stderr): stderr is empty, stdout is argparse's help alone."""
    mxnet_line = re.compile(r"^\[\d\d:\d\d:\d\d\] \S+\.cc:\d+: ", re.M)
    environment = {key: value for key, value in os.environ.items()
                   if key != "DDPG_MXNET_INFO"}
    result = subprocess.run([sys.executable, "-m", command, "--help"], capture_output=True,
                            text=True, timeout=120, cwd=str(tmp_path), env=environment)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr == ""
    assert result.stdout.startswith("usage: python -m %s " % command)
    assert not mxnet_line.search(result.stdout + result.stderr)
    # what the test looks for is what MXNet prints when the lines are let through
    shown = subprocess.run([sys.executable, "-m", command, "--help"], capture_output=True,
                           text=True, timeout=120, cwd=str(tmp_path),
                           env=dict(environment, DDPG_MXNET_INFO="1"))
    assert "MXNet start using engine" in mxnet_line.search(shown.stderr).string
    assert os.listdir(str(tmp_path)) == []


def test_bad_extra_flags_fail_before_any_run(tmp_path):
    result = bench("--task", "pendulum", "--seeds", "1", "--out", str(tmp_path), "--",
                   "--no-such-flag")
    assert result.returncode != 0 and "not valid run_ddpg.py flags" in result.stderr
    result = bench("--task", "pendulum", "--seeds", "1", "--out", str(tmp_path), "--",
                   "--seed", "3")
    assert result.returncode != 0 and "--seed is set by the benchmark" in result.stderr
    assert not os.path.exists(tmp_path / "pendulum")


# --- ddpg.experiment.results: grouping and combining seeds, on hand-written CSVs ----------------------

def write_csv(path, rows, header=("Epoch", "AverageReturn", "TotalEnvSteps")):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_read_curve_skips_rows_without_the_key(tmp_path):
    path = write_csv(str(tmp_path / "progress.csv"),
                     [[0, "", 100], [1, "-5.0", 200], [2, "nan", 300], [3, "-1.5", 400]])
    xs, ys = read_curve(path)
    assert xs.tolist() == [200, 400] and ys.tolist() == [-5.0, -1.5]
    with pytest.raises(KeyError, match="AverageReturn, TotalEnvSteps"):
        read_curve(path, key="Missing")


def test_aggregate_interpolates_onto_the_common_range():
    a = (np.array([0.0, 10.0, 20.0, 30.0]), np.array([0.0, 1.0, 2.0, 3.0]))
    b = (np.array([5.0, 15.0, 25.0]), np.array([0.0, 10.0, 20.0]))
    grid, mean, std, limited_by = aggregate([a, b])
    assert grid.tolist() == [5, 10, 15, 20, 25]  # union of points that both seeds cover
    a_on_grid = grid / 10.0
    b_on_grid = grid - 5.0
    np.testing.assert_allclose(mean, (a_on_grid + b_on_grid) / 2)
    np.testing.assert_allclose(std, np.abs(a_on_grid - b_on_grid) / 2)
    assert limited_by == 1  # b ends first
    with pytest.raises(ValueError):
        aggregate([a, (np.array([]), np.array([]))])


def test_grouping_by_parent_folder_and_labels(tmp_path):
    for task in ("pendulum", "hopper"):
        for seed in (1, 2):
            write_csv(str(tmp_path / task / ("seed_%d" % seed) / "progress.csv"),
                      [[0, -1.0, 100]])
    write_csv(str(tmp_path / "pendulum" / ".failed" / "seed_3" / "progress.csv"), [[0, 0, 1]])
    files = find_progress_files([str(tmp_path)])
    assert len(files) == 4 and not any(".failed" in f for f in files)
    assert {group_of(f) for f in files} == {"pendulum", "hopper"}
    labels = [("first seeds", "*seed_1*")]
    assert sorted(group_of(f, labels) for f in files) == [
        "first seeds", "first seeds", "hopper", "pendulum"]


def test_the_mean_of_the_final_10_evaluations_leaves_the_earlier_ones_out(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("learning_bench", BENCH)
    learning = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(learning)
    write_csv(str(tmp_path / "progress.csv"),
              [[epoch, 1000.0 if epoch < 5 else float(epoch), 100 * (epoch + 1)]
               for epoch in range(15)])
    result = learning.seed_result(str(tmp_path))
    assert result["last10_return"] == np.mean(np.arange(5, 15))
    assert result["final_return"] == 14.0 and result["best_return"] == 1000.0


def test_seed_result_finds_the_first_solved_epoch(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("learning_bench", BENCH)
    learning = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(learning)
    write_csv(str(tmp_path / "progress.csv"),
              [[0, 100.0, 1000], [1, "", 2000], [2, 960.0, 3000], [3, 940.0, 4000],
               [4, 990.0, 5000]])
    result = learning.seed_result(str(tmp_path), solved_return=950.0)
    assert result["solved_epoch"] == 2 and result["solved_env_steps"] == 3000
    assert result["final_return"] == 990.0 and result["best_epoch"] == 4
    assert result["evaluations"] == 4


def test_throughput_benchmark_runs_and_reports(tmp_path):
    """benchmarks/throughput.py end to end on a few steps (ours only: CI has no torch)."""
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "throughput.py"), "--configs", "1",
         "2", "--steps", "60", "--warmup", "300", "--threads", "1", "--skip-sb3",
         "--skip-jax", "--per-call"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "matmul ceiling" in out
    # --per-call: every call of an update once a step, the soft update twice
    for call in ("target chain executor (mu', Q', y): forward", "Q-function executor: backward",
                 "policy executor (Q under the policy loss): backward",
                 "policy, batch: backward", "Q-function optimiser step",
                 "policy optimiser step", "statistics sums", "acting: observation in"):
        assert re.search(re.escape(call) + r".*\s1\.00\s", out), call
    assert re.search(r"soft update \(one network\)\s+2\.00\s", out)
    assert "config 1 (original sizes: 32-unit layers, batch 32): ours" in out
    # the Gluon contender, with our MXNet settings
    assert re.search(r"Gluon [\d.]+ steps/s, ratio ours/Gluon [\d.]+x", out)
    # the auto choices per size (with --threads 1 both sizes get one OpenMP thread)
    assert "(oneDNN off, 1 OpenMP thread)" in out and "(oneDNN on, 1 OpenMP thread)" in out
    for part in ("update: networks and optimisers", "env step", "action selection",
                 "replay sampling", "target update", "host-to-device copies"):
        assert part in out
    assert "GFLOP per update" in out


def load_benchmark(name):
    import importlib.util
    if BENCHMARKS not in sys.path:  # the scripts import benchmarks/contender_protocol.py
        sys.path.insert(0, BENCHMARKS)
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(REPO, "benchmarks", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_throughput_runs_the_jax_contender_and_reports_the_ratio(tmp_path):
    """The contender is a subprocess of another interpreter whose last line is JSON; here a
    stand-in interpreter that checks the arguments it gets and reports 100 steps/s. (The
    real contender runs in CI from its own virtual environment: .ci/run.)"""
    stand_in = tmp_path / "python"
    stand_in.write_text(
        "#!%s\nimport json, sys\n"
        "script, args = sys.argv[1], sys.argv[2:]\n"
        "assert script.endswith('jax_ddpg.py'), script\n"
        "assert args == ['--config', '1', '--warmup', '300', '--steps', '60', '--threads', "
        "'1'], args\n"
        "print('compiling...')\nprint(json.dumps({'steps_per_s': 100.0}))\n" % sys.executable)
    stand_in.chmod(0o755)
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "throughput.py"), "--configs", "1",
         "--steps", "60", "--warmup", "300", "--threads", "1", "--skip-sb3", "--no-breakdown",
         "--skip-gluon", "--jax-python", str(stand_in)], capture_output=True, text=True,
        timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [l for l in result.stdout.splitlines() if l.startswith("config 1")][0]
    ours = float(line.split("ours ")[1].split(" steps/s")[0])
    assert "JAX 100.0 steps/s" in line
    # the printed ratio is of the unrounded rate, so it may differ from the printed rate's
    # by the last digit's rounding
    ratio = float(line.split("ratio ours/JAX ")[1].rstrip("x"))
    assert abs(ratio - ours / 100.0) <= 0.0051, line


def test_throughput_without_the_jax_environment_says_how_to_make_it(tmp_path):
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "throughput.py"), "--configs", "1",
         "--skip-sb3", "--jax-python", str(tmp_path / "missing")], capture_output=True,
        text=True, timeout=120)
    assert result.returncode != 0
    assert "requirements-jax.txt" in result.stderr and "--skip-jax" in result.stderr
    assert "Traceback" not in result.stderr


def test_sb3_pendulum_summary_reads_every_seed(tmp_path):
    """benchmarks/sb3_pendulum.py's summary (training it needs SB3, which CI does not
    install; the runs are in docs/results/sb3_pendulum.json)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "sb3_pendulum", os.path.join(REPO, "benchmarks", "sb3_pendulum.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "no seed_*.json" in module.summarize(str(tmp_path))
    for seed, mean in ((1, -150.0), (2, -146.0)):
        with open(str(tmp_path / ("seed_%d.json" % seed)), "w") as f:
            json.dump({"seed": seed, "steps": 20000, "episodes": 750, "mean": mean,
                       "train_time_s": 10.0 * seed}, f)
    line = module.summarize(str(tmp_path))
    assert "2 seed(s), 20000 steps: final policy over 750 episodes: -148.0 +- 2.0" in line
    assert "1: -150.0, 2: -146.0" in line and "train 15 s per seed" in line


def test_train_return_last_weights_epochs_by_their_episodes(tmp_path):
    """CleanRL's metric: the mean over the training episodes of the last N steps, so an epoch
    with three episodes counts three times as much as one with one."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("learning_bench", BENCH)
    learning = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(learning)
    path = str(tmp_path / "progress.csv")
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Epoch", "TotalEnvSteps", "AverageEsReturn", "NumEsEpisodes"])
        writer.writerows([[0, 1000, 5.0, 2], [1, 2000, "", ""], [2, 3000, 10.0, 1],
                          [3, 4000, 40.0, 3]])
    # the last 2500 steps: epochs 2 and 3 (epoch 1 recorded no episode)
    assert learning.train_return_last(path, window=2500) == (10.0 + 3 * 40.0) / 4
    assert learning.train_return_last(path, window=10 ** 6) == (2 * 5 + 10 + 120.0) / 6
    assert learning.train_return_last(path, window=500) == 40.0


def write_params(folder, **arguments):
    settings = dict(env="Pendulum-v1", qfunc_lr=0.001, seed=1, log_dir=str(folder))
    settings.update(arguments)
    with open(os.path.join(str(folder), "params.json"), "w") as params:
        json.dump(settings, params)


def grouped(tmp_path, runs):
    """``group_runs`` of ``runs`` ({folder: params.json arguments}) as one --label group."""
    from ddpg.experiment.results import group_runs
    for name, arguments in runs.items():
        progress = write_csv(str(tmp_path / "runs" / name / "progress.csv"), [[0, -1.0, 100]])
        write_params(os.path.dirname(progress), **arguments)
    return group_runs(find_progress_files([str(tmp_path / "runs")]), labels=[("all", "*")])


def test_every_run_is_in_a_group_whatever_its_settings(tmp_path):
    # a flag newer than a run's params.json is the flag's default, as for a resume: the run
    # that does not record gradient_steps groups with the one that records its default
    groups = grouped(tmp_path / "newer", {"old": dict(seed=1),
                                          "new": dict(seed=2, gradient_steps=None),
                                          "other": dict(seed=1, qfunc_lr=0.01)})
    assert sorted(len(paths) for paths in groups.values()) == [1, 2]
    # settings that differ only beyond the ones a label shows get labels of their own
    many = dict(batch_size=64, discount=0.9, eval_samples=100, her_k=2)
    groups = grouped(tmp_path / "many", {"p": dict(qfunc_lr=0.001), "q": dict(many),
                                         "r": dict(qfunc_lr=0.01)})
    assert sorted(len(paths) for paths in groups.values()) == [1, 1, 1]
    assert any("qfunc_lr=0.01" in label for label in groups)


def test_plots_group_runs_whose_params_json_hold_absolute_or_relative_paths(tmp_path):
    """Runs of older versions record log_dir and resume absolute, newer ones relative to the
    run folder: the seeds of one setting are one curve all the same."""
    groups = grouped(tmp_path, {"old": dict(seed=1, log_dir="/home/someone/runs/old",
                                            resume="/home/someone/runs/old/params"),
                                "new": dict(seed=2, log_dir=".", resume="params")})
    assert [len(paths) for paths in groups.values()] == [2]


def test_runs_of_different_tasks_or_settings_are_never_averaged(tmp_path):
    from ddpg.experiment.results import group_runs
    runs = {"a/seed_1": dict(env="Pendulum-v1", seed=1),
            "a/seed_2": dict(env="Pendulum-v1", seed=2),
            "b/seed_1": dict(env="HalfCheetah-v5", seed=1),
            "c/seed_1": dict(env="Pendulum-v1", seed=1, qfunc_lr=0.01)}
    for name, arguments in runs.items():
        progress = write_csv(str(tmp_path / "runs" / name / "progress.csv"), [[0, -1.0, 100]])
        write_params(os.path.dirname(progress), **arguments)
    # all four under one folder name, as `python -m ddpg.plot runs/a runs/b` of seed folders
    files = find_progress_files([str(tmp_path / "runs")])
    groups = group_runs(files, labels=[("all", "*")])
    assert sorted(len(paths) for paths in groups.values()) == [1, 1, 2]
    labels = sorted(groups)
    assert any("Pendulum-v1" in label and "qfunc_lr=0.01" in label for label in labels)
    assert any("HalfCheetah-v5" in label for label in labels)
    for paths in groups.values():
        assert len({os.path.basename(os.path.dirname(os.path.dirname(p))) for p in paths}) == 1


def test_flags_that_only_say_how_to_run_never_split_plot_groups():
    """Every flag allowed beside --resume (how to continue a run, not what it trains) is left
    out of the settings that group runs into curves."""
    from ddpg.experiment import RESUME_FLAGS
    from ddpg.experiment.results import NOT_SETTINGS
    assert set(RESUME_FLAGS) <= NOT_SETTINGS


@pytest.mark.parametrize("config", ["1", "4"])  # the action joins at layer 2, at the input
def test_gluon_contender_computes_our_update(config):
    """From identical parameters and batch, one update of the Gluon contender gives our Q
    loss, and (after the critic's Adam step) our policy loss through the updated critic."""
    throughput, gluon_ddpg = load_benchmark("throughput"), load_benchmark("gluon_ddpg")
    import mxnet as mx
    batch_size = throughput.CONFIGS[config][4]
    algo = throughput.make_ours(config, warmup=batch_size, ctx=mx.cpu(), seed=3)
    agent = gluon_ddpg.Agent(obs_dim=3, act_dim=1, config=config)
    for ours, block in ((algo.qfunc, agent.critic), (algo.policy, agent.actor)):
        ours_params = list(ours.params.views.values())
        assert len(ours_params) == len(gluon_ddpg.parameters(block))
        for array, parameter in zip(ours_params, gluon_ddpg.parameters(block)):
            parameter.set_data(array)
    gluon_ddpg.copy_parameters(agent.critic, agent.critic_target)
    gluon_ddpg.copy_parameters(agent.actor, agent.actor_target)
    rng = np.random.RandomState(5)
    batch = (rng.uniform(-1, 1, (batch_size, 3)).astype(np.float32),
             rng.uniform(-1, 1, (batch_size, 1)).astype(np.float32),
             rng.uniform(-10, 0, batch_size).astype(np.float32),
             (rng.uniform(size=batch_size) < 0.2).astype(np.float32),
             rng.uniform(-1, 1, (batch_size, 3)).astype(np.float32))
    algo.do_update(0, batch)
    q_loss, policy_loss = agent.update(*batch)
    np.testing.assert_allclose(q_loss.asscalar(), algo.qfunc.exe.outputs[0].asnumpy()[0],
                               rtol=1e-5)
    np.testing.assert_allclose(policy_loss.asscalar(),
                               algo.policy_executor.outputs[0].asnumpy()[0], rtol=1e-5)


def test_the_collection_benchmark_prints_and_writes_its_figures(tmp_path):
    """benchmarks/collection.py at a tiny size: a figure for each arrangement asked for."""
    out = str(tmp_path / "collection.json")
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "collection.py"), "--envs",
         "Pendulum-v1", "--n-envs", "1", "2", "--steps", "16", "--train-steps", "8",
         "--actors", "1", "--ray-chunk", "8", "--json", out], capture_output=True, text=True,
        timeout=300, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "collection without updates, Pendulum-v1" in result.stdout
    assert "collection without updates by Ray actors" in result.stdout
    with open(out) as handle:
        figures = json.load(handle)
    assert set(figures["collection"]) == {"Pendulum-v1/1", "Pendulum-v1/2", "Pendulum-v1/ray1"}
    assert all(rate > 0 for row in figures["collection"].values()
               for rate in (row.values() if isinstance(row, dict) else [row]))
    assert set(figures["training"]) == {"Pendulum-v1/1 environment",
                                        "Pendulum-v1/4 environments, sync",
                                        "Pendulum-v1/4 environments, async",
                                        "Pendulum-v1/2 Ray actors, deterministic",
                                        "Pendulum-v1/2 Ray actors, async"}
    assert all(rate > 0 for rate in figures["training"].values())


def test_the_replay_sampling_benchmark_prints_its_figures():
    """benchmarks/replay_sampling.py on a small memory: a time for each call (their ratios
    are the benchmark's to report: a test under load cannot order them)."""
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "replay_sampling.py"),
         "--memory-size", "5000", "--batch-size", "64", "--repeats", "20", "--rounds", "2"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    times = dict(re.findall(r"^(.*?\S)\s+([0-9.]+) us", result.stdout, re.M))
    assert set(times) == {"uniform get_batch", "prioritized get_batch",
                          "prioritized get_batch + update_priorities"}
    assert all(float(value) > 0 for value in times.values())
    bad = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "replay_sampling.py"),
                          "--memory-size", "10", "--batch-size", "64"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--memory-size must be at least --batch-size" in bad.stderr


def test_the_rendering_benchmark_prints_its_figures():
    """benchmarks/rendering.py on a few cart-pole and Pendulum frames: the frame size and a
    time for each column."""
    pytest.importorskip("imageio_ffmpeg")
    pytest.importorskip("pygame")
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "benchmarks", "rendering.py"), "--envs",
         "cartpole", "Pendulum-v1", "--steps", "4", "--rounds", "1"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = dict((line.split()[0], line.split()[1:]) for line in result.stdout.splitlines()
                if line.split() and line.split()[0] in ("cartpole", "Pendulum-v1"))
    assert rows["cartpole"][0] == "480x240" and rows["Pendulum-v1"][0] == "500x500"
    assert all(float(value) > 0 for row in rows.values() for value in row[1:])


@pytest.mark.parametrize("algo, default", [("ddpg", 1), ("td3", 2)])
def test_a_policy_delay_left_to_the_algorithm_groups_with_its_value(tmp_path, algo, default):
    """A resumed run's params.json records the checkpoint's --policy-delay (1 for DDPG, 2 for
    TD3) where a fresh run's says None ("the algorithm's default"): the same setting."""
    from ddpg.experiment.results import group_runs, run_settings
    runs = {"x/seed_1": dict(algo=algo, policy_delay=None),
            "x/seed_2": dict(algo=algo, policy_delay=default, seed=2),
            "x/seed_3": dict(algo=algo, policy_delay=default + 1, seed=3)}
    for name, arguments in runs.items():
        progress = write_csv(str(tmp_path / name / "progress.csv"), [[0, -1.0, 100]])
        write_params(os.path.dirname(progress), **arguments)
    files = find_progress_files([str(tmp_path / "x")])
    assert run_settings(files[0])["policy_delay"] in (default, default + 1)
    groups = group_runs(files, labels=[("all", "*")])
    assert sorted(len(paths) for paths in groups.values()) == [1, 2]
    lone, = [paths for paths in groups.values() if len(paths) == 1]
    assert "seed_3" in lone[0]


def test_the_algorithm_cost_benchmark_alternates_and_compares_with_the_first(tmp_path):
    out = tmp_path / "cost.json"
    result = subprocess.run(
        [sys.executable, os.path.join(BENCHMARKS, "algorithm_cost.py"), "--algos", "ddpg",
         "d4pg", "--config", "1", "--rounds", "2", "--steps", "50", "--updates", "20",
         "--warmup", "100", "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    order = re.findall(r"^round (\d): (\w+) ", result.stdout, re.M)
    assert order == [("1", "ddpg"), ("1", "d4pg"), ("2", "d4pg"), ("2", "ddpg")]
    with open(out) as handle:
        figures = json.load(handle)["algorithms"]
    ddpg, d4pg = figures["ddpg"], figures["d4pg"]
    assert ddpg["median_update_ratio"] == 1.0 and len(d4pg["ms_per_update"]) == 2
    ratios = [a / b for a, b in zip(d4pg["ms_per_update"], ddpg["ms_per_update"])]
    assert d4pg["median_update_ratio"] == pytest.approx(np.median(ratios))
    assert "d4pg: median" in result.stdout


def test_the_projection_benchmark_times_both_ways_and_checks_they_agree():
    result = subprocess.run(
        [sys.executable, os.path.join(BENCHMARKS, "projection.py"), "--batch", "8", "--atoms",
         "5", "--rounds", "2", "--calls", "3"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    agree = float(re.search(r"the two agree to (\S+)", result.stdout).group(1))
    assert agree < 1e-5
    for name in ("NumPy on the host", "MXNet symbols"):
        assert re.search(r"^%s.* [0-9.]+ ms per projection" % name, result.stdout, re.M)
