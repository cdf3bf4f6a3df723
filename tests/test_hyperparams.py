"""ddpg.hyperparams, the one table of the hyperparameters: it agrees with DDPG's and TD3's
signatures, the example's command line, the presets and the checkpoint's lists, and each of
its range checks refuses a bad value with a message naming the hyperparameter."""
import inspect

import pytest

from ddpg import DDPG, checkpoint, hyperparams
from ddpg.experiment import build_parser
from ddpg.experiment.presets import PRESETS, preset_names
from ddpg.policies import DeterministicMLPPolicy
from ddpg.qfuncs import ContinuousMLPQ
from ddpg.strategies import OUStrategy
from ddpg.td3 import TD3

from helpers import PointEnv, build_algorithm

#: Constructor arguments that are objects, not hyperparameters.
OBJECTS = ("self", "env", "policy", "qfunc", "strategy", "eval_env", "qfunc2", "kwargs",
           "logger")

#: A value out of range for each kind the table checks, by the kind's description.
BAD = {
    "a positive integer": 0,
    "a non-negative integer": -1,
    "positive": 0.0,
    "a non-negative number": -0.5,
    "in [0, 1]": 1.5,
    "in (0, 1]": 0.0,
    "a finite number": float("nan"),
    "an integer of at least 2": 1,
    "an MXNet optimizer name": "adamm",
    "a positive integer or None (last epoch only)": 0,
    "a positive number or None": -1.0,
    "'sync' or 'async'": "threads",
    "'future', 'final' or 'episode'": "past",
    "a replay memory kind's name or None": 3,
}
#: The kinds that take no bool for a number (the learning rates and the [0, 1] ranges take
#: True as 1, as they always have).
REFUSE_BOOLS = {"a positive integer", "a non-negative integer", "a non-negative number",
                "an integer of at least 2",
                "a finite number", "a positive integer or None (last epoch only)",
                "a positive number or None"}


def signature_defaults(function):
    return {name: parameter.default
            for name, parameter in inspect.signature(function).parameters.items()
            if name not in OBJECTS}


def test_the_table_is_ddpgs_signature():
    assert signature_defaults(DDPG.__init__) == hyperparams.defaults("ddpg")
    assert list(signature_defaults(DDPG.__init__)) == hyperparams.names("ddpg")


def test_the_table_has_tds_own_defaults():
    own = signature_defaults(TD3.__init__)
    assert own == {"policy_delay": 2, "target_noise": 0.2, "target_noise_clip": 0.5}
    td3 = hyperparams.defaults("td3")
    assert {name: td3[name] for name in own} == own
    # the others reach DDPG.__init__ through **kwargs, with DDPG's defaults
    ddpg_defaults = hyperparams.defaults("ddpg")
    assert {name: value for name, value in td3.items() if name not in own} == \
        {name: value for name, value in ddpg_defaults.items() if name not in own}
    assert hyperparams.names("ddpg") == [name for name in hyperparams.names("td3")
                                         if name not in ("target_noise", "target_noise_clip")]


def test_the_checkpoints_lists_follow_the_table():
    assert hyperparams.checkpointed_names("ddpg") == checkpoint.HYPERPARAMETERS
    assert TD3.CHECKPOINT_EXTRA_HYPERPARAMETERS == ("target_noise", "target_noise_clip")
    assert DDPG.CHECKPOINT_EXTRA_HYPERPARAMETERS == ()
    assert hyperparams.structural_names("ddpg") == checkpoint.STRUCTURAL_HYPERPARAMETERS
    assert set(hyperparams.structural_names()) <= set(hyperparams.checkpointed_names())


