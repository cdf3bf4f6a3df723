"""Version-2 checkpoints saved with state in flight resume exactly as they did when written.

tests/data/v2_nstep holds open n-step sums in both of its environments, tests/data/v2_her a
pending hindsight episode in each (both written by tests/data/make_v2_fixtures.py, with the
code of their time). The current code restores each into the same algorithm in a new process
held to AVX2 (as tests/test_same_numbers.py runs), trains the one remaining epoch and must
reach the fingerprint recorded in tests/data/v2_fixtures_resumed.json: every network's
parameters, the replay memory's arrays and the counters (tests/fixture_resume.py).
"""
import json
import os

import pytest

import fixture_resume
from ddpg import checkpoint


@pytest.fixture(scope="module")
def resumed():
    """``{fixture: fingerprint}`` of every fixture resumed by the current code."""
    return fixture_resume.resume_in_subprocess()


@pytest.fixture(scope="module")
def recorded():
    with open(fixture_resume.RESUMED_FILE) as handle:
        return json.load(handle)


def _differences(expected, actual):
    """The parts (``networks/qfunc``, ``memory/obss``, ``itr``, ...) that differ."""
    found = []
    for key in sorted(set(expected) | set(actual)):
        want, got = expected.get(key), actual.get(key)
        if isinstance(want, dict) and isinstance(got, dict):
            found += ["%s/%s" % (key, name) for name in sorted(set(want) | set(got))
                      if want.get(name) != got.get(name)]
        elif want != got:
            found.append("%s: %r, expected %r" % (key, got, want))
    return found


@pytest.mark.parametrize("name", sorted(fixture_resume.FIXTURES))
def test_the_fixture_is_a_version_2_checkpoint(name):
    manifest = checkpoint.read_manifest(os.path.join(fixture_resume.DATA, name))
    assert manifest["format_version"] == 2


@pytest.mark.parametrize("name", sorted(fixture_resume.FIXTURES))
def test_the_fixture_resumes_to_the_recorded_fingerprint(name, resumed, recorded):
    differences = _differences(recorded[name], resumed[name])
    assert not differences, "%s resumed differently: %s" % (name, ", ".join(differences))
