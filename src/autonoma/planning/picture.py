"""The task graph as an SVG picture, with no Graphviz needed: tasks in columns by depth (a
task stands right of everything it waits for), each box filled by its status."""

from __future__ import annotations

from xml.sax.saxutils import escape

from autonoma.planning.graph import TaskGraph

FILL = {
    "pending": "#ffffff",
    "running": "#add8e6",
    "done": "#98fb98",
    "failed": "#fa8072",
    "skipped": "#d3d3d3",
    "cancelled": "#f0e68c",
}
BOX_W, BOX_H, GAP_X, GAP_Y, MARGIN = 200, 48, 60, 18, 20


def depths(graph: TaskGraph) -> dict[str, int]:
    """Each task's column: one more than the deepest task it waits for."""
    depth: dict[str, int] = {}
    for task in graph.order():
        depth[task.id] = 1 + max((depth[d] for d in graph.deps(task)), default=-1)
    return depth


def render_svg(graph: TaskGraph) -> str:
    depth = depths(graph)
    columns: dict[int, list[str]] = {}
    for task in graph.order():
        columns.setdefault(depth[task.id], []).append(task.id)
    where: dict[str, tuple[int, int]] = {}
    for column, ids in columns.items():
        for row, task_id in enumerate(ids):
            where[task_id] = (
                MARGIN + column * (BOX_W + GAP_X),
                MARGIN + row * (BOX_H + GAP_Y),
            )
    width = MARGIN * 2 + len(columns) * (BOX_W + GAP_X) - GAP_X
    height = MARGIN * 2 + max(len(ids) for ids in columns.values()) * (BOX_H + GAP_Y) - GAP_Y
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
    ]
    for task in graph.tasks:
        x, y = where[task.id]
        for dep in graph.deps(task):
            dx, dy = where[dep]
            parts.append(
                f'<line x1="{dx + BOX_W}" y1="{dy + BOX_H // 2}" x2="{x}" y2="{y + BOX_H // 2}" '
                'stroke="#555" marker-end="url(#arrow)"/>'
            )
    for task in graph.tasks:
        x, y = where[task.id]
        text = task.task if len(task.task) <= 30 else task.task[:29] + "…"
        parts += [
            f"<g><title>{escape(task.id)}: {escape(task.task)}</title>",
            f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6" '
            f'fill="{FILL[task.status]}" stroke="#333"/>',
            f'<text x="{x + 8}" y="{y + 18}" font-weight="bold">{escape(task.id)} '
            f"[{task.status}]</text>",
            f'<text x="{x + 8}" y="{y + 36}">{escape(text)}</text></g>',
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
