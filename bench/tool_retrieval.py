"""Tool retrieval over large tool sets: is the right tool offered, and how big is the prompt?

500 tools in 78 domains (weather, calendars, email, banking, stocks, maps, travel, smart home,
code hosting, devops, documents, media, ...) are generated from the catalogue below: each
domain lists its actions as `name | description | arguments`, and record types get CRUD
actions (`calendar_create_event`, `notes_search_notes`, ...) from one template per verb, so
near-identical siblings (create / update / delete / list / search) abound. 200 requests are
written as a person would ask, each labelled with its one right tool; they were written
against the tool names, not from the descriptions' words (half share no content word with
their tool's name and description), and include near misses on purpose: the weather now,
later or on a past date; a timer, an alarm or a reminder; an order's status or a parcel's
tracking; currency, units or cooking amounts.

For each tool count N (10 to 500), each request gets a registry of N tools built the way real
registries grow, a domain at a time: the right tool's domain (cut to N if larger), then other
domains in a seeded random order until N. The retriever ranks the registry's tools (the core
is offered always and not ranked), and recall@k is the share of requests whose right tool is
among the first k. Queries: the request alone; the request joined with the command the
--model imagines for it (`imagine_tool`, greedy: a signature and a line, as `step_query`
joins them for the agent); that command alone (close to what the model would type into
find_tools); and the request with a lexical embedder (hashed words, no model) as a baseline.

Prompt size is the agent's real first-step prompt for a sample of the requests: the messages
`RunLoop.messages` builds (the system prompt lists every offered command), and those messages as
a backend that cannot constrain decoding receives them, with the action schema (one union of
every offered command's arguments) appended; counted by the --model's own tokenizer with its
chat template, or in characters with `--model none`. Offering every tool is compared with
offering the core, find_tools and the k retrieved.

    python bench/tool_retrieval.py [--model qwen2.5-coder-1.5b] [--prompt-samples 10]
        [--hints-from bench/results/tool_retrieval.json]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import random
import statistics
import sys
import tempfile
import time
import tomllib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autonoma.agent.action import action_schema
from autonoma.agent.identity import AgentIdentity
from autonoma.agent.loop import LoopConfig, RunLoop
from autonoma.llm import ScriptedModel
from autonoma.llm.types import Message
from autonoma.memory.embeddings import LexicalEmbedder, lexical_words
from autonoma.runtime.budget import BudgetSpent
from autonoma.runtime.store import RunRecord, RunStore
from autonoma.tools import CORE_TOOLS, Tool, ToolRegistry, Workspace
from autonoma.tools.retrieval import (
    TextEmbedder,
    ToolRetriever,
    imagine_tool,
    needs_retrieval,
    step_query,
    tool_text,
)
from autonoma.tools.settings import RetrievalSettings
from bench.common import write_result

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"
COUNTS = (10, 50, 100, 200, 500)
KS = (1, 3, 5, 8, 10, 12, 15, 20, 25, 30, 40, 50)
SHOWN = 5  # tools a find_tools call lists
PROMPT_KS = (8, 20, 30)

# -- the catalogue ---------------------------------------------------------------------------
# One line per action: name | description | arguments. Arguments: `name` (a string),
# `name:int|float|bool|date|datetime|list` (a list of strings), `name:a/b/c` (one of those),
# and a trailing `?` on the name for an optional one.

# -- the catalogue and the requests ---------------------------------------------------------
# bench/data/tool_catalogue.toml: actions per domain (name | description | arguments),
# record types whose CRUD actions come from the verbs, and requests as a person would ask.

CATALOGUE = tomllib.loads((Path(__file__).parent / "data" / "tool_catalogue.toml").read_text())
ACTIONS: dict[str, str] = CATALOGUE["actions"]


@dataclass(frozen=True)
class Record:
    """A record type whose CRUD actions are generated from `VERBS`."""

    domain: str
    singular: str
    plural: str
    text: str  # "calendar event"
    texts: str  # "calendar events"
    fields: str  # the create action's arguments
    searchable: str  # what search looks in
    verbs: tuple[str, ...] = ("list", "get", "create", "update", "delete", "search")


RECORDS = [
    Record(**{**r, **({"verbs": tuple(r["verbs"])} if "verbs" in r else {})})
    for r in CATALOGUE["records"]
]

VERBS: dict[str, tuple[str, str, str]] = {
    verb: (name, description, spec)
    for verb, (name, description, spec) in CATALOGUE["verbs"].items()
}

# -- the requests ----------------------------------------------------------------------------
# As a person would ask, each with the one right tool.

REQUESTS: list[tuple[str, str]] = [(request, tool) for request, tool in CATALOGUE["requests"]]


# -- generating the tools --------------------------------------------------------------------

SCALARS: dict[str, Any] = {
    "": str,
    "int": int,
    "float": float,
    "bool": bool,
    "date": dt.date,
    "datetime": dt.datetime,
    "list": list[str],
}


def arguments(spec: str) -> dict[str, Any]:
    """Pydantic fields from `city, days:int, units?:metric/imperial`."""
    fields: dict[str, Any] = {}
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, _, kind = part.partition(":")
        optional = name.endswith("?")
        name = name.rstrip("?")
        kind_type: Any = (
            Literal.__getitem__(tuple(kind.split("/"))) if "/" in kind else SCALARS[kind]
        )
        fields[name] = (kind_type | None, None) if optional else (kind_type, ...)
    return fields


def _not_called(**arguments: Any) -> str:
    return "this benchmark's tools are never called"


def make_tool(name: str, description: str, spec: str) -> Tool:
    args: type[BaseModel] = create_model(
        f"{name}_args", __config__=ConfigDict(extra="forbid"), **arguments(spec)
    )
    return Tool(name, description, args, _not_called, wants_context=False)


def record_actions(record: Record) -> list[tuple[str, str, str]]:
    names = [part.split(":")[0].strip().rstrip("?") for part in record.fields.split(",")]
    optional = ", ".join(
        part.split(":")[0].strip().rstrip("?")
        + "?"
        + (":" + part.split(":")[1] if ":" in part else "")
        for part in record.fields.split(",")
    )
    values = {
        "singular": record.singular,
        "plural": record.plural,
        "text": record.text,
        "texts": record.texts,
        "names": ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0],
        "searchable": record.searchable,
        "id": f"{record.singular}_id",
        "fields": record.fields,
        "optional": optional,
    }
    out = []
    for verb in record.verbs:
        name, description, spec = VERBS[verb]
        out.append((name.format(**values), description.format(**values), spec.format(**values)))
    return out


def generate_tools() -> dict[str, list[Tool]]:
    """The catalogue's 500 tools, by domain, each domain's records first."""
    domains: dict[str, list[Tool]] = {}
    for record in RECORDS:
        for name, description, spec in record_actions(record):
            domains.setdefault(record.domain, []).append(
                make_tool(f"{record.domain}_{name}", description, spec)
            )
    for domain, block in ACTIONS.items():
        for line in block.strip().splitlines():
            name, description, spec = (part.strip() for part in line.split("|"))
            domains.setdefault(domain, []).append(make_tool(f"{domain}_{name}", description, spec))
    return domains


# -- the registries --------------------------------------------------------------------------


def registry_for(
    right: str, n: int, domains: dict[str, list[Tool]], rng: random.Random
) -> list[Tool]:
    """`n` tools holding `right`, added a domain at a time: its own (cut to n), then others."""
    home = next(d for d, tools in domains.items() if any(t.name == right for t in tools))
    own = domains[home]
    if len(own) > n:
        target = next(t for t in own if t.name == right)
        keep = {
            target.name,
            *(t.name for t in rng.sample([t for t in own if t is not target], n - 1)),
        }
        own = [t for t in own if t.name in keep]
    blocks = [own]
    others = [d for d in domains if d != home]
    rng.shuffle(others)
    count = len(own)
    for domain in others:
        if count >= n:
            break
        block = domains[domain]
        if count + len(block) > n:
            block = rng.sample(block, n - count)
        blocks.append(block)
        count += len(block)
    rng.shuffle(blocks)  # the right domain anywhere in the registry's order
    return [tool for block in blocks for tool in block]


# -- recall ----------------------------------------------------------------------------------

Query = str | list[str]


async def ranks(
    embedder: TextEmbedder,
    domains: dict[str, list[Tool]],
    queries: Sequence[tuple[Query, str]],
    counts: Sequence[int],
    seed: int = 0,
    text: Callable[[Tool], str] | None = None,
) -> dict[int, list[int]]:
    """For each tool count, the 0-based rank of each query's right tool in its registry (the
    i-th query's registry is the same whatever the query's text, for a given seed)."""
    current: list[Tool] = []
    kwargs: dict[str, Any] = {} if text is None else {"text": text}
    retriever = ToolRetriever(current, embedder, k=1, core=(), **kwargs)
    out: dict[int, list[int]] = {}
    for n in counts:
        out[n] = []
        for i, (query, right) in enumerate(queries):
            current[:] = registry_for(right, n, domains, random.Random(f"{seed}/{n}/{i}"))
            ranked = [r.tool.name for r in await retriever.rank(query)]
            out[n].append(ranked.index(right))
    return out


def recall_at(positions: Sequence[int], k: int) -> float:
    return sum(p < k for p in positions) / len(positions)


def smallest_k(positions: Sequence[int], target: float) -> int:
    """The least k whose recall@k reaches `target`."""
    ordered = sorted(positions)
    needed = -(-len(ordered) * round(target * 1000) // 1000)  # ceil, without float error
    return ordered[max(needed, 1) - 1] + 1


def recall_table(
    positions: dict[int, list[int]], settings: RetrievalSettings
) -> list[dict[str, Any]]:
    rows = []
    for n, pos in positions.items():
        rows.append(
            {
                "tools": n,
                "recall": {str(k): round(recall_at(pos, k), 3) for k in KS},
                "k_for_95": smallest_k(pos, 0.95),
                "k_for_99": smallest_k(pos, 0.99),
                "mrr": round(statistics.mean(1 / (p + 1) for p in pos), 3),
                # with the settings: every tool offered up to the threshold, else the core + k
                "offered": (
                    round(recall_at(pos, settings.k), 3)
                    if needs_retrieval(n + len(CORE_TOOLS), settings)
                    else 1.0
                ),
            }
        )
    return rows


def offered_or_found(
    recall: dict[str, dict[int, list[int]]], settings: RetrievalSettings
) -> list[dict[str, Any]]:
    """Per tool count and k: the share of requests whose right tool is offered (request and
    hint, top k) or would be found by a find_tools call worded as the hint (top SHOWN): an
    upper bound, for a model that searches whenever its tool is missing."""
    rows = []
    for n, offered in recall["request_and_hint"].items():
        found = recall["hint_alone"][n]
        row: dict[str, Any] = {"tools": n}
        for k in sorted({settings.k, 8, 20, 25, 30}):
            hits = [o < k or f < SHOWN for o, f in zip(offered, found, strict=True)]
            row[str(k)] = round(sum(hits) / len(hits), 3)
        rows.append(row)
    return rows


# -- the model's own words -------------------------------------------------------------------


async def hints(model: Any, requests: Sequence[tuple[str, str]]) -> list[str]:
    """The command the model imagines for each request (`imagine_tool`, greedy)."""
    out = []
    for i, (request, _) in enumerate(requests):
        out.append((await imagine_tool(model, request)).text.strip())
        if i % 20 == 0:
            print(f"hint {i}: {request} -> {out[-1]}", flush=True)
    return out


# -- prompt size -----------------------------------------------------------------------------

Counter = Callable[[list[Message]], Awaitable[int]]

ANSWER = {
    "thoughts": {k: "" for k in ("text", "reasoning", "plan", "criticism", "speak")},
    "command": {"name": "task_complete", "args": {"reason": "done"}},
}


@dataclass
class PromptSize:
    constrained: int  # the messages as sent to a backend that constrains decoding
    unconstrained: int  # with the action schema appended, as a backend that cannot sees them


async def prompt_size(
    tools: list[Tool], request: str, count: Counter, workdir: Path, store: RunStore
) -> PromptSize:
    """The agent's first-step prompt offering `tools`, for the task `request`."""
    registry = ToolRegistry(tools)
    model = ScriptedModel(lambda messages, request: ANSWER, constrained=False)
    agent = RunLoop(model, registry, store, config=LoopConfig(continuous=True))
    identity = AgentIdentity(
        name="ErrandGPT", role="an AI that gets everyday errands done", goals=[request]
    )
    workspace = Workspace(workdir / "workspace")
    run = RunRecord(
        id="bench",
        created_at=0,
        updated_at=0,
        goal=request,
        identity=identity.model_dump(),
        settings={},
        workspace=str(workspace.root),
        model="scripted",
        status="running",
    )
    messages = agent.messages(run, identity, workspace, [], BudgetSpent())
    await model.request(messages, output=action_schema(registry))
    sent = model.requests[-1].messages
    return PromptSize(
        constrained=await count([Message.model_validate(m) for m in messages]),
        unconstrained=await count(sent),
    )


