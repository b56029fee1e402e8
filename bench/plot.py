"""Pictures of benchmark results for docs/benchmarks.md (SVG, from bench/results/*.json).

python bench/plot.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

RESULTS = Path(__file__).parent / "results"
IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / f"{name}.json").read_text())
    return data


def prompt_tokens_per_step() -> Path:
    data = load("agent_prompt_tokens")
    steps = [row["step"] for row in data["per_step"]]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for key, label in (("autonoma", "autonoma"), ("autogpt", "AutoGPT (April 2023 prompt)")):
        ax.plot(steps, [row[key] for row in data["per_step"]], marker="o", ms=3, label=label)
    ax.set_xlabel("step")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(f"prompt tokens ({data['tokenizer']} tokenizer)")
    ax.set_title("Prompt tokens per step, same identity and 7 commands")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    return save(fig, "agent_prompt_tokens.svg")


def memory_latency() -> Path:
    data = load("memory_retrieval")
    sizes = [row["records"] for row in data["sizes"]]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for key, label, style in (
        ("retrieve_p50_ms", "autonoma retrieve (three terms, threshold algorithm)", "C0-"),
        ("retrieve_cold_p50_ms", "autonoma retrieve, cold CPU caches", "C0--"),
        ("exact_numpy_p50_ms", "exact NumPy (three terms, every record)", "C2-"),
        ("faiss_flat_1thread_p50_ms", "FAISS flat, 1 thread (relevance only)", "C3-"),
    ):
        if all(row.get(key) is not None for row in data["sizes"]):
            ax.plot(sizes, [row[key] for row in data["sizes"]], style, marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("records (384 dimensions)")
    ax.set_ylabel("p50 latency per query (ms)")
    ax.set_title("Memory retrieval latency, one query, 2 cores")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return save(fig, "memory_retrieval.svg")


def context_per_step() -> Path:
    data = load("memory_context")
    tokens = data["prompt_tokens"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(range(1, len(tokens) + 1), tokens, lw=1, label="autonoma (window, summary, memory)")
    baseline = data["full_history_tokens"]
    ax.plot(
        [row["step"] for row in baseline],
        [row["tokens"] for row in baseline],
        ls="--",
        label="every step verbatim",
    )
    window = data["context_window"]
    ax.axhline(window, color="red", lw=1, label=f"context window ({window})")
    ax.axhline(window - data["answer_tokens"], color="red", lw=1, ls=":", label="less the answer")
    ax.set_ylim(0, 2.2 * window)
    ax.set_xlabel("step")
    ax.set_ylabel(f"prompt tokens ({data['model']} tokenizer)")
    ax.set_title(f"Prompt size over a {len(tokens)}-step run")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, "memory_context.svg")


def save(fig: Any, name: str) -> Path:
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / name
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    prompt_tokens_per_step()
    memory_latency()
    context_per_step()
