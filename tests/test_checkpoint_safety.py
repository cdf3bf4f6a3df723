"""Opening a checkpoint never runs code from it; damaged files give CheckpointError.

* A pickle whose loading creates a file, put in place of any file of a checkpoint with the
  manifest recomputed as an attacker would, never runs: restore and every reader method refuse
  with CheckpointError or read data only.
* Checkpoints of the pickled format (version 1, tests/data/v1_cartpole, written by the
  library before format 2) open only with trust_pickle / --trust-pickle, with a warning, and
  then continue the run exactly.
* Random truncations and byte flips of each file give CheckpointError, never another
  exception (hypothesis).
"""
import json
import os
import pickle
import random
import shutil
import subprocess
import sys

import mxnet as mx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddpg import checkpoint
from ddpg.checkpoint import CheckpointReader
from ddpg.checkpoint.env_state import capture_env_state, prepare_env_restore
from ddpg.errors import CheckpointError
from ddpg.experiment.build import prepare_run
from ddpg.experiment.results import read_rows
from ddpg.plain_data import NotPlainData, decode, encode

from ckpt_helpers import build, recompute_manifest

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
V1_CHECKPOINT = os.path.join(TESTS, "data", "v1_cartpole")

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py


class CreatesFile(object):
    """Unpickling this opens (creates) ``path``: a stand-in for any code a pickle may run."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("safety") / "ckpt")
    algo = build("cartpole", hidden=4, n_epochs=1, memory_size=200)
    algo.train()
    algo.save(path)
    return path


@pytest.fixture(scope="module")
def target():
    """An algorithm to restore into (a failed restore leaves it as it was)."""
    return build("cartpole", hidden=4, n_epochs=1, memory_size=200)


def _read_everything(path, trust_pickle=False):
    """Every public way of reading a checkpoint's data, as tools (evaluate, export) do."""
    reader = CheckpointReader(path, trust_pickle=trust_pickle)
    checkpoint.read_manifest(path)
    for network in checkpoint.NETWORKS:
        reader.params(network)
    for network in checkpoint.OPTIMISED:
        reader.updater_states(network)
    reader.memory_arrays()
    reader.training_state()


def _checkpoint_files(path):
    return sorted(os.listdir(path))


@pytest.mark.parametrize("victim", ["manifest.json", "qfunc.params", "policy_target.params",
                                    "qfunc.optimizer.nd", "policy.optimizer.json",
                                    "replay_memory.npz", "training_state.json",
                                    "training_state.npz", "state.pkl", "policy.states"])
def test_a_crafted_pickle_in_any_file_never_runs(saved, target, tmp_path, victim):
    path = str(tmp_path / "ckpt")
    shutil.copytree(saved, path)
    marker = str(tmp_path / "pwned")
    with open(os.path.join(path, victim), "wb") as handle:  # the pickled formats' names too
        pickle.dump(CreatesFile(marker), handle)
    if victim != "manifest.json":
        recompute_manifest(path)
    with pytest.raises(CheckpointError):
        if victim in ("state.pkl", "policy.states"):
            # files a version-2 checkpoint does not read: restore succeeds, reading data only
            target.restore(path)
            raise CheckpointError("restored from data only")
        target.restore(path)
    with pytest.raises(CheckpointError):
        if victim in ("state.pkl", "policy.states"):
            _read_everything(path)
            raise CheckpointError("read data only")
        _read_everything(path)
    assert not os.path.exists(marker)


def test_a_pickled_checkpoint_with_a_crafted_pickle_is_refused(target, tmp_path):
    """A version-1 checkpoint is refused before anything is unpickled."""
    path = str(tmp_path / "v1")
    shutil.copytree(V1_CHECKPOINT, path)
    marker = str(tmp_path / "pwned")
    for victim in ("state.pkl", "qfunc.states", "policy.states"):
        with open(os.path.join(path, victim), "wb") as handle:
            pickle.dump(CreatesFile(marker), handle)
    recompute_manifest(path)
    algo = build("cartpole", hidden=8, n_epochs=2)
    with pytest.raises(CheckpointError, match=r"trust_pickle=True.*--trust-pickle"):
        algo.restore(path)
    reader = CheckpointReader(path)
    reader.params("policy")  # parameters are MXNet arrays: readable without trust
    with pytest.raises(CheckpointError, match="is a pickle"):
        reader.training_state()
    with pytest.raises(CheckpointError, match="is a pickle"):
        reader.updater_states("qfunc")
    assert not os.path.exists(marker)


