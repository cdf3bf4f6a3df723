"""Bad input to DDPG gets a clear ValueError; good input of every supported kind works."""
import mxnet as mx
import numpy as np
import pytest

from ddpg import DDPG
from ddpg.backend.context import num_gpus
from ddpg.envs import Box, EnvSpec, GymEnv, Step

from helpers import PointEnv, build_algorithm

OBS_DIM, ACT_DIM = 3, 2

needs_no_gpu = pytest.mark.skipif(num_gpus() > 0, reason="checks the message when no GPU")


def build(env=None, spec_env=None, **kwargs):
    """DDPG on ``env``; policy, Q and strategy are sized from ``spec_env`` (default ``env``)."""
    options = dict(batch_size=4, memory_size=100, memory_start_size=100, seed=1)
    options.update(kwargs)
    return build_algorithm(env=env or PointEnv(obs_dim=OBS_DIM, act_dim=ACT_DIM),
                           spec_env=spec_env, **options)


# ---------------------------------------------------------------------------------------------
# ctx


@needs_no_gpu
@pytest.mark.parametrize("ctx", [mx.gpu(0), "gpu", "gpu:0", "GPU:1", mx.gpu(3)])
def test_missing_gpu_is_a_clear_value_error(ctx):
    with pytest.raises(ValueError, match="GPU") as info:
        build(ctx=ctx)
    message = str(info.value)
    assert "0 GPU" in message and "mx.cpu()" in message


HOPPER_MESSAGE = (
    "ctx=gpu(%d) is a GPU of compute capability 9.0 (Hopper or newer), for which MXNet "
    "1.9.1's CUDA wheels hold no code: they run on compute capability 5.0 to 8.9 (Maxwell to "
    "Ada) only. Use ctx=mx.cpu() (--ctx cpu on the command line), or MXNet built from source "
    "for this GPU")


@pytest.mark.parametrize("ctx, device", [(mx.gpu(0), 0), ("gpu:1", 1), (None, 0)])
def test_a_gpu_the_cuda_wheel_has_no_code_for_is_refused_before_anything_binds(
        monkeypatch, ctx, device):
    """A Hopper GPU under mxnet-cu112: the constructor raises before binding any executor
    (here no GPU exists, so MXNet's view of the GPUs is patched too)."""
    from ddpg.backend import context
    asked = []
    monkeypatch.setattr(context, "num_gpus", lambda: 2)
    monkeypatch.setattr(context, "mxnet_cuda_wheel", lambda: "mxnet-cu112")
    monkeypatch.setattr(context, "gpu_compute_capability",
                        lambda device_id=0: asked.append(device_id) or (9, 0))
    monkeypatch.setattr(DDPG, "init_net", lambda self: pytest.fail("bound executors"))
    with pytest.raises(ValueError) as info:
        build(ctx=ctx)
    assert str(info.value) == HOPPER_MESSAGE % device
    assert asked == [device]
    # a GPU the wheels run on passes the check (and then binds: init_net is reached)
    monkeypatch.setattr(context, "gpu_compute_capability", lambda device_id=0: (8, 9))
    with pytest.raises(pytest.fail.Exception, match="bound executors"):
        build(ctx=ctx)


def test_the_gpu_check_trusts_a_source_build_and_never_asks_for_the_cpu(monkeypatch):
    from ddpg.backend import context
    monkeypatch.setattr(context, "num_gpus", lambda: 1)
    monkeypatch.setattr(context, "gpu_compute_capability", lambda device_id=0: (9, 0))
    monkeypatch.setattr(context, "mxnet_cuda_wheel", lambda: None)  # MXNet built from source
    context.check_gpu_supported(mx.gpu(0))
    monkeypatch.setattr(context, "mxnet_cuda_wheel", lambda: "mxnet-cu117")
    context.check_gpu_supported(mx.cpu())
    with pytest.raises(ValueError, match=r"^ctx=gpu\(0\) is a GPU of compute capability 9\.0"):
        context.check_gpu_supported(mx.gpu(0))
    # a capability that cannot be read: nothing is said
    monkeypatch.setattr(context, "gpu_compute_capability", lambda device_id=0: None)
    context.check_gpu_supported(mx.gpu(0))


@pytest.mark.parametrize("ctx", ["tpu", "cuda", "gpu:x", "", 0, "cpu:0:1"])
def test_unknown_ctx_is_rejected(ctx):
    with pytest.raises(ValueError, match="ctx"):
        build(ctx=ctx)


@needs_no_gpu
def test_ctx_none_resolves_to_the_cpu_here():
    algo = build(ctx=None)
    assert algo.ctx == mx.cpu()
    assert algo.qfunc.arg_dict["qfunc_fc1_weight"].context == mx.cpu()
    assert algo.policy.arg_dict["policy_fc1_weight"].context == mx.cpu()


@pytest.mark.parametrize("ctx", ["cpu", "CPU", " cpu:0 ", mx.cpu(), mx.cpu(0)])
def test_cpu_spellings_are_accepted(ctx):
    algo = build(ctx=ctx)
    assert algo.ctx == mx.cpu()
    assert algo.qfunc_target.arg_dict["obs"].context == mx.cpu()


