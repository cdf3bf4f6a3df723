"""Checkpoint details a user relies on, each checked directly and fast.

* A version-2 checkpoint written by an earlier build (tests/data/v2_cartpole, written by
  tests/data/make_v2_cartpole.py) stays readable and restores exactly; a manifest written
  today still has every field that one has, and its "created" field is an ISO 8601 time.
* Crash recovery (ddpg.checkpoint.atomic): an aside copy left by an interrupted swap is put
  back (and recover says so) or, when the checkpoint is in place, deleted (a symlink only
  unlinked); a failed rename puts the old checkpoint back and raises the original error; the
  staging folder of a save cut short is deleted by the next save.
* Damaged or inconsistent files (with the manifest recomputed, as anyone who changed them
  could) give a CheckpointError that names the file and what is wrong, and leave the
  algorithm as it was.
"""
import datetime
import importlib.util
import json
import os
import pickle
import shutil
import struct
import warnings

import mxnet as mx
import numpy as np
import pytest

from ddpg import checkpoint, logger
from ddpg.checkpoint import CheckpointReader, recover
from ddpg.checkpoint.atomic import write_atomically
from ddpg.checkpoint.networks import layout_difference
from ddpg.errors import CheckpointError
from ddpg.plain_data import MARK

from ckpt_helpers import PointEnv, all_params, build, make_env, recompute_manifest
from helpers import build_algorithm

TESTS = os.path.dirname(os.path.abspath(__file__))
V1_CHECKPOINT = os.path.join(TESTS, "data", "v1_cartpole")
V2_CHECKPOINT = os.path.join(TESTS, "data", "v2_cartpole")

pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py


