"""Named hyperparameter presets for ``examples/run_ddpg.py --preset NAME``.

A preset is a set of defaults for the example script's flags, keyed by the flags' argparse
destinations (``--qfunc-lr`` is ``qfunc_lr``). Precedence, lowest to highest: the script's own
defaults (the MXNet example's ``run.py``), the preset, flags given on the command line. So
``--preset pendulum --batch-size 64`` is the pendulum preset with batch 64.

Presets exist so that a learning benchmark names *one* reviewed set of settings per task
instead of a long command line copied between scripts, and so that the docs, the benchmark
script and the runs' ``params.json`` agree on what was run.

``original``
    The MXNet example's ``run.py`` on rllab's cart-pole: 32-unit networks (Q: 32-32, action,
    32), batch 32, Adam with policy lr 1e-4 and Q lr 1e-3, tau 1e-3, OU sigma 0.3, 10,000
    warm-up transitions, 100-step episodes, 1000 epochs of 1000 steps. These are the script's
    defaults; the preset spells them out so that they can be listed and compared, reading
    them where they are written: the hyperparameters' ``cli_default`` in
    :mod:`ddpg.hyperparams` (run.py's values where they differ from ``DDPG``'s), the
    networks' defaults in :mod:`ddpg.utils`, the OU noise's in :mod:`ddpg.strategies`.

``pendulum``
    gymnasium ``Pendulum-v1`` with the rl-baselines3-zoo DDPG settings: 400-300 networks, lr
    1e-3 for both, tau 0.005, batch 256, buffer 2e5, gamma 0.98, 10,000 warm-up steps taken
    with uniformly random actions (``start_steps``), Gaussian exploration noise of std 0.1 in
    the environment's torque units (``gaussian_sigma`` 0.05: our sigma is relative to half
    the action range, and ``normalize`` maps [-2, 2] to [-1, 1]), 20,000 steps. As in the DDPG
    paper the action joins the Q network after its first hidden layer (``action_merge_layer``
    1). Evaluation: 10 deterministic episodes (2000 steps) after every 1000-step epoch, and
    (``benchmarks/learning.py``) the final policy on 750 episodes, as the zoo's benchmark
    measured its figure. Initialisation: fan-in uniform hidden layers (PyTorch's default
    scale, which SB3 gets) and the DDPG paper's U(+-3e-3) output layer instead of the
    original's Normal(0.01): over 5 seeds the final policy's 750-episode return went from
    -157.3 to -146.1 (docs/results.md), mostly by removing one slow seed.

``cartpole``
    The ``original`` settings plus DDPG's ``scale_reward`` 0.01, the value rllab's own DDPG
    cart-pole example used (the MXNet example dropped it). Rewards of 10 per step make
    Q-values of several hundred that the 32-unit networks with lr 1e-3 chase unstably;
    scaled, 3 of 3 seeds reach an evaluation return of 950 within 90 epochs.

``halfcheetah``, ``hopper``, ``walker2d``
    MuJoCo ``HalfCheetah-v5``, ``Hopper-v5`` and ``Walker2d-v5`` (gymnasium 1.x with the ``mujoco`` extra, see
    ``requirements-bench.txt``) with the DDPG paper's networks, learning rates and
    initialisation (400-300, the action entering the Q network at the second layer, Adam
    1e-4 for the policy and 1e-3 for Q, final layer U(+-3e-3) and fan-in uniform hidden
    layers, OU theta 0.15 sigma 0.2, gamma 0.99, buffer 1e6), the batch size and target rate
    of the later re-tuned implementations (batch 256 and tau 0.005, as the TD3 authors'
    "OurDDPG", Stable-Baselines3 and CleanRL) and TD3's warm-up of 25,000 uniformly random
    actions. 1000-step episodes; 200 epochs of 5000 steps (1M steps) with 10 evaluation
    episodes (10,000 steps) after each.

``cleanrl-halfcheetah``, ``cleanrl-hopper``, ``cleanrl-walker2d``
    CleanRL's DDPG (``ddpg_continuous_action.py``) on the ``-v4`` environments its published
    results used: 256-256 networks with the action joining the Q network at its input, Adam
    3e-4 for both, batch 256, tau 0.005, gamma 0.99, buffer 1e6, Gaussian exploration noise
    of std 0.1 of the action half-range, 25,000 uniformly random warm-up steps before the
    first update, the policy and target updates on every second Q update (``policy_delay``
    2, CleanRL's ``policy_frequency``), PyTorch's default initialisation in every layer
    (fan-in uniform), 1M steps. Evaluation as the other MuJoCo presets; CleanRL reports the
    training episodes' returns, which ``AverageEsReturn`` records.

``d4pg-halfcheetah``, ``d4pg-walker2d``
    D4PG (``--algo d4pg``) on ``HalfCheetah-v4`` and ``Walker2d-v4`` with the settings of
    Acme's D4PG for the gym tasks (``examples/baselines/rl_continuous/run_d4pg.py`` and
    ``acme/agents/jax/d4pg/config.py``): 51 atoms; the support [-1000, 1000] for Walker2d
    (Acme's ``vmax`` for gym); Adam 3e-4 for both networks; Gaussian exploration noise of std
    0.2; 5-step returns; gamma 0.99; batch 256; buffer 1e6; the targets copied every 100
    updates (``target_update_period``: ``soft_target_tau`` 1, ``target_update_interval``
    100); the observation and action concatenated at the critic's input. Differences, with
    their reasons: HalfCheetah's support is [-1500, 1500], by the rule of thumb of Acme's
    D4PG README (the discounted sum of the largest reward over an episode: about 15 per step
    times 100), because its returns reach 1100 where Walker2d's stay below 500; the networks,
    the warm-up and the update rate are those of our DDPG and TD3 runs (``cleanrl-*``), so
    that the three algorithms compare on one network and the same first data: 256-256 ReLU
    MLPs, not Acme's 256-256-256 LayerNorm MLPs (MXNet 1.9's LayerNorm on the CPU also makes
    an update about twice as slow, docs/performance.md); 25,000 uniformly random actions
    before the first update (TD3's), where Acme acts with its noisy policy and updates from
    the 1000th transition; one update per environment step, where Acme's 32 samples per
    inserted transition (batch 256) are one update per 8 steps of its 4 distributed actors;
    fan-in uniform hidden layers and U(+-3e-3) output layers (Acme: a near-zero policy
    output layer). 1000-step episodes; 200 epochs of 5000 steps (1M steps) with 10 evaluation
    episodes after each.

``d4pg-pendulum``
    The ``pendulum`` preset (the SB3 zoo's DDPG settings) with D4PG's critic: 51 atoms and
    5-step returns (the D4PG paper's and Acme's), on the support [-800, 0] that Acme's rule of
    thumb gives Pendulum's rewards (between -16.3 and 0 a step; discounted at 0.98 over 200
    steps, -800 at worst). 20,000 steps: a few minutes.

``fetchreach``, ``fetchpush``
    gymnasium-robotics' ``FetchReach-v4`` and ``FetchPush-v4`` with hindsight experience replay
    and the HER authors' settings (OpenAI Baselines' ``her/experiment/config.py``, one
    worker): 3x256 networks seeing observation and goal together, the action joining the Q
    network at its input; Adam 1e-3 for both; batch 256; buffer 1e6; gamma 0.98 (their
    ``1 - 1/T`` for 50-step episodes); the ``future`` strategy with k = 4; observations and
    goals normalised with clipping (``obs_norm``); an action L2 penalty of 1.0 in the policy
    loss; exploration by Gaussian noise of 0.2 with a uniformly random action instead at
    probability 0.3; two environments (their ``rollout_batch_size`` 2) with 40 updates per
    100 transitions (``n_batches`` 40 per cycle of 2 episodes) and the targets moved by 0.05
    (``polyak`` 0.95) once per 40 updates, updates starting with the first stored episodes;
    10 deterministic evaluation episodes (500 steps) after each epoch. Epochs of 1000 steps,
    10 of them (10k steps), for FetchReach; of 5000 steps (one of their epochs of 50 cycles
    with one worker), 50 of them, for FetchPush. Differences: PyTorch-style fan-in uniform
    initialisation instead of TensorFlow's Glorot uniform, and no clipping of the targets to
    ``[-1/(1-gamma), 0]``.

Presets may also carry benchmark metadata under :data:`METADATA` (not flags), used by
``benchmarks/learning.py``: a task's "solved" threshold for the evaluation return, and the
number of episodes of the final policy's evaluation.
"""
import argparse
import copy

