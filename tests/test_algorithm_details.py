"""Details of the training loop and the rollout helpers that a user's tools can see: the
TensorBoard scalars written as they happen (their tags, steps and values), and the flags and dtypes of :func:`ddpg.utils.rollout_path`'s paths.

Every test builds its own algorithm (no module-scoped fixture), so that a mutation tool that
attributes function calls to the test that made them credits each test with what it checks.
"""
import numpy as np
import pytest

from ddpg import logger, utils
from ddpg.envs import Step

from helpers import PointEnv, build_algorithm


class EndlessPointEnv(PointEnv):
    """PointEnv that never reaches a terminal state (episodes end at max_path_length only),
    keeping every reward it returns, by episode."""

    def __init__(self):
        super(EndlessPointEnv, self).__init__(obs_dim=2, act_dim=2)
        self.episode_rewards = []

    def reset(self):
        self.episode_rewards.append([])
        return super(EndlessPointEnv, self).reset()

    def step(self, action):
        step = super(EndlessPointEnv, self).step(action)
        self.episode_rewards[-1].append(step.reward)
        return step._replace(done=False)


def make_algo(env, **kwargs):
    options = dict(batch_size=4, memory_size=200, memory_start_size=8, n_epochs=1,
                   epoch_length=30, max_path_length=10, eval_samples=10, seed=1)
    options.update(kwargs)
    return build_algorithm(env=env, **options)


def record_updates(algo):
    """Wrap ``algo.do_update`` to keep, for each update, the run's step count when it ran
    and the losses it left in ``update_stats.latest()``."""
    updates = []
    do_update = algo.do_update

    def recorded(itr, batch):
        result = do_update(itr, batch)
        updates.append((algo.total_env_steps, algo.update_stats.latest()))
        return result

    algo.do_update = recorded
    return updates


@pytest.fixture
def tensorboard_run(tmp_path):
    """A one-epoch run on EndlessPointEnv with a TensorBoard output on the global logger:
    ``(scalars read back, the env, the recorded updates)``; ``loss_log_interval`` 3."""
    pytest.importorskip("tensorboardX", reason='pip install "mxnet-ddpg[tensorboard]"')
    pytest.importorskip("tensorboard", reason="the event files are read back with tensorboard")
    import tb_helpers
    env = EndlessPointEnv()
    algo = make_algo(env, loss_log_interval=3)
    updates = record_updates(algo)
    folder = str(tmp_path / "events")
    logger.reset()
    logger.set_log_tabular_only(True)
    logger.add_tensorboard_output(folder)
    try:
        algo.train()
    finally:
        logger.reset()
    return tb_helpers.scalars(folder), env, updates


def test_every_third_updates_losses_are_logged_at_its_env_step(tensorboard_run):
    curves, _, updates = tensorboard_run
    assert len(updates) >= 9
    logged = [updates[i] for i in range(2, len(updates), 3)]  # updates 3, 6, 9, ...
    for tag, name in (("train/QLoss", "QLoss"), ("train/PolicyLoss", "PolicyLoss")):
        assert [step for step, _ in curves[tag]] == [step for step, _ in logged], tag
        np.testing.assert_array_equal(
            [value for _, value in curves[tag]],
            np.float32([stats[name] for _, stats in logged]), err_msg=tag)
    # only the tags of the update statistics, each under train/
    assert sorted(tag for tag in curves if tag.startswith("train/")) == [
        "train/EpisodeLength", "train/EpisodeReturn", "train/PolicyLoss", "train/QLoss"]


def test_each_episode_return_is_logged_at_the_step_it_ended(tensorboard_run):
    curves, env, _ = tensorboard_run
    # 30 steps, episodes cut at 10: they end at steps 10, 20, 30
    assert [step for step, _ in curves["train/EpisodeReturn"]] == [10, 20, 30]
    np.testing.assert_allclose([value for _, value in curves["train/EpisodeReturn"]],
                               [np.sum(rewards) for rewards in env.episode_rewards[:3]],
                               rtol=1e-6)
    assert curves["train/EpisodeLength"] == [(10, 10.0), (20, 10.0), (30, 10.0)]


def test_no_scalars_are_computed_without_a_tensorboard_output(quiet_logger, monkeypatch):
    calls = []
    monkeypatch.setattr(logger, "record_scalar", lambda *args: calls.append(args))
    make_algo(EndlessPointEnv(), loss_log_interval=1).train()
    assert calls == []


