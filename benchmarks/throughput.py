#!/usr/bin/env python
"""Environment steps per second of our DDPG, Stable-Baselines3's, a compiled JAX DDPG and a
minimal MXNet Gluon DDPG.

All four train on gymnasium's Pendulum-v1 with the same network sizes, batch size, warm-up
(steps collected before the first update), one update per environment step afterwards, the
same number of timed steps and the same thread count, one after the other in one invocation.
Prints steps/s for each, the ratios ours/SB3, ours/JAX and ours/Gluon, a breakdown of our
time per step, and for the large configurations the achieved GFLOP/s of our update against
this machine's measured float32 matmul rate.

    python benchmarks/throughput.py                 # the four configurations (see CONFIGS)
    python benchmarks/throughput.py --configs 1 --steps 5000 --threads 1
    python benchmarks/throughput.py --ctx gpu --skip-sb3 --skip-jax

SB3 needs ``pip install -r requirements-bench.txt`` (torch, stable-baselines3) unless
``--skip-sb3``. The JAX contender (``benchmarks/jax_ddpg.py``) runs as a subprocess in its own
virtual environment, since JAX needs numpy 2 and MXNet numpy < 1.24::

    python3 -m venv .venv-jax && .venv-jax/bin/pip install -r requirements-jax.txt

``--jax-python`` names that environment's interpreter (default ``.venv-jax/bin/python`` in
the repository); ``--skip-jax`` leaves the contender out.

The Gluon contender (``benchmarks/gluon_ddpg.py``) runs as a subprocess of this interpreter
with the MXNet engine, oneDNN choice and OpenMP threads our DDPG ran with, so that the two
differ by their code alone; ``--skip-gluon`` leaves it out.
"""
import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import time

# Thread and engine settings must be in place before mxnet or torch load.
if __name__ == "__main__":
    _pre = argparse.ArgumentParser(add_help=False)
    _pre.add_argument("--threads", type=int, default=2)
    _pre.add_argument("--engine", default=None)
    _known, _ = _pre.parse_known_args()
    os.environ["OMP_NUM_THREADS"] = str(_known.threads)
    if _known.engine:
        os.environ["MXNET_ENGINE_TYPE"] = _known.engine

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # contender_protocol

import numpy as np  # noqa: E402

import ddpg  # noqa: E402,F401  (sets MXNet's environment before mxnet loads)
import mxnet as mx  # noqa: E402
from ddpg import DDPG, logger  # noqa: E402
from ddpg import ddpg as ddpg_module  # noqa: E402
from ddpg.envs import GymEnv, normalize  # noqa: E402
from ddpg.policies import DeterministicMLPPolicy  # noqa: E402
from ddpg.qfuncs import ContinuousMLPQ  # noqa: E402
from ddpg.strategies import OUStrategy  # noqa: E402
# the configurations (name -> description, policy and Q hidden sizes, Q action merge layer,
# batch size) and the hyperparameters every contender shares
from contender_protocol import (CONFIGS, DISCOUNT, ENV_ID, LEARNING_RATE,  # noqa: E402
                                MEMORY_SIZE, OU_SIGMA, TAU)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JAX_SCRIPT = os.path.join(REPO, "benchmarks", "jax_ddpg.py")
GLUON_SCRIPT = os.path.join(REPO, "benchmarks", "gluon_ddpg.py")
DEFAULT_JAX_PYTHON = os.path.join(REPO, ".venv-jax", "bin", "python")
SOFT_UPDATE = ddpg_module.soft_update  # the timers wrap it; restored after each timed epoch


def make_ours(config, warmup, ctx, mkldnn="auto", seed=0, algorithm=DDPG, layer_norm=False):
    """Our DDPG (or another algorithm class of the library, with its own defaults
    otherwise) in ``config``'s sizes, on the contenders' shared settings; ``layer_norm``: both
    networks with a LayerNorm in every hidden layer."""
    _, policy_sizes, q_sizes, merge, batch = CONFIGS[config]
    env = normalize(GymEnv(ENV_ID))
    algo = algorithm(
        env=env, policy=DeterministicMLPPolicy(env.spec, hidden_sizes=policy_sizes,
                                               layer_norm=layer_norm),
        qfunc=ContinuousMLPQ(env.spec, hidden_sizes=q_sizes, action_merge_layer=merge,
                             layer_norm=layer_norm),
        strategy=OUStrategy(env.spec, sigma=OU_SIGMA), ctx=ctx, batch_size=batch,
        n_epochs=1000, epoch_length=warmup, memory_size=MEMORY_SIZE, memory_start_size=warmup,
        max_path_length=200, qfunc_lr=LEARNING_RATE, policy_lr=LEARNING_RATE,
        soft_target_tau=TAU, discount=DISCOUNT, eval_interval=None, seed=seed,
        progress_bar=False, mkldnn=mkldnn)
    return algo