from ddpg import hyperparams
from ddpg.strategies import DEFAULT_OU_SIGMA, DEFAULT_OU_THETA
from ddpg.utils import (DEFAULT_POLICY_HIDDEN_SIZES, DEFAULT_QFUNC_ACTION_MERGE_LAYER,
                        DEFAULT_QFUNC_HIDDEN_SIZES)

__all__ = ["PRESETS", "METADATA", "RUN_PY_HYPERPARAMETERS", "preset_names", "get_preset",
           "add_preset_argument", "parse_args_with_preset", "check_preset_keys"]

#: The hyperparameters the example's run.py sets; the ``original`` preset takes their
#: values from the table (``cli_default``: the script's defaults).
RUN_PY_HYPERPARAMETERS = ("batch_size", "qfunc_lr", "policy_lr", "soft_target_tau",
                          "memory_size", "memory_start_size", "discount", "epoch_length",
                          "n_epochs", "eval_samples")


def _original():
    """The example's run.py, read from where its values are written (see the docstring)."""
    values = {
        "env": hyperparams.DEFAULT_ENV,
        "policy_hidden_sizes": list(DEFAULT_POLICY_HIDDEN_SIZES),
        "qfunc_hidden_sizes": list(DEFAULT_QFUNC_HIDDEN_SIZES),
        "qfunc_action_merge_layer": DEFAULT_QFUNC_ACTION_MERGE_LAYER,
        "ou_theta": DEFAULT_OU_THETA,
        "ou_sigma": DEFAULT_OU_SIGMA,
        # the script's default (None) leaves it to the environment: this, for the cart-pole
        "max_path_length": hyperparams.CARTPOLE_MAX_PATH_LENGTH,
    }
    values.update((name, hyperparams.get(name).cli_default) for name in RUN_PY_HYPERPARAMETERS)
    return values


