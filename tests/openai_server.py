"""A small OpenAI-compatible HTTP server for tests: scripted answers and errors, recorded requests.

    with OpenAIServer() as server:
        server.script(answer("```python\\n...\\n```\\nWhy."), error(429, "slow down", headers={"retry-after": "7"}))
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        ...
        server.requests[0].body["messages"]

A server can also play a model with state: ``OpenAIServer(policy=f)`` answers each chat request with
``f(messages)`` (the request's messages, as sent; a Reply or a string), after any scripted replies are used up.

Serves ``POST /v1/chat/completions`` (streamed as Server-Sent Events, or not) and ``GET /v1/models``
on 127.0.0.1 at an ephemeral port. A request for a model it does not list gets a 404; an empty
script gets a 500. Usage (prompt and completion tokens: characters / 4, or the reply's own) is reported in
every answer, streamed ones when asked (``stream_options.include_usage``); ``refuse_stream_options=True``
plays a server that rejects that option with a 400. It stops when the ``with`` block ends; no scripted delay
outlasts that.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_DELAY = 10.0  # seconds: the longest a scripted delay may hold a request


@dataclass(frozen=True)
class Reply:
    """One scripted response to a chat completion request."""

    chunks: tuple[str, ...] = ()  # the answer, in the pieces it is streamed in
    status: int = 200
    error: Mapping[str, Any] | None = None  # the OpenAI-style "error" object of a failed request
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before the response ...
    delay_after: int = 0  # ... or after this many streamed chunks
    finish_reason: str = "stop"  # "length" for an answer cut by the token limit
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens to report; None: characters / 4


def answer(text: str, size: int = 16, **kwargs: Any) -> Reply:
    """A successful reply whose ``text`` is streamed in pieces of ``size`` characters."""
    return Reply(chunks=tuple(text[i : i + size] for i in range(0, len(text), size)), **kwargs)


def error(
    status: int,
    message: str,
    *,
    type: str = "invalid_request_error",
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """A failed reply with an OpenAI-style error body."""
    return Reply(
        status=status, error={"message": message, "type": type, "param": None, "code": code}, headers=dict(headers or {})
    )


@dataclass(frozen=True)
class Request:
    """One request the server received."""

    method: str
    path: str
    headers: Mapping[str, str]  # names in lower case
    body: Mapping[str, Any]
    at: float = 0.0  # time.monotonic() when it arrived

    @property
    def prompt(self) -> str:
        """All message contents of a chat request, joined."""
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", ()))


class OpenAIServer:
    """The server; a context manager (``with``) that serves in a background thread."""

    def __init__(
        self,
        models: Iterable[str] = ("test-model",),
        policy: Callable[[Sequence[Mapping[str, Any]]], Reply | str] | None = None,
        refuse_stream_options: bool = False,
    ) -> None:
        self.models = tuple(models)
        self.policy, self.refuse_stream_options = policy, refuse_stream_options
        self.sent: list[tuple[float, int]] = []  # (time.monotonic() when sent, status) of each chat reply
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self._replies: deque[Reply] = deque()
        self._stopping = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies for the next chat requests, in order; a string is a successful answer."""
        self._replies.extend(answer(r) if isinstance(r, str) else r for r in replies)

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # wakes requests held by a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next(self, messages: Sequence[Mapping[str, Any]]) -> Reply:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        if self.policy is not None:
            reply = self.policy(messages)
            return answer(reply) if isinstance(reply, str) else reply
        return error(500, "no scripted reply left", type="server_error")

    def _wait(self, seconds: float) -> bool:
        """Wait (bounded); False when the server is stopping and the request should be dropped."""
        return not self._stopping.wait(min(seconds, MAX_DELAY))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: OpenAIServer


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        fake.requests.append(Request("GET", self.path, self._headers(), {}))
        if self.path.rstrip("/") != "/v1/models":
            return self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
        models = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in fake.models]
        self._json(200, {"object": "list", "data": models})

    def do_POST(self) -> None:
        fake = self.server.fake
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        fake.requests.append(Request("POST", self.path, self._headers(), body, time.monotonic()))
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
        model = body.get("model")
        if model not in fake.models:
            message = f"The model `{model}` does not exist or you do not have access to it."
            return self._json(
                404, {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": "model_not_found"}}
            )
        if fake.refuse_stream_options and "stream_options" in body:
            refused = {"message": "Unrecognized request argument supplied: stream_options", "type": "invalid_request_error"}
            return self._json(400, {"error": refused})
        reply = fake._next(body.get("messages", ()))
        if reply.delay and not reply.delay_after and not fake._wait(reply.delay):
            return
        fake.sent.append((time.monotonic(), reply.status))
        if reply.status != 200:
            return self._json(reply.status, {"error": dict(reply.error or {})}, reply.headers)
        usage = _usage(body, reply)
        if body.get("stream"):
            return self._stream(reply, model, usage if (body.get("stream_options") or {}).get("include_usage") else None)
        message = {"role": "assistant", "content": "".join(reply.chunks)}
        self._json(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
                "usage": usage,
            },
        )

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _json(self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self._write(data)

    def _stream(self, reply: Reply, model: str, usage: Mapping[str, int] | None) -> None:
        """The answer as Server-Sent Events, one chunk per piece, then a finish chunk, the usage chunk when asked,
        and [DONE]."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

        def event(delta: Mapping[str, str], finish: str | None) -> bytes:
            chunk = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": dict(delta), "finish_reason": finish}],
            }
            return f"data: {json.dumps(chunk)}\n\n".encode()

        for i, piece in enumerate(reply.chunks):
            if reply.delay and i == reply.delay_after and not self.server.fake._wait(reply.delay):
                return
            if not self._write(event({"role": "assistant", "content": piece} if i == 0 else {"content": piece}, None)):
                return
        if not self._write(event({}, reply.finish_reason)):
            return
        if usage is not None:
            last = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0, "model": model, "choices": []}
            self._write(f"data: {json.dumps({**last, 'usage': usage})}\n\n".encode())
        self._write(b"data: [DONE]\n\n")

    def _write(self, data: bytes) -> bool:
        """Send ``data``; False when the client has gone (e.g. after its timeout)."""
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True


def _usage(body: Mapping[str, Any], reply: Reply) -> dict[str, int]:
    """The usage a reply reports: its own, else a token per four characters of the prompt and of the answer."""
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", ())) // 4
    done = reply.usage or (prompt, len("".join(reply.chunks)) // 4)
    return {"prompt_tokens": done[0], "completion_tokens": done[1], "total_tokens": sum(done)}