def _load_fixture_script():
    spec = importlib.util.spec_from_file_location(
        "make_v2_cartpole", os.path.join(TESTS, "data", "make_v2_cartpole.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


V2 = _load_fixture_script()


@pytest.fixture
def v2_copy(tmp_path):
    """A copy of the version-2 fixture to edit (the fixture itself stays untouched)."""
    path = str(tmp_path / "v2")
    shutil.copytree(V2_CHECKPOINT, path)
    return path


def assert_same_tree(a, b, where="state"):
    """Nested dicts, lists, tuples and numpy arrays equal, types and dtypes included."""
    assert type(a) is type(b), (where, type(a), type(b))
    if isinstance(a, dict):
        assert set(a) == set(b), (where, sorted(map(str, a)), sorted(map(str, b)))
        for key in a:
            assert_same_tree(a[key], b[key], "%s[%r]" % (where, key))
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for index, (x, y) in enumerate(zip(a, b)):
            assert_same_tree(x, y, "%s[%d]" % (where, index))
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b), where
    elif isinstance(a, mx.nd.NDArray):
        assert a.shape == b.shape and np.array_equal(a.asnumpy(), b.asnumpy()), where
    else:
        assert a == b, (where, a, b)


def _key_paths(tree, prefix=()):
    """Every path of dict keys in ``tree`` (into dicts only)."""
    paths = set()
    if isinstance(tree, dict):
        for key, value in tree.items():
            paths.add(prefix + (key,))
            paths |= _key_paths(value, prefix + (key,))
    return paths


# ---------------------------------------------------------------------------------------------
# a version-2 checkpoint of an earlier build


def test_a_version_2_checkpoint_of_an_earlier_build_restores_exactly(v2_copy, tmp_path):
    before = CheckpointReader(v2_copy)  # manifest's canonical form and checksum checked
    assert before.manifest["format_version"] == 2 and not before.pickled
    algo = V2.build_algo()
    algo.restore(v2_copy)
    progress = before.manifest["progress"]
    assert (algo.epoch, algo.itr, algo.total_env_steps, algo.memory.size) == (
        progress["epoch"], progress["itr"], progress["total_env_steps"],
        progress["memory_size"])
    # saving the restored algorithm gives back the same contents, file by file
    algo.checkpoint_metadata = V2.METADATA
    again = str(tmp_path / "again")
    algo.save(again)
    after = CheckpointReader(again)
    for network in checkpoint.NETWORKS:
        assert_same_tree(dict(before.params(network)), dict(after.params(network)), network)
    for network in checkpoint.OPTIMISED:
        saved, resaved = before.updater_states(network), after.updater_states(network)
        assert saved[0] == resaved[0] == "plain"  # no pickle in a version-2 checkpoint
        assert_same_tree(saved[1], resaved[1], network + " optimiser")
        assert_same_tree(saved[2], resaved[2], network + " optimiser arrays")
    assert_same_tree(before.memory_arrays(), after.memory_arrays(), "memory")
    assert_same_tree(before.training_state(), after.training_state())
    for section in ("spaces", "parameters", "networks", "progress", "environment",
                    "metadata"):
        assert before.manifest[section] == after.manifest[section], section
    # hyperparameters added since the fixture was made are recorded at their defaults
    added = {"n_envs": 1, "vec_env": "sync", "n_step": 1, "prioritized_replay": False,
             "per_alpha": 0.6, "per_beta": 0.4, "per_eps": 1e-6, "her": False,
             "her_strategy": "future", "her_k": 4, "obs_norm": False, "action_l2": 0.0,
             "target_update_interval": 1, "replay_memory": None}
    assert after.manifest["hyperparameters"] == dict(before.manifest["hyperparameters"],
                                                     **added)


def test_a_manifest_written_today_has_every_field_of_the_version_2_fixture(tmp_path):
    algo = V2.build_algo()
    algo.restore(V2_CHECKPOINT)  # a replay memory too
    algo.checkpoint_metadata = V2.METADATA
    path = str(tmp_path / "today")
    algo.save(path)
    today = checkpoint.read_manifest(path)
    old = checkpoint.read_manifest(V2_CHECKPOINT)
    missing = _key_paths(old) - _key_paths(today)
    assert not missing, sorted(missing)
    # and what those fields hold
    space = algo.env.action_space
    assert today["spaces"]["act_low"] == np.asarray(space.low, np.float64).ravel().tolist()
    assert today["spaces"]["act_high"] == np.asarray(space.high, np.float64).ravel().tolist()
    assert today["networks"]["policy"]["hidden_sizes"] == [4, 4]
    assert today["networks"]["qfunc"]["hidden_sizes"] == [4, 4, 4]


def test_the_manifest_records_when_it_was_created_in_iso_8601(tmp_path):
    path = str(tmp_path / "ckpt")
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    build("cartpole", hidden=4, memory_size=200).save(path)
    end = datetime.datetime.now(datetime.timezone.utc)
    created = [datetime.datetime.strptime(manifest["created"], "%Y-%m-%dT%H:%M:%S%z")
               for manifest in (checkpoint.read_manifest(path),
                                checkpoint.read_manifest(V2_CHECKPOINT))]
    assert start <= created[0] <= end


# ---------------------------------------------------------------------------------------------
# layout differences


def test_a_layout_difference_counts_the_differences_it_does_not_show():
    expected = {"w%d" % i: (1,) for i in range(9)}
    actual = {"w%d" % i: (2,) for i in range(9)}
    parts = layout_difference(expected, actual, "checkpoint", "algorithm").split("; ")
    assert len(parts) == 7 and parts[-1] == "3 more"
    assert parts[0] == "w0 has shape (1,) in the checkpoint and (2,) in the algorithm"
    # one name only in each: 2 differences more than 6 shown
    expected["x"], actual["y"] = (3,), (3,)
    parts = layout_difference(expected, actual, "checkpoint", "algorithm").split("; ")
    assert parts[-1] == "5 more"
    assert layout_difference({"a": (1,)}, {"a": (1,)}, "x", "y") == ""


def test_a_layout_difference_names_the_side_a_parameter_is_missing_from():
    words = layout_difference({"w": (2,), "old": (3,)}, {"w": (2,), "new": (3,)},
                              "checkpoint", "algorithm")
    assert words == "old is in the checkpoint only; new is in the algorithm only"


# ---------------------------------------------------------------------------------------------
# crash recovery


def _fill_with(tag):
    def fill(folder):
        with open(os.path.join(folder, "manifest.json"), "w") as out:
            out.write(tag)
    return fill


def _tag(path):
    with open(os.path.join(path, "manifest.json")) as handle:
        return handle.read()


def test_recover_puts_back_an_aside_copy_and_says_so(tmp_path):
    path = str(tmp_path / "ckpt")
    write_atomically(path, _fill_with("old"))
    os.rename(path, str(tmp_path / ".ckpt.old"))  # a crash between the two renames
    assert recover(path) is True
    assert _tag(path) == "old" and os.listdir(str(tmp_path)) == ["ckpt"]
    assert recover(path) is False  # nothing left to do
    # an aside copy without a manifest is not a checkpoint: left alone
    os.rename(path, str(tmp_path / ".ckpt.old"))
    os.remove(str(tmp_path / ".ckpt.old" / "manifest.json"))
    assert recover(path) is False and os.listdir(str(tmp_path)) == [".ckpt.old"]


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_a_leftover_aside_entry_beside_a_checkpoint_is_deleted(tmp_path, kind):
    """The deletion of the old copy was cut short; the old checkpoint may have been a
    symlink to a folder elsewhere (then only the link goes)."""
    path = str(tmp_path / "ckpt")
    write_atomically(path, _fill_with("new"))
    elsewhere = str(tmp_path / "elsewhere")
    write_atomically(elsewhere, _fill_with("elsewhere"))
    aside = str(tmp_path / ".ckpt.old")
    if kind == "file":
        with open(aside, "w") as out:
            out.write("stale")
    else:
        os.symlink(elsewhere, aside)
    assert recover(path) is False
    assert not os.path.lexists(aside) and _tag(path) == "new"
    assert _tag(elsewhere) == "elsewhere"
    # the same when a save finds it
    os.symlink(elsewhere, aside)
    write_atomically(path, _fill_with("newer"))
    assert sorted(os.listdir(str(tmp_path))) == ["ckpt", "elsewhere"]
    assert _tag(path) == "newer" and _tag(elsewhere) == "elsewhere"


def test_a_save_whose_old_copy_cannot_be_deleted_still_succeeds(tmp_path, monkeypatch):
    """The new checkpoint is in place once renamed in; an old copy that cannot be deleted
    (here its folder refuses rmdir) must not turn that into a failed save. The leftover is
    deleted by the next save."""
    path = str(tmp_path / "ckpt")
    write_atomically(path, _fill_with("old"))
    aside, real_rmdir = str(tmp_path / ".ckpt.old"), os.rmdir

    def rmdir(target, *args, **kwargs):
        if target == aside:
            raise OSError("busy")
        return real_rmdir(target, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", rmdir)
    assert write_atomically(path, _fill_with("new")) == path
    assert _tag(path) == "new" and os.path.isdir(aside)
    monkeypatch.undo()
    write_atomically(path, _fill_with("newer"))
    assert os.listdir(str(tmp_path)) == ["ckpt"] and _tag(path) == "newer"


def test_a_failed_rename_into_place_puts_the_old_checkpoint_back(tmp_path, monkeypatch):
    path = str(tmp_path / "ckpt")
    write_atomically(path, _fill_with("old"))
    real_rename, failures = os.rename, []

    def rename(src, dst, **kwargs):
        if dst == path and not failures:  # the new folder's rename into place
            failures.append(src)
            raise OSError("rename failed")
        return real_rename(src, dst, **kwargs)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError, match="rename failed"):
        write_atomically(path, _fill_with("new"))
    monkeypatch.undo()
    assert failures and _tag(path) == "old"
    assert os.listdir(str(tmp_path)) == ["ckpt"]


def test_the_staging_folder_of_a_save_cut_short_is_deleted_by_the_next_save(tmp_path,
                                                                              monkeypatch):
    path = str(tmp_path / "ckpt")
    write_atomically(path, _fill_with("old"))

    def cut_short(folder):
        _fill_with("half")(folder)
        raise KeyboardInterrupt  # and, as if the process were killed, no clean-up:

    monkeypatch.setattr(shutil, "rmtree", lambda *args, **kwargs: None)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, cut_short)
    monkeypatch.undo()
    left = sorted(os.listdir(str(tmp_path)))
    assert len(left) == 2 and _tag(path) == "old"
    write_atomically(path, _fill_with("new"))
    assert os.listdir(str(tmp_path)) == ["ckpt"] and _tag(path) == "new"


