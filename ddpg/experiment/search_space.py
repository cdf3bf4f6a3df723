"""Search spaces of sweeps (:mod:`ddpg.experiment.tune`): which run_ddpg.py options vary, and how.

Kept apart from :mod:`ddpg.experiment.tune` and free of Ray so that a space given on the
command line or in Python is checked completely, with run_ddpg.py's own parser, before Ray
starts (and so that the checks are tested where Ray is not installed). A space maps
run_ddpg.py option names to fixed values or searches: :class:`Search` objects,
``{"grid": [...]}``-style dicts (also ``tune.grid_search``'s ``{"grid_search": [...]}``) or
Ray Tune sampling objects.
"""
import json

from ddpg import experiment, hyperparams

__all__ = ["RESERVED_OPTIONS", "SEARCH_KINDS", "Search", "normalize_name", "check_space",
           "parse_cli_values", "space_from_cli", "space_to_json", "check_seeds", "is_number",
           "is_ray_domain"]

#: run_ddpg.py options that a sweep sets for every trial, with the reason.
RESERVED_OPTIONS = {
    "seed": "seeds are given with --seeds (run_sweep(seeds=...))",
    "ctx": "the device follows --gpus-per-trial (gpu when a trial has a GPU share)",
    "log_dir": "each trial logs into its own trial folder",
    "resume": "trials resume from their Tune checkpoints (--resume resumes a sweep)",
    "snapshot_mode": "checkpoints are Tune checkpoints (--checkpoint-freq)",
    "snapshot_gap": "checkpoints are Tune checkpoints (--checkpoint-freq)",
    "no_progress_bar": "trials never show a progress bar",
    "video_every": "trials record no videos (ddpg-train --video-every records one run's)",
    "video_camera": "trials record no videos (ddpg-train --video-every records one run's)",
}
SEARCH_KINDS = ("grid", "choice", "uniform", "loguniform")


class Search(object):
    """How one option varies: ``grid`` (every value, crossed with the other grids),
    ``choice`` (one value drawn at random per sample), ``uniform`` or ``loguniform`` (a number
    drawn between two bounds). Random kinds are drawn ``num_samples`` times; every draw runs
    with every seed."""

    def __init__(self, kind, values):
        if kind not in SEARCH_KINDS:
            raise ValueError("search kind must be one of %s, got %r"
                             % (", ".join(SEARCH_KINDS), kind))
        if not isinstance(values, (list, tuple)) or not values:
            raise ValueError("%s needs a non-empty list of values, got %r" % (kind, values))
        values = list(values)
        if kind in ("uniform", "loguniform"):
            if len(values) != 2 or not all(is_number(v) for v in values):
                raise ValueError("%s needs two numbers [low, high], got %r" % (kind, values))
            low, high = float(values[0]), float(values[1])
            if not low < high:
                raise ValueError("%s needs low < high, got %r" % (kind, values))
            if kind == "loguniform" and low <= 0:
                raise ValueError("loguniform needs positive bounds, got %r" % (values,))
            values = [low, high]
        self.kind = kind
        self.values = values

    def __eq__(self, other):
        return (isinstance(other, Search) and (self.kind, self.values)
                == (other.kind, other.values))

    def __repr__(self):
        return "Search(%r, %r)" % (self.kind, self.values)

    def candidates(self):
        """Values to check against the option's type: all listed ones, or both bounds."""
        return list(self.values)

    def to_json(self):
        return {self.kind: list(self.values)}

    def to_tune(self, tune):
        if self.kind == "grid":
            return tune.grid_search(list(self.values))
        if self.kind == "choice":
            return tune.choice(list(self.values))
        return getattr(tune, self.kind)(*self.values)


