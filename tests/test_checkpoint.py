"""Checkpoints: contents, bit-identical resume in a new process, atomic writes, validation."""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import mxnet as mx
import numpy as np
import pytest

from ddpg import logger
from ddpg import checkpoint
from ddpg.checkpoint import optimizer_state
from ddpg.plain_data import decode, encode
from ddpg.checkpoint import NETWORKS, network_params
from ddpg.checkpoint.env_state import capture_env_state, prepare_env_restore
from ddpg.envs import CartpoleEnv, GymEnv, normalize
from ddpg.errors import CheckpointError

from ckpt_helpers import all_params, build

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
HELPER = os.path.join(TESTS, "ckpt_helpers.py")

try:
    import mujoco  # noqa: F401
    HAVE_MUJOCO = True
except ImportError:
    HAVE_MUJOCO = False


pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py


def run_python(args, timeout=300):
    result = subprocess.run([sys.executable] + args, capture_output=True, text=True,
                            timeout=timeout, cwd=TESTS)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def trained(kind="cartpole", n_epochs=1, **kwargs):
    algo = build(kind, n_epochs=n_epochs, **kwargs)
    algo.train()
    return algo


def state_of(algo):
    """Everything restore could change, to check that a failed restore changed nothing."""
    memory = algo.memory
    return {
        "params": all_params(algo),
        "states": {network: _optimizer_state(getattr(algo, network).updater)
                   for network in ("qfunc", "policy")},
        "memory": None if memory is None else (memory.obss.copy(), memory.rwds.copy(),
                                                memory.top, memory.size),
        "counters": (algo.epoch, algo.itr, algo.total_env_steps, algo.path_length,
                     algo.path_return, algo.end, algo.episode),
        "obs": None if algo.obs is None else np.array(algo.obs),
        "np_random": _plain(np.random.get_state()),
        "strategy": np.array(algo.strategy.state),
        "env": _plain(capture_env_state(algo.env)),
    }


def _plain(tree):
    """A comparable form of plain data: its JSON text and its arrays' bytes."""
    json_tree, arrays = encode(tree)
    return json.dumps(json_tree, sort_keys=True), {key: (array.dtype.str, array.tobytes())
                                                   for key, array in arrays.items()}


def _optimizer_state(updater):
    json_tree, ndarrays = optimizer_state.capture(updater)
    return json.dumps(json_tree, sort_keys=True), {key: array.asnumpy().tobytes()
                                                   for key, array in ndarrays.items()}


def assert_same_state(before, after):
    assert before.keys() == after.keys()
    for key in before["params"]:
        assert np.array_equal(before["params"][key], after["params"][key]), key
    assert before["states"] == after["states"]
    for a, b in zip(before["memory"], after["memory"]):
        assert np.array_equal(a, b)
    assert before["counters"] == after["counters"]
    assert np.array_equal(before["obs"], after["obs"])
    assert before["np_random"] == after["np_random"]
    assert np.array_equal(before["strategy"], after["strategy"])
    assert before["env"] == after["env"]


# ---------------------------------------------------------------------------------------------
# contents


def test_checkpoint_folder_contents(tmp_path):
    algo = trained()
    algo.checkpoint_metadata = {"run_args": {"env": "cartpole", "sizes": (1, 2)}}
    path = str(tmp_path / "ckpt")
    algo.save(path)
    names = sorted(os.listdir(path))
    assert names == sorted(["manifest.json", "training_state.json", "training_state.npz",
                            "replay_memory.npz", "qfunc.optimizer.nd", "qfunc.optimizer.json",
                            "policy.optimizer.nd", "policy.optimizer.json"]
                           + [network + ".params" for network in NETWORKS])
    # the parameter files are MXNet's own format, the running parameters exactly
    for network in NETWORKS:
        loaded = mx.nd.load(os.path.join(path, network + ".params"))
        running = network_params(algo, network)
        assert list(loaded) == list(running)
        for name, array in running.items():
            assert np.array_equal(loaded[name].asnumpy(), array.asnumpy())
    with open(os.path.join(path, "manifest.json")) as handle:
        manifest = json.load(handle)
    assert manifest["format"] == "ddpg-checkpoint" and manifest["format_version"] == 3
    assert manifest["library_version"] == __import__("ddpg").__version__
    assert manifest["spaces"]["obs_dim"] == 4 and manifest["spaces"]["act_dim"] == 1
    assert ["qfunc_fc1_weight", [16, 4]] in manifest["parameters"]["qfunc"]
    assert manifest["hyperparameters"]["batch_size"] == 16
    assert manifest["networks"]["qfunc"]["hidden_sizes"] == [16, 16, 16]
    assert manifest["progress"] == {"epoch": 1, "itr": 51, "total_env_steps": 100,
                                    "memory_size": algo.memory.size}
    assert manifest["metadata"] == {"run_args": {"env": "cartpole", "sizes": [1, 2]}}
    assert manifest["environment"]["episode"] == "exact"
    with np.load(os.path.join(path, "replay_memory.npz")) as memory:
        assert memory["obss"].shape == (algo.memory.size, 4)
        assert int(memory["top"]) == algo.memory.top
    # no temporary or aside folder is left next to it, and others may read it
    assert os.listdir(str(tmp_path)) == ["ckpt"]
    assert os.stat(path).st_mode & 0o777 == 0o777 & ~_umask()


