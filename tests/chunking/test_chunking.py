"""Chunking: structure, limits, coverage, pages and evidence quotes, on real package READMEs."""
from __future__ import annotations

import random
import re
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from evaluation.engine.chunking import (STRATEGIES, Chunk, ChunkSettings, chunk_corpus, chunk_document,
                                 fold_whitespace, split_sentences)
from evaluation.engine.corpus import Document, read_corpus
from evaluation.errors import UsageError

# Whole package READMEs (the shipped sample splits them by section): long, real Markdown.
SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "readmes.jsonl"
ALL_SETTINGS = [ChunkSettings(strategy=s, size=size, overlap=overlap)
                for s in STRATEGIES for size, overlap in ((200, 40), (60, 10), (20, 9))]

# From the tokenizers README: shell comments in fences, and an empty "Installation" parent heading.
TOKENIZERS = """\
# Tokenizers

Provides an implementation of today's most used tokenizers, with a focus on performance and
versatility.

## Main features:

 - Train new vocabularies and tokenize using 4 pre-made tokenizers (Bert WordPiece and the 3
   most common BPE versions).
 - Extremely fast (both training and tokenization), thanks to the Rust implementation. Takes
   less than 20 seconds to tokenize a GB of text on a server's CPU.

### Installation

#### With pip:

```bash
pip install tokenizers
```

#### From sources:

To use this method, you need to have the Rust installed:

```bash
# Install with:
curl https://sh.rustup.rs -sSf | sh -s -- -y
export PATH="$HOME/.cargo/bin:$PATH"
```

Once Rust is installed, you can compile doing the following

```bash
git clone https://github.com/huggingface/tokenizers
cd tokenizers/bindings/python

# Create a virtual env (you can use yours as well)
python -m venv .env
source .env/bin/activate

# Install `tokenizers` in the current virtual env
pip install -e .
```
"""

# From the numpy README (setext "---" headings); the "NumPy\n=====" title is added for the "=" form.
NUMPY = """\
NumPy
=====

NumPy is the fundamental package for scientific computing with Python.

Code of Conduct
----------------------

NumPy is a community-driven open source project developed by a diverse group of
[contributors](https://numpy.org/teams/). The NumPy leadership has made a strong
commitment to creating an open, inclusive, and positive community.

Call for Contributions
----------------------

The NumPy project welcomes your expertise and enthusiasm!
"""

# From the python-dotenv changelog, with the empty "## [Unreleased]" heading Keep a Changelog files carry.
DOTENV_CHANGELOG = """\
# Changelog

## [Unreleased]

## [v1.2.2] - 2026-03-01

### Added

- Support for Python 3.14, including the free-threaded (3.14t) build. (#)
"""


@pytest.fixture(scope="module")
def corpus():
    return read_corpus(SAMPLES)


@pytest.fixture(scope="module")
def chunked(corpus):
    """Each setting's chunks of the sample corpus, by document id, computed once."""
    by_settings = {}
    for settings in ALL_SETTINGS:
        by_settings[settings] = {d.id: chunk_document(d, settings) for d in corpus}
    return by_settings


def words(chunk: Chunk) -> list[str]:
    return chunk.text.split()


def test_ids_count_from_zero_in_each_document_and_keep_the_document_id(corpus, chunked):
    for settings in ALL_SETTINGS:
        for document in corpus:
            own = chunked[settings][document.id]
            assert all(c.doc_id == document.id for c in own)
            assert [c.n for c in own] == list(range(len(own)))
            assert [c.id for c in own] == [f"{document.id}:{n}" for n in range(len(own))]
            assert all(c.title == document.title for c in own)


