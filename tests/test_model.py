"""A model asked as its kind wants, through the real openai client over HTTP to a local stand-in server; and the
budget that counts what asking it cost."""

from __future__ import annotations

import threading
import time

import pytest
from openai_server import OpenAIServer, answer, error

from kernel_lab.rewrite.budget import Budget, Limits, Usage
from kernel_lab.rewrite.model import Gate, Model, RewriteError, reasoning

KEY = "sk-test-DO-NOT-LEAK-2b9e"
ASK = [{"role": "system", "content": "You optimize kernels."}, {"role": "user", "content": "Make it faster, please."}]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "KERNEL_LAB_MODEL"):
        monkeypatch.delenv(name, raising=False)


def test_reasoning_models_get_no_temperature_and_max_completion_tokens():
    assert [reasoning(m) for m in ("o1", "o3-mini", "openai/o4-mini", "gpt-5", "gpt-4o", "qwen2.5-coder")] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]
    with OpenAIServer(models=("o3-mini", "gpt-4o")) as server:
        server.script("a", "b")
        Model("o3-mini", server.base_url, KEY, max_tokens=900).ask(ASK)
        Model("gpt-4o", server.base_url, KEY, max_tokens=900, temperature=0.7).ask(ASK)
    thinking, plain = (r.body for r in server.requests)
    assert "temperature" not in thinking and thinking["max_completion_tokens"] == 900 and "max_tokens" not in thinking
    assert plain["temperature"] == 0.7 and plain["max_tokens"] == 900 and "max_completion_tokens" not in plain
    assert Model("gpt-4o", server.base_url, KEY, thinks=True).reasons  # the setting wins over the name


def test_usage_comes_from_the_stream_and_a_server_that_refuses_stream_options_still_answers():
    with OpenAIServer() as server:
        server.script(answer("twelve chars", usage=(120, 3)))
        got = Model("test-model", server.base_url, KEY).ask(ASK)
    assert got.text == "twelve chars" and got.usage == Usage(120, 3)
    assert server.requests[0].body["stream_options"] == {"include_usage": True}
    with OpenAIServer(refuse_stream_options=True) as server:
        server.script("first", "second")
        model = Model("test-model", server.base_url, KEY)
        first, second = model.ask(ASK), model.ask(ASK)
    assert (first.text, second.text) == ("first", "second") and not first.usage.reported
    assert ["stream_options" in r.body for r in server.requests] == [True, False, False]  # asked once, then not


def test_a_local_server_needs_no_key_and_a_remote_one_says_how_to_set_it():
    with OpenAIServer() as server:
        server.script("fine")
        assert Model("test-model", server.base_url.replace("127.0.0.1", "localhost")).ask(ASK).text == "fine"
    assert server.requests[0].headers["authorization"] == "Bearer kernel-lab-local"
    with pytest.raises(RewriteError, match=r"No API key for https://api\.example\.com/v1\. Set OPENAI_API_KEY"):
        Model("test-model", "https://api.example.com/v1")


def test_a_retry_after_from_one_worker_holds_every_worker():
    """Worker A is told to wait 1.5 s; worker B, sharing the gate, sends nothing before that time is over."""
    gate = Gate()
    with OpenAIServer() as server:
        server.script(error(429, f"Rate limit reached for {KEY}", headers={"retry-after": "1.5"}), "A's answer", "B's answer")
        a, b = (Model("test-model", server.base_url, KEY, gate=gate) for _ in range(2))
        first = threading.Thread(target=a.ask, args=(ASK,))
        first.start()
        while not server.sent:  # the 429 went out; A holds the gate as soon as it reads it
            time.sleep(0.01)
        while gate.opens <= server.sent[0][0]:
            time.sleep(0.01)
        assert b.ask(ASK).text in ("A's answer", "B's answer")
        first.join()
    told = server.sent[0][0]
    assert all(r.at >= told + 1.5 for r in server.requests[1:])  # busy or not, no one asked in the wait
    assert len(server.requests) == 3 and gate.waits >= 2


def test_a_retry_after_longer_than_a_request_may_wait_fails_in_one_line():
    with OpenAIServer() as server:
        server.script(error(429, "slow down", headers={"retry-after": "3600"}))
        with pytest.raises(RewriteError, match=r"Rate limited .*HTTP 429.*Retry after 3600 s") as info:
            Model("test-model", server.base_url, KEY).ask(ASK)
    assert info.value.reason == "rate_limit" and len(server.requests) == 1 and KEY not in str(info.value)


# --- the budget ---------------------------------------------------------------------------------------------------


def test_the_budget_refuses_a_request_it_cannot_cover_and_says_why():
    budget = Budget(Limits(requests=2))
    estimate = Usage(100, 50)
    assert budget.reserve(estimate) is None and budget.reserve(estimate) is None
    assert budget.reserve(estimate) == "2 requests asked"
    budget.settle(estimate, Usage(1200, 300))
    budget.settle(estimate, Usage())
    spent = budget.spent()
    assert (spent.requests, spent.prompt, spent.completion, spent.unreported) == (2, 1200, 300, 1)
    assert "cost unknown" in spent.text() and "the budget stopped it: 2 requests asked" in spent.text()


def test_the_budget_counts_tokens_and_money_at_the_prices():
    budget = Budget(Limits(tokens=10_000, cost=0.05), price_in=2.0, price_out=8.0)  # dollars per million tokens
    assert budget.reserve(Usage(4000, 1000)) is None
    budget.settle(Usage(4000, 1000), Usage(5000, 2000))
    assert budget.spent().cost == pytest.approx((5000 * 2 + 2000 * 8) / 1e6)
    assert budget.reserve(Usage(4000, 1000)) == "10,000 tokens would be passed"
    assert Budget(Limits(cost=1.0)).reserve(Usage(1, 1)) == "a $1 limit needs both prices (price_in, price_out)"


def test_the_budget_is_shared_by_threads_without_granting_more_than_its_limit():
    budget = Budget(Limits(requests=5))
    granted = []

    def ask() -> None:
        if budget.reserve(Usage(10, 10)) is None:
            granted.append(1)

    threads = [threading.Thread(target=ask) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 5