def _umask():
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def test_save_before_training_and_restore(tmp_path):
    """A checkpoint of an algorithm that never trained (no memory, no episode) restores."""
    fresh = build()
    fresh.save(str(tmp_path / "ckpt"))
    other = build(seed=99)
    other.restore(str(tmp_path / "ckpt"))
    assert other.memory is None and other.obs is None
    for key, value in all_params(fresh).items():
        assert np.array_equal(value, all_params(other)[key]), key
    other.train()  # and it trains from there
    assert other.epoch == 3


# ---------------------------------------------------------------------------------------------
# resume in a new process is bit-identical


RESUME_KINDS = ["cartpole", "pendulum"] + (["halfcheetah"] if HAVE_MUJOCO else [])
N_EPOCHS, K_EPOCHS = 3, 1


def run_jobs(command, jobs, folder):
    """Run ckpt_helpers.py's ``command`` on ``jobs`` in a new process; parameters per job."""
    jobs_file = str(folder / (command + ".json"))
    with open(jobs_file, "w") as handle:
        json.dump(jobs, handle)
    run_python([HELPER, command, jobs_file])
    results = []
    for job in jobs:
        with np.load(job["out"]) as params:
            results.append(dict(params))
    return results


@pytest.fixture(scope="module")
def resumed_runs(tmp_path_factory):
    """For each kind, in one new process: N epochs; K epochs and a save. In another new
    process: restore and train to N. Returns {kind: (N-epoch parameters, resumed ones)}."""
    folder = tmp_path_factory.mktemp("resume")
    jobs = []
    for kind in RESUME_KINDS:
        jobs.append({"kind": kind, "n_epochs": N_EPOCHS, "out": str(folder / (kind + "-full.npz"))})
        jobs.append({"kind": kind, "n_epochs": K_EPOCHS, "save": str(folder / kind),
                     "out": str(folder / (kind + "-partial.npz"))})
    full = run_jobs("train", jobs, folder)[0::2]
    resumed = run_jobs("resume", [
        {"kind": kind, "n_epochs": N_EPOCHS, "checkpoint": str(folder / kind),
         "out": str(folder / (kind + "-resumed.npz"))} for kind in RESUME_KINDS], folder)
    return {kind: (full[i], resumed[i]) for i, kind in enumerate(RESUME_KINDS)}


@pytest.mark.parametrize("kind", RESUME_KINDS)
def test_resume_in_a_new_process_is_bit_identical(resumed_runs, kind):
    full, resumed = resumed_runs[kind]
    assert sorted(full) == sorted(resumed)
    assert any(key.startswith("qfunc_target.") for key in full)
    for key in full:
        assert np.array_equal(full[key], resumed[key]), key


def test_restore_in_the_same_process_continues_identically(tmp_path):
    full = trained(n_epochs=2)
    partial = trained(n_epochs=1)
    partial.save(str(tmp_path / "ckpt"))
    resumed = build(n_epochs=2)
    resumed.restore(str(tmp_path / "ckpt"))
    assert (resumed.epoch, resumed.itr, resumed.total_env_steps) == (1, 51, 100)
    resumed.train()
    for key, value in all_params(full).items():
        assert np.array_equal(value, all_params(resumed)[key]), key
    assert resumed.total_env_steps == full.total_env_steps == 200