# ---------------------------------------------------------------------------------------------
# damaged and inconsistent files: CheckpointError naming the file and what is wrong


@pytest.mark.parametrize("damage,message", [
    (b"{not json", "is corrupted"),
    (None, "does not match its own checksum"),
])
def test_a_damaged_manifest_error_names_the_checkpoint(v2_copy, damage, message):
    manifest_path = os.path.join(v2_copy, "manifest.json")
    if damage is None:  # edited by hand: the checksum no longer fits
        with open(manifest_path) as handle:
            text = handle.read()
        damage = text.replace('"itr": 31', '"itr": 32').encode("ascii")
        assert damage != text.encode("ascii")
    with open(manifest_path, "wb") as out:
        out.write(damage)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy)
    assert message in str(error.value) and v2_copy in str(error.value)


def _replace_training_state(path, content):
    """Write ``content`` as the checkpoint's training_state.json, manifest recomputed (as
    anyone who edited the file could); returns the file's path."""
    state_path = os.path.join(path, "training_state.json")
    with open(state_path, "w") as out:
        json.dump(content, out)
    recompute_manifest(path)
    return state_path


def test_a_malformed_training_state_error_names_the_file(v2_copy):
    state_path = _replace_training_state(v2_copy, {"counters": {MARK: "array", "key": "nowhere"}})
    algo = V2.build_algo()
    for read in (CheckpointReader(v2_copy).training_state, lambda: algo.restore(v2_copy)):
        with pytest.raises(CheckpointError) as error:
            read()
        text = str(error.value)
        assert state_path in text and "malformed" in text and "'nowhere'" in text
    assert algo.memory is None and algo.epoch == 0  # left as it was