def time_ours(config, warmup, steps, ctx, mkldnn="auto", algorithm=DDPG, layer_norm=False):
    algo = make_ours(config, warmup, ctx, mkldnn, algorithm=algorithm, layer_norm=layer_norm)
    algo.epoch_length = warmup
    _start_training(algo)
    quiet(algo.train_epoch, 0)  # warm-up: fills the memory, no timing
    algo.epoch_length = steps
    mx.nd.waitall()
    start = time.perf_counter()
    quiet(algo.train_epoch, 1)
    mx.nd.waitall()
    return steps / (time.perf_counter() - start), algo


def quiet(function, *args):
    """Run ``function`` without the epoch's log lines and table on stdout."""
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*args)


def _start_training(algo):
    """What DDPG.train does before its first epoch."""
    from ddpg.replay_mem import ReplayMem
    algo.loop.restore({"obs": algo.env.reset()},
                      ReplayMem(algo.env.observation_space.flat_dim,
                                algo.env.action_space.flat_dim, algo.memory_size))


class SectionTimer(object):
    """Wraps functions to add their wall time to a named section."""

    def __init__(self):
        self.seconds = {}

    def wrap(self, name, function, sync=False):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            result = function(*args, **kwargs)
            if sync:
                mx.nd.waitall()
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
            return result
        return timed


def warmed_up_ours(config, warmup, ctx, mkldnn="auto"):
    """Our DDPG for ``config`` with its replay memory filled by ``warmup`` steps (epoch 0)."""
    algo = make_ours(config, warmup, ctx, mkldnn)
    algo.epoch_length = warmup
    _start_training(algo)
    quiet(algo.train_epoch, 0)
    return algo


def timed_instrumented_epoch(algo, steps):
    """Seconds of one epoch of ``steps`` steps with timers wrapped around its parts; the
    module's soft_update, which the timers may replace, is put back afterwards."""
    try:
        algo.epoch_length = steps
        start = time.perf_counter()
        quiet(algo.train_epoch, 1)
        return time.perf_counter() - start
    finally:
        ddpg_module.soft_update = SOFT_UPDATE


def breakdown_ours(config, warmup, steps, ctx, mkldnn="auto"):
    """Per-step time of each part of a training step (MXNet synchronised after each part,
    so the parts add up; the total is therefore a little slower than the timed run)."""
    algo = warmed_up_ours(config, warmup, ctx, mkldnn)
    timer = SectionTimer()
    env, strategy, memory = algo.env, algo.strategy, algo.memory
    env.step = timer.wrap("env step", env.step)
    strategy.get_action = timer.wrap("action selection", strategy.get_action, sync=True)
    memory.get_batch = timer.wrap("replay sampling", memory.get_batch)
    memory.add_sample = timer.wrap("replay storing", memory.add_sample)
    # the batch: packed on the host and copied to the device in one transfer
    algo._load_batch = timer.wrap("host-to-device copies", algo._load_batch, True)
    ddpg_module.soft_update = timer.wrap("target update", ddpg_module.soft_update, True)
    algo.do_update = timer.wrap("update (all six steps)", algo.do_update, sync=True)
    total = timed_instrumented_epoch(algo, steps)
    seconds = dict(timer.seconds)
    inner = seconds.get("host-to-device copies", 0) + seconds.get("target update", 0)
    seconds["update (all six steps)"] -= inner
    seconds["update: networks and optimisers"] = seconds.pop("update (all six steps)")
    seconds["other (loop, logging)"] = total - sum(seconds.values())
    return {name: 1e6 * value / steps for name, value in seconds.items()}, 1e6 * total / steps


