"""ddpg.config: the settings of DDPG and TD3 as frozen dataclasses. The hyperparameter table
is read from their fields; they agree with the constructors' signatures, the command line's
flags and the presets; they refuse what the algorithms refuse, with the same message; and an
algorithm built from a config is the one the constructor builds from the same settings, to
the bit."""
import dataclasses
import inspect

import mxnet as mx
import numpy as np
import pytest

import ddpg
from ddpg import D4PG, DDPG, TD3, D4PGConfig, DDPGConfig, TD3Config, hyperparams
from ddpg.checkpoint import INPUT_NAMES, networks_of
from ddpg.config import CONFIGS, OBJECTS, SAME_NAME, setting
from ddpg.experiment import build_parser
from ddpg.experiment.presets import parse_args_with_preset, preset_names
from ddpg.kinds import POSITIVE_INT
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.strategies import OUStrategy

from helpers import PointEnv

ALGORITHMS = {"ddpg": DDPG, "td3": TD3, "d4pg": D4PG}

#: Settings of a small algorithm that trains in a moment.
SMALL = dict(ctx=mx.cpu(), progress_bar=False, batch_size=4, memory_size=100,
             memory_start_size=8, n_epochs=2, epoch_length=12, max_path_length=6,
             eval_samples=6, seed=3)


def field_defaults(config_class):
    return {field.name: field.default for field in dataclasses.fields(config_class)}


def objects(kind):
    """A fresh environment, policy, Q-function and strategy, made in build_algorithm's order."""
    env = PointEnv(obs_dim=2, act_dim=1)
    policy = DeterministicMLPPolicy(env.spec, hidden_sizes=(8,))
    qfunc = ContinuousMLPQ(env.spec, hidden_sizes=(8, 8))
    return env, policy, qfunc, OUStrategy(env.spec)


def parameters(algo):
    return {(network, name): array.asnumpy()
            for network in networks_of(algo)
            for name, array in getattr(algo, network).arg_dict.items()
            if name not in INPUT_NAMES}


# -- the config agrees with the table, the signatures, the flags and the presets ----------


@pytest.mark.parametrize("kind", list(CONFIGS))
def test_every_table_row_is_a_field_with_its_default_and_every_field_a_row(kind):
    assert list(field_defaults(CONFIGS[kind])) == hyperparams.names(kind)
    assert field_defaults(CONFIGS[kind]) == hyperparams.defaults(kind)


def test_the_table_is_read_from_the_fields():
    assert list(CONFIGS) == ["ddpg", "td3", "d4pg"]
    for row in hyperparams.TABLE:
        having = [kind for kind, config_class in CONFIGS.items()
                  if row.name in config_class.__dataclass_fields__]
        declared = CONFIGS[having[0]].__dataclass_fields__[row.name]
        assert row.kind is declared.metadata["kind"], row.name
        assert (row.doc, row.help, row.structural) == (
            declared.metadata["doc"], declared.metadata["help"],
            declared.metadata["structural"]), row.name
        assert row.algorithms == tuple(having)
        assert row.defaults == {kind: CONFIGS[kind].__dataclass_fields__[row.name].default
                                for kind in having}
    assert hyperparams.get("policy_delay").defaults == {"ddpg": 1, "td3": 2, "d4pg": 1}
    assert hyperparams.get("atoms").algorithms == ("d4pg",)


def test_a_setting_s_row_defaults_to_its_name_doc_and_default():
    field = setting(3, POSITIVE_INT, "the doc")
    assert field.default == 3
    assert dict(field.metadata, from_flag=None) == dict(
        doc="the doc", kind=POSITIVE_INT, help="the doc", flag=SAME_NAME, cli_default=3,
        from_flag=None, cli_options={}, checkpointed=True, structural=False)
    assert field.metadata["from_flag"]("x") == "x"
    assert hyperparams.get("batch_size").flag == "batch_size"
    assert hyperparams.get("progress_bar").flag == "no_progress_bar"


def test_the_signatures_are_the_configs():
    ddpg_signature = inspect.signature(DDPG.__init__).parameters
    assert {name: parameter.default for name, parameter in ddpg_signature.items()
            if name not in OBJECTS + ("self",)} == field_defaults(DDPGConfig)
    for algorithm, config_class in ((TD3, TD3Config), (D4PG, D4PGConfig)):
        own = {name: parameter.default for name, parameter in
               inspect.signature(algorithm.__init__).parameters.items()
               if name not in OBJECTS + ("self", "kwargs")}
        defaults = field_defaults(config_class)
        assert own and own == {name: defaults[name] for name in own}
        assert algorithm.CONFIG is config_class
    assert DDPG.CONFIG is DDPGConfig


def test_every_field_is_documented():
    for config_class in CONFIGS.values():
        for field in dataclasses.fields(config_class):
            assert field.metadata["doc"], field.name
    for name in DDPGConfig.names():
        assert "\n%s (default " % name in DDPGConfig.__doc__
    for name in ("policy_delay", "target_noise", "target_noise_clip"):
        assert "\n%s (default " % name in TD3Config.__doc__
    for name in ("atoms", "v_min", "v_max"):
        assert "\n%s (default " % name in D4PGConfig.__doc__
    assert {"DDPGConfig", "TD3Config", "D4PGConfig", "D4PG"} <= set(ddpg.__all__)