def test_a_trusted_version_1_checkpoint_restores_its_training_state(tmp_path):
    path = str(tmp_path / "v1")
    shutil.copytree(V1_CHECKPOINT, path)
    progress = checkpoint.read_manifest(path)["progress"]
    with pytest.warns(RuntimeWarning, match="unpickling the training state"):
        state = CheckpointReader(path, trust_pickle=True).training_state()
    assert {key: state["counters"][key] for key in ("epoch", "itr", "total_env_steps")} == {
        key: progress[key] for key in ("epoch", "itr", "total_env_steps")}
    assert state["env"]["inner"]["kind"] == "custom"  # upgraded to version 2's form
    algo = build("cartpole", hidden=8, n_epochs=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        algo.restore(path, trust_pickle=True)
    assert (algo.epoch, algo.itr, algo.total_env_steps, algo.memory.size) == (
        progress["epoch"], progress["itr"], progress["total_env_steps"],
        progress["memory_size"])


def test_a_version_1_mujoco_environment_snapshot_continues_the_episode_exactly(tmp_path):
    """Version 1 pickled a MuJoCo env's MjData; the upgrade turns it into the physics state of
    version 2, so the restored environment steps on exactly as the saved one."""
    pytest.importorskip("mujoco")
    from ddpg.checkpoint import legacy
    from ddpg.checkpoint.env_state import capture_env_state, prepare_env_restore
    from ddpg.envs import GymEnv

    saved_env = GymEnv("HalfCheetah-v5")
    saved_env.reset()
    actions = np.random.RandomState(0).uniform(-1, 1, size=(8, 6))
    for action in actions[:4]:
        saved_env.step(action)
    today = capture_env_state(saved_env)
    version_1 = {"kind": "gym", "episode": today["episode"],
                 "physics": {"kind": "mujoco", "data": saved_env.env.unwrapped.data}}
    version_1.update((key, today["state"][key]) for key in (
        "env_id", "type", "pending_seed", "has_reset", "rng", "rng_seed", "elapsed_steps"))
    state_path = str(tmp_path / legacy.STATE)
    with open(state_path, "wb") as out:
        pickle.dump({"env": version_1}, out)
    upgraded = legacy.training_state(state_path)["env"]
    restored_env = GymEnv("HalfCheetah-v5")
    restored_env.reset()
    restored_env.step(actions[7])  # elsewhere in its own episode
    prepare_env_restore(restored_env, upgraded)()
    for action in actions[4:]:
        expected, got = saved_env.step(action), restored_env.step(action)
        assert np.array_equal(expected.observation, got.observation)
        assert expected.reward == got.reward


def _rewrite_memory(path, **changes):
    memory_path = os.path.join(path, "replay_memory.npz")
    with np.load(memory_path) as data:
        arrays = {key: data[key] for key in data.files}
    arrays.update(changes)
    with open(memory_path, "wb") as out:
        np.savez(out, **arrays)
    recompute_manifest(path)
    return memory_path


def test_a_replay_memory_array_of_the_wrong_shape_is_refused(v2_copy):
    size = int(CheckpointReader(v2_copy).memory_arrays()["size"])
    _rewrite_memory(v2_copy, nxts=np.zeros((size, 5), np.float32))
    algo = V2.build_algo()
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    assert str(error.value) == ("the replay memory of %s has nxts of shape (%d, 5), expected "
                                "(%d, 4)" % (v2_copy, size, size))
    assert algo.memory is None


def _full_memory(memory_size, **counters):
    arrays = {"obss": np.ones((memory_size, 4), np.float32),
              "acts": np.ones((memory_size, 1), np.float32),
              "rwds": np.ones(memory_size, np.float32), "ends": np.zeros(memory_size, bool),
              "nxts": np.ones((memory_size, 4), np.float32),
              "top": np.int64(0), "size": np.int64(memory_size),
              "memory_size": np.int64(memory_size)}
    arrays.update({key: np.int64(value) for key, value in counters.items()})
    arrays["obss"], arrays["acts"], arrays["nxts"], arrays["rwds"], arrays["ends"] = (
        arrays[key][:int(arrays["size"])] for key in ("obss", "acts", "nxts", "rwds", "ends"))
    return arrays


@pytest.mark.parametrize("counters", [
    {"top": 200},  # a full memory's next slot is past its end
    {"top": -1},
    {"size": 150, "top": 3},  # a memory not yet full fills from its start
])
def test_an_inconsistent_replay_memory_is_refused(v2_copy, counters):
    arrays = _full_memory(200, **counters)
    _rewrite_memory(v2_copy, **arrays)
    algo = V2.build_algo()
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    assert str(error.value) == (
        "the replay memory of %s is inconsistent: size %d, top %d, memory_size 200 (this "
        "algorithm's memory_size is 200)" % (v2_copy, arrays["size"], arrays["top"]))
    assert algo.memory is None and algo.epoch == 0


# ---------------------------------------------------------------------------------------------
# the epoch's running update statistics


@pytest.mark.parametrize("saved_stats", ["another layout", "none"])
def test_update_statistics_that_do_not_fit_start_the_epoch_afresh(tmp_path, saved_stats):
    source = V2.build_algo()
    if saved_stats == "none":  # an algorithm without update statistics
        source.update_stats = None
    else:  # statistics of another layout (another version's statistics)
        source.update_stats.q_sums = mx.nd.ones((3,))
        source.update_stats.n_updates = 4
    path = str(tmp_path / "ckpt")
    source.save(path)
    saved = CheckpointReader(path).training_state()["update_stats"]
    assert (saved is None) == (saved_stats == "none")
    algo = V2.build_algo()
    stats = algo.update_stats
    stats.q_sums[:] = 2
    stats.n_updates = stats.n_policy_updates = 5
    algo.restore(path)
    assert algo.update_stats is stats
    assert stats.n_updates == 0 and stats.n_policy_updates == 0 and stats.averages() == {}
    assert not np.any(stats.q_sums.asnumpy())


# -- what the manifest records and what its errors say ---------------------------------------

def test_a_td3_checkpoint_records_the_hyperparameters_td3_adds(tmp_path):
    algo = build_algorithm("td3", env=make_env("cartpole"), target_noise=0.3,
                           target_noise_clip=0.4, batch_size=16, memory_size=1000,
                           memory_start_size=50, epoch_length=60, n_epochs=1, eval_samples=20,
                           max_path_length=100, seed=5)
    path = str(tmp_path / "td3")
    algo.save(path)
    recorded = checkpoint.read_manifest(path)["hyperparameters"]
    assert (recorded["target_noise"], recorded["target_noise_clip"]) == (0.3, 0.4)
    assert recorded["policy_delay"] == 2
    assert set(checkpoint.HYPERPARAMETERS) <= set(recorded)


@pytest.mark.parametrize("damage, message", [
    (lambda manifest: manifest.pop("spaces"), "has no 'spaces' section"),
    (lambda manifest: manifest["files"].update({"params.json": "not a file entry"}),
     "has a malformed entry for 'params.json'"),
])
def test_a_manifest_missing_a_section_or_with_a_bad_entry_is_refused_by_name(v2_copy, damage,
                                                                              message):
    manifest_path = os.path.join(v2_copy, "manifest.json")
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    damage(manifest)
    checkpoint.write_manifest(manifest_path, manifest)  # a consistent checksum of its own
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy)
    assert message in str(error.value) and v2_copy in str(error.value)


