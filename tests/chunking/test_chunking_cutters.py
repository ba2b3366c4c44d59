"""The model-free cutters on the shipped sample's Markdown: boundaries where each technique says, sizes
respected, overlap right, parent-child hands over the parent, the same chunks every time.

Size tolerance: none. Every chunk of every technique holds at most ``size`` characters, because
each cutter either counts characters itself (``fixed``) or is given the size as a hard capacity
(semantic-text-splitter), and ``sentence`` cuts a sentence longer than the size further.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

import pytest

from evaluation.chunking import Build, cut, parse_build
from evaluation.chunking.cut import heading_line
from evaluation.chunking.outline import Outline

SAMPLE = Path(__file__).resolve().parents[2] / "evaluation" / "sample" / "corpus.jsonl"
MODEL_FREE = ("markdown", "parent", "recursive", "sentence", "fixed")
HEADING = re.compile(r"(?m)^ {0,3}#{1,6}[ \t]+\S")


@lru_cache(maxsize=1)
def documents() -> tuple[dict, ...]:
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    # every tenth document, and the five longest (up to 10,551 characters): short and long sections
    longest = sorted(rows, key=lambda r: -len(r["text"]))[:5]
    return tuple(rows[::10] + longest)


def chunks_of(key: str, doc: dict):
    return cut(key, doc["id"], doc["text"], doc["title"])


@pytest.mark.parametrize("technique", MODEL_FREE)
@pytest.mark.parametrize("size", [250, 1000])
def test_every_chunk_is_the_documents_text_at_its_offsets_within_the_size(technique, size):
    for doc in documents():
        chunks = chunks_of(f"{technique}-{size}-n", doc)
        assert chunks, doc["id"]
        for n, chunk in enumerate(chunks):
            assert chunk.id == f"{doc['id']}#{n}" and chunk.n == n and chunk.doc_id == doc["id"]
            assert chunk.text == doc["text"][chunk.start:chunk.end]
            assert chunk.text == chunk.text.strip() != ""
            assert len(chunk.text) <= size, (doc["id"], n, len(chunk.text))
        assert [c.start for c in chunks] == sorted(c.start for c in chunks)


@pytest.mark.parametrize("technique", MODEL_FREE)
def test_no_word_of_the_document_is_left_out(technique):
    for doc in documents():
        covered = bytearray(len(doc["text"]))
        for chunk in chunks_of(f"{technique}-500-n", doc):
            covered[chunk.start:chunk.end] = b"\x01" * (chunk.end - chunk.start)
        missed = [m.group() for m in re.finditer(r"\S+", doc["text"]) if not all(covered[m.start():m.end()])]
        assert missed == [], (doc["id"], missed[:5])


@pytest.mark.parametrize("technique", ["fixed", "recursive", "sentence", "markdown"])
def test_consecutive_chunks_overlap_by_at_most_a_fifth_of_the_size(technique):
    size = 500
    overlaps = []
    for doc in documents():
        chunks = chunks_of(f"{technique}-{size}-n", doc)
        for before, after in pairwise(chunks):
            assert after.start > before.start
            shared = max(0, before.end - after.start)
            assert shared <= size // 5 == 100, (doc["id"], before.n, shared)
            overlaps.append(shared)
    # fixed always repeats the words of the last fifth; the libraries repeat only whole units (sentences,
    # lines) that fit in it: 82 of 198 consecutive recursive pairs here at 500. Markdown's sections do
    # not overlap each other at all; only a long section's pieces do.
    share = {"fixed": 1.0, "sentence": 0.5, "recursive": 0.3, "markdown": 0.0}[technique]
    assert sum(1 for s in overlaps if s > 0) >= share * len(overlaps)


def test_fixed_windows_end_at_a_space_and_the_next_starts_at_a_word_a_fifth_of_the_size_back():
    size, overlap = 500, 100
    for doc in documents():
        text = doc["text"]
        chunks = chunks_of(f"fixed-{size}-n", doc)
        for before, after in pairwise(chunks):
            assert text[before.end].isspace()                     # no word split at the end
            assert after.start == 0 or text[after.start - 1].isspace()   # a word's start
            assert 0 < before.end - after.start <= overlap
            # the next starts at the first word that begins at most 100 characters before the end
            back = before.end - overlap
            assert not any(text[i - 1].isspace() and not text[i].isspace()
                           for i in range(max(back, 1), after.start)), (doc["id"], before.n)


def test_fixed_is_blind_to_headings_but_markdown_starts_a_chunk_at_every_heading_with_text_under_it():
    crossed = 0
    for doc in documents():
        text = doc["text"]
        sections = Outline.of(text).sections
        chunks = chunks_of("markdown-1000-n", doc)
        starts = {c.start for c in chunks}
        assert all(section.start in starts for section in sections[1:])
        for chunk in chunks:   # and no chunk runs into the next section
            assert not any(chunk.start < s.start < chunk.end for s in sections), (doc["id"], chunk.n)
            # a heading line inside a chunk (outside code) is one with nothing under it, before the text
            inner = [m.start() for m in HEADING.finditer(text, chunk.start, chunk.end) if m.start() > chunk.start
                     and "```" not in text[chunk.start:m.start()]]
            for position in inner:
                assert all(HEADING.match(line) for line in text[chunk.start:position].strip().splitlines()), \
                    (doc["id"], chunk.n)
        crossed += sum(1 for c in chunks_of("fixed-1000-n", doc)
                       if any(m.start() > c.start for m in HEADING.finditer(text, c.start, c.end)))
    assert crossed > 0  # fixed windows do run across headings


def test_markdown_chunks_carry_the_headings_they_sit_under_and_h_puts_them_in_front():
    doc = next(d for d in documents() if d["id"] == "azure-identity/azure-identity-client-library-for-python") \
        if any(d["id"] == "azure-identity/azure-identity-client-library-for-python" for d in documents()) else None
    doc = doc or json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    chunks = chunks_of("markdown-500-h", doc)
    install = next(c for c in chunks if c.text.startswith("### Install the package"))
    assert install.headings == ("Azure Identity client library for Python", "Install the package")
    # the title ends with the first heading, so it is said once
    assert install.embed_text == ("azure-identity: Azure Identity client library for Python > Install the package\n"
                                  + install.text)
    plain = chunks_of("markdown-500-n", doc)
    assert [c.text for c in plain] == [c.text for c in chunks]
    assert all(c.embed_text == c.text for c in plain)


def test_heading_line_says_the_title_once():
    assert heading_line("pkg: Guide", ("Guide", "Install")) == "pkg: Guide > Install"
    assert heading_line("Other", ("Guide", "Install")) == "Other > Guide > Install"
    assert heading_line(None, ()) == ""


def test_parent_child_finds_with_small_chunks_and_hands_over_their_section():
    size = 250
    handed_bigger = 0
    for doc in documents():
        text = doc["text"]
        outline = Outline.of(text)
        for chunk in chunks_of(f"parent-{size}-n", doc):
            assert len(chunk.text) <= size
            start, end = chunk.parent
            assert start <= chunk.start < chunk.end <= end
            assert chunk.handed_over == text[start:end]
            assert len(chunk.handed_over) <= 4 * size
            # the parent stays inside one section
            assert outline.headings_at(start) == outline.headings_at(end - 1) == chunk.headings
            handed_bigger += len(chunk.handed_over) > len(chunk.text)
    assert handed_bigger > 100


def test_other_techniques_hand_over_the_chunk_itself():
    for technique in ("markdown", "recursive", "sentence", "fixed"):
        doc = documents()[0]
        assert all(c.handed_over == c.text and c.parent is None for c in chunks_of(f"{technique}-500-n", doc))


def test_sentence_chunks_end_at_a_sentence_or_line_end():
    ends = total = 0
    for doc in documents():
        text = doc["text"]
        for chunk in chunks_of("sentence-500-n", doc)[:-1]:
            total += 1
            ends += chunk.text[-1] in ".!?:" or text[chunk.end:chunk.end + 1] == "\n" or \
                text[chunk.end:].lstrip(" ").startswith("\n")
    assert ends >= 0.9 * total, (ends, total)


def test_the_same_document_and_build_always_give_the_same_chunks():
    doc = documents()[3]
    for technique in MODEL_FREE:
        assert chunks_of(f"{technique}-500-h", doc) == chunks_of(f"{technique}-500-h", doc)


def test_a_document_of_only_whitespace_has_no_chunks():
    for technique in MODEL_FREE:
        assert cut(Build(technique, 500, "n"), "d", " \n\n \t") == []


def test_a_build_or_its_key_cut_the_same():
    doc = documents()[1]
    assert cut(parse_build("recursive-500-n"), doc["id"], doc["text"]) == cut("recursive-500-n", doc["id"], doc["text"])


def test_the_cutters_download_nothing_and_work_with_the_network_unreachable():
    code = f"""
