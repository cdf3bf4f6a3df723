"""MXNET_SUBGRAPH_BACKEND: DDPG's executors are bound without subgraph fusion, a user's own
setting survives ``import ddpg`` and building an algorithm (ddpg.backend.binding)."""
import os
import subprocess
import sys

import pytest

from ddpg.backend.binding import SUBGRAPH_VARIABLE, unfused_binds

TESTS = os.path.dirname(os.path.abspath(__file__))


def run_python(code, tmp_path, **variables):
    """Run ``code`` in a fresh interpreter with these variables set (None: unset); returns
    its stdout. The tests folder is on its path, for the NumPy reference."""
    env = dict(os.environ)
    env.pop(SUBGRAPH_VARIABLE, None)
    # an earlier test's DDPG marks its oneDNN choice for child processes; a variable set
    # here is the user's own, as in a fresh shell
    env.pop("DDPG_MKLDNN_AUTO_VALUE", None)
    for name, value in variables.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    env["PYTHONPATH"] = os.pathsep.join([TESTS] + [p for p in [env.get("PYTHONPATH")] if p])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=str(tmp_path), env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("value", [None, "MKLDNN", "NONE"])
def test_import_ddpg_keeps_the_users_subgraph_backend(tmp_path, value):
    out = run_python("import os, ddpg; print(os.environ.get(%r, '<unset>'))"
                     % SUBGRAPH_VARIABLE, tmp_path, MXNET_SUBGRAPH_BACKEND=value)
    assert out.strip() == (value or "<unset>")


def test_import_ddpg_keeps_the_users_engine(tmp_path):
    out = run_python("import os, ddpg; print(os.environ['MXNET_ENGINE_TYPE'])", tmp_path,
                     MXNET_ENGINE_TYPE="ThreadedEngine")
    assert out.strip() == "ThreadedEngine"


@pytest.mark.parametrize("previous", [None, "MKLDNN"])
def test_unfused_binds_restores_the_previous_value_also_on_error(monkeypatch, previous):
    if previous is None:
        monkeypatch.delenv(SUBGRAPH_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(SUBGRAPH_VARIABLE, previous)
    with pytest.raises(RuntimeError):
        with unfused_binds():
            assert os.environ[SUBGRAPH_VARIABLE] == "NONE"
            raise RuntimeError("bind failed")
    assert os.environ.get(SUBGRAPH_VARIABLE) == previous


#: With the user's MKLDNN backend and oneDNN kernels on, updates still match the NumPy
#: reference: the targets y (target_executor, after soft updates), the acting policy
#: (exe_one, after policy steps) and a target's lazily bound executor follow the weights.
UPDATE_UNDER_MKLDNN = r"""
import os
import numpy as np
import ddpg
from test_update import make_algo, reference_for
from update_checks import assert_params_close, make_batch

assert os.environ["MXNET_SUBGRAPH_BACKEND"] == "MKLDNN"
q_hidden, merge, pi_hidden = (6, 5, 4), 2, (5, 4)
algo = make_algo("sgd", 2e-2, 2e-2, q_hidden, merge, pi_hidden, 0.5)
assert algo.mkldnn
reference = reference_for(algo, "sgd", q_hidden, merge, pi_hidden, 2e-2, 2e-2, 0.5)
rng = np.random.RandomState(1)
obs = rng.normal(size=(1, 3)).astype(np.float32)
algo.policy.get_action(obs)  # a first forward pass, before the weights change
algo.policy_target.forward(is_train=False)
for itr in range(3):
    batch = make_batch(rng)
    expected = reference.update(*[b.astype(np.float64) for b in batch])
    algo.do_update(itr, batch)
    np.testing.assert_allclose(algo.qfunc.arg_dict["yval"].asnumpy(), expected["ys"],
                               rtol=1e-4, atol=1e-5)
    assert_params_close(algo.policy_target.arg_dict, reference.pi_target.p, "policy_target")
    np.testing.assert_allclose(algo.policy.get_action(obs),
                               reference.pi.forward(obs.astype(np.float64))[0][0],
                               rtol=1e-4, atol=1e-5)
    nxt = algo.policy_target.arg_dict["obs"].asnumpy().astype(np.float64)
    np.testing.assert_allclose(algo.policy_target.forward(is_train=False)[0].asnumpy(),
                               reference.pi_target.forward(nxt)[0], rtol=1e-4, atol=1e-5)
assert os.environ["MXNET_SUBGRAPH_BACKEND"] == "MKLDNN"
print("ok")
"""


def test_updates_stay_correct_under_the_users_mkldnn_subgraph_backend(tmp_path):
    out = run_python(UPDATE_UNDER_MKLDNN, tmp_path, MXNET_SUBGRAPH_BACKEND="MKLDNN",
                     MXNET_MKLDNN_ENABLED="1")
    assert out.strip().endswith("ok")
