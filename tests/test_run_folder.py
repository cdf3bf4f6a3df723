"""A run folder is never replaced, mixed or rolled back, and the command line says why not.

Each test drives ``examples/run_ddpg.py`` (the ``ddpg-train`` command) as a user does, in a
subprocess with its own working folder: a fresh run into a used folder, ``--overwrite``, two
processes at once, Ctrl-C and a stale resume, runs without ``--log-dir``, a full disk, and the
one-line errors of bad flags.
"""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

import pytest

from ddpg.experiment.run_folder import (LOCK_FILE, RunFolderLock, checkpoint_clock,
                                        default_run_folder, holds_run, newest_checkpoint)
from ddpg.experiment.script import RunInterrupted, UsageError, run_script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(REPO, "examples", "run_ddpg.py")
TINY = ["--epoch-length", "100", "--memory-start-size", "50", "--eval-samples", "50",
        "--memory-size", "2000", "--policy-hidden-sizes", "8", "--qfunc-hidden-sizes", "8",
        "8", "--qfunc-action-merge-layer", "1", "--ctx", "cpu", "--no-progress-bar"]


def _default_sigint():
    # a shell's background job ignores SIGINT, and so would the child: Ctrl-C needs it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args, cwd, **options):
    return subprocess.Popen([sys.executable, RUN] + args, cwd=str(cwd), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=options.pop("preexec_fn", _default_sigint), **options)


def run(args, cwd, **options):
    process = start(args, cwd, **options)
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def snapshot(folder):
    """``{relative path: bytes}`` of every file under ``folder``."""
    files = {}
    for root, _, names in os.walk(str(folder)):
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as handle:
                files[os.path.relpath(path, str(folder))] = handle.read()
    return files


def error_lines(err):
    return [line for line in err.splitlines() if line.strip()]


