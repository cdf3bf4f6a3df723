"""The example scripts on the command line: errors are messages, resume writes only where it
says, --help shows every default, and no MXNet internals reach the console."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

from ddpg.experiment import commands
from ddpg.experiment.script import run_script
from ddpg.backend.context import num_gpus

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")
RUN = os.path.join(EXAMPLES, "run_ddpg.py")
EVALUATE = os.path.join(EXAMPLES, "evaluate.py")
SWEEP = os.path.join(EXAMPLES, "sweep.py")
SMALL = ["--n-epochs", "1", "--epoch-length", "60", "--memory-start-size", "32",
         "--eval-samples", "20", "--memory-size", "500", "--ctx", "cpu", "--seed", "3",
         "--no-progress-bar", "--policy-hidden-sizes", "8", "8",
         "--qfunc-hidden-sizes", "8", "8", "8"]
#: SMALL, writing no files (a run without --log-dir makes a new folder under runs/)
NO_FILES = SMALL + ["--no-log-dir"]


def load(path, name):
    sys.path.insert(0, EXAMPLES)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(EXAMPLES)
    return module


@pytest.fixture(scope="module")
def scripts():
    return {"run_ddpg.py": load(RUN, "run_ddpg_for_cli"),
            "evaluate.py": load(EVALUATE, "evaluate_for_cli"),
            "sweep.py": load(SWEEP, "sweep_for_cli")}


def fails_as_usage(script, argv, capsys, prog):
    """Run ``script.main`` as the command line does; returns its stderr lines."""
    with pytest.raises(SystemExit) as info:
        run_script(script.main, argv, prog=prog)
    assert info.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 2, err
    assert "Traceback" not in err
    return lines


def tree(folder):
    """Every path under ``folder`` with its size and modification time."""
    listing = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            stat = os.stat(path)
            listing[os.path.relpath(path, folder)] = (stat.st_size, stat.st_mtime_ns)
    return listing


# ---------------------------------------------------------------------------------------------
# errors are messages naming the flag, and leave nothing behind


@pytest.mark.parametrize("flags,words", [
    (["--batch-size", "0"], ["batch_size", "--batch-size"]),
    (["--memory-size", "100", "--memory-start-size", "200", "--batch-size", "32"],
     ["memory_start_size (200)", "memory_size (100)", "--memory-start-size", "--memory-size"]),
    (["--env", "CartPole-v1"], ["--env CartPole-v1", "continuous", "--env cartpole"]),
    (["--env", "NoSuchEnv-v0"], ["--env NoSuchEnv-v0"]),
    (["--ou-dt", "0"], ["--ou-dt"]),
    (["--n-epochs", "0"], ["--n-epochs"]),
    (["--max-path-length", "0"], ["max_path_length must be a positive integer, got 0 (set with "
                                  "--max-path-length)"]),
    (["--max-path-length", "-5"], ["max_path_length must be a positive integer, got -5"]),
    (["--resume", "no/such/checkpoint"], ["--resume no/such/checkpoint"]),
])
def test_run_ddpg_errors_name_the_flag_and_create_nothing(scripts, capsys, tmp_path, flags,
                                                          words):
    log_dir = tmp_path / "run"
    argv = ["--ctx", "cpu", "--log-dir", str(log_dir)] + flags
    if "--resume" in flags:
        argv = flags
    lines = fails_as_usage(scripts["run_ddpg.py"], argv, capsys, "run_ddpg.py")
    message = " ".join(lines)
    assert message.startswith("run_ddpg.py: error: ")
    for word in words:
        assert word in message, message
    assert not log_dir.exists()
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.skipif(num_gpus() > 0, reason="checks the message when there is no GPU")
def test_ctx_gpu_without_a_gpu_points_to_ctx_cpu(scripts, capsys, tmp_path):
    lines = fails_as_usage(scripts["run_ddpg.py"], ["--ctx", "gpu", "--log-dir",
                                                    str(tmp_path / "run")], capsys,
                           "run_ddpg.py")
    assert "--ctx cpu" in lines[0] and "mx.cpu()" not in lines[0]
    assert os.listdir(str(tmp_path)) == []


def test_evaluate_errors_are_messages(scripts, capsys, tmp_path):
    lines = fails_as_usage(scripts["evaluate.py"], [str(tmp_path / "missing")], capsys,
                           "evaluate.py")
    assert lines[0].startswith("evaluate.py: error: checkpoint ")


@pytest.fixture
def no_episodes(monkeypatch):
    """Make ddpg-evaluate fail if it runs an episode: the checks must come first."""
    from ddpg.experiment import evaluate

    def refuse(*args, **kwargs):
        raise AssertionError("an episode ran before the outputs were checked")
    monkeypatch.setattr(evaluate, "record_episodes", refuse)


@pytest.mark.parametrize("flag, name", [("--video", "v.gif"), ("--render", "r.gif"),
                                        ("--json", "s.json")])
def test_evaluate_checks_its_output_paths_before_the_first_episode(
        finished_run, scripts, capsys, tmp_path, no_episodes, flag, name):
    checkpoint = str(finished_run[1] / "params")
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    target = str(blocker / "missing" / name)  # a folder that cannot be made: root too
    lines = fails_as_usage(scripts["evaluate.py"], [checkpoint, flag, target], capsys,
                           "ddpg-evaluate")
    assert lines == ["ddpg-evaluate: error: %s %s cannot be written: %s is a file, not a "
                     "folder; choose another %s" % (flag, target, blocker, flag)]
    existing = tmp_path / name
    existing.write_text("saved")
    lines = fails_as_usage(scripts["evaluate.py"], [checkpoint, flag, str(existing)], capsys,
                           "ddpg-evaluate")
    assert lines == ["ddpg-evaluate: error: %s %s already exists: choose another %s, or pass "
                     "--overwrite to replace it" % (flag, existing, flag)]
    assert existing.read_text() == "saved"
    assert sorted(os.listdir(str(tmp_path))) == ["a_file", name]


def test_evaluate_makes_a_missing_output_folder_and_overwrites_only_when_asked(
        finished_run, scripts, tmp_path, capsys, monkeypatch):
    # recording chooses MuJoCo's OpenGL backend in os.environ: keep it from later tests
    monkeypatch.setattr(os, "environ", os.environ.copy())
    checkpoint = str(finished_run[1] / "params")
    video, stats = tmp_path / "new" / "deeper" / "v.gif", tmp_path / "new" / "s.json"
    argv = [checkpoint, "--episodes", "1", "--max-path-length", "3", "--video", str(video),
            "--json", str(stats)]
    run_script(scripts["evaluate.py"].main, argv, prog="ddpg-evaluate")
    first = video.read_bytes()
    stats.write_text("{}")
    run_script(scripts["evaluate.py"].main, argv + ["--overwrite"], prog="ddpg-evaluate")
    assert video.read_bytes() == first and json.loads(stats.read_text())["episodes"] == 1
    capsys.readouterr()


def test_evaluate_names_a_missing_onnx_file_before_building_anything(
        finished_run, scripts, capsys, tmp_path, no_episodes):
    missing = str(tmp_path / "missing.onnx")
    lines = fails_as_usage(scripts["evaluate.py"],
                           [str(finished_run[1] / "params"), "--onnx", missing], capsys,
                           "ddpg-evaluate")
    assert lines == ["ddpg-evaluate: error: --onnx %s: no such file (ddpg-export writes one)"
                     % missing]


@pytest.mark.parametrize("blocked, env, message", [
    (["gymnasium_robotics"], "FetchReach-v4",
     "Environment `FetchReach` doesn't exist; FetchReach-v4 is one of gymnasium-robotics' "
     'tasks, which is not installed: pip install "mxnet-ddpg[robotics]"'),
    (["mujoco"], "FetchReach-v4",  # gymnasium-robotics cannot import without it
     "Environment `FetchReach` doesn't exist; FetchReach-v4 is one of gymnasium-robotics' "
     'tasks, which is not installed: pip install "mxnet-ddpg[robotics]"'),
    (["mujoco"], "HalfCheetah-v5", 'HalfCheetah-v5 is a MuJoCo environment, and MuJoCo is not '
                                   'installed: pip install "mxnet-ddpg[mujoco]"'),
])
def test_an_environment_whose_package_is_missing_names_the_extra(tmp_path, blocked, env,
                                                                 message):
    # a None in sys.modules makes the import fail as if the package were not installed
    code = ("import sys; sys.modules.update(dict.fromkeys(%r)); sys.argv = [%r, '--env', %r, "
            "'--log-dir', %r]; import runpy; runpy.run_path(%r, run_name='__main__')"
            % (blocked, RUN, env, str(tmp_path / "run"), RUN))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == "run_ddpg.py: error: --env %s: %s\n" % (env, message)
    assert os.listdir(str(tmp_path)) == []


def test_sweep_checks_the_environment_before_starting(scripts, capsys, tmp_path):
    lines = fails_as_usage(scripts["sweep.py"],
                           ["--grid", "qfunc_lr=1e-3", "--storage", str(tmp_path), "--",
                            "--env", "CartPole-v1"], capsys, "sweep.py")
    assert "--env cartpole" in lines[-1]
    assert os.listdir(str(tmp_path)) == []


def test_the_real_command_line_exits_2_and_debug_shows_the_traceback(tmp_path):
    for script in (RUN, EVALUATE):
        argv = ([RUN, "--batch-size", "0", "--log-dir", str(tmp_path / "run")]
                if script == RUN else [EVALUATE, str(tmp_path / "missing")])
        result = subprocess.run([sys.executable] + argv, capture_output=True, text=True,
                                timeout=120, cwd=str(tmp_path))
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr and "engine.cc" not in result.stderr
        assert len(result.stderr.strip().splitlines()) <= 2, result.stderr
        debug = subprocess.run([sys.executable] + argv + ["--debug"], capture_output=True,
                               text=True, timeout=120, cwd=str(tmp_path))
        assert debug.returncode != 0 and "Traceback" in debug.stderr
    assert os.listdir(str(tmp_path)) == []


# ---------------------------------------------------------------------------------------------
# --resume writes into the checkpoint's own run folder


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, scripts):
    """A 1-epoch run made from folder ``first`` with a relative --log-dir."""
    base = tmp_path_factory.mktemp("resume")
    first = base / "first"
    first.mkdir()
    cwd = os.getcwd()
    os.chdir(str(first))
    try:
        scripts["run_ddpg.py"].main(SMALL + ["--log-dir", "runs/x"])
    finally:
        os.chdir(cwd)
    return base, first / "runs" / "x"


def copy_run(finished_run, name):
    base, run = finished_run
    copy = base / name
    shutil.copytree(str(run), str(copy))
    return copy


def test_resume_from_another_folder_writes_into_the_checkpoints_run(finished_run, scripts,
                                                                     tmp_path, capsys):
    run = copy_run(finished_run, "continued")
    other = tmp_path / "elsewhere"
    other.mkdir()
    cwd = os.getcwd()
    os.chdir(str(other))
    try:
        algo = scripts["run_ddpg.py"].main(["--resume", str(run / "params"),
                                            "--n-epochs", "2"])
    finally:
        os.chdir(cwd)
    assert algo.epoch == 2
    assert os.listdir(str(other)) == []  # nothing in the current folder
    with open(str(run / "progress.csv")) as progress:
        assert [line.split(",")[0] for line in progress][1:] == ["0", "1"]
    with open(str(run / "params.json")) as params:
        recorded = json.load(params)
    # paths relative to the run folder: the run's files name no folder of this machine
    assert (recorded["log_dir"], recorded["resume"]) == (".", "params")
    assert "Run folder: %s" % run in capsys.readouterr().out


def test_resume_reads_a_run_folder_whose_params_json_holds_absolute_paths(finished_run,
                                                                          scripts, capsys):
    """As the files of runs made before the paths were recorded relative: they resume, and
    the resumed run's params.json holds relative paths."""
    run = copy_run(finished_run, "absolute")
    with open(str(run / "params.json")) as params:
        recorded = json.load(params)
    recorded.update(log_dir="/home/someone/runs/x", resume="/home/someone/runs/x/params")
    with open(str(run / "params.json"), "w") as params:
        json.dump(recorded, params)
    algo = scripts["run_ddpg.py"].main(["--resume", str(run / "params"), "--n-epochs", "2"])
    assert algo.epoch == 2
    with open(str(run / "params.json")) as params:
        assert json.load(params)["log_dir"] == "."
    capsys.readouterr()


