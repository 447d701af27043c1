"""The LLM rewriter through the real openai client, over HTTP, against a local scripted server."""

from __future__ import annotations

import logging
import socket
import traceback

import openai
import pytest
from openai_server import OpenAIServer, Reply, answer, error

from kernel_lab.models import Bottleneck, RuleResult, SourceLine
from kernel_lab.rewrite.agent import LLMAgent
from kernel_lab.rewrite.answers import AnswerError, split_answer
from kernel_lab.rewrite.base import Attempt, Candidate, RewriteContext
from kernel_lab.rewrite.llm import LLMRewriter, RewriteError
from kernel_lab.rewrite.prompts import build_messages, system_prompt
from kernel_lab.samples import cell
from kernel_lab.settings import Settings

KEY = "sk-test-DO-NOT-LEAK-7f3a9c"
MODEL = "test-model"

# Numbers from the recorded uncoalesced_global sample report.
BOTTLENECKS = [
    Bottleneck(
        kind="uncoalesced_global",
        score=0.7652,
        summary="Uncoalesced global access: 78% of sectors fetched are wasted",
        hint="Make consecutive threads touch consecutive addresses.",
        evidence={
            "derived__memory_l2_theoretical_sectors_global_excessive": 14680064.0,
            "lts__throughput.avg.pct_of_peak_sustained_elapsed": 96.72162419046923,
        },
        source_lines=(SourceLine("cell.py", 20, 1.0, "tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)"),),
        ncu_rules=(RuleResult("UncoalescedGlobalAccess", "", "", "", "OPT", 76.52),),
    ).to_dict(),
    Bottleneck(
        kind="low_occupancy",
        score=0.1135,
        summary="Occupancy 25% of theoretical, limited by registers",
        hint="Use fewer registers per thread.",
        evidence={"sm__warps_active.avg.pct_of_peak_sustained_active": 24.9, "launch__registers_per_thread": 128},
        limiter="registers",
    ).to_dict(),
]
HISTORY = (
    Attempt("Doubled BLOCK to 2048.", "wrong: max error 3.2 at [17]"),
    Attempt("Staged tiles through shared memory.", "correct, 1.1x faster"),
)
SOURCE = cell("uncoalesced_global").read_text()
CONTEXT = RewriteContext(source=SOURCE, bottlenecks=BOTTLENECKS, device="NVIDIA H100 80GB HBM3", history=HISTORY)

GOOD = """import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, out_ptr, R, C, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.program_id(0) * BR + tl.arange(0, BR)
    c = tl.program_id(1) * BC + tl.arange(0, BC)
    tile = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(out_ptr + c[:, None] * R + r[None, :], tl.trans(tile), mask=(c[:, None] < C) & (r[None, :] < R))


def make_inputs():
    torch.manual_seed(0)
    x = torch.randn(2**24, device="cuda")
    return (x,)


def run(x):
    out = torch.empty_like(x)
    R, C = 4096, x.numel() // 4096
    transpose_kernel[(triton.cdiv(R, 64), triton.cdiv(C, 64))](x, out, R, C, BR=64, BC=64)
    return out
"""
WRONG = GOOD.replace("tl.trans(tile)", "tile")  # forgets the transpose: compiles, computes something else
CHEAT = GOOD.split("\n\ndef run")[0] + "\n\ndef run(x):\n    return x.view(4096, -1).t().contiguous().view(-1)\n"
BROKEN = GOOD.replace("def run(x):", "def run(x)")  # syntax error in a complete block
EXPLAIN = "Loads 64x64 tiles along rows and stores them transposed, fixing uncoalesced_global access."


def line_of(source: str, text: str) -> int:
    """The 1-based line of ``source`` that starts with ``text``."""
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.startswith(text))


def fenced(code: str, before: str = "Here is the faster cell:", after: str = EXPLAIN, tag: str = "python") -> str:
    return f"{before}\n\n```{tag}\n{code}```\n\n{after}\n"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KERNEL_LAB_MODEL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server():
    with OpenAIServer(models=(MODEL, "other-model")) as s:
        yield s