#: Flag values per preset, keyed by argparse destination. Lists (not tuples) for the
#: ``nargs="+"`` flags, so that a preset's value looks like a parsed command line's.
PRESETS = {
    "original": _original(),
    "pendulum": {
        "env": "Pendulum-v1",
        "policy_hidden_sizes": [400, 300],
        "qfunc_hidden_sizes": [400, 300],
        "qfunc_action_merge_layer": 1,
        "batch_size": 256,
        "qfunc_lr": 1e-3,
        "policy_lr": 1e-3,
        "soft_target_tau": 0.005,
        "memory_size": 200000,
        "memory_start_size": 10000,
        "discount": 0.98,
        "strategy": "gaussian",
        "gaussian_sigma": 0.05,
        "max_path_length": 200,
        "epoch_length": 1000,
        "n_epochs": 20,
        "eval_samples": 2000,
        "start_steps": 10000,
        "hidden_init": "fanin",
        "output_init": "uniform3e-3",
    },
}
PRESETS["cartpole"] = dict(PRESETS["original"], ddpg_scale_reward=0.01)

#: What the MuJoCo presets share (see the module docstring).
_MUJOCO = {
    "policy_hidden_sizes": [400, 300],
    "qfunc_hidden_sizes": [400, 300],
    "qfunc_action_merge_layer": 1,
    "batch_size": 256,
    "qfunc_lr": 1e-3,
    "policy_lr": 1e-4,
    "soft_target_tau": 0.005,
    "memory_size": 1000000,
    "discount": 0.99,
    "ou_theta": 0.15,
    "ou_sigma": 0.2,
    "max_path_length": 1000,
    "epoch_length": 5000,
    "n_epochs": 200,
    "eval_samples": 10000,
    # TD3's 25,000 uniformly random warm-up steps and the DDPG paper's initialisation: with
    # them Hopper-v5 reached 1717 at 100k steps instead of 263 (docs/results.md)
    "start_steps": 25000,
    "memory_start_size": 25000,
    "hidden_init": "fanin",
    "output_init": "uniform3e-3",
}
PRESETS["halfcheetah"] = dict(_MUJOCO, env="HalfCheetah-v5")
PRESETS["hopper"] = dict(_MUJOCO, env="Hopper-v5")
PRESETS["walker2d"] = dict(_MUJOCO, env="Walker2d-v5")

#: CleanRL's DDPG settings (see the module docstring); its runs used the -v4 tasks.
_CLEANRL = dict(
    _MUJOCO,
    policy_hidden_sizes=[256, 256],
    qfunc_hidden_sizes=[256, 256],
    qfunc_action_merge_layer=0,
    qfunc_lr=3e-4,
    policy_lr=3e-4,
    strategy="gaussian",
    gaussian_sigma=0.1,
    policy_delay=2,
    hidden_init="fanin",
    output_init="fanin",
)
del _CLEANRL["ou_theta"], _CLEANRL["ou_sigma"]
PRESETS["cleanrl-halfcheetah"] = dict(_CLEANRL, env="HalfCheetah-v4")
PRESETS["cleanrl-hopper"] = dict(_CLEANRL, env="Hopper-v4")
PRESETS["cleanrl-walker2d"] = dict(_CLEANRL, env="Walker2d-v4")

#: D4PG with Acme's settings for the gym MuJoCo tasks, on the ``cleanrl-*`` runs' networks
#: (see the module docstring).
_D4PG_MUJOCO = dict(
    _CLEANRL,
    algo="d4pg",
    atoms=51,
    n_step=5,
    gaussian_sigma=0.2,
    soft_target_tau=1.0,
    target_update_interval=100,
    output_init="uniform3e-3",
)
del _D4PG_MUJOCO["policy_delay"]  # D4PG's own: every update
PRESETS["d4pg-halfcheetah"] = dict(_D4PG_MUJOCO, env="HalfCheetah-v4", v_min=-1500.0,
                                   v_max=1500.0)