def test_resume_of_a_finished_run_asks_for_more_epochs(finished_run, scripts, capsys):
    run = copy_run(finished_run, "finished")
    before = tree(str(run))
    lines = fails_as_usage(scripts["run_ddpg.py"], ["--resume", str(run / "params")], capsys,
                           "run_ddpg.py")
    assert "--n-epochs" in lines[0] and "already trained 1 epoch" in lines[0]
    assert tree(str(run)) == before


def corrupt(run):
    path = run / "params" / "policy.params"
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def mismatch(run):
    path = run / "params" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["metadata"]["run_args"]["policy_hidden_sizes"] = [9, 9]
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize("damage", [corrupt, mismatch])
def test_a_failed_resume_changes_nothing(finished_run, scripts, capsys, tmp_path, damage):
    run = copy_run(finished_run, "damaged_" + damage.__name__)
    damage(run)
    before = tree(str(run))
    cwd = os.getcwd()
    os.chdir(str(tmp_path))
    try:
        lines = fails_as_usage(scripts["run_ddpg.py"],
                               ["--resume", str(run / "params"), "--n-epochs", "3"], capsys,
                               "run_ddpg.py")
    finally:
        os.chdir(cwd)
    assert lines[0].startswith("run_ddpg.py: error: --resume ")
    assert tree(str(run)) == before
    assert os.listdir(str(tmp_path)) == []


