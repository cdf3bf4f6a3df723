"""The manifest's env_description (ddpg.checkpoint.env_description): what DDPG.save records of
the environment so that a checkpoint's policy can be exported (and a gymnasium or cart-pole
environment rebuilt) without the training script's arguments, checked field by field for the
library's environments, an rllab-style one and wrappers; its reading refuses malformed
records with a message naming the problem; older checkpoints, which lack it, read as None."""
import json
import os

import numpy as np
import pytest

from ddpg import checkpoint
from ddpg.checkpoint.env_description import (SECTION, bounds_from_json, describe_env,
                                             read_description)
from ddpg.envs import CartpoleEnv, GymEnv, normalize
from ddpg.errors import CheckpointError
from ddpg.experiment.policy_source import checkpoint_run_args

from ckpt_helpers import build
from helpers import PointEnv

V2_CHECKPOINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                             "v2_cartpole")


class InfiniteBox(object):
    def __init__(self, low, high):
        self.low, self.high = np.array(low, float), np.array(high, float)
        self.shape = self.low.shape
        self.flat_dim = self.low.size


class Wrapper(object):
    """Some wrapper of the user's (an environment with a ``wrapped_env``)."""

    def __init__(self, env):
        self.wrapped_env = env
        self.observation_space, self.action_space = env.observation_space, env.action_space


def point_env():
    env = PointEnv(obs_dim=3, act_dim=2)
    env.observation_space = InfiniteBox([-np.inf, 0.0, -1.5], [np.inf, np.nan, 2.0])
    env.action_space = InfiniteBox([-3.0, -0.5], [0.5, 0.25])
    return env


def test_a_normalised_cartpole_is_described_with_its_settings():
    env = normalize(CartpoleEnv(reset_quirk=False), scale_reward=0.5, normalize_obs=True,
                    normalize_reward=True, obs_alpha=0.01, reward_alpha=0.02)
    description = describe_env(env)
    bound = CartpoleEnv.OBS_BOUND
    assert description == {
        "env": {"kind": "cartpole", "reset_quirk": False,
                "class": "ddpg.envs.cartpole.CartpoleEnv"},
        "normalize": {"scale_reward": 0.5, "normalize_obs": True, "normalize_reward": True,
                      "obs_alpha": 0.01, "reward_alpha": 0.02},
        "wrappers": [],
        "observation_space": {"shape": [4], "low": [-bound] * 4, "high": [bound] * 4},
        "action_space": {"shape": [1], "low": [-CartpoleEnv.MAX_FORCE],
                         "high": [CartpoleEnv.MAX_FORCE]}}
    assert describe_env(CartpoleEnv())["env"]["reset_quirk"] is True
    assert describe_env(CartpoleEnv())["normalize"] is None
    json.dumps(description, allow_nan=False)  # strict JSON


def test_a_gymnasium_environment_is_described_by_its_id():
    description = describe_env(normalize(GymEnv("Pendulum-v1", g=9.5)))
    assert description["env"] == {
        "kind": "gym", "id": "Pendulum-v1", "library": "gymnasium",
        "make_kwargs": {"g": 9.5},
        "class": "gymnasium.envs.classic_control.pendulum.PendulumEnv"}
    assert description["normalize"] == {"scale_reward": 1.0, "normalize_obs": False,
                                        "normalize_reward": False, "obs_alpha": 0.001,
                                        "reward_alpha": 0.001}
    # the bounds normalize() rescales onto: the wrapped environment's, not [-1, 1]
    assert description["action_space"] == {"shape": [1], "low": [-2.0], "high": [2.0]}
    assert description["observation_space"] == {"shape": [3], "low": [-1.0, -1.0, -8.0],
                                                "high": [1.0, 1.0, 8.0]}


def test_a_goal_conditioned_environment_is_described_with_its_input_layout():
    from goal_envs import point_goal_env
    description = describe_env(normalize(GymEnv(point_goal_env())))
    # the networks' flat vector: 2 values of the observation, then 2 of the desired goal
    assert description["env"]["goal_layout"] == {"observation": 2, "desired_goal": 2}
    assert description["observation_space"]["shape"] == [4]
    assert "goal_layout" not in describe_env(GymEnv("Pendulum-v1"))["env"]
    json.dumps(description, allow_nan=False)


def test_an_rllab_style_environment_is_described_by_its_spaces_and_wrappers_by_class():
    env = point_env()
    description = describe_env(Wrapper(normalize(env)))
    assert description["env"] == {"kind": "other", "class": "helpers.PointEnv"}
    # normalize() inside another wrapper is not the outside's normalisation: only a wrapper
    assert description["normalize"] is None
    assert description["wrappers"] == ["test_env_description.Wrapper",
                                       "ddpg.envs.normalized_env.NormalizedEnv"]
    assert description["observation_space"] == {"shape": [3], "low": ["-inf", 0.0, -1.5],
                                                "high": ["inf", "nan", 2.0]}
    json.dumps(description, allow_nan=False)
    inside = describe_env(normalize(Wrapper(env)))
    assert inside["normalize"]["normalize_obs"] is False
    assert inside["wrappers"] == ["test_env_description.Wrapper"]
    assert inside["action_space"] == {"shape": [2], "low": [-3.0, -0.5], "high": [0.5, 0.25]}


