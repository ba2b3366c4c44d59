"""``evaluate --judge-holes`` end to end on the shipped sample's index with a scripted judge on 127.0.0.1:
the judged block in the terminal, the saved report and its page, a second run asking nothing, and the
golden file kept as it was."""
from __future__ import annotations

import json
import re
from pathlib import Path

from chat_server import ChatServer, Reply, Seen, completion

from evaluation.cli import main
from evaluation.engine.index import open_index
from evaluation.holes.texts import index_texts

SAMPLES = Path(__file__).resolve().parent.parent.parent / "samples"
FAST = ["--only", "keyword", "--timed", "3", "--quiet"]  # keyword setups: seconds, and holes enough


def labelled_golden(folder: Path) -> tuple[Path, list[dict]]:
    """The sample's first 12 questions, each also labelling the next one's document not relevant (grade 0),
    so the people's labels hold both grades and a judge can be measured on them."""
    rows = [json.loads(line) for line in (SAMPLES / "golden.jsonl").read_text(encoding="utf-8").splitlines()][:12]
    out = []
    for n, row in enumerate(rows):
        other = rows[(n + 1) % len(rows)]["expected"][0]
        out.append({"id": row["id"], "question": row["question"],
                    "expected": {row["expected"][0]: 1, **({other: 0} if other != row["expected"][0] else {})}})
    path = folder / "golden.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    return path, out


class TruthfulJudge:
    """Grades a passage 1 when it is the question's expected document, else 0, recognising both by text."""

    def __init__(self, index: Path, rows: list[dict]) -> None:
        chunks = open_index(index).chunks
        docs = sorted({c.doc_id for c in chunks})
        self.by_text = {text[:300]: doc for doc, text in index_texts(chunks)(docs).items()}
        self.relevant = {r["question"]: {d for d, g in r["expected"].items() if g} for r in rows}

    def __call__(self, seen: Seen) -> Reply:
        user = seen.body["messages"][-1]["content"]
        question = re.search(r"\nQuestion: (.*)\n\nPassage:", user).group(1)
        passage = re.search(r"<passage>\n(.*)\n</passage>", user, re.S).group(1)
        doc = self.by_text.get(passage[:300])
        grade = 1 if doc in self.relevant[question] else 0
        return Reply(body=completion(json.dumps({"grade": grade, "reason": "scripted"})))


def judge_flags(server: ChatServer, tmp_path: Path) -> list[str]:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"per_tokens": 1_000_000, "models": {"judge-model": {"input": 1.0, "output": 4.0}}}))
    return ["--judge-holes", "--judge-endpoint", f"{server.base}/v1", "--judge-model", "judge-model",
            "--judge-api", "openai", "--judge-auth", "none", "--judge-reply-cache", str(tmp_path / "replies.jsonl"),
            "--judge-prices", str(prices), "--judge-max-cost", "5"]


def test_evaluate_judges_the_holes_and_a_second_run_asks_nothing(sample_index, tmp_path, capsys):
    golden, rows = labelled_golden(tmp_path)
    before = golden.read_bytes()
    store = tmp_path / "runs"
    with ChatServer() as server:
        server.respond = TruthfulJudge(sample_index, rows)
        flags = judge_flags(server, tmp_path)
        assert main(["evaluate", "--index", str(sample_index), "--golden", str(golden), "--save-to", str(store),
                     *FAST, *flags]) == 0
        out = capsys.readouterr().out
        asked = len(server.seen)
        assert main(["evaluate", "--index", str(sample_index), "--golden", str(golden), "--save-to", str(store),
                     *FAST, *flags]) == 0
        again = capsys.readouterr().out
        assert len(server.seen) == asked > 20  # the calibration, then the holes; the second run: nothing
    assert "Holes judged by judge-model (binary scale 0-1)" in out
    labels = sum(len(r["expected"]) for r in rows)
    assert f"kappa 1.00 (95% interval 1.00 to 1.00) on {labels} labels" in out
    assert "0 call(s), " in again and f"{asked} from the reply cache" in again
    runs = sorted((store / "retrieval" / "runs").glob("*/report.json"))
    report = json.loads(runs[0].read_text(encoding="utf-8"))
    assert report["judged"]["counted"] and report["picks_from"] == "human"
    assert report["judged"]["cost"]["calls"] == asked and report["judged"]["cost"]["cost"] <= 5
    assert "+judged" in (runs[0].parent / "report.html").read_text(encoding="utf-8")
    assert golden.read_bytes() == before
    assert (store / "golden_dataset" / f"{report['golden']['sha256']}.jsonl").read_bytes() == before
    raw = runs[0].read_text(encoding="utf-8")
    assert not [r["question"] for r in rows if r["question"] in raw]
    assert main(["runs", "show", "latest", "--store", str(store)]) == 0
    assert "Holes judged by judge-model" in capsys.readouterr().out


def test_a_judge_flag_without_judge_holes_is_refused_before_any_search(sample_index, tmp_path, capsys):
    code = main(["evaluate", "--index", str(sample_index), "--golden", str(SAMPLES / "golden.jsonl"), "--no-save",
                 *FAST, "--picks-from", "judged"])
    assert code == 2
    assert "--picks-from is a setting of the holes' judge: add --judge-holes" in capsys.readouterr().err
