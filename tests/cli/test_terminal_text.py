"""Nothing from an input, a store or a service reaches a terminal raw, and no echo of it is unbounded
(issue 46).

Every command of the real parser is walked with hostile text in each field it prints: question texts
(one of 10 MB), file names (of the corpus, the golden file, the queries, outputs), every text a kept
report holds (a shared store: its golden file's name, collections, setup keys, labels, errors, what was
left out, a refusal's reasons; chunking, sweep and matrix runs likewise; the stores' own names), a TREC
run's tags, question ids and ranks, and a chat service's error message and non-JSON reply (10 MB) through
the scripted server in ``tests/chat_server.py``. The hostile
text sets the terminal's title (``ESC ] 0 ; x BEL``), clears the screen (``ESC [ 2 J``), returns the
carriage to overwrite a line with "all good", reorders text (bidi controls), holds NUL and a C1 CSI, and
breaks the line to forge one of its own.

Asserted on stdout and stderr of every case: no control character (but the tool's own line breaks),
no bidi control, no line the input forged, and at most ``MOST_OUTPUT`` characters in all, so a 10 MB
field comes back as a bounded echo. ``--json`` output and a page written to stdout are data, not echoes:
they are checked for control characters and read back whole, not bounded.

The oracle below is written here, not imported from ``errors``: a change to the escaper is judged by it.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Callable

import pytest

from chat_server import ChatServer, Reply
from test_cli_fuzz import commands

from evaluation.cli import main

# What a terminal acts on: C0 controls but the line feed (NUL, BEL, BS, TAB, CR, ESC...), DEL, C1 controls
# (0x9b is CSI on terminals that read 8-bit controls), the line and paragraph separators, and the marks
# and isolates that reorder text (U+200E/F, U+202A-E, U+2066-9).
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069]")
FORGED = "FORGED"  # the start of a line only hostile text could have made
HOSTILE = "\x1b]0;x\x07\x1b[2J\r all good\u202e\u2066\x00\x9b\n" + FORGED + " line"
IN_A_NAME = HOSTILE.replace("\x00", "")  # a file name holds anything but NUL (and /)
IN_A_TAG = "".join(c for c in HOSTILE if not c.isspace())  # a TREC tag holds no white space
HUGE = HOSTILE + "W" * (10 * 2 ** 20)  # a service's error message, a question, a TREC tag, a kept file name
# The most a command may print here: its own output is a few KB, and each echo of a field is bounded to
# hundreds of characters. LONG, in every text of the "long" store's reports, is longer than this alone,
# so any one of them printed whole fails the case (HUGE in each of the hundreds of texts a report holds
# would make a report of gigabytes).
MOST_OUTPUT = 100_000
LONG = HOSTILE + "W" * (MOST_OUTPUT + 20_000)

CORPUS = "".join(json.dumps({"id": doc, "text": text}) + "\n" for doc, text in {  # long enough to write questions on
    "alpha.md": "Alpha explains how to install the package with pip and configure retries: run pip install in a "
                "fresh virtual environment, then set the number of retries and the wait between them in the "
                "settings file, which the client reads once when it starts.",
    "beta.md": "Beta covers managed identity sign in for storage accounts and keys: give the identity the reader "
               "role on the account, let the client ask for a token at each start, and keep no key in the "
               "settings, so nothing secret is ever written to a file.",
}.items())


def _row(qid: str, question: str, expected: str) -> str:
    return json.dumps({"id": qid, "question": question, "expected": [expected]}) + "\n"


def _names(words: dict[str, str]) -> dict[str, str]:
    return {key: f"{stem}{IN_A_NAME}{suffix}" for key, (stem, suffix) in
            {k: v.split("*") for k, v in words.items()}.items()}


NAMES = _names({"corpus": "corpus*.jsonl", "golden": "golden*.jsonl", "small": "small*.jsonl",
                "run": "run*.trec", "rows": "rows*.jsonl", "unsaved": "unsaved*.json",
                "hostile": "hostile*", "long": "long*", "out": "out*"})  # the last three: folders


# -- the world: inputs with hostile text, stores that keep it ------------------------------------------

def _hostile_strings(value, skip: frozenset[str], text: str, key: str = ""):
    """``value`` with ``text`` added to every string in it but those under a key in ``skip`` (ids, hashes,
    the words a reader branches on)."""
    if isinstance(value, dict):
        return {k: _hostile_strings(v, skip, text, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_hostile_strings(v, skip, text, key) for v in value]
    if isinstance(value, str) and key not in skip:
        return value + text
    return value


RETRIEVAL_KEPT_AS_IS = frozenset({"id", "sha256", "by", "rank_among", "engine", "method", "question_ids", "questions",
                                  "timed_question_ids", "format", "retrieval", "rank_by", "time_state", "rank_state",
                                  "time_pass", "ranked_in", "timed_in"})
CHUNKING_KEPT_AS_IS = frozenset({"id", "sha256", "kind", "by", "judged_by", "technique", "letter", "method", "methods",
                                 "format", "scored", "source"})


def _hostile_report(report: dict, text: str, run_id: str) -> dict:
    """A kept retrieval report as someone with write access to the store may leave it: ``text`` in every
    name and sentence it holds, its setup keys and target names renamed everywhere they are named (so the
    report still reads), and a failed setup whose error is ``text``."""
    raw = json.dumps(report, ensure_ascii=False)
    for key in {s["key"] for s in report["setups"]}:
        raw = raw.replace(json.dumps(key)[1:-1], json.dumps(key + text, ensure_ascii=False)[1:-1])
    hostile = _hostile_strings(json.loads(raw), RETRIEVAL_KEPT_AS_IS, text)
    hostile["id"] = run_id
    hostile["golden"]["source"] = "golden" + text
    hostile["collections"] = ["docs" + text]
    failed = dict(hostile["setups"][0], key="local.dense.failed" + text, error="RuntimeError: " + text, summary=None,
                  rank=None)
    hostile["setups"].append(failed)
    for target in hostile["targets"].values():
        target["left_out"] = [{"what": "dense" + text, "reason": "no vectors" + text}]
    hostile["missing"] = {"local" + text: {"documents": ["gone.md" + text], "questions": []}}
    return hostile


def _refused_report(report: dict, text: str, run_id: str) -> dict:
    refused = json.loads(json.dumps(report))
    refused.update(id=run_id, setups=[], frontier=[], picks={k: None for k in report["picks"]},
                   refused={"reason": "the golden file has errors" + text,
                            "errors": [{"line": 2, "message": "bad row" + text}, {"line": None, "message": text}]})
    refused["golden"]["source"] = "golden" + text
    return refused


def _keep(store: Path, report: dict, runs: str = "retrieval/runs") -> None:
    """``report`` in ``store`` as a save leaves it (no page: a hand-made report has none)."""
    folder = store / runs / report["id"]
    folder.mkdir(parents=True)
    (folder / "report.json").write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")


HOSTILE_RUNS = ("20990101T000000000Z-aaaaaa", "20990101T000000000Z-bbbbbb")
LONG_RUNS = ("20990102T000000000Z-aaaaaa", "20990102T000000000Z-bbbbbb")
REFUSED_RUN = "20990103T000000000Z-aaaaaa"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inputs with hostile names and texts, an index, and stores of the runs made from them, then edited
    (``hostile``: HOSTILE added to every text; ``long``: LONG added to every text, and HUGE as the golden
    file's name and a failed setup's error), chunking, sweep and matrix runs likewise."""
    import os

    base = tmp_path_factory.mktemp("terminal-world")
    (base / NAMES["corpus"]).write_text(CORPUS, encoding="utf-8")
    (base / NAMES["golden"]).write_text(
        _row("q1", HOSTILE + " How do I install the package?", "alpha.md")  # the line feed well inside a cut
        + _row("q2", "How do I sign in with a managed identity? " + HUGE, "beta.md"), encoding="utf-8")
    (base / NAMES["small"]).write_text(
        _row("q1", HOSTILE + " How do I install the package?", "alpha.md")
        + _row("q2", "How do I sign in with a managed identity?", "beta.md"), encoding="utf-8")
    (base / "unanswerable.txt").write_text("What is the capital of Mars?" + IN_A_NAME.replace("\n", " ") + "\n",
                                           encoding="utf-8")
    (base / "answers.json").write_text(json.dumps({"q1": "Use pip."}), encoding="utf-8")
    huge_word = "T" * (10 * 2 ** 20)  # a tag, a question id and a rank of 10 MB: a TREC field holds no space
    (base / NAMES["run"]).write_text(f"q1 Q0 alpha.md 1 2.0 mine{IN_A_TAG}\nq2 Q0 beta.md 1 2.0 mine{IN_A_TAG}\n"
                                     f"q1 Q0 alpha.md 1 2.0 {huge_word}\n{IN_A_TAG}{huge_word} Q0 beta.md 1 2.0 mine\n",
                                     encoding="utf-8")
    (base / "badrank.trec").write_text(f"q1 Q0 alpha.md {IN_A_TAG}{huge_word} 2.0 mine\n", encoding="utf-8")
    (base / NAMES["rows"]).write_text(json.dumps({
        "query_id": "q1", "retrieval_ground_truth": [{"document_id": "alpha.md", "query_relevance_label": 3}],
        "retrieved_documents": [{"document_id": "alpha.md", "relevance_score": 1.0}]}) + "\n", encoding="utf-8")
    (base / "bad.jsonl").write_text(
        json.dumps({"id": "q1", "question": "Q?", "expected": {"alpha.md": "2" + HUGE}}) + "\n"
        + json.dumps({"id": "q2", "question": "R?", "expected": ["alpha.md"], "note" + HOSTILE: 1}) + "\n"
        + json.dumps({"id": "q3" + HOSTILE, "question": "S?", "expected": ["alpha.md" + HOSTILE]}) + "\n",
        encoding="utf-8")
    here = os.getcwd()
    os.chdir(base)
    try:
        assert main(["index", NAMES["corpus"], "--out", "idx", "--quiet"]) == 0
        assert main(["evaluate", "--corpus", NAMES["corpus"], "--golden", NAMES["golden"], "--save-to", "made",
                     "--only", "keyword", "--quiet", "--json"]) == 0
        for argv in (["chunking", "sweep", "--builds", "fixed-1000-h", "--methods", "keyword", "--timed", "2"],
                     ["chunking", "compare", "--techniques", "fixed", "--sizes", "1000", "--headings", "yes",
                      "--no-late"]):
            assert main([*argv, "--corpus", NAMES["corpus"], "--golden", NAMES["small"], "--no-cache", "--quiet",
                         "--save-to", "made"]) == 0
        assert main(["matrix", "--corpus", NAMES["corpus"], "--queries", NAMES["small"], "--embedder", "hash",
                     "--methods", "keyword", "--quiet", "--save-to", "made"]) == 0
    finally:
        os.chdir(here)
    made = base / "made"
    (report_path,) = (made / "retrieval" / "runs").glob("*/report.json")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    chunking = [json.loads(p.read_text(encoding="utf-8")) for p in (made / "chunking" / "runs").glob("*/report.json")]
    for name, text, ids in (("hostile", HOSTILE, HOSTILE_RUNS), ("long", LONG, LONG_RUNS)):
        store = base / NAMES[name]
        shutil.copytree(made / "golden_dataset", store / "golden_dataset")
        for run_id in ids:
            hostile = _hostile_report(report, text, run_id)
            if name == "long":
                hostile["golden"]["source"] = "golden" + HUGE
                hostile["setups"][-1]["error"] = "RuntimeError: " + HUGE
            _keep(store, hostile)
        _keep(store, _refused_report(report, text, REFUSED_RUN))
        for n, kept in enumerate(sorted(chunking, key=lambda r: r["kind"])):
            _keep(store, {**_hostile_strings(kept, CHUNKING_KEPT_AS_IS, text), "id": f"20990104T000000000Z-00000{n}"},
                  "chunking/runs")
    unsaved = _hostile_report(report, HOSTILE, "20990105T000000000Z-aaaaaa")
    (base / NAMES["unsaved"]).write_text(json.dumps(unsaved), encoding="utf-8")
    (base / NAMES["out"]).mkdir()
    return base