def test_bounds_come_back_from_json():
    values = bounds_from_json([1.5, "inf", "-inf", "nan", -2], "bounds")
    assert values.dtype == np.float64
    np.testing.assert_array_equal(values, [1.5, np.inf, -np.inf, np.nan, -2.0])
    with pytest.raises(CheckpointError) as error:
        bounds_from_json("inf", "action bounds")
    assert str(error.value) == "the checkpoint's action bounds is not a list"
    for bad in (["infinity"], [None], [[1.0]]):
        with pytest.raises(CheckpointError) as error:
            bounds_from_json(bad, "action bounds")
        assert str(error.value) == ("the checkpoint's action bounds holds something that is "
                                    "not a bound: %r" % (bad,))


def test_the_manifest_records_the_description_and_older_ones_read_as_none(tmp_path):
    algo = build("cartpole", hidden=4, memory_size=200)
    path = str(tmp_path / "ckpt")
    algo.save(path)
    manifest = checkpoint.read_manifest(path)
    assert manifest[SECTION] == describe_env(algo.env)
    assert read_description(manifest) == manifest[SECTION]
    assert read_description(checkpoint.read_manifest(V2_CHECKPOINT)) is None


GOOD = describe_env(normalize(CartpoleEnv()))


@pytest.mark.parametrize("change, problem", [
    (lambda d: ["a list"], "is not a dict"),
    (lambda d: dict(d, env=None), "has no env of a known kind"),
    (lambda d: dict(d, env={"kind": "mujoco"}), "has no env of a known kind"),
    (lambda d: dict(d, normalize=[1.0]), "has normalize settings that are not a dict"),
    (lambda d: dict(d, wrappers=None), "has no list of wrappers"),
    (lambda d: {k: v for k, v in d.items() if k != "wrappers"}, "has no list of wrappers"),
    (lambda d: dict(d, action_space=None), "lacks the spaces"),
    (lambda d: {k: v for k, v in d.items() if k != "observation_space"}, "lacks the spaces"),
])
def test_a_malformed_description_is_refused_saying_what_is_wrong(change, problem):
    with pytest.raises(CheckpointError) as error:
        read_description({SECTION: change(dict(GOOD))})
    assert str(error.value) == "the manifest's env_description " + problem
    for kind in ("gym", "cartpole", "other"):
        valid = dict(GOOD, env={"kind": kind})
        assert read_description({SECTION: valid}) == valid
    assert read_description({SECTION: dict(GOOD, normalize=None)})["normalize"] is None


# ---------------------------------------------------------------------------------------------
# run_ddpg.py's arguments from the description (examples/evaluate.py rebuilds the environment)


def manifest_of(description, **hyperparameters):
    return {SECTION: description, "metadata": {},
            "hyperparameters": dict({"max_path_length": 77, "seed": 9}, **hyperparameters)}


def test_the_run_arguments_of_a_described_gymnasium_or_cartpole_environment():
    args = checkpoint_run_args(manifest_of(describe_env(normalize(
        GymEnv("Pendulum-v1"), scale_reward=0.1, normalize_obs=True))))
    assert (args.env, args.scale_reward, args.normalize_obs) == ("Pendulum-v1", 0.1, True)
    assert (args.max_path_length, args.seed) == (77, 9)
    args = checkpoint_run_args(manifest_of(describe_env(normalize(CartpoleEnv(
        reset_quirk=False)))))
    assert (args.env, args.no_reset_quirk, args.normalize_obs) == ("cartpole", True, False)
    assert checkpoint_run_args(manifest_of(describe_env(normalize(CartpoleEnv()))))\
        .no_reset_quirk is False
    # an environment with actions in [-1, 1] needs no normalize() to be rebuilt as one
    assert checkpoint_run_args(manifest_of(describe_env(GymEnv("MountainCarContinuous-v0"))))\
        .env == "MountainCarContinuous-v0"
    # --env wins, and the description's normalize() settings still apply
    args = checkpoint_run_args(manifest_of(describe_env(normalize(point_env(),
                                                                  normalize_obs=True))),
                               env_override="Pendulum-v1")
    assert (args.env, args.normalize_obs) == ("Pendulum-v1", True)


@pytest.mark.parametrize("env, message", [
    (lambda: normalize(point_env()),
     "the checkpoint's environment (helpers.PointEnv) is neither a gymnasium id nor the "
     "cart-pole, so it cannot be rebuilt from the checkpoint: pass --env"),
    (lambda: Wrapper(normalize(GymEnv("Pendulum-v1"))),
     "the checkpoint's environment is wrapped in test_env_description.Wrapper, "
     "ddpg.envs.normalized_env.NormalizedEnv, which cannot be rebuilt from the checkpoint: "
     "pass --env"),
    (lambda: GymEnv("Pendulum-v1"),
     "the checkpoint's environment Pendulum-v1 was not wrapped in normalize(), which a "
     "rebuilt environment always is, and its actions are not in [-1, 1]: pass --env"),
])
def test_what_cannot_be_rebuilt_is_refused_naming_env(env, message):
    with pytest.raises(CheckpointError) as error:
        checkpoint_run_args(manifest_of(describe_env(env())))
    assert str(error.value) == message