def test_a_manifest_of_another_format_is_refused_naming_it(v2_copy):
    manifest_path = os.path.join(v2_copy, "manifest.json")
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    manifest["format"] = "other-tool"
    checkpoint.write_manifest(manifest_path, manifest)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy)
    assert str(error.value) == ("%s is not a ddpg checkpoint (its manifest has format "
                                "'other-tool')" % v2_copy)


def test_a_training_state_that_is_not_a_dict_is_refused_naming_the_file(v2_copy):
    state_path = _replace_training_state(v2_copy, [1, 2, 3])
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy).training_state()
    assert str(error.value) == "the training state %s is not a dict" % state_path


def test_an_environment_of_another_kind_is_refused_naming_the_checkpoint(v2_copy):
    algo = V2.build_algo()
    algo.env = PointEnv(obs_dim=4, act_dim=1)  # the same spaces; the checkpoint holds a
    # normalised cart-pole's state
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    assert "(checkpoint %s)" % v2_copy in str(error.value)


def _restore_logging(algo, path, log_path):
    """Restore ``path`` into ``algo``; the text the log got meanwhile."""
    logger.add_text_output(log_path)
    logger.set_log_tabular_only(False)  # the quiet_logger fixture resets it afterwards
    try:
        algo.restore(path)
    finally:
        logger.remove_text_output(log_path)
    with open(log_path) as handle:
        return handle.read()


def test_an_episode_whose_environment_cannot_be_saved_is_abandoned_with_a_message(tmp_path):
    # PointEnv has no checkpoint hook; episodes of at most 20 steps
    algo = build("point", epoch_length=35, max_path_length=20, n_epochs=1)
    algo.train()
    assert algo.path_length > 0 and not algo.end  # saved in the middle of an episode
    assert algo.episode >= 1  # not the first
    path = str(tmp_path / "point")
    algo.save(path)
    restored = build("point", epoch_length=35, max_path_length=20)
    text = _restore_logging(restored, path, str(tmp_path / "debug.log"))
    assert "The environment's state (helpers.PointEnv) cannot be restored: the interrupted " \
        "episode is abandoned" in text
    # the abandoned episode counts as one: the next starts afresh with the next number
    assert (restored.obs, restored.end, restored.path_length, restored.path_return) == (
        None, False, 0, 0)
    assert restored.episode == algo.episode + 1


def test_a_checkpoint_saved_as_an_episode_ended_abandons_nothing(tmp_path):
    """An episode that ended with the epoch needs no environment state: the restored run
    resets as the uninterrupted one would, and its episode count is the saved one."""
    algo = build("point", epoch_length=35, max_path_length=35, n_epochs=1)
    algo.train()
    assert algo.end and algo.path_length == 35  # the episode ended at the epoch's last step
    path = str(tmp_path / "point")
    algo.save(path)
    restored = build("point", epoch_length=35, max_path_length=35)
    text = _restore_logging(restored, path, str(tmp_path / "debug.log"))
    assert "abandoned" not in text
    assert restored.end and restored.episode == algo.episode
    assert np.array_equal(restored.obs, algo.obs)


# -- leftovers, odd files and the optimisers' settings of this run ---------------------------

def test_a_leftover_staging_entry_that_cannot_be_deleted_does_not_stop_a_save(tmp_path):
    """A leftover of a killed save that rmtree cannot delete (here a plain file, not a
    folder) is left alone; the save goes on."""
    path = str(tmp_path / "ckpt")
    stale = str(tmp_path / ".ckpt.abc123.saving")
    with open(stale, "w") as out:
        out.write("not a folder")
    write_atomically(path, _fill_with("new"))
    assert _tag(path) == "new"


def test_the_manifest_records_the_action_bounds_as_floats_whatever_their_dtype():
    from types import SimpleNamespace
    from ddpg.checkpoint.manifest import _spaces

    def space(low, high):
        return SimpleNamespace(flat_dim=2, shape=(2,), low=np.array(low), high=np.array(high))

    env = SimpleNamespace(observation_space=space([-5, -5], [5, 5]),
                          action_space=space([-2, -1], [2, 1]))  # integer bounds
    spaces = _spaces(env)
    assert spaces["act_low"] == [-2.0, -1.0] and spaces["act_high"] == [2.0, 1.0]
    assert all(type(value) is float for value in spaces["act_low"] + spaces["act_high"])
    assert json.dumps(spaces["act_high"]) == "[2.0, 1.0]"


def test_a_parameter_file_holding_a_list_of_arrays_is_refused_by_name(v2_copy):
    params_path = os.path.join(v2_copy, "policy.params")
    mx.nd.save(params_path, [mx.nd.ones((4, 4))])  # unnamed arrays
    recompute_manifest(v2_copy)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy).params("policy")
    assert str(error.value) == ("checkpoint file %s holds a list, not named arrays"
                                % params_path)


