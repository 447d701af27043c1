"""A chat model behind any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio), asked as
its kind wants to be asked.

- Reasoning models (o1, o3, o4, gpt-5 style names, or the ``reasoning`` setting) get no temperature and
  ``max_completion_tokens``; others ``temperature`` and ``max_tokens``.
- An answer cut by the token limit (``finish_reason == "length"``) is asked to continue once; still cut, it says so.
- A server on 127.0.0.1 or localhost needs no key.
- HTTP 429 and 503 are retried after the server's ``retry-after``, through one :class:`Gate` that every worker
  shares: when one is told to wait, none sends meanwhile.
- The tokens of every answer come from the server's ``usage`` (streamed: ``stream_options.include_usage``, dropped
  for a server that refuses it).
- The key goes to the client only: never into a message, an error, a log or a transcript.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlparse

import openai
from openai.types.chat import ChatCompletionMessageParam

from kernel_lab.errors import KernelLabError
from kernel_lab.rewrite.budget import Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
LOCAL_KEY = "kernel-lab-local"  # sent to local servers that need no key
MAX_DETAIL = 200  # characters of a server's error message kept in ours
MAX_WAIT = 120.0  # seconds: the longest retry-after honoured; a longer one fails the request
REASONING = re.compile(r"(^|/)(o\d|gpt-5)", re.I)  # o1, o3-mini, o4-mini, gpt-5, openai/o3
CONTINUE = "Your answer was cut off by the token limit. Continue exactly where it stopped, with no repetition."
Messages = Sequence[Mapping[str, str]]


class RewriteError(KernelLabError):
    """The model could not be asked, or its answer held no usable cell.

    ``reason`` is one of: config, auth, model_not_found, rate_limit, timeout, connection, server, request, answer.
    """

    def __init__(self, message: str, *, fix: str = "", reason: str) -> None:
        self.reason = reason
        super().__init__(message, fix=fix)


@dataclass(frozen=True)
class Answer:
    """A model's answer: its text, the tokens the server reported, and whether it was cut by the token limit
    (``continued``: asked to go on once; ``cut``: still cut after that)."""

    text: str
    usage: Usage
    continued: bool = False
    cut: bool = False


class Gate:
    """One wait shared by every worker of a run: a server's ``retry-after`` holds them all."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._opens = clock()
        self.waits = 0  # how often a request waited at the gate

    def hold(self, seconds: float) -> None:
        """No request is sent before ``seconds`` from now."""
        with self._lock:
            self._opens = max(self._opens, self._clock() + seconds)

    @property
    def opens(self) -> float:
        with self._lock:
            return self._opens

    def wait(self) -> None:
        """Wait until the gate opens (at once when it is open)."""
        while (left := self.opens - self._clock()) > 0:
            with self._lock:
                self.waits += 1
            time.sleep(min(left, 1.0))


def reasoning(model: str, setting: bool | None = None) -> bool:
    """Whether ``model`` reasons (no temperature, ``max_completion_tokens``): the setting, else by its name."""
    return setting if setting is not None else bool(REASONING.search(model))


def _retry_after(err: openai.OpenAIError) -> float | None:
    """Seconds the server asked us to wait (429 and 503 only), or None."""
    if not isinstance(err, openai.APIStatusError) or err.status_code not in (429, 503):
        return None
    headers = err.response.headers
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        return float(headers.get("retry-after", "1"))
    except ValueError:
        return 1.0  # an HTTP date: wait a little rather than parse it


