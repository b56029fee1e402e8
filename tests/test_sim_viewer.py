"""The town's viewer in headless Chromium (Debian's chromium, driven by Playwright): `autonoma
sim serve` serves a sim that ran through the CLI against an OpenAI-compatible server on
127.0.0.1; the page draws each persona at its stored tile, scrubbing the timeline moves them
to a past step's tiles, a conversation shows as speech bubbles, a persona's panel shows its
plan and memories, an interview typed in the page gets its answer, what the model wrote is
shown as text and never run as markup, and the page fetches nothing from outside."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autonoma.sim.store import SimStore
from tests.cli_helpers import cli, one_line_error, spec
from tests.fake_openai import FakeOpenAI
from tests.sim.town_answers import DAY_PLAN, first_kitchen

CHROMIUM = "/usr/bin/chromium"
playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium")


MARKUP = "making <img src=x onerror=document.body.dataset.hacked=1> toast"


def townsfolk(body: dict[str, Any]) -> dict[str, Any]:
    """The town's answers: a day of breakfast and reading, a first action whose words hold
    markup, the Lins talking when they meet, an interview's answer."""
    schema = body["response_format"]["json_schema"]["schema"]
    wanted = next(iter(schema["properties"]))
    prompt = json.dumps(body["messages"])
    if wanted == "plan":
        answer: dict[str, Any] = DAY_PLAN
    elif wanted == "decision":
        talk = "talk" in schema["properties"]["decision"]["enum"]
        answer = {"decision": "talk" if talk else "continue", "reaction": "", "minutes": 5}
    elif wanted == "utterance":
        turn = prompt.count(": line ")  # lines said so far appear in the prompt
        answer = {"utterance": f"line {turn + 1} about breakfast", "end": turn >= 2}
    elif wanted == "place":
        answer = first_kitchen(schema)
    elif wanted == "actions":
        kitchen = first_kitchen(schema["properties"]["actions"]["items"])
        answer = {"actions": [{"action": MARKUP, "minutes": 10, **kitchen},
                              {"action": "eating toast", "minutes": 10, **kitchen}],
                  **first_kitchen(schema)}  # fmt: skip
    elif wanted == "ratings":
        answer = {"ratings": [4] * schema["properties"]["ratings"]["minItems"]}
    else:
        answer = {
            "about": {"about": "breakfast", "conclusion": "Breakfast together is good."},
            "answer": {"answer": "I am making toast for the family."},
        }[wanted]  # fmt: skip
    return {"content": json.dumps(answer)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def viewer(home: Path, server: FakeOpenAI) -> Iterator[str]:
    """The sim willow, run 60 steps through the CLI, served; yields the page's address."""
    server.responder = townsfolk
    made = cli(home, "sim", "new", "small_town", "--name", "willow", "--start", "2023-02-13 07:00")
    assert made.returncode == 0, made.stderr
    model = ["--model", spec(server), "--embedder", "lexical"]
    ran = cli(home, "sim", "run", "willow", "--steps", "60", *model, "-q", timeout=300)
    assert ran.returncode == 0, ran.stderr
    port = free_port()
    env = {**os.environ, "AUTONOMA_HOME": str(home), "AUTONOMA_CACHE_DIR": str(home / "cache"),
           "AUTONOMA_CONFIG": str(home / "no-user-config.toml")}  # fmt: skip
    served = subprocess.Popen(
        [sys.executable, "-m", "autonoma", "sim", "serve", "willow", "--port", str(port), *model],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert served.poll() is None, served.communicate()[1]
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        served.terminate()
        served.wait(timeout=30)


def tiles(home: Path, step: int | None = None) -> dict[str, tuple[int, int]]:
    at = [] if step is None else ["--step", str(step)]
    state = json.loads(cli(home, "sim", "show", "willow", *at, "--json").stdout)
    return {name: tuple(p["tile"]) for name, p in state["personas"].items()}  # type: ignore[misc]


def drawn(page: Any) -> dict[str, tuple[int, int]]:
    found = page.eval_on_selector_all(
        "g.persona", "gs => gs.map(g => [g.dataset.name, +g.dataset.x, +g.dataset.y])"
    )
    return {name: (x, y) for name, x, y in found}


def test_the_viewer_draws_scrubs_shows_talk_and_interviews(viewer: str, home: Path) -> None:
    store = SimStore(home / "sims.db")
    record = store.load("willow").record
    [talked] = [step for step, kind, _ in store.events(record.id) if kind == "talk"][:1]
    store.close()
    outside: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.on("request", lambda r: None if r.url.startswith(viewer) else outside.append(r.url))
        page.goto(f"{viewer}/sims/willow")
        page.wait_for_selector("body[data-ready=yes]")

        assert drawn(page) == tiles(home)  # each persona at its stored tile, the latest step
        assert page.locator("#time").inner_text() == "day 1, Monday February 13, 07:10"

        page.locator("#timeline").fill("0")  # scrubbing to the start
        page.wait_for_selector("body[data-step='0']")
        assert drawn(page) == tiles(home, 0) != tiles(home)
        assert not page.locator("#live").is_checked()  # the past is not followed live

        page.locator("#timeline").fill(str(talked))  # the step the Lins talked
        page.wait_for_selector(f"body[data-step='{talked}']")
        bubbles = page.locator(".bubble text").all_text_contents()
        assert len(bubbles) == 2 and all("about breakfast" in b for b in bubbles)

        page.locator("#timeline").fill("5")  # the first action, its words holding markup
        page.wait_for_selector("body[data-step='5']")
        labels = page.locator("g.persona .doing").all_text_contents()
        assert any(MARKUP in label for label in labels)  # shown as text
        assert page.evaluate("document.body.dataset.hacked") is None  # never run
        assert page.locator("#map img").count() == 0

        page.locator("#personas button", has_text="Mei Lin").click()
        page.wait_for_selector("#panel[data-persona='Mei Lin']")
        panel = page.locator("#panel").inner_text()
        assert "Plan for the day" in panel and "08:00 read a book" in panel
        assert "Mei Lin talked with John Lin about breakfast" in panel  # a memory
        knows = page.locator("#knows li").all_inner_texts()
        assert any(k.startswith("John Lin: in ") and "last talked 2023-02-13" in k for k in knows)

        page.locator("#interviewee").select_option("Mei Lin")
        page.locator("#question").fill("What are you doing?")
        page.locator("#interview button").click()
        page.wait_for_function("document.getElementById('answer').textContent.includes(':')")
        assert page.locator("#answer").inner_text() == "Mei Lin: I am making toast for the family."
        browser.close()
    assert outside == []  # no CDN, nothing fetched from outside
    store = SimStore(home / "sims.db")
    interviews = [d for _, kind, d in store.events(record.id) if kind == "interview"]
    assert interviews[-1]["from"] == "viewer" and interviews[-1]["persona"] == "Mei Lin"
    store.close()


def fetched(url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_viewer_says_what_is_missing(viewer: str, home: Path) -> None:
    assert fetched(f"{viewer}/sims/oak")[0] == 404
    status, said = fetched(f"{viewer}/api/sims/willow/personas/Klaus")
    assert status == 404 and "no persona 'Klaus'" in said["detail"]
    status, said = fetched(f"{viewer}/api/sims/willow/steps/999")
    assert status == 404 and "has steps 0 to 60" in said["detail"]
    status, _ = fetched(
        f"{viewer}/api/sims/willow/interview", {"persona": "Mei Lin", "question": ""}
    )
    assert status == 422
    status, said = fetched(
        f"{viewer}/api/sims/willow/interview", {"persona": "Klaus", "question": "Hi?"}
    )
    assert status == 404 and "no persona 'Klaus'" in said["detail"]
    # a second viewer on the same port: one line saying so, before any address is printed
    port = viewer.rsplit(":", 1)[1]
    again = cli(home, "sim", "serve", "willow", "--port", port)
    assert f"cannot serve on 127.0.0.1:{port}" in one_line_error(again)
    assert "http://" not in again.stdout