def test_an_environment_without_saved_state_starts_a_new_episode(tmp_path):
    """PointEnv (rllab-style, no hook) cannot continue its episode: restore abandons it."""
    algo = trained("point", n_epochs=1, epoch_length=30, max_path_length=1000)
    assert not algo.end and algo.path_length == 30  # mid-episode at the boundary
    algo.save(str(tmp_path / "ckpt"))
    resumed = build("point", n_epochs=2, epoch_length=30, max_path_length=1000)
    resumed.restore(str(tmp_path / "ckpt"))
    assert resumed.obs is None and resumed.path_length == 0 and resumed.episode == 1
    assert resumed.epoch == 1 and resumed.memory.size == 30
    resumed.train()
    assert resumed.total_env_steps == 60 and resumed.strategy_path_returns == []


# ---------------------------------------------------------------------------------------------
# environment state


def _steps(env, actions):
    return [env.step(action) for action in actions]


@pytest.mark.parametrize("make", [
    lambda: normalize(CartpoleEnv(), normalize_obs=True),
    lambda: normalize(GymEnv("Pendulum-v1")),
    pytest.param(lambda: GymEnv("HalfCheetah-v5"),
                 marks=pytest.mark.skipif(not HAVE_MUJOCO, reason="needs mujoco")),
], ids=["cartpole", "pendulum", "halfcheetah"])
def test_environment_state_continues_an_episode_exactly(make):
    env = make()
    env.seed(4)
    env.reset()
    rng = np.random.RandomState(0)
    shape = env.action_space.shape
    _steps(env, [rng.uniform(-1, 1, shape) for _ in range(5)])
    json_tree, arrays = encode(capture_env_state(env))  # as a checkpoint holds it
    saved = decode(json.loads(json.dumps(json_tree)), arrays)
    actions = [rng.uniform(-1, 1, shape) for _ in range(30)]
    expected = _steps(env, actions) + [env.reset()]
    fresh = make()  # never seeded nor reset
    prepare_env_restore(fresh, saved)()
    got = _steps(fresh, actions) + [fresh.reset()]
    for a, b in zip(expected[:-1], got[:-1]):
        assert np.array_equal(a[0], b[0]) and a[1] == b[1] and a[2] == b[2]
    assert np.array_equal(expected[-1], got[-1])  # the random generator continues too


def test_environment_state_of_another_kind_is_rejected():
    saved = capture_env_state(CartpoleEnv())
    with pytest.raises(ValueError, match="cartpole.*gym"):
        prepare_env_restore(GymEnv("Pendulum-v1"), saved)
    saved = capture_env_state(normalize(CartpoleEnv()))
    with pytest.raises(ValueError, match=r"shape \(4,\), this one \(3,\)"):
        prepare_env_restore(normalize(GymEnv("Pendulum-v1")), saved)
    saved = capture_env_state(GymEnv("Pendulum-v1"))
    with pytest.raises(ValueError, match="Pendulum-v1.*MountainCarContinuous-v0"):
        prepare_env_restore(GymEnv("MountainCarContinuous-v0"), saved)


def test_custom_environment_hook_is_used():
    class HookEnv(object):
        def __init__(self):
            self.value = 0

        def get_checkpoint_state(self):
            return {"value": self.value}

        def set_checkpoint_state(self, state):
            self.value = state["value"]

    env = HookEnv()
    env.value = 7
    saved = capture_env_state(env)
    assert saved["episode"] == "exact"
    other = HookEnv()
    prepare_env_restore(other, saved)()
    assert other.value == 7


# ---------------------------------------------------------------------------------------------
# validation: a bad checkpoint fails clearly and changes nothing


@pytest.fixture(scope="module")
def saved_checkpoint(tmp_path_factory):
    logger.reset()
    logger.set_log_tabular_only(True)
    path = str(tmp_path_factory.mktemp("saved") / "ckpt")
    trained(n_epochs=1).save(path)
    logger.reset()
    return path


@pytest.fixture
def target():
    """A trained algorithm (other seed) whose state a failed restore must leave alone."""
    algo = trained(n_epochs=1, seed=11)
    return algo, state_of(algo)


def copy_of(path, tmp_path):
    destination = str(tmp_path / "copy")
    shutil.copytree(path, destination)
    return destination


def edit_manifest(path, edit):
    """Change the manifest as its writer would (its own checksum recomputed)."""
    manifest_path = os.path.join(path, "manifest.json")
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    edit(manifest)
    checkpoint.write_manifest(manifest_path, manifest)