def test_resume_outside_a_run_folder_needs_log_dir(finished_run, scripts, capsys, tmp_path):
    base, run = finished_run
    loose = tmp_path / "loose"
    shutil.copytree(str(run / "params"), str(loose / "ckpt"))
    lines = fails_as_usage(scripts["run_ddpg.py"],
                           ["--resume", str(loose / "ckpt"), "--n-epochs", "2"], capsys,
                           "run_ddpg.py")
    assert "--log-dir" in lines[0]
    assert sorted(os.listdir(str(loose))) == ["ckpt"]


# ---------------------------------------------------------------------------------------------
# --help and the console


@pytest.mark.parametrize("name", ["run_ddpg.py", "evaluate.py", "sweep.py"])
def test_help_shows_every_default_once(scripts, name):
    parser = scripts[name].build_parser()
    formatter = parser._get_formatter()  # pylint: disable=protected-access
    for action in parser._actions:  # pylint: disable=protected-access
        if action.dest == "help" or not action.option_strings:
            continue
        assert action.help, "%s has no help, so --help shows no default" % action.dest
        text = formatter._get_help_string(action) % vars(action)  # pylint: disable=protected-access
        if action.default not in (None, False, []) and not action.required:
            assert "default" in text, action.dest
        assert text.count("(default") <= 1, action.dest
        assert "(default: None)" not in text and "(default: [])" not in text, action.dest
    text = " ".join(parser.format_help().split())
    assert "(default: None)" not in text
    assert "transitions per update (default: 32)" in text or name != "run_ddpg.py"