def test_a_parameter_file_that_differs_from_its_manifest_is_refused_with_the_difference(v2_copy):
    params_path = os.path.join(v2_copy, "policy.params")
    arrays = mx.nd.load(params_path)
    dropped = sorted(arrays)[0]
    reshaped = sorted(arrays)[1]
    old_shape = arrays[reshaped].shape
    arrays[reshaped] = arrays[reshaped].reshape((-1,))
    del arrays[dropped]
    mx.nd.save(params_path, arrays)
    recompute_manifest(v2_copy)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy).params("policy")
    differences = set(str(error.value).split(": ", 1)[1].split("; "))
    assert str(error.value).startswith("checkpoint file %s does not match its manifest: "
                                       % params_path)
    assert differences == {"%s is in the manifest only" % dropped,
                           "%s has shape %s in the manifest and %s in the file"
                           % (reshaped, old_shape, (int(np.prod(old_shape)),))}


@pytest.mark.parametrize("damage,reason", [
    (lambda data: data[:20], "it ends after %d bytes, in the middle of a record"),  # in the
    # header's array count
    (lambda data: data + b"\0\0\0", "it has 3 bytes after its last record"),
])
def test_a_damaged_ndarray_file_is_refused_saying_what_is_wrong(v2_copy, damage, reason):
    params_path = os.path.join(v2_copy, "qfunc.params")
    with open(params_path, "rb") as handle:
        data = damage(handle.read())
    with open(params_path, "wb") as out:
        out.write(data)
    recompute_manifest(v2_copy)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy).params("qfunc")
    assert str(error.value) == ("checkpoint file %s is not a valid NDArray file: %s"
                                % (params_path, reason.replace("%d", str(len(data)))))


V2_ARRAY, V3_ARRAY = 0xF993FAC9, 0xF993FACA  # MXNet's NDArray record magic numbers


def _ndarray_file(record, names_count=1):
    """The bytes of an NDArray file holding one array ``record`` named ``a``."""
    return (struct.pack("<QQQ", 0x112, 0, 1) + record + struct.pack("<Q", names_count)
            + (struct.pack("<Q", 1) + b"a" if names_count == 1 else b""))


def _array_record(magic, dims):
    """A dense float32 array record of shape ``dims`` (``None``: ndim -1, no shape)."""
    if dims is None:
        return struct.pack("<Iii", magic, 0, -1)
    size = 4 * int(np.prod(dims))
    return (struct.pack("<Iii", magic, 0, len(dims))
            + b"".join(struct.pack("<q", dim) for dim in dims)
            + struct.pack("<iii", 1, 0, 0) + b"\0" * size)


@pytest.mark.parametrize("content,reason", [
    (_ndarray_file(_array_record(V3_ARRAY, [])),
     "mx.nd.load cannot read it (Check failed: Imperative: :Get()->is_np_shape(): ndarray was "
     "saved in np shape semantics"),  # MXNet's own message, not its C++ traceback's first line
    (_ndarray_file(_array_record(V2_ARRAY, [])),
     "mx.nd.load cannot read it (unknown storage type: -1)"),  # from MXNet's Python side
    (_ndarray_file(_array_record(V3_ARRAY, None)), "mx.nd.load cannot read it ("),
    (_ndarray_file(_array_record(V3_ARRAY, [2]), names_count=2 ** 64 - 1),
     "it has 1 arrays but 18446744073709551615 names"),
], ids=["scalar-in-np-shape-semantics", "shapeless-legacy-record", "unknown-shape",
        "huge-name-count"])
def test_an_ndarray_file_mxnet_cannot_load_is_refused_with_mxnets_reason(v2_copy, content,
                                                                          reason):
    params_path = os.path.join(v2_copy, "qfunc.params")
    with open(params_path, "wb") as out:
        out.write(content)
    recompute_manifest(v2_copy)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy).params("qfunc")
    prefix = "checkpoint file %s is not a valid NDArray file: " % params_path
    assert str(error.value).startswith(prefix + reason)
    assert "Traceback" not in str(error.value)


@pytest.mark.parametrize("missing", ["counters", "np_random", "strategy", "env", "eval_env"])
def test_a_training_state_lacking_a_part_is_refused_naming_it(v2_copy, missing):
    state_path = os.path.join(v2_copy, "training_state.json")
    with open(state_path) as handle:
        content = json.load(handle)
    del content[missing]
    _replace_training_state(v2_copy, content)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy).training_state()
    assert str(error.value) == "the training state %s has no %r" % (state_path, missing)


def test_a_replay_memory_lacking_an_array_is_refused_naming_the_file(v2_copy):
    memory_path = os.path.join(v2_copy, "replay_memory.npz")
    with np.load(memory_path) as data:
        arrays = {key: data[key] for key in data.files if key not in ("top", "rwds")}
    with open(memory_path, "wb") as out:
        np.savez(out, **arrays)
    recompute_manifest(v2_copy)
    with pytest.raises(CheckpointError) as error:
        CheckpointReader(v2_copy).memory_arrays()
    text = str(error.value)
    assert text.startswith("the replay memory %s lacks " % memory_path)
    assert sorted(text[len("the replay memory %s lacks " % memory_path):].split(", ")) == [
        "rwds", "top"]