def test_heading_paths_follow_markdown_levels_and_skip_shell_comments_in_fences():
    chunks = chunk_document(Document("tokenizers", TOKENIZERS))
    assert [c.headings for c in chunks] == [
        ("Tokenizers",),
        ("Tokenizers", "Main features:"),
        ("Tokenizers", "Main features:", "Installation", "With pip:"),  # empty parent kept in the path
        ("Tokenizers", "Main features:", "Installation", "From sources:"),
    ]
    assert chunks[0].text == ("Provides an implementation of today's most used tokenizers, "
                              "with a focus on performance and\nversatility.")
    assert "# Install with:\ncurl" in chunks[3].text
    assert "# Create a virtual env (you can use yours as well)" in chunks[3].text


def test_tilde_fences_hide_headings_as_backtick_fences_do():
    tilde = TOKENIZERS.replace("```bash", "~~~bash").replace("```\n", "~~~\n")
    assert ([c.headings for c in chunk_document(Document("t", tilde))]
            == [c.headings for c in chunk_document(Document("t", TOKENIZERS))])


def test_setext_headings_are_recognised_at_both_levels():
    chunks = chunk_document(Document("numpy", NUMPY, title="NumPy"))
    assert [c.headings for c in chunks] == [
        ("NumPy",), ("NumPy", "Code of Conduct"), ("NumPy", "Call for Contributions")]
    assert chunks[2].text == "The NumPy project welcomes your expertise and enthusiasm!"


def test_an_empty_heading_without_subsections_joins_the_next_section_as_text():
    chunks = chunk_document(Document("dotenv", DOTENV_CHANGELOG))
    assert len(chunks) == 1
    assert chunks[0].headings == ("Changelog", "[v1.2.2] - 2026-03-01", "Added")
    assert chunks[0].text == ("## [Unreleased]\n"
                              "- Support for Python 3.14, including the free-threaded (3.14t) build. (#)")


def test_indexed_text_puts_title_and_path_first_without_repeating_the_title(corpus):
    idna = chunk_document(corpus.get("idna"))[1]
    assert idna.title == idna.headings[0] == "Internationalized Domain Names in Applications (IDNA)"
    assert idna.indexed_text == ("Internationalized Domain Names in Applications (IDNA) > Usage\n"
                                 + idna.text)
    numpy = chunk_document(Document("numpy", NUMPY, title="NumPy package"))[1]
    assert numpy.indexed_text == "NumPy package — NumPy > Code of Conduct\n" + numpy.text
    plain = chunk_document(Document("notes.txt", "Short plain note."))[0]
    assert plain.indexed_text == "Short plain note."


def test_no_chunk_holds_more_than_a_quarter_over_size(chunked):
    for settings, by_document in chunked.items():
        longest = max(len(words(c)) for chunks in by_document.values() for c in chunks)
        assert longest <= settings.size * 1.25, settings


def test_no_chunk_is_empty(chunked):
    for settings, by_document in chunked.items():
        assert all(words(c) for chunks in by_document.values() for c in chunks), settings


def test_a_tiny_last_piece_joins_the_chunk_before_it_when_that_stays_within_a_quarter_over(corpus):
    readme = corpus.get("cloudpickle").text
    intro = Document("intro.txt", readme[readme.index("`cloudpickle` makes"):readme.index("\n\n\nInstallation")])
    # Its paragraphs hold 20, 25, 31, 15, 12 and 26 words.
    merged = chunk_document(intro, ChunkSettings(size=110, overlap=20))
    assert [len(words(c)) for c in merged] == [20 + 25 + 31 + 15 + 12 + 26]  # 26 new < 110 / 4; 129 <= 137
    kept_apart = chunk_document(intro, ChunkSettings(size=100, overlap=20))
    assert [len(words(c)) for c in kept_apart] == [20 + 25 + 31 + 15, 20 + 12 + 26]  # 12 + 26 new >= 100 / 4


def test_every_word_of_every_document_is_in_a_chunk(corpus, chunked):
    heading_markup = re.compile(r"#{1,6}|={2,}|-{2,}")  # ATX markers and setext underlines
    for settings in ALL_SETTINGS:
        for document in corpus:
            chunks = chunked[settings][document.id]
            kept = Counter(w for c in chunks for w in [*words(c), *" ".join(c.headings).split()])
            needed = Counter(w for w in document.text.split() if not heading_markup.fullmatch(w))
            assert not needed - kept, (settings, document.id)


