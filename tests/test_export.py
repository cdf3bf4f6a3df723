"""Exported policies (ddpg.experiment.export): the MXNet symbol pair and ONNX give the library policy's
actions in the environment's units, for any batch size; examples/evaluate.py runs them."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ddpg import experiment, logger
from ddpg.experiment import export

pytest.importorskip("onnx", reason='pip install "mxnet-ddpg[onnx]"')
ort = pytest.importorskip("onnxruntime", reason='pip install "mxnet-ddpg[onnx]"')

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "examples"))
import evaluate as evaluate_script  # noqa: E402
import run_ddpg  # noqa: E402
sys.path.pop(0)

SMALL = ["--n-epochs", "2", "--epoch-length", "100", "--memory-start-size", "50",
         "--batch-size", "16", "--memory-size", "5000", "--ctx", "cpu", "--seed", "5",
         "--no-progress-bar", "--eval-samples", "100", "--qfunc-hidden-sizes", "16", "16", "16"]
RUNS = {
    # normalize(): actions in [-2, 2]; the original's 32-32 policy
    "pendulum": ["--env", "Pendulum-v1"],
    # running observation normalisation, LayerNorm and tanh hidden layers; 6 actions
    "mujoco": ["--env", "HalfCheetah-v5", "--normalize-obs", "--max-path-length", "100",
               "--layer-norm", "--activation", "tanh", "--policy-hidden-sizes", "24", "16"],
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Short-trained checkpoints, each exported to ``<folder>/policy*``."""
    folders = {}
    logger.reset()
    logger.set_log_tabular_only(True)
    try:
        for name, flags in RUNS.items():
            if name == "mujoco":
                try:
                    import mujoco  # noqa: F401  pylint: disable=unused-import
                except ImportError:
                    continue
            folder = str(tmp_path_factory.mktemp(name))
            run_ddpg.main(flags + SMALL + ["--log-dir", folder])
            written = export.export_policy(os.path.join(folder, "params"),
                                           os.path.join(folder, "policy"))
            assert sorted(os.path.basename(path) for path in written) == \
                ["policy-0000.params", "policy-symbol.json", "policy.onnx"]
            folders[name] = folder
    finally:
        logger.reset()
    return folders


def checkpoint_run(trained, name):
    if name not in trained:
        pytest.skip("MuJoCo is not installed (gymnasium[mujoco])")
    return trained[name]


def library_actions(folder, observations):
    """The restored library policy's actions for raw observations, in the environment's
    units: normalised as NormalizedEnv normalises (NumPy here, statistics fixed), then
    DeterministicMLPPolicy.get_action, then NormalizedEnv.scale_action."""
    checkpoint = os.path.join(folder, "params")
    args = export.checkpoint_run_args(experiment.read_manifest(checkpoint))
    env, max_path_length = experiment.make_env(args)
    algo = experiment.make_algorithm(args, env, max_path_length)
    algo.restore(checkpoint)
    stats = algo.env.get_param_values()
    actions = []
    for obs in observations:
        if args.normalize_obs:
            obs = (obs - stats["obs_mean"]) / (np.sqrt(stats["obs_var"]) + 1e-8)
        actions.append(algo.env.scale_action(algo.policy.get_action(obs)))
    return np.array(actions), args