def test_an_older_checkpoint_without_the_description_still_needs_env():
    manifest = checkpoint.read_manifest(V2_CHECKPOINT)
    with pytest.raises(CheckpointError) as error:
        checkpoint_run_args(manifest)
    assert str(error.value) == (
        "the checkpoint was not written by run_ddpg.py and does not describe its environment "
        "(it was saved by an older ddpg), so it does not say which environment it was "
        "trained on: pass --env")
    args = checkpoint_run_args(manifest, env_override="cartpole")
    assert (args.env, args.max_path_length, args.seed) == (
        "cartpole", manifest["hyperparameters"]["max_path_length"],
        manifest["hyperparameters"]["seed"])


# ---------------------------------------------------------------------------------------------
# the export's path from the description alone (no environment built)


class FakeReader(object):
    def __init__(self, env_state):
        self.env_state = env_state

    def training_state(self):
        return {"env": self.env_state}


def test_the_path_from_a_description_needs_only_the_spaces_and_the_statistics():
    from ddpg.experiment.policy_source import path_from_description
    stats = {"obs_mean": np.arange(3.0), "obs_var": np.ones(3)}
    description = describe_env(normalize(point_env(), normalize_obs=True))
    name, got, low, high = path_from_description(
        FakeReader({"kind": "normalize", "stats": stats}), description, 2)
    assert (name, got) == ("helpers.PointEnv", stats)
    assert low.tolist() == [-3.0, -0.5] and high.tolist() == [0.5, 0.25]
    # not normalised: the tanh output is the action; statistics are not read
    name, got, low, high = path_from_description(None, describe_env(point_env()), 2)
    assert got is None and low.tolist() == [-1.0, -1.0] and high.tolist() == [1.0, 1.0]
    assert path_from_description(None, describe_env(normalize(CartpoleEnv())), 1)[0] == \
        "cartpole"
    assert path_from_description(None, describe_env(normalize(GymEnv("Pendulum-v1"))), 1)[0] \
        == "Pendulum-v1"


@pytest.mark.parametrize("env, env_state, act_dim, message", [
    (lambda: Wrapper(normalize(point_env())), None, 2,
     "the checkpoint's environment is wrapped in test_env_description.Wrapper, "
     "ddpg.envs.normalized_env.NormalizedEnv; the export reproduces normalize() only"),
    (lambda: normalize(point_env(), normalize_obs=True), {"kind": "custom"}, 2,
     "the checkpoint normalised observations but its training state holds no normalize() "
     "statistics"),
    (lambda: normalize(point_env(), normalize_obs=True), {"kind": "normalize", "stats": [1]}, 2,
     "the checkpoint normalised observations but its training state holds no normalize() "
     "statistics"),
    (lambda: normalize(point_env()), None, 3,
     "the checkpoint's action bounds [-3.0, -0.5], [0.5, 0.25] are not 3 finite values"),
])
def test_a_path_that_cannot_be_exported_is_refused(env, env_state, act_dim, message):
    from ddpg.experiment.policy_source import path_from_description
    with pytest.raises(CheckpointError) as error:
        path_from_description(FakeReader(env_state), describe_env(env()), act_dim)
    assert str(error.value) == message


def test_infinite_action_bounds_cannot_be_exported():
    from ddpg.experiment.policy_source import path_from_description
    description = describe_env(normalize(point_env()))
    description["action_space"]["high"] = ["inf", 0.25]
    with pytest.raises(CheckpointError, match=r"^the checkpoint's action bounds \[-3\.0, "
                                              r"-0\.5\], \[inf, 0\.25\] are not 2 finite"):
        path_from_description(None, description, 2)


def test_the_normalisation_constants_are_normalizes():
    from ddpg.experiment.policy_source import normalization_constants
    mean, divisor = normalization_constants({"obs_mean": [1.0, -2.0], "obs_var": [4.0, 0.0]},
                                            2)
    assert mean.dtype == divisor.dtype == np.float32
    assert mean.tolist() == [[1.0, -2.0]]
    np.testing.assert_array_equal(divisor, np.float32([[2.0 + 1e-8, 1e-8]]))
    with pytest.raises(CheckpointError) as error:
        normalization_constants({"obs_mean": [1.0], "obs_var": [1.0]}, 2)
    assert str(error.value).startswith("the checkpoint's observation statistics do not fit 2 "
                                       "observation values (")
    with pytest.raises(CheckpointError, match="do not fit 2 observation values"):
        normalization_constants({"obs_mean": [1.0, 2.0]}, 2)
