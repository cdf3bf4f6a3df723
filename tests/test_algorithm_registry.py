"""An algorithm variant is one module and its registration: a config class (its settings,
registered with ``ddpg.config.register_config``) and an algorithm class. This file is that
module: it declares a variant whose update differs (the policy step on every second update
only, from a setting of its own), and checks that the hyperparameter table, the command
line's ``--algo`` and the defaults know it, and that it trains, saves and restores, with no
change anywhere else.
"""
import dataclasses
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ddpg import DDPG, DDPGConfig, hyperparams  # noqa: E402
from ddpg.config import CONFIGS, register_config, setting  # noqa: E402
from ddpg.experiment import cli  # noqa: E402
from ddpg.kinds import POSITIVE_INT  # noqa: E402

from ckpt_helpers import all_params, make_env  # noqa: E402
from helpers import build_algorithm  # noqa: E402


@dataclasses.dataclass(frozen=True)
class SlowPolicyConfig(DDPGConfig):
    """DDPG's settings, and how often the policy steps."""

    ALGORITHM = "slow-policy"
    policy_every: int = setting(2, POSITIVE_INT, "the policy steps on every policy_every-th "
                                "update only", flag=None)


class SlowPolicyDDPG(DDPG):
    """DDPG whose policy (and targets) step on every ``policy_every``-th update: its
    ``policy_delay`` is the variant's own setting."""

    CONFIG = SlowPolicyConfig

    def _build(self, env, policy, qfunc, strategy, config, eval_env, logger):
        config = dataclasses.replace(config, policy_delay=config.policy_every)
        super(SlowPolicyDDPG, self)._build(env, policy, qfunc, strategy, config, eval_env,
                                           logger)


@pytest.fixture
def registered():
    register_config(SlowPolicyConfig)
    yield "slow-policy"
    del CONFIGS["slow-policy"]


def objects():
    template = build_algorithm(env=make_env("cartpole"))
    return template.env, template.policy, template.qfunc, template.strategy


def test_the_table_the_defaults_and_the_command_line_know_a_registered_variant(registered):
    assert hyperparams.algorithm_names() == ["ddpg", "td3", "d4pg", registered]
    row = hyperparams.get("policy_every")
    assert row.algorithms == (registered,) and row.defaults == {registered: 2}
    assert "policy_every" in hyperparams.names(registered)
    assert "policy_every" not in hyperparams.names("ddpg")
    assert hyperparams.defaults(registered)["batch_size"] == DDPGConfig().batch_size
    choices = [action.choices for action in cli.build_parser()._actions
               if action.dest == "algo"][0]
    assert registered in choices


def test_a_registered_variant_trains_saves_and_restores(registered, tmp_path):
    settings = dict(batch_size=16, n_epochs=2, epoch_length=60, memory_size=500,
                    memory_start_size=30, max_path_length=100, eval_samples=20, seed=3,
                    progress_bar=False, ctx="cpu")
    variant = SlowPolicyDDPG.from_config(*objects(), SlowPolicyConfig(**settings))
    assert variant.policy_delay == 2
    variant.train()
    plain = DDPG.from_config(*objects(), DDPGConfig(**settings))
    plain.train()
    # the variant's own setting changed the update: not DDPG's parameters
    assert any(not np.array_equal(value, all_params(plain)[name])
               for name, value in all_params(variant).items())
    variant.save(str(tmp_path / "ckpt"))
    again = SlowPolicyDDPG.from_config(*objects(), SlowPolicyConfig(**settings))
    again.restore(str(tmp_path / "ckpt"))
    for name, value in all_params(variant).items():
        np.testing.assert_array_equal(all_params(again)[name], value)


def test_a_taken_name_or_a_config_of_another_family_is_refused(registered):
    @dataclasses.dataclass(frozen=True)
    class Impostor(DDPGConfig):
        ALGORITHM = "td3"
    with pytest.raises(ValueError, match="registered already"):
        register_config(Impostor)

    class Unrelated(object):
        ALGORITHM = "unrelated"
    with pytest.raises(TypeError, match="must extend DDPGConfig"):
        register_config(Unrelated)
    assert hyperparams.algorithm_names() == ["ddpg", "td3", "d4pg", registered]
