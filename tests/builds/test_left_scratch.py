"""The scratch folder of a run killed half way (a sweep, a chunking comparison, ``from_documents``) is removed
by the next run that makes one there, once surely stale: made on this host by a process that is gone and
untouched for ``SCRATCH_STALE_AFTER_S``. A living run's folder, a young one, another host's and a folder
named otherwise are never touched (issue 46: a killed sweep left its folder for good)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from evaluation.builds.runner import SCRATCH_PREFIX, scratch
from evaluation.builds.settings import BuildPlace
from evaluation.processes import SCRATCH_STALE_AFTER_S, host_tag

ROOT = Path(__file__).resolve().parent.parent.parent


def age(folder: Path, seconds: float) -> Path:
    """Everything in ``folder``, and itself, last changed ``seconds`` ago."""
    then = time.time() - seconds
    for path in sorted(folder.rglob("*"), reverse=True) + [folder]:
        os.utime(path, (then, then), follow_symlinks=False)
    return folder


def inside(code: str) -> subprocess.Popen:
    """A child process running ``code`` (which prints the scratch folder it made, then waits)."""
    return subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
                             + textwrap.dedent(code)], stdout=subprocess.PIPE, text=True)


def killed_inside_a_sweep(workdir: Path) -> Path:
    """A real process in the middle of a sweep's builds (inside ``scratch``, a build's files written),
    killed with SIGKILL: its scratch folder is left as a kill leaves it."""
    child = inside(f"""
        import time
        from evaluation.builds.runner import scratch
        from evaluation.builds.settings import BuildPlace
        with scratch(BuildPlace(workdir={str(workdir)!r})) as where:
            (where.workdir / "build-1").mkdir()
            (where.workdir / "build-1" / "chunks.jsonl").write_text("{{}}")
            print(where.workdir, flush=True)
            time.sleep(600)
    """)
    folder = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    assert child.wait(timeout=60) == -signal.SIGKILL
    return folder


def test_a_killed_sweeps_scratch_folder_is_kept_while_young_and_removed_by_the_next_run_once_stale(tmp_path):
    left = killed_inside_a_sweep(tmp_path)
    assert left.parent == tmp_path and left.name.startswith(f"{SCRATCH_PREFIX}{host_tag()}.")
    assert (left / "build-1" / "chunks.jsonl").exists()  # what the kill left

    with scratch(BuildPlace(workdir=tmp_path)) as where:  # the next run, a few seconds later
        assert left.exists()  # young: it could be a run this process cannot see, still writing
        assert where.workdir != left
    age(left, SCRATCH_STALE_AFTER_S + 60)
    with scratch(BuildPlace(workdir=tmp_path)) as where:
        assert not left.exists()  # stale and its process gone: removed before this run's builds
        mine = where.workdir
    assert list(tmp_path.iterdir()) == [] and not mine.exists()


def test_a_folder_whose_process_looks_gone_but_whose_files_are_still_written_is_kept(tmp_path):
    """A run this process cannot see (another container of the same host name: its process ids are not
    ours) still writes inside its folder: the newest change anywhere in it counts, not the folder's own."""
    left = age(killed_inside_a_sweep(tmp_path), SCRATCH_STALE_AFTER_S + 60)
    (left / "build-1" / "chunks.jsonl").write_text("{}\n{}")  # written just now, deep inside

    with scratch(BuildPlace(workdir=tmp_path)):
        assert left.is_dir()


def test_a_living_runs_scratch_folder_is_never_removed_however_old(tmp_path):
    child = inside(f"""
        import time
        from evaluation.builds.runner import scratch
        from evaluation.builds.settings import BuildPlace
        with scratch(BuildPlace(workdir={str(tmp_path)!r})) as where:
            print(where.workdir, flush=True)
            time.sleep(600)
    """)
    try:
        living = age(Path(child.stdout.readline().strip()), 10 * SCRATCH_STALE_AFTER_S)
        with scratch(BuildPlace(workdir=tmp_path)):
            assert living.is_dir()
    finally:
        child.kill()
        child.wait(timeout=60)


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("name", [
    f"{SCRATCH_PREFIX}another-host.{{pid}}.abcd1234",  # its process ids are not this machine's
    f"{SCRATCH_PREFIX}abcd1234",  # an earlier version's, named by no process: cannot be told
    f"not-ours-{host_tag()}.{{pid}}.abcd1234",  # somebody else's folder
])
def test_another_hosts_folder_and_one_named_otherwise_are_never_removed(tmp_path, name):
    other = tmp_path / name.format(pid=dead_pid())
    (other / "inside").mkdir(parents=True)
    age(other, 10 * SCRATCH_STALE_AFTER_S)

    with scratch(BuildPlace(workdir=tmp_path)):
        pass
    assert (other / "inside").is_dir()


def test_a_killed_from_documents_scratch_folder_is_removed_by_the_next_one(tmp_path, monkeypatch):
    from evaluation import EmbeddedTarget
    from evaluation.engine import IndexSettings

    child = inside("""
        import time
        from evaluation import EmbeddedTarget
        from evaluation.engine import IndexSettings
        target = EmbeddedTarget.from_documents({"a": "alpha text", "b": "beta text"}, settings=IndexSettings(models=()))
        print(target.index.folder.parent, flush=True)
        time.sleep(600)
    """.replace("import time", f"import tempfile, time; tempfile.tempdir = {str(tmp_path)!r}", 1))
    left = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert left.parent == tmp_path and (left / "corpus.jsonl").exists()
    age(left, SCRATCH_STALE_AFTER_S + 60)

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    target = EmbeddedTarget.from_documents({"c": "gamma text"}, settings=IndexSettings(models=()))
    try:
        assert not left.exists() and [p.name for p in tmp_path.iterdir()] == [target.index.folder.parent.name]
    finally:
        target.close()
    assert list(tmp_path.iterdir()) == []