def test_consecutive_chunks_of_a_section_share_exactly_the_overlap(chunked):
    for settings, by_document in chunked.items():
        pairs = 0
        for chunks in by_document.values():
            for a, b in pairwise(chunks):
                # No two neighbouring sections of the sample corpus share a heading path.
                if a.page == b.page and (settings.strategy != "structure" or a.headings == b.headings):
                    pairs += 1
                    assert words(a)[-settings.overlap:] == words(b)[:settings.overlap]
        assert pairs > 0, settings


def test_a_code_block_stays_whole_unless_it_alone_exceeds_the_size():
    section = TOKENIZERS[TOKENIZERS.index("#### From sources:"):]
    second_block = section[section.index("```bash\ngit"):].rstrip()
    assert len(second_block.split()) == 36
    fits = chunk_document(Document("t", section), ChunkSettings(size=40, overlap=5))
    assert any(second_block in c.text for c in fits)
    too_long = chunk_document(Document("t", section), ChunkSettings(size=20, overlap=5))
    assert not any(second_block in c.text for c in too_long)
    cut_inside = [c for c in too_long if "git clone" in c.text or "pip install -e" in c.text]
    assert all(section[section.index(c.text) + len(c.text):][:1] == "\n" for c in cut_inside)


def test_a_plain_text_document_is_cut_at_sentence_ends(corpus):
    readme = corpus.get("cloudpickle").text
    intro = readme[readme.index("`cloudpickle` makes"):readme.index("\n\n\nInstallation")]
    chunks = chunk_document(Document("cloudpickle-intro.txt", intro), ChunkSettings(size=40, overlap=8))
    assert len(chunks) > 1
    assert all(c.headings == () and c.page is None for c in chunks)
    assert all(re.search(r"[.!?][*)]*$", c.text) for c in chunks)


def test_sentences_are_not_cut_at_abbreviations_or_version_numbers(corpus):
    dotenv = corpus.get("python-dotenv").text
    line = dotenv[dotenv.index("- Reject more malformed"):dotenv.index("- Fix handling of lines with")]
    assert split_sentences(line) == ["- Reject more malformed lines (e.g. \"A: B\", \"a='b',c\")."]
    identity = corpus.get("azure-identity").text
    start = identity.index("This is the last version to support Python 3.5.")
    assert split_sentences(identity[start:identity.index("### Added", start)]) == [
        "This is the last version to support Python 3.5.",
        "The next version will require\nPython 2.7 or 3.6+.",
    ]


def _paged_tokenizers(corpus) -> Document:
    text = corpus.get("tokenizers").text
    first, second = text.index(" - Extremely fast"), text.index("#### From sources:")
    return Document("tokenizers.pdf", "\f".join([text[:first], text[first:second], text[second:]]))


def test_chunks_of_a_paged_document_carry_their_page_and_never_straddle_one(corpus):
    document = _paged_tokenizers(corpus)
    for settings in ALL_SETTINGS:
        chunks = chunk_document(document, settings)
        assert [c.n for c in chunks] == list(range(len(chunks)))
        assert [c.page for c in chunks] == sorted(c.page for c in chunks)
        assert {c.page for c in chunks} == {1, 2, 3}
        for chunk in chunks:
            assert fold_whitespace(chunk.text) in fold_whitespace(document.pages[chunk.page - 1])


def test_a_section_running_onto_the_next_page_keeps_its_headings(corpus):
    chunks = chunk_document(_paged_tokenizers(corpus))
    first_on_page_2 = next(c for c in chunks if c.page == 2)
    assert first_on_page_2.headings == ("Tokenizers", "Main features:")
    assert first_on_page_2.text.startswith("- Extremely fast")


