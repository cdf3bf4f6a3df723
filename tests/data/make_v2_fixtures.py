"""Write tests/data/v2_nstep and tests/data/v2_her, two small checkpoints of format version 2
as the library saves them, and tests/data/v2_fixtures_resumed.json, their resumed fingerprints.

    python tests/data/make_v2_fixtures.py

Each fixture holds state in flight: v2_nstep (cart-pole, n_step=3, prioritised replay, two
environments stepped together) is saved with an n-step sum open in both environments, v2_her
(tests/goal_envs.py's goal environment, her=True, obs_norm=True, two environments) with an
unfinished episode pending in its replay memory for each; the script asserts both. Each is saved
at the end of the first epoch of a two-epoch run; the script then resumes each in a new process
and records the fingerprint of the second epoch's end (networks, replay memory, counters;
tests/fixture_resume.py builds, resumes and fingerprints for this script and the test alike).
Everything runs with numpy and oneDNN held to AVX2, as tests/reference_runs.py runs. v2_nstep's
resumed run must be the uninterrupted run (asserted); v2_her's cannot be, as PointGoalEnv's
episodes cannot be continued (the restore stores the pending steps as ended episodes).

tests/test_checkpoint_fixtures.py checks that the current code resumes both to exactly those
fingerprints, so that moving where such state is kept cannot break the resumption of older
checkpoints unnoticed. The tests never run this script: rerun it only for a deliberate change
of the format (with a new ``FORMAT_VERSION``, keeping the old fixtures). The networks (4 units
a layer), the memories (200 transitions) and the runs (epochs of 60 and 30 steps) are tiny, so
the folders stay small (tens of KB).
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/, for fixture_resume

import fixture_resume  # noqa: E402


def check_in_flight(name, algo):
    """The state in flight that the fixture must hold when saved."""
    if name == "v2_nstep":
        state = algo.loop.state
        assert state.nstep_chain, "environment 0 has no open n-step sum"
        assert [episode.nstep_chain for episode in state.vector_episodes] and all(
            episode.nstep_chain for episode in state.vector_episodes), \
            "environment 1 has no open n-step sum"
    else:
        pending = algo.loop.memory.pending
        assert any(pending), "no pending episode"


def write_fixture(name):
    """Run the fixture's algorithm, saving it at the end of epoch ``SAVED_EPOCHS - 1``; the
    fingerprint of the whole, uninterrupted run."""
    from ddpg import logger  # pylint: disable=import-outside-toplevel
    logger.set_log_tabular_only(True)
    folder = os.path.join(HERE, name)

    def save(algo, epoch):
        if epoch == fixture_resume.SAVED_EPOCHS - 1:
            check_in_flight(name, algo)
            algo.checkpoint_metadata = {"fixture": name}
            shutil.rmtree(folder, ignore_errors=True)
            algo.save(folder)

    algo = fixture_resume.FIXTURES[name]()
    algo.train(epoch_callback=save)
    print("wrote %s: %d bytes" % (folder, sum(os.path.getsize(os.path.join(folder, entry))
                                              for entry in os.listdir(folder))))
    return fixture_resume.fingerprint(algo)


def main():
    if not fixture_resume.is_pinned():  # write the fixtures with the instruction sets too
        subprocess.run([sys.executable, os.path.abspath(__file__)], check=True,
                       env=fixture_resume.pinned_environment())
        return
    whole = {name: write_fixture(name) for name in sorted(fixture_resume.FIXTURES)}
    resumed = fixture_resume.resume_in_subprocess(HERE)
    # the cart-pole's episodes continue exactly: v2_nstep resumes to the uninterrupted run.
    # PointGoalEnv's cannot (the restore abandons them and stores their pending steps as ended
    # episodes), so v2_her's resumed run differs from its uninterrupted one.
    assert resumed["v2_nstep"] == whole["v2_nstep"], "v2_nstep did not resume exactly"
    with open(fixture_resume.RESUMED_FILE, "w") as out:
        json.dump(resumed, out, indent=1, sort_keys=True)
        out.write("\n")
    print("wrote %s" % fixture_resume.RESUMED_FILE)


if __name__ == "__main__":
    main()
