"""Propose rewrites with a chat model behind any OpenAI-compatible server (OpenAI, vLLM, Ollama, LM Studio)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import cast
from urllib.parse import urlparse

import openai
from openai.types.chat import ChatCompletionMessageParam

from kernel_lab.errors import KernelLabError
from kernel_lab.rewrite.answers import AnswerError, parse_answer
from kernel_lab.rewrite.base import Candidate, RewriteContext
from kernel_lab.rewrite.prompts import build_messages
from kernel_lab.settings import Settings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
LOCAL_KEY = "kernel-lab-local"  # sent to local servers that need no key
MAX_DETAIL = 200  # characters of a server's error message kept in ours


class RewriteError(KernelLabError):
    """The model could not be asked, or its answer held no usable cell.

    ``reason`` is one of: config, auth, model_not_found, rate_limit, timeout, connection, server,
    request, answer.
    """

    def __init__(self, message: str, *, fix: str = "", reason: str) -> None:
        self.reason = reason
        super().__init__(message, fix=fix)


class LLMRewriter:
    """A :class:`~kernel_lab.rewrite.base.Rewriter` that asks a chat model for the whole new cell.

    ``model`` and ``base_url`` come from the arguments (:meth:`from_settings`: from the settings, which read
    ``KERNEL_LAB_MODEL`` and ``OPENAI_BASE_URL``); the key from ``api_key``, else ``OPENAI_API_KEY``. The key
    is handed to the client only: never printed, logged or put in a message.
    """

    name = "llm"
    cannot_fix: frozenset[str] = frozenset()

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        temperature: float = 0.2,
        on_token: Callable[[str], None] | None = None,
        max_retries: int = 2,
    ) -> None:
        self.model = model or ""
        if not self.model:
            raise RewriteError(
                "No model configured: give --model NAME (model= from Python) or set KERNEL_LAB_MODEL", reason="config"
            )
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.timeout = timeout
        self.temperature = temperature
        self.on_token = on_token
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and urlparse(self.base_url).hostname not in LOCAL_HOSTS:
            raise RewriteError(
                f"No API key for {self.base_url}.",
                fix="Set OPENAI_API_KEY (a server on 127.0.0.1/localhost needs none).",
                reason="config",
            )
        # the client retries connection errors, timeouts, 429 and 5xx answers with backoff
        self._client = openai.OpenAI(api_key=key or LOCAL_KEY, base_url=self.base_url, timeout=timeout, max_retries=max_retries)

    @classmethod
    def from_settings(cls, settings: Settings, say: Callable[[str], None]) -> LLMRewriter:
        """From the model and server settings; the model's streamed answer is reported to ``say``."""
        return cls(model=settings.model, base_url=settings.base_url, on_token=_streaming(say))

    def __repr__(self) -> str:
        return f"LLMRewriter(model={self.model!r}, base_url={self.base_url!r}, timeout={self.timeout})"

    def propose(self, context: RewriteContext, n: int = 1) -> list[Candidate]:
        """``n`` answers, asked one after the other; answers without usable code are skipped.

        Raises RewriteError when the server fails, or when no answer held usable code.
        """
        messages = build_messages(context)
        kinds = [str(b["kind"]) for b in context.bottlenecks if b.get("kind")]
        candidates: list[Candidate] = []
        unusable: AnswerError | None = None
        for _ in range(n):
            try:
                candidates.append(parse_answer(self._complete(messages), kinds, origin=f"llm:{self.model}"))
            except AnswerError as err:
                unusable = err
        if not candidates and unusable is not None:
            raise RewriteError(unusable.message, fix=unusable.fix, reason="answer")
        return candidates

    def _complete(self, messages: list[dict[str, str]]) -> str:
        """The model's whole answer, streamed; each piece goes to ``on_token`` as it arrives."""
        try:
            parts: list[str] = []
            stream = self._client.chat.completions.create(
                model=self.model,
                messages=cast("list[ChatCompletionMessageParam]", messages),
                temperature=self.temperature,
                stream=True,
            )
            with stream:
                for chunk in stream:
                    token = chunk.choices[0].delta.content if chunk.choices else None
                    if token:
                        parts.append(token)
                        if self.on_token is not None:
                            self.on_token(token)
            return "".join(parts)
        except openai.OpenAIError as err:
            failure = self._explain(err)
        raise failure  # outside the handler: the client's error (its request holds the key) is not chained

    def _explain(self, err: openai.OpenAIError) -> RewriteError:
        """The one-line error, with the way forward, for a failure of the client."""
        at = self.base_url
        if isinstance(err, openai.APITimeoutError):
            return RewriteError(
                f"No answer from {at} within {self.timeout:g} s.",
                fix="Try again, or use a faster model.",
                reason="timeout",
            )
        if isinstance(err, openai.APIConnectionError):
            return RewriteError(
                f"Could not connect to {at}.",
                fix="Start the server, or point --base-url (base_url= from Python) or OPENAI_BASE_URL at a running one.",
                reason="connection",
            )
        if isinstance(err, openai.AuthenticationError):
            return RewriteError(
                f"{at} rejected the API key (HTTP 401).",
                fix="Set a valid key in OPENAI_API_KEY.",
                reason="auth",
            )
        if isinstance(err, openai.PermissionDeniedError):
            return RewriteError(
                f"{at} refused access to model {self.model!r} (HTTP 403).",
                fix="Check that your key may use this model.",
                reason="auth",
            )
        if isinstance(err, openai.NotFoundError):
            return RewriteError(
                f"Model {self.model!r} not found at {at} (HTTP 404).",
                fix=f"List the server's models (GET {at}/models, or client.models.list()) and pass one as "
                "--model (model= from Python) or KERNEL_LAB_MODEL; check that the server's URL ends in /v1.",
                reason="model_not_found",
            )
        if isinstance(err, openai.RateLimitError):
            wait = err.response.headers.get("retry-after")
            return RewriteError(
                f"Rate limited by {at} (HTTP 429).",
                fix=f"Retry after {wait} s." if wait else "Retry after a short wait, or lower the request rate.",
                reason="rate_limit",
            )
        detail = self._detail(err)
        if isinstance(err, openai.APIStatusError) and err.status_code < 500:
            return RewriteError(
                f"{at} refused the request (HTTP {err.status_code}): {detail}",
                fix="Check the model name and the server's limits (context length, parameters).",
                reason="request",
            )
        status = f" (HTTP {err.status_code})" if isinstance(err, openai.APIStatusError) else ""
        return RewriteError(
            f"The server at {at} failed{status}: {detail}", fix="Retry later, or check the server's log.", reason="server"
        )

    def _detail(self, err: openai.OpenAIError) -> str:
        """The server's own error message: one line, short, with the key blanked out."""
        body = getattr(err, "body", None)
        text = str(body.get("message") or err) if isinstance(body, dict) else str(getattr(err, "message", err))
        text = " ".join(text.replace(self._client.api_key, "***").split()).rstrip(".")
        return text + "." if len(text) < MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"


def _streaming(say: Callable[[str], None], every: int = 100) -> Callable[[str], None]:
    """Report the model's streamed answer every ``every`` chunks."""
    count = 0

    def on_token(_token: str) -> None:
        nonlocal count
        count += 1
        if count % every == 0:
            say(f"receiving the model's answer: {count} chunks so far")

    return on_token