def raw_observations(args, n=300, seed=0):
    """Observations the environment really produces, under random actions."""
    env, _ = experiment.make_env(args)
    inner = env.wrapped_env
    inner.seed(seed)
    rng = np.random.RandomState(seed)
    observations, obs = [], inner.reset()
    while len(observations) < n:
        observations.append(np.asarray(obs, dtype=np.float64).ravel())
        obs, _, done, _ = inner.step(rng.uniform(inner.action_space.low,
                                                 inner.action_space.high))
        if done or len(observations) % 100 == 0:
            obs = inner.reset()
    return np.array(observations)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_exported_models_give_the_library_policys_actions(trained, name):
    folder = checkpoint_run(trained, name)
    reference_args = export.checkpoint_run_args(
        experiment.read_manifest(os.path.join(folder, "params")))
    observations = raw_observations(reference_args)
    expected, args = library_actions(folder, observations)
    assert args.normalize_obs == (name == "mujoco")
    # the actions use the environment's range, not [-1, 1] (Pendulum: [-2, 2])
    assert expected.shape == (300, 6 if name == "mujoco" else 1)

    session = ort.InferenceSession(os.path.join(folder, "policy.onnx"),
                                   providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["obs"]
    assert session.get_inputs()[0].shape[0] is None or \
        isinstance(session.get_inputs()[0].shape[0], str)  # a dynamic batch dimension
    batch = observations.astype(np.float32)
    onnx_actions = session.run(None, {"obs": batch})[0]
    np.testing.assert_allclose(onnx_actions, expected, rtol=0, atol=1e-5)
    one_by_one = np.concatenate([session.run(None, {"obs": batch[i:i + 1]})[0]
                                 for i in range(5)])
    np.testing.assert_allclose(one_by_one, expected[:5], rtol=0, atol=1e-5)

    # the MXNet pair, loaded in a process that never imports ddpg
    np.save(os.path.join(folder, "observations.npy"), batch)
    code = """
import sys
import numpy as np
import mxnet as mx
prefix, out = sys.argv[1], sys.argv[2]
obs = mx.nd.array(np.load(out + "/observations.npy"))
block = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["obs"], prefix + "-0000.params")
np.save(out + "/gluon.npy", block(obs).asnumpy())
symbol, arg_params, aux_params = mx.model.load_checkpoint(prefix, 0)
module = mx.mod.Module(symbol, data_names=["obs"], label_names=None)
module.bind(data_shapes=[("obs", obs.shape)], for_training=False)
module.set_params(arg_params, aux_params)
module.forward(mx.io.DataBatch([obs]), is_train=False)
np.save(out + "/module.npy", module.get_outputs()[0].asnumpy())
assert not any(name == "ddpg" or name.startswith("ddpg.") for name in sys.modules)
"""
    env = dict(os.environ, PYTHONPATH="")  # not even importable
    result = subprocess.run([sys.executable, "-c", code, os.path.join(folder, "policy"),
                             folder], capture_output=True, text=True, env=env, timeout=120,
                            cwd=folder)
    assert result.returncode == 0, result.stderr
    for output in ("gluon.npy", "module.npy"):
        np.testing.assert_allclose(np.load(os.path.join(folder, output)), expected, rtol=0,
                                   atol=1e-5)


def test_the_onnx_file_says_what_it_was_exported_from(trained):
    import onnx
    folder = checkpoint_run(trained, "pendulum")
    model = onnx.load(os.path.join(folder, "policy.onnx"))
    metadata = {entry.key: json.loads(entry.value) for entry in model.metadata_props}
    assert metadata["ddpg.env"] == "Pendulum-v1"
    assert metadata["ddpg.action_low"] == [-2.0] and metadata["ddpg.action_high"] == [2.0]
    assert metadata["ddpg.normalize_obs"] is False and metadata["ddpg.epoch"] == 2


def evaluate(folder, *flags):
    """examples/evaluate.py's returns of two episodes."""
    out = os.path.join(folder, "evaluate.json")
    evaluate_script.main([os.path.join(folder, "params"), "--episodes", "2", "--json", out,
                          "--overwrite"] + list(flags))
    with open(out) as handle:
        return json.load(handle)["returns"]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_evaluate_runs_an_onnx_policy_with_the_checkpoints_returns(trained, name):
    folder = checkpoint_run(trained, name)
    onnx_file = os.path.join(folder, "policy.onnx")
    # the exported normalisation is the checkpoint's, fixed: compare with the checkpoint's
    # policy under fixed statistics (a no-op for Pendulum, which does not normalise)
    from_checkpoint = evaluate(folder, "--freeze-obs-stats")
    from_onnx = evaluate(folder, "--onnx", onnx_file)
    np.testing.assert_allclose(from_onnx, from_checkpoint, rtol=1e-4)
    if name == "pendulum":
        np.testing.assert_allclose(evaluate(folder), from_checkpoint, rtol=1e-12)


def test_export_cli_and_missing_onnx(trained, tmp_path, monkeypatch, capsys):
    folder = checkpoint_run(trained, "pendulum")
    checkpoint = os.path.join(folder, "params")
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r'pip install "mxnet-ddpg\[onnx\]"'):
        export.export_policy(checkpoint, str(tmp_path / "a"))
    assert os.listdir(str(tmp_path)) == []  # nothing written before the refusal
    with pytest.raises(SystemExit) as exit_info:
        export.main([checkpoint, "-o", str(tmp_path / "b")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'pip install "mxnet-ddpg[onnx]"' in err
    # the MXNet pair needs no onnx
    written = export.main([checkpoint, "-o", str(tmp_path / "c"), "--format", "mxnet"])
    assert sorted(os.path.basename(path) for path in written) == \
        ["c-0000.params", "c-symbol.json"]


def test_export_module_runs_from_the_command_line(trained, tmp_path):
    folder = checkpoint_run(trained, "pendulum")
    result = subprocess.run([sys.executable, "-m", "ddpg.export", os.path.join(folder, "params"),
                             "-o", str(tmp_path / "out" / "pendulum")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(str(tmp_path / "out"))) == \
        ["pendulum-0000.params", "pendulum-symbol.json", "pendulum.onnx"]



@pytest.mark.parametrize("flags, message", [
    (["-o", "{blocker}/x/pendulum"], "-o {blocker}/x/pendulum cannot be written: {blocker} is "
                                     "a file, not a folder; choose another -o"),
    (["-o", "{tmp}/out/p", "--env", "CartPole-v1"],
     "--env CartPole-v1: DDPG needs a continuous (Box) action space; CartPole-v1 has "
     "Discrete(2); for the MXNet example's continuous cart-pole use --env cartpole"),
    (["-o", "{tmp}/out/p", "--env", "NoSuch-v0"], "--env NoSuch-v0: Environment `NoSuch` "
                                                 "doesn't exist."),
])
def test_export_errors_are_one_line_naming_the_flag_before_anything_is_written(
        trained, tmp_path, capsys, flags, message):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    names = {"blocker": str(blocker), "tmp": str(tmp_path)}
    checkpoint = os.path.join(checkpoint_run(trained, "pendulum"), "params")
    with pytest.raises(SystemExit) as exit_info:
        export.main([checkpoint] + [flag.format(**names) for flag in flags], prog="ddpg-export")
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == "ddpg-export: error: %s\n" % message.format(**names)
    assert os.listdir(str(tmp_path)) == ["a_file"]


def test_export_refuses_what_is_not_a_checkpoint(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        export.main([str(tmp_path / "nothing"), "-o", str(tmp_path / "x")])
    assert exit_info.value.code == 1 and "no checkpoint folder" in capsys.readouterr().err


def test_the_manuals_onnxruntime_example_runs(trained, tmp_path):
    """docs/tensorboard-and-export.md's example, as written, on an exported Pendulum policy,
    in a process that cannot import ddpg."""
    folder = checkpoint_run(trained, "pendulum")
    with open(os.path.join(REPO, "docs", "tensorboard-and-export.md")) as manual:
        text = manual.read()
    block = text.split("<!-- onnxruntime example -->\n```python\n", 1)[1].split("```", 1)[0]
    assert len(block.strip().splitlines()) <= 13
    os.makedirs(str(tmp_path / "exported"))
    os.symlink(os.path.join(folder, "policy.onnx"), str(tmp_path / "exported" / "pendulum.onnx"))
    result = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                            cwd=str(tmp_path), env=dict(os.environ, PYTHONPATH=""),
                            timeout=120)
    assert result.returncode == 0, result.stderr
    label, value = result.stdout.split()
    assert label == "return" and np.isfinite(float(value))
    # 200 steps of Pendulum cost at most 16.27 each
    assert -16.3 * 200 <= float(value) <= 0


# ---------------------------------------------------------------------------------------------
# checkpoints saved from Python (DDPG.save): exported without --env


class PushEnv(object):
    """An rllab-style environment of the test's own (no gymnasium id): a 3-D point pushed by
    two actions with asymmetric bounds, so that the rescaling shows."""

    def __init__(self):
        from ddpg.envs import Box, EnvSpec
        self.observation_space = Box(-np.inf, np.inf, shape=(3,))
        self.action_space = Box(np.array([-3.0, -0.5]), np.array([0.5, 0.25]))
        self.spec = EnvSpec(self.observation_space, self.action_space)
        self.rng = np.random.RandomState(0)
        self.state = None

    def seed(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.state = self.rng.normal(5.0, 2.0, size=3)
        return self.state.copy()

    def step(self, action):
        self.state = self.state + 0.1 * np.array([action[0], action[1], action[0] - action[1]])
        return self.state.copy(), -float(np.sum(self.state ** 2)), False, {}


def python_env(name):
    from ddpg.envs import GymEnv, normalize
    if name == "pendulum":
        return normalize(GymEnv("Pendulum-v1"))
    if name == "custom":
        return normalize(PushEnv(), normalize_obs=True)
    return PushEnv()  # not normalised: the policy's tanh output is the action


def saved_from_python(folder, name):
    """A short DDPG run on ``python_env(name)``, saved with DDPG.save; returns the algorithm."""
    from helpers import build_algorithm
    algo = build_algorithm(env=python_env(name), pi_hidden=(12, 8),
                           policy_kwargs=dict(activation="tanh"), ctx="cpu", n_epochs=1,
                           epoch_length=120, memory_start_size=30, batch_size=16,
                           memory_size=500, max_path_length=40, eval_samples=40, seed=4)
    logger.reset()
    logger.set_log_tabular_only(True)
    try:
        algo.train()
    finally:
        logger.reset()
    algo.save(os.path.join(folder, "ckpt"))
    return algo


def numpy_actions(algo, observations):
    """The library policy's actions for raw observations, in the environment's units:
    normalize()'s observation normalisation and action rescaling in NumPy around the policy."""
    env = algo.env
    normalized = getattr(env, "wrapped_env", None) is not None
    if normalized and env.normalize_obs:
        stats = env.get_param_values()
        observations = (observations - stats["obs_mean"]) / (np.sqrt(stats["obs_var"]) + 1e-8)
    actions = np.array([algo.policy.get_action(obs) for obs in observations])
    if normalized:
        low = np.asarray(env.wrapped_env.action_space.low, dtype=np.float64)
        high = np.asarray(env.wrapped_env.action_space.high, dtype=np.float64)
        actions = low + (np.clip(actions, -1, 1) + 1) / 2 * (high - low)
    return actions


@pytest.mark.parametrize("name", ["pendulum", "custom", "unnormalized"])
def test_a_checkpoint_saved_from_python_exports_without_env(tmp_path, name, capsys):
    import mxnet as mx
    folder = str(tmp_path)
    algo = saved_from_python(folder, name)
    capsys.readouterr()  # the training's table
    written = export.main([os.path.join(folder, "ckpt"), "-o", os.path.join(folder, "out")])
    assert capsys.readouterr().out.splitlines() == ["wrote %s" % path for path in written]
    assert sorted(os.path.basename(path) for path in written) == \
        ["out-0000.params", "out-symbol.json", "out.onnx"]
    rng = np.random.RandomState(1)
    observations = (rng.normal(0.0, 1.0, size=(200, 3)) * [1, 1, 4] if name == "pendulum"
                    else rng.normal(5.0, 3.0, size=(200, 3)))
    expected = numpy_actions(algo, observations)
    batch = observations.astype(np.float32)
    if name == "custom":
        stats = algo.env.get_param_values()
        assert np.abs(stats["obs_mean"]).max() > 0.01  # the statistics moved in training
        assert expected[:, 0].min() < -1.0  # actions in the environment's units
    session = ort.InferenceSession(os.path.join(folder, "out.onnx"),
                                   providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"obs": batch})[0], expected, rtol=0,
                               atol=1e-5)
    block = mx.gluon.SymbolBlock.imports(os.path.join(folder, "out-symbol.json"), ["obs"],
                                         os.path.join(folder, "out-0000.params"))
    np.testing.assert_allclose(block(mx.nd.array(batch)).asnumpy(), expected, rtol=0,
                               atol=1e-5)
    import onnx
    metadata = {entry.key: json.loads(entry.value)
                for entry in onnx.load(os.path.join(folder, "out.onnx")).metadata_props}
    assert metadata["ddpg.env"] == {"pendulum": "Pendulum-v1"}.get(
        name, "test_export.PushEnv")
    assert metadata["ddpg.normalize_obs"] is (name == "custom")
    assert metadata["ddpg.action_low"] == {"pendulum": [-2.0], "custom": [-3.0, -0.5]}.get(
        name, [-1.0, -1.0])


def test_a_python_pendulum_checkpoint_is_evaluated_without_env(tmp_path):
    """examples/evaluate.py rebuilds a described gymnasium environment by its id."""
    folder = str(tmp_path)
    algo = saved_from_python(folder, "pendulum")
    out = os.path.join(folder, "evaluate.json")
    evaluate_script.main([os.path.join(folder, "ckpt"), "--episodes", "1", "--json", out,
                          "--max-path-length", "5"])
    with open(out) as handle:
        result = json.load(handle)
    assert result["env"] == "Pendulum-v1" and result["seed"] == algo.seed + 1
    assert len(result["returns"]) == 1 and -16.3 * 5 <= result["returns"][0] <= 0


def test_an_older_checkpoint_without_the_description_exports_with_env(tmp_path, capsys):
    fixture = os.path.join(REPO, "tests", "data", "v2_cartpole")
    with pytest.raises(SystemExit) as exit_info:
        export.main([fixture, "-o", str(tmp_path / "a"), "--format", "mxnet"])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == (
        "python -m ddpg.export: error: the checkpoint was not written by run_ddpg.py and does "
        "not describe its environment (it was saved by an older ddpg), so it does not say "
        "which environment it was trained on: pass --env\n")
    written = export.main([fixture, "-o", str(tmp_path / "b"), "--format", "mxnet", "--env",
                           "cartpole"])
    assert sorted(os.path.basename(path) for path in written) == \
        ["b-0000.params", "b-symbol.json"]
