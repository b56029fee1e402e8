"""The embedded model's prompt caches, kept on disk from one process to the next.

llama.cpp keeps each slot's last prompt (its tokens and their attention state) and computes
only what follows the longest prefix a new prompt shares with it. That cache lives in the
process, so every `autonoma run` started cold: its first step computed the whole system prompt
(about 900 tokens, 13 s on two cores), though every run's begins with the same instructions.
llama.cpp can save a slot's state to a file and load it back (`POST /slots/N?action=save` and
`restore`). The model saves each slot that served a request when it closes and restores them
when it starts. The states live under the model cache, which no file tool or sandbox can
reach, in a folder keyed by the model file and the server's shape, so a state is only ever
loaded into a server like the one that made it. A state that does not load is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import httpx2

log = logging.getLogger(__name__)


def kept_prompts_dir(root: Path, model: Path, context: int, slots: int) -> Path:
    """Where the states of a server of `model` with this context and these slots are kept."""
    stat = model.stat()
    try:
        version = metadata.version("xllamacpp")
    except metadata.PackageNotFoundError:
        version = "?"
    shape = [str(model.resolve()), stat.st_size, stat.st_mtime_ns, version, context, slots]
    return root / hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16]


class KeptPrompts:
    """Saving and restoring the slots of one llama.cpp server in `directory` (the server's
    `slot_save_path`, which llama.cpp joins to a file name as a plain string prefix)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def save_path(self) -> str:
        return str(self.directory) + os.sep

    def _name(self, slot: int) -> str:
        return f"slot-{slot}.bin"

    async def restore(self, base_url: str, slots: int, timeout: float) -> list[int]:
        """Load each slot's kept state, if there is one; the slots restored."""
        restored: list[int] = []
        async with httpx2.AsyncClient(timeout=timeout) as http:
            for slot in range(slots):
                name = self._name(slot)
                if not (self.directory / name).is_file():
                    continue
                if await _action(http, base_url, slot, "restore", name):
                    restored.append(slot)
                else:  # another version's state, or a torn file: start cold and forget it
                    with contextlib.suppress(OSError):
                        (self.directory / name).unlink()
        return restored

    async def save(self, base_url: str, slots: Iterable[int], timeout: float) -> list[int]:
        """Save the state of `slots`: each written under a name of this process, then moved
        over the kept one, so two processes saving at once cannot tear a file."""
        saved: list[int] = []
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            log.info("prompt caches not kept: %s", error)
            return saved
        async with httpx2.AsyncClient(timeout=timeout) as http:
            for slot in sorted(set(slots)):
                part = f"slot-{slot}.{os.getpid()}.part"
                if not await _action(http, base_url, slot, "save", part):
                    with contextlib.suppress(OSError):
                        (self.directory / part).unlink()
                    continue
                try:
                    os.replace(self.directory / part, self.directory / self._name(slot))
                    saved.append(slot)
                except OSError as error:
                    log.info("prompt cache of slot %d not kept: %s", slot, error)
        return saved


async def _action(
    http: httpx2.AsyncClient, base_url: str, slot: int, action: str, name: str
) -> bool:
    try:
        response = await http.post(
            f"{base_url}/slots/{slot}", params={"action": action}, json={"filename": name}
        )
    except httpx2.HTTPError as error:
        log.info("slot %d %s failed: %s", slot, action, error)
        return False
    if response.status_code != 200:
        log.info("slot %d %s failed (%d): %s", slot, action, response.status_code, response.text)
        return False
    return True
