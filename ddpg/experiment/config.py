"""Runs configured by dictionaries of run_ddpg.py's option names (Ray Tune trials).

A trial's configuration is a dictionary of the script's option names, the argparse
destinations (``--qfunc-lr`` is ``qfunc_lr``): :func:`args_from_config` turns it into the
script's parsed arguments by going through the parser itself (:func:`config_to_argv` writes
the command line), so types, choices and presets are checked exactly as on the command line.
"""
import argparse

from ddpg.experiment.cli import RaisingArgumentParser, build_parser, option_names, parser_actions
from ddpg.experiment.presets import get_preset, parse_args_with_preset

__all__ = ["check_option_names", "config_to_argv", "args_from_config"]


def check_option_names(names, exclude=(), what="option"):
    """Raise ``ValueError`` naming every name in ``names`` that is not one of run_ddpg.py's
    options (or is in ``exclude``), with the list of valid names."""
    valid = option_names(exclude)
    unknown = [name for name in names if name not in valid]
    if unknown:
        raise ValueError("unknown %s name%s %s; valid names (run_ddpg.py's options, '-' "
                         "written '_'): %s" % (what, "s" if len(unknown) > 1 else "",
                                                ", ".join(repr(n) for n in unknown),
                                                ", ".join(valid)))


def config_to_argv(config, parser=None):
    """The run_ddpg.py command line that sets the options of ``config``.

    Values are written as the user would type them: ``True`` for a switch
    (``{"layer_norm": True}`` is ``--layer-norm``; ``False`` leaves it off), a list for the
    options that take several values (``policy_hidden_sizes``), ``None`` for "not given"
    (the default, or the preset's value, applies).
    """
    actions = parser_actions(parser or build_parser())
    check_option_names(config)
    argv = []
    for name, value in config.items():
        action = actions[name]
        flag = max(action.option_strings, key=len)
        if isinstance(action, argparse._StoreTrueAction):  # pylint: disable=protected-access
            if not isinstance(value, bool):
                raise ValueError("%s is a switch: its value must be true or false, got %r"
                                 % (name, value))
            if value:
                argv.append(flag)
        elif value is None:
            continue
        elif action.nargs == "+":
            values = list(value) if isinstance(value, (list, tuple)) else [value]
            if not values:
                raise ValueError("%s needs at least one value" % (name,))
            argv.append(flag)
            argv.extend(_text(item) for item in values)
        else:
            # "--flag=value" so that values starting with "-" are not taken for options
            argv.append("%s=%s" % (flag, _text(value)))
    return argv


def _text(value):
    """A value as the command line would spell it (repr keeps floats exact)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return repr(float(value))  # numpy floats too
    return str(value)


def args_from_config(config, **set_by_caller):
    """run_ddpg.py's parsed arguments for ``config``, a dict of its option names.

    ``config`` may name a ``preset``, whose values it overrides, as flags do on the command
    line. ``set_by_caller`` holds options the caller fixes (a sweep sets ``log_dir``,
    ``ctx``, ``no_progress_bar``); they are added after ``config`` and win. Unknown names,
    values of the wrong type or outside an option's choices raise ``ValueError``.
    """
    config = dict(config)
    config.update(set_by_caller)
    if config.get("preset") is not None:
        get_preset(config["preset"])  # ValueError naming the known presets
    parser = build_parser(parser_class=RaisingArgumentParser)
    return parse_args_with_preset(parser, config_to_argv(config, parser))