# -- the cases: every command, with hostile text in each field it prints ------------------------------

def _chat(reply: Reply) -> Callable[[ChatServer], list[str]]:
    """Cases that talk to a chat service answering ``reply``: the flags that point at it."""
    def flags(server: ChatServer) -> list[str]:
        server.answer(reply)
        return ["--endpoint", f"{server.base}/v1", "--model", "m", "--auth", "none", "--retries", "0",
                "--timeout", "30"]
    return flags


REFUSES = Reply(400, {"error": {"message": HUGE}})
BUSY = Reply(503, {"error": {"message": HUGE}})
NOT_JSON = Reply(200, HUGE)
C, G, S, OUT = NAMES["corpus"], NAMES["golden"], NAMES["small"], NAMES["out"]
HOSTILE_STORE, LONG_STORE = NAMES["hostile"], NAMES["long"]

# (command words, argv after them, a chat service's reply or None). "{store}" is each of the two stores in
# turn, "{first}" and "{second}" that store's two runs; every output is written into a folder whose name is
# hostile, so each sentence naming an output names it too.
CASES: list[tuple[tuple[str, ...], list[str], Reply | None]] = [
    (("golden", "check"), [G, "--corpus", C], None),
    (("golden", "check"), ["bad.jsonl", "--index", "idx"], None),
    (("golden", "check"), [G, "--json"], None),
    (("golden", "template"), ["--corpus", C, "--out", f"{OUT}/template{IN_A_NAME}.jsonl", "-n", "2"], None),
    (("golden", "suggest"), [S, "--index", "idx", "--out", f"{OUT}/suggested.jsonl", "--setup", "local.keyword.bm25",
                             "--quiet"], None),
    (("golden", "write"), ["--index", "idx", "--out", f"{OUT}/written.jsonl", "-n", "1", "--quiet"], REFUSES),
    (("golden", "write"), ["--index", "idx", "--out", f"{OUT}/written.jsonl", "-n", "1", "--quiet"], BUSY),
    (("golden", "write"), ["--index", "idx", "--out", f"{OUT}/written.jsonl", "-n", "1", "--quiet"], NOT_JSON),
    (("golden", "cutoff"), [G, "--index", "idx", "--unanswerable", "unanswerable.txt", "--setup",
                            "local.keyword.bm25", "--quiet"], None),
    (("golden", "accept"), ["{first}", "--golden", G, "--out", f"{OUT}/accepted.jsonl", "--store", "{store}"], None),
    (("golden", "next"), [G, "--out", f"{OUT}/next.jsonl", "--run", "{first}", "--store", "{store}", "--quiet"], None),
    (("index",), [C, "--out", f"{OUT}/index", "--models", "minilm-l6", "--quiet"], None),
    (("evaluate",), ["--corpus", C, "--golden", G, "--only", "keyword", "--questions", "--no-save"], None),  # progress
    (("evaluate",), ["--index", "idx", "--golden", G, "--only", "keyword", "--save-to", "{store}", "--details",
                     "--quiet"], None),
    (("runs", "list"), ["--store", "{store}"], None),
    (("runs", "list"), ["--store", HOSTILE_STORE, "--json"], None),
    (("runs", "show"), ["latest", "--store", "{store}", "--questions", "--details"], None),
    (("runs", "show"), ["{first}", "--store", "{store}", "--questions", "--details"], None),
    (("runs", "show"), [REFUSED_RUN, "--store", "{store}"], None),
    (("runs", "show"), [HOSTILE_RUNS[0], "--store", HOSTILE_STORE, "--json"], None),
    (("runs", "export"), ["{first}", "--store", "{store}", "--out", f"{OUT}/exported"], None),
    (("runs", "import"), [NAMES["unsaved"], "--store", "{store}"], None),
    (("report",), ["{first}", "--store", "{store}", "--out", f"{OUT}/page.html", "--with-questions"], None),
    (("report",), [HOSTILE_RUNS[0], "--store", HOSTILE_STORE, "--out", "-", "--with-questions"], None),
    (("compare",), ["{first}", "{second}", "--store", "{store}", "--fail-on-regression"], None),
    (("compare",), [HOSTILE_RUNS[0], HOSTILE_RUNS[1], "--store", HOSTILE_STORE, "--json"], None),
    (("score",), ["--golden", G, "--run", NAMES["run"]], None),
    (("score",), ["--golden", G, "--run", "badrank.trec"], None),
    (("score",), ["--azure-rows", NAMES["rows"]], None),
    (("answers", "score"), ["--golden", G, "--answers", "answers.json"], REFUSES),
    (("answers", "score"), ["--golden", G, "--answers", "answers.json"], BUSY),
    (("chunking", "compare"), ["--corpus", C, "--golden", S, "--techniques", "fixed", "--sizes", "1000",
                               "--headings", "yes", "--no-late", "--no-cache", "--quiet", "--save-to", f"{OUT}/kept"],
     None),
    (("chunking", "sweep"), ["--corpus", C, "--golden", S, "--builds", "fixed-1000-h", "--methods", "keyword",
                             "--timed", "2", "--no-cache", "--save-to", f"{OUT}/kept"], None),  # with its progress
    (("chunking", "runs", "list"), ["--store", "{store}"], None),
    (("chunking", "runs", "show"), ["20990104T000000000Z-000000", "--store", "{store}"], None),
    (("chunking", "runs", "show"), ["20990104T000000000Z-000001", "--store", "{store}", "--markdown"], None),
    (("chunking", "runs", "show"), ["20990104T000000000Z-000002", "--store", "{store}"], None),
    (("matrix",), ["--corpus", C, "--queries", S, "--embedder", "hash", "--methods", "keyword", "--quiet",
                   "--report-json", f"{OUT}/matrix.json", "--save-to", f"{OUT}/kept"], None),
    (("space",), ["--corpus", C, "--golden", S, "--models", "hash", "--methods", "keyword,dense", "--quiet",
                  "--work-dir", f"{OUT}/space-work", "--report-json", f"{OUT}/space.json"], None),
]
STORES = {"hostile": (HOSTILE_STORE, HOSTILE_RUNS), "long": (LONG_STORE, LONG_RUNS)}


