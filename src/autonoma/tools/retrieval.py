"""Tool retrieval: when the registry holds many tools, offer the model only the relevant ones.

Past a threshold (`RetrievalSettings.threshold`), each step offers the always-on core (the
file tools and task_complete) plus the `k` other tools whose name and description are most
similar to the step's texts (the task, the latest thoughts) by embedding cosine similarity, as
Gorilla's retriever does. The prompt's command listing and the action schema then stay the
same size however many tools the registry holds.

A person's words often share little with a tool's description ("Write to Jane that the
contract is signed" and "email send: Compose and send an email"), so two things help: the
query can carry the command the model imagines for the task (`imagine_tool`, one model call a
task: hypothetical document embeddings applied to tools), and the retriever makes a
`find_tools` command (API-Bank's ToolSearcher, level 2) with which the model searches the
registry in its own words; what it finds is offered from its next answer on.
bench/tool_retrieval.py measures each; docs/benchmarks.md has the figures.

`ToolRetriever` embeds each tool's text once and keeps the vector; a tool added to the
registry later (an MCP server connecting) or replaced under the same name with another
description is embedded at the next call, and only it. The embedder is handed in by the agent
layer (tools may not import memory): anything with a `name` and an async `embed(texts)`
returning one row per text fits, such as `autonoma.memory.embeddings.MiniLMEmbedder`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from autonoma.errors import ModelError
from autonoma.llm import Model, ModelResponse
from autonoma.templating import render
from autonoma.tools.base import Risk, Tool, ToolResult, tool
from autonoma.tools.files import CORE_TOOLS
from autonoma.tools.settings import RetrievalSettings

FIND_TOOLS = "find_tools"
CORE_NAMES: tuple[str, ...] = (*(t.name for t in CORE_TOOLS), FIND_TOOLS)
"""Offered at every step whatever the task: the workspace's file tools, task_complete, and the
retriever's `find_tools` (when the registry holds it)."""

Matrix = npt.NDArray[np.float32]


class TextEmbedder(Protocol):
    """What tool retrieval needs of an embedder: `autonoma.memory.embeddings.Embedder` fits."""

    @property
    def name(self) -> str: ...

    async def embed(self, texts: Sequence[str]) -> npt.ArrayLike:
        """One vector per text, as rows (unit length or not: the retriever normalises)."""
        ...


def needs_retrieval(n_tools: int, settings: RetrievalSettings) -> bool:
    """Whether a registry of `n_tools` tools is past the point of offering every tool."""
    return n_tools > settings.threshold


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def name_words(name: str) -> str:
    """`calendar_create_event`, `github.listIssues` -> `calendar create event`, `github list
    Issues`: the words of a tool's name, as a sentence model reads them best."""
    return " ".join(_NOT_WORD.sub(" ", _CAMEL.sub(" ", name)).split())


def tool_text(tool: Tool) -> str:
    """What a tool is found by: its name's words and its description."""
    return f"{name_words(tool.name)}: {tool.description}"


def step_query(task: str, thoughts: Mapping[str, Any] | None = None, *, hint: str = "") -> str:
    """The text to find a step's tools by: the task, the command the model imagined for it
    (`imagine_tool`), and the latest thoughts' `text` and `plan`, each non-empty one once, a
    line each. One text rather than several scored apart: with a vague second text, the best
    cosine over the texts did worse than the joined text (bench/tool_retrieval.py)."""
    parts = [task, hint]
    for key in ("text", "plan"):
        value = (thoughts or {}).get(key)
        if isinstance(value, str):
            parts.append(value)
    out: list[str] = []
    for part in (p.strip() for p in parts):
        if part and part not in out:
            out.append(part)
    return "\n".join(out)


async def imagine_tool(model: Model, task: str, *, max_tokens: int = 48) -> ModelResponse:
    """Ask the model for the command it would wish for to do `task`: a signature and a line
    describing it, in the words tools are described with. Pass its `.text` to `step_query` as
    the hint (and charge its `.usage` to the run). Greedy, so a resumed run imagines the same."""
    prompt = render("autonoma.tools", "imagine_tool.j2", task=task)
    return await model.request(
        [{"role": "user", "content": prompt}], max_tokens=max_tokens, temperature=0
    )


@dataclass(frozen=True)
class Ranked:
    tool: Tool
    score: float  # cosine similarity with the closest query text


@dataclass
class _Embedded:
    text: str
    vector: Matrix


