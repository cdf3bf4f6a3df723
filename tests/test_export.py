"""Exported policies (ddpg.experiment.export): the MXNet symbol pair and ONNX give the library policy's
actions in the environment's units, for any batch size, with --obs-norm's clipped
normalisation too (goal-conditioned FetchReach-v4 included); examples/evaluate.py runs them.
The ONNX converter (ddpg.experiment.onnx_graph) against MXNet and a NumPy forward pass, for
every activation and LayerNorm setting define_policy builds and every operator it
translates."""
import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ddpg import experiment, logger
from ddpg.backend import binding, mxnet_compat
from ddpg.checkpoint import CheckpointReader
from ddpg.experiment import export, onnx_graph
from ddpg.experiment.policy_source import checkpoint_obs_normalizer

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
    # the HER authors' clipped normaliser without MuJoCo, and softsign hidden layers
    "pendulum_obs_norm": ["--env", "Pendulum-v1", "--obs-norm", "--activation", "softsign",
                          "--policy-hidden-sizes", "12", "8"],
    # a goal-conditioned task: [observation, desired_goal] in, the fetchreach preset's
    # hindsight replay and --obs-norm, smaller
    "fetchreach": ["--preset", "fetchreach", "--policy-hidden-sizes", "32", "24",
                   "--n-envs", "1"],
    # D4PG: the policy is DDPG's, whatever the critic
    "pendulum_d4pg": ["--env", "Pendulum-v1", "--algo", "d4pg", "--atoms", "11", "--v-min",
                      "-100", "--v-max", "0", "--n-step", "3"],
}
#: The modules a run needs, skipped without them.
NEEDS = {"mujoco": ("mujoco",), "fetchreach": ("mujoco", "gymnasium_robotics")}
#: Observation and action sizes.
SIZES = {"pendulum": (3, 1), "pendulum_obs_norm": (3, 1), "mujoco": (17, 6),
         "fetchreach": (13, 4), "pendulum_d4pg": (3, 1)}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Short-trained checkpoints, each exported to ``<folder>/policy*``."""
    folders = {}
    logger.reset()
    logger.set_log_tabular_only(True)
    try:
        for name, flags in RUNS.items():
            try:
                for module in NEEDS.get(name, ()):
                    importlib.import_module(module)
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
        pytest.skip("needs %s (pip install -r requirements-test.txt)"
                    % " and ".join(NEEDS[name]))
    return trained[name]


def library_actions(folder, observations):
    """The restored library policy's actions for raw observations, in the environment's
    units: normalised as NormalizedEnv normalises (NumPy here, statistics fixed), then
    DeterministicMLPPolicy.get_action (which applies --obs-norm's normaliser), then
    NormalizedEnv.scale_action."""
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


#: define_policy's hidden activations in NumPy
NUMPY_ACTIVATIONS = {"relu": lambda v: np.maximum(v, 0.0),
                     "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
                     "softrelu": lambda v: np.logaddexp(0.0, v),
                     "softsign": lambda v: v / (1.0 + np.abs(v)),
                     "tanh": np.tanh}


def numpy_policy(weights, x, activation="relu", layer_norm=False):
    """define_policy's network in NumPy (float64): ``policy_fc<i>`` layers, LayerNorm
    ``policy_ln<i>`` over the features (eps 1e-5), the activation, a tanh output."""
    n_layers = len([name for name in weights if name.endswith("_weight")])
    h = np.asarray(x, dtype=np.float64)
    for i in range(1, n_layers + 1):
        h = h @ np.asarray(weights["policy_fc%d_weight" % i], np.float64).T + \
            np.asarray(weights["policy_fc%d_bias" % i], np.float64)
        if i == n_layers:
            return np.tanh(h)
        if layer_norm:
            h = (h - h.mean(axis=1, keepdims=True)) / np.sqrt(h.var(axis=1, keepdims=True)
                                                              + 1e-5)
            h = h * weights["policy_ln%d_gamma" % i] + weights["policy_ln%d_beta" % i]
        h = NUMPY_ACTIVATIONS[activation](h)


def numpy_exported_path(checkpoint, observations):
    """The exported path in NumPy from the checkpoint's own data: normalize()'s statistics,
    --obs-norm's sums (mean, std at least 0.01, clips at 200 and 5), the policy's weights,
    the described action bounds."""
    reader = CheckpointReader(checkpoint)
    manifest, state = reader.manifest, reader.training_state()
    x = np.asarray(observations, dtype=np.float64)
    description = manifest["env_description"]
    if description["normalize"] and description["normalize"]["normalize_obs"]:
        stats = state["env"]["stats"]
        x = (x - stats["obs_mean"]) / (np.sqrt(stats["obs_var"]) + 1e-8)
    if manifest["hyperparameters"].get("obs_norm"):
        sums = state["obs_normalizer"]
        mean = np.asarray(sums["sum"]) / sums["count"]
        std = np.sqrt(np.maximum(np.asarray(sums["sumsq"]) / sums["count"] - mean ** 2, 1e-4))
        x = np.clip((np.clip(x, -200.0, 200.0) - mean) / std, -5.0, 5.0)
    options = manifest["networks"]["policy"]
    action = numpy_policy(reader.params("policy"), x, options["activation"],
                          options["layer_norm"])
    if description["normalize"] is None:
        return action
    low = np.array(description["action_space"]["low"])
    high = np.array(description["action_space"]["high"])
    return low + (action + 1.0) / 2.0 * (high - low)


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


def exported_and_expected(trained, name):
    """(run folder, observations as float32, the library policy's actions on them)."""
    folder = checkpoint_run(trained, name)
    reference_args = export.checkpoint_run_args(
        experiment.read_manifest(os.path.join(folder, "params")))
    observations = raw_observations(reference_args)
    # and observations far outside what training saw: beyond --obs-norm's clip_obs (200)
    # and more than clip_range (5) standard deviations from the mean
    observations = np.concatenate([observations, observations[:30] * 300.0,
                                   observations[30:60] + 3.0])
    expected, args = library_actions(folder, observations)
    assert args.normalize_obs == (name == "mujoco")
    assert args.obs_norm == name.endswith("obs_norm") or name == "fetchreach"
    # the actions use the environment's range, not [-1, 1] (Pendulum: [-2, 2])
    assert expected.shape == (360, SIZES[name][1])
    assert observations.shape[1] == SIZES[name][0]

    normalizer = checkpoint_obs_normalizer(CheckpointReader(os.path.join(folder, "params")),
                                           SIZES[name][0])
    assert (normalizer is not None) == args.obs_norm
    if normalizer is not None:  # both of the normaliser's clips matter for these observations
        assert np.abs(observations).max() > normalizer.clip_obs
        standardised = (np.clip(observations, -normalizer.clip_obs, normalizer.clip_obs)
                        - normalizer.mean) / normalizer.std
        assert np.mean(np.abs(standardised) > normalizer.clip_range) > 0.05
    # an independent NumPy computation of the whole path from the checkpoint's data
    np.testing.assert_allclose(numpy_exported_path(os.path.join(folder, "params"),
                                                   observations), expected, rtol=0, atol=1e-5)
    return folder, observations.astype(np.float32), expected


@pytest.mark.parametrize("name", sorted(RUNS))
def test_exported_models_give_the_library_policys_actions(trained, name):
    folder, batch, expected = exported_and_expected(trained, name)
    session = ort.InferenceSession(os.path.join(folder, "policy.onnx"),
                                   providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["obs"]
    assert [o.name for o in session.get_outputs()] == ["action"]
    assert session.get_inputs()[0].shape[0] is None or \
        isinstance(session.get_inputs()[0].shape[0], str)  # a dynamic batch dimension
    onnx_actions = session.run(None, {"obs": batch})[0]
    np.testing.assert_allclose(onnx_actions, expected, rtol=0, atol=1e-5)
    one_by_one = np.concatenate([session.run(None, {"obs": batch[i:i + 1]})[0]
                                 for i in range(5)])
    np.testing.assert_allclose(one_by_one, expected[:5], rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_new_process_loads_the_exported_mxnet_pair_without_the_package(trained, name):
    """The MXNet pair, loaded in a process that never imports the ddpg package: under numpy
    1.24+ MXNet 1.9.1 itself imports only with the stand-ins of ddpg/backend/mxnet_compat.py,
    a module of the standard library and numpy alone, loaded from its file."""
    folder, batch, expected = exported_and_expected(trained, name)
    np.save(os.path.join(folder, "observations.npy"), batch)
    code = """
import importlib.util
import sys
import numpy as np
spec = importlib.util.spec_from_file_location("mxnet_compat", sys.argv[3])
mxnet_compat = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mxnet_compat)
mx = mxnet_compat.import_mxnet()
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
                             folder, mxnet_compat.__file__], capture_output=True, text=True,
                            env=env, timeout=120, cwd=folder)
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
    assert metadata["ddpg.obs_norm"] is False
    assert metadata["ddpg.input_layout"] == [["observation", 3]]
    assert (metadata["ddpg.obs_dim"], metadata["ddpg.act_dim"]) == (3, 1)


def test_the_onnx_model_is_opset_17_with_its_parameters_as_constants(trained):
    import onnx
    folder = checkpoint_run(trained, "pendulum")
    model = onnx.load(os.path.join(folder, "policy.onnx"))
    onnx.checker.check_model(model, full_check=True)
    assert [(entry.domain, entry.version) for entry in model.opset_import] == [("", 17)]
    assert model.ir_version == 8  # what onnxruntime 1.12 and later load
    graph = model.graph
    (only_input,), (output,) = graph.input, graph.output
    assert only_input.name == "obs" and output.name == "action"
    for value, size in ((only_input, 3), (output, 1)):
        assert value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
        batch, features = value.type.tensor_type.shape.dim
        assert batch.dim_param == "batch" and features.dim_value == size
    constants = {initializer.name: initializer for initializer in graph.initializer}
    reader = CheckpointReader(os.path.join(folder, "params"))
    for name, value in reader.params("policy").items():
        np.testing.assert_array_equal(onnx.numpy_helper.to_array(constants[name]), value)
    assert all(initializer.data_type == onnx.TensorProto.FLOAT
               for initializer in graph.initializer)
    # the MXNet graph node for node: 3 layers, the tanh, the rescaling, the output
    assert [node.op_type for node in graph.node] == [
        "Gemm", "Relu", "Gemm", "Relu", "Gemm", "Tanh", "Clip", "Add", "Mul", "Add",
        "Identity"]


def test_a_goal_tasks_onnx_file_says_how_its_input_is_laid_out(trained):
    import onnx
    folder = checkpoint_run(trained, "fetchreach")
    model = onnx.load(os.path.join(folder, "policy.onnx"))
    metadata = {entry.key: json.loads(entry.value) for entry in model.metadata_props}
    assert metadata["ddpg.env"] == "FetchReach-v4" and metadata["ddpg.obs_norm"] is True
    # GymEnv's flat vector: the 10 observation values, then the 3 of the desired goal
    assert metadata["ddpg.input_layout"] == [["observation", 10], ["desired_goal", 3]]
    manifest = experiment.read_manifest(os.path.join(folder, "params"))
    assert manifest["env_description"]["env"]["goal_layout"] == {"observation": 10,
                                                                 "desired_goal": 3}
    ops = [node.op_type for node in model.graph.node]
    assert ops[:4] == ["Clip", "Sub", "Div", "Clip"]  # the clipped normalisation first


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
    assert "==" not in err  # the extra, not a bare pin
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


@pytest.mark.usefixtures("quiet_logger")  # tests/conftest.py
def test_a_goal_checkpoint_saved_from_python_exports_its_clipped_normalisation(tmp_path):
    """obs_norm and hindsight replay on a goal-conditioned environment without MuJoCo
    (tests/goal_envs.py): ONNX, the MXNet pair, the policy's own actions and NumPy agree,
    within and beyond the normaliser's clips."""
    import mxnet as mx
    from ddpg.envs import GymEnv, normalize
    from goal_envs import point_goal_env
    from helpers import build_algorithm
    algo = build_algorithm(env=normalize(GymEnv(point_goal_env())), seed=6, n_epochs=1,
                           epoch_length=60, memory_start_size=20, batch_size=8,
                           max_path_length=10, eval_samples=10, her=True, obs_norm=True,
                           pi_hidden=(9, 7),
                           policy_kwargs=dict(activation="sigmoid", layer_norm=True))
    algo.train()
    rng = np.random.RandomState(2)
    normalizer = algo.obs_normalizer
    # statistics of a wide spread in x and goal x, so that the clip at clip_obs (200) falls
    # within clip_range (5) standard deviations there
    normalizer.update(rng.normal(0.0, 1.0, size=(3000, 4)) * [150.0, 0.5, 150.0, 0.5])
    checkpoint, out = str(tmp_path / "ckpt"), str(tmp_path / "out")
    algo.save(checkpoint)
    export.export_policy(checkpoint, out)
    inside = rng.uniform(-0.6, 0.6, size=(100, 4))  # [position, goal]
    observations = np.concatenate([inside, inside[:20] * 600.0, inside[20:40] * 8.0])
    clipped = np.clip(observations, -normalizer.clip_obs, normalizer.clip_obs)
    standardised = (clipped - normalizer.mean) / normalizer.std
    # both clips change what the network sees
    assert np.mean((clipped != observations) & (np.abs(standardised) < 4.0)) > 0.02
    assert np.mean(np.abs(standardised) > normalizer.clip_range) > 0.02
    expected = np.array([algo.policy.get_action(obs) for obs in observations])
    np.testing.assert_allclose(numpy_exported_path(checkpoint, observations), expected,
                               rtol=0, atol=1e-5)
    batch = observations.astype(np.float32)
    session = ort.InferenceSession(out + ".onnx", providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"obs": batch})[0], expected, rtol=0,
                               atol=1e-5)
    block = mx.gluon.SymbolBlock.imports(out + "-symbol.json", ["obs"], out + "-0000.params")
    np.testing.assert_allclose(block(mx.nd.array(batch)).asnumpy(), expected, rtol=0,
                               atol=1e-5)
    import onnx
    metadata = {entry.key: json.loads(entry.value)
                for entry in onnx.load(out + ".onnx").metadata_props}
    assert metadata["ddpg.input_layout"] == [["observation", 2], ["desired_goal", 2]]
    assert metadata["ddpg.obs_norm"] is True and metadata["ddpg.normalize_obs"] is False


# ---------------------------------------------------------------------------------------------
# the ONNX converter (ddpg.experiment.onnx_graph) on its own


def random_params(symbol, input_shape, seed=0, scale=1.0, input_name="obs", **shapes):
    """Every parameter of ``symbol`` drawn from N(0, scale^2) (``shapes``: those MXNet
    cannot infer), float32."""
    rng = np.random.RandomState(seed)
    arg_shapes, _, _ = symbol.infer_shape(**dict(shapes, **{input_name: input_shape}))
    return {name: rng.normal(0.0, scale, size=shape).astype(np.float32)
            for name, shape in zip(symbol.list_arguments(), arg_shapes) if name != input_name}


def onnx_and_mxnet(symbol, inputs, params, input_name="obs"):
    """The outputs of ``symbol`` for ``inputs`` (``(batch, dim)``) with ``params`` under
    onnxruntime and under MXNet."""
    import mxnet as mx
    model = onnx_graph.symbol_to_onnx(symbol, params, input_name, inputs.shape[1])
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    from_onnx = session.run(None, {input_name: inputs.astype(np.float32)})
    args = {name: mx.nd.array(value) for name, value in params.items()}
    args[input_name] = mx.nd.array(inputs)
    # bound as the library binds its networks, without the oneDNN subgraph fusion MXNet
    # applies by default (with it, in one test order, the PReLU output of
    # test_the_other_operators_convert_as_mxnet_computes came out with output 0's leaky slope)
    outputs = binding.bind(symbol, mx.cpu(), args=args).forward()
    return from_onnx, [output.asnumpy() for output in outputs]


@pytest.mark.parametrize("layer_norm", [False, True])
@pytest.mark.parametrize("activation", ["relu", "sigmoid", "softrelu", "softsign", "tanh"])
def test_every_policy_network_converts_as_mxnet_and_numpy_compute(activation, layer_norm):
    import mxnet as mx
    from ddpg.utils import ACTIVATIONS, define_policy
    assert activation in ACTIVATIONS and len(ACTIVATIONS) == 5  # every one define_policy takes
    # layers of different sizes: a transposed weight cannot go unnoticed
    symbol = define_policy(mx.symbol.Variable("obs"), 3, (7, 5), activation=activation,
                           layer_norm=layer_norm)
    inputs = np.random.RandomState(1).normal(0.0, 1.5, size=(64, 6))
    params = random_params(symbol, inputs.shape, scale=0.6)
    for name in params:  # LayerNorm's gamma around 1
        if name.endswith("_gamma"):
            params[name] = params[name] * 0.3 + 1.0
    (from_onnx,), (from_mxnet,) = onnx_and_mxnet(symbol, inputs, params)
    expected = numpy_policy(params, inputs.astype(np.float32), activation, layer_norm)
    # the actions vary and most are not saturated: each activation's shape shows
    assert np.std(expected) > 0.2 and np.median(np.abs(expected)) < 0.9
    np.testing.assert_allclose(from_mxnet, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(from_onnx, expected, rtol=0, atol=1e-5)


def test_the_other_operators_convert_as_mxnet_computes():
    """Every operator of onnx_graph.OPERATORS that define_policy does not use."""
    import mxnet as mx
    sym = mx.symbol
    obs = sym.Variable("obs")
    no_bias = sym.FullyConnected(obs, num_hidden=4, no_bias=True, name="fc_no_bias")
    kept = sym.FullyConnected(obs, num_hidden=4, flatten=False, name="fc_kept")
    kept_no_bias = sym.FullyConnected(obs, num_hidden=4, flatten=False, no_bias=True,
                                      name="fc_kept_no_bias")
    slope = sym.Variable("slope", shape=(4,))
    row = sym.Variable("row", shape=(1, 4))
    parts = [
        sym.LeakyReLU(no_bias, act_type="leaky", slope=0.3),
        sym.LeakyReLU(kept, act_type="elu", slope=0.7),
        sym.LeakyReLU(kept_no_bias, act_type="selu"),
        # MXNet's default act_type (leaky, slope 0.25), which the symbol's JSON leaves out
        sym.LeakyReLU(kept),
        # outputs whose rank the next operator reads (PReLU and LayerNorm check it)
        sym.broadcast_add(sym.LeakyReLU(no_bias, act_type="selu"), row),
        sym.LeakyReLU(sym.LeakyReLU(kept, act_type="elu", slope=0.5), act_type="prelu",
                      gamma=slope),
        sym.LayerNorm(sym.broadcast_add(no_bias, row), axis=-1, eps=0.01, name="ln_sum"),
        sym.LayerNorm(sym.BlockGrad(no_bias), axis=-1, eps=0.01, name="ln_blocked"),
        sym.LeakyReLU(sym.LayerNorm(kept, axis=-1, eps=0.01, name="ln_then_prelu"),
                      act_type="prelu", gamma=slope),
        sym.LeakyReLU(no_bias, act_type="prelu", gamma=slope),
        sym.broadcast_maximum(no_bias, row), sym.broadcast_minimum(kept, row),
        sym.broadcast_sub(no_bias, row), sym.broadcast_div(kept, row + 3.0),
        sym.broadcast_add(no_bias, row), sym.broadcast_mul(kept, row),
        sym.Activation(kept, act_type="softrelu"),
        no_bias + kept, no_bias - kept, no_bias * kept, no_bias / (kept * kept + 1.0),
        1.5 - no_bias, 2.0 / (kept * kept + 1.0), no_bias - 0.25, kept / 4.0, no_bias * 3.0,
        sym.BlockGrad(kept), sym.identity(kept_no_bias),
        sym.clip(kept, -0.5, 0.25),
        sym.LayerNorm(kept, axis=1, eps=0.01, name="ln_axis_1"),
    ]
    # each output read again by an operator that checks its input's rank
    parts += [sym.LayerNorm(part, axis=-1, eps=0.01, name="ln_after_%d" % index)
              for index, part in enumerate(list(parts))]
    symbol = sym.Group(parts)
    inputs = np.random.RandomState(3).normal(0.0, 1.5, size=(32, 5))
    params = random_params(symbol, inputs.shape, slope=(4,), row=(1, 4))
    from_onnx, from_mxnet = onnx_and_mxnet(symbol, inputs, params)
    assert len(from_onnx) == len(parts)
    for index, (got, expected) in enumerate(zip(from_onnx, from_mxnet)):
        assert np.std(expected) > 0.05, index
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=str(index))
    covered = {node["op"] for node in json.loads(symbol.tojson())["nodes"]} - {"null"}
    assert set(onnx_graph.OPERATORS) - covered == set()
    model = onnx_graph.symbol_to_onnx(symbol, params, "obs", inputs.shape[1])
    assert model.producer_name == "ddpg"
    assert [(entry.domain, entry.version) for entry in model.opset_import] == [("", 17)]
    assert model.ir_version == 8
    # every node named (its output's name), as viewers such as Netron show them
    assert [node.name for node in model.graph.node] == [node.output[0]
                                                        for node in model.graph.node]


class JsonSymbol(object):
    """A symbol whose JSON has ``old`` replaced by ``new``."""

    def __init__(self, symbol, old, new):
        self.symbol, self.old, self.new = symbol, old, new

    def tojson(self):
        return self.symbol.tojson().replace(self.old, self.new)

    def list_arguments(self):
        return self.symbol.list_arguments()


def test_an_operator_the_converter_does_not_know_is_named():
    import mxnet as mx
    obs = mx.symbol.Variable("obs")
    layer = mx.symbol.FullyConnected(obs, num_hidden=3, name="fc")
    for symbol, words in [
            (mx.symbol.sin(layer, name="wave"),
             ["the ONNX converter does not translate MXNet's sin operator (node 'wave'); it "
              "translates " + ", ".join(sorted(onnx_graph.OPERATORS))]),
            (JsonSymbol(mx.symbol.Activation(layer, act_type="relu", name="smooth"),
                        '"relu"', '"mish"'),  # MXNet 1.9 has no such act_type: a newer one's
             ["Activation act_type='mish'", "'smooth'",
              "it translates relu, sigmoid, softrelu, softsign, tanh"]),
            (mx.symbol.LeakyReLU(layer, act_type="gelu", name="g"),
             ["the ONNX converter does not translate LeakyReLU act_type='gelu' (node 'g') for "
              "inputs of rank 2; it translates leaky, elu, selu, prelu (prelu for rank 2)"]),
            (mx.symbol.LayerNorm(layer, axis=0, name="across"),
             ["last axis", "'across'"])]:
        params = {name: np.ones(3, np.float32) for name in symbol.list_arguments()
                  if name != "obs"}
        params["fc_weight"] = np.ones((3, 2), np.float32)
        with pytest.raises(onnx_graph.UnsupportedOperatorError) as error:
            onnx_graph.symbol_to_onnx(symbol, params, "obs", 2)
        for word in words:
            assert word in str(error.value)
    # an operator's second output (LayerNorm's mean), which the converter does not give
    with_mean = mx.symbol.LayerNorm(layer, axis=-1, output_mean_var=True, name="ln")
    uses_mean = mx.symbol.broadcast_add(with_mean[0], with_mean[1], name="uses_mean")
    params = {"fc_weight": np.ones((3, 2), np.float32), "fc_bias": np.zeros(3, np.float32),
              "ln_gamma": np.ones(3, np.float32), "ln_beta": np.zeros(3, np.float32)}
    with pytest.raises(onnx_graph.UnsupportedOperatorError) as error:
        onnx_graph.symbol_to_onnx(uses_mean, params, "obs", 2)
    assert str(error.value) == ("node 'uses_mean' uses output 1 of 'ln', which the ONNX "
                                "converter does not give")
    with pytest.raises(onnx_graph.UnsupportedOperatorError) as error:
        onnx_graph.symbol_to_onnx(mx.symbol.Group([with_mean[0], with_mean[1]]), params, "obs", 2)
    assert str(error.value) == "the symbol's output 'ln' is not an operator's first output"
    with pytest.raises(ValueError) as error:
        onnx_graph.symbol_to_onnx(layer, {"fc_weight": np.ones((3, 2))}, "obs", 2)
    assert str(error.value) == ("the symbol's variable 'fc_bias' is neither the input 'obs' "
                                "nor a parameter")
