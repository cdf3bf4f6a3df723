"""The README and the manual in docs/: links resolve, flags exist, the API reference is whole.

* Every relative link (and image) of README.md and docs/*.md points at a file or folder of the
  repository, and every ``#anchor`` at a heading of the target page (GitHub's anchor slugs).
* Every ``--flag`` in a command that runs one of the repository's scripts (``python
  examples/run_ddpg.py ...``, ``python benchmarks/learning.py ...``, ``python -m ddpg.plot
  ...``, in code blocks and inline code) or one of the installed commands (``ddpg-train ...``,
  whose ``--help`` is that of its entry point) is an option of that script's ``--help``; flags
  after a lone ``--`` of the scripts that pass them on belong to ``examples/run_ddpg.py``.
  Every other ``--flag`` the pages mention is an option of at least one script.
* docs/api.md is what ``docs/gen_api.py`` writes from the code, and names every public name.
"""
import functools
import importlib.util
import inspect
import os
import re
import subprocess
import sys

import pytest

from ddpg.experiment.commands import COMMANDS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(REPO, "docs")

#: The scripts whose flags the pages may mention, as a page writes them.
SCRIPTS = {
    "examples/run_ddpg.py": ["examples/run_ddpg.py"],
    "examples/evaluate.py": ["examples/evaluate.py"],
    "examples/sweep.py": ["examples/sweep.py"],
    "benchmarks/learning.py": ["benchmarks/learning.py"],
    "benchmarks/throughput.py": ["benchmarks/throughput.py"],
    "benchmarks/soak.py": ["benchmarks/soak.py"],
    "benchmarks/tune_scaling.py": ["benchmarks/tune_scaling.py"],
    "benchmarks/sb3_pendulum.py": ["benchmarks/sb3_pendulum.py"],
    "benchmarks/jax_ddpg.py": ["benchmarks/jax_ddpg.py"],
    "benchmarks/gluon_ddpg.py": ["benchmarks/gluon_ddpg.py"],
    "benchmarks/faults.py": ["benchmarks/faults.py"],
    "benchmarks/collection.py": ["benchmarks/collection.py"],
    "benchmarks/replay_sampling.py": ["benchmarks/replay_sampling.py"],
    "benchmarks/rendering.py": ["benchmarks/rendering.py"],
    "benchmarks/compare_revisions.py": ["benchmarks/compare_revisions.py"],
    "benchmarks/algorithm_cost.py": ["benchmarks/algorithm_cost.py"],
    "benchmarks/projection.py": ["benchmarks/projection.py"],
    "tools/mutation.py": ["tools/mutation.py"],
    "ddpg.experiment.plot": ["-m", "ddpg.plot"],
    "ddpg.experiment.export": ["-m", "ddpg.export"],
    "docs/gen_api.py": ["docs/gen_api.py"],
}
#: The console scripts (ddpg-train, ...), each run through its entry point.
SCRIPTS.update({name: ["-c", "import {0}; {0}.{1}()".format(*target.split(":"))]
                for name, target, _ in COMMANDS})
#: Scripts that pass the flags after a lone ``--`` on to examples/run_ddpg.py.
PASS_ON = {"benchmarks/learning.py", "examples/sweep.py", "benchmarks/tune_scaling.py",
           "benchmarks/faults.py", "ddpg-sweep"}
#: Flags of other programs that the pages show (``ray start``, ``pip``, ``pytest``).
OTHER_PROGRAMS = ("ray ", "pip ", "python -m pip ", "pytest", "python -m pytest",
                  "python3 -m venv", "tensorboard ", "python tests/reference_runs.py")

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
SCRIPT = re.compile(r"python3?\s+(?:-m\s+ddpg\.(?:plot|export)"
                    r"|(?:examples|benchmarks|docs|tools)/\w+\.py)"
                    r"|(?<![\w/])(?:examples/|benchmarks/|tools/)?(?:run_ddpg|evaluate|sweep|"
                    r"learning|throughput|jax_ddpg|gluon_ddpg|faults|mutation|soak|tune_scaling|"
                    r"sb3_pendulum|compare_revisions)\.py"
                    r"|(?<![\w/-])(?:%s)(?![\w-])" % "|".join(name for name, _, _ in COMMANDS))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def pages():
    found = [os.path.join(REPO, "README.md")]
    found += sorted(os.path.join(DOCS, name) for name in os.listdir(DOCS)
                    if name.endswith(".md"))
    return found


