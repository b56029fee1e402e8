"""autonoma's web server, a FastAPI app: for now the town's viewer (docs/sim.md), a page
that draws a sim's map with its personas, follows the sim live while it runs and replays
its stored steps, and the JSON it reads. Later faces (the Agent Protocol, the runs' web UI)
add their routes to the same app.

The page and its script are files of this package (static/), so nothing is fetched from a
CDN."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from autonoma.errors import AutonomaError
from autonoma.server.sim_views import frame, panel, town_map
from autonoma.sim.store import Sim, SimNotFound, SimStore

# (sim, persona, question) -> the answer, in character: the CLI gives one with its model
Interviewer = Callable[[Sim, str, str], Awaitable[str]]

STATIC = Path(str(resources.files("autonoma.server").joinpath("static")))


class Question(BaseModel):
    persona: str = Field(min_length=1, max_length=100)
    question: str = Field(min_length=1, max_length=500)


def create_app(
    store: SimStore,
    interviewer: Interviewer | None = None,
    closing: Callable[[], Awaitable[None]] | None = None,
) -> FastAPI:
    """The app over the sims in `store`; interviews are answered by `interviewer` (none: the
    page says interviews need a model); `closing` runs when the server stops (the model
    closed in the loop it was opened in)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        if closing is not None:
            await closing()

    app = FastAPI(title="autonoma", docs_url=None, redoc_url=None, lifespan=lifespan)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def load(name: str, step: int | None = None) -> Sim:
        try:
            return store.load(name, step)
        except SimNotFound as error:
            raise HTTPException(404, str(error)) from None

    @app.get("/", include_in_schema=False)
    def home() -> RedirectResponse:
        records = store.records()
        return RedirectResponse(f"/sims/{records[0].name}" if records else "/api/sims")

    @app.get("/sims/{name}", include_in_schema=False)
    def town_page(name: str) -> FileResponse:
        load(name)  # a sim that is not there is a 404, not an empty page
        return FileResponse(STATIC / "town.html", media_type="text/html")

    @app.get("/api/sims")
    def sims() -> list[dict[str, Any]]:
        return [
            {"name": r.name, "id": r.id, "world": r.world, "personas": r.personas, "step": r.step}
            for r in store.records()
        ]

    @app.get("/api/sims/{name}")
    def sim_map(name: str) -> dict[str, Any]:
        return town_map(load(name))

    @app.get("/api/sims/{name}/steps/{step}")
    def sim_step(name: str, step: int) -> dict[str, Any]:
        return frame(load(name, step))

    @app.get("/api/sims/{name}/latest")
    def sim_latest(name: str) -> dict[str, Any]:
        return frame(load(name))

    @app.get("/api/sims/{name}/personas/{persona}")
    def sim_persona(name: str, persona: str, step: int | None = None) -> dict[str, Any]:
        sim = load(name, step)
        try:
            return panel(store, sim, persona)
        except SimNotFound as error:
            raise HTTPException(404, str(error)) from None

    @app.post("/api/sims/{name}/interview")
    async def sim_interview(name: str, asked: Question) -> dict[str, Any]:
        if interviewer is None:
            raise HTTPException(503, "interviews need a model: start the server with --model")
        sim = load(name)
        try:
            person = sim.persona(asked.persona)
            answer = await interviewer(sim, person.name, asked.question)
        except SimNotFound as error:
            raise HTTPException(404, str(error)) from None
        except AutonomaError as error:
            raise HTTPException(502, f"the interview failed: {error}") from None
        return {"persona": person.name, "question": asked.question, "answer": answer}

    return app