async def prompt_sizes(
    embedder: TextEmbedder,
    domains: dict[str, list[Tool]],
    requests: Sequence[tuple[str, str]],
    counts: Sequence[int],
    count: Counter,
    ks: Sequence[int],
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Mean first-step prompt per tool count over `requests`: offering every tool, and for each
    k the core plus find_tools plus the k retrieved (what a run with retrieval offers)."""

    def mean(sizes: list[PromptSize]) -> dict[str, int]:
        return {
            "constrained": round(statistics.mean(p.constrained for p in sizes)),
            "unconstrained": round(statistics.mean(p.unconstrained for p in sizes)),
            "unconstrained_max": max(p.unconstrained for p in sizes),
        }

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.db")
        for n in counts:
            every: list[PromptSize] = []
            offered: dict[int, list[PromptSize]] = {k: [] for k in ks}
            tools_offered: dict[int, int] = {}
            for i, (request, right) in enumerate(requests):
                registry = [
                    *CORE_TOOLS,
                    *registry_for(right, n, domains, random.Random(f"{seed}/{n}/{i}")),
                ]
                every.append(await prompt_size(registry, request, count, Path(tmp), store))
                for k in ks:
                    retrieving: list[Tool] = [*registry]
                    retriever = ToolRetriever(retrieving, embedder, k=k)
                    retrieving.append(retriever.find_tools())
                    chosen = await retriever.select(request)
                    tools_offered[k] = len(chosen)
                    offered[k].append(await prompt_size(chosen, request, count, Path(tmp), store))
            rows.append(
                {
                    "tools": n,
                    "all": mean(every) | {"offered": len(CORE_TOOLS) + n},
                    "retrieval": {
                        str(k): mean(offered[k]) | {"offered": tools_offered[k]} for k in ks
                    },
                }
            )
            print(rows[-1], flush=True)
        store.close()
    return rows


async def char_count(messages: list[Message]) -> int:
    return sum(len(m.content or "") for m in messages)


# -- overlap between requests and tools ------------------------------------------------------

_STOP_WORDS = """
    a an the to of in on at for from by with and or is are be it its this that my me i you your we
    us our what whats how when where who which do does did can will would should any some all one
    two get give make put let tell show find
"""
STOP = frozenset(_STOP_WORDS.split())


def content_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in lexical_words(text) if w not in STOP and len(w) > 1}


def overlap(requests: Sequence[tuple[str, str]], by_name: dict[str, Tool]) -> dict[str, float]:
    """How much the requests' words give away: the share of requests that share no content
    word with their right tool's text, and the mean share of a request's words found there."""
    none, shares = 0, []
    for request, right in requests:
        words = content_words(request)
        found = words & content_words(tool_text(by_name[right]))
        none += not found
        shares.append(len(found) / max(1, len(words)))
    return {
        "requests_sharing_no_word": round(none / len(requests), 3),
        "mean_share_of_words_in_tool_text": round(statistics.mean(shares), 3),
    }


def args_text(tool: Tool) -> str:
    """The ablation: the tool's text with its argument names."""
    names = ", ".join(tool.args_model.model_fields)
    return tool_text(tool) + (f" Arguments: {names}." if names else "")


# -- the run ---------------------------------------------------------------------------------


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--model",
        default="qwen2.5-coder-1.5b",
        help="embedded model whose tokenizer counts the prompt and who imagines the commands; "
        "'none' counts characters and imagines nothing",
    )
    parser.add_argument("--hints-from", type=Path, help="reuse the hints of an earlier result")
    parser.add_argument("--prompt-samples", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from autonoma.llm import EmbeddedModel, LLMSettings, ModelStore
    from autonoma.memory.embeddings import MiniLMEmbedder

    domains = generate_tools()
    tools = [t for block in domains.values() for t in block]
    by_name = {t.name: t for t in tools}
    assert len(tools) == len(by_name) == 500, len(tools)
    assert len(REQUESTS) == 200 and all(right in by_name for _, right in REQUESTS)
    settings = RetrievalSettings()
    minilm = MiniLMEmbedder()

    model = None
    if args.model != "none":
        model = EmbeddedModel(
            ModelStore().ensure(args.model),
            settings=LLMSettings(local_context=2048, local_slots=1),
        )
    try:
        imagined: list[str] | None = None
        hints_by = None
        if args.hints_from:
            earlier = json.loads(args.hints_from.read_text())
            imagined, hints_by = earlier["hints"], f"{earlier['hints_by']}, in {args.hints_from}"
        elif model is not None:
            imagined, hints_by = await hints(model, REQUESTS), args.model

        started = time.perf_counter()
        recall = {"request": await ranks(minilm, domains, REQUESTS, COUNTS, args.seed)}
        ranking_s = time.perf_counter() - started
        if imagined is not None:
            labels = [right for _, right in REQUESTS]
            joined = [
                (step_query(request, hint=hint), right)
                for (request, right), hint in zip(REQUESTS, imagined, strict=True)
            ]
            recall["request_and_hint"] = await ranks(minilm, domains, joined, COUNTS, args.seed)
            alone = list(zip(imagined, labels, strict=True))
            recall["hint_alone"] = await ranks(minilm, domains, alone, COUNTS, args.seed)
        recall["request_lexical"] = await ranks(
            LexicalEmbedder(), domains, REQUESTS, COUNTS, args.seed
        )
        recall["request_with_argument_names"] = await ranks(
            minilm, domains, REQUESTS, [500], args.seed, text=args_text
        )

        # one step's selection at 500 tools, warm (tool vectors cached, the query not)
        retriever = ToolRetriever([*CORE_TOOLS, *tools], minilm, k=settings.k)
        await retriever.select("warm up")
        timings = []
        for i, (request, _) in enumerate(REQUESTS[:50]):
            began = time.perf_counter()
            await retriever.select(f"{request} ({i})")
            timings.append((time.perf_counter() - began) * 1000)

        count: Counter = char_count
        unit = "characters"
        if model is not None:
            count, unit = model.count_prompt_tokens, f"{args.model} tokens"
        sample = random.Random(args.seed).sample(range(len(REQUESTS)), args.prompt_samples)
        ks = sorted({settings.k, *PROMPT_KS})
        sizes = await prompt_sizes(
            minilm, domains, [REQUESTS[i] for i in sample], COUNTS, count, ks, args.seed
        )
    finally:
        if model is not None:
            await model.aclose()

    misses = [
        {"request": REQUESTS[i][0], "right": REQUESTS[i][1], "rank": p + 1}
        for i, p in enumerate(recall["request"][500])
        if p >= settings.k
    ]
    result = {
        "tools": len(tools),
        "domains": len(domains),
        "requests": len(REQUESTS),
        "core_tools": len(CORE_TOOLS),
        "settings": settings.model_dump(),
        "embedder": minilm.name,
        "hints_by": hints_by,
        "overlap": overlap(REQUESTS, by_name),
        "recall": {name: recall_table(positions, settings) for name, positions in recall.items()},
        "offered_or_found": None if imagined is None else offered_or_found(recall, settings),
        "misses_at_k_500_tools": sorted(misses, key=lambda m: m["rank"]),
        "select_ms_500_tools": {
            "p50": round(statistics.median(timings), 2),
            "max": round(max(timings), 2),
        },
        "ranking_seconds_request_all_counts": round(ranking_s, 1),
        "prompt": {"unit": unit, "samples": args.prompt_samples, "per_count": sizes},
        "hints": imagined,
    }
    path = write_result("tool_retrieval", result)
    for name, rows in result["recall"].items():
        for row in rows:
            print(name, row["tools"], row["recall"], "k95", row["k_for_95"])
    plot(json.loads(path.read_text()))


def plot(data: dict[str, Any], out: Path = IMAGES / "tool_retrieval.svg") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = data["settings"]["k"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.9))
    curves = (
        ("request_and_hint", "request + imagined command", "C2"),
        ("request", "request (MiniLM)", "C0"),
        ("request_lexical", "request (lexical, no model)", "C1"),
    )
    largest = max(row["tools"] for row in data["recall"]["request"])
    for name, label, colour in curves:
        for row in data["recall"].get(name, []):
            if row["tools"] not in (50, largest):
                continue
            left.plot(
                [int(x) for x in row["recall"]],
                list(row["recall"].values()),
                "-" if row["tools"] == largest else ":",
                color=colour,
                marker="o",
                ms=3,
                label=f"{label}, {row['tools']} tools",
            )
    left.axhline(0.95, color="grey", lw=1, ls="--")
    left.axvline(k, color="grey", lw=1, ls=":")
    left.set_xlabel("k (tools offered besides the core)")
    left.set_ylabel(f"recall@k ({data['requests']} requests)")
    left.set_ylim(0, 1.02)
    left.set_title("Is the right tool offered?")
    left.grid(alpha=0.3)
    left.legend(fontsize=7, loc="lower right")

    rows = data["prompt"]["per_count"]
    counts = [r["tools"] for r in rows]
    for key, label, style in (
        ("unconstrained", "schema in the prompt", "-o"),
        ("constrained", "schema as a grammar", ":o"),
    ):
        right.plot(
            counts, [r["all"][key] for r in rows], "C3" + style, ms=3, label=f"every tool, {label}"
        )
        shown_ks = sorted({8, k} & {int(x) for x in rows[0]["retrieval"]})
        for shown, colour in zip(map(str, shown_ks), ("C0", "C4"), strict=False):
            right.plot(
                counts,
                [r["retrieval"][shown][key] for r in rows],
                colour + style,
                ms=3,
                label=f"core + {shown}, {label}",
            )
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("tools in the registry")
    right.set_ylabel(f"first-step prompt ({data['prompt']['unit']})")
    right.set_title("Prompt size")
    right.grid(alpha=0.3, which="both")
    right.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    print(f"wrote {out}")
    return out


if __name__ == "__main__":
    asyncio.run(main())