def split_fences(text):
    """``(prose lines, code lines)`` of a markdown text: fenced blocks go to code."""
    prose, code, fenced = [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            prose.append("")
            continue
        (code if fenced else prose).append(line)
        if fenced:
            prose.append("")
    return prose, code


def github_slugs(text):
    """The anchors GitHub gives the headings of a markdown page (outside code blocks)."""
    prose, _ = split_fences(text)
    slugs, seen = set(), {}
    for line in prose:
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        slugs.add(slug if count == 0 else "%s-%d" % (slug, count))
    return slugs


def read(path):
    with open(path, encoding="utf-8") as page:
        return page.read()


def broken_links(path):
    """The relative links of a page that do not resolve, as messages."""
    prose, _ = split_fences(read(path))
    text = "\n".join(re.sub(r"`[^`]*`", "", line) for line in prose)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                    if file_part else path)
        if not os.path.exists(resolved):
            broken.append("%s: no such file %s" % (target, os.path.relpath(resolved, REPO)))
        elif anchor and (not resolved.endswith(".md")
                         or anchor not in github_slugs(read(resolved))):
            broken.append("%s: no heading #%s in %s" % (target, anchor,
                                                          os.path.relpath(resolved, REPO)))
    return broken


@pytest.mark.parametrize("path", pages(), ids=lambda p: os.path.relpath(p, REPO))
def test_relative_links_resolve(path):
    assert broken_links(path) == []


def test_link_check_finds_broken_links(tmp_path):
    """The checker itself: a missing file and a missing anchor are both reported."""
    (tmp_path / "other.md").write_text("# A heading\n\n## Same\n\n## Same\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-heading) [dup](other.md#same-1) [own](#top)\n\n# Top\n"
                    "[missing](nothere.md) [anchor](other.md#nope)\n"
                    "```\n[in code](ignored.md)\n# not a heading\n```\n")
    assert broken_links(str(page)) == [
        "nothere.md: no such file %s" % os.path.relpath(str(tmp_path / "nothere.md"), REPO),
        "other.md#nope: no heading #nope in %s" % os.path.relpath(str(tmp_path / "other.md"),
                                                                  REPO)]


