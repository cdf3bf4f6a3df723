"""Every hyperparameter of DDPG and TD3 in one table: its defaults, range, help and whether
checkpoints record it.

A hyperparameter is declared once, as a field of :class:`ddpg.config.DDPGConfig` (or of
:class:`ddpg.config.TD3Config`) whose metadata (:func:`ddpg.config.setting`) holds its
:class:`Kind`, help, flag and checkpoint marks; :data:`TABLE` is read from those fields, one
:class:`Hyperparameter` row each. The other places that need a hyperparameter read the table
or are checked against it, so they cannot drift apart:

- ``DDPG``'s and ``TD3``'s signatures keep literal defaults (the MXNet example's, and Python
  needs them there); ``tests/test_hyperparams.py`` and ``tests/test_config.py`` check that
  they equal the fields' defaults;
- the example's flags (:mod:`ddpg.experiment.cli`) take their default, help and type from a
  row (:attr:`Hyperparameter.flag` is the argparse destination, ``None`` for an argument the
  command line does not set), and :func:`from_flags` turns parsed flags back into
  constructor arguments;
- a config validates itself (:meth:`ddpg.config.DDPGConfig.validate`) with each field's
  :class:`Kind` (its range, and the error message naming the argument) and the relations
  between the replay-memory sizes; :func:`check` applies the same checks to a dictionary;
- presets are checked by :func:`check_flag_values`;
- :func:`checkpointed_names` and :func:`structural_names` say which arguments a checkpoint's
  manifest records and which of them its contents depend on.

The module imports only :mod:`ddpg.config` and :mod:`ddpg.kinds` of ``ddpg`` (MXNet only
when an optimizer name is checked), so that the algorithm modules and the experiment tooling
can both use it.
"""
import collections
import collections.abc
import dataclasses

from ddpg.config import (CARTPOLE_MAX_PATH_LENGTH, CONFIGS, FALLBACK_MAX_PATH_LENGTH,
                         SAME_NAME, check_relations)
from ddpg.kinds import (AUTO_SWITCH, AUTO_THREADS, CLOSED_UNIT, CONTEXT, FINITE, HALF_OPEN_UNIT,
                        HER_STRATEGY, INTEGER, NON_NEGATIVE, NON_NEGATIVE_INT, OPTIMIZER,
                        POSITIVE, POSITIVE_INT, POSITIVE_NUMBER, SWITCH, UPDATES, VEC_ENV, Kind,
                        updates_per_sample)

__all__ = ["Kind", "POSITIVE_INT", "NON_NEGATIVE_INT", "POSITIVE", "POSITIVE_NUMBER",
           "NON_NEGATIVE", "CLOSED_UNIT", "HALF_OPEN_UNIT", "FINITE", "OPTIMIZER", "SWITCH",
           "INTEGER", "UPDATES", "CONTEXT", "VEC_ENV", "HER_STRATEGY", "AUTO_SWITCH",
           "AUTO_THREADS", "Hyperparameter", "TABLE", "DEFAULT_ENV", "CARTPOLE_MAX_PATH_LENGTH",
           "FALLBACK_MAX_PATH_LENGTH", "updates_per_sample", "get", "algorithm_names", "rows",
           "names", "checked_names", "defaults", "by_flag", "checkpointed_names",
           "structural_names", "check", "check_flag_values", "from_flags"]

#: The environment of the original run.py (--env's default): the cart-pole.
DEFAULT_ENV = "cartpole"


class Hyperparameter(collections.namedtuple("Hyperparameter", [
        "name", "default", "kind", "help", "flag", "cli_default", "from_flag", "cli_options",
        "checkpointed", "structural", "algorithms", "defaults", "doc"])):
    """One row of the table.

    ``name``: the constructor argument; ``default``: DDPG's default (the first algorithm's
    that takes it), ``defaults``: ``{algorithm: default}`` of every algorithm that takes it;
    ``kind``: a :class:`Kind`; ``help``: the example's ``--help`` text; ``flag``: the
    example's argparse destination (None: no flag), ``cli_default`` its default,
    ``from_flag`` the function that turns the flag's value into the argument's and
    ``cli_options`` more ``add_argument`` keywords; ``checkpointed``: recorded in a checkpoint's
    manifest; ``structural``: a checkpoint's contents depend on it (restoring with another
    value is an error); ``algorithms``: the ``--algo`` values that take it; ``doc``: the
    config field's documentation. Each is read from the setting's config field
    (:func:`ddpg.config.setting`).
    """

    def check(self, value):
        """Raise ``ValueError`` naming the hyperparameter unless ``value`` is in range."""
        self.kind.check(self.name, value)


