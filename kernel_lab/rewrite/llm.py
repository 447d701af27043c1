"""Propose rewrites with a chat model behind any OpenAI-compatible server (OpenAI, vLLM, Ollama, LM Studio)."""

from __future__ import annotations

from collections.abc import Callable

from kernel_lab.rewrite.answers import AnswerError, parse_answer
from kernel_lab.rewrite.base import Candidate, RewriteContext
from kernel_lab.rewrite.model import Model, RewriteError
from kernel_lab.rewrite.prompts import build_messages

__all__ = ["LLMRewriter", "RewriteError"]


class LLMRewriter:
    """A :class:`~kernel_lab.rewrite.base.Rewriter` that asks a chat model for the whole new cell.

    ``model`` and ``base_url`` come from the arguments (the agent's ``from_settings``: from the settings, which read
    ``KERNEL_LAB_MODEL`` and ``OPENAI_BASE_URL``); the key from ``api_key``, else ``OPENAI_API_KEY``. The key
    is handed to the client only: never printed, logged or put in a message. Answering once, a round's candidates
    at a time (:meth:`propose`); :class:`~kernel_lab.rewrite.agent.LLMAgent` works in turns.
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
        self._model = Model(model, base_url, api_key, timeout=timeout, temperature=temperature, max_retries=max_retries)
        self.model, self.base_url, self.timeout = self._model.model, self._model.base_url, timeout
        self.on_token = on_token

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
        return self._model.ask(messages, self.on_token).text


def streaming(say: Callable[[str], None], every: int = 100) -> Callable[[str], None]:
    """Report the model's streamed answer every ``every`` chunks."""
    count = 0

    def on_token(_token: str) -> None:
        nonlocal count
        count += 1
        if count % every == 0:
            say(f"receiving the model's answer: {count} chunks so far")

    return on_token