class ToolRetriever:
    """Finds the tools relevant to a step among many.

    `tools` is iterated afresh at every call, so a live `ToolRegistry` that gains tools later
    is followed. `core` names the tools offered at every step (names the registry lacks are
    ignored); `text` makes the text a tool is embedded as.

    One retriever serves one run: the tools its `find_tools` command found (the latest, as many
    as `k` or as one search shows, whichever is more) are offered at every later step of it.
    """

    def __init__(
        self,
        tools: Iterable[Tool],
        embedder: TextEmbedder,
        *,
        k: int = 8,
        core: Iterable[str] = CORE_NAMES,
        text: Callable[[Tool], str] = tool_text,
    ) -> None:
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        self.tools = tools
        self.embedder = embedder
        self.k = k
        self.core = frozenset(core)
        self.text = text
        self._embedded: dict[str, _Embedded] = {}
        self._lock = asyncio.Lock()
        self._matrix: tuple[tuple[str, ...], Matrix] | None = None
        self._found: list[str] = []  # by find_tools, the latest first

    @classmethod
    def from_settings(
        cls,
        tools: Iterable[Tool],
        embedder: TextEmbedder,
        settings: RetrievalSettings,
        *,
        core: Iterable[str] = CORE_NAMES,
    ) -> ToolRetriever:
        return cls(tools, embedder, k=settings.k, core=core)

    @property
    def found(self) -> list[str]:
        """Names `find_tools` found in this run, the latest first: offered at every step."""
        return list(self._found)

    @property
    def embedded(self) -> int:
        """How many tools have a vector."""
        return len(self._embedded)

    async def refresh(self) -> list[Tool]:
        """Embed the tools (core excepted) that have no vector yet, or whose text changed,
        in one batch; the other tools, in registry order."""
        async with self._lock:
            others = [tool for tool in self.tools if tool.name not in self.core]
            stale: list[tuple[str, str]] = []
            for tool in others:
                text = self.text(tool)
                known = self._embedded.get(tool.name)
                if known is None or known.text != text:
                    stale.append((tool.name, text))
            if stale:
                vectors = await self._embed([text for _, text in stale])
                for (name, text), vector in zip(stale, vectors, strict=True):
                    self._embedded[name] = _Embedded(text, vector)
                self._matrix = None
            return others

    async def rank(self, query: str | Sequence[str]) -> list[Ranked]:
        """Every tool but the core, most relevant first (ties in registry order). A tool's
        score is its cosine with the closest of the query's texts; with no text to go by,
        every score is 0."""
        others = await self.refresh()
        if not others:
            return []
        texts = [query] if isinstance(query, str) else list(query)
        texts = [text for text in texts if text.strip()]
        if not texts:
            return [Ranked(tool, 0.0) for tool in others]
        matrix = self._stacked([tool.name for tool in others])
        queries = await self._embed(texts)
        if queries.shape[1] != matrix.shape[1]:
            raise ModelError(
                f"{self.embedder.name} gave queries {queries.shape[1]} dimensions but tools "
                f"{matrix.shape[1]}: one retriever needs one embedder"
            )
        scores = (matrix @ queries.T).max(axis=1)
        order = np.argsort(-scores, kind="stable")
        return [Ranked(others[i], float(scores[i])) for i in order]

    async def select(
        self, query: str | Sequence[str], *, include: Iterable[str] = ()
    ) -> list[Tool]:
        """The tools to offer at a step, in registry order: the core, the `k` most relevant
        others, those `find_tools` found, and any named in `include` (say, the command the last
        step used).

        `query` is the step's text (see `step_query`), or several texts, each tool scored by
        the closest of them."""
        ranked = await self.rank(query)
        chosen = {r.tool.name for r in ranked[: self.k]}
        chosen |= self.core | set(self._found) | set(include)
        return [tool for tool in self.tools if tool.name in chosen]

    def find_tools(self, *, shown: int = 5) -> Tool:
        """The `find_tools` command for this retriever's registry (add it to the registry): it
        lists the `shown` tools closest to what the model says it needs, and they are offered
        from the model's next answer on."""

        async def find_tools(need: str) -> ToolResult:
            """Search all the commands there are (many more than are listed here) for ones
            that do what you need; the ones found are listed from your next answer on.

            Args:
                need: what you want to do, in a few plain words, such as "send an email"
            """
            ranked = [r.tool for r in await self.rank(need)][:shown]
            if not ranked:
                return ToolResult(True, "no other commands exist: use the ones listed")
            names = [t.name for t in ranked]
            kept = [*names, *(n for n in self._found if n not in names)]
            self._found = kept[: max(self.k, shown)]
            lines = "\n".join(f"- {t.signature()}: {t.description}" for t in ranked)
            return ToolResult(
                True, f"commands for {need!r}, usable from your next answer:\n{lines}"
            )

        made: Tool = tool(risk=Risk.READ, timeout_s=60, name=FIND_TOOLS)(find_tools)
        return made

    def _stacked(self, names: list[str]) -> Matrix:
        key = tuple(names)
        if self._matrix is None or self._matrix[0] != key:
            self._matrix = (key, np.stack([self._embedded[name].vector for name in names]))
        return self._matrix[1]

    async def _embed(self, texts: list[str]) -> Matrix:
        rows = np.asarray(await self.embedder.embed(texts), dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise ModelError(
                f"{self.embedder.name} returned vectors of shape {rows.shape} for "
                f"{len(texts)} texts"
            )
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit: Matrix = (rows / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