@functools.lru_cache(maxsize=None)
def script_flags(script):
    """The option strings of ``script --help`` (run once per script)."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable] + SCRIPTS[script] + ["--help"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, timeout=300)
    assert result.returncode == 0, "%s --help failed:\n%s" % (script, result.stdout)
    flags = set()
    for line in result.stdout.splitlines():
        if re.match(r"\s{2}-", line):  # an option's line: its invocation, then its help
            flags.update(FLAG.findall(re.split(r"\s{2,}", line.strip())[0]))
    assert flags, "no options found in %s --help" % script
    return frozenset(flags)


def script_of(token):
    """The SCRIPTS key of a script as a command writes it."""
    if token in SCRIPTS:  # an installed command
        return token
    for script, argv in SCRIPTS.items():
        if argv[0] == "-m" and argv[1] in token:  # python -m ddpg.plot
            return script
    name = token.split()[-1]
    for script in SCRIPTS:
        if script.endswith("/" + os.path.basename(name)):
            return script
    raise KeyError(token)


def span_lines(prose):
    """Prose lines, a line that leaves an inline code span open joined with the next line of
    its paragraph (a span may continue there)."""
    lines = []
    for line in prose:
        if lines and lines[-1].count("`") % 2 and line.strip():
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


def code_texts(text):
    """Commands of a page: fenced code lines (continuations joined) and inline code spans."""
    prose, code = split_fences(text)
    prose = span_lines(prose)
    joined = re.sub(r"\\\n\s*", " ", "\n".join(code))
    texts = joined.splitlines()
    for line in prose:
        texts.extend(re.findall(r"`([^`]+)`", line))
    return texts, "\n".join(re.sub(r"`[^`]*`", "", line) for line in prose)


def flags_by_script(text):
    """``(uses, loose)``: ``[(script, flag)]`` of the commands that run a script, and the
    ``--flags`` mentioned elsewhere (prose, or code that runs no script)."""
    texts, plain = code_texts(text)
    uses, loose = [], FLAG.findall(plain)
    for snippet in texts:
        snippet = snippet.split(" #")[0]  # a shell comment
        matches = list(SCRIPT.finditer(snippet))
        if not matches:
            if not snippet.lstrip(" '\"").startswith(OTHER_PROGRAMS):
                loose.extend(FLAG.findall(snippet))
            continue
        loose.extend(flag for part in re.split(r"&&|\|\||;", snippet[:matches[0].start()])
                     if not part.lstrip(" '\"").startswith(OTHER_PROGRAMS)
                     for flag in FLAG.findall(part))
        for index, match in enumerate(matches):
            end = matches[index + 1].start() if index + 1 < len(matches) else len(snippet)
            command = re.split(r"&&|\|\||;|\|", snippet[match.end():end])[0]
            script = script_of(match.group(0))
            own, _, passed = command.partition(" -- ") if script in PASS_ON else (command, "",
                                                                                   "")
            uses += [(script, flag) for flag in FLAG.findall(own)]
            uses += [("examples/run_ddpg.py", flag) for flag in FLAG.findall(passed)]
    return uses, loose


def unknown_flags(text):
    """Messages for the flags of a page that no --help lists."""
    uses, loose = flags_by_script(text)
    unknown = ["%s %s" % (script, flag) for script, flag in uses
               if flag not in script_flags(script)]
    everything = set().union(*(script_flags(script) for script in SCRIPTS))
    unknown += ["%s (in no script's --help)" % flag for flag in loose if flag not in everything]
    return sorted(set(unknown))


@pytest.mark.parametrize("path", pages(), ids=lambda p: os.path.relpath(p, REPO))
def test_flags_exist_in_the_scripts_help(path):
    assert unknown_flags(read(path)) == []


def test_flag_check_finds_invented_flags():
    """The checker itself: a flag a script or a command lacks, in a command, after ``--`` and
    in prose."""
    text = ("```bash\npython examples/run_ddpg.py --n-epochs 5 --no-such-flag 1\n"
            "python benchmarks/learning.py --task pendulum -- --batch-size 64 --task x\n"
            "ddpg-evaluate runs/x/params --episodes 2 --n-epochs 3\n"
            "ddpg-sweep --seeds 1 2 -- --n-epochs 2 --seeds 3\n"
            "ray start --head --port 6390\n```\n"
            "Use `python -m ddpg.plot runs -o x.png --hline a=1 --bogus` or `--invented`.\n"
            "A span may continue on the next line: `ddpg-evaluate\n--video` and `ddpg-train\n"
            "--video-every 2`.\n")
    assert unknown_flags(text) == ["--invented (in no script's --help)",
                                   "ddpg-evaluate --n-epochs",
                                   "ddpg.experiment.plot --bogus",
                                   "examples/run_ddpg.py --no-such-flag",
                                   "examples/run_ddpg.py --seeds",
                                   "examples/run_ddpg.py --task"]


def load_gen_api():
    spec = importlib.util.spec_from_file_location("gen_api", os.path.join(DOCS, "gen_api.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_is_up_to_date():
    gen_api = load_gen_api()
    assert read(os.path.join(DOCS, "api.md")) == gen_api.render(), (
        "docs/api.md is out of date: run python docs/gen_api.py")


def test_api_reference_names_every_public_name():
    """Every module and every public name it defines has a heading; re-exports are named."""
    gen_api = load_gen_api()
    api = read(os.path.join(DOCS, "api.md"))
    headings = set(re.findall(r"^#{2,3} `([^`]+)`$", api, flags=re.M))
    missing = []
    for module_name in gen_api.module_names():
        module = importlib.import_module(module_name)
        own, elsewhere = gen_api.public_names(module)
        missing += [name for name in [module_name] + ["%s.%s" % (module_name, n) for n in own]
                    if name not in headings]
        missing += ["%s.%s (re-export)" % (module_name, name) for name in elsewhere
                    if "`%s` (from" % name not in api]
        if not hasattr(module, "__all__"):  # independently of the generator's source parsing
            missing += ["%s.%s (by inspect)" % (module_name, name)
                        for name, obj in vars(module).items()
                        if not name.startswith("_") and (inspect.isclass(obj)
                                                         or inspect.isfunction(obj))
                        and obj.__module__ == module_name and name not in own]
    assert missing == []
    # the example's modules, where its users look for them
    for module_name in ("ddpg.ddpg", "ddpg.policies", "ddpg.qfuncs", "ddpg.replay_mem",
                        "ddpg.strategies", "ddpg.utils", "ddpg.logger", "ddpg.envs"):
        assert module_name in headings
    # ReplayMem lives with the other memory kinds; its example import path re-exports it
    assert "ddpg.ddpg.DDPG" in headings and "ddpg.replay.uniform.ReplayMem" in headings
    assert "`ReplayMem` (from `ddpg.replay.uniform`" in api


def strings_of(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)
    elif isinstance(value, str):
        yield value


def test_committed_results_hold_no_machine_paths():
    """The JSON files under docs/results (summaries, and the runs' params.json and
    benchmark.json) name folders relative to the run root, the run folder or the repository,
    never absolute paths."""
    import json
    folder = os.path.join(DOCS, "results")
    files = sorted(os.path.relpath(os.path.join(root, name), folder)
                   for root, _, names in os.walk(folder) for name in names
                   if name.endswith(".json"))
    assert len(files) > 20
    absolute = []
    for name in files:
        with open(os.path.join(folder, name)) as result_file:
            data = json.load(result_file)
        absolute += ["%s: %s" % (name, text) for text in strings_of(data)
                     if os.path.isabs(text) or re.match(r"[A-Za-z]:\\", text)
                     or text.startswith("~")]
    assert absolute == []