# ---------------------------------------------------------------------------------------------
# environments DDPG cannot handle


class Discrete(object):
    """rllab's ``Discrete(n)``: ``n`` and ``flat_dim`` (one-hot), no ``low``/``high``."""

    def __init__(self, n):
        self.n = n

    @property
    def flat_dim(self):
        return self.n

    @property
    def shape(self):
        return (self.n,)

    def __repr__(self):
        return "Discrete(%d)" % self.n


class SpaceEnv(object):
    """rllab-style env with the given spaces."""

    def __init__(self, observation_space, action_space):
        self.observation_space = observation_space
        self.action_space = action_space
        self.spec = EnvSpec(observation_space, action_space)

    def reset(self):
        return np.zeros(OBS_DIM)

    def step(self, action):
        return Step(np.zeros(OBS_DIM), 0.0, False, {})


def test_discrete_action_space_is_rejected_naming_the_space():
    env = SpaceEnv(Box(-1, 1, shape=(OBS_DIM,)), Discrete(4))
    with pytest.raises(ValueError, match=r"Discrete\(4\)") as info:
        build(env, spec_env=PointEnv(OBS_DIM, ACT_DIM))
    assert "continuous" in str(info.value) or "Box" in str(info.value)


def test_discrete_observation_space_is_rejected():
    env = SpaceEnv(Discrete(5), Box(-1, 1, shape=(ACT_DIM,)))
    with pytest.raises(ValueError, match=r"Discrete\(5\)"):
        build(env, spec_env=PointEnv(OBS_DIM, ACT_DIM))


def test_env_without_the_rllab_interface_is_rejected():
    class NoStep(object):
        observation_space = Box(-1, 1, shape=(OBS_DIM,))
        action_space = Box(-1, 1, shape=(ACT_DIM,))

        def reset(self):
            return np.zeros(OBS_DIM)

    with pytest.raises(ValueError, match="step"):
        build(NoStep(), spec_env=PointEnv(OBS_DIM, ACT_DIM))


def test_gymnasium_cartpole_is_rejected_mentioning_discrete():
    spec_env = PointEnv(4, 1)
    with pytest.raises(ValueError, match="Discrete"):
        env = GymEnv("CartPole-v1")
        build(env, spec_env=spec_env)


def test_gymnasium_pendulum_is_accepted():
    env = GymEnv("Pendulum-v1")
    algo = build(env, memory_start_size=4, n_epochs=1, epoch_length=6, max_path_length=5,
                 eval_samples=2)
    algo.train()
    assert algo.memory.size == 6
    assert algo.qfunc_input_shapes["obs"] == (4, 3)


@pytest.mark.parametrize("low,high", [(-np.inf, np.inf), ([-1.0, -np.inf], [1.0, 1.0]),
                                      ([-1.0, -1.0], [1.0, np.inf])])
def test_infinite_action_bounds_are_rejected(low, high):
    env = SpaceEnv(Box(-1, 1, shape=(OBS_DIM,)), Box(low, high, shape=(ACT_DIM,)))
    with pytest.raises(ValueError, match="finite"):
        build(env, spec_env=PointEnv(OBS_DIM, ACT_DIM))


class UnboundedObservationEnv(SpaceEnv):
    """Observations far outside any box, growing each step, on an unbounded space."""

    def reset(self):
        self.t = 0
        return np.array([1e4, -3e5, 7.0])

    def step(self, action):
        self.t += 1
        return Step(np.array([1e4 * self.t, -3e5, 7.0 + self.t]), 1.0, False, {})


def test_infinite_observation_bounds_are_fine():
    """Unbounded observations are accepted, stored as they come and acted on within the
    action bounds."""
    env = UnboundedObservationEnv(Box(-np.inf, np.inf, shape=(OBS_DIM,)),
                                  Box(-2, 2, shape=(ACT_DIM,)))
    algo = build(env, n_epochs=1, epoch_length=6, memory_start_size=4, max_path_length=100,
                 eval_samples=1)
    algo.train()
    steps = np.arange(6.0)
    np.testing.assert_array_equal(algo.memory.obss[:6], np.stack(
        [np.where(steps == 0, 1e4, 1e4 * steps), np.full(6, -3e5), 7.0 + steps], axis=1))
    np.testing.assert_array_equal(algo.memory.nxts[:6, 0], 1e4 * (steps + 1))
    actions = algo.memory.acts[:6]
    assert np.all(np.abs(actions) <= 2.0) and len(np.unique(actions)) > 1
    assert algo.itr == 3 and np.isfinite(algo.policy.params.data.asnumpy()).all()


# ---------------------------------------------------------------------------------------------
# hyperparameters