def per_call_ours(config, warmup, steps, ctx, mkldnn="auto"):
    """Each MXNet call of a training step: calls per step and time per call (MXNet
    synchronised after each), and what is left for Python around them.

    At configuration 1's sizes the arithmetic of a call is a few microseconds, so these times
    are MXNet's fixed cost per call, which no arrangement of the same calls removes: the
    floor under our step. The parts: the four executors' forward and backward passes of the
    update, the two optimiser steps, the two soft updates, the statistics sums, the batch
    copies, and acting (the batch-1 policy executor with its copies in and out).
    """
    algo = warmed_up_ours(config, warmup, ctx, mkldnn)
    timer, counts = SectionTimer(), {}

    def instrument(name, owner, attribute):
        timed = timer.wrap(name, getattr(owner, attribute), sync=True)

        def counted(*args, **kwargs):
            counts[name] = counts.get(name, 0) + 1
            return timed(*args, **kwargs)
        setattr(owner, attribute, counted)

    executors = [("target chain executor (mu', Q', y)", algo.target_executor),
                 ("Q-function executor", algo.qfunc.exe),
                 ("policy executor (Q under the policy loss)", algo.policy_executor),
                 ("policy, batch", algo.policy.exe)]
    for name, executor in executors:
        instrument(name + ": forward", executor, "forward")
        instrument(name + ": backward", executor, "backward")
    instrument("Q-function optimiser step", algo.qfunc, "updater")
    instrument("policy optimiser step", algo.policy, "updater")
    instrument("statistics sums", algo.update_stats, "add")
    instrument("batch: host packing", algo, "_fill_batch")
    instrument("batch: host-to-device copies", algo._batch, "upload")
    acting = "acting: observation in, policy forward, action out"  # outside do_update
    instrument(acting, algo.policy, "get_action")
    instrument("update: all of do_update", algo, "do_update")
    instrument("soft update (one network)", ddpg_module, "soft_update")
    total = timed_instrumented_epoch(algo, steps)
    whole_update = timer.seconds.pop("update: all of do_update")
    counts.pop("update: all of do_update")
    rows = [(name, counts[name] / steps, 1e6 * seconds / counts[name])
            for name, seconds in timer.seconds.items()]
    calls_in_update = sum(timer.seconds.values()) - timer.seconds[acting]
    between_calls = whole_update - calls_in_update
    rows.append(("update: Python between these calls", 1.0, 1e6 * between_calls / steps))
    rest = total - sum(timer.seconds.values()) - between_calls
    rows.append(("rest: environment, noise, replay, loop", 1.0, 1e6 * rest / steps))
    return rows, 1e6 * total / steps


def update_flops(config):
    """Floating-point operations of one update as our executors run it (a multiply-add is 2).

    Forward passes: target policy and target Q (target_executor), policy, Q (its update) and
    Q again (policy_executor). Backward passes: the Q update needs weight gradients of every
    layer and input gradients of all but the first (the observation has none); the policy
    executor only input gradients from the output back to the layer the action joins; the
    policy weight gradients and input gradients of all but its first layer.
    """
    _, policy_sizes, q_sizes, merge, batch = CONFIGS[config]
    obs_dim, act_dim = 3, 1
    q_in = [obs_dim] + list(q_sizes)
    q_in[merge] += act_dim
    q_layers = [i * o for i, o in zip(q_in, list(q_sizes) + [1])]
    p_layers = [i * o for i, o in zip([obs_dim] + list(policy_sizes),
                                      list(policy_sizes) + [act_dim])]
    q_macs, p_macs = sum(q_layers), sum(p_layers)
    forward = 2 * p_macs + 3 * q_macs
    q_backward = q_macs + (q_macs - q_layers[0])
    policy_executor_backward = sum(q_layers[merge:])
    p_backward = p_macs + (p_macs - p_layers[0])
    return 2.0 * batch * (forward + q_backward + policy_executor_backward + p_backward)


def matmul_gflops(n=1024, repeat=10):
    """This machine's float32 matrix-multiply rate through MXNet (the compute ceiling).

    The best of ``dot`` and ``FullyConnected`` (the operator our layers use, through oneDNN).
    """
    a = mx.nd.random.uniform(shape=(n, n))
    b = mx.nd.random.uniform(shape=(n, n))
    candidates = {"dot": lambda: mx.nd.dot(a, b),
                  "FullyConnected": lambda: mx.nd.FullyConnected(a, b, num_hidden=n,
                                                                no_bias=True)}
    rates = {}
    for name, matmul in candidates.items():
        matmul().wait_to_read()
        start = time.perf_counter()
        for _ in range(repeat):
            out = matmul()
        out.wait_to_read()
        rates[name] = 2.0 * n ** 3 * repeat / (time.perf_counter() - start) / 1e9
    return max(rates.values())


