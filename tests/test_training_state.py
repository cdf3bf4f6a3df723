"""The training loop's state is declared once and owned by the loop: every field is saved
and restored, no other module assigns it, the algorithm's views of it are read-only, and the
loop logs to the algorithm's own logger."""
import ast
import dataclasses
import os

import numpy as np
import pytest

from ddpg import DDPG
from ddpg.checkpoint import CheckpointReader
from ddpg.envs import CartpoleEnv, normalize
from ddpg.logger import Logger, get_default_logger
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.strategies import OUStrategy
from ddpg.training_state import STATE_FIELDS, TrainingState

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ddpg")


def small_algo(**overrides):
    env = normalize(CartpoleEnv())
    settings = dict(ctx=None, n_epochs=2, epoch_length=60, memory_start_size=32,
                    eval_samples=20, memory_size=500, progress_bar=False, seed=5)
    settings.update(overrides)
    return DDPG(env=env, policy=DeterministicMLPPolicy(env.spec, hidden_sizes=(8,)),
                qfunc=ContinuousMLPQ(env.spec, hidden_sizes=(8, 8), action_merge_layer=1),
                strategy=OUStrategy(env.spec), **settings)


def test_the_state_declares_every_field_with_its_meaning():
    source = open(os.path.join(PACKAGE, "training_state.py")).read()
    for name in STATE_FIELDS:
        assert "#: " in source.split("    %s:" % name)[0].rsplit("\n", 2)[-2], name
    assert STATE_FIELDS == ("epoch", "itr", "total_env_steps", "train_time", "obs", "end",
                            "path_length", "path_return", "episode",
                            "n_skipped_nonfinite",
                            "strategy_path_returns", "strategy_path_successes",
                            "vector_episodes")


def test_a_misspelt_field_is_an_error():
    state = TrainingState()
    state.itr = 3
    with pytest.raises(AttributeError, match="TrainingState has no field 'itrr'"):
        state.itrr = 4
    assert dataclasses.asdict(state)["itr"] == 3


def _assigned_attributes(tree, owners):
    """``(attribute, line)`` of every assignment to ``OWNER.attribute`` for an owner name
    in ``owners`` (``algo.epoch = ...``, ``algo.loop.state.itr += 1``)."""
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for item in ast.walk(target):
                if isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store):
                    owner = item.value
                    while isinstance(owner, ast.Attribute):
                        owner = owner.value
                    if isinstance(owner, ast.Name) and owner.id in owners:
                        yield item.attr, node.lineno


def test_no_module_but_the_loop_assigns_the_state():
    """The algorithm (``algo`` elsewhere, ``self`` in the algorithm classes) never has a
    state field or its memory assigned outside ddpg/training.py."""
    offenders = []
    for root, _, names in os.walk(PACKAGE):
        for name in names:
            path = os.path.join(root, name)
            if not name.endswith(".py") or path == os.path.join(PACKAGE, "training.py"):
                continue
            owners = {"algo", "loop"} | ({"self"} if name in ("ddpg.py", "td3.py") else set())
            with open(path) as handle:
                tree = ast.parse(handle.read())
            offenders += ["%s:%d .%s" % (os.path.relpath(path, PACKAGE), line, attr)
                          for attr, line in _assigned_attributes(tree, owners)
                          if attr in STATE_FIELDS + ("memory", "state")]
    assert offenders == []


def test_the_algorithm_views_are_read_only():
    algo = small_algo()
    for name in STATE_FIELDS + ("memory",):
        with pytest.raises(AttributeError):
            setattr(algo, name, None)
    assert algo.epoch == 0 and algo.memory is None and algo.strategy_path_returns == []


def test_a_checkpoint_holds_every_field_and_restores_them(tmp_path):
    algo = small_algo()
    algo.train()
    path = str(tmp_path / "ckpt")
    algo.save(path)
    counters = CheckpointReader(path).training_state()["counters"]
    # with one environment and no successes, the fields of a checkpoint made before there
    # could be several environments or goal tasks
    assert set(counters) == set(STATE_FIELDS) - {"vector_episodes", "strategy_path_successes"}
    again = small_algo()
    again.restore(path)
    for name in STATE_FIELDS:
        np.testing.assert_array_equal(getattr(again, name), getattr(algo, name), name)
    assert again.memory.size == algo.memory.size == 120


def test_the_loop_logs_to_the_algorithms_logger(tmp_path):
    own = Logger()
    own.add_tabular_output(str(tmp_path / "own.csv"))
    default = get_default_logger()
    before = default.last_tabular()
    algo = small_algo(logger=own)
    algo.train()
    own.remove_tabular_output(str(tmp_path / "own.csv"))
    with open(str(tmp_path / "own.csv")) as handle:
        rows = handle.read().splitlines()
    assert rows[0].startswith("Epoch,") and [row.split(",")[0] for row in rows[1:]] == ["0", "1"]
    assert own.last_tabular()["NumUpdates"] == algo.itr
    assert default.last_tabular() == before