def wait_for(condition, process, seconds=120):
    deadline = time.time() + seconds
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.time() < deadline, "timed out"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A 2-epoch cart-pole run in ``runs/a`` of a working folder."""
    cwd = tmp_path_factory.mktemp("finished")
    code, _, err = run(["--n-epochs", "2", "--log-dir", "runs/a"] + TINY, cwd)
    assert code == 0, err
    return cwd


def test_a_fresh_run_into_a_used_folder_refuses_and_changes_nothing(finished_run, tmp_path):
    before = snapshot(finished_run / "runs" / "a")
    code, out, err = run(["--n-epochs", "1", "--algo", "td3", "--log-dir",
                          str(finished_run / "runs" / "a")] + TINY, tmp_path)
    assert code == 2
    assert error_lines(err) == [
        "run_ddpg.py: error: --log-dir %s already holds a run: continue it with --resume "
        "%s, choose another --log-dir, or pass --overwrite to move it aside to "
        "%s.replaced-TIMESTAMP" % (finished_run / "runs" / "a",
                                   finished_run / "runs" / "a" / "params",
                                   finished_run / "runs" / "a")]
    assert snapshot(finished_run / "runs" / "a") == before
    assert os.listdir(str(tmp_path)) == []


def test_overwrite_moves_the_old_run_aside(tmp_path):
    code, _, err = run(["--n-epochs", "1", "--log-dir", "a"] + TINY, tmp_path)
    assert code == 0, err
    old = snapshot(tmp_path / "a")
    code, out, err = run(["--n-epochs", "1", "--algo", "td3", "--overwrite", "--log-dir", "a"]
                         + TINY, tmp_path)
    assert code == 0, err
    aside = [name for name in os.listdir(str(tmp_path)) if name.startswith("a.replaced-")]
    assert len(aside) == 1 and re.fullmatch(r"a\.replaced-\d{8}-\d{6}", aside[0])
    assert snapshot(tmp_path / aside[0]) == old  # nothing of the old run lost
    assert "now in a.replaced-" in out
    with open(str(tmp_path / "a" / "params.json")) as handle:
        assert json.load(handle)["algo"] == "td3"
    with open(str(tmp_path / "a" / "progress.csv")) as handle:
        epochs = [line.split(",")[0] for line in handle.read().splitlines()[1:]]
    assert epochs == ["0"]


def test_two_processes_never_write_one_folder(tmp_path):
    first = start(["--n-epochs", "1000", "--log-dir", "a"] + TINY, tmp_path)
    try:
        wait_for(lambda: os.path.isfile(str(tmp_path / "a" / "progress.csv")), first)
        with open(str(tmp_path / "a" / LOCK_FILE)) as handle:
            assert json.load(handle)["pid"] == first.pid
        # a fresh run and a resume of the running run's checkpoint are both refused
        code, _, err = run(["--n-epochs", "1", "--log-dir", "a"] + TINY, tmp_path)
        assert code == 2
        assert error_lines(err) == [
            "run_ddpg.py: error: --log-dir a is in use by a run of process %d; wait for it "
            "to end, or choose another --log-dir" % first.pid]
        wait_for(lambda: newest_checkpoint(str(tmp_path / "a")), first)
        code, _, err = run(["--resume", "a/params", "--n-epochs", "2000"], tmp_path)
        assert code == 2 and "in use by a run of process %d" % first.pid in err
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=120)
    with open(str(tmp_path / "a" / "progress.csv")) as handle:
        lines = handle.read().splitlines()
    assert sum(line.startswith("Epoch,") for line in lines) == 1
    assert [int(line.split(",")[0]) for line in lines[1:]] == list(range(len(lines) - 1))
    assert not os.path.exists(str(tmp_path / "a" / LOCK_FILE))


def test_a_lock_of_a_running_process_holds_and_a_stale_one_is_taken(tmp_path):
    lock = RunFolderLock(str(tmp_path)).acquire()
    with pytest.raises(UsageError, match="in use by a run of process %d" % os.getpid()):
        RunFolderLock(str(tmp_path)).acquire()
    lock.release()
    assert not os.path.exists(str(tmp_path / LOCK_FILE))
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    with open(str(tmp_path / LOCK_FILE), "w") as handle:
        json.dump({"pid": ended.pid, "host": os.uname().nodename, "started": "x"}, handle)
    taken = RunFolderLock(str(tmp_path)).acquire()
    with open(str(tmp_path / LOCK_FILE)) as handle:
        assert json.load(handle)["pid"] == os.getpid()
    taken.release()
    with open(str(tmp_path / LOCK_FILE), "w") as handle:
        json.dump({"pid": 1, "host": "another-host", "started": "x"}, handle)
    with pytest.raises(UsageError, match="in use by process 1 on another-host; if that run "
                                         "has ended, delete"):
        RunFolderLock(str(tmp_path)).acquire()


#: ``python -c`` code running ``examples/run_ddpg.py`` (its path and flags follow) that
#: sends itself SIGINT, as Ctrl-C does, when the run has taken ``%d`` transitions: at a fixed
#: point of the run (the handler raises KeyboardInterrupt there, inside the sleep at the
#: latest), never inside an epoch's save as a signal sent at a moment in time can be.
CTRL_C_AT_STEP = """
import runpy, signal, sys, time
sys.argv = sys.argv[1:]
sys.path.insert(0, %r)  # this checkout's ddpg, as run_ddpg.py itself puts first
import ddpg.training
explore_step = ddpg.training.TrainingLoop.explore_step
def interrupting(loop, *args):
    if loop.state.total_env_steps == %%d:
        signal.raise_signal(signal.SIGINT)
        time.sleep(60)
    return explore_step(loop, *args)
