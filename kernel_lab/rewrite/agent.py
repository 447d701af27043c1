"""``--rewriter llm`` as an agent: W workers, each its own conversation with the model, started from different
directions (the current version's top bottleneck kinds, and one that asks for launch configurations only), run at
once; each answer judged at once (the loop's tools), its verdict and, when correct, its own profile told back in the
same conversation, up to T turns a round. A worker stops on its roof, on no progress (two turns without a faster
correct version) or on the budget; the best version is shared by the workers (a slower one is told so) and rounds.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from kernel_lab.rewrite.answers import AnswerError, named_kind, split_answer
from kernel_lab.rewrite.base import Candidate, Explored, Feedback, RewriteContext, Tools, Turn
from kernel_lab.rewrite.budget import CHARS_PER_TOKEN, Budget, Usage
from kernel_lab.rewrite.conversation import Conversation
from kernel_lab.rewrite.feedback import feedback_message
from kernel_lab.rewrite.harness import keep_harness
from kernel_lab.rewrite.launch import Launch, apply, describe, launches
from kernel_lab.rewrite.llm import LLMRewriter, streaming
from kernel_lab.rewrite.model import Gate, Model, RewriteError
from kernel_lab.rewrite.prompts import bottleneck, system_prompt, user_message
from kernel_lab.settings import Settings

PATIENCE = 2  # turns without a faster correct version before a worker stops
MOST_CONFIGS = 8  # launch configurations a launch worker's answer may hold
LAUNCH_ASK = (
    "Answer with one ```json block only: a list of at most 8 launch configurations to measure, each an object with "
    '"kernel" (a kernel named above) and values for some of its tunable knobs, e.g. '
    '[{"kernel": "add_kernel", "BLOCK": 256, "num_warps": 4}]. No code: only the configurations.'
)
NO_CODE = "Your answer held no usable code: {why} Answer with the whole cell in one ```python block."
SAME = "Your cell is the same as one judged before in this round: {earlier}. Try something else."
_JSON = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Direction:
    """Where a worker starts: its name (a bottleneck kind, or "launch configurations") and what it is asked."""

    name: str
    text: str
    launch: bool = False


def directions(context: RewriteContext, workers: int) -> list[Direction]:
    """One direction a worker: the top bottleneck kinds (each with its evidence, source lines and hint), one asking
    for launch configurations when the cell has Triton launches to tune, then other formulations."""
    found: list[Direction] = []
    kinds: dict[str, int] = {}
    for i, b in enumerate(context.bottlenecks, 1):
        kinds.setdefault(str(b.get("kind", "")), i)
    for kind, rank in kinds.items():
        b = context.bottlenecks[rank - 1]
        found.append(Direction(kind, f"## Your direction\nWork on this bottleneck first:\n{bottleneck(rank, b)}"))
    tunable = [launch for launch in _launches(context.source) if launch.params]
    launch = Direction("launch configurations", _launch_text(tunable), launch=True) if tunable else None
    code = found[: workers - 1 if launch and workers > 1 else workers]
    others = [
        Direction(f"another formulation {n}", f"## Your direction\nTry a different formulation of the whole computation ({n}).")
        for n in range(1, workers + 1)
    ]
    return (code + ([launch] if launch else []) + others)[:workers]


def _launches(source: str) -> list[Launch]:
    try:
        return launches(source)
    except SyntaxError:
        return []


def _launch_text(tunable: list[Launch]) -> str:
    listed = "\n".join(f"- {describe(launch)}" for launch in tunable)
    return f"## Your direction\nLaunch configurations only, not code. The cell's launches and their knobs:\n{listed}"


class LLMAgent(LLMRewriter):
    """The ``llm`` rewriter: a :class:`~kernel_lab.rewrite.base.Working` one (and, answering once, a Rewriter)."""

    def __init__(self, model: Model, *, workers: int = 3, turns: int = 4, on_token: Callable[[str], None] | None = None) -> None:
        self._model, self.model, self.base_url, self.timeout = model, model.model, model.base_url, model.timeout
        self.on_token, self.workers, self.turns = on_token, max(1, workers), max(1, turns)

    @classmethod
    def from_settings(cls, settings: Settings, say: Callable[[str], None]) -> LLMAgent:
        model = Model(
            settings.model, settings.base_url, thinks=settings.reasoning, max_tokens=settings.llm_max_tokens, gate=Gate()
        )
        return cls(model, workers=settings.llm_workers, turns=settings.llm_turns, on_token=streaming(say))

    def __repr__(self) -> str:
        return f"LLMAgent({self._model!r}, workers={self.workers}, turns={self.turns})"

    def work(self, context: RewriteContext, tools: Tools, budget: Budget) -> Explored:
        """The round's work, every worker at once; raises the model's error when no worker got an answer."""
        ways = directions(context, self.workers)
        with ThreadPoolExecutor(len(ways), thread_name_prefix="llm-worker") as pool:
            seen = Seen()
            ends = list(pool.map(lambda w: Worker(self, context, tools, budget, seen, *w).go(), enumerate(ways, 1)))
        if all(end.error is not None and not end.answered for end in ends):
            raise ends[0].error  # type: ignore[misc]
        return Explored(screened=sum(end.screened for end in ends), notes=tuple(end.said for end in ends))


class Seen:
    """The cells the round's workers had judged (the user's harness put back): the version each became and its
    verdict in words, so that the same cell is not judged twice."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._judged: dict[str, str] = {}

    def get(self, source: str) -> str | None:
        with self._lock:
            return self._judged.get(source)

    def claim(self, source: str) -> str | None:
        """What became of ``source`` when it was judged (or is being judged), else None: it is this caller's now."""
        with self._lock:
            if source in self._judged:
                return self._judged[source]
            self._judged[source] = "a cell another worker is judging now"
            return None

    def add(self, source: str, said: str) -> None:
        with self._lock:
            self._judged[source] = said