PRESETS["d4pg-walker2d"] = dict(_D4PG_MUJOCO, env="Walker2d-v4", v_min=-1000.0, v_max=1000.0)
#: D4PG's distributional critic and 5-step returns on the pendulum preset's settings.
PRESETS["d4pg-pendulum"] = dict(PRESETS["pendulum"], algo="d4pg", atoms=51, v_min=-800.0,
                                v_max=0.0, n_step=5)

#: The HER authors' settings (see the module docstring) on the Fetch tasks.
_FETCH = dict(
    policy_hidden_sizes=[256, 256, 256],
    qfunc_hidden_sizes=[256, 256, 256],
    qfunc_action_merge_layer=0,
    batch_size=256,
    qfunc_lr=1e-3,
    policy_lr=1e-3,
    soft_target_tau=0.05,
    target_update_interval=40,
    memory_size=1000000,
    memory_start_size=0,
    discount=0.98,
    strategy="gaussian",
    gaussian_sigma=0.2,
    random_action_prob=0.3,
    action_l2=1.0,
    her=True,
    her_strategy="future",
    her_k=4,
    obs_norm=True,
    n_envs=2,
    train_freq=100,
    gradient_steps=40,
    max_path_length=50,
    eval_samples=500,
    hidden_init="fanin",
    output_init="fanin",
)
PRESETS["fetchreach"] = dict(_FETCH, env="FetchReach-v4", epoch_length=1000, n_epochs=10)
PRESETS["fetchpush"] = dict(_FETCH, env="FetchPush-v4", epoch_length=5000, n_epochs=50)

#: Per-preset facts for benchmarking that are not flags of the example script.
#: ``solved_return``: evaluation AverageReturn counted as solving the task (the cart-pole's
#: maximum is 1000: 10 per step for 100 steps).
METADATA = {
    "original": {"solved_return": 950.0},
    "cartpole": {"solved_return": 950.0},
    # the SB3 zoo's benchmark evaluated its final policy on 750 episodes (150,000 steps)
    "pendulum": {"final_eval_episodes": 750},
    "halfcheetah": {},
    "hopper": {},
    "walker2d": {},
    "cleanrl-halfcheetah": {},
    "cleanrl-hopper": {},
    "cleanrl-walker2d": {},
    "fetchreach": {},
    "fetchpush": {},
    "d4pg-pendulum": {"final_eval_episodes": 750},
    "d4pg-halfcheetah": {},
    "d4pg-walker2d": {},
}


def preset_names():
    """The preset names, in the order they are documented."""
    return list(PRESETS)


def get_preset(name):
    """A deep copy of preset ``name``'s flag values (callers may change it freely)."""
    if name not in PRESETS:
        raise ValueError("unknown preset %r; known presets: %s"
                         % (name, ", ".join(preset_names())))
    return copy.deepcopy(PRESETS[name])


def add_preset_argument(parser):
    """Add ``--preset NAME`` to ``parser`` (its value is applied by parse_args_with_preset)."""
    parser.add_argument(
        "--preset", choices=preset_names(), default=None,
        help="named hyperparameter settings (see ddpg/experiment/presets.py and docs/options.md); flags "
             "given on the command line override them")
    return parser


def check_preset_keys(parser, values):
    """Raise ``ValueError`` unless every key of ``values`` is a destination of ``parser``.

    ``ArgumentParser.set_defaults`` accepts any name silently, so a misspelt or renamed
    flag in a preset would otherwise be ignored without a word.
    """
    known = {action.dest for action in parser._actions}  # pylint: disable=protected-access
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError("preset keys %s are not options of this parser" % (unknown,))


def parse_args_with_preset(parser, argv=None):
    """Parse ``argv`` with ``parser``, the chosen ``--preset`` supplying the defaults.

    Two passes: the first reads only ``--preset`` (everything else is left for later); the
    preset's values then become the parser's defaults, and the second pass parses the whole
    command line, so explicit flags win over the preset and the preset over the built-in
    defaults. ``parser`` must have been given :func:`add_preset_argument`.
    """
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--preset", choices=preset_names(), default=None)
    known, _ = first.parse_known_args(argv)
    if known.preset is not None:
        values = get_preset(known.preset)
        check_preset_keys(parser, values)
        hyperparams.check_flag_values(values)  # a bad value fails here, naming its name
        parser.set_defaults(**values)
    return parser.parse_args(argv)
