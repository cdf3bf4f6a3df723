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
    evaluate_script.main([os.path.join(folder, "params"), "--episodes", "2", "--json", out]
                         + list(flags))
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
    with pytest.raises(ImportError, match=r"pip install onnx==1\.14\.1"):
        export.export_policy(checkpoint, str(tmp_path / "a"))
    assert os.listdir(str(tmp_path)) == []  # nothing written before the refusal
    with pytest.raises(SystemExit) as exit_info:
        export.main([checkpoint, "-o", str(tmp_path / "b")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pip install onnx==1.14.1" in err
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