def test_every_hyperparameter_flag_sets_a_field_and_the_parsed_defaults_are_accepted():
    args = vars(build_parser().parse_args([]))
    fields = set().union(*(config_class.names() for config_class in CONFIGS.values()))
    rows = hyperparams.by_flag()
    assert {row.name for row in rows.values()} <= fields
    assert set(rows) <= set(args)
    # a destination named like a setting is that setting's flag (--scale-reward is the
    # environment's normalize(scale_reward=...); DDPG's is --ddpg-scale-reward)
    assert {dest for dest in args if dest in fields} - {"scale_reward"} <= set(rows)
    assert rows["ddpg_scale_reward"].name == "scale_reward"
    for kind, config_class in CONFIGS.items():
        config = config_class(**hyperparams.from_flags(args, kind))
        assert config.memory_start_size == 10000  # run.py's


@pytest.mark.parametrize("name", preset_names())
def test_every_presets_values_are_accepted_by_the_config(name):
    args = parse_args_with_preset(build_parser(), ["--preset", name])
    config = CONFIGS[args.algo](**hyperparams.from_flags(vars(args), args.algo))
    assert isinstance(config, CONFIGS[args.algo])


# -- validation: the algorithm's messages --------------------------------------------------


#: A value out of range for every setting the config checks, and relations between settings.
BAD = [dict(batch_size=0), dict(n_epochs=-1), dict(memory_start_size=-1),
       dict(discount=1.5), dict(qfunc_updater="adamm"), dict(policy_lr=0.0),
       dict(soft_target_tau=0.0), dict(eval_interval=0),
       dict(scale_reward=float("nan")), dict(qfunc_weight_decay=-0.5),
       dict(policy_grad_clip=-1.0), dict(gradient_steps=0), dict(vec_env="threads"),
       dict(per_beta=1.5), dict(her_strategy="past"), dict(her_k=-1), dict(action_l2=True),
       dict(target_update_interval=0), dict(loss_log_interval=0), dict(start_steps=-1),
       dict(policy_delay=1.5), dict(train_freq=0), dict(per_eps=0.0), dict(n_step=0),
       # the replay memory's sizes, the epoch's steps and the environments
       dict(batch_size=101), dict(memory_start_size=101), dict(memory_start_size=2),
       dict(n_envs=5),
       # hindsight replay's conflicts with other settings
       dict(her=True, n_step=2), dict(her=True, prioritized_replay=True),
       # the update schedule
       dict(n_updates_per_sample=0), dict(n_updates_per_sample=0.3),
       dict(n_updates_per_sample=2, gradient_steps=1),
       dict(n_updates_per_sample=0.5, train_freq=2)]


def message(function, *args, **kwargs):
    with pytest.raises(ValueError) as error:
        function(*args, **kwargs)
    return str(error.value)


@pytest.mark.parametrize("bad", BAD, ids=lambda bad: ",".join(sorted(bad)))
def test_a_bad_setting_is_refused_with_the_algorithms_message(bad):
    settings = dict(SMALL, **bad)
    expected = message(DDPG, *objects("ddpg"), **settings)
    assert message(DDPGConfig, **settings) == expected
    td3 = dict(settings, policy_delay=bad.get("policy_delay", 2))
    assert message(TD3Config, **td3) == message(TD3, *objects("td3"), **td3) == expected


@pytest.mark.parametrize("name", ["target_noise", "target_noise_clip"])
def test_td3s_own_settings_are_refused_with_its_message(name):
    settings = dict(SMALL, **{name: -0.1})
    expected = message(TD3, *objects("td3"), **settings)
    assert expected == "%s must be a non-negative number, got -0.1" % name
    assert message(TD3Config, **settings) == expected
    with pytest.raises(TypeError, match="target_noise"):
        DDPGConfig(**settings)  # no TD3 setting in DDPG's config


# -- from_config builds the same algorithm --------------------------------------------------