@pytest.mark.parametrize("kwargs,name", [
    (dict(batch_size=101, memory_size=100), "batch_size"),
    (dict(batch_size=0), "batch_size"),
    (dict(soft_target_tau=0.0), "soft_target_tau"),
    (dict(soft_target_tau=1.5), "soft_target_tau"),
    (dict(soft_target_tau=-0.1), "soft_target_tau"),
    (dict(qfunc_lr=-1e-3), "qfunc_lr"),
    (dict(policy_lr=-1e-4), "policy_lr"),
    (dict(qfunc_lr=0.0), "qfunc_lr"),
    (dict(qfunc_updater="adamm"), "qfunc_updater"),
    (dict(policy_updater="adamm"), "policy_updater"),
    (dict(eval_interval=0), "eval_interval"),
    (dict(eval_interval=-2), "eval_interval"),
    (dict(memory_start_size=-1), "memory_start_size"),
    (dict(memory_size=0), "memory_size"),
    (dict(discount=1.5), "discount"),
    (dict(discount=-0.1), "discount"),
    (dict(n_epochs=0), "n_epochs"),
    (dict(epoch_length=-5), "epoch_length"),
    (dict(max_path_length=0), "max_path_length"),
    (dict(n_updates_per_sample=0), "n_updates_per_sample"),
    (dict(eval_samples=-1), "eval_samples"),
    (dict(batch_size=2.5), "batch_size"),
    (dict(batch_size=True), "batch_size"),
    (dict(eval_samples=2.5), "eval_samples"),
    (dict(start_steps=True), "start_steps"),
    (dict(memory_start_size=False), "memory_start_size"),
    (dict(memory_start_size=3), "memory_start_size"),
    (dict(eval_interval=1.5), "eval_interval"),
    (dict(scale_reward=True), "scale_reward"),
    (dict(scale_reward=float("inf")), "scale_reward"),
    (dict(scale_reward=float("nan")), "scale_reward"),
])
def test_bad_hyperparameters_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        build(**kwargs)


def test_unknown_optimiser_lists_the_known_ones():
    with pytest.raises(ValueError, match="adamm") as info:
        build(qfunc_updater="adamm")
    known = ", ".join(sorted(mx.optimizer.Optimizer.opt_registry))
    assert str(info.value) == "qfunc_updater='adamm' is not an MXNet optimizer; known: " + known
    assert "rmsprop" in known and "sgd" in known


@pytest.mark.parametrize("kwargs", [
    dict(soft_target_tau=1.0), dict(memory_start_size=0), dict(eval_interval=None),
    dict(discount=0.0), dict(discount=1.0), dict(batch_size=100, memory_size=100),
    dict(eval_samples=0), dict(memory_start_size=4), dict(soft_target_tau=1e-6),
    dict(start_steps=0), dict(eval_interval=3), dict(scale_reward=-0.5),
])
def test_boundary_values_are_accepted(kwargs):
    algo = build(**kwargs)
    for name, value in kwargs.items():
        assert getattr(algo, name) == value


# ---------------------------------------------------------------------------------------------
# any MXNet optimiser


def batch(rng, size=4):
    return (rng.normal(size=(size, OBS_DIM)).astype(np.float32),
            rng.uniform(-1, 1, size=(size, ACT_DIM)).astype(np.float32),
            rng.normal(size=size).astype(np.float32),
            np.zeros(size, dtype=np.float32),
            rng.normal(size=(size, OBS_DIM)).astype(np.float32))


def all_params(algo):
    out = {}
    for prefix, arg_dict in (("q.", algo.qfunc.arg_dict), ("pi.", algo.policy.arg_dict)):
        for name, arr in arg_dict.items():
            if name not in ("obs", "act", "yval"):
                out[prefix + name] = arr.asnumpy().copy()
    return out


@pytest.mark.parametrize("name", ["rmsprop", "sgd", "adagrad", "RMSProp", "nag", "adadelta",
                                  "nadam", "ftml", "signum", "ftrl", "lamb", "sgld", "dcasgd",
                                  "lars", "adam"])
def test_any_mxnet_optimiser_runs_an_update(name):
    algo = build(qfunc_updater=name, policy_updater=name, qfunc_lr=1e-2, policy_lr=1e-2)
    rng = np.random.RandomState(0)
    for arg_dict in (algo.qfunc.arg_dict, algo.policy.arg_dict):
        for param, arr in arg_dict.items():
            if param not in ("obs", "act", "yval"):
                arr[:] = rng.normal(0, 0.3, size=arr.shape)
    before = all_params(algo)
    for itr in range(3):
        algo.do_update(itr, batch(rng))
    after = all_params(algo)
    for key, value in after.items():
        assert np.all(np.isfinite(value)), key
    assert np.all(np.isfinite(algo.qfunc.exe.outputs[0].asnumpy()))
    assert np.all(np.isfinite(algo.policy_executor.outputs[0].asnumpy()))
    # both networks actually moved (most optimisers touch every parameter; demand the heads)
    for key in ("q.qfunc_qval_bias", "pi.policy_fc3_weight"):
        assert np.abs(after[key] - before[key]).max() > 1e-6, key
    # and the optimiser really is the requested one
    assert type(algo.qfunc.updater.optimizer).__name__.lower() == name.lower()


def test_memory_start_size_above_memory_size_is_rejected_with_both_names():
    with pytest.raises(ValueError) as info:
        build(memory_size=50, memory_start_size=60)
    assert "memory_start_size (60)" in str(info.value)
    assert "memory_size (50)" in str(info.value)