# ---------------------------------------------------------------------------------------------
# the pickled format, trusted explicitly


def _cli(args, cwd):
    return subprocess.run([sys.executable, os.path.join(REPO, "examples", args[0])] + args[1:],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def test_run_ddpg_resumes_a_pickled_checkpoint_exactly_only_when_trusted(tmp_path):
    """Refused without --trust-pickle; trusted, it continues exactly as the same state saved
    in today's format does.

    The reference is the fixture's own state written as a version-2 checkpoint here, not a
    run from scratch: the fixture was computed on another CPU, and MXNet's kernels differ in
    the last bit between CPUs, so a fresh run reproduces it only on a machine like that one.
    That version-2 checkpoints resume exactly as an uninterrupted run is tested in
    test_checkpoint.py.
    """
    path = str(tmp_path / "v1")
    shutil.copytree(V1_CHECKPOINT, path)
    refused = _cli(["run_ddpg.py", "--resume", path, "--n-epochs", "2", "--no-progress-bar",
                    "--log-dir", str(tmp_path / "refused")], str(tmp_path))
    assert refused.returncode != 0
    assert "--trust-pickle" in refused.stderr and "Traceback" not in refused.stderr
    resumed = _cli(["run_ddpg.py", "--resume", path, "--n-epochs", "2", "--no-progress-bar",
                    "--trust-pickle", "--log-dir", str(tmp_path / "resumed")], str(tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "trust_pickle" in resumed.stderr  # the warning
    # the same state, restored in this process and saved in the current format
    _, _, _, algo = prepare_run(["--resume", path, "--trust-pickle", "--n-epochs", "2",
                                 "--no-progress-bar", "--log-dir", str(tmp_path / "unused")])
    for network in checkpoint.NETWORKS:  # restored as the fixture holds them
        saved = mx.nd.load(os.path.join(path, network + ".params"))
        restored = checkpoint.network_params(algo, network)
        for name, array in saved.items():
            assert np.array_equal(array.asnumpy(), restored[name].asnumpy()), (network, name)
    with open(os.path.join(path, "state.pkl"), "rb") as f:  # the fixture: trusted here
        counters = pickle.load(f)["counters"]
    for name in ("epoch", "itr", "total_env_steps", "path_length", "episode"):
        assert getattr(algo, name) == counters[name], name
    assert np.array_equal(algo.obs, counters["obs"])
    saved_memory = np.load(os.path.join(path, "replay_memory.npz"))
    size = int(saved_memory["size"])
    assert size == algo.memory.size > 0
    for name in ("obss", "acts", "rwds", "ends", "nxts"):
        assert np.array_equal(getattr(algo.memory, name)[:size], saved_memory[name][:size]), name
    v2_path = str(tmp_path / "v2")
    algo.save(v2_path)
    reference = _cli(["run_ddpg.py", "--resume", v2_path, "--n-epochs", "2",
                      "--no-progress-bar", "--log-dir", str(tmp_path / "reference")],
                     str(tmp_path))
    assert reference.returncode == 0, reference.stderr[-3000:]
    for network in checkpoint.NETWORKS:
        a = CheckpointReader(str(tmp_path / "reference" / "params")).params(network)
        b = CheckpointReader(str(tmp_path / "resumed" / "params")).params(network)
        for name in a:
            assert np.array_equal(a[name], b[name]), (network, name)
    # the resumed epoch's row, but for its wall time
    reference_row, resumed_row = (read_rows(str(tmp_path / run / "progress.csv"))[-1]
                                  for run in ("reference", "resumed"))
    for row in (reference_row, resumed_row):
        del row["Time"]
    assert reference_row == resumed_row
    # the resumed run saved the current format
    assert checkpoint.read_manifest(str(tmp_path / "resumed" / "params"))[
        "format_version"] == checkpoint.FORMAT_VERSION


def test_evaluate_needs_trust_for_a_pickled_checkpoint(tmp_path):
    refused = _cli(["evaluate.py", V1_CHECKPOINT, "--episodes", "1"], str(tmp_path))
    assert refused.returncode != 0 and "--trust-pickle" in refused.stderr
    assert "Traceback" not in refused.stderr
    trusted = _cli(["evaluate.py", V1_CHECKPOINT, "--episodes", "1", "--trust-pickle"],
                   str(tmp_path))
    assert trusted.returncode == 0, trusted.stderr[-3000:]
    assert "1 episodes, return mean" in trusted.stdout


# ---------------------------------------------------------------------------------------------
# plain data and the environments' hooks


def test_plain_data_round_trip_keeps_types():
    tree = {"t": (3, [1.5, None, True], "x"), "big": 2 ** 100, 7: {"$": 1},
            "f32": np.float32(0.1), "a": np.arange(6, dtype=np.uint32).reshape(2, 3),
            "python": random.Random(3).getstate(), "numpy": np.random.RandomState(2).get_state()}
    json_tree, arrays = encode(tree)
    back = decode(json.loads(json.dumps(json_tree)), arrays)
    assert back["t"] == (3, [1.5, None, True], "x") and back["big"] == 2 ** 100
    assert back[7] == {"$": 1} and type(back["f32"]) is np.float32
    assert back["a"].dtype == np.uint32 and np.array_equal(back["a"], tree["a"])
    random.Random().setstate(back["python"])
    np.random.RandomState().set_state(back["numpy"])
    with pytest.raises(NotPlainData, match=r"state\['f'\] is a .*function"):
        encode({"f": len})
    with pytest.raises(NotPlainData, match="numpy array of Python objects"):
        encode([np.array([object()])])


class ObjectStateEnv(object):
    """A user environment whose hook returns an object: it cannot be saved without pickle."""

    def get_checkpoint_state(self):
        return {"simulator": object()}

    def set_checkpoint_state(self, state):
        raise AssertionError("never called")


def test_an_environment_state_that_is_not_plain_data_resumes_at_the_next_episode():
    with pytest.warns(RuntimeWarning, match="starts a new episode"):
        saved = capture_env_state(ObjectStateEnv())
    assert saved["kind"] == "opaque" and saved["episode"] == "reset"
    encode(saved)  # the snapshot itself is plain data
    prepare_env_restore(ObjectStateEnv(), saved)()  # nothing to apply


def test_the_python_generator_is_restored(saved, tmp_path):
    state = CheckpointReader(saved).training_state()["python_random"]
    random.seed(99)
    build("cartpole", hidden=4, n_epochs=1, memory_size=200).restore(saved)
    assert random.getstate() == state


# ---------------------------------------------------------------------------------------------
# damage: truncations and byte flips


def _damage(path, name, kind, position, value):
    full = os.path.join(path, name)
    with open(full, "rb") as handle:
        content = bytearray(handle.read())
    if kind == "truncate":
        content = content[:position % max(1, len(content))]
    else:
        content[position % len(content)] ^= value
    with open(full, "wb") as handle:
        handle.write(bytes(content))


FILES = ["manifest.json", "qfunc.params", "qfunc_target.params", "policy.params",
         "policy_target.params", "qfunc.optimizer.nd", "qfunc.optimizer.json",
         "policy.optimizer.nd", "policy.optimizer.json", "replay_memory.npz",
         "training_state.json", "training_state.npz"]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FILES), kind=st.sampled_from(["truncate", "flip"]),
       position=st.integers(0, 1 << 20), value=st.integers(1, 255))
def test_damaged_files_give_checkpoint_error(saved, target, tmp_path_factory, name, kind,
                                             position, value):
    path = str(tmp_path_factory.mktemp("damaged") / "ckpt")
    shutil.copytree(saved, path)
    _damage(path, name, kind, position, value)
    with pytest.raises(CheckpointError):
        target.restore(path)
    with pytest.raises(CheckpointError):
        _read_everything(path)


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(FILES[1:]), kind=st.sampled_from(["truncate", "flip"]),
       position=st.integers(0, 1 << 20), value=st.integers(1, 255))
def test_damaged_files_with_a_recomputed_manifest_are_read_as_data_or_refused(
        saved, target, tmp_path_factory, name, kind, position, value):
    """With the checksums recomputed, the parsers themselves meet the damage: the result is
    a CheckpointError or (a changed number) a successful restore, never another exception."""
    path = str(tmp_path_factory.mktemp("damaged") / "ckpt")
    shutil.copytree(saved, path)
    _damage(path, name, kind, position, value)
    recompute_manifest(path)
    try:
        target.restore(path)
    except CheckpointError:
        pass
    try:
        _read_everything(path)
    except CheckpointError:
        pass