def is_number(value):
    """An int or float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def normalize_name(name):
    """``--qfunc-lr``, ``qfunc-lr`` and ``qfunc_lr`` all name the option ``qfunc_lr``."""
    return str(name).strip().lstrip("-").replace("-", "_")


def _as_search(name, value):
    """A space entry as a :class:`Search`, a Ray sampling object, or a plain (fixed) value."""
    if isinstance(value, Search):
        return value
    if isinstance(value, dict) and len(value) == 1:
        (kind, values), = value.items()
        if kind == "grid_search":  # what ray.tune.grid_search returns
            kind = "grid"
        if kind in SEARCH_KINDS:
            try:
                return Search(kind, values)
            except ValueError as error:
                raise ValueError("%s: %s" % (name, error))
    if isinstance(value, dict):
        raise ValueError("%s: a search is written {KIND: [values]} with KIND one of %s; got %r"
                         % (name, ", ".join(SEARCH_KINDS), value))
    return value


def is_ray_domain(value):
    """A Ray Tune sampling object (tune.uniform(...), tune.choice(...), ...)."""
    return type(value).__module__.startswith("ray.tune.search")


def check_space(space):
    """Validate a sweep's configuration and return it with names normalised.

    ``space`` maps run_ddpg.py option names to fixed values, :class:`Search` objects,
    ``{"grid": [...]}``-style dicts (also ``tune.grid_search``'s ``{"grid_search": [...]}``) or
    Ray Tune sampling objects. Raises ``ValueError`` for an unknown name (listing the valid
    ones), a name the sweep sets itself, or a value run_ddpg.py would refuse (each grid or
    choice value and both bounds of a range are checked with its parser, and a
    hyperparameter's against its range in :mod:`ddpg.hyperparams`).
    """
    checked = {}
    for raw_name, value in space.items():
        name = normalize_name(raw_name)
        if name in checked:
            raise ValueError("option %s is given twice" % (name,))
        if name in RESERVED_OPTIONS:
            raise ValueError("option %s cannot be set in a sweep: %s"
                             % (name, RESERVED_OPTIONS[name]))
        checked[name] = _as_search(name, value)
    experiment.check_option_names(list(checked), exclude=RESERVED_OPTIONS,
                                  what="hyperparameter")
    for name, value in checked.items():
        if isinstance(value, Search):
            candidates = value.candidates()
            if value.kind in ("uniform", "loguniform"):
                if _option_type(name) is not float:
                    raise ValueError("%s takes %s values: draw them with grid or choice, not %s"
                                     % (name, _type_name(name), value.kind))
        elif is_ray_domain(value):
            candidates = [value.sample()]
        else:
            candidates = [value]
        for candidate in candidates:
            try:
                args = experiment.args_from_config({name: candidate})
                # the hyperparameters' ranges, which the algorithm checks when a trial starts
                hyperparams.check_flag_values({name: getattr(args, name)})
            except ValueError as error:
                raise ValueError("%s=%r is not a valid run_ddpg.py value: %s"
                                 % (name, candidate, error))
    return checked


def _action(name):
    for action in experiment.build_parser()._actions:  # pylint: disable=protected-access
        if action.dest == name:
            return action
    experiment.check_option_names([name], exclude=RESERVED_OPTIONS, what="hyperparameter")
    raise AssertionError("unreachable")


def _option_type(name):
    return _action(name).type


def _type_name(name):
    kind = _option_type(name)
    return getattr(kind, "__name__", "text") if kind else "text"


def parse_cli_values(name, text):
    """The values of a command-line entry ``NAME=V1,V2``, typed as run_ddpg.py types them.

    Values are separated by commas; an option that takes several numbers
    (``policy_hidden_sizes``) takes them separated by spaces: ``"64 64,400 300"``. Switches
    take ``true`` or ``false``.
    """
    action = _action(name)
    values = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise ValueError("%s: empty value in %r" % (name, text))
        if action.nargs == 0:  # a switch (store_true)
            if item.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError("%s is a switch: its values are true or false, got %r"
                                 % (name, item))
            values.append(item.lower() in ("true", "1", "yes"))
            continue
        convert = action.type or str
        try:
            if action.nargs == "+":
                values.append([convert(part) for part in item.split()])
            else:
                values.append(convert(item))
        except (TypeError, ValueError):
            raise ValueError("%s takes %s values, got %r" % (name, _type_name(name), item))
    return values


def _split_assignment(text, flag):
    name, sep, values = text.partition("=")
    if not sep or not name.strip() or not values.strip():
        raise ValueError("%s must look like NAME=V1,V2, got %r" % (flag, text))
    return normalize_name(name), values


def space_from_cli(grid=(), choice=(), uniform=(), loguniform=(), space_json=None,
                   fixed=None):
    """A checked search space from the command line's pieces.

    ``grid``/``choice``/``uniform``/``loguniform``: ``NAME=V1,V2`` texts; ``space_json``: a
    JSON object (text) in :func:`check_space`'s form with ``{"grid": [...]}``-style searches;
    ``fixed``: run_ddpg.py's explicit flags as a dict (``experiment.explicit_flags``). A name
    may appear only once across all of them.
    """
    space = {}

    def add(name, value, origin):
        if name in space:
            raise ValueError("%s is set twice (again by %s)" % (name, origin))
        space[name] = value

    if space_json:
        try:
            loaded = json.loads(space_json)
        except ValueError as error:
            raise ValueError("--space is not valid JSON (%s)" % (error,))
        if not isinstance(loaded, dict):
            raise ValueError("--space must be a JSON object of option names, got %r"
                             % (loaded,))
        for name, value in loaded.items():
            add(normalize_name(name), value, "--space")
    for kind, entries in (("grid", grid), ("choice", choice), ("uniform", uniform),
                          ("loguniform", loguniform)):
        for text in entries:
            name, values = _split_assignment(text, "--" + kind)
            if name in RESERVED_OPTIONS:
                raise ValueError("option %s cannot be set in a sweep: %s"
                                 % (name, RESERVED_OPTIONS[name]))
            add(name, Search(kind, parse_cli_values(name, values)), "--" + kind)
    for name, value in (fixed or {}).items():
        add(name, value, "the run_ddpg.py flags after --")
    return check_space(space)


def space_to_json(space):
    """A JSON-able copy of a checked space (searches as ``{KIND: [values]}``)."""
    return {name: (value.to_json() if isinstance(value, Search)
                   else {"ray": _describe_domain(value)} if is_ray_domain(value) else value)
            for name, value in space.items()}


def _describe_domain(domain):
    """``"Float(1e-05, 0.001) LogUniform"``: a Ray sampling object in words."""
    return "%s%s %s" % (type(domain).__name__, getattr(domain, "domain_str", ""),
                        type(getattr(domain, "sampler", None)).__name__)


def check_seeds(seeds):
    """``seeds`` as a list of distinct ints, or ``ValueError``."""
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ValueError("seeds must be a non-empty list of integers, got %r" % (seeds,))
    if len(set(seeds)) != len(seeds):
        raise ValueError("seeds must differ, got %r" % (seeds,))
    return seeds
