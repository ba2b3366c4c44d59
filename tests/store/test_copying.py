"""``run.copying.copied``: a report's plain data copied all the way down, as ``copy.deepcopy`` copies it."""
from __future__ import annotations

import copy
import json

import numpy as np

from evaluation.run.copying import copied

ENTRY = {"key": "local.keyword.bm25", "ranks": {"q1": 1, "q2": None}, "ndcg_10": {"q1": 1.0, "q2": 0.0},
         "results": {"q1": [["a.md:0", "a.md", None, 3.25], ["b.md:1", "b.md", 2, 1.5, 0.75]], "q2": []},
         "outcomes": {"q1": [[1], 1], "q2": [[], 1]}, "error": None, "flag": True,
         "pairs": ({"deep": [1, 2]}, "x", (3, 4)), "summary": {"counts": {"10": 1}}}


def test_a_copy_is_equal_and_shares_no_dict_or_list_with_the_original():
    got = copied(ENTRY)

    assert got == copy.deepcopy(ENTRY) and json.dumps(got) == json.dumps(ENTRY)
    got["results"]["q1"][0][3] = 0.0  # a row changed in the copy ...
    got["ranks"]["q3"] = 4
    got["outcomes"]["q1"][0].append(2)
    got["pairs"][0]["deep"].append(3)  # ... and a list inside a dict inside a tuple
    assert ENTRY["results"]["q1"][0][3] == 3.25 and "q3" not in ENTRY["ranks"]  # ... is not changed here
    assert ENTRY["outcomes"]["q1"] == [[1], 1] and ENTRY["pairs"][0]["deep"] == [1, 2]


def test_scalars_are_kept_as_they_are_and_other_values_are_deep_copied():
    assert copied(None) is None and copied("text") == "text" and copied(True) is True and copied(2.5) == 2.5
    assert type(copied(True)) is bool and type(copied((1, "a"))) is tuple
    odd = {"array": np.arange(3), "set": {1, 2}, "number": np.float64(0.5)}
    got = copied(odd)
    got["array"][0] = 9
    got["set"].add(3)
    assert odd["array"].tolist() == [0, 1, 2] and odd["set"] == {1, 2} and got["number"] == 0.5
