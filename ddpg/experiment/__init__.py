"""The commands (``ddpg-train``, ``ddpg-evaluate``, ...) and their command-line experiment.

The installed commands are modules here, each with an ``entry()`` (:mod:`ddpg.experiment.commands`
lists them): :mod:`~ddpg.experiment.train`, :mod:`~ddpg.experiment.evaluate`,
:mod:`~ddpg.experiment.export`, :mod:`~ddpg.experiment.plot`, :mod:`~ddpg.experiment.sweep`;
the scripts of ``examples/`` run them from a checkout.

``ddpg-train`` and the Ray Tune sweeps (:mod:`ddpg.experiment.tune`) configure a run with the
same options, parsed by the same parser and built by the same functions, so that a sweep's
trial is exactly the run ``ddpg-train`` would make from the same flags. The package's modules,
one job each:

- :mod:`ddpg.experiment.cli`: the argument parser (the hyperparameters' flags come from
  :mod:`ddpg.hyperparams`) and the flags that the library's error messages name;
- :mod:`ddpg.experiment.build`: the environment, networks, strategy and algorithm built from
  the parsed arguments (:func:`prepare_run` for a whole command line);
- :mod:`ddpg.experiment.resume`: ``--resume``, the run's arguments read back from its
  checkpoint, and its progress.csv continued;
- :mod:`ddpg.experiment.run_logs`: the run folder's debug.log, progress.csv, params.json and
  TensorBoard events;
- :mod:`ddpg.experiment.config`: configurations as dictionaries of option names (a trial's),
  turned into parsed arguments by going through the parser itself.

This module re-exports their names, as the scripts, benchmarks and tests import them.
"""
from ddpg.checkpoint import read_manifest  # noqa: F401  (tests read manifests from here)
from ddpg.experiment.cli import (RaisingArgumentParser, build_parser, explicit_flags,
                                 flags_named_in, option_names, split_run_flags, usage_error)
from ddpg.experiment.resume import (INVOCATION_FLAGS, RESUME_FLAGS, checkpoint_run_folder,
                                    continue_progress, resumed_args)
from ddpg.experiment.run_logs import (close_logging, setup_logging, setup_tensorboard,
                                      tensorboard_problem)
from ddpg.experiment.build import (build_env, check_ctx, make_algorithm, make_env,
                                   make_strategy, prepare_run)
from ddpg.experiment.config import args_from_config, check_option_names, config_to_argv
from ddpg.hyperparams import (CARTPOLE_MAX_PATH_LENGTH, FALLBACK_MAX_PATH_LENGTH,
                              updates_per_sample)

__all__ = ["CARTPOLE_MAX_PATH_LENGTH", "FALLBACK_MAX_PATH_LENGTH", "RESUME_FLAGS",
           "INVOCATION_FLAGS", "RaisingArgumentParser", "build_parser", "explicit_flags",
           "resumed_args", "continue_progress", "make_env", "make_strategy", "make_algorithm",
           "setup_logging", "close_logging", "tensorboard_problem", "setup_tensorboard",
           "option_names", "check_option_names", "config_to_argv", "args_from_config",
           "split_run_flags", "prepare_run", "check_ctx", "build_env", "usage_error",
           "flags_named_in", "checkpoint_run_folder", "updates_per_sample"]