def _expanded() -> list[tuple[str, tuple[str, ...], list[str], Reply | None]]:
    """Each case once per store when it names ``{store}``, with that store's runs; with its test id."""
    out = []
    for words, argv, reply in CASES:
        stores = STORES if any("{store}" in a for a in argv) else {"": ("", ("", ""))}
        for label, (store, ids) in stores.items():
            label = label or ("hostile" if HOSTILE_STORE in argv else "")
            flags = [a for a in argv if a in ("--json", "--questions", "--markdown", "-", "--azure-rows", "--corpus")]
            named = " ".join([*words, *flags, *([f"store={label}"] if label else []),
                              *([f"service={reply.status}"] if reply else [])])
            out.append((named, words, [a.format(store=store, first=ids[0], second=ids[1]) for a in argv], reply))
    return out


WALKED = _expanded()


def _case_folder(world: Path, tmp_path: Path, words: tuple[str, ...], argv: list[str]) -> Path:
    """Where a case runs: the world's inputs linked, not copied (the long store is hundreds of MB), but a
    store the case writes into and the output folder, which are its own copies."""
    writes = {OUT} | {argv[i + 1] for i, a in enumerate(argv) if a in ("--save-to", "--store")
                      and words in (("evaluate",), ("runs", "import"))}
    here = tmp_path / "world"
    here.mkdir()
    for entry in world.iterdir():
        if entry.name in writes:
            shutil.copytree(entry, here / entry.name)
        else:
            (here / entry.name).symlink_to(entry)
    return here