def _retryable(err: openai.OpenAIError) -> bool:
    if isinstance(err, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    return isinstance(err, openai.APIStatusError) and (err.status_code in (408, 409, 429) or err.status_code >= 500)


class Model:
    """One model at one server, shared by the workers of a run (thread-safe: the client is)."""

    def __init__(
        self,
        model: str | None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        temperature: float = 0.2,
        thinks: bool | None = None,
        max_tokens: int | None = None,
        max_retries: int = 2,
        gate: Gate | None = None,
    ) -> None:
        self.model = model or ""
        if not self.model:
            raise RewriteError(
                "No model configured: give --model NAME (model= from Python) or set KERNEL_LAB_MODEL", reason="config"
            )
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout, self.temperature, self.max_tokens, self.max_retries = timeout, temperature, max_tokens, max_retries
        self.reasons = reasoning(self.model, thinks)
        self.gate = gate or Gate()
        self._usage_stream = True  # ask for usage in the stream until the server refuses it
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and urlparse(self.base_url).hostname not in LOCAL_HOSTS:
            raise RewriteError(
                f"No API key for {self.base_url}.",
                fix="Set OPENAI_API_KEY (a server on 127.0.0.1/localhost needs none).",
                reason="config",
            )
        self._client = openai.OpenAI(api_key=key or LOCAL_KEY, base_url=self.base_url, timeout=timeout, max_retries=0)

    def __repr__(self) -> str:
        return f"Model({self.model!r}, base_url={self.base_url!r}, reasoning={self.reasons})"

    def ask(self, messages: Messages, on_token: Callable[[str], None] | None = None) -> Answer:
        """The model's whole answer to ``messages``; one that the token limit cut is asked to continue once."""
        text, finish, usage = self._asked(messages, on_token)
        if finish != "length":
            return Answer(text, usage)
        more = [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": CONTINUE}]
        rest, finish, used = self._asked(more, on_token)
        return Answer(text + rest, usage + used, continued=True, cut=finish == "length")

    def _asked(self, messages: Messages, on_token: Callable[[str], None] | None) -> tuple[str, str, Usage]:
        """(text, finish reason, usage) of one request, retried as the server allows (:class:`Gate`)."""
        failure: RewriteError | None = None
        for attempt in range(self.max_retries + 1):
            self.gate.wait()
            try:
                return self._streamed(messages, on_token)
            except openai.OpenAIError as err:
                wait = _retry_after(err)
                if attempt == self.max_retries or not _retryable(err) or (wait or 0) > MAX_WAIT:
                    failure = self._explain(err)
                    break
                if wait is not None:
                    self.gate.hold(wait)
                else:
                    time.sleep(0.5 * 2**attempt)
        assert failure is not None
        raise failure  # outside the handler: the client's error (its request holds the key) is not chained

    def _streamed(self, messages: Messages, on_token: Callable[[str], None] | None) -> tuple[str, str, Usage]:
        try:
            return self._stream(messages, on_token, self._usage_stream)
        except openai.BadRequestError as err:
            if not self._usage_stream or "stream_options" not in self._detail(err):
                raise
        self._usage_stream = False  # the server refuses stream_options: no usage from it
        return self._stream(messages, on_token, False)

    def _stream(self, messages: Messages, on_token: Callable[[str], None] | None, usage: bool) -> tuple[str, str, Usage]:
        parts: list[str] = []
        finish, used = "stop", Usage()
        limit = openai.omit if self.max_tokens is None else self.max_tokens  # reasoning models: max_completion_tokens
        stream = self._client.chat.completions.create(
            model=self.model,
            messages=cast("list[ChatCompletionMessageParam]", list(messages)),
            stream=True,
            stream_options={"include_usage": True} if usage else openai.omit,
            temperature=openai.omit if self.reasons else self.temperature,
            max_tokens=openai.omit if self.reasons else limit,
            max_completion_tokens=limit if self.reasons else openai.omit,
        )
        with stream:
            for chunk in stream:
                if chunk.usage is not None:
                    used = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                choice = chunk.choices[0] if chunk.choices else None
                if choice is not None and choice.finish_reason:
                    finish = choice.finish_reason
                token = choice.delta.content if choice is not None else None
                if token:
                    parts.append(token)
                    if on_token is not None:
                        on_token(token)
        return "".join(parts), finish, used

    def _explain(self, err: openai.OpenAIError) -> RewriteError:
        """The one-line error, with the way forward, for a failure of the client."""
        at = self.base_url
        if isinstance(err, openai.APITimeoutError):
            return RewriteError(
                f"No answer from {at} within {self.timeout:g} s.", fix="Try again, or use a faster model.", reason="timeout"
            )
        if isinstance(err, openai.APIConnectionError):
            return RewriteError(
                f"Could not connect to {at}.",
                fix="Start the server, or point --base-url (base_url= from Python) or OPENAI_BASE_URL at a running one.",
                reason="connection",
            )
        if isinstance(err, openai.APIStatusError):
            return self._refused(err)
        return RewriteError(f"The server at {at} failed: {self._detail(err)}", fix="Retry later.", reason="server")

    def _refused(self, err: openai.APIStatusError) -> RewriteError:
        """The one-line error for an HTTP status the server answered with."""
        at, status = self.base_url, err.status_code
        if status == 401:
            return RewriteError(f"{at} rejected the API key (HTTP 401).", fix="Set a valid key in OPENAI_API_KEY.", reason="auth")
        if status == 403:
            return RewriteError(
                f"{at} refused access to model {self.model!r} (HTTP 403).",
                fix="Check that your key may use this model.",
                reason="auth",
            )
        if status == 404:
            return RewriteError(
                f"Model {self.model!r} not found at {at} (HTTP 404).",
                fix=f"List the server's models (GET {at}/models, or client.models.list()) and pass one as "
                "--model (model= from Python) or KERNEL_LAB_MODEL; check that the server's URL ends in /v1.",
                reason="model_not_found",
            )
        if status == 429:
            wait = err.response.headers.get("retry-after")
            return RewriteError(
                f"Rate limited by {at} (HTTP 429).",
                fix=f"Retry after {wait} s." if wait else "Retry after a short wait, or lower the request rate.",
                reason="rate_limit",
            )
        detail = self._detail(err)
        if status < 500:
            return RewriteError(
                f"{at} refused the request (HTTP {status}): {detail}",
                fix="Check the model name and the server's limits (context length, parameters).",
                reason="request",
            )
        return RewriteError(
            f"The server at {at} failed (HTTP {status}): {detail}", fix="Retry later, or check the server's log.", reason="server"
        )

    def _detail(self, err: openai.OpenAIError) -> str:
        """The server's own error message: one line, short, with the key blanked out."""
        body = getattr(err, "body", None)
        text = str(body.get("message") or err) if isinstance(body, dict) else str(getattr(err, "message", err))
        text = " ".join(text.replace(self._client.api_key, "***").split()).rstrip(".")
        return text + "." if len(text) < MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"