def test_restoring_keeps_this_runs_gradient_clips_and_logs_the_change(tmp_path):
    algo = build(**dict(V2.SETTINGS, qfunc_grad_clip=0.5, policy_grad_clip=0.25))
    messages = []
    checkpoint.restore(algo, V2_CHECKPOINT, log=messages.append)  # saved unclipped
    assert algo.qfunc.updater.optimizer.clip_gradient == 0.5
    assert algo.policy.updater.optimizer.clip_gradient == 0.25
    assert any("qfunc_grad_clip is 0.5 (it was None when saved)" in m
               and "policy_grad_clip is 0.25 (it was None when saved)" in m
               for m in messages), messages
    # and the other way: a clipped checkpoint restored into an unclipped run
    path = str(tmp_path / "clipped")
    algo.save(path)
    unclipped = V2.build_algo()
    unclipped.restore(path)
    assert unclipped.qfunc.updater.optimizer.clip_gradient is None
    assert unclipped.policy.updater.optimizer.clip_gradient is None


def _with_scheduler(algo):
    scheduler = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=algo.qfunc_lr)
    algo.qfunc.updater.optimizer.lr_scheduler = scheduler
    return scheduler


def test_restoring_keeps_this_runs_learning_rate_scheduler(tmp_path):
    """A scheduler is no plain data: not saved, and this run's drives the learning rate
    (set_learning_rate, which MXNet refuses under a scheduler, is not called)."""
    source = V2.build_algo()
    _with_scheduler(source)
    path = str(tmp_path / "scheduled")
    source.save(path)
    algo = V2.build_algo()
    scheduler = _with_scheduler(algo)
    algo.restore(path)
    assert algo.qfunc.updater.optimizer.lr_scheduler is scheduler
    assert algo.qfunc.updater.optimizer.learning_rate == algo.qfunc_lr


def test_a_checkpoint_saved_without_a_scheduler_keeps_this_runs_scheduler(tmp_path):
    """An unscheduled optimiser's ``lr_scheduler`` is None, plain data that the checkpoint
    records; restored, it would stop this run's schedule."""
    path = str(tmp_path / "unscheduled")
    V2.build_algo().save(path)
    with open(os.path.join(path, "qfunc.optimizer.json")) as handle:
        assert '"lr_scheduler": null' in handle.read()
    for saved in (path, V2_CHECKPOINT):
        algo = V2.build_algo()
        scheduler = _with_scheduler(algo)
        algo.restore(saved)
        assert algo.qfunc.updater.optimizer.lr_scheduler is scheduler, saved


def test_a_long_malformation_error_is_quoted_cut_to_300_characters(v2_copy, monkeypatch):
    from ddpg.checkpoint import restoring

    def read_and_check(*args, **kwargs):
        raise ValueError("x" * 299 + "yz" + "w" * 100)

    monkeypatch.setattr(restoring, "_read_and_check", read_and_check)
    algo = V2.build_algo()
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    assert str(error.value) == "the checkpoint %s is malformed (ValueError: %s)" % (
        v2_copy, "x" * 299 + "y")


def _edit_json_file(path, filename, edit):
    """Call ``edit`` on the content of the checkpoint's JSON file ``filename`` and write it
    back, the manifest recomputed (as anyone who edited the file could)."""
    json_path = os.path.join(path, filename)
    with open(json_path) as handle:
        content = json.load(handle)
    edit(content)
    with open(json_path, "w") as out:
        json.dump(content, out)
    recompute_manifest(path)


def _edit_training_state(path, edit):
    _edit_json_file(path, "training_state.json", edit)


def test_a_saved_observation_of_another_size_is_refused(v2_copy):
    _edit_training_state(v2_copy, lambda state: state["counters"].update(obs=[0.5] * 5))
    algo = V2.build_algo()
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    text = str(error.value)
    assert v2_copy in text
    assert text.endswith("holds a current observation of 5 values; this environment has 4")
    assert algo.memory is None and algo.epoch == 0


def test_malformed_update_statistics_are_refused_naming_the_checkpoint(v2_copy):
    _edit_training_state(v2_copy, lambda state: state["update_stats"].update(n_updates="many"))
    algo = V2.build_algo()
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    text = str(error.value)
    assert v2_copy in text and "has malformed update statistics" in text and "many" in text
    assert algo.memory is None and algo.epoch == 0


def test_an_optimiser_setting_of_another_type_is_refused_naming_it(v2_copy):
    _edit_json_file(v2_copy, "qfunc.optimizer.json",
                    lambda saved: saved["attributes"].update({"epsilon": "1e-8"}))
    algo = V2.build_algo()
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    assert str(error.value) == ("the qfunc optimiser state of the checkpoint %s cannot be "
                                "used: it sets 'epsilon' to a str; this optimiser's is a float"
                                % v2_copy)


class StatelessStrategy(object):
    """A user's strategy without checkpoint hooks or an exploration state."""

    def get_action(self, obs, policy):
        return policy.get_action(obs)

    def reset(self):
        pass