def _table():
    """The rows, read from the registered config classes' fields
    (:data:`ddpg.config.CONFIGS`): DDPGConfig's in order, then each other algorithm's own. A
    row's ``default`` is the first declaring algorithm's, ``defaults`` each one's."""
    rows_, by_name = [], {}
    for algorithm, config_class in CONFIGS.items():
        own = set(config_class.__dataclass_fields__)
        for field in dataclasses.fields(config_class):
            if field.name not in by_name:
                meta = field.metadata
                by_name[field.name] = dict(
                    name=field.name, default=field.default, kind=meta["kind"],
                    help=meta["help"],
                    flag=field.name if meta["flag"] == SAME_NAME else meta["flag"],
                    cli_default=meta["cli_default"], from_flag=meta["from_flag"],
                    cli_options=dict(meta["cli_options"]), checkpointed=meta["checkpointed"],
                    structural=meta["structural"], algorithms=(), defaults={},
                    doc=meta["doc"])
                rows_.append(field.name)
            if field.name in own:
                row = by_name[field.name]
                row["algorithms"] += (algorithm,)
                row["defaults"][algorithm] = field.default
    return tuple(Hyperparameter(**by_name[name]) for name in rows_)


_CACHE = {}


def _current_table():
    """The table of the algorithms registered now (built again after a registration)."""
    key = tuple(CONFIGS.items())
    if _CACHE.get("key") != key:
        table = _table()
        _CACHE.update(key=key, table=table, by_name={row.name: row for row in table})
    return _CACHE


class _Table(collections.abc.Sequence):
    """The rows of the algorithms registered now, as a read-only sequence that follows the
    registrations (an algorithm's module may register its config after this module loads)."""

    def __getitem__(self, index):
        return _current_table()["table"][index]

    def __len__(self):
        return len(_current_table()["table"])

    def __repr__(self):
        return "TABLE(%d rows)" % len(self)


#: Every hyperparameter, in ``DDPG.__init__``'s order (then each other algorithm's own
#: arguments), read from the registered config classes' fields.
TABLE = _Table()


def get(name):
    """The row of hyperparameter ``name`` (``KeyError`` naming the known ones)."""
    by_name = _current_table()["by_name"]
    try:
        return by_name[name]
    except KeyError:
        raise KeyError("unknown hyperparameter %r; known: %s" % (name, ", ".join(by_name)))


def algorithm_names():
    """The ``--algo`` names of the registered algorithms, DDPG's first."""
    return list(CONFIGS)


def rows(algorithm=None):
    """The rows ``algorithm`` (``"ddpg"``, ``"td3"``; None: either) takes, in table order."""
    return [row for row in _current_table()["table"]
            if algorithm is None or algorithm in row.algorithms]


def names(algorithm=None):
    """The hyperparameter names, in table order."""
    return [row.name for row in rows(algorithm)]


def checked_names(algorithm=None):
    """The names :func:`check` checks (the others' :attr:`Kind.checked_by` names who does)."""
    return [row.name for row in rows(algorithm) if row.kind.accepts is not None]


def defaults(algorithm="ddpg"):
    """``{name: default}`` of the algorithm ``algorithm`` names (``"ddpg"``, ``"td3"``, ...):
    its own default where it declares one, else DDPG's."""
    return {row.name: row.defaults.get(algorithm, row.default) for row in rows(algorithm)}


def by_flag():
    """``{argparse destination: row}`` of the hyperparameters the example sets by a flag."""
    return {row.flag: row for row in _current_table()["table"] if row.flag is not None}


def checkpointed_names(algorithm=None):
    """The constructor arguments a checkpoint's manifest records, in table order (of
    ``algorithm``'s arguments, or of every algorithm's)."""
    return tuple(row.name for row in rows(algorithm) if row.checkpointed)


def structural_names(algorithm=None):
    """The recorded arguments a checkpoint's contents depend on (of ``algorithm``'s arguments,
    or of every algorithm's)."""
    return tuple(row.name for row in rows(algorithm) if row.structural)


def check(values):
    """Raise ``ValueError`` naming the first hyperparameter of ``values`` (``{name: value}``)
    out of its range, in table order, then for the replay memory's sizes that do not fit
    together. Names the table checks elsewhere (:attr:`Kind.checked_by`) are skipped."""
    for row in _current_table()["table"]:
        if row.name in values:
            row.check(values[row.name])
    check_relations(values)


def check_flag_values(values):
    """Check the hyperparameters among ``values`` (``{argparse destination: value}``, e.g. a
    preset) against their ranges, as the constructor would receive them; ``None`` (the
    algorithm's own default) and the flags that are not hyperparameters pass."""
    rows_by_flag = by_flag()
    for flag, value in values.items():
        row = rows_by_flag.get(flag)
        if row is not None and value is not None:
            row.check(row.from_flag(value))


def from_flags(values, algorithm="ddpg"):
    """The constructor arguments of ``algorithm`` that the example's parsed flags ``values``
    (``{argparse destination: value}``) set. A flag whose value is None is left out, so that
    the algorithm's own default applies (``--policy-delay``: 1 for DDPG, 2 for TD3)."""
    arguments = {}
    for row in rows(algorithm):
        if row.flag is not None and values[row.flag] is not None:
            arguments[row.name] = row.from_flag(values[row.flag])
    return arguments