def test_the_command_line_takes_defaults_and_help_from_the_table():
    parser = build_parser()
    actions = {action.dest: action for action in parser._actions}
    rows = hyperparams.by_flag()
    assert set(rows) <= set(actions)
    for flag, row in rows.items():
        assert actions[flag].default == row.cli_default, flag
        assert actions[flag].help == row.help, flag
    # run.py's values where the example differs from the class
    assert {flag: row.cli_default for flag, row in rows.items()
            if row.cli_default != row.default} == {
        "ctx": "auto", "memory_start_size": 10000, "max_path_length": None, "qfunc_lr": 1e-3,
        "original_truncation": False, "no_progress_bar": False, "policy_delay": None}
    text = " ".join(parser.format_help().split())
    assert "transitions per update (default: 32)" in text
    assert "Q-function learning rate (default: 0.001)" in text


def test_parsed_defaults_give_the_algorithms_defaults_or_run_pys():
    args = vars(build_parser().parse_args([]))
    arguments = hyperparams.from_flags(args, "ddpg")
    # flags left at None leave the class default
    assert not {"policy_delay", "max_path_length", "qfunc_grad_clip",
                "gradient_steps"} & set(arguments)
    assert arguments["ctx"] is None and arguments["bootstrap_truncated"] is True
    assert arguments["progress_bar"] is True and arguments["loss_log_interval"] == 100
    assert arguments["memory_start_size"] == 10000 and arguments["scale_reward"] == 1.0
    assert "target_noise" not in arguments
    td3 = hyperparams.from_flags(dict(args, eval_interval=0, policy_delay=3), "td3")
    assert td3["eval_interval"] is None and td3["policy_delay"] == 3
    assert td3["target_noise"] == 0.2 and td3["target_noise_clip"] == 0.5


@pytest.mark.parametrize("name", hyperparams.checked_names())
def test_every_range_check_names_the_hyperparameter(name):
    row = hyperparams.get(name)
    row.check(row.default)  # the defaults are in range
    for default in row.defaults.values():  # every algorithm's
        row.check(default)
    with pytest.raises(ValueError, match=name):
        row.check(BAD[row.kind.description])
    if row.kind.description in REFUSE_BOOLS:
        with pytest.raises(ValueError, match=name):
            row.check(True)  # a bool is no number here


def build(**kwargs):
    options = dict(batch_size=4, memory_size=100, memory_start_size=100, seed=1)
    options.update(kwargs)
    return build_algorithm(env=PointEnv(obs_dim=2, act_dim=1), pi_hidden=(8,),
                           q_hidden=(8, 8), **options)


@pytest.mark.parametrize("name", hyperparams.checked_names("ddpg"))
def test_ddpg_refuses_what_the_table_refuses(name):
    with pytest.raises(ValueError, match=name):
        build(**{name: BAD[hyperparams.get(name).kind.description]})


@pytest.mark.parametrize("name", ["target_noise", "target_noise_clip"])
def test_td3_refuses_a_negative_noise(name):
    with pytest.raises(ValueError, match="%s must be a non-negative number" % name):
        build_algorithm("td3", env=PointEnv(obs_dim=2, act_dim=1), pi_hidden=(8,),
                        q_hidden=(8, 8), **{name: -0.1})


@pytest.mark.parametrize("values,message", [
    (dict(batch_size=0, memory_size=100, memory_start_size=10), "batch_size"),
    (dict(batch_size=101, memory_size=100, memory_start_size=10), "memory_size"),
    (dict(batch_size=4, memory_size=100, memory_start_size=101), "memory_start_size"),
    (dict(batch_size=32, memory_size=100, memory_start_size=10), "memory_start_size"),
])
def test_the_replay_memory_sizes_must_fit_together(values, message):
    with pytest.raises(ValueError, match=message):
        hyperparams.check(values)
    hyperparams.check(dict(values, batch_size=4, memory_size=100, memory_start_size=0))


def test_a_categorical_critic_s_bounds_must_be_in_order():
    with pytest.raises(ValueError, match=r"v_min \(2.0\) must be below v_max \(1.0\)"):
        hyperparams.check(dict(v_min=2.0, v_max=1.0))
    hyperparams.check(dict(v_min=-1.0, v_max=1.0))


