"""Evaluation is checked like training: a non-finite return never reaches progress.csv."""
import csv

import numpy as np
import pytest

from ddpg import logger
from ddpg.errors import NonFiniteError

from helpers import PointEnv, build_algorithm


class NanRewardEvalEnv(PointEnv):
    """Finite in training; its evaluation copy returns NaN rewards in chosen episodes."""

    def __init__(self, bad_episodes=()):
        super(NanRewardEvalEnv, self).__init__(obs_dim=2, act_dim=2)
        self.bad_episodes = set(bad_episodes)
        self.episode = -1
        self.evaluating = False

    def reset(self):
        self.episode += 1
        return super(NanRewardEvalEnv, self).reset()

    def step(self, action):
        step = super(NanRewardEvalEnv, self).step(action)
        if self.evaluating and self.episode in self.bad_episodes:
            return step._replace(reward=float("nan"))
        return step


def build(eval_env, **kwargs):
    env = NanRewardEvalEnv()
    eval_env.evaluating = True
    options = dict(batch_size=4, memory_size=100, memory_start_size=8, n_epochs=1,
                   epoch_length=20, max_path_length=5, eval_samples=15, seed=1,
                   eval_env=eval_env)
    options.update(kwargs)
    return build_algorithm(env=env, **options)


def run_with_progress(algo, tmp_path):
    logger.reset()
    logger.set_log_tabular_only(True)
    path = str(tmp_path / "progress.csv")
    logger.add_tabular_output(path)
    try:
        algo.train()
    finally:
        logger.remove_tabular_output(path)
        logger.reset()
    with open(path) as stream:
        return list(csv.DictReader(stream))


def test_nonfinite_evaluation_return_raises_naming_evaluation_epoch_and_episode(tmp_path):
    algo = build(NanRewardEvalEnv(bad_episodes={1}))
    with pytest.raises(NonFiniteError) as info:
        run_with_progress(algo, tmp_path)
    message = str(info.value)
    assert "evaluation episode 1 of epoch 0" in message
    assert "skip_nonfinite=True" in message


def test_skip_nonfinite_leaves_bad_evaluation_episodes_out_and_counts_them(tmp_path):
    algo = build(NanRewardEvalEnv(bad_episodes={0, 2}), skip_nonfinite=True)
    rows = run_with_progress(algo, tmp_path)
    assert rows[0]["SkippedEvalEpisodes"] == "2"
    for key in ("AverageReturn", "StdReturn", "MaxReturn", "MinReturn",
                "AverageDiscountedReturn"):
        assert np.isfinite(float(rows[0][key])), key


def test_every_evaluation_episode_skipped_leaves_empty_cells_not_nan(tmp_path):
    algo = build(NanRewardEvalEnv(bad_episodes=set(range(100))), skip_nonfinite=True)
    rows = run_with_progress(algo, tmp_path)
    assert rows[0].get("AverageReturn", "") == ""
    assert rows[0]["SkippedEvalEpisodes"] != "0"
    assert "nan" not in ",".join(rows[0].values()).lower()


class UncopyableEnv(PointEnv):
    """Holds a lock (as an environment holding a simulator handle or a socket may), so it can
    be neither cloned nor deep-copied."""

    def __init__(self):
        super(UncopyableEnv, self).__init__(obs_dim=2, act_dim=2)
        import threading
        self.lock = threading.Lock()


def test_an_environment_that_cannot_be_copied_for_evaluation_asks_for_eval_env():
    env = UncopyableEnv()
    with pytest.raises(ValueError) as error:
        build_algorithm(env=env, pi_hidden=None, q_hidden=None)
    assert str(error.value).startswith("could not copy the environment to evaluate on (")
    assert str(error.value).endswith("); pass eval_env=... to DDPG")
    eval_env = PointEnv(obs_dim=2, act_dim=2)  # given one, it evaluates on that
    algo = build_algorithm(env=env, pi_hidden=None, q_hidden=None, eval_env=eval_env)
    assert algo.eval_env is eval_env