@pytest.mark.parametrize("kind, settings", [
    ("ddpg", dict(SMALL)),
    ("ddpg", dict(SMALL, policy_delay=2, n_step=2, qfunc_weight_decay=0.01, start_steps=5)),
    ("td3", dict(SMALL, target_noise=0.3, start_steps=5)),
    ("d4pg", dict(SMALL, atoms=11, v_min=-5.0, v_max=5.0, n_step=3, start_steps=5)),
])
def test_from_config_trains_the_same_parameters_to_the_bit(kind, settings):
    by_arguments = ALGORITHMS[kind](*objects(kind), **settings)
    by_arguments.train()
    config = CONFIGS[kind](**settings)
    by_config = ALGORITHMS[kind].from_config(*objects(kind), config)
    by_config.train()
    assert by_config.config is config and by_arguments.config == config
    assert by_config.itr == by_arguments.itr > 0
    expected = parameters(by_arguments)
    got = parameters(by_config)
    assert list(got) == list(expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(got[key], value, err_msg=str(key))
    for name in config.names():
        if name not in ("ctx", "mkldnn", "omp_threads"):
            assert getattr(by_config, name) == getattr(by_arguments, name) == \
                getattr(config, name), name


def test_from_config_passes_on_the_objects():
    env, policy, qfunc, strategy = objects("td3")
    eval_env = PointEnv(obs_dim=2, act_dim=1)
    qfunc2 = ContinuousMLPQ(env.spec, hidden_sizes=(4, 4), prefix="second")
    algo = TD3.from_config(env, policy, qfunc, strategy, TD3Config(**SMALL),
                           eval_env=eval_env, qfunc2=qfunc2)
    assert algo.eval_env is eval_env and algo.qfunc2 is qfunc2
    assert algo.target_noise == 0.2 and algo.policy_delay == 2


@pytest.mark.parametrize("kind, config", [("ddpg", TD3Config()), ("td3", DDPGConfig()),
                                          ("ddpg", dict(SMALL)), ("d4pg", DDPGConfig()),
                                          ("ddpg", D4PGConfig())])
def test_from_config_takes_its_own_config_class_only(kind, config):
    with pytest.raises(TypeError, match=r"from_config takes a %s" % CONFIGS[kind].__name__):
        ALGORITHMS[kind].from_config(*objects(kind), config)


# -- frozen, and the algorithm's own --------------------------------------------------------


def test_a_config_is_frozen_and_replace_gives_a_checked_copy():
    config = DDPGConfig(batch_size=64)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.batch_size = 0
    assert config.batch_size == 64
    assert dataclasses.replace(config, batch_size=16).batch_size == 16
    with pytest.raises(ValueError, match="batch_size must be a positive integer, got 0"):
        dataclasses.replace(config, batch_size=0)
    assert config.settings() == dict(field_defaults(DDPGConfig), batch_size=64)
    assert DDPGConfig(batch_size=64) == config != DDPGConfig()


def test_the_algorithm_keeps_the_config_it_was_built_with():
    algo = DDPG(*objects("ddpg"), **SMALL)
    assert algo.config == DDPGConfig(**SMALL)
    assert isinstance(algo.config, DDPGConfig) and not isinstance(algo.config, TD3Config)
    td3 = TD3(*objects("td3"), **SMALL)
    assert td3.config == TD3Config(**SMALL) and td3.config.policy_delay == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        td3.config.target_noise = 1.0


def test_the_update_schedule_s_errors_say_what_to_give():
    from ddpg.config import update_schedule
    with pytest.raises(ValueError) as raised:
        update_schedule(0.4, 1, None)
    assert str(raised.value) == ("n_updates_per_sample must be a positive integer or 1/k for "
                                 "an integer k (0.5 = one update every 2 steps), got 0.4")
    with pytest.raises(ValueError) as raised:
        update_schedule(2, 1, 3)
    assert str(raised.value) == ("give gradient_steps or n_updates_per_sample, not both "
                                 "(n_updates_per_sample=2)")
    with pytest.raises(ValueError) as raised:
        DDPGConfig(batch_size=64, memory_start_size=10)
    assert str(raised.value) == ("batch_size (64) must not exceed memory_start_size (10); "
                                 "memory_start_size=0 starts updating at once")
    with pytest.raises(ValueError) as raised:
        update_schedule(0.5, 2, None)
    assert str(raised.value) == ("a fractional n_updates_per_sample (0.5) already sets the "
                                 "update frequency; give train_freq with gradient_steps "
                                 "instead")


def test_the_config_docstring_lists_each_field_on_a_line_of_its_own():
    lines = DDPGConfig.__doc__.splitlines()
    start = lines.index("batch_size (default 32): transitions per update")
    assert lines[start + 1] == "n_epochs (default 1000): epochs to train"


def test_kinds_made_at_run_time_keep_their_parts():
    """The kinds of ddpg.kinds are made when the module is imported; these are made here, so
    that a change to Kind or _Optimizer shows."""
    from ddpg import kinds
    kind = kinds.Kind("a positive thing", lambda value: value > 0, int)
    assert (kind.description, kind.cli_type, kind.checked_by) == ("a positive thing", int, None)
    assert kinds.Kind("checked elsewhere", checked_by="f").checked_by == "f"
    maybe = kind.or_none("a positive thing or None")
    assert (maybe.description, maybe.cli_type) == ("a positive thing or None", int)
    assert maybe.accepts(None) and maybe.accepts(2) and not maybe.accepts(-1)
    with pytest.raises(ValueError) as raised:
        maybe.check("x", -1)
    assert str(raised.value) == "x must be a positive thing or None, got -1"
    optimizer = kinds._Optimizer()  # pylint: disable=protected-access
    assert (optimizer.description, optimizer.cli_type) == ("an MXNet optimizer name", None)
    assert optimizer.accepts("Adam") and not optimizer.accepts("no-such-optimizer")
    assert kinds.updates_per_sample("2") == 2 and isinstance(kinds.updates_per_sample("2"), int)
    assert kinds.updates_per_sample("0.5") == 0.5