@dataclass
class End:
    """How a worker's round ended."""

    said: str
    answered: int = 0
    screened: int = 0
    error: RewriteError | None = None


class Worker:
    """One conversation of a round, turn by turn."""

    def __init__(
        self, agent: LLMAgent, context: RewriteContext, tools: Tools, budget: Budget, seen: Seen, number: int, way: Direction
    ) -> None:
        self.agent, self.context, self.tools, self.budget, self.seen = agent, context, tools, budget, seen
        self.number, self.way = number, way
        self.chat = Conversation(number, way.name, agent.model)
        self.chat.tell(system_prompt(context.language, agent=True, launch=way.launch), role="system")
        self.chat.tell(user_message(context, way.text, LAUNCH_ASK if way.launch else "Rewrite the whole cell. " + NEXT_WORDS))
        self.screened = 0

    def go(self) -> End:
        idle, answered = 0, 0
        for turn in range(1, self.agent.turns + 1):
            at = Turn(self.number, turn, self.way.name)
            estimate = self._estimate()
            if (why := self.budget.reserve(estimate)) is not None:
                return self._end(f"the budget stopped it: {why}", answered)
            try:
                got = self.agent._model.ask(self.chat.messages, self.agent.on_token)
            except RewriteError as err:
                self.budget.settle(estimate, Usage())
                self.tools.say(at, f"the model failed: {err}")
                return End(self._words(f"the model failed: {err}", answered), answered, self.screened, err)
            self.budget.settle(estimate, got.usage)
            answered += 1
            self.chat.answered(got.text, got.usage, continued=got.continued, cut=got.cut)
            feedback = self._launch_turn(at, got.text) if self.way.launch else self._code_turn(at, got.text, got.cut)
            if feedback is None:
                idle += 1
            else:
                idle = 0 if self.tools.best()[0] == feedback.version else idle + 1
                if feedback.profiled is not None and feedback.profiled.at_roof:
                    return self._end(f"{feedback.version} is at its roof", answered)
            if idle >= PATIENCE:
                return self._end(f"{PATIENCE} turns without a faster correct version", answered)
        return self._end(f"{self.agent.turns} turn{'s' * (self.agent.turns != 1)} done", answered)

    def _estimate(self) -> Usage:
        prompt = sum(len(m["content"]) for m in self.chat.messages) // CHARS_PER_TOKEN
        return Usage(prompt, self.agent._model.max_tokens or 2 * len(self.context.source) // CHARS_PER_TOKEN)

    def _words(self, why: str, answered: int) -> str:
        return f"worker {self.number} ({self.way.name}): {answered} answer{'s' * (answered != 1)}; {why}"

    def _end(self, why: str, answered: int) -> End:
        return End(self._words(why, answered), answered, self.screened)

    def _code_turn(self, at: Turn, text: str, cut: bool) -> Feedback | None:
        """Judge the answer's cell (the user's harness put back) and tell the model what came of it."""
        try:
            code, explanation = split_answer(text)
        except AnswerError as err:
            why = err.message + (" (cut by the token limit, even after asking it to continue)" if cut else "")
            self.chat.tell(NO_CODE.format(why=why))
            self.tools.say(at, f"no usable code in the answer: {err.message}")
            return None
        kept = keep_harness(self.context.original or self.context.source, code)
        if (earlier := self.seen.claim(kept.source)) is not None:
            self.chat.tell(f"{SAME.format(earlier=earlier)} {NEXT_WORDS}")
            self.tools.say(at, f"the same cell as {earlier}: not judged again")
            return None
        kinds = [str(b.get("kind", "")) for b in self.context.bottlenecks]
        candidate = Candidate(kept.source, explanation, named_kind(explanation, kinds), f"llm:{self.agent.model}")
        return self._judged(at, candidate, kept.text(), _short(explanation))

    def _judged(self, at: Turn, candidate: Candidate, harness: str, tried: str, before: str = "") -> Feedback:
        [feedback] = self.tools.judge([candidate], at)
        if feedback.correct and not feedback.warnings:
            feedback = replace(feedback, profiled=self.tools.profile(feedback))
        told = feedback_message(feedback, self.tools.best(), harness, self.context.interpreted)
        self.chat.tell("\n\n".join(p for p in (before, told) if p))
        verdict = _verdict_words(feedback, self.context.interpreted)
        self.chat.became(feedback.version, verdict)
        self.seen.add(candidate.source, f"{feedback.version} ({verdict})")
        self.tools.keep(feedback.version, self.chat.transcript())
        self.tools.say(at, f"{tried} -> {verdict}", feedback.version)
        return feedback

    def _launch_turn(self, at: Turn, text: str) -> Feedback | None:
        """Screen the configurations the answer lists (never trusted: measured), and judge the fastest."""
        found, said = _variants(self.context.source, text)
        variants = [(v, config) for v, config in found if self.seen.get(v) is None]
        if found and not variants:
            said = f"Every configuration of your answer was measured and judged before ({self.seen.get(found[0][0])}, …)."
        if not variants:
            self.chat.tell(f"{said or 'No configuration in your answer could be applied.'} {LAUNCH_ASK}")
            self.tools.say(at, "no usable launch configuration in the answer")
            return None
        pick, before = 0, ""
        if self.tools.screening:
            measured = self.tools.screen([v for v, _ in variants])
            self.screened += len(variants)
            times = [t if t is not None else float("inf") for t in measured.times] or [float("inf")]
            pick = min(range(len(times)), key=times.__getitem__)
            before = "## The screen's quick times\n" + "\n".join(
                f"- {config}: {f'{t:.4g} ms' if t is not None else why}"
                for (_, config), t, why in zip(variants, measured.times, (*measured.reasons, *[""] * len(variants)))
            )
            if math.isinf(times[pick]):  # none ran right: nothing for the judge
                self.chat.tell(f"{before}\n\nNone of them ran right. {LAUNCH_ASK}")
                self.tools.say(at, "no launch configuration of the answer ran right in the screen")
                return None
        source, config = variants[pick]
        candidate = Candidate(source, f"launch configuration {config} (the model's, measured)", "", f"llm:{self.agent.model}")
        return self._judged(at, candidate, "", f"launch configuration {config}", before)


NEXT_WORDS = "Answer with one ```python block holding the whole cell, then a short explanation naming the bottleneck kind."


def _short(explanation: str, most: int = 80) -> str:
    flat = " ".join(explanation.split()) or "(no explanation)"
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def _verdict_words(feedback: Feedback, interpreted: bool) -> str:
    """'wrong_values: ...', 'correct, 1.84x', 'correct, 1.30x on the CPU, blocked: fallback'."""
    if not feedback.correct:
        return f"{feedback.failure or 'failed'}: {_short(feedback.reason, 120)}"
    t, cpu = feedback.timing, " on the CPU" if interpreted else ""
    said = "correct" + (f", {t.speedup:.2f}x{cpu}" + ("" if t.significant else " (within noise)") if t is not None else "")
    return said + (f", blocked: {', '.join(k for k, _ in feedback.warnings)}" if feedback.warnings else "")


def _variants(source: str, text: str) -> tuple[list[tuple[str, str]], str]:
    """(variant cell, the configuration in words) for each usable configuration of the answer, and what was wrong."""
    block = _JSON.search(text)
    try:
        configs = json.loads(block[1] if block else text)
    except json.JSONDecodeError as err:
        return [], f"Your answer is not the JSON list asked for ({err.msg} at line {err.lineno})."
    if not isinstance(configs, list):
        return [], "Your answer is not a JSON list of configurations."
    by_kernel = {launch.kernel: launch for launch in reversed(_launches(source))}
    made: dict[str, str] = {}
    for config in configs[:MOST_CONFIGS]:
        launch = by_kernel.get(str(config.get("kernel"))) if isinstance(config, dict) else None
        if launch is None:
            continue
        values = {k: v for k, v in config.items() if k in launch.params and isinstance(v, int) and v > 0}
        if values and (variant := apply(source, launch, values)) != source:
            made.setdefault(variant, f"{launch.kernel} {json.dumps(values)}")
    return list(made.items()), ""