def test_every_command_of_the_parser_is_walked():
    assert {words for words, _, _ in CASES} == set(commands())


@pytest.mark.parametrize("case", WALKED, ids=[f"{n}:{c[0]}" for n, c in enumerate(WALKED)])
def test_no_control_character_reaches_the_terminal_and_every_echo_is_bounded(world, tmp_path, monkeypatch, capsys,
                                                                             case):
    _, words, argv, reply = case
    here = _case_folder(world, tmp_path, words, argv)
    monkeypatch.chdir(here)
    for name in ("EVALUATION_JUDGE_ENDPOINT", "EVALUATION_JUDGE_MODEL", "EVALUATION_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EVALUATION_STORE", str(here / HOSTILE_STORE))
    with ChatServer() as server:
        flags = _chat(reply)(server) if reply else []
        try:
            code = main([*words, *argv, *flags])
        except SystemExit as done:
            code = done.code
    out, err = capsys.readouterr()

    assert code in (0, 1, 2) and "does not expect" not in err, (code, err[:2000])
    for stream, text in (("stdout", out), ("stderr", err)):
        raw = RAW.search(text)
        assert raw is None, f"{stream} holds {raw.group()!r}: ...{text[max(0, raw.start() - 200):raw.end() + 80]!r}"
    if "--json" in argv or (words == ("report",) and "-" in argv):  # data, not an echo: whole
        assert code == 0, err[:2000]
        if "--json" in argv:
            json.loads(out)  # and still JSON
        else:
            assert out.lower().startswith("<!doctype html>") and out.rstrip().endswith("</html>")
    else:
        for stream, text in (("stdout", out), ("stderr", err)):
            forged = re.search(f"^{FORGED}.*", text, re.M)
            assert forged is None, f"{stream} holds a line the input made: {forged.group()!r}"
        assert len(out) + len(err) <= MOST_OUTPUT, (len(out), len(err), (out + err)[:500])
    if reply is not None:
        assert server.seen, "the case never reached the chat service, so its message was not tried"


