#!/usr/bin/env python
"""Stable-Baselines3's DDPG with the rl-baselines3-zoo Pendulum-v1 settings, measured our way.

The zoo publishes one training run of its DDPG on Pendulum-v1 (-152 +- 94: the final policy on
750 episodes). This script trains that configuration for several seeds on the machine it runs on and
evaluates each final policy exactly as ``benchmarks/learning.py`` evaluates ours (750
deterministic episodes, the evaluation environment seeded once with the run's seed + 1000 and
then reset unseeded, which gives the same start states as ``examples/evaluate.py``), so the
two libraries are compared on the same protocol rather than against one published run.

    pip install -r requirements-bench.txt -e .
    python benchmarks/sb3_pendulum.py --seeds 1 2 3 4 5 --out runs/sb3_pendulum
    python benchmarks/sb3_pendulum.py --summarize-only --out runs/sb3_pendulum

Zoo settings (hyperparams/ddpg.yml, Pendulum-v1): 20,000 steps, MlpPolicy with net_arch
[400, 300], gamma 0.98, buffer 200,000, learning_starts 10,000, Gaussian action noise of std
0.1, train_freq 1, gradient_steps 1, learning rate 1e-3; SB3's defaults otherwise (batch 256,
tau 0.005). Each seed writes ``OUT/seed_S.json``; the summary reads every such file.
"""
import argparse
import glob
import json
import os
import sys
import time

EVAL_SEED_OFFSET = 1000  # as benchmarks/learning.py's final evaluation


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--eval-episodes", type=int, default=750)
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    parser.add_argument("--out", default=os.path.join("runs", "sb3_pendulum"))
    parser.add_argument("--summarize-only", action="store_true")
    return parser.parse_args(argv)


def train_and_evaluate(seed, steps, eval_episodes, threads):
    import gymnasium as gym
    import numpy as np
    import torch
    from stable_baselines3 import DDPG
    from stable_baselines3.common.noise import NormalActionNoise

    torch.set_num_threads(threads)
    env = gym.make("Pendulum-v1")
    act_dim = env.action_space.shape[0]
    model = DDPG("MlpPolicy", env, learning_rate=1e-3, buffer_size=200000,
                 learning_starts=10000, gamma=0.98, train_freq=1, gradient_steps=1,
                 action_noise=NormalActionNoise(np.zeros(act_dim), 0.1 * np.ones(act_dim)),
                 policy_kwargs=dict(net_arch=[400, 300]), seed=seed, verbose=0)
    started = time.time()
    model.learn(total_timesteps=steps)
    train_time = time.time() - started

    eval_env = gym.make("Pendulum-v1")
    returns = []
    obs, _ = eval_env.reset(seed=seed + EVAL_SEED_OFFSET)
    for episode in range(eval_episodes):
        if episode:
            obs, _ = eval_env.reset()
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = eval_env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return {"seed": seed, "steps": steps, "train_time_s": train_time,
            "episodes": eval_episodes, "mean": float(np.mean(returns)),
            "std": float(np.std(returns)), "returns": returns,
            "eval_seed": seed + EVAL_SEED_OFFSET}


def summarize(out):
    import numpy as np
    results = []
    for path in sorted(glob.glob(os.path.join(out, "seed_*.json"))):
        with open(path) as result_file:
            results.append(json.load(result_file))
    if not results:
        return "no seed_*.json in %s" % out
    means = [r["mean"] for r in results]
    return ("SB3 DDPG, zoo settings, Pendulum-v1, %d seed(s), %s steps: final policy over %s "
            "episodes: %.1f +- %.1f over seeds (per seed: %s); train %.0f s per seed (mean)"
            % (len(results), "/".join(sorted({str(r["steps"]) for r in results})),
               "/".join(sorted({str(r["episodes"]) for r in results})), np.mean(means),
               np.std(means), ", ".join("%d: %.1f" % (r["seed"], r["mean"]) for r in results),
               np.mean([r["train_time_s"] for r in results])))


def main(argv=None):
    args = parse_args(argv)
    if not args.summarize_only:
        try:
            import stable_baselines3  # noqa: F401
        except ImportError:
            sys.exit("needs Stable-Baselines3: pip install -r requirements-bench.txt")
        os.makedirs(args.out, exist_ok=True)
        for seed in args.seeds:
            result = train_and_evaluate(seed, args.steps, args.eval_episodes, args.threads)
            path = os.path.join(args.out, "seed_%d.json" % seed)
            with open(path + ".tmp", "w") as result_file:
                json.dump(result, result_file)
            os.replace(path + ".tmp", path)
            print("seed %d: %.1f +- %.1f over %d episodes (train %.0f s)" % (
                seed, result["mean"], result["std"], result["episodes"],
                result["train_time_s"]), flush=True)
    print(summarize(args.out))


if __name__ == "__main__":
    main()