def test_a_strategy_state_this_runs_strategy_cannot_take_is_refused(tmp_path):
    from ddpg.strategies import GaussianStrategy

    algo = build("point", n_epochs=1, epoch_length=35)
    algo.strategy = GaussianStrategy(algo.env.spec, sigma=0.2, sigma_min=0.1, decay_steps=50)
    path = str(tmp_path / "gaussian")
    algo.save(path)  # the strategy's own hook saved its schedule
    restored = build("point", n_epochs=1, epoch_length=35)
    restored.strategy = StatelessStrategy()
    with pytest.raises(CheckpointError) as error:
        restored.restore(path)
    assert str(error.value) == ("the checkpoint %s has an exploration strategy state; "
                                "StatelessStrategy has no state to put it in (no "
                                "load_state_dict())" % path)


def test_an_optimiser_state_of_another_dtype_is_refused(v2_copy):
    """A float64 state would pass the shape checks and then fail MXNet's update operator in
    the middle of the resumed run."""
    states_path = os.path.join(v2_copy, "qfunc.optimizer.nd")
    arrays = mx.nd.load(states_path)
    mx.nd.save(states_path, {key: array.astype(np.float64) for key, array in arrays.items()})
    recompute_manifest(v2_copy)
    algo = V2.build_algo()
    before = all_params(algo)
    with pytest.raises(CheckpointError) as error:
        algo.restore(v2_copy)
    assert str(error.value) == (
        "the qfunc optimiser state of the checkpoint %s cannot be used: it has state of dtype "
        "float64 at index 0; the parameters and their optimiser states are float32" % v2_copy)
    assert_same_tree(before, all_params(algo))  # a refused restore changes nothing


@pytest.mark.parametrize("damage, message", [
    (lambda saved: saved.pop("states"), "the optimiser state lacks its optimizer, states or "
                                        "attributes"),
    (lambda saved: saved["attributes"].update({"momentum_of_another_kind": 0.5}),
     "it sets 'momentum_of_another_kind', which the Adam optimiser does not have"),
])
def test_an_optimiser_state_this_optimiser_cannot_take_is_refused_saying_why(v2_copy, damage,
                                                                             message):
    _edit_json_file(v2_copy, "policy.optimizer.json", damage)
    with pytest.raises(CheckpointError) as error:
        V2.build_algo().restore(v2_copy)
    assert str(error.value) == ("the policy optimiser state of the checkpoint %s cannot be "
                                "used: %s" % (v2_copy, message))


def test_training_counters_of_another_kind_are_refused_naming_the_checkpoint(v2_copy):
    _edit_training_state(v2_copy, lambda state: state["counters"].update(
        {"not_a_counter": 1}))
    with pytest.raises(CheckpointError) as error:
        V2.build_algo().restore(v2_copy)
    assert str(error.value) == "the checkpoint %s has malformed training counters" % v2_copy


class WideStateStrategy(StatelessStrategy):
    """A strategy with an exploration state of another shape than OU's over this action."""

    state = np.zeros(3)


def test_an_exploration_state_of_another_shape_is_refused_naming_both_shapes(tmp_path):
    algo = build("point", n_epochs=1, epoch_length=35)  # OUStrategy over 2 action values
    path = str(tmp_path / "ou")
    algo.save(path)
    restored = build("point", n_epochs=1, epoch_length=35)
    restored.strategy = WideStateStrategy()
    with pytest.raises(CheckpointError) as error:
        restored.restore(path)
    assert str(error.value) == ("the checkpoint %s has an exploration state of shape (2,); "
                                "WideStateStrategy has (3,)" % path)


def test_a_version_1_optimiser_state_that_is_not_a_dict_is_refused():
    from ddpg.checkpoint import legacy

    updater = V2.build_algo().qfunc.updater
    with pytest.raises(ValueError) as error:
        legacy.optimizer_state(updater, [1, 2], [(2, 2)])
    assert str(error.value) == "its states are not a dict"


def test_an_environment_state_that_is_not_a_dict_is_refused_naming_it():
    from ddpg.checkpoint.env_state import prepare_env_restore

    with pytest.raises(ValueError) as error:
        prepare_env_restore(PointEnv(obs_dim=2, act_dim=2), ["not", "a", "dict"],
                            what="evaluation environment")
    assert str(error.value) == "the checkpoint's evaluation environment state is not a dict"


def test_an_algorithm_without_update_statistics_restores(v2_copy):
    """A subclass may drop the running update statistics; the saved ones are then ignored."""
    algo = V2.build_algo()
    algo.update_stats = None
    algo.restore(v2_copy)
    assert algo.update_stats is None
    assert algo.epoch == checkpoint.read_manifest(v2_copy)["progress"]["epoch"]


def test_an_ndarray_file_declaring_as_many_arrays_as_bytes_is_read_on_to_its_end():
    """The count is only refused outright when it exceeds the file's size; one equal to it
    fails where the records run out."""
    from ddpg.checkpoint import ndarray_file

    data = struct.pack("<QQQ", 0x112, 0, 0)
    data = struct.pack("<QQQ", 0x112, 0, len(data))
    with pytest.raises(ValueError) as error:
        ndarray_file.check_structure(data)
    assert str(error.value) == "it ends after 24 bytes, in the middle of a record"
    with pytest.raises(ValueError) as error:
        ndarray_file.check_structure(struct.pack("<QQQ", 0x112, 0, 25))
    assert str(error.value) == "it declares 25 arrays in 24 bytes"