ddpg.training.TrainingLoop.explore_step = interrupting
runpy.run_path(sys.argv[0], run_name="__main__")
""" % REPO


def start_with_ctrl_c_at(step, args, cwd):
    """``start(args, cwd)``, the run interrupted by SIGINT after ``step`` transitions."""
    return subprocess.Popen([sys.executable, "-c", CTRL_C_AT_STEP % step, RUN] + args,
                            cwd=str(cwd), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_default_sigint)


def test_ctrl_c_names_the_checkpoint_and_a_stale_resume_refuses(tmp_path):
    """Ctrl-C 50 steps into epoch 1 (the run's 150th transition; epochs of 100), after
    params/ holds epoch 0: interrupted/ is newer than params/, deterministically (a SIGINT
    timed by the clock could land in the end-of-epoch save and make them equal)."""
    process = start_with_ctrl_c_at(150, ["--n-epochs", "1000", "--log-dir", "x"] + TINY[:-1],
                                   tmp_path)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    last = error_lines(err)[-1]
    match = re.fullmatch(r"run_ddpg\.py: interrupted at epoch (\d+): resume with python "
                         r"\S+run_ddpg\.py --resume x/interrupted", last)
    assert match, last
    epoch = int(match.group(1))
    assert epoch == 1
    interrupted = tmp_path / "x" / "interrupted"
    assert interrupted.is_dir(), sorted(os.listdir(str(tmp_path / "x")))
    assert checkpoint_clock(str(interrupted))[0] == 150
    assert checkpoint_clock(str(tmp_path / "x" / "params"))[0] == 100
    assert checkpoint_clock(str(interrupted)) > checkpoint_clock(str(tmp_path / "x" /
                                                                        "params"))
    stale_copy = snapshot(interrupted)

    # resuming params/ (older than interrupted/) would go back in time
    code, _, err = run(["--resume", "x/params", "--n-epochs", str(epoch + 2)], tmp_path)
    assert code == 2
    assert "--resume x/params is older than x/interrupted" in err

    code, out, err = run(["--resume", "x/interrupted", "--n-epochs", str(epoch + 2)], tmp_path)
    assert code == 0, err
    assert not interrupted.exists()  # retired: params/ holds the run further on
    assert "Removed x/interrupted: x/params holds this run further on" in out
    after = snapshot(tmp_path / "x")

    # the stale interrupted/ put back: resuming it refuses and changes nothing
    os.makedirs(str(interrupted))
    for name, data in stale_copy.items():
        with open(str(interrupted / name), "wb") as handle:
            handle.write(data)
    code, _, err = run(["--resume", "x/interrupted", "--n-epochs", str(epoch + 1)], tmp_path)
    assert code == 2
    assert error_lines(err) == [
        "run_ddpg.py: error: --resume x/interrupted is older than x/params (%d environment "
        "steps against %d) in the same run folder: resuming it would take the run back; "
        "resume x/params, or pass --log-dir NEW_FOLDER to continue the older checkpoint as a "
        "new run" % (checkpoint_clock(str(interrupted))[0],
                     checkpoint_clock(str(tmp_path / "x" / "params"))[0])]
    assert {name: data for name, data in snapshot(tmp_path / "x").items()
            if not name.startswith("interrupted")} == after

    # continuing the older checkpoint in a new folder is a branch: allowed
    code, _, err = run(["--resume", "x/interrupted", "--n-epochs", str(epoch + 1),
                        "--log-dir", "branch"], tmp_path)
    assert code == 0, err
    assert os.path.isdir(str(tmp_path / "branch" / "params"))


def test_ctrl_c_without_files_says_nothing_was_saved(tmp_path):
    process = start(["--n-epochs", "1000", "--no-log-dir"] + TINY, tmp_path)
    for line in process.stdout:  # the first epoch has begun: Ctrl-C lands in training
        if "Training started" in line:
            break
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130
    assert re.fullmatch(r"run_ddpg\.py: interrupted at epoch \d+; nothing was saved "
                        r"\(--no-log-dir\)", error_lines(err)[-1])
    assert os.listdir(str(tmp_path)) == []


def test_a_run_without_log_dir_gets_a_new_folder_and_no_log_dir_writes_nothing(tmp_path):
    code, out, err = run(["--n-epochs", "1"] + TINY, tmp_path)
    assert code == 0, err
    (folder,) = os.listdir(str(tmp_path / "runs"))
    assert re.fullmatch(r"cartpole-ddpg-\d{8}-\d{6}", folder)
    assert "Run folder: %s" % (tmp_path / "runs" / folder) in out
    assert os.path.isdir(str(tmp_path / "runs" / folder / "params"))
    code, out, err = run(["--n-epochs", "1", "--no-log-dir"] + TINY, tmp_path)
    assert code == 0, err
    assert os.listdir(str(tmp_path)) == ["runs"]
    assert len(os.listdir(str(tmp_path / "runs"))) == 1
    code, _, err = run(["--n-epochs", "1", "--no-log-dir", "--log-dir", "b"] + TINY, tmp_path)
    assert code == 2 and "give one of the two" in err


def test_default_run_folder_names(tmp_path):
    import datetime
    now = datetime.datetime(2026, 1, 2, 3, 4, 5)
    root = str(tmp_path)
    first = default_run_folder("ALE/Pong-v5", "td3", now=now, root=root)
    assert first == os.path.join(root, "ALE_Pong-v5-td3-20260102-030405")
    os.makedirs(first)
    assert default_run_folder("ALE/Pong-v5", "td3", now=now, root=root) == first + "-2"


def test_holds_run(tmp_path):
    assert not holds_run(str(tmp_path / "missing"))
    assert not holds_run(str(tmp_path))
    (tmp_path / "notes.txt").write_text("mine")
    assert not holds_run(str(tmp_path))
    for name in ("progress.csv", "params.json", "debug.log"):
        (tmp_path / name).write_text("")
        assert holds_run(str(tmp_path))
        os.remove(str(tmp_path / name))
    os.makedirs(str(tmp_path / "params"))
    (tmp_path / "params" / "manifest.json").write_text(
        json.dumps({"progress": {"epoch": 1, "itr": 2, "total_env_steps": 3}}))
    assert holds_run(str(tmp_path))
    assert newest_checkpoint(str(tmp_path)) == str(tmp_path / "params")


def test_resume_of_a_run_folder_points_at_its_checkpoint(finished_run):
    code, _, err = run(["--resume", "runs/a", "--n-epochs", "3"], finished_run)
    assert code == 2
    assert error_lines(err) == ["run_ddpg.py: error: --resume runs/a is a run folder, not a "
                                "checkpoint: resume its newest checkpoint with --resume "
                                "runs/a/params"]


def test_a_resume_refuses_no_log_dir_beside_log_dir(finished_run):
    code, _, err = run(["--resume", "runs/a/params", "--n-epochs", "3", "--no-log-dir",
                        "--log-dir", "elsewhere"], finished_run)
    assert code == 2
    assert error_lines(err) == ["run_ddpg.py: error: --no-log-dir writes no files, --log-dir "
                                "names where to write them: give one of the two"]
    assert not os.path.exists(str(finished_run / "elsewhere"))


def test_a_flag_resume_forbids_is_one_line(finished_run):
    code, _, err = run(["--resume", "runs/a/params", "--n-epochs", "3", "--batch-size", "8"],
                       finished_run)
    assert code == 2
    assert error_lines(err) == ["run_ddpg.py: error: --resume takes the run's settings from "
                                "the checkpoint; --batch-size cannot be changed when resuming "
                                "(a new run with other settings: leave out --resume)"]


@pytest.mark.parametrize("log_dir, reason", [("file/run", "Not a directory"),
                                             ("/proc/no-such/run", "No such file or directory")])
def test_an_unwritable_log_dir_is_one_line(tmp_path, log_dir, reason):
    (tmp_path / "file").write_text("not a folder")
    code, _, err = run(["--n-epochs", "1", "--log-dir", log_dir] + TINY, tmp_path)
    assert code == 2
    assert error_lines(err) == ["run_ddpg.py: error: --log-dir %s cannot be written (%s): "
                                "choose another --log-dir" % (log_dir, reason)]
    assert os.listdir(str(tmp_path)) == ["file"]


def test_a_bad_activation_is_two_short_lines(tmp_path):
    code, _, err = run(["--activation", "foo"], tmp_path)
    assert code == 2
    assert error_lines(err) == [
        "usage: run_ddpg.py [options]   (--help lists them)",
        "run_ddpg.py: error: argument --activation: invalid choice: 'foo' (choose from "
        "'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh')"]


def _limit_file_size():
    _default_sigint()
    # every file of the run may grow to 40 kB: the replay memory outgrows it in epoch 3,
    # as it would outgrow a full disk (Python ignores SIGXFSZ: the write fails with EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (40000, 40000))


def test_a_full_disk_keeps_the_last_good_checkpoint_and_says_so(tmp_path):
    code, _, err = run(["--n-epochs", "20", "--log-dir", "a"] + TINY, tmp_path,
                       preexec_fn=_limit_file_size)
    assert code == 1
    lines = error_lines(err)
    match = re.fullmatch(r"run_ddpg\.py: error: a file of the run in a could not be written "
                         r"\(\[Errno 27\] File too large\); the last complete checkpoint, "
                         r"a/params \((\d+) epochs trained\), is unchanged: resume from it "
                         r"once there is room", lines[0])
    assert match, lines
    assert lines[1:] == ["(DDPG_DEBUG=1 or --debug shows the traceback)"]
    trained = int(match.group(1))
    assert trained >= 1
    assert [name for name in os.listdir(str(tmp_path / "a")) if name.startswith(".")] == []
    # the checkpoint is whole: the run continues from it
    code, _, err = run(["--resume", "a/params", "--n-epochs", str(trained + 1)], tmp_path)
    assert code == 0, err


@pytest.mark.parametrize("raised, message", [
    (KeyboardInterrupt(), "\nddpg-train: interrupted\n"),
    (RunInterrupted(4, "runs/x/interrupted"),
     "ddpg-train: interrupted at epoch 4: resume with ddpg-train --resume "
     "runs/x/interrupted\n"),
    (RunInterrupted(0, None, "--snapshot-mode none"),
     "ddpg-train: interrupted at epoch 0; nothing was saved (--snapshot-mode none)\n")])
def test_run_script_ends_ctrl_c_with_one_line(capsys, raised, message):
    def main(argv):
        raise raised
    with pytest.raises(SystemExit) as exit_info:
        run_script(main, [], prog="ddpg-train")
    assert exit_info.value.code == 130
    assert capsys.readouterr().err == message
    with pytest.raises(KeyboardInterrupt):  # --debug: the traceback
        run_script(main, ["--debug"], prog="ddpg-train")