@pytest.mark.parametrize("kind,overrides,message", [
    ("point", {}, r"observations of 4 values; this environment has observations of 3"),
    ("cartpole", {"hidden": 8}, r"another qfunc network layout: qfunc_fc1_weight has shape "
                                r"\(16, 4\) in the checkpoint and \(8, 4\)"),
    ("cartpole", {"memory_size": 999}, r"memory_size=1000; this algorithm has 999"),
    ("cartpole", {"qfunc_updater": "sgd"}, r"qfunc_updater='adam'; this algorithm has 'sgd'"),
])
def test_incompatible_algorithm_is_rejected(saved_checkpoint, kind, overrides, message):
    algo = trained(kind, n_epochs=1, **overrides)
    before = state_of(algo)
    with pytest.raises(CheckpointError, match=message):
        algo.restore(saved_checkpoint)
    assert_same_state(before, state_of(algo))


def test_other_action_size_is_rejected(tmp_path):
    source = trained("point", n_epochs=1, epoch_length=20, memory_start_size=16)
    source.save(str(tmp_path / "ckpt"))
    algo = build("cartpole")
    with pytest.raises(CheckpointError, match="observations of 3 values"):
        algo.restore(str(tmp_path / "ckpt"))
    edit = str(tmp_path / "ckpt")
    edit_manifest(edit, lambda m: m["spaces"].update(obs_dim=4))
    with pytest.raises(CheckpointError, match="actions of 2 values; this environment has "
                                              "actions of 1"):
        algo.restore(edit)


def _flip_byte(path, offset):
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0xFF]))


def _truncate(path):
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) // 2)


@pytest.mark.parametrize("damage,message", [
    (lambda p: edit_manifest(p, lambda m: m.update(format_version=4)),
     r"format version 4, newer than this library's 3"),
    (lambda p: _flip_byte(os.path.join(p, "qfunc.params"), 200),
     r"qfunc.params is corrupted: its SHA-256"),
    (lambda p: _truncate(os.path.join(p, "replay_memory.npz")),
     r"replay_memory.npz is truncated or corrupted"),
    (lambda p: _flip_byte(os.path.join(p, "policy.optimizer.nd"), 100),
     r"policy.optimizer.nd is corrupted"),
    (lambda p: os.remove(os.path.join(p, "training_state.json")),
     r"training_state.json is missing"),
    (lambda p: _flip_byte(os.path.join(p, "manifest.json"), 30),
     r"manifest of .* (is corrupted|does not match its own checksum)"),
    (lambda p: os.remove(os.path.join(p, "manifest.json")), r"has no manifest.json"),
    (lambda p: _truncate(os.path.join(p, "manifest.json")), r"manifest of .* is corrupted"),
    (lambda p: edit_manifest(p, lambda m: m.update(format="other")), r"not a ddpg checkpoint"),
    (lambda p: shutil.rmtree(p), r"no checkpoint folder"),
], ids=["newer-format", "corrupted-params", "truncated-memory", "corrupted-states",
        "missing-file", "flipped-manifest", "no-manifest", "truncated-manifest", "foreign",
        "missing-folder"])
def test_damaged_checkpoint_is_rejected(saved_checkpoint, tmp_path, target, damage, message):
    path = copy_of(saved_checkpoint, tmp_path)
    damage(path)
    algo, before = target
    with pytest.raises(CheckpointError, match=message):
        algo.restore(path)
    assert_same_state(before, state_of(algo))


def test_checkpoint_error_is_a_value_error():
    assert issubclass(CheckpointError, ValueError)


def test_changed_hyperparameters_are_logged_and_the_new_learning_rate_wins(saved_checkpoint,
                                                                            capsys):
    algo = build(n_epochs=5, qfunc_lr=5e-4)
    logger.set_log_tabular_only(False)
    algo.restore(saved_checkpoint)
    out = capsys.readouterr().out
    line, = [line for line in out.splitlines() if "other settings" in line]
    assert line.endswith("The checkpoint was saved with other settings; this run keeps its "
                         "own: n_epochs is 5 (it was 1 when saved), qfunc_lr is 0.0005 (it "
                         "was 0.0001 when saved)")
    assert algo.qfunc.updater.optimizer.lr == 5e-4
    assert algo.n_epochs == 5


# ---------------------------------------------------------------------------------------------
# atomic writes