def test_run_ddpg_help_groups_its_flags(scripts):
    titles = [group.title for group in scripts["run_ddpg.py"].build_parser()._action_groups]
    assert titles[2:] == ["environment", "algorithm (DDPG arguments)", "networks",
                          "exploration", "distributed collection (Ray actors)", "run",
                          "logging and checkpoints"]
    text = " ".join(scripts["run_ddpg.py"].build_parser().format_help().split())
    assert ("--policy-delay POLICY_DELAY Q updates per policy and target update (default: 1 "
            "for ddpg, as the original; 2 for td3) --target-noise") in text


def test_a_run_prints_no_mxnet_internal_lines_but_keeps_warnings(tmp_path):
    code = ("import sys, warnings; sys.argv = ['run_ddpg.py'] + %r; "
            "sys.path.insert(0, %r); import run_ddpg; "
            "warnings.warn('our own warning'); run_ddpg.main(sys.argv[1:])"
            % (NO_FILES, EXAMPLES))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert "engine.cc" not in output and "graph_executor.cc" not in output, output[:2000]
    assert "our own warning" in result.stderr
    assert os.listdir(str(tmp_path)) == []


def test_filtering_keeps_everything_else_on_stderr(capfd):
    from ddpg.backend.mxnet_log import filtering_mxnet_info
    with filtering_mxnet_info():
        os.write(2, b"[07:17:25] ../src/engine/engine.cc:54: MXNet start using engine: "
                    b"NaiveEngine\n")
        os.write(2, b"[07:17:25] ../src/executor/graph_executor.cc:60: MXNET_SUBGRAPH_BACKEND"
                    b"=NONE is detected, subgraph backend is not in use\n")
        os.write(2, b"a warning of the program\n")
        print("from python", file=sys.stderr)
    err = capfd.readouterr().err
    assert "engine.cc" not in err and "graph_executor" not in err
    assert "a warning of the program" in err and "from python" in err


# ---------------------------------------------------------------------------------------------
# python -m ddpg


def test_python_m_ddpg_lists_every_command_and_its_entry_point_exists(capsys):
    assert commands.main([]) == 0
    listing = capsys.readouterr().out
    for name, target, summary in commands.COMMANDS:
        assert "  %s  " % name.ljust(len("ddpg-evaluate")) + summary in listing
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), target


def test_python_m_ddpg_refuses_an_argument_in_one_line(capsys):
    assert commands.main(["train", "--n-epochs", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("python -m ddpg: error: unrecognized argument train: it takes "
                            "none; the commands it lists take their own (e.g. ddpg-train "
                            "--help)\n")
