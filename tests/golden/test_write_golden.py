"""``write_golden`` against a chat completions server on 127.0.0.1 with scripted replies, over a small
index built with the real bundled models: every check that turns a question down, the critic's
threshold both ways, multi-hop rows, the cache (resume, zero calls on a repeat), the same rows for the
same seed, an existing file refused, and a model that refuses or goes quiet stopping the run with
nothing written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.chat import ChatSettings
from evaluation.errors import GoldenFileError, WriterUnavailableError
from evaluation.golden import check_golden, read_golden
from evaluation.golden.writing import ChatWriter, write_golden
from evaluation.golden.writing.passages import spread
from evaluation.golden.writing import write as steps

from chat_server import ChatServer, Reply, completion
from scripted_writer import ScriptedWriter, Topic

TOPICS = [
    Topic("sourdough", "How often should I feed a bread starter kept in the fridge?", "Once a week.",
          "feed the sourdough starter once a week"),
    Topic("telescope", "How far can I push the zoom on a backyard scope before the picture degrades?", "Its aperture.",
          "useful magnification of a telescope is limited by its aperture"),
    Topic("extension", "How much extra time do I get if I ask for more time on my tax return?", "Six months.",
          "an extension gives six more months to file"),
    Topic("tomato", "How much water do vegetable plants need in hot July weather?", "About five litres a day.",
          "tomato plants need about five litres of water"),
    Topic("castling", "When is it forbidden to castle my king?", "When in check.",
          "castling is not allowed while the king is in check"),
    Topic("tunnel", "Why do large packets get dropped over my VPN connection?", "The tunnel lowers the MTU.",
          "the tunnel adds headers and lowers the MTU"),
]
TEXTS = {
    "bread": "Bakers who keep a starter in the refrigerator should feed the sourdough starter once a week with equal "
             "weights of flour and water, and let it rise at room temperature before baking with it again.",
    "stars": "For a small instrument the useful magnification of a telescope is limited by its aperture, roughly twice "
             "the aperture in millimetres; beyond that the image grows dim and blurred however strong the eyepiece.",
    "taxes": "People who cannot finish their paperwork in time can file a form before the deadline: an extension gives "
             "six more months to file the return, although any tax owed is still due on the original date.",
    "garden": "In the hottest weeks of summer tomato plants need about five litres of water every day, given early in "
              "the morning at the roots, because wet leaves in the evening invite mould and blight.",
    "chess": "A player may move the king two squares toward a rook that has never moved, but castling is not allowed "
             "while the king is in check, nor through a square an enemy piece attacks, nor into check.",
    "vpn": "Connections through a virtual private network can stall on large transfers because the tunnel adds headers "
           "and lowers the MTU, so packets that were the right size before are now too big and get dropped.",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory) -> Path:
    from evaluation.engine.index import build_index

    folder = tmp_path_factory.mktemp("writer")
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": doc, "text": text}) + "\n" for doc, text in TEXTS.items()),
                      encoding="utf-8")
    build_index(corpus, folder / "index")
    return folder / "index"


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


def chat_writer(server, **options) -> ChatWriter:
    settings = ChatSettings(endpoint=f"{server.base}/v1", model="writer-model", auth="none", role="writer",
                            retries=options.pop("retries", 0), timeout_s=options.pop("timeout_s", 10.0), max_tokens=600)
    return ChatWriter(settings, sleep=lambda s: None)


def order(index) -> list[str]:
    """The documents in the order write_golden asks about them (seed 0)."""
    from evaluation.engine.index import open_index

    return [p.doc_id for p in spread(open_index(index).chunks, 0)]


def key_of(doc_id: str) -> str:
    return TOPICS[list(TEXTS).index(doc_id)].key


def run(server, index, model: ScriptedWriter, path=None, **options):
    server.respond = model
    with chat_writer(server) as writer:
        return write_golden(index, path, options.pop("n", 3), writer=writer, mix=options.pop("mix", {"factual": 1}),
                            evolve=options.pop("evolve", 0), **options)


def test_every_row_is_a_draft_naming_its_document_answer_and_quote_and_the_file_reads_and_checks(server,
                                                                                                 index, tmp_path):
    out = tmp_path / "golden.jsonl"
    done = run(server, index, ScriptedWriter(TOPICS), out, n=3)
    first = order(index)[:3]
    assert [row.expected for row in done.rows] == [(doc,) for doc in first]
    for row, doc in zip(done.rows, first, strict=True):
        topic = TOPICS[list(TEXTS).index(doc)]
        assert (row.question, row.reference, row.evidence, row.draft) == (topic.question, topic.answer,
                                                                          (topic.quote,), True)
        assert row.hint.startswith(f"factual question drafted by a model from {doc}")
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left beside it
    golden = read_golden(out)
    assert len(golden.questions) == golden.drafts == 3 and not golden.problems
    checked = check_golden(out)
    assert checked.ok and checked.drafts == 3
    # 3 passages: a rating, a draft and the critic's verdict each; nothing reused without a cache
    assert (done.asked, done.reused, done.kinds) == (3 * 3, 0, {"factual": 3})
    assert done.unfindable == () and "local.keyword.bm25" in done.searched_with


def test_a_settings_object_drafts_the_rows_its_keywords_draft_and_a_keyword_goes_over_it(server, index):
    from evaluation.golden.writing import WritingSettings

    by_keywords = run(server, index, ScriptedWriter(TOPICS), n=2, seed=3)
    server.respond = ScriptedWriter(TOPICS)
    with chat_writer(server) as writer:
        by_object = write_golden(index, writer=writer, settings=WritingSettings(n=5, mix={"factual": 1}, evolve=0,
                                                                                seed=3), n=2)
    assert by_object.rows == by_keywords.rows and len(by_object.rows) == by_object.wanted == 2


def test_a_quote_that_is_not_on_its_page_is_turned_down_and_asked_for_again(server, index):
    doc = order(index)[0]
    topic = TOPICS[list(TEXTS).index(doc)]
    invented = {"question": topic.question, "answer": topic.answer,
                "evidence": [topic.quote.replace(" ", " really ", 1)]}
    model = ScriptedWriter(TOPICS, drafts={topic.key: [invented]})
    done = run(server, index, model, n=1)
    assert done.turned_down == {steps.QUOTE_OFF_PAGE: 1}
    assert done.rows[0].evidence == (topic.quote,)  # the second draft's quote, which is on the page
    assert model.tasks.count("write_question") == 2


def test_a_quote_whose_spacing_differs_from_the_page_still_counts(server, index):
    doc = order(index)[0]
    topic = TOPICS[list(TEXTS).index(doc)]
    spaced = {"question": topic.question, "answer": topic.answer, "evidence": [topic.quote.replace(" ", "\n  ", 2)]}
    done = run(server, index, ScriptedWriter(TOPICS, drafts={topic.key: [spaced]}), n=1)
    assert done.turned_down == {} and len(done.rows) == 1


def test_a_question_that_copies_the_passage_is_turned_down(server, index):
    doc = order(index)[0]
    topic = TOPICS[list(TEXTS).index(doc)]
    copied = {"question": TEXTS[doc].split(",")[0] + "?", "answer": topic.answer, "evidence": [topic.quote]}
    done = run(server, index, ScriptedWriter(TOPICS, drafts={topic.key: [copied]}), n=1)
    assert done.turned_down == {steps.COPIED: 1} and done.rows[0].question == topic.question


def test_a_near_duplicate_of_an_earlier_question_is_turned_down(server, index):
    first, second = order(index)[:2]
    earlier = TOPICS[list(TEXTS).index(first)]
    later = TOPICS[list(TEXTS).index(second)]
    reworded = "Tell me, " + earlier.question[0].lower() + earlier.question[1:]  # the same question, other words
    repeat = {"question": reworded, "answer": later.answer, "evidence": [later.quote]}
    done = run(server, index, ScriptedWriter(TOPICS, drafts={later.key: [repeat]}), n=2)
    assert done.turned_down == {steps.NEAR_DUPLICATE: 1}
    assert [row.question for row in done.rows] == [earlier.question, later.question]


def test_a_passage_rated_at_the_threshold_is_kept_and_one_just_below_is_passed_over(server, index):
    first, second = order(index)[:2]
    ratings = {key_of(first): (0.5, 0.75, 1.0),   # mean (0.5 + 0.75 + 1.0) / 3 = 0.75: at the threshold
               key_of(second): (0.5, 0.75, 0.95)}  # mean 2.2 / 3 = 0.733: below it
    done = run(server, index, ScriptedWriter(TOPICS, ratings=ratings), n=2, threshold=0.75)
    assert done.passed_over == {steps.LOW_PASSAGE: 1}
    assert [row.expected[0] for row in done.rows] == [first, order(index)[2]]
    lower = run(server, index, ScriptedWriter(TOPICS, ratings=ratings), n=2, threshold=0.7)
    assert lower.passed_over == {} and [row.expected[0] for row in lower.rows] == [first, second]


def test_a_question_the_critic_scores_at_the_threshold_is_kept_and_below_it_turned_down(server, index):
    first, second = order(index)[:2]
    scores = {TOPICS[list(TEXTS).index(first)].question: 0.75, TOPICS[list(TEXTS).index(second)].question: 0.5}
    done = run(server, index, ScriptedWriter(TOPICS, scores=scores), n=2, threshold=0.75, tries=2)
    # the second passage's question is scored 0.5 twice (both drafts are the same question): set aside
    assert done.turned_down == {steps.LOW_QUESTION: 2} and done.set_aside == 1
    assert [row.expected[0] for row in done.rows] == [first, order(index)[2]]
    kinder = run(server, index, ScriptedWriter(TOPICS, scores=scores), n=2, threshold=0.5, tries=2)
    assert kinder.turned_down == {} and [row.expected[0] for row in kinder.rows] == [first, second]


def test_a_multi_hop_row_names_both_documents_and_quotes_each(server, index, tmp_path):
    out = tmp_path / "golden.jsonl"
    done = run(server, index, ScriptedWriter(TOPICS), out, n=1, mix={"multihop": 1})
    [row] = done.rows
    assert len(row.expected) == 2 and row.expected[0] == order(index)[0] and row.expected[0] != row.expected[1]
    quotes = [TOPICS[list(TEXTS).index(doc)].quote for doc in row.expected]
    assert row.evidence == tuple(quotes) and done.kinds == {"multihop": 1}
    assert row.hint.startswith(f"multihop question drafted by a model from {row.expected[0]} and {row.expected[1]}")
    assert read_golden(out).questions[0].expected == row.expected


def test_a_multi_hop_draft_quoting_one_passage_only_is_turned_down(server, index):
    first = order(index)[0]
    topic = TOPICS[list(TEXTS).index(first)]
    one_sided = {"question": "What two things should I know here?", "answer": topic.answer, "evidence": [topic.quote]}
    done = run(server, index, ScriptedWriter(TOPICS, drafts={topic.key: [one_sided]}), n=1, mix={"multihop": 1})
    assert done.turned_down == {steps.NO_QUOTE_EACH: 1} and len(done.rows[0].expected) == 2


def test_a_rewrite_is_kept_when_it_passes_and_the_first_question_stays_when_it_copies(server, index):
    first, second = order(index)[:2]
    copy = TEXTS[second].split(",")[0] + "?"
    model = ScriptedWriter(TOPICS, harder={key_of(second): copy})
    done = run(server, index, model, n=2, evolve=1)
    earlier = TOPICS[list(TEXTS).index(first)].question
    assert done.rows[0].question == "As a beginner, " + earlier[0].lower() + earlier[1:]
    assert done.rows[1].question == TOPICS[list(TEXTS).index(second)].question
    assert done.evolved == 1 and done.turned_down == {steps.REWRITE + steps.COPIED: 1}


def test_the_kinds_follow_the_mix(server, index):
    done = run(server, index, ScriptedWriter(TOPICS), n=4, mix={"factual": 2, "howto": 1, "comparison": 1})
    assert done.kinds == {"factual": 2, "howto": 1, "comparison": 1}
    assert [row.hint.split(" ", 1)[0] for row in done.rows] == ["factual", "howto", "comparison", "factual"]


def test_a_stopped_run_resumes_from_the_cache_and_a_repeat_makes_no_call(server, index, tmp_path):
    cache, out = tmp_path / "replies.jsonl", tmp_path / "golden.jsonl"
    model = ScriptedWriter(TOPICS)
    answered = []

    def quits_after_four(seen):
        if len(answered) == 4:
            return Reply(503, {"error": {"message": "The service is overloaded."}})
        answered.append(1)
        return model(seen)

    server.respond = quits_after_four
    with pytest.raises(WriterUnavailableError, match="answered 503 Service Unavailable"), chat_writer(server) as writer:
        write_golden(index, out, 3, writer=writer, mix={"factual": 1}, evolve=1, cache=cache)
    assert not out.exists() and len(cache.read_text().splitlines()) == 4
    before = len(server.seen)
    resumed = run(server, index, ScriptedWriter(TOPICS), out, n=3, evolve=1, cache=cache)
    # 3 passages x (rating, draft, verdict, rewrite, verdict of the rewrite) = 15 replies; 4 were kept
    assert (resumed.asked, resumed.reused) == (15 - 4, 4) and len(server.seen) - before == 11
    again_at = len(server.seen)
    again = run(server, index, ScriptedWriter(TOPICS), tmp_path / "again.jsonl", n=3, evolve=1, cache=cache)
    assert len(server.seen) == again_at and (again.asked, again.reused) == (0, 15)
    assert again.rows == resumed.rows
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()


def test_the_same_seed_gives_the_same_rows_and_another_seed_other_passages(server, index):
    one = run(server, index, ScriptedWriter(TOPICS), n=3, seed=7)
    two = run(server, index, ScriptedWriter(TOPICS), n=3, seed=7)
    other = run(server, index, ScriptedWriter(TOPICS), n=3, seed=8)
    assert one.rows == two.rows
    assert [r.expected for r in other.rows] != [r.expected for r in one.rows]


def test_an_existing_file_is_refused_before_any_call_and_left_as_it_was(server, index, tmp_path):
    out = tmp_path / "golden.jsonl"
    out.write_text('{"question": "checked by a person", "expected": ["bread"]}\n', encoding="utf-8")
    with pytest.raises(GoldenFileError, match="already exists"):
        run(server, index, ScriptedWriter(TOPICS), out, n=1)
    assert server.seen == [] and out.read_text(encoding="utf-8") == ('{"question": "checked by a person", "expected": '
                                                                     '["bread"]}\n')


def test_a_refusing_service_stops_the_run_at_once_and_nothing_is_written(server, index, tmp_path):
    out = tmp_path / "golden.jsonl"
    server.answer(Reply(401, {"error": {"message": "Access denied due to invalid subscription key."}}))
    with pytest.raises(WriterUnavailableError) as caught, chat_writer(server, retries=2) as writer:
        write_golden(index, out, 3, writer=writer)
    assert "refused the request: 401 Unauthorized: Access denied" in str(caught.value)
    assert len(server.seen) == 1 and not out.exists() and list(tmp_path.iterdir()) == []


def test_a_model_that_declines_stops_the_run(server, index, tmp_path):
    server.answer(Reply(body=completion(None, refusal="I can't help with that.")))
    with pytest.raises(WriterUnavailableError, match="declined to write: I can't help"), chat_writer(server) as writer:
        write_golden(index, tmp_path / "golden.jsonl", 3, writer=writer)
    assert len(server.seen) == 1 and list(tmp_path.iterdir()) == []


def test_a_silent_service_stops_the_run_after_its_retries_and_nothing_is_written(server, index, tmp_path):
    server.answer(Reply(body=completion('{"score": 1}'), delay_s=1.0))
    with pytest.raises(WriterUnavailableError, match=r"did not answer within 0.2 s \(2 attempt\(s\)\)"), \
            chat_writer(server, retries=1, timeout_s=0.2) as writer:
        write_golden(index, tmp_path / "golden.jsonl", 3, writer=writer)
    assert len(server.seen) == 2 and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content", ["", "Sure! Here is a question about the passage.", '{"clarity": "high"}'])
def test_an_empty_reply_or_one_that_is_not_the_json_asked_for_stops_the_run_and_is_not_cached(server, index, tmp_path,
                                                                                                content):
    server.answer(Reply(body=completion(content)))
    cache = tmp_path / "replies.jsonl"
    with pytest.raises(WriterUnavailableError), chat_writer(server) as writer:
        write_golden(index, tmp_path / "golden.jsonl", 3, writer=writer, cache=cache)
    assert len(server.seen) == 1 and not (tmp_path / "golden.jsonl").exists() and not cache.exists()


def test_a_plain_callable_from_messages_to_text_is_a_writer_too(index):
    model = ScriptedWriter(TOPICS)

    class Seen:
        def __init__(self, messages):
            self.body = {"messages": messages}

    done = write_golden(index, None, 2, writer=lambda messages: json.loads(json.dumps(model(Seen(messages)).body))
                        ["choices"][0]["message"]["content"], mix={"factual": 1}, evolve=0)
    assert len(done.rows) == 2 and done.asked == 6


def test_chat_writer_called_with_a_documents_text_gives_a_question_for_golden_template(server):
    server.respond = ScriptedWriter(TOPICS)
    with chat_writer(server) as writer:
        assert writer(TEXTS["chess"]) == TOPICS[4].question
    assert server.seen[0].body["model"] == "writer-model" and server.seen[0].path == "/v1/chat/completions"


def test_from_environment_reads_azure_openai_or_any_endpoint_by_name():
    azure = ChatWriter.from_environment({"AZURE_OPENAI_ENDPOINT": "https://team.openai.azure.com",
                                         "AZURE_OPENAI_WRITER_DEPLOYMENT": "gpt-4o-mini"})
    assert (azure.settings.kind, azure.settings.auth, azure.settings.role) == ("azure", "managed_identity", "writer")
    assert azure.settings.url.startswith("https://team.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions")
    keyed = ChatWriter.from_environment({"EVALUATION_WRITER_ENDPOINT": "http://127.0.0.1:8080/v1",
                                         "EVALUATION_WRITER_MODEL": "phi-4-mini", "EVALUATION_WRITER_API_KEY": "k"})
    assert (keyed.settings.url, keyed.settings.auth, keyed.name) == ("http://127.0.0.1:8080/v1/chat/completions", "key",
                                                                      "phi-4-mini")
    from evaluation.errors import UsageError

    with pytest.raises(UsageError, match="no writer model is set"):
        ChatWriter.from_environment({})


def saving_a_file_at_first_reply(out: Path):
    """A scripted writer, called in process, that first saves a file at ``out``: a person saving one meanwhile
    (a person takes no claim on the file)."""
    model = ScriptedWriter(TOPICS)

    class Seen:
        def __init__(self, messages):
            self.body = {"messages": messages}

    def writer(messages):
        if not out.exists():
            out.write_text("somebody else's file\n", encoding="utf-8")
        return model(Seen(messages)).body["choices"][0]["message"]["content"]

    return writer


def test_a_file_that_appears_while_the_questions_are_drafted_is_not_written_over(index, tmp_path):
    out = tmp_path / "golden.jsonl"
    writer = saving_a_file_at_first_reply(out)

    with pytest.raises(GoldenFileError, match="appeared while the questions were drafted"):
        write_golden(index, out, 2, writer=writer, mix={"factual": 1}, evolve=0)
    assert out.read_text(encoding="utf-8") == "somebody else's file\n" and list(tmp_path.iterdir()) == [out]


def test_progress_says_which_stage_is_running(server, index):
    seen = []
    run(server, index, ScriptedWriter(TOPICS), n=2, progress=lambda done, total,
        label: seen.append((done, total, label)))
    stages = list(dict.fromkeys(label.split(" (", 1)[0] for _, _, label in seen))
    assert stages == ["write_golden: writing questions", "write_golden: searching the questions with each setup"]
    assert (2, 2) in [(done, total) for done, total, label in seen if "writing" in label]  # 2 of the 2 asked for
    searched = [(done, total) for done, total, label in seen if "searching" in label]
    assert searched[-1][0] == searched[-1][1] == 8  # every setup without a ranker: 2 keyword, 3 dense, 3 hybrid


def test_the_voice_reaches_the_writer_and_a_separate_critic_gets_every_rating_and_verdict(server, index):
    model = ScriptedWriter(TOPICS)
    critic_tasks = []

    class Seen:
        def __init__(self, messages):
            self.body = {"messages": messages}

    def critic(messages):
        critic_tasks.append(messages[0]["content"].split("\n", 1)[0])
        return model(Seen(messages)).body["choices"][0]["message"]["content"]

    done = run(server, index, model, n=2, evolve=1, critic=critic, scenario="night-shift support engineers",
               task="fixing an outage fast", examples=("why is my pod pending?",))
    writes = [seen.body["messages"][-1]["content"] for seen in server.seen
              if seen.body["messages"][0]["content"].startswith("Task: write_question")]
    assert len(writes) == 2 and all("Who asks: night-shift support engineers" in w and "Why they ask: fixing an outage "
                                    "fast" in w and "- why is my pod pending?" in w for w in writes)
    # per row: the passage's rating, the draft's verdict, the rewrite's verdict
    assert critic_tasks == ["Task: rate_passage", "Task: judge_question", "Task: judge_question"] * 2
    assert len(server.seen) == 2 * 2 and done.asked == 2 * 5


def test_when_no_question_passes_no_file_is_written_and_the_summary_says_why(server, index, tmp_path):
    out = tmp_path / "golden.jsonl"
    done = run(server, index, ScriptedWriter(TOPICS), out, n=2, threshold=1.0)  # every passage rated 0.9
    assert done.rows == () and done.passed_over == {steps.LOW_PASSAGE: 6} and done.path is None
    assert not out.exists() and "No question passed, so no file was written." in done.summary()


def test_a_chat_writer_is_the_writer_golden_template_takes(server, index, tmp_path):
    from evaluation.golden import golden_template

    corpus = index.parent / "corpus.jsonl"
    server.respond = ScriptedWriter(TOPICS)
    with chat_writer(server) as writer:
        rows = golden_template(corpus, tmp_path / "golden.jsonl", n=6, writer=writer)
    by_doc = {row["expected"][0]: row for row in rows}
    assert by_doc["chess"]["question"] == TOPICS[4].question and all(row["draft"] for row in rows)
    assert [seen.body["messages"][0]["content"].split("\n", 1)[0] for seen in server.seen] == [
        "Task: template_question"
    ] * 6


# -- issue 37: the quote check's rules, the cache, --out, replies nested without end ---------------------

def test_a_quote_in_other_capitals_is_not_on_its_page_and_is_asked_for_again(server, index):
    from evaluation.golden.writing.checks import quote_on_page

    doc = order(index)[0]
    topic = TOPICS[list(TEXTS).index(doc)]
    capital = topic.quote[0].upper() + topic.quote[1:]  # "Feed the sourdough ...": the page writes "feed"
    assert quote_on_page(topic.quote, TEXTS[doc]) and not quote_on_page(capital, TEXTS[doc])
    model = ScriptedWriter(TOPICS, drafts={topic.key: [{"question": topic.question, "answer": topic.answer,
                                                         "evidence": [capital]}]})
    done = run(server, index, model, n=1)
    assert done.turned_down == {steps.QUOTE_OFF_PAGE: 1} and done.rows[0].evidence == (topic.quote,)


def test_a_quote_of_exactly_three_words_is_a_quote_and_two_words_are_not(server, index):
    doc = order(index)[0]
    topic = TOPICS[list(TEXTS).index(doc)]
    words = topic.quote.split()
    three, two = " ".join(words[:3]), " ".join(words[:2])
    drafted = {"question": topic.question, "answer": topic.answer}

    kept = run(server, index, ScriptedWriter(TOPICS, drafts={topic.key: [{**drafted, "evidence": [three]}]}), n=1)
    assert kept.turned_down == {} and kept.rows[0].evidence == (three,)
    short = run(server, index, ScriptedWriter(TOPICS, drafts={topic.key: [{**drafted, "evidence": [two]}]}), n=1)
    assert short.turned_down == {steps.NO_QUOTE: 1} and short.rows[0].evidence == (topic.quote,)


@pytest.mark.parametrize("foreign", ["the corpus", "a golden file", "garbage"])
def test_a_cache_that_is_not_a_reply_cache_is_refused_before_any_call_and_left_as_it_was(server, index, tmp_path,
                                                                                          foreign):
    from evaluation.errors import UsageError

    held = {"the corpus": (index.parent / "corpus.jsonl").read_bytes(),
            "a golden file": b'{"question": "How often is the starter fed?", "expected": ["bread"]}\n',
            "garbage": b"garbage\nmore garbage\n"}[foreign]
    cache, out = tmp_path / "replies.jsonl", tmp_path / "golden.jsonl"
    cache.write_bytes(held)
    with pytest.raises(UsageError, match=f"{cache} already exists and is not a reply cache this tool wrote; .*it is "
                                         "never appended to"):
        run(server, index, ScriptedWriter(TOPICS), out, n=1, cache=cache)
    assert server.seen == [] and cache.read_bytes() == held and not out.exists()


def test_the_cache_and_the_file_written_are_never_one_file(server, index, tmp_path):
    from evaluation.errors import UsageError

    both = tmp_path / "golden.jsonl"
    with pytest.raises(UsageError, match="is both the golden file to write and the reply cache"):
        run(server, index, ScriptedWriter(TOPICS), both, n=1, cache=both)
    assert server.seen == [] and not both.exists()


def test_a_cache_with_damaged_lines_says_which_it_skipped_and_each_new_reply_gets_a_line(server, index, tmp_path):
    cache = tmp_path / "replies.jsonl"
    run(server, index, ScriptedWriter(TOPICS), n=1, cache=cache)  # lines 1-3: a rating, a draft, a verdict
    with cache.open("a", encoding="utf-8") as out:
        out.write('changed by hand\n{"sha256": "ab')  # line 4, and line 5 cut short by a stop

    done = run(server, index, ScriptedWriter(TOPICS), n=2, cache=cache)

    assert (done.asked, done.reused) == (3, 3)  # the second passage's three replies are new
    assert "has 2 lines that are not a reply (lines 4, 5: cut short by a stop, or changed by hand)" in done.summary()
    lines = cache.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5 + 3 and lines[3:5] == ["changed by hand", '{"sha256": "ab']
    assert all(set(json.loads(line)) == {"sha256", "reply"} for line in lines[5:])


def test_golden_write_refuses_an_out_it_cannot_write_before_any_model_call(server, index, tmp_path, capsys):
    from conftest import run_cli

    (tmp_path / "notes.txt").write_text("not a folder\n", encoding="utf-8")
    out = tmp_path / "notes.txt" / "golden.jsonl"
    server.respond = ScriptedWriter(TOPICS)

    code, _, err = run_cli(capsys, "golden", "write", "--index", str(index), "--out", str(out), "--endpoint",
                           f"{server.base}/v1", "--model", "writer-model", "--auth", "none", "--quiet", "-n", "1")
    assert code == 1 and server.seen == []
    assert f"--out {out}: cannot write the drafts there ({tmp_path / 'notes.txt'} is a file, not a folder)" in err
    with pytest.raises(GoldenFileError, match="cannot write the drafts there"):
        run(server, index, ScriptedWriter(TOPICS), out, n=1)
    assert server.seen == []


@pytest.mark.parametrize("reply, says", [
    (Reply(body=completion("[" * 100_000 + "]" * 100_000)), "reply to rate_passage is not the JSON asked for"),
    (Reply(body='{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"),
     "sent a reply that is not JSON: .*nested too deeply"),
], ids=["in the message", "the whole body"])
def test_a_reply_nested_without_end_stops_the_run_with_a_sentence(server, index, tmp_path, reply, says):
    server.answer(reply)
    with pytest.raises(WriterUnavailableError, match=says), chat_writer(server) as writer:
        write_golden(index, tmp_path / "golden.jsonl", 1, writer=writer)
    assert len(server.seen) == 1 and list(tmp_path.iterdir()) == []


# -- two runs aimed at one file (issue 46) --------------------------------------------------------

def test_of_two_golden_write_runs_to_one_out_the_second_stops_before_any_model_call(index, tmp_path, capsys):
    """A real `golden write` process is drafting (its model holds its first reply); a second run to the same
    --out stops at once, naming the first, and asks its own model nothing. Once the first has written, a
    run again is refused by the file it wrote, still before any call."""
    import subprocess
    import sys
    import threading

    from conftest import run_cli

    out, root = tmp_path / "golden.jsonl", Path(__file__).resolve().parent.parent.parent
    started, release = threading.Event(), threading.Event()
    model = ScriptedWriter(TOPICS)

    def slow_first_reply(seen):
        started.set()
        release.wait(timeout=120)
        return model(seen)

    def flags(server):
        return ["--endpoint", f"{server.base}/v1", "--model", "writer-model", "--auth", "none", "--quiet", "-n", "1",
                "--evolve", "0"]

    with ChatServer() as first_model, ChatServer() as second_model:
        first_model.respond, second_model.respond = slow_first_reply, ScriptedWriter(TOPICS)
        first = subprocess.Popen([sys.executable, "-m", "evaluation", "golden", "write", "--index", str(index),
                                  "--out", str(out), *flags(first_model)], cwd=root,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert started.wait(timeout=300), first.communicate(timeout=5)
            code, _, err = run_cli(capsys, "golden", "write", "--index", str(index), "--out", str(out),
                                   *flags(second_model))
            assert code == 1 and second_model.seen == []
            assert f"{out} is being written already, by process {first.pid} on " in err
            assert "wait for that run to finish, or write to another --out" in err
        finally:
            release.set()
            stdout, stderr = first.communicate(timeout=300)
        assert first.returncode == 0, stderr
        assert len(read_golden(out).questions) == 1

        code, _, err = run_cli(capsys, "golden", "write", "--index", str(index), "--out", str(out),
                               *flags(second_model))
        assert code == 1 and second_model.seen == [] and "already exists" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden.jsonl"]  # the claim went with the run


@pytest.mark.parametrize("cached", [False, True], ids=["no cache", "a reply cache"])
def test_the_sentence_for_a_file_that_appeared_promises_a_free_run_only_when_a_cache_was_given(index, tmp_path,
                                                                                               cached):
    out, cache = tmp_path / "golden.jsonl", tmp_path / "replies.jsonl"

    with pytest.raises(GoldenFileError, match="appeared while the questions were drafted") as caught:
        write_golden(index, out, 1, writer=saving_a_file_at_first_reply(out), mix={"factual": 1}, evolve=0,
                     cache=cache if cached else None)
    said = str(caught.value)
    if cached:
        assert said.endswith("run again with another --out (the reply cache makes that cost nothing)")
    else:
        assert "cost nothing" not in said and "cache makes" not in said
        assert said.endswith("run again with another --out (with no --reply-cache given, that asks the model for "
                             "every reply again)")


def test_a_file_written_by_the_run_that_held_the_claim_just_before_is_refused_before_any_call(index, tmp_path,
                                                                                              monkeypatch):
    """This run checked --out (nothing there), then the run that held the claim wrote it and let go: once
    this run holds the claim, it looks again and stops, never drafting towards a file it cannot write."""
    out, calls = tmp_path / "golden.jsonl", []
    real_check = steps._check_out

    def the_other_run_finishes_meanwhile(path):
        real_check(path)
        if not out.exists():
            out.write_text('{"id": "q1", "question": "theirs", "expected": ["bread"]}\n', encoding="utf-8")

    monkeypatch.setattr(steps, "_check_out", the_other_run_finishes_meanwhile)
    with pytest.raises(GoldenFileError, match="already exists"):
        write_golden(index, out, 1, writer=lambda messages: calls.append(messages) or "{}", evolve=0)
    assert calls == [] and sorted(p.name for p in tmp_path.iterdir()) == ["golden.jsonl"]
