"""The short-term context: recent steps verbatim, older ones summarised, the budget holds."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest

from autonoma.memory.context import (
    ContextLimits,
    Recollection,
    assemble,
    build_context,
    rough_tokens,
    summary_line,
)
from autonoma.runtime.store import StepRecord
from autonoma.templating import render

SYSTEM = "You are Researcher. Your goals: 1. write report.md"
CLOSING = "Determine exactly one command to use next."
SUMMARY_LINE = re.compile(r"^step (\d+): ", re.MULTILINE)


def make_step(n: int, observation: str | None = None, **changes: Any) -> StepRecord:
    values: dict[str, Any] = {
        "run_id": "run-1",
        "n": n,
        "status": "done",
        "thoughts": {"text": f"thought {n}", "plan": "write it"},
        "command": "write_file",
        "arguments": {"path": f"file-{n}.txt", "text": f"content {n}"},
        "observation": f"wrote 9 characters to file-{n}.txt"
        if observation is None
        else observation,
        "ok": True,
        "started_at": 1000.0 + n,
    }
    values.update(changes)
    return StepRecord(**values)


def steps_with(count: int, observation_chars: int = 0) -> list[StepRecord]:
    return [
        make_step(
            n, f"result of step {n}\n" + "o" * observation_chars if observation_chars else None
        )
        for n in range(1, count + 1)
    ]


def total_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(rough_tokens(m["content"]) for m in messages)


VERBATIM = re.compile(r"^Step (\d+): ", re.MULTILINE)


def verbatim_steps(messages: list[dict[str, Any]]) -> list[int]:
    """The step numbers shown in full in the transcript."""
    return [int(n) for n in VERBATIM.findall(messages[1]["content"])]


def summary_of(messages: list[dict[str, Any]]) -> str | None:
    content = messages[1]["content"]
    if not content.startswith("Earlier steps, summarised"):
        assert "Earlier steps, summarised" not in content
        return None
    return content.split("\n\n")[0]


def assert_well_formed(messages: list[dict[str, Any]]) -> None:
    """Always the system prompt, then one user message that ends with the request."""
    assert len(messages) == 2
    assert messages[0] == {"role": "system", "content": SYSTEM}
    assert messages[1]["role"] == "user"
    assert messages[1]["content"].endswith(CLOSING)
    assert messages[1]["content"].count(CLOSING) == 1
    assert "thought " not in messages[1]["content"]  # thoughts are not fed back


def test_no_steps_is_system_and_the_request() -> None:
    messages = build_context(SYSTEM, [], CLOSING)
    assert messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": CLOSING},
    ]


@pytest.mark.parametrize("count", [1, 2, 7, 8, 9, 15, 40])
@pytest.mark.parametrize("observation_chars", [0, 3000])
def test_always_system_then_one_user_message_ending_with_the_request(
    count: int, observation_chars: int
) -> None:
    messages = build_context(SYSTEM, steps_with(count, observation_chars), CLOSING)
    assert_well_formed(messages)


def test_few_steps_are_all_verbatim_in_order() -> None:
    steps = steps_with(3)
    messages = build_context(SYSTEM, steps, CLOSING)
    assert_well_formed(messages)
    assert summary_of(messages) is None
    assert verbatim_steps(messages) == [1, 2, 3]
    assert messages[1]["content"] == (
        "Your latest steps:\n\n"
        'Step 1: write_file {"path": "file-1.txt", "text": "content 1"}\n'
        "Result: wrote 9 characters to file-1.txt\n\n"
        'Step 2: write_file {"path": "file-2.txt", "text": "content 2"}\n'
        "Result: wrote 9 characters to file-2.txt\n\n"
        'Step 3: write_file {"path": "file-3.txt", "text": "content 3"}\n'
        "Result: wrote 9 characters to file-3.txt\n\n"
        f"{CLOSING}"
    )


def test_an_exact_repeat_is_pointed_out() -> None:
    steps = [
        make_step(1),
        make_step(2, command="list_files"),
        make_step(1).model_copy(update={"n": 3}),
    ]
    content = build_context(SYSTEM, steps, CLOSING)[1]["content"]
    assert content.count("Repeating it will not help") == 1
    assert "(Step 3 repeated step 1: the same command with the same result." in content
    fourth = make_step(1).model_copy(update={"n": 4})
    content = build_context(SYSTEM, [*steps, fourth], CLOSING)[1]["content"]
    assert "(Step 4 repeated steps 1, 3: the same command with the same result." in content


def test_only_max_recent_steps_are_verbatim_and_older_ones_are_summarised() -> None:
    steps = steps_with(20)
    limits = ContextLimits(max_tokens=100_000, max_recent_steps=5, fold_steps=4)
    messages = build_context(SYSTEM, steps, CLOSING, limits)
    assert_well_formed(messages)

    # steps age out four at a time: 20 steps leave 16 summarised and 4 verbatim
    assert verbatim_steps(messages) == [17, 18, 19, 20]
    summary = summary_of(messages)
    assert summary is not None
    assert summary.startswith("Earlier steps, summarised (16 steps):")
    assert "left out" not in summary
    assert [int(n) for n in SUMMARY_LINE.findall(summary)] == list(range(1, 17))
    assert (
        'step 1: write_file {"path": "file-1.txt", "text": "content 1"} '
        "-> wrote 9 characters to file-1.txt"
    ) in summary.splitlines()


def test_many_long_steps_stay_inside_the_token_budget() -> None:
    steps = steps_with(40, observation_chars=5000)
    limits = ContextLimits()
    messages = build_context(SYSTEM, steps, CLOSING, limits)
    assert_well_formed(messages)

    assert total_tokens(messages) <= limits.max_tokens
    shown = verbatim_steps(messages)
    assert 1 <= len(shown) <= limits.max_recent_steps
    assert shown == list(range(41 - len(shown), 41))  # the most recent, contiguous

    summary = summary_of(messages)
    assert summary is not None
    summarised = [int(n) for n in SUMMARY_LINE.findall(summary)]
    older = 40 - len(shown)
    omitted_match = re.search(r"the oldest (\d+) left out", summary)
    omitted = int(omitted_match.group(1)) if omitted_match else 0
    assert summary.startswith(f"Earlier steps, summarised ({older} steps")
    assert summarised == list(range(omitted + 1, older + 1))
    # a summary is one line: the long observation is not in it
    assert "o" * 200 not in summary
    for result in messages[1]["content"].split("\nResult: ")[1:]:
        assert len(result.split("\n\nStep ")[0]) < 2200  # observations were cut


@pytest.mark.parametrize("max_tokens", [400, 600, 1000, 2500, 6000])
@pytest.mark.parametrize("max_recent_steps", [0, 1, 4, 8])
@pytest.mark.parametrize("observation_chars", [0, 600, 5000])
def test_budget_holds_across_limits(
    max_tokens: int, max_recent_steps: int, observation_chars: int
) -> None:
    limits = ContextLimits(max_tokens=max_tokens, max_recent_steps=max_recent_steps)
    messages = build_context(SYSTEM, steps_with(40, observation_chars), CLOSING, limits)
    assert_well_formed(messages)
    assert total_tokens(messages) <= max_tokens
    assert len(verbatim_steps(messages)) <= max_recent_steps


def test_when_summaries_do_not_fit_the_oldest_are_left_out_with_a_count() -> None:
    limits = ContextLimits(max_tokens=600, max_recent_steps=2)
    messages = build_context(SYSTEM, steps_with(40), CLOSING, limits)
    assert_well_formed(messages)
    assert total_tokens(messages) <= limits.max_tokens

    shown = verbatim_steps(messages)
    assert shown == [39, 40]
    summary = summary_of(messages)
    assert summary is not None
    match = re.match(r"Earlier steps, summarised \(38 steps, the oldest (\d+) left out\):", summary)
    assert match, summary.splitlines()[0]
    omitted = int(match.group(1))
    summarised = [int(n) for n in SUMMARY_LINE.findall(summary)]
    assert omitted > 0
    assert summarised, "some summaries should still fit"
    assert summarised == list(range(omitted + 1, 39))  # the newest older steps are kept

    # and the summary is as full as the budget allows: one more line would not have fitted
    one_more = render(
        "autonoma.memory",
        "summary.j2",
        count=38,
        omitted=omitted - 1,
        lines=[summary_line(s) for s in steps_with(38)[omitted - 1 :]],
    )
    rest = rough_tokens(SYSTEM) + rough_tokens(CLOSING)
    rest += rough_tokens(messages[1]["content"].split("\n\n", 1)[1].removesuffix(CLOSING))
    assert rest + rough_tokens(summary) <= limits.max_tokens
    assert rest + rough_tokens(one_more) > limits.max_tokens


def test_a_custom_token_counter_is_used_for_the_budget() -> None:
    def words(text: str) -> int:
        return len(text.split())

    limits = ContextLimits(max_tokens=300, max_recent_steps=8, fold_steps=4)
    messages = build_context(
        SYSTEM, steps_with(40, observation_chars=0), CLOSING, limits, count=words
    )
    assert_well_formed(messages)
    assert sum(words(m["content"]) for m in messages) <= 300
    assert len(verbatim_steps(messages)) == 8
    # with the default counter the same budget holds fewer steps: the counter really is used
    by_rough_tokens = build_context(SYSTEM, steps_with(40, observation_chars=0), CLOSING, limits)
    assert len(verbatim_steps(by_rough_tokens)) < 8


def test_an_invalid_step_is_shown_as_unusable() -> None:
    steps = [
        make_step(1),
        make_step(2, "the answer was not valid JSON: Expecting value", status="invalid", ok=False),
        make_step(3),
    ]
    messages = build_context(SYSTEM, steps, CLOSING)
    assert_well_formed(messages)
    assert (
        "Step 2: your answer could not be used: the answer was not valid JSON: Expecting value"
        in messages[1]["content"].splitlines()
    )

    summarised = build_context(SYSTEM, steps, CLOSING, ContextLimits(max_recent_steps=0))
    summary = summary_of(summarised)
    assert summary is not None
    assert "step 2: invalid answer" in summary.splitlines()


def test_a_long_observation_is_cut_with_a_note() -> None:
    observation = "x" * 1500 + "END-OF-OUTPUT"
    messages = build_context(
        SYSTEM,
        [make_step(1, observation, command="read_file")],
        CLOSING,
        ContextLimits(observation_chars=1000),
    )
    assert_well_formed(messages)
    result = messages[-1]["content"]
    assert f"Result: {'x' * 1000}\n[cut: 513 more characters]\n\n{CLOSING}" in result
    assert "END-OF-OUTPUT" not in result


def test_an_observation_at_the_limit_is_not_cut() -> None:
    messages = build_context(
        SYSTEM, [make_step(1, "y" * 1000)], CLOSING, ContextLimits(observation_chars=1000)
    )
    assert "[cut" not in messages[-1]["content"]
    assert "y" * 1000 in messages[-1]["content"]


def test_what_the_checks_said_follows_the_result_whole_and_outside_its_fence() -> None:
    checks = "Acceptance checks now: 1 of 1 fail: check 1 [code] x FAILS: AssertionError"
    messages = build_context(
        SYSTEM,
        [make_step(1, "z" * 1500 + "page text", command="fetch", untrusted=True, checks=checks)],
        CLOSING,
        ContextLimits(observation_chars=1000),
    )
    result = messages[-1]["content"]
    assert result.index(checks) > result.rindex(">>>")  # after the result's fence, not in it
    assert "[cut: 509 more characters]" in result  # the result cut, the checks whole
    assert result.endswith(f"{checks}\n\n{CLOSING}")


def test_a_step_without_a_result_says_so() -> None:
    interrupted = make_step(1, status="interrupted", ok=None)
    interrupted = interrupted.model_copy(update={"observation": None})
    messages = build_context(SYSTEM, [interrupted], CLOSING)
    assert "Step 1: write_file" in messages[1]["content"]
    assert "\nResult: (no result recorded)\n" in messages[1]["content"]


def test_a_step_too_big_to_show_is_summarised_instead() -> None:
    huge = make_step(1, arguments={"path": "file-1.txt", "text": "z" * 40_000})
    messages = build_context(SYSTEM, [huge], CLOSING)
    assert_well_formed(messages)
    assert total_tokens(messages) <= ContextLimits().max_tokens
    assert verbatim_steps(messages) == []
    assert messages[1]["content"].startswith("Earlier steps, summarised (1 step):\nstep 1: ")
    assert "z" * 100 not in messages[1]["content"]


def test_summary_line_is_one_short_line() -> None:
    failed = make_step(
        7,
        "error: FileNotFoundError: a.txt does not exist\nsecond line",
        command="read_file",
        arguments={"path": "a" * 200},
        ok=False,
    )
    line = summary_line(failed)
    assert "\n" not in line
    args = json.dumps(failed.arguments)
    assert line == (
        f"step 7: read_file {args[:77]}... -> error: FileNotFoundError: a.txt does not exist"
        " (failed)"
    )

    ok = summary_line(make_step(8))
    assert ok == (
        'step 8: write_file {"path": "file-8.txt", "text": "content 8"} '
        "-> wrote 9 characters to file-8.txt"
    )


def prompt_before_request(messages: list[dict[str, Any]]) -> str:
    return messages[0]["content"] + messages[1]["content"].removesuffix(CLOSING)


@pytest.mark.parametrize("observation_chars", [0, 900])
def test_each_prompt_begins_with_the_last_one_except_at_folds(observation_chars: int) -> None:
    """The prefix a prompt cache reuses: step n's prompt starts with step n-1's (all of it but
    the request), except when the oldest verbatim steps age out, four at a time."""
    limits = ContextLimits(max_tokens=6000)
    steps = steps_with(40, observation_chars)
    changed = []
    previous = prompt_before_request(build_context(SYSTEM, steps[:1], CLOSING, limits))
    for n in range(2, 41):
        messages = build_context(SYSTEM, steps[:n], CLOSING, limits)
        assert 1 <= len(verbatim_steps(messages)) <= limits.max_recent_steps
        now = prompt_before_request(messages)
        if not now.startswith(previous.removesuffix("\n\n")):
            changed.append(n)
        previous = now
    assert changed, "the window must fold at some point"
    gaps = [b - a for a, b in itertools.pairwise(changed)]
    assert all(gap >= limits.fold_steps for gap in gaps), changed


def test_the_head_comes_first_then_memory_then_the_steps() -> None:
    recalled = Recollection(memories=["notes.txt held a shopping list"])
    head = "Checks:\n1. a.txt exists"
    first, later = (
        assemble(SYSTEM, steps_with(n), CLOSING, head=head, recalled=recalled).messages[1]
        for n in (2, 3)
    )
    content = first["content"]
    assert content.startswith(f"{head}\n\nWhat you remember that may help now:\n- notes.txt")
    assert content.index("shopping list") < content.index("Step 1:") < content.index(CLOSING)
    # the same recollection a step later: the prompt up to the request is append-only
    assert later["content"].startswith(content.removesuffix(CLOSING))