def _touches_heading_line(text: str, start: int, end: int) -> bool:
    """Whether the span touches a line that may be a heading (conservative: fenced comments count)."""
    lines = text.split("\n")
    first, last = text.count("\n", 0, start), text.count("\n", 0, end)
    underline = re.compile(r"\s*(={2,}|-{2,})\s*")
    return any(lines[i].lstrip().startswith("#") or underline.fullmatch(lines[i])
               or (i + 1 < len(lines) and underline.fullmatch(lines[i + 1]))
               for i in range(first, last + 1))


@pytest.mark.parametrize("settings", [ChunkSettings(strategy=s) for s in STRATEGIES]
                         + [ChunkSettings(strategy=s, size=20, overlap=9) for s in STRATEGIES],
                         ids=lambda s: f"{s.strategy}-{s.size}-{s.overlap}")
def test_a_quote_no_longer_than_the_overlap_is_found_in_a_chunk(corpus, chunked, settings):
    rng = random.Random(20240611)
    checked = 0
    for document in corpus:
        texts = [fold_whitespace(c.text) for c in chunked[settings][document.id]]
        spans = [m.span() for m in re.finditer(r"\S+", document.text)]
        for _ in range(200):
            length = rng.randint(3, min(10, settings.overlap))
            i = rng.randrange(len(spans) - length)
            start, end = spans[i][0], spans[i + length - 1][1]
            # "structure" lifts heading lines out of the text: its guarantee holds within a section.
            if settings.strategy == "structure" and _touches_heading_line(document.text, start, end):
                continue
            quote = fold_whitespace(document.text[start:end])
            assert any(quote in text for text in texts), (document.id, quote)
            checked += 1
    assert checked > 2000


def test_chunking_is_deterministic_and_chunk_corpus_keeps_document_order(corpus, chunked):
    for settings in (ALL_SETTINGS[0], ALL_SETTINGS[-1]):
        assert chunk_corpus(corpus, settings) == [c for d in corpus for c in chunked[settings][d.id]]
    reversed_order = chunk_corpus(list(corpus)[::-1])
    assert sorted(reversed_order, key=lambda c: c.id) == sorted(chunk_corpus(corpus), key=lambda c: c.id)


def test_settings_round_trip_through_to_dict():
    for settings in ALL_SETTINGS:
        assert settings.to_dict() == {"strategy": settings.strategy, "size": settings.size,
                                      "overlap": settings.overlap}
        assert ChunkSettings(**settings.to_dict()) == settings
        assert ChunkSettings.from_dict(settings.to_dict()) == settings


@pytest.mark.parametrize("arguments, message", [
    ({"strategy": "structur"}, 'Chunking strategy "structur" is not known. Did you mean "structure"? '
                               "Use one of: structure, fixed, recursive."),
    ({"strategy": "semantic"}, 'Chunking strategy "semantic" is not known. Use one of: structure, fixed, recursive.'),
    ({"size": 19}, "Chunk size must be a whole number of words, at least 20 (got 19); raise it."),
    ({"size": 200.0}, "Chunk size must be a whole number of words, at least 20 (got 200.0); raise it."),
    ({"size": 200, "overlap": 100}, "Chunk overlap must be a whole number of words from 0 to 99, "
                                    "under half the size of 200 (got 100); lower it or raise the size."),
    ({"overlap": -1}, "Chunk overlap must be a whole number of words from 0 to 99, "
                      "under half the size of 200 (got -1); lower it or raise the size."),
])
def test_settings_that_do_not_fit_are_refused_with_the_fix(arguments, message):
    with pytest.raises(UsageError) as raised:
        ChunkSettings(**arguments)
    assert str(raised.value) == message


def test_an_unknown_setting_name_suggests_the_closest():
    with pytest.raises(UsageError, match='"sise" is not a chunking setting. Did you mean "size"?'):
        ChunkSettings.from_dict({"strategy": "fixed", "sise": 100})
