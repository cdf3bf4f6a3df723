"""The work every contender of ``benchmarks/throughput.py`` does, written once.

The configurations (network sizes, action merge layer, batch size), the hyperparameters, the
replay memory and the timed loop: Pendulum-v1 with 200-step episodes, Ornstein-Uhlenbeck noise
of sigma 0.1 (theta 0.15) on actions in [-1, 1] scaled to the torque range, a 200,000-transition
numpy memory sampled uniformly with replacement, warm-up steps taken with the policy and noise
but no update, one untimed update (a compiled contender compiles there), then one update per
environment step for the timed steps.

It imports only the standard library, and numpy and gymnasium when it runs (after
``jax_ddpg.py`` has pinned its cores), so it loads both in the JAX environment (numpy 2,
``benchmarks/jax_ddpg.py``) and in MXNet's (numpy 1.23, ``benchmarks/gluon_ddpg.py`` and
``throughput.py``).
"""
import argparse
import json
import sys
import time

#: name -> (description, policy hidden sizes, Q hidden sizes, Q action merge layer, batch size)
CONFIGS = {
    "1": ("original sizes: 32-unit layers, batch 32", (32, 32), (32, 32, 32), 2, 32),
    "2": ("paper sizes: 400-300, batch 64", (400, 300), (400, 300), 1, 64),
    "3": ("SB3 defaults: 400-300, batch 256", (400, 300), (400, 300), 1, 256),
    "4": ("CleanRL sizes: 256-256, action at the Q input, batch 256", (256, 256), (256, 256),
          0, 256),
}
ENV_ID = "Pendulum-v1"
LEARNING_RATE = 1e-3
TAU = 0.005
DISCOUNT = 0.99
OU_THETA, OU_SIGMA = 0.15, 0.1
MEMORY_SIZE = 200000


def argument_parser(description, threads_help):
    """The flags every contender script takes: --config, --warmup, --steps, --threads, --seed
    (throughput.py passes the first four)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="1")
    parser.add_argument("--warmup", type=int, default=1000,
                        help="steps collected before updates start (not timed)")
    parser.add_argument("--steps", type=int, default=3000, help="timed environment steps")
    parser.add_argument("--threads", type=int, default=2, help=threads_help)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def make_env():
    """The environment, its observation size and its action size."""
    import gymnasium
    env = gymnasium.make(ENV_ID)
    return env, env.observation_space.shape[0], env.action_space.shape[0]


class Memory(object):
    """A numpy ring buffer of transitions, sampled uniformly with replacement."""

    def __init__(self, obs_dim, act_dim, size):
        import numpy as np
        self.np = np
        self.obs = np.zeros((size, obs_dim), np.float32)
        self.act = np.zeros((size, act_dim), np.float32)
        self.rwd = np.zeros(size, np.float32)
        self.end = np.zeros(size, np.float32)
        self.nxt = np.zeros((size, obs_dim), np.float32)
        self.size, self.top, self.capacity = 0, 0, size

    def add(self, obs, act, rwd, end, nxt):
        i = self.top
        self.obs[i], self.act[i], self.rwd[i], self.end[i], self.nxt[i] = obs, act, rwd, end, nxt
        self.top = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def batch(self, batch_size):
        index = self.np.random.randint(0, self.size, size=batch_size)
        return (self.obs[index], self.act[index], self.rwd[index], self.end[index],
                self.nxt[index])


def measure(args, env, act, update, wait):
    """Steps/s of the contender's ``act(obs) -> action in [-1, 1]`` (one float32
    observation) and ``update(obs, act, rwd, end, nxt) -> Q loss`` (a numpy batch; ``rwd`` and
    ``end`` of shape (batch,)) over ``args.steps`` timed steps; ``wait(q_loss)`` waits until
    the contender's queued work is done and returns the Q loss as a float. Returns the
    result's JSON fields."""
    import numpy as np
    np.random.seed(args.seed)
    obs_dim, act_dim = env.observation_space.shape[0], env.action_space.shape[0]
    scale = (env.action_space.high - env.action_space.low) / 2.0
    middle = (env.action_space.high + env.action_space.low) / 2.0
    batch_size = CONFIGS[args.config][4]
    memory = Memory(obs_dim, act_dim, MEMORY_SIZE)
    noise = np.zeros(act_dim)
    obs, _ = env.reset(seed=args.seed)

    def env_step(obs, noise):
        action = np.asarray(act(obs.astype(np.float32)))
        noise = noise + OU_THETA * (0.0 - noise) + OU_SIGMA * np.random.randn(act_dim)
        action = np.clip(action + noise, -1.0, 1.0)
        nxt, rwd, terminated, truncated, _ = env.step(action * scale + middle)
        memory.add(obs, action, rwd, float(terminated), nxt)
        if terminated or truncated:
            nxt, _ = env.reset()
            noise = np.zeros(act_dim)
        return nxt, noise

    for _ in range(args.warmup):
        obs, noise = env_step(obs, noise)
    # the first update compiles or builds the contender's graphs: not timed
    wait(update(*memory.batch(batch_size)))
    start = time.perf_counter()
    for _ in range(args.steps):
        obs, noise = env_step(obs, noise)
        q_loss = update(*memory.batch(batch_size))
    q_loss = wait(q_loss)
    seconds = time.perf_counter() - start
    return {"config": args.config, "steps": args.steps, "threads": args.threads,
            "steps_per_s": args.steps / seconds, "final_q_loss": q_loss}


def main(parse_args, run, argv=None):
    """A contender script's entry point: ``run(parse_args(argv))``'s result printed as one JSON
    line (throughput.py reads the last line)."""
    print(json.dumps(run(parse_args(argv))))
    sys.stdout.flush()