def _kill_during_saves(mode, path, rng, memory_size=300000):
    """Start a process saving versions in a loop; SIGKILL it at a random time in a save."""
    process = subprocess.Popen([sys.executable, HELPER, "save-loop", mode, path,
                                str(memory_size)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, cwd=TESTS)
    try:
        first = process.stdout.readline()  # version 0 is complete
        assert first.strip() == "0", "the saving process died"
        time.sleep(rng.uniform(0.05, 0.6))
        process.send_signal(signal.SIGKILL)
        rest = process.communicate(timeout=60)[0].split()
    finally:
        if process.poll() is None:
            process.kill()
    return int(([first] + rest)[-1])


@pytest.mark.parametrize("mode", ["direct", "logger"])
def test_a_kill_during_save_leaves_a_complete_checkpoint(tmp_path, mode):
    rng = random.Random(1234)
    path = str(tmp_path / "params")
    algo = build(memory_size=300000)
    for _ in range(2):
        last_done = _kill_during_saves(mode, path, rng)
        algo.restore(path)
        # a complete version: the last one reported, or the next one if the kill came
        # after its rename but before it was reported
        assert algo.itr in (last_done, last_done + 1)
        assert np.all(algo.memory.rwds == algo.itr) and np.all(algo.memory.obss == algo.itr)


def test_save_replaces_an_existing_checkpoint(tmp_path):
    path = str(tmp_path / "ckpt")
    algo = trained(n_epochs=1)
    algo.save(path)
    algo.loop.state.itr = 1234
    algo.save(path)
    assert checkpoint.read_manifest(path)["progress"]["itr"] == 1234
    assert os.listdir(str(tmp_path)) == ["ckpt"]


def test_a_crash_between_the_renames_is_recovered(saved_checkpoint, tmp_path):
    """The old checkpoint was renamed aside and the new one not yet in: restore puts it back."""
    path = str(tmp_path / "ckpt")
    shutil.copytree(saved_checkpoint, str(tmp_path / ".ckpt.old"))
    algo = build()
    algo.restore(path)
    assert algo.epoch == 1 and os.listdir(str(tmp_path)) == ["ckpt"]
    # the logger's layout: the old copy in its staging folder
    os.makedirs(str(tmp_path / ".params.abc123.tmp"))
    shutil.move(path, str(tmp_path / ".params.abc123.tmp" / "old"))
    algo.restore(str(tmp_path / "params"))
    assert algo.epoch == 1
    # and a save after such a crash recovers first, then replaces
    shutil.move(str(tmp_path / "params"), str(tmp_path / ".params.old"))
    algo.loop.state.itr = 77
    algo.save(str(tmp_path / "params"))
    assert checkpoint.read_manifest(str(tmp_path / "params"))["progress"]["itr"] == 77
    assert sorted(os.listdir(str(tmp_path))) == [".params.abc123.tmp", "params"]


def test_a_failing_save_leaves_the_previous_checkpoint(saved_checkpoint, tmp_path,
                                                       monkeypatch):
    path = copy_of(saved_checkpoint, tmp_path)
    algo = trained(n_epochs=1, seed=5)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    # fails after the parameters, optimiser states and replay memory are written
    monkeypatch.setattr(checkpoint.writer, "capture_training_state", broken)
    with pytest.raises(OSError, match="disk full"):
        algo.save(path)
    monkeypatch.undo()
    assert os.listdir(str(tmp_path)) == ["copy"]
    assert checkpoint.read_manifest(path)["progress"] == \
        checkpoint.read_manifest(saved_checkpoint)["progress"]
    build().restore(path)


# ---------------------------------------------------------------------------------------------
# snapshots during train() and Ctrl-C


@pytest.mark.parametrize("mode,gap,expected", [
    ("all", 1, ["itr_0", "itr_1", "itr_2"]),
    ("gap", 2, ["itr_0", "itr_2"]),
    ("last", 1, ["params"]),
    ("none", 1, []),
])
def test_snapshot_modes(tmp_path, mode, gap, expected):
    logger.set_snapshot_dir(str(tmp_path))
    logger.set_snapshot_mode(mode)
    logger.set_snapshot_gap(gap)
    algo = build(n_epochs=3, epoch_length=30, memory_start_size=16)
    algo.train()
    assert sorted(os.listdir(str(tmp_path))) == expected
    for name in expected:
        manifest = checkpoint.read_manifest(str(tmp_path / name))
        epoch = 3 if name == "params" else int(name.split("_")[1]) + 1
        assert manifest["progress"]["epoch"] == epoch  # saved after epoch epoch - 1
        assert manifest["progress"]["total_env_steps"] == 30 * epoch
    if expected:
        resumed = build(n_epochs=3, epoch_length=30, memory_start_size=16)
        resumed.restore(str(tmp_path / expected[-1]))
        for key, value in all_params(algo).items():
            assert np.array_equal(value, all_params(resumed)[key]), key


class InterruptingStrategy(object):
    """Wraps a strategy and raises KeyboardInterrupt (as Ctrl-C does) at its n-th action."""

    def __init__(self, strategy, at):
        self.strategy, self.at, self.calls = strategy, at, 0
        self.state = strategy.state

    def get_action(self, obs, policy):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        action = self.strategy.get_action(obs, policy)
        self.state = self.strategy.state
        return action

    def reset(self):
        self.strategy.reset()
        self.state = self.strategy.state


def train_until_ctrl_c(at, snapshot_dir=None, snapshot_mode="last"):
    """A 3-epoch run of 30 steps an epoch, interrupted by Ctrl-C at its ``at``-th action."""
    if snapshot_dir is not None:
        logger.set_snapshot_dir(snapshot_dir)
        logger.set_snapshot_mode(snapshot_mode)
    algo = build(n_epochs=3, epoch_length=30, memory_start_size=16)
    algo.strategy = InterruptingStrategy(algo.strategy, at=at)
    with pytest.raises(KeyboardInterrupt):
        algo.train()
    assert algo.total_env_steps == at - 1
    return algo


def test_ctrl_c_saves_an_interrupted_checkpoint(tmp_path):
    log_path = str(tmp_path.parent / (tmp_path.name + "-debug.log"))
    logger.add_text_output(log_path)
    logger.set_log_tabular_only(False)  # the quiet_logger fixture resets it afterwards
    try:
        train_until_ctrl_c(45, str(tmp_path))
    finally:
        logger.remove_text_output(log_path)
    with open(log_path) as handle:
        assert "Interrupted in epoch 1: saving a checkpoint to %s\n" % (
            tmp_path / "interrupted") in handle.read()
    assert sorted(os.listdir(str(tmp_path))) == ["interrupted", "params"]
    manifest = checkpoint.read_manifest(str(tmp_path / "interrupted"))
    assert manifest["progress"]["epoch"] == 1 and manifest["progress"]["total_env_steps"] == 44
    resumed = build(n_epochs=3, epoch_length=30, memory_start_size=16)
    resumed.restore(str(tmp_path / "interrupted"))
    resumed.train()  # the interrupted epoch runs again from its start
    assert resumed.epoch == 3 and resumed.total_env_steps == 44 + 60


def test_ctrl_c_with_snapshot_mode_none_saves_nothing(tmp_path):
    """Snapshot mode 'none' turns the interrupted checkpoint off too, as it does epoch ones."""
    train_until_ctrl_c(45, str(tmp_path), snapshot_mode="none")
    assert os.listdir(str(tmp_path)) == []


def test_ctrl_c_without_snapshot_folder_saves_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    train_until_ctrl_c(10)
    assert logger.get_snapshot_dir() is None
    assert os.listdir(str(tmp_path)) == []


# ---------------------------------------------------------------------------------------------
# the example scripts


SCRIPT = os.path.join(REPO, "examples", "run_ddpg.py")
EVALUATE = os.path.join(REPO, "examples", "evaluate.py")
COMMON = ["--epoch-length", "100", "--memory-start-size", "50", "--eval-samples", "100",
          "--memory-size", "150", "--ctx", "cpu", "--seed", "7", "--no-progress-bar",
          "--policy-hidden-sizes", "16", "16", "--qfunc-hidden-sizes", "16", "16", "16"]


@pytest.fixture(scope="module")
def script_runs(tmp_path_factory):
    """run_ddpg.py: 3 epochs straight; 2 epochs then --resume to 3. The replay memory holds
    150 transitions: it has wrapped when the run is resumed (200 steps, write position 50)."""
    folder = tmp_path_factory.mktemp("script")
    straight, split = str(folder / "straight"), str(folder / "split")
    run_python([SCRIPT, "--n-epochs", "3", "--log-dir", straight] + COMMON)
    run_python([SCRIPT, "--n-epochs", "2", "--log-dir", split] + COMMON)
    resumed = run_python([SCRIPT, "--resume", os.path.join(split, "params"), "--n-epochs",
                          "3"])
    return straight, split, resumed.stdout


def test_run_ddpg_resume_continues_the_run_exactly(script_runs):
    straight, split, stdout = script_runs
    assert "Resumed from" in stdout and "at epoch 2; training to epoch 3" in stdout
    with open(os.path.join(split, "progress.csv")) as handle:
        assert [line.split(",")[0] for line in handle][1:] == ["0", "1", "2"]
    for network in NETWORKS:
        a = mx.nd.load(os.path.join(straight, "params", network + ".params"))
        b = mx.nd.load(os.path.join(split, "params", network + ".params"))
        for name in a:
            assert np.array_equal(a[name].asnumpy(), b[name].asnumpy()), (network, name)


def test_run_ddpg_resume_refuses_changing_the_run(script_runs):
    _, split, _ = script_runs
    result = subprocess.run([sys.executable, SCRIPT, "--resume", os.path.join(split, "params"),
                             "--batch-size", "8"], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "--batch-size cannot be changed when resuming" in result.stderr


def test_evaluate_reports_returns(script_runs):
    _, split, _ = script_runs
    result = run_python([EVALUATE, os.path.join(split, "params"), "--episodes", "3"])
    line = result.stdout.strip().splitlines()[-1]
    assert "(epoch 3): 3 episodes, return mean" in line
    for word in ("std", "min", "max", "mean length"):
        assert word in line


def test_evaluate_writes_a_gif(tmp_path):
    pytest.importorskip("PIL")
    sys.path.insert(0, os.path.join(REPO, "examples"))
    try:
        import evaluate
    finally:
        sys.path.pop(0)
    frames = [np.full((8, 10, 3), value, dtype=np.uint8) for value in (0, 128, 255)]
    path = evaluate.write_gif(frames, str(tmp_path / "out.gif"), fps=10)
    from PIL import Image
    with Image.open(path) as image:
        assert image.size == (10, 8) and image.n_frames == 3


# ---------------------------------------------------------------------------------------------
# resuming with a replay memory that has filled and wrapped around


@pytest.fixture(scope="module")
def wrapped_runs(tmp_path_factory):
    """tests/wrap_resume.py: the original runs in one new process, the resumed ones in
    another; returns {name: arrays} for the four outcomes."""
    folder = str(tmp_path_factory.mktemp("wrapped"))
    helper = os.path.join(TESTS, "wrap_resume.py")
    run_python([helper, "original", folder])
    run_python([helper, "resumed", folder])
    outcomes = {}
    for name in ("full", "full_resumed", "interrupted_continued", "interrupted_resumed"):
        with np.load(os.path.join(folder, name + ".npz")) as arrays:
            outcomes[name] = dict(arrays)
    return outcomes


def _assert_identical(expected, actual):
    assert sorted(expected) == sorted(actual)
    assert any(key.startswith("qfunc_target.") for key in expected)
    for key in expected:
        assert np.array_equal(expected[key], actual[key]), key


def test_restore_in_the_same_process_with_a_wrapped_memory_continues_identically(tmp_path):
    import wrap_resume
    full = wrap_resume.build()
    full.train()
    partial = wrap_resume.build(n_epochs=2)
    partial.train()
    partial.save(str(tmp_path / "ckpt"))
    resumed = wrap_resume.build()
    resumed.restore(str(tmp_path / "ckpt"))
    assert (resumed.memory.size, resumed.memory.top) == (40, 10)
    resumed.train()
    _assert_identical(wrap_resume.outcome(full), wrap_resume.outcome(resumed))


def test_resume_with_a_wrapped_memory_in_a_new_process_is_bit_identical(wrapped_runs):
    _assert_identical(wrapped_runs["full"], wrapped_runs["full_resumed"])
    top, size = wrapped_runs["full"]["memory.top_size"]
    assert size == 40 and top == (4 * 25) % 40  # 100 steps through 40 slots


def test_resume_after_ctrl_c_mid_epoch_with_a_wrapped_memory_is_bit_identical(wrapped_runs):
    """The run resumed from the interrupted checkpoint does exactly what the interrupted
    process did when it carried on (the interrupted epoch runs again from its start)."""
    _assert_identical(wrapped_runs["interrupted_continued"],
                      wrapped_runs["interrupted_resumed"])
    # 62 steps before the interrupt, then epochs 2 and 3 in full
    assert list(wrapped_runs["interrupted_resumed"]["counters"][[0, 2]]) == [4, 62 + 50]