@pytest.mark.parametrize("name", preset_names())
def test_every_presets_hyperparameters_are_in_range(name):
    hyperparams.check_flag_values(PRESETS[name])


def test_a_bad_preset_value_names_the_hyperparameter(monkeypatch):
    from ddpg.experiment import presets  # pylint: disable=import-outside-toplevel
    monkeypatch.setitem(presets.PRESETS, "pendulum",
                        dict(PRESETS["pendulum"], soft_target_tau=2.0))
    with pytest.raises(ValueError, match="soft_target_tau must be in"):
        presets.parse_args_with_preset(build_parser(), ["--preset", "pendulum"])
    # a flag's own meaning: --eval-interval 0 is "the last epoch only", not out of range
    hyperparams.check_flag_values({"eval_interval": 0, "ddpg_scale_reward": -0.5})
    with pytest.raises(ValueError, match="scale_reward"):
        hyperparams.check_flag_values({"ddpg_scale_reward": float("inf")})


def test_unknown_names_are_refused():
    with pytest.raises(KeyError, match="batch_size"):
        hyperparams.get("batch_sise")


def test_the_networks_and_strategies_defaults_have_one_home():
    """The networks' and strategies' defaults are constants of their modules, which their
    signatures and the command line's flags read."""
    from ddpg import strategies, utils  # pylint: disable=import-outside-toplevel
    from ddpg.backend import initializers  # pylint: disable=import-outside-toplevel

    def signature_defaults(function):  # pylint: disable=redefined-outer-name
        return {name: parameter.default
                for name, parameter in inspect.signature(function).parameters.items()
                if parameter.default is not inspect.Parameter.empty}

    network = dict(activation=utils.DEFAULT_ACTIVATION, layer_norm=False,
                   output_init=initializers.DEFAULT_OUTPUT_INIT,
                   hidden_init=initializers.DEFAULT_HIDDEN_INIT)
    assert signature_defaults(DeterministicMLPPolicy.__init__) == dict(
        network, hidden_sizes=utils.DEFAULT_POLICY_HIDDEN_SIZES)
    assert signature_defaults(ContinuousMLPQ.__init__) == dict(
        network, hidden_sizes=utils.DEFAULT_QFUNC_HIDDEN_SIZES,
        action_merge_layer=utils.DEFAULT_QFUNC_ACTION_MERGE_LAYER, prefix="qfunc")
    assert signature_defaults(OUStrategy.__init__) == dict(
        mu=0, theta=strategies.DEFAULT_OU_THETA, sigma=strategies.DEFAULT_OU_SIGMA,
        dt=strategies.DEFAULT_OU_DT)
    assert signature_defaults(strategies.GaussianStrategy.__init__) == dict(
        sigma=strategies.DEFAULT_GAUSSIAN_SIGMA, sigma_min=None, decay_steps=None,
        random_prob=strategies.DEFAULT_RANDOM_ACTION_PROB)
    args = vars(build_parser().parse_args([]))
    assert (args["policy_hidden_sizes"], args["qfunc_hidden_sizes"]) == (
        list(utils.DEFAULT_POLICY_HIDDEN_SIZES), list(utils.DEFAULT_QFUNC_HIDDEN_SIZES))
    assert args["qfunc_action_merge_layer"] == utils.DEFAULT_QFUNC_ACTION_MERGE_LAYER
    assert {name: args[name] for name in ("activation", "output_init", "hidden_init")} == {
        name: network[name] for name in ("activation", "output_init", "hidden_init")}
    assert (args["ou_theta"], args["ou_sigma"], args["ou_dt"], args["gaussian_sigma"],
            args["random_action_prob"]) == (
        strategies.DEFAULT_OU_THETA, strategies.DEFAULT_OU_SIGMA, strategies.DEFAULT_OU_DT,
        strategies.DEFAULT_GAUSSIAN_SIGMA, strategies.DEFAULT_RANDOM_ACTION_PROB)
    assert args["env"] == hyperparams.DEFAULT_ENV and utils.SEED == hyperparams.get("seed").default
