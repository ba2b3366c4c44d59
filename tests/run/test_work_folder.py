"""A run's working files (``run.work_folder``): one file per step, whatever the step's name holds. Setup
keys differ after their last dot (``local.dense.bge-small``, ``local.dense.minilm-l6``), so a name's
last dot is not a suffix to replace: two setups' batches kept under one file would hand one setup the
other's results (found by the AWS flow's test against the command line: "given twice")."""
from __future__ import annotations

import pytest

from evaluation.run.local_race import batch_name, look_name
from evaluation.run.work_folder import WorkFolder

KEYS = ("local.dense.bge-small", "local.dense.minilm-l6", "local.dense.bge-small+minilm-l6", "local.keyword.bm25",
        "azure.hybrid_semantic", "a.b.c.d.e")


def test_every_setup_key_has_a_file_of_its_own(tmp_path):
    folder = WorkFolder(tmp_path / "run-x")
    for n, key in enumerate(KEYS):
        folder.put(batch_name(key), {"key": key, "n": n})
        folder.put(look_name(key, 2), {"key": key, "look": 2})
    assert [folder.get(batch_name(key)) for key in KEYS] == [{"key": key, "n": n} for n, key in enumerate(KEYS)]
    assert [folder.get(look_name(key, 2))["key"] for key in KEYS] == list(KEYS)
    assert folder.get(batch_name("local.dense.other")) is None  # nothing kept: the step is done, not borrowed
    assert len(list((tmp_path / "run-x").rglob("*.json"))) == 2 * len(KEYS)


@pytest.mark.parametrize("name", ["", "a//b", "../x", "a/./b"])
def test_a_name_that_would_leave_the_folder_is_refused(tmp_path, name):
    with pytest.raises(ValueError):
        WorkFolder(tmp_path / "run-x").put(name, {})