# ---------------------------------------------------------------------------------------------
# utils.rollout_path: the end flags and the rewards' dtype


class TimeLimitedEnv(PointEnv):
    """A gym-style time limit: done after ``limit`` steps with ``TimeLimit.truncated`` in the
    info (or, with ``terminal_at``, a true terminal state at that step); float32 rewards."""

    def __init__(self, limit=5, terminal_at=None):
        super(TimeLimitedEnv, self).__init__(obs_dim=2, act_dim=2)
        self.limit, self.terminal_at = limit, terminal_at
        self.steps = 0

    def reset(self):
        self.steps = 0
        return super(TimeLimitedEnv, self).reset()

    def step(self, action):
        step = super(TimeLimitedEnv, self).step(action)
        self.steps += 1
        reward = np.float32(step.reward)
        if self.terminal_at is not None and self.steps == self.terminal_at:
            return Step(step.observation, reward, True, {})
        if self.steps >= self.limit:
            return Step(step.observation, reward, True, {"TimeLimit.truncated": True})
        return Step(step.observation, reward, False, {})


class ZeroAgent(object):
    def get_action(self, obs):
        return np.zeros(2)


def test_a_time_limit_end_is_truncated_not_terminated():
    path = utils.rollout_path(TimeLimitedEnv(limit=5), ZeroAgent())
    assert len(path["rewards"]) == 5
    assert path["truncated"] is True
    assert path["terminated"] is False


def test_a_terminal_state_is_terminated_not_truncated():
    path = utils.rollout_path(TimeLimitedEnv(limit=5, terminal_at=3), ZeroAgent())
    assert len(path["rewards"]) == 3
    assert path["terminated"] is True
    assert path["truncated"] is False


def test_a_max_path_length_cut_is_truncated():
    path = utils.rollout_path(TimeLimitedEnv(limit=50), ZeroAgent(), max_path_length=4)
    assert len(path["rewards"]) == 4
    assert path["truncated"] is True
    assert path["terminated"] is False


def test_rewards_are_float64_whatever_the_env_returns():
    env = TimeLimitedEnv(limit=5)
    path = utils.rollout_path(env, ZeroAgent())
    assert path["rewards"].dtype == np.float64
    # float32 rewards are kept exactly (converted, not recomputed)
    env = TimeLimitedEnv(limit=5)
    env.reset()
    expected = [env.step(np.zeros(2)).reward for _ in range(5)]
    assert [np.float32(value) for value in path["rewards"]] == expected


class PlainTupleEnv(TimeLimitedEnv):
    """An rllab-style environment whose step returns a plain 4-tuple with ``None`` for info."""

    def step(self, action):
        obs, reward, done, _ = super(PlainTupleEnv, self).step(action)
        return obs, reward, done, None


def test_an_end_without_info_is_terminated():
    path = utils.rollout_path(PlainTupleEnv(limit=3), ZeroAgent())
    assert len(path["rewards"]) == 3
    assert path["terminated"] is True and path["truncated"] is False


# utils.sample_paths: whole paths until at least eval_samples steps


@pytest.mark.parametrize("eval_samples,n_paths", [(1, 1), (5, 1), (6, 2), (10, 2), (11, 3)])
def test_sample_paths_samples_whole_paths_until_eval_samples_steps(eval_samples, n_paths):
    env = TimeLimitedEnv(limit=5)
    paths = utils.sample_paths(env, ZeroAgent(), eval_samples)
    assert [len(path["rewards"]) for path in paths] == [5] * n_paths


# evaluation.make_eval_env: the evaluation environment


class CloneableEnv(PointEnv):
    def __init__(self):
        super(CloneableEnv, self).__init__(obs_dim=2, act_dim=2)
        self.clones = []

    def clone(self):
        clone = PointEnv(obs_dim=2, act_dim=2)
        self.clones.append(clone)
        return clone


def test_the_evaluation_environment_is_the_environments_clone_when_it_has_one():
    from ddpg import evaluation
    env = CloneableEnv()
    eval_env = evaluation.make_eval_env(env, None)
    assert env.clones == [eval_env] and type(eval_env) is PointEnv
    given = PointEnv()
    assert evaluation.make_eval_env(env, given) is given and len(env.clones) == 1
    copied = evaluation.make_eval_env(PointEnv(), None)  # no clone: a deep copy
    assert type(copied) is PointEnv