def rewriter(server: OpenAIServer, **kwargs) -> LLMRewriter:
    """A rewriter for the scripted server; no retries, so that each scripted error is what comes back."""
    return LLMRewriter(
        **{"model": MODEL, "base_url": server.base_url, "api_key": KEY, "timeout": 5.0, "max_retries": 0, **kwargs}
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- answers that come back as candidates (the judge decides on them elsewhere) ---


@pytest.mark.parametrize(
    "text, source",
    [
        (fenced(GOOD), GOOD),  # a correct faster rewrite, prose around it
        (fenced(WRONG), WRONG),  # wrong result: still a candidate
        (fenced(CHEAT), CHEAT),  # calls torch for the computation: still a candidate
        (fenced(BROKEN), BROKEN),  # does not compile, but complete: the judge reports the compile error
        (fenced(GOOD, tag="py"), GOOD),
        (fenced(GOOD, tag=""), GOOD),
    ],
    ids=["good", "wrong", "cheat", "syntax-error", "py-fence", "bare-fence"],
)
def test_answer_becomes_candidate(server: OpenAIServer, text: str, source: str) -> None:
    server.script(text)
    [candidate] = rewriter(server).propose(CONTEXT)
    assert candidate == Candidate(source, "Here is the faster cell:\n\n" + EXPLAIN, "uncoalesced_global", f"llm:{MODEL}")


def test_streamed_tokens_split_mid_fence_reach_on_token(server: OpenAIServer) -> None:
    text = fenced(GOOD)
    cut = text.index("```python")
    server.script(
        Reply(chunks=(text[: cut + 1], text[cut + 1 : cut + 5], text[cut + 5 : cut + 40], text[cut + 40 :])), answer(text, size=3)
    )
    tokens: list[str] = []
    r = rewriter(server, on_token=tokens.append)
    assert r.propose(CONTEXT)[0].source == GOOD
    assert "".join(tokens) == text and len(tokens) == 4
    tokens.clear()
    assert r.propose(CONTEXT)[0].source == GOOD
    assert "".join(tokens) == text and len(tokens) == len(text) // 3 + 1


def test_several_blocks_take_the_one_defining_run(server: OpenAIServer) -> None:
    text = "The hot line is\n```python\ntl.store(out_ptr + i, tile)\n```\nso here is the cell:\n" + fenced(
        GOOD, before="", after="Use it as\n```\nout = run(*make_inputs())\n```\nIt fixes memory bound access."
    )
    server.script(text)
    [candidate] = rewriter(server).propose(CONTEXT)
    assert candidate.source == GOOD
    assert candidate.explanation.startswith("The hot line is\n```python") and "out = run(*make_inputs())" in candidate.explanation
    assert candidate.answers == "memory_bound"  # the kind the explanation names first


def test_truncated_answer_that_compiles_is_taken(server: OpenAIServer) -> None:
    server.script(answer(f"Faster:\n```python\n{GOOD}", finish_reason="length"), answer("", finish_reason="length"))
    [candidate] = rewriter(server).propose(CONTEXT)
    assert candidate.source == GOOD and candidate.explanation == "Faster:"
    assert candidate.answers == "uncoalesced_global"  # none named: the top bottleneck


def test_a_cut_answer_is_asked_to_continue_once(server: OpenAIServer) -> None:
    half = GOOD.index("def make_inputs")
    server.script(answer(f"Faster:\n```python\n{GOOD[:half]}", finish_reason="length"), answer(f"{GOOD[half:]}```\n"))
    [candidate] = rewriter(server).propose(CONTEXT)
    assert candidate.source == GOOD and len(server.requests) == 2
    went_on = server.requests[1].body["messages"]
    assert went_on[-2] == {"role": "assistant", "content": f"Faster:\n```python\n{GOOD[:half]}"}
    assert "Continue exactly where it stopped" in went_on[-1]["content"]


def test_truncated_answer_that_does_not_compile_is_incomplete(server: OpenAIServer) -> None:
    cut = "Faster:\n```python\n" + GOOD[: GOOD.index("return out")] + "return (out"
    server.script(answer(cut, finish_reason="length"), answer("", finish_reason="length"))
    with pytest.raises(RewriteError, match="incomplete") as info:
        rewriter(server).propose(CONTEXT)
    assert info.value.reason == "answer" and "\n" not in str(info.value) and len(server.requests) == 2  # continued once


@pytest.mark.parametrize("text", ["I would need to see the profiler output first.", "§§ garbage ~~ 0x7f"])
def test_prose_only_is_no_code(server: OpenAIServer, text: str) -> None:
    server.script(text)
    with pytest.raises(RewriteError, match="No code") as info:
        rewriter(server).propose(CONTEXT)
    assert info.value.reason == "answer"


def test_n_answers_are_asked_one_after_the_other(server: OpenAIServer) -> None:
    server.script(fenced(GOOD), "Sorry, no idea.", fenced(WRONG, after="Lower register use: low occupancy."))
    candidates = rewriter(server).propose(CONTEXT, n=3)
    assert [c.source for c in candidates] == [GOOD, WRONG]  # the prose-only answer is skipped
    assert [c.answers for c in candidates] == ["uncoalesced_global", "low_occupancy"]
    assert len(server.requests) == 3


# --- the prompt ---


def test_request_carries_the_cell_bottlenecks_device_and_history(server: OpenAIServer) -> None:
    server.script(fenced(GOOD))
    rewriter(server, temperature=0.3).propose(CONTEXT)
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["stream"] is True and request.body["temperature"] == 0.3 and request.body["model"] == MODEL
    assert request.body["messages"] == build_messages(CONTEXT) == build_messages(CONTEXT)  # deterministic
    system, user = (m["content"] for m in request.body["messages"])
    assert system == system_prompt("triton") and "Triton:" in system and "load_inline" not in system
    for rule in ("whole cell", "make_inputs", "same function", "dtype and shape", "library", "```python", "bottleneck kind"):
        assert rule in system
    for fact in (
        SOURCE.rstrip(),  # the whole cell
        f"The launch code is in `run` (line {line_of(SOURCE, 'def run(')})",
        f"`make_inputs` (line {line_of(SOURCE, 'def make_inputs(')})",
        "Device: NVIDIA H100 80GB HBM3",
        "1. uncoalesced_global (score 0.7652)",
        "derived__memory_l2_theoretical_sectors_global_excessive: 14680064",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed: 96.72",
        "cell.py:20 (100%): tl.store(out_ptr + i, tl.load(x_ptr + src, mask=mask), mask=mask)",
        "UncoalescedGlobalAccess, est. speedup 77%",
        "2. low_occupancy (score 0.1135)",
        "limiter: registers",
        "launch__registers_per_thread: 128",
        "1. Doubled BLOCK to 2048. -> wrong: max error 3.2 at [17]",
        "2. Staged tiles through shared memory. -> correct, 1.1x faster",
    ):
        assert fact in user, fact


# --- errors: one line, a way forward, never the key ---


def assert_no_key(err: BaseException, rewriter_: LLMRewriter | None, caplog: pytest.LogCaptureFixture) -> None:
    assert "\n" not in str(err)
    for text in (str(err), repr(err), "".join(traceback.format_exception(err)), caplog.text):
        assert KEY not in text
    if rewriter_ is not None:
        assert KEY not in repr(rewriter_) and KEY not in repr(vars(rewriter_))


@pytest.mark.parametrize(
    "reply, reason, words",
    [
        (error(401, f"Incorrect API key provided: {KEY}.", code="invalid_api_key"), "auth", ["HTTP 401", "OPENAI_API_KEY"]),
        (
            error(429, f"Rate limit reached for {KEY}", code="rate_limit_exceeded", headers={"retry-after": "7"}),
            "rate_limit",
            ["HTTP 429", "Retry after 7 s"],
        ),
        (
            error(500, f"The server had an error; key={KEY}", type="server_error"),
            "server",
            ["HTTP 500", "key=***", "Retry later"],
        ),
        (
            error(400, "maximum context length is 8192 tokens"),
            "request",
            ["HTTP 400", "maximum context length", "context length"],
        ),
    ],
    ids=["401", "429", "500", "400"],
)
def test_http_errors(server: OpenAIServer, caplog: pytest.LogCaptureFixture, reply: Reply, reason: str, words: list[str]) -> None:
    caplog.set_level(logging.DEBUG)
    server.script(reply)
    r = rewriter(server)
    with pytest.raises(RewriteError) as info:
        r.propose(CONTEXT)
    assert info.value.reason == reason and len(server.requests) == 1  # no retries
    for word in words:
        assert word in str(info.value)
    assert_no_key(info.value, r, caplog)


def test_a_passing_server_error_is_retried(server: OpenAIServer) -> None:
    server.script(error(500, "The server had an error", type="server_error"), fenced(GOOD))
    (candidate,) = rewriter(server, max_retries=2).propose(CONTEXT)
    assert candidate.source == GOOD and len(server.requests) == 2


def test_model_not_found(server: OpenAIServer, caplog: pytest.LogCaptureFixture) -> None:
    r = rewriter(server, model="no-such-model")
    with pytest.raises(RewriteError, match=r"Model 'no-such-model' not found .*HTTP 404.*List the server's models") as info:
        r.propose(CONTEXT)
    assert info.value.reason == "model_not_found"
    assert_no_key(info.value, r, caplog)


@pytest.mark.parametrize(
    "reply",
    [Reply(chunks=("late",), delay=3.0), answer(fenced(GOOD), delay=3.0, delay_after=2)],
    ids=["before-answer", "mid-stream"],
)
def test_timeout(server: OpenAIServer, caplog: pytest.LogCaptureFixture, reply: Reply) -> None:
    server.script(reply)
    r = rewriter(server, timeout=0.5)
    with pytest.raises(RewriteError, match=r"No answer from .* within 0.5 s. Try again") as info:
        r.propose(CONTEXT)
    assert info.value.reason == "timeout"
    assert_no_key(info.value, r, caplog)


def test_connection_refused(caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    r = LLMRewriter(model=MODEL, base_url=url, api_key=KEY, timeout=2.0, max_retries=0)
    with pytest.raises(RewriteError, match=f"Could not connect to {url}.*base_url") as info:
        r.propose(CONTEXT)
    assert info.value.reason == "connection"
    assert_no_key(info.value, r, caplog)


# --- settings ---


def test_settings_come_from_the_environment(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_LAB_MODEL", MODEL)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.script(fenced(GOOD), fenced(GOOD))
    LLMAgent.from_settings(Settings.resolve(), print).propose(CONTEXT)  # the registered llm rewriter
    explicit = Settings.resolve({"model": "other-model"})  # explicit beats the environment
    LLMRewriter(model=explicit.model, base_url=explicit.base_url, api_key="sk-explicit").propose(CONTEXT)
    assert [q.body["model"] for q in server.requests] == [MODEL, "other-model"]
    assert [q.headers["authorization"] for q in server.requests] == [f"Bearer {KEY}", "Bearer sk-explicit"]


def test_local_server_needs_no_key(server: OpenAIServer) -> None:
    server.script(fenced(GOOD))
    r = LLMRewriter(model=MODEL, base_url=server.base_url.replace("127.0.0.1", "localhost"))
    assert r.propose(CONTEXT)[0].source == GOOD
    assert server.requests[0].headers["authorization"].startswith("Bearer ")


def test_missing_model_or_key_says_how_to_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        RewriteError, match=r"^No model configured: give --model NAME \(model= from Python\) or set KERNEL_LAB_MODEL$"
    ):
        LLMRewriter(api_key=KEY)
    with pytest.raises(RewriteError, match=r"No API key for https://api\.openai\.com/v1.*OPENAI_API_KEY"):
        LLMRewriter(model=MODEL)
    with pytest.raises(RewriteError, match=r"No API key for https://example\.com/v1"):
        LLMRewriter(model=MODEL, base_url="https://example.com/v1")
    r = LLMRewriter(model=MODEL, api_key=KEY)
    assert repr(r) == "LLMRewriter(model='test-model', base_url='https://api.openai.com/v1', timeout=120.0)"


# --- the helper server itself, and parsing details ---


def test_server_lists_models_and_answers_without_streaming(server: OpenAIServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    assert [m.id for m in client.models.list()] == [MODEL, "other-model"]
    server.script("plain answer")
    reply = client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "plain answer" and server.requests[-1].prompt == "hi"


@pytest.mark.parametrize(
    "text, code, explanation",
    [
        (
            "Two tries:\n```python\nx = 1\n```\nand\n```python\ny = 2 + 3\n```\ndone",
            "y = 2 + 3\n",
            "Two tries:\n```python\nx = 1\n```\nand\ndone",
        ),  # no block defines run: the longest
        (
            "```cuda\n__global__ void k() { /* long long long */ }\n```\n```python\nz = 0\n```",
            "z = 0\n",
            "```cuda\n__global__ void k() { /* long long long */ }\n```",
        ),  # Python before other languages
        (
            "<think>```python\ndef run(x):\n    return x\n```</think>Final:\n~~~python\ndef run(x):\n    return x + 0\n~~~",
            "def run(x):\n    return x + 0\n",
            "Final:",
        ),  # a reasoning model's draft is ignored
        (
            "1. The cell:\n   ```python\n   def run(x):\n       return x\n   ```",
            "def run(x):\n    return x\n",
            "1. The cell:",
        ),  # an indented fence
        ("def run(x):\n    return x\n", "def run(x):\n    return x\n", ""),  # bare code without a fence
        (
            fenced(GOOD, after="Fixes it.\n```python\ndef helper("),
            GOOD,
            "Here is the faster cell:\n\nFixes it.\n```python\ndef helper(",
        ),  # a cut-off extra block after the cell
    ],
    ids=["longest", "python-first", "think", "indented", "no-fence", "cut-extra-block"],
)
def test_split_answer(text: str, code: str, explanation: str) -> None:
    assert split_answer(text) == (code, explanation)


def test_empty_unterminated_fence_is_incomplete() -> None:
    with pytest.raises(AnswerError, match="incomplete"):
        split_answer("Here it comes:\n```python\n")
