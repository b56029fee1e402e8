"""Pictures of benchmark results for docs/benchmarks.md (SVG, from bench/results/*.json).

python bench/plot.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

try:  # --help works without it; drawing says what to install
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator
except ModuleNotFoundError:
    matplotlib = None

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


def planning_makespan() -> Path:
    data = load("planning_makespan")
    p = data["parameters"]

    def independent_label(row: dict[str, Any]) -> str:
        label = f"{row['tasks']:,} independent,\n{row['limit']:,} per {row['period_s']:g} s window"
        if row.get("client_window_s", row["period_s"]) != row["period_s"]:
            label += f",\nclient counts {row['client_window_s']:g} s"
        return label

    rows = [(independent_label(row), row) for row in data["independent"]] + [
        (f"layered {row['depth']} x {row['width']},\n{row['case']}", row) for row in data["layered"]
    ]
    fig, (ax, speed) = plt.subplots(
        1, 2, figsize=(9.6, 4.4), gridspec_kw={"width_ratios": [3, 1.3]}, sharey=True
    )
    ys = list(range(len(rows)))[::-1]
    for y, (_, row) in zip(ys, rows, strict=True):
        meets = row["meets_10pct_target"]
        ax.barh(y, row["makespan_s"], height=0.5, color="C2" if meets else "C1")
        ax.text(row["makespan_s"], y, f" {row['makespan_s']:.1f} s", va="center", fontsize=8)
        ax.plot([row["bound_s"]] * 2, [y - 0.35, y + 0.35], color="black", lw=2)
        ax.plot([row["bound_s"] * 1.1] * 2, [y - 0.35, y + 0.35], color="black", lw=1, ls=":")
        if "critical_path_s" in row:
            ax.plot(row["critical_path_s"], y + 0.32, "v", color="C0", ms=6)
        if "bare_http_makespan_s" in row:
            ax.plot(row["bare_http_makespan_s"], y + 0.32, "v", color="C4", ms=6)
    handles = [
        Patch(color="C2", label="makespan, within 10% of the bound"),
        Patch(color="C1", label="makespan, more than 10% over"),
        Line2D([], [], color="black", lw=2, label="bound: (ceil(N/R) - 1) P + L, or D L"),
        Line2D([], [], color="black", lw=1, ls=":", label="bound + 10% (the target)"),
        Line2D([], [], ls="", marker="v", color="C0", label="critical path of latencies drawn"),
        Line2D([], [], ls="", marker="v", color="C4", label="bare HTTP client, same requests"),
    ]
    ax.set_yticks(ys, [label for label, _ in rows], fontsize=8)
    ax.set_xlabel("makespan (s)")
    ax.set_xlim(0, 1.15 * max(row["makespan_s"] for _, row in rows))
    ax.set_title(
        f"Makespan, latency {p['latency_s']:g} s ± {p['jitter_s']:g}, local executor", fontsize=10
    )
    ax.grid(alpha=0.3, axis="x")
    ax.legend(handles=handles, fontsize=7, loc="upper right")
    ups = data["speedup_over_one_at_a_time"]
    values = list(ups.values())
    speed.barh(ys, values, height=0.5, color="C0")
    for y, value in zip(ys, values, strict=True):
        speed.text(value, y, f" {value:.0f}x", va="center", fontsize=8)
    speed.set_xlim(0, 1.3 * max(values))
    speed.set_xlabel("speed-up over one at a time")
    speed.set_title("against a plain loop (extrapolated)", fontsize=10)
    speed.grid(alpha=0.3, axis="x")
    return save(fig, "planning_makespan.svg")


EVERYDAY = (
    ("before_part", "before issue 17 (JSON)"),
    ("json_part", "JSON actions"),
    ("code_part", "code actions"),
)
OUTCOMES = (
    ("met", "met", "C2"),
    ("claimed", "wrong, claimed complete", "C3"),
    ("incomplete", "incomplete (checks refused)", "C1"),
    ("loop", "loop", "C4"),
    ("budget", "out of steps", "C7"),
    ("error", "error", "k"),
)


def everyday() -> Path:
    runs = [(label, load(f"everyday_{name}")) for name, label in EVERYDAY
            if (RESULTS / f"everyday_{name}.json").exists()]  # fmt: skip
    fig, (steps, goals) = plt.subplots(1, 2, figsize=(9.6, 3.8))
    for label, data in runs:
        seconds = sorted(s for r in data["runs"] for s in r["step_seconds"])
        share = [(i + 1) / len(seconds) for i in range(len(seconds))]
        steps.plot(seconds, share, label=label)
    steps.set_xlabel("seconds per step (agent's answer, command, memory's work)")
    steps.set_ylabel("share of steps at most that long")
    steps.set_title("Steps with the embedded model", fontsize=10)
    steps.grid(alpha=0.3)
    steps.legend(fontsize=8)
    for index, (_, data) in enumerate(runs):
        summary, left = data["summary"], 0
        for key, name, colour in OUTCOMES:
            count = summary["met"] if key == "met" else summary["failures"].get(key, 0)
            goals.barh(index, count, left=left, color=colour, label=name if index == 0 else None)
            left += count
    goals.set_yticks(range(len(runs)), [label for label, _ in runs])
    goals.set_xlabel(f"goals ({runs[0][1]['summary']['goals'] if runs else 0})")
    goals.set_title("How each goal ended", fontsize=10)
    goals.legend(fontsize=7, loc="lower right")
    return save(fig, "everyday.svg")


def save(fig: Any, name: str) -> Path:
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / name
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    print(f"wrote {path}")
    return path


if __name__ == "__main__":
    argparse.ArgumentParser(
        description="Redraw the figures of docs/benchmarks.md (docs/images/) from the JSON in "
        "bench/results/; needs matplotlib (the bench extra)."
    ).parse_args()
    if matplotlib is None:
        sys.exit("bench/plot.py draws with matplotlib: pip install -e '.[bench]'")
    prompt_tokens_per_step()
    memory_latency()
    context_per_step()
    planning_makespan()
    everyday()
