"""--preset in examples/run_ddpg.py: preset over defaults, explicit flags over the preset."""
import importlib.util
import os

import pytest

from ddpg import hyperparams, strategies, utils
from ddpg.experiment.presets import (METADATA, PRESETS, RUN_PY_HYPERPARAMETERS,
                                     check_preset_keys, get_preset, parse_args_with_preset,
                                     preset_names)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def run_script():
    spec = importlib.util.spec_from_file_location(
        "run_ddpg_for_presets", os.path.join(REPO, "examples", "run_ddpg.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse(run_script, argv):
    return parse_args_with_preset(run_script.build_parser(), argv)


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_key_is_a_flag(run_script, name):
    check_preset_keys(run_script.build_parser(), PRESETS[name])
    assert name in METADATA


def test_unknown_keys_are_rejected(run_script):
    with pytest.raises(ValueError, match="qfunc_learning_rate"):
        check_preset_keys(run_script.build_parser(), {"qfunc_learning_rate": 1e-3})


def test_original_preset_is_the_scripts_defaults(run_script):
    defaults = vars(parse(run_script, []))
    chosen = vars(parse(run_script, ["--preset", "original"]))
    assert chosen.pop("preset") == "original" and defaults.pop("preset") is None
    # the defaults leave max_path_length to the environment: 100 for the cart-pole (run.py)
    assert defaults.pop("max_path_length") is None
    assert chosen.pop("max_path_length") == run_script.CARTPOLE_MAX_PATH_LENGTH
    assert chosen == defaults


def test_preset_sets_defaults_and_flags_override_it(run_script):
    args = parse(run_script, ["--preset=pendulum", "--batch-size", "64", "--seed", "3"])
    expected = get_preset("pendulum")
    expected["batch_size"] = 64
    for key, value in expected.items():
        assert getattr(args, key) == value, key
    assert args.seed == 3 and args.preset == "pendulum"
    # flags the preset does not mention keep the script's defaults
    assert args.eval_interval == 1 and args.qfunc_updater == "adam"


def test_flag_before_preset_also_wins(run_script):
    args = parse(run_script, ["--policy-lr", "0.5", "--preset", "hopper"])
    assert args.policy_lr == 0.5 and args.env == "Hopper-v5"


def test_unknown_preset_is_an_error(run_script, capsys):
    with pytest.raises(SystemExit):
        parse(run_script, ["--preset", "walker"])
    assert "invalid choice" in capsys.readouterr().err


def test_get_preset_returns_a_copy():
    values = get_preset("pendulum")
    values["policy_hidden_sizes"].append(7)
    assert PRESETS["pendulum"]["policy_hidden_sizes"] == [400, 300]
    with pytest.raises(ValueError, match="known presets"):
        get_preset("nope")


@pytest.mark.parametrize("name,obs_dim,act_dim", [
    ("halfcheetah", 17, 6), ("hopper", 11, 3), ("walker2d", 17, 6),
    ("cleanrl-halfcheetah", 17, 6), ("cleanrl-hopper", 11, 3), ("cleanrl-walker2d", 17, 6)])
def test_mujoco_presets_make_their_environment(run_script, name, obs_dim, act_dim, tmp_path,
                                               monkeypatch):
    pytest.importorskip("mujoco", reason="MuJoCo presets need pip install -r "
                                         "requirements-bench.txt")
    monkeypatch.chdir(tmp_path)  # MuJoCo may write MUJOCO_LOG.TXT into the current folder
    env, max_path_length = run_script.make_env(parse(run_script, ["--preset", name]))
    assert env.observation_space.flat_dim == obs_dim
    assert env.action_space.flat_dim == act_dim
    assert max_path_length == 1000


def test_cleanrl_preset_builds_cleanrls_ddpg(run_script, tmp_path, monkeypatch):
    """CleanRL's DDPG: 256-256, action at the Q input, policy and targets every 2nd update,
    Gaussian 0.1, fan-in initialisation in every layer (PyTorch's nn.Linear default)."""
    pytest.importorskip("mujoco", reason="MuJoCo presets need pip install -r "
                                         "requirements-bench.txt")
    monkeypatch.chdir(tmp_path)
    args = parse(run_script, ["--preset", "cleanrl-hopper", "--memory-size", "1000",
                              "--memory-start-size", "256", "--no-progress-bar"])
    env, max_path_length = run_script.make_env(args)
    algo = run_script.make_algorithm(args, env, max_path_length)
    assert type(algo).__name__ == "DDPG" and algo.policy_delay == 2
    assert algo.batch_size == 256 and algo.qfunc_lr == algo.policy_lr == 3e-4
    assert algo.start_steps == 25000 and algo.strategy.sigma == 0.1
    assert algo.qfunc.action_merge_layer == 0 and tuple(algo.qfunc.hidden_sizes) == (256, 256)
    # every layer drawn from U(+-1/sqrt(fan_in)), the output layer included
    for name, arr in list(algo.qfunc.arg_dict.items()) + list(algo.policy.arg_dict.items()):
        if name.endswith("_weight"):
            values = arr.asnumpy()
            bound = 1.0 / values.shape[1] ** 0.5
            assert abs(values).max() <= bound and abs(values).max() > 0.9 * bound, name


def test_the_original_preset_reads_run_pys_values_where_they_are_written():
    """run.py's values are written once (the table's cli_default, the networks' and the OU
    noise's defaults): the preset and the script's defaults both read them there."""
    original = PRESETS["original"]
    for name in RUN_PY_HYPERPARAMETERS:
        assert original[name] == hyperparams.get(name).cli_default, name
    # the script's values that differ from DDPG's constructor are the preset's
    assert {"qfunc_lr", "memory_start_size"} <= set(RUN_PY_HYPERPARAMETERS)
    assert original["max_path_length"] == hyperparams.CARTPOLE_MAX_PATH_LENGTH
    assert original["env"] == hyperparams.DEFAULT_ENV
    assert original["policy_hidden_sizes"] == list(utils.DEFAULT_POLICY_HIDDEN_SIZES)
    assert original["qfunc_hidden_sizes"] == list(utils.DEFAULT_QFUNC_HIDDEN_SIZES)
    assert original["qfunc_action_merge_layer"] == utils.DEFAULT_QFUNC_ACTION_MERGE_LAYER
    assert (original["ou_theta"], original["ou_sigma"]) == (strategies.DEFAULT_OU_THETA,
                                                             strategies.DEFAULT_OU_SIGMA)