def test_json_is_printable_and_reads_back_as_the_report_the_store_keeps(world, monkeypatch, capsys):
    """JSON leaves bidi controls and C1 characters as they are (``ensure_ascii=False``); the terminal gets their
    escapes, which read back as the same JSON."""
    monkeypatch.chdir(world)
    kept = json.loads((world / HOSTILE_STORE / "retrieval" / "runs" / HOSTILE_RUNS[0] / "report.json")
                      .read_text(encoding="utf-8"))

    assert main(["runs", "show", HOSTILE_RUNS[0], "--store", HOSTILE_STORE, "--json"]) == 0
    out = capsys.readouterr().out

    assert RAW.search(out) is None and "\\u202e" in out
    assert json.loads(out) == kept


def test_the_progress_bar_draws_on_the_terminal_itself_with_a_printable_label():
    """On a terminal the bar redraws in place (CR, cursor moves): it draws to the stream under the command
    line's printable one, and makes the names in its label and its lines printable itself."""
    import io

    from evaluation.cli.terminal import PrintableStream
    from evaluation.progress import ProgressBar

    terminal = io.StringIO()
    bar = ProgressBar(stream=PrintableStream(terminal), plain=False, heartbeat=None)
    bar(1, 2, f"[1/1] local.keyword{HOSTILE}: searching")
    bar.say(f"index built: {HOSTILE}")
    bar(2, 2, f"[1/1] local.keyword{HOSTILE}: searching")
    bar.close()
    drawn = terminal.getvalue()

    assert "\r" in drawn  # tqdm's own carriage returns reach the terminal: the frames are not escaped
    assert "local.keyword\\u001b]0;x\\u0007" in drawn and "index built: \\u001b]0;x" in drawn
    assert not re.search("[\x00\x07\x9b\u202e\u2066]|\x1b\\]|\x1b\\[2J", drawn)
    assert re.search(f"^{FORGED} line: searching", drawn, re.M) is None  # a label is one line (a said line's
    # line feeds are the tool's own: a name in it comes through errors.named, as the walk above checks)


def test_a_services_message_in_an_sdk_error_is_bounded_and_printable_where_a_sentence_quotes_it():
    """No command here meets these (the Blob and S3 sentences quote ``errors.first_line`` of an SDK's error, Azure
    AI Search's its own ``_first_line``), so they are called as the sentences call them: a 10 MB line."""
    from evaluation.azure_search.service import _first_line
    from evaluation.errors import TEXT_LIMIT, first_line

    line = IN_A_TAG + "W" * (10 * 2 ** 20)  # one line: no CR or LF, which end a first line
    for said in (first_line(RuntimeError(line + "\nsecond line")), _first_line(RuntimeError(line))):
        assert RAW.search(said) is None and "\n" not in said
        assert said.endswith(f"({len(line):,} characters)") and len(said) < 2 * TEXT_LIMIT
