"""One worker's conversation with the model, and its transcript: every prompt and answer in order (never a key: the
key is the client's alone), with the tokens and the version each answer became. Kept as ``vNNN/transcript.json``
beside each version the worker made; :func:`answers` reads the model's side back, to replay a run against a server
that plays them."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel_lab.rewrite.budget import Usage

FORMAT = 1  # the transcript's layout


@dataclass
class Conversation:
    """A worker's messages (system, user, assistant, ...) and what each turn came to."""

    worker: int
    direction: str
    model: str
    messages: list[dict[str, str]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def tell(self, content: str, role: str = "user") -> None:
        """Add a message (the user's side by default)."""
        with self._lock:
            self.messages.append({"role": role, "content": content})

    def answered(self, text: str, usage: Usage, *, continued: bool = False, cut: bool = False) -> None:
        """Add the model's answer to the turn it answers."""
        with self._lock:
            self.messages.append({"role": "assistant", "content": text})
            self.turns.append(
                {
                    "turn": len(self.turns) + 1,
                    "answer": len(self.messages) - 1,  # its index in the messages
                    "prompt_tokens": usage.prompt,
                    "completion_tokens": usage.completion,
                    "continued": continued,
                    "cut": cut,
                }
            )

    def became(self, version: str, verdict: str) -> None:
        """What the last answer became: a version of the session, and the judge's verdict in words."""
        with self._lock:
            self.turns[-1].update(version=version, verdict=verdict)

    def transcript(self) -> dict[str, Any]:
        """All of it, as JSON-ready data."""
        with self._lock:
            return {
                "format": FORMAT,
                "worker": self.worker,
                "direction": self.direction,
                "model": self.model,
                "messages": [dict(m) for m in self.messages],
                "turns": [dict(t) for t in self.turns],
            }


def answers(transcript: Mapping[str, Any]) -> list[str]:
    """The model's answers of a transcript, in order (what a recorded server plays back)."""
    messages: Sequence[Mapping[str, str]] = transcript["messages"]
    return [m["content"] for m in messages if m["role"] == "assistant"]