def time_sb3(config, warmup, steps, threads, seed=0):
    import torch
    from stable_baselines3 import DDPG as SB3DDPG
    from stable_baselines3.common.noise import OrnsteinUhlenbeckActionNoise
    torch.set_num_threads(threads)
    import gymnasium
    _, policy_sizes, q_sizes, _, batch = CONFIGS[config]
    env = gymnasium.make(ENV_ID)
    noise = OrnsteinUhlenbeckActionNoise(mean=np.zeros(1), sigma=OU_SIGMA * np.ones(1))
    model = SB3DDPG("MlpPolicy", env, learning_rate=LEARNING_RATE, buffer_size=MEMORY_SIZE,
                    learning_starts=warmup, batch_size=batch, tau=TAU, gamma=DISCOUNT,
                    train_freq=1, gradient_steps=1, action_noise=noise, seed=seed,
                    device="cpu", policy_kwargs=dict(net_arch=dict(pi=list(policy_sizes),
                                                                   qf=list(q_sizes))))
    model.learn(total_timesteps=warmup)
    start = time.perf_counter()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)
    return steps / (time.perf_counter() - start)


def time_script(name, python, script, config, warmup, steps, threads, extra=()):
    """Steps/s of a contender script on the same work, run by ``python`` (the script's last
    output line is a JSON object)."""
    result = subprocess.run(
        [python, script, "--config", config, "--warmup", str(warmup), "--steps",
         str(steps), "--threads", str(threads)] + list(extra), capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError("the %s contender failed (%s %s):\n%s"
                           % (name, python, script, result.stderr[-3000:]))
    return json.loads(result.stdout.strip().splitlines()[-1])["steps_per_s"]


def time_jax(jax_python, config, warmup, steps, threads):
    """benchmarks/jax_ddpg.py, run by the JAX environment's interpreter."""
    return time_script("JAX", jax_python, JAX_SCRIPT, config, warmup, steps, threads)


def time_gluon(config, warmup, steps, algo):
    """benchmarks/gluon_ddpg.py on the CPU with the MXNet settings ``algo`` (ours) ran with:
    its engine, oneDNN choice and OpenMP threads."""
    threads = algo.omp_threads or int(os.environ["OMP_NUM_THREADS"])
    extra = ["--mkldnn", "on" if algo.mkldnn else "off"]
    if os.environ.get("MXNET_ENGINE_TYPE"):
        extra += ["--engine", os.environ["MXNET_ENGINE_TYPE"]]
    return time_script("Gluon", sys.executable, GLUON_SCRIPT, config, warmup, steps, threads,
                       extra)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--steps", type=int, default=3000, help="timed environment steps")
    parser.add_argument("--warmup", type=int, default=1000,
                        help="steps collected before updates start (not timed)")
    parser.add_argument("--threads", type=int, default=2,
                        help="OMP threads for MXNet and torch.set_num_threads for SB3")
    parser.add_argument("--engine", default=None,
                        help="MXNet engine (MXNET_ENGINE_TYPE); default: ddpg's choice")
    parser.add_argument("--mkldnn", choices=["auto", "on", "off"], default="auto",
                        help="oneDNN kernels (DDPG's mkldnn argument); auto: off for layers "
                             "of at most 64 units")
    parser.add_argument("--ctx", default="cpu", help="cpu, gpu or gpu:N")
    parser.add_argument("--skip-sb3", action="store_true")
    parser.add_argument("--jax-python", default=DEFAULT_JAX_PYTHON,
                        help="the Python of the JAX virtual environment (requirements-jax.txt)")
    parser.add_argument("--skip-jax", action="store_true")
    parser.add_argument("--skip-gluon", action="store_true",
                        help="leave out the Gluon contender (benchmarks/gluon_ddpg.py; "
                             "CPU only)")
    parser.add_argument("--no-breakdown", action="store_true")
    parser.add_argument("--per-call", action="store_true",
                        help="also time each MXNet call of a step, with its count per step")
    parser.add_argument("--worker", choices=["ceiling"] + list(CONFIGS), default=None,
                        help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def run_worker(args):
    """One configuration (or the ceiling) in this process: MXNet fixes its kernel choice at
    its first operator, so each configuration needs a fresh process."""
    logger.set_log_tabular_only(True)
    ctx = ddpg.backend.context.resolve_ctx(args.ctx)
    if args.worker == "ceiling":
        print("float32 matmul ceiling (best of MXNet dot and FullyConnected, 1024x1024, "
              "oneDNN on): %.1f GFLOP/s" % matmul_gflops())
        return
    config = args.worker
    mkldnn = {"auto": "auto", "on": True, "off": False}[args.mkldnn]
    ours, algo = time_ours(config, args.warmup, args.steps, ctx, mkldnn)
    threads = algo.omp_threads
    line = "config %s (%s): ours %.1f steps/s (oneDNN %s, %s)" % (
        config, CONFIGS[config][0], ours, "on" if algo.mkldnn else "off",
        "MXNet's default OpenMP threads" if threads is None else
        "%d OpenMP thread%s" % (threads, "" if threads == 1 else "s"))
    if not args.skip_sb3:
        sb3 = time_sb3(config, args.warmup, args.steps, args.threads)
        line += ", SB3 %.1f steps/s, ratio ours/SB3 %.2fx" % (sb3, ours / sb3)
    if not args.skip_jax:
        jax = time_jax(args.jax_python, config, args.warmup, args.steps, args.threads)
        line += ", JAX %.1f steps/s, ratio ours/JAX %.2fx" % (jax, ours / jax)
    if not args.skip_gluon and ctx.device_type == "cpu":
        gluon = time_gluon(config, args.warmup, args.steps, algo)
        line += ", Gluon %.1f steps/s, ratio ours/Gluon %.2fx" % (gluon, ours / gluon)
    print(line)
    sys.stdout.flush()
    parts = None
    if not args.no_breakdown:
        parts, total = breakdown_ours(config, args.warmup, min(args.steps, 2000), ctx, mkldnn)
        print("  breakdown per step (synchronised, %.0f us in all):" % total)
        for name, micros in sorted(parts.items(), key=lambda item: -item[1]):
            print("    %-34s %8.1f us" % (name, micros))
    if args.per_call:
        rows, total = per_call_ours(config, args.warmup, min(args.steps, 2000), ctx, mkldnn)
        print("  MXNet calls per step (synchronised after each, %.0f us per step in all):"
              % total)
        print("    %-48s %9s %9s %9s" % ("call", "per step", "us/call", "us/step"))
        for name, per_step, micros in rows:
            print("    %-48s %9.2f %9.1f %9.1f" % (name, per_step, micros, per_step * micros))
    if config != "1":
        flops = update_flops(config)
        print("  arithmetic: %.3f GFLOP per update; %.2f GFLOP/s over whole steps"
              % (flops / 1e9, flops * ours / 1e9))
        if parts:
            update_us = sum(v for k, v in parts.items() if k.startswith("update") or
                            k in ("host-to-device copies", "target update"))
            print("  during the update alone: %.2f GFLOP/s" % (flops / (update_us * 1e-6) / 1e9))


def main():
    args = parse_args()
    if args.worker:
        run_worker(args)
        return
    if not args.skip_jax and not os.path.exists(args.jax_python):
        sys.exit("throughput.py: error: no JAX environment at %s: create it with `python3 -m "
                 "venv .venv-jax && .venv-jax/bin/pip install -r requirements-jax.txt`, name "
                 "another with --jax-python, or leave the contender out with --skip-jax"
                 % args.jax_python)
    print("machine: %d CPU cores visible, ctx %s, MXNet engine %s, threads %d, mxnet %s"
          % (os.cpu_count(), args.ctx, os.environ.get("MXNET_ENGINE_TYPE", "ddpg default"),
             args.threads, mx.__version__))
    sys.stdout.flush()
    passed = [arg for arg in sys.argv[1:]]
    workers = (["ceiling"] if args.ctx == "cpu" else []) + list(args.configs)
    for worker in workers:
        subprocess.run([sys.executable, os.path.abspath(__file__)] + passed +
                       ["--worker", worker], check=True)


if __name__ == "__main__":
    main()
