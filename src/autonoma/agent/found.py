"""What the workspace held when the run began, shown to the model once, at the top of its
prompt: a small model that sees its input files does not spend its first steps reading
them (the 1.5B model read poem.txt three times before counting its lines)."""

from __future__ import annotations

from autonoma.tools import Workspace, WorkspaceError

READ_BYTES = 200_000  # of each file, to show its first lines and count all of them


def file_heads(
    workspace: Workspace,
    *,
    most: int = 12,
    lines: int = 6,
    width: int = 120,
    names: list[str] | None = None,
) -> list[str]:
    """The workspace's first `most` files (of `names`, if the caller has listed them), each
    with its first lines, indented, and how many lines it has in all when not all are shown."""
    shown = []
    for name in (workspace.visible_files() if names is None else names)[:most]:
        try:
            found = workspace.read(name, READ_BYTES)
        except (OSError, WorkspaceError):
            continue
        if b"\0" in found.data[:8192]:
            shown.append(f"{name}: (binary, {found.size} bytes)")
            continue
        text = found.text()
        every = text.splitlines()
        head = "\n".join("    " + line[:width] for line in every[:lines])
        more = f"\n    ... ({len(every)} lines in all)" if len(every) > lines else ""
        shown.append(f"{name}:\n{head}{more}" if head else f"{name}: (empty)")
    return shown


def found_at_start(workspace: Workspace, *, budget: int = 2400) -> str:
    """The files as the run found them, whole where they are short, inside `budget`
    characters; "" for an empty workspace."""
    names = workspace.visible_files()  # one walk, for the heads and the count
    heads = file_heads(workspace, most=10, lines=15, names=names)
    kept, used = [], 0
    for head in heads:
        if used + len(head) > budget:
            break
        kept.append(head)
        used += len(head)
    if kept and len(names) > len(kept):
        kept.append(f"... and {len(names) - len(kept)} more files")
    return "\n".join(kept)
