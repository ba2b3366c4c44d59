"""ChatJudge against a chat completions server on 127.0.0.1: the request it sends, a score, a refusal, a
timeout, a busy service, and malformed replies, each a sentence naming the URL and the fix."""
from __future__ import annotations

import json

import pytest

from evaluation.answers.judge import ChatJudge, JudgeSettings, parse_score
from evaluation.answers.scored import answer_report
from evaluation.errors import AnswerError, UsageError
from evaluation.golden import Question

from chat_server import ChatServer, Reply, completion
from conftest import run_cli
from fakes import write_golden

QUESTION = Question(id="rotate", question="How often are keys rotated?", expected=("keys.md",),
                    reference="Every 90 days.")


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


def judge_for(server, *, retries=0, timeout_s=5.0, waits=None, **options):
    settings = JudgeSettings(endpoint=f"{server.base}/v1", model="judge-model", auth=options.pop("auth", "none"),
                             retries=retries, timeout_s=timeout_s, **options)
    return ChatJudge(settings, sleep=(waits.append if waits is not None else lambda s: None))


def test_a_score_comes_back_from_the_openai_wire_format_and_the_request_is_what_the_api_expects(server):
    server.answer(Reply(body=completion('{"score": 0.75, "reason": "Right, but vague."}')))
    with judge_for(server, auth="key", api_key="sk-test") as judge:
        assert judge("correctness", QUESTION, "Quarterly.", ["Keys rotate every 90 days."]) == 0.75
    [seen] = server.seen
    assert seen.path == "/v1/chat/completions" and seen.headers["authorization"] == "Bearer sk-test"
    assert seen.body["model"] == "judge-model" and seen.body["temperature"] == 0
    system, user = seen.body["messages"]
    assert system["role"] == "system" and '{"score": S' in system["content"]
    for part in ("Quality to grade: correctness.", "Question: How often are keys rotated?",
                 "Reference answer: Every 90 days.", "Source 1: Keys rotate every 90 days.",
                 "Answer to grade: Quarterly."):
        assert part in user["content"]


def test_azure_openai_gets_its_deployment_path_api_version_and_key_or_managed_identity_token(server):
    server.answer(Reply(body=completion("```json\n{\"score\": 1, \"reason\": \"ok\"}\n```")))
    base = dict(endpoint=server.base, model="gpt-judge", api="azure", api_version="2024-10-21", retries=0)
    with ChatJudge(JudgeSettings(auth="key", api_key="azure-key", **base)) as judge:
        assert judge("helpfulness", QUESTION, "Every 90 days.") == 1
    with ChatJudge(JudgeSettings(auth="managed_identity", **base), token_provider=lambda: "token-1") as judge:
        judge("helpfulness", QUESTION, "Every 90 days.")
    key_call, token_call = server.seen
    assert key_call.path == "/openai/deployments/gpt-judge/chat/completions?api-version=2024-10-21"
    assert key_call.headers["api-key"] == "azure-key" and "authorization" not in key_call.headers
    assert token_call.headers["authorization"] == "Bearer token-1" and "api-key" not in token_call.headers
    assert "model" not in key_call.body  # Azure routes by deployment


def test_a_refusal_is_said_at_once_with_the_services_message_and_never_retried(server):
    server.answer(Reply(401, {"error": {"code": "401", "message": "Access denied due to invalid subscription key."}}))
    waits = []
    with pytest.raises(AnswerError) as caught, judge_for(server, retries=2, waits=waits) as judge:
        judge("correctness", QUESTION, "Every 90 days.")
    assert str(caught.value) == (f"the judge at {server.base}/v1/chat/completions refused the request: 401 "
                                 f"Unauthorized: "
                                 "Access denied due to invalid subscription key.; check the key, or that the identity "
                                 "can sign in")
    assert len(server.seen) == 1 and waits == []


def test_a_model_refusal_or_a_content_filter_stop_is_said_with_the_metric_and_question(server):
    server.answer(Reply(body=completion(None, refusal="I can't help with that.")),
                  Reply(body=completion("", finish_reason="content_filter")))
    with judge_for(server) as judge:
        with pytest.raises(AnswerError, match='declined to score correctness of question "rotate": I can\'t help'):
            judge("correctness", QUESTION, "Every 90 days.")
        with pytest.raises(AnswerError, match="content filter blocked it"):
            judge("correctness", QUESTION, "Every 90 days.")


def test_a_service_that_goes_quiet_times_out_after_the_bounded_retries(server):
    server.answer(Reply(body=completion('{"score": 1}'), delay_s=1.5))
    waits = []
    with pytest.raises(AnswerError) as caught, judge_for(server, retries=1, timeout_s=0.3, waits=waits) as judge:
        judge("correctness", QUESTION, "Every 90 days.")
    assert "did not answer within 0.3 s (2 attempt(s)); check that the service is up, or allow more time" in str(
        caught.value
    )
    assert len(server.seen) == 2 and waits == [1.0]  # one retry, after 2**0 = 1 s


