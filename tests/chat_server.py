"""A chat completions server on 127.0.0.1 for the judge's tests: it answers from a script and records
every request it gets, so a test can say what the service does and check what the judge sent."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


def completion(content: str | None, *, finish_reason: str = "stop", refusal: str | None = None) -> dict[str, Any]:
    """A chat completions reply body, as OpenAI and Azure OpenAI send it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "judge-model",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def note_by_first_words(seen: "Seen") -> "Reply":
    """A ``respond`` for a model writing ``c`` notes: each passage noted by its first words, so the same
    request always gets the same note."""
    import re

    passage = re.search(r"<passage>\n(.{0,30})", seen.body["messages"][1]["content"], re.S)
    return Reply(body=completion("About " + passage.group(1)))


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # a dict is sent as JSON, a str as it is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class ChatServer:
    """``script``: replies in order (the last one repeats), or ``respond``: a function from the request
    seen to its reply (a model that answers by what it is asked); ``seen``: the requests, in order."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.respond: Callable[[Seen], Reply] | None = None
        self.seen: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the name http.server calls
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                server.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                seen = server.seen[-1]
                reply = (server.respond(seen) if server.respond is not None
                         else server.script[min(len(server.seen), len(server.script)) - 1])
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = (json.dumps(reply.body) if not isinstance(reply.body, str) else reply.body).encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the judge gave up waiting: that is the point of a delayed reply

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(self, *replies: Reply) -> ChatServer:
        self.script = list(replies)
        return self

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