import socket, json
def refuse(*a, **k): raise OSError("network unreachable in this test")
socket.socket.connect = refuse; socket.create_connection = refuse; socket.getaddrinfo = refuse
from evaluation.chunking import cut
rows = [json.loads(l) for l in open({str(SAMPLE)!r}, encoding="utf-8")][:20]
print(sum(len(cut(f"{{t}}-500-h", r["id"], r["text"], r["title"])) for t in {MODEL_FREE!r} for r in rows))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 100


def test_the_outline_reads_heading_paths_skips_code_and_joins_an_empty_heading_to_what_follows():
    text = ("Intro line.\n\n# A\n\nabout a\n\n## B\n\nabout b\n\n```sh\n# not a heading\n```\n\n## C\n\n### C1\n\n"
            "about c1\n\n# D\n\nabout d\n")
    sections = Outline.of(text).sections
    assert [s.headings for s in sections] == [(), ("A",), ("A", "B"), ("A", "C", "C1"), ("D",)]
    # "## C" has nothing of its own under it: its line starts the section of "### C1"
    assert text[sections[3].start:].startswith("## C\n\n### C1")
    assert "# not a heading" in text[sections[2].start:sections[2].end]
    assert [text[s.start:s.end] for s in sections] == [text[s.start:e] for s, e in
                                                       zip(sections,
                                                           [x.start for x in sections[1:]] + [len(text)], strict=True)]