def test_a_busy_service_is_retried_after_the_wait_it_asks_for(server):
    server.answer(Reply(429, {"error": {"message": "Rate limit reached."}}, headers={"Retry-After": "3"}),
                  Reply(503, "<html>upstream down</html>"),
                  Reply(body=completion('{"score": 0.5, "reason": "partly"}')))
    waits = []
    with judge_for(server, retries=2, waits=waits) as judge:
        assert judge("completeness", QUESTION, "Every 90 days.") == 0.5
    assert waits == [3.0, 2.0]  # Retry-After: 3, then our own 2**1 = 2 s


def test_a_service_still_busy_after_the_retries_is_a_sentence(server):
    server.answer(Reply(429, {"error": {"message": "Rate limit reached."}}, headers={"Retry-After": "120"}))
    waits = []
    with pytest.raises(AnswerError, match=r"answered 429 Too Many Requests 3 time\(s\): Rate limit reached."), \
            judge_for(server, retries=2, waits=waits) as judge:
        judge("completeness", QUESTION, "Every 90 days.")
    assert waits == [30.0, 30.0]  # Retry-After capped at 30 s


@pytest.mark.parametrize("reply,said", [
    (Reply(body="<html>502 Bad Gateway</html>"), "sent a reply that is not JSON: <html>502 Bad Gateway</html>"),
    (Reply(body={"object": "list", "data": []}), "sent a reply without choices[0].message"),
    (Reply(body=completion("The answer is quite good.")),
     'replied without a score for correctness of question "rotate": '
                                                         "The answer is quite good."),
])
def test_a_malformed_reply_is_a_sentence_showing_what_came_back(server, reply, said):
    server.answer(reply)
    with pytest.raises(AnswerError, match=None) as caught, judge_for(server, retries=2) as judge:
        judge("correctness", QUESTION, "Every 90 days.")
    assert said in str(caught.value) and len(server.seen) == 1  # not retried: it would say the same


def test_a_reply_without_a_score_for_a_question_without_an_id_names_the_question_by_its_text(server):
    server.answer(Reply(body=completion("The answer is quite good.")))
    with pytest.raises(AnswerError) as caught, judge_for(server) as judge:
        judge("correctness", Question("How often are keys rotated?", ["keys.md"]), "Every 90 days.")
    assert 'for correctness of question "How often are keys rotated?"' in str(caught.value)


def test_a_judge_model_answering_7_is_rejected_by_the_report_naming_metric_and_question(server):
    server.answer(Reply(body=completion('{"score": 7, "reason": "out of 10"}')))
    with judge_for(server) as judge, pytest.raises(AnswerError) as caught:
        answer_report([QUESTION], {"rotate": "Every 90 days."}, judge, ["correctness"])
    assert str(caught.value).startswith('the judge gave 7 for correctness of question "rotate"; a judge\'s score '
                                        "must be a number from 0 to 1")


def test_an_address_nothing_listens_on_is_a_sentence(server):
    settings = JudgeSettings(endpoint="http://127.0.0.1:9/v1", model="m", auth="none", retries=1, timeout_s=2)
    with ChatJudge(settings, sleep=lambda s: None) as judge, pytest.raises(AnswerError, match="could not be reached"):
        judge("correctness", QUESTION, "Every 90 days.")


def test_scores_are_read_from_json_fenced_json_a_bare_number_or_loose_text():
    assert parse_score('{"score": 0.25, "reason": "thin"}') == 0.25
    assert parse_score('```json\n{"score": 1}\n```') == 1
    assert parse_score("0.5") == 0.5
    assert parse_score('Sure! {"score": 0.75, "reason": "fine"} Hope that helps') == 0.75
    assert parse_score("good") is None and parse_score('{"grade": 1}') is None and parse_score("true") is None


@pytest.mark.parametrize("options,said", [
    (dict(endpoint="127.0.0.1:8080", model="m", auth="none"), "is not an http(s) address"),
    # an unclosed IPv6 bracket (or an escape sequence's "[" after the host): was the last resort's ValueError
    (dict(endpoint="http://[::1", model="m", auth="none"), "is not an http(s) address"),
    (dict(endpoint="http://x\x1b[2J/v1", model="m", auth="none"), "is not an http(s) address"),
    (dict(endpoint="https://x.openai.azure.com", model="d"), "sign in with a key, but no key was given"),
    (dict(endpoint="https://api.openai.com/v1", model="m", auth="managed_identity"), "Azure OpenAI only"),
    (dict(endpoint="https://x.openai.azure.com", model=" ", auth="none"), "needs a model"),
])
def test_settings_that_cannot_work_are_refused_before_any_request(options, said):
    with pytest.raises(UsageError, match=said.replace("(", r"\(").replace(")", r"\)")):
        JudgeSettings(**options)


