"""What the update tests share: the problem size, random batches, parameter comparisons and
the NumPy update of a small algorithm."""
import numpy as np

from numpy_reference import NumpyDDPG, NumpyOptimizer, NumpyPolicy, NumpyQ

OBS_DIM, ACT_DIM, BATCH = 3, 2, 8
#: Executor arguments that are inputs, not parameters.
INPUTS = ("obs", "act", "yval", "weight")


def params_of(arg_dict):
    """An executor's parameters as float64 numpy arrays, by name."""
    return {name: arr.asnumpy().astype(np.float64) for name, arr in arg_dict.items()
            if name not in INPUTS}


def make_batch(rng, batch=BATCH):
    """A random (obss, acts, rwds, ends, nxts) batch, float32 like ReplayMem's, ~30% ends."""
    return (rng.normal(size=(batch, OBS_DIM)).astype(np.float32),
            rng.uniform(-1, 1, size=(batch, ACT_DIM)).astype(np.float32),
            rng.normal(size=batch).astype(np.float32),
            (rng.uniform(size=batch) < 0.3).astype(np.float32),
            rng.normal(size=(batch, OBS_DIM)).astype(np.float32))


def assert_params_close(arg_dict, reference_params, what):
    """Every parameter of ``arg_dict`` matches the NumPy reference's (float32 tolerance)."""
    ours = params_of(arg_dict)
    assert sorted(ours) == sorted(reference_params)
    for name in ours:
        np.testing.assert_allclose(ours[name], reference_params[name], rtol=2e-4, atol=2e-6,
                                   err_msg="%s %s" % (what, name))


def numpy_ddpg_of(algo, discount, lr=2e-2, tau=0.1, **options):
    """The NumPy update (tests/numpy_reference.py) of ``algo``'s networks as they are now: a
    Q network of 3 hidden layers joining the action at layer 2 and a policy of 2, Adam at
    ``lr`` for both; ``options`` go to :class:`NumpyDDPG`."""
    return NumpyDDPG(
        q=NumpyQ(params_of(algo.qfunc.arg_dict), 3, 2),
        q_target=NumpyQ(params_of(algo.qfunc_target.arg_dict), 3, 2),
        pi=NumpyPolicy(params_of(algo.policy.arg_dict), 2),
        pi_target=NumpyPolicy(params_of(algo.policy_target.arg_dict), 2),
        q_opt=NumpyOptimizer("adam", lr), pi_opt=NumpyOptimizer("adam", lr),
        discount=discount, tau=tau, act_dim=ACT_DIM, **options)
