"""Bad input and faults during training: each gets a clear error (or, if asked, is skipped)."""
import os

import gymnasium
import numpy as np
import pytest

from ddpg import checkpoint, logger
from ddpg.envs import Box, EnvSpec, GymEnv, Step
from ddpg.errors import DivergenceError, EnvError, NonFiniteError
from ddpg.strategies import OUStrategy

from helpers import PointEnv, build_algorithm

SPACES = gymnasium.spaces


pytestmark = pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py


def build(env, spec_env=None, **kwargs):
    settings = dict(batch_size=8, n_epochs=2, epoch_length=40, memory_start_size=10,
                    memory_size=1000, max_path_length=1000, eval_samples=5, seed=1)
    settings.update(kwargs)
    return build_algorithm(env=env, spec_env=spec_env, **settings)


# ---------------------------------------------------------------------------------------------
# spaces DDPG cannot use


class SpacesGymEnv(gymnasium.Env):
    """A gymnasium environment with the given spaces."""

    def __init__(self, observation_space=None, action_space=None):
        self.observation_space = observation_space or SPACES.Box(-1, 1, (2,))
        self.action_space = action_space or SPACES.Box(-1, 1, (2,), dtype=np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, False, {}


class SpacesEnv(object):
    """An rllab-style environment with the given spaces (gymnasium's space objects)."""

    def __init__(self, observation_space, action_space):
        self.observation_space = observation_space
        self.action_space = action_space
        self.spec = EnvSpec(observation_space, action_space)

    def reset(self):
        return np.zeros(2)

    def step(self, action):
        return Step(np.zeros(2), 0.0, False, {})


BAD_ACTION_SPACES = [
    (SPACES.Discrete(3), "Discrete"),
    (SPACES.MultiDiscrete([2, 3]), "MultiDiscrete"),
    (SPACES.MultiBinary(2), "MultiBinary"),
    (SPACES.Dict({"a": SPACES.Box(-1, 1, (2,))}), "Dict"),
    (SPACES.Tuple((SPACES.Box(-1, 1, (1,)), SPACES.Box(-1, 1, (1,)))), "Tuple"),
    (SPACES.Box(-np.inf, np.inf, (2,), dtype=np.float32), "finite"),
    (SPACES.Box(0.0, np.inf, (2,), dtype=np.float32), "finite"),
]
BAD_OBSERVATION_SPACES = [
    (SPACES.Discrete(3), "Discrete"),
    (SPACES.MultiDiscrete([2, 3]), "MultiDiscrete"),
    (SPACES.Dict({"a": SPACES.Box(-1, 1, (2,))}), "Dict"),
    (SPACES.Tuple((SPACES.Box(-1, 1, (1,)), SPACES.Discrete(2))), "Tuple"),
]
IDS = lambda cases: [message + str(i) for i, (_, message) in enumerate(cases)]  # noqa: E731


@pytest.mark.parametrize("space,message", BAD_ACTION_SPACES, ids=IDS(BAD_ACTION_SPACES))
def test_unusable_gymnasium_action_space_is_rejected(space, message):
    with pytest.raises(ValueError, match=message):
        GymEnv(SpacesGymEnv(action_space=space))


@pytest.mark.parametrize("space,message", BAD_ACTION_SPACES, ids=IDS(BAD_ACTION_SPACES))
def test_unusable_action_space_is_rejected_by_ddpg(space, message):
    env = SpacesEnv(Box(-1, 1, (2,)), space)
    with pytest.raises(ValueError, match=message):
        build(env, spec_env=PointEnv(2, 2))


@pytest.mark.parametrize("space,message", BAD_OBSERVATION_SPACES,
                         ids=IDS(BAD_OBSERVATION_SPACES))
def test_non_flat_gymnasium_observation_space_is_rejected(space, message):
    with pytest.raises(ValueError, match="observation space.*" + message):
        GymEnv(SpacesGymEnv(observation_space=space))


@pytest.mark.parametrize("space,message", BAD_OBSERVATION_SPACES,
                         ids=IDS(BAD_OBSERVATION_SPACES))
def test_non_flat_observation_space_is_rejected_by_ddpg(space, message):
    env = SpacesEnv(space, Box(-1, 1, (2,)))
    with pytest.raises(ValueError, match="observation space.*" + message):
        build(env, spec_env=PointEnv(2, 2))


def test_a_multi_dimensional_box_observation_is_flattened():
    """A Box of shape (2, 3) is not 'non-flat': DDPG flattens it."""
    env = GymEnv(SpacesGymEnv(observation_space=SPACES.Box(-1, 1, (2, 3))))
    algo = build(env, n_epochs=1, epoch_length=12)
    algo.train()
    assert algo.memory.obss.shape[1] == 6


# ---------------------------------------------------------------------------------------------
# NaN and inf from the environment


class FaultyEnv(PointEnv):
    """PointEnv that misbehaves at its ``at``-th step (counted over the whole run)."""

    def __init__(self, fault, at=25, episode_length=10, **kwargs):
        super(FaultyEnv, self).__init__(obs_dim=2, act_dim=2, **kwargs)
        self.fault, self.at, self.episode_length = fault, at, episode_length
        self.n_steps = self.t = 0

    def reset(self):
        self.t = 0
        obs = super(FaultyEnv, self).reset()
        if self.fault == "nan_reset" and self.n_steps >= self.at:
            obs[0] = np.nan
        if self.fault == "raise_reset" and self.n_steps >= self.at:
            raise RuntimeError("simulator lost")
        return obs

    def step(self, action):
        self.n_steps += 1
        self.t += 1
        obs, reward, _, info = super(FaultyEnv, self).step(action)
        done = self.t >= self.episode_length
        if self.n_steps == self.at or (self.fault == "huge_reward" and self.n_steps > 10):
            if self.fault == "nan_obs":
                obs[1] = np.nan
            elif self.fault == "inf_obs":
                obs[0] = -np.inf
            elif self.fault == "nan_reward":
                reward = float("nan")
            elif self.fault == "inf_reward":
                reward = float("inf")
            elif self.fault == "huge_reward":
                reward = 3e38
            elif self.fault == "raise_step":
                raise RuntimeError("simulator exploded")
        return Step(obs, reward, done, info)

    def clone(self):
        return PointEnv(obs_dim=2, act_dim=2)


@pytest.mark.parametrize("fault,part", [("nan_obs", "observation"), ("inf_obs", "observation"),
                                        ("nan_reward", "reward"), ("inf_reward", "reward")])
def test_nonfinite_step_names_the_step_and_episode(fault, part):
    algo = build(FaultyEnv(fault, at=25, episode_length=10))
    with pytest.raises(NonFiniteError) as info:
        algo.train()
    message = str(info.value)
    # the 25th step of the run is the 5th of the third episode (index 2), in epoch 0
    assert "non-finite %s at step 5 of episode 2 (epoch 0, environment step 25" % part \
        in message
    assert "skip_nonfinite=True" in message
    if part == "reward":  # the message shows the bad value itself
        assert "reward %r)" % (float(fault[:3]),) in message
    assert algo.memory.size == 24 and np.all(np.isfinite(algo.memory.obss[:24]))


@pytest.mark.parametrize("fault,ends_episode", [("nan_obs", True), ("inf_obs", True),
                                                ("nan_reward", False), ("inf_reward", False)])
def test_skip_nonfinite_skips_counts_and_logs(tmp_path, fault, ends_episode):
    path = str(tmp_path / "progress.csv")
    logger.add_tabular_output(path)
    env = FaultyEnv(fault, at=25, episode_length=10)
    algo = build(env, skip_nonfinite=True)
    algo.train()
    logger.remove_tabular_output(path)
    assert algo.n_skipped_nonfinite == 1
    assert algo.memory.size == 79 and algo.total_env_steps == 80
    size = algo.memory.size
    for array in (algo.memory.obss, algo.memory.rwds, algo.memory.nxts):
        assert np.all(np.isfinite(array[:size]))
    # episodes of 10 steps: the 8th (index 7) ends at step 80, unless a bad observation
    # cut the third one short at step 25, so that the 9th runs at step 80
    assert algo.episode == (8 if ends_episode else 7)
    assert all(np.isfinite(algo.strategy_path_returns))
    with open(path) as handle:
        rows = [line.strip().split(",") for line in handle]
    column = rows[0].index("SkippedNonFinite")
    assert [row[column] for row in rows[1:]] == ["1", "0"]


def test_nonfinite_reset_observation_is_an_error():
    algo = build(FaultyEnv("nan_reset", at=10, episode_length=10), skip_nonfinite=True)
    with pytest.raises(NonFiniteError, match="reset.*episode 1 "):
        algo.train()


# ---------------------------------------------------------------------------------------------
# a custom strategy's actions


class WrongShapeStrategy(OUStrategy):
    def get_action(self, obs, policy):
        return np.zeros(3)


class NanStrategy(OUStrategy):
    def get_action(self, obs, policy):
        return np.array([np.nan, 0.0])


def test_strategy_action_of_the_wrong_shape_is_named():
    env = PointEnv(obs_dim=2, act_dim=2)
    algo = build(env)
    algo.strategy = WrongShapeStrategy(env.spec)
    with pytest.raises(ValueError, match=r"WrongShapeStrategy.get_action returned an action of "
                                         r"shape \(3,\) at step 1 of episode 0.*needs 2 values"):
        algo.train()
    assert env.actions_seen == []


def test_nonfinite_strategy_action_is_an_error():
    env = PointEnv(obs_dim=2, act_dim=2)
    algo = build(env)
    algo.strategy = NanStrategy(env.spec)
    with pytest.raises(NonFiniteError, match="NanStrategy.*non-finite action"):
        algo.train()
    assert env.actions_seen == []


# ---------------------------------------------------------------------------------------------
# hyperparameters


@pytest.mark.parametrize("batch_size,memory_start_size,memory_size,name", [
    (33, 32, 1000, "memory_start_size"),
    (64, 10, 1000, "memory_start_size"),
    (64, 100, 50, "memory_size"),
])
def test_batch_larger_than_the_warm_up_or_the_memory_is_rejected(batch_size,
                                                                 memory_start_size,
                                                                 memory_size, name):
    with pytest.raises(ValueError, match="batch_size .* must not exceed %s" % name):
        build(PointEnv(2, 2), batch_size=batch_size, memory_start_size=memory_start_size,
              memory_size=memory_size)


@pytest.mark.parametrize("memory_start_size", [0, 8, 9, 1000])
def test_warm_up_at_least_one_batch_or_zero_is_accepted(memory_start_size):
    algo = build(PointEnv(2, 2), batch_size=8, memory_start_size=memory_start_size)
    assert algo.memory_start_size == memory_start_size


# ---------------------------------------------------------------------------------------------
# an environment that raises


def test_exception_in_step_gets_the_position_and_the_last_checkpoint_stays_valid(tmp_path):
    logger.set_snapshot_dir(str(tmp_path))
    logger.set_snapshot_mode("last")
    algo = build(FaultyEnv("raise_step", at=55, episode_length=10), n_epochs=3)
    with pytest.raises(EnvError) as info:
        algo.train()
    message = str(info.value)
    assert "RuntimeError in step() at step 5 of episode 5 (epoch 1" in message
    assert "simulator exploded" in message
    assert isinstance(info.value.__cause__, RuntimeError)
    assert isinstance(info.value, RuntimeError)
    # the checkpoint of epoch 0 is intact and restores
    manifest = checkpoint.read_manifest(str(tmp_path / "params"))
    assert manifest["progress"]["epoch"] == 1 and manifest["progress"]["total_env_steps"] == 40
    other = build(FaultyEnv("none"), n_epochs=3)
    other.restore(str(tmp_path / "params"))
    assert other.total_env_steps == 40


def test_logger_prefix_is_popped_after_a_failure(capsys):
    algo = build(FaultyEnv("raise_step", at=5))
    with pytest.raises(EnvError):
        algo.train()
    capsys.readouterr()
    logger.set_log_tabular_only(False)
    logger.log("after the failure")
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.endswith(" | after the failure") and "epoch #" not in last


def test_exception_in_reset_gets_the_position():
    algo = build(FaultyEnv("raise_reset", at=10, episode_length=10))
    with pytest.raises(EnvError, match=r"RuntimeError in reset\(\) starting episode 1 "
                                       r"\(epoch 0, after 10 environment steps of the run\): "
                                       r"simulator lost"):
        algo.train()


# ---------------------------------------------------------------------------------------------
# divergence


def test_infinite_q_loss_stops_training(tmp_path):
    logger.set_snapshot_dir(str(tmp_path))
    logger.set_snapshot_mode("all")
    algo = build(FaultyEnv("huge_reward", episode_length=10), n_epochs=3)
    with pytest.raises(DivergenceError, match="training diverged in epoch 0: non-finite "
                                              "statistics: AverageQLoss=inf"):
        algo.train()
    assert os.listdir(str(tmp_path)) == []  # the diverged epoch was not saved


def test_nonfinite_parameter_stops_training():
    algo = build(PointEnv(2, 2), memory_start_size=1000)  # no updates: parameters stay
    weight = algo.qfunc_target.arg_dict["qfunc_fc2_weight"]
    values = weight.asnumpy()
    values[0, 0] = np.nan
    weight[:] = values
    with pytest.raises(DivergenceError, match="non-finite parameters: "
                                              "qfunc_target.qfunc_fc2_weight"):
        algo.train()
    assert algo.epoch == 0


def test_errors_subclass_the_standard_exceptions():
    assert issubclass(NonFiniteError, ValueError)
    assert issubclass(DivergenceError, FloatingPointError)
    assert issubclass(EnvError, RuntimeError)