@pytest.mark.parametrize("command", [("answers", "score", "--golden", "g.jsonl", "--answers", "a.jsonl"),
                                     ("golden", "write", "--corpus", "c.jsonl", "--out", "w.jsonl", "-n", "1")],
                         ids=["answers-score", "golden-write"])
@pytest.mark.parametrize("given", ["flag", "environment"])
def test_an_endpoint_urllib_cannot_split_is_a_sentence_on_the_command_line(command, given, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.jsonl").write_text('{"id": "q1", "question": "Q?", "expected": ["d"]}\n', encoding="utf-8")
    (tmp_path / "a.jsonl").write_text('{"id": "q1", "answer": "A."}\n', encoding="utf-8")
    prefix = "EVALUATION_JUDGE" if command[0] == "answers" else "EVALUATION_WRITER"
    flags = ["--endpoint", "http://[::1", "--model", "m", "--auth", "none"] if given == "flag" else ["--auth", "none"]
    if given == "environment":
        monkeypatch.setenv(f"{prefix}_ENDPOINT", "http://[::1")
        monkeypatch.setenv(f"{prefix}_MODEL", "m")

    code, _, err = run_cli(capsys, *command, *flags)

    assert code == 2 and "is not an http(s) address" in err and "this is a bug" not in err


def test_the_api_style_follows_the_host_unless_named():
    assert JudgeSettings(endpoint="https://r.openai.azure.com", model="d", auth="none").kind == "azure"
    assert JudgeSettings(endpoint="https://r.cognitiveservices.azure.com/", model="d", auth="none").url == \
        "https://r.cognitiveservices.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
    assert JudgeSettings(endpoint="http://127.0.0.1:8080/v1/", model="m", auth="none").url == \
        "http://127.0.0.1:8080/v1/chat/completions"
    assert "api_key" not in repr(JudgeSettings(endpoint="https://api.openai.com/v1", model="m", api_key="sk-secret"))


# -- the command line -------------------------------------------------------------------------------

def test_answers_score_from_the_command_line_reads_settings_from_flags_and_the_environment(server, tmp_path,
                                                                                           capsys, monkeypatch):
    golden = write_golden(tmp_path, [{"id": "a", "question": "How often are keys rotated?", "expected": ["k"],
                                      "reference": "Every 90 days."},
                                     {"id": "b", "question": "Who rotates them?", "expected": ["k"]}])
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"id": "a", "answer": "Every 90 days.", "sources": ["Keys rotate every 90 days."]})
                       + "\n", encoding="utf-8")
    server.answer(Reply(body=completion('{"score": 1, "reason": "right"}')))
    monkeypatch.setenv("EVALUATION_JUDGE_ENDPOINT", f"{server.base}/v1")
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-from-env")
    code, out, err = run_cli(capsys, "answers", "score", "--golden", str(golden), "--answers", str(answers),
                             "--model", "judge-model", "--api-key-env", "MY_JUDGE_KEY", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["unanswered"] == ["b"] and result["metrics"]["correctness"] == {"mean": 1.0,
                                                                                  "scored": 1, "skipped": []}
    assert len(server.seen) == 4 and server.seen[0].headers["authorization"] == "Bearer sk-from-env"  # 4 metrics


def test_answers_score_says_a_refusal_in_one_sentence_and_exits_1(server, tmp_path, capsys):
    golden = write_golden(tmp_path, [{"id": "a", "question": "How often?", "expected": ["k"]}])
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"a": "Every 90 days."}), encoding="utf-8")
    server.answer(Reply(403, {"error": {"message": "Principal does not have access."}}))
    code, _, err = run_cli(capsys, "answers", "score", "--golden", str(golden), "--answers", str(answers),
                           "--endpoint", f"{server.base}/v1", "--model", "m", "--auth", "none")
    assert (
        code == 1 and err.startswith("error: the judge at ") and "403 Forbidden: Principal does not have access." in err
    )
    assert "Traceback" not in err


def test_answers_score_without_an_endpoint_or_with_a_missing_key_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("EVALUATION_JUDGE_ENDPOINT", raising=False)
    monkeypatch.delenv("EVALUATION_JUDGE_API_KEY", raising=False)
    golden = write_golden(tmp_path, [{"id": "a", "question": "How often?", "expected": ["k"]}])
    answers = tmp_path / "answers.json"
    answers.write_text('{"a": "x"}', encoding="utf-8")
    code, _, err = run_cli(capsys, "answers", "score", "--golden", str(golden), "--answers", str(answers))
    assert code == 2 and "needs an endpoint and a model" in err
    code, _, err = run_cli(capsys, "answers", "score", "--golden", str(golden), "--answers", str(answers),
                           "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--auth", "key")
    assert code == 2 and "reads the key from $EVALUATION_JUDGE_API_KEY, which is not set" in err
