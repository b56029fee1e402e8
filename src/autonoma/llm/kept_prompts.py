"""The embedded model's prompt caches, kept on disk from one process to the next.

llama.cpp keeps each slot's last prompt (its tokens and their attention state) and computes
only what follows the longest prefix a new prompt shares with it; while the server runs it
also keeps earlier prompts in memory and brings back the best match. All of that lives in the
process, so every `autonoma run` started cold: its first step computed the whole system prompt
(about 1,000 tokens, 13 s on two cores), and so did making its identity and writing its
checks, though every run's prompts of each kind begin with the same instructions.

llama.cpp can save a slot's state to a file and load it back (`POST /slots/N?action=save` and
`restore`, 10 to 40 ms for a 1,000-token prompt). Prompts are grouped into families by how
they begin (the first message's first 600 characters: the agent's instructions, the identity
prompt, the check writer's, memory's). The first request of a family in a process is preceded
by restoring the state an earlier process kept for that family, and followed by keeping the
state it leaves. Later requests of the family in the same process need neither: llama.cpp's
own caches serve them.

The states live under the model cache, which no file tool or sandbox can reach, in a folder
keyed by the model file, the llama.cpp build and the server's context and slots, so a state is
only ever loaded into a server like the one that made it. A state that does not load is
removed; one is written under a name of its process and then moved into place, so two
processes saving at once cannot tear it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from importlib import metadata
from pathlib import Path

import httpx2

from autonoma.llm.types import Message

log = logging.getLogger(__name__)

FAMILY_CHARS = 600


def kept_prompts_dir(root: Path, model: Path, context: int, slots: int) -> Path:
    """Where the states of a server of `model` with this context and these slots are kept."""
    stat = model.stat()
    try:
        version = metadata.version("xllamacpp")
    except metadata.PackageNotFoundError:
        version = "?"
    shape = [str(model.resolve()), stat.st_size, stat.st_mtime_ns, version, context, slots]
    return root / hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16]


def family_of(messages: list[Message]) -> str:
    """Prompts that begin alike share a family (and a kept state)."""
    first = f"{messages[0].role}\n{messages[0].content[:FAMILY_CHARS]}" if messages else ""
    return hashlib.sha256(first.encode()).hexdigest()[:16]


class KeptPrompts:
    """The kept states of one llama.cpp server, in `directory` (the server's `slot_save_path`,
    which llama.cpp joins to a file name as a plain string prefix)."""

    def __init__(self, directory: Path, timeout: float) -> None:
        self.directory = directory
        self.timeout = timeout
        self._met: set[str] = set()  # families this process has served
        self._unsaved: set[str] = set()  # of them, those whose state is not kept yet

    @property
    def save_path(self) -> str:
        return str(self.directory) + os.sep

    async def before(self, base_url: str, slot: int, family: str) -> bool:
        """Before a request of `family` in `slot`: on the family's first request in this
        process, load the state kept for it. True if one was loaded."""
        if family in self._met:
            return False
        self._met.add(family)
        self._unsaved.add(family)
        name = f"{family}.bin"
        if not (self.directory / name).is_file():
            return False
        if await self._action(base_url, slot, "restore", name):
            return True
        with contextlib.suppress(OSError):  # another build's state, or a torn file: forget it
            (self.directory / name).unlink()
        return False

    async def after(self, base_url: str, slot: int, family: str) -> bool:
        """After a request of `family` in `slot`: keep the state it left, once a process.
        True if it was kept."""
        if family not in self._unsaved:
            return False
        self._unsaved.discard(family)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            log.info("prompt caches not kept: %s", error)
            return False
        part = f"{family}.{os.getpid()}.part"
        if not await self._action(base_url, slot, "save", part):
            with contextlib.suppress(OSError):
                (self.directory / part).unlink()
            return False
        try:
            os.replace(self.directory / part, self.directory / f"{family}.bin")
        except OSError as error:
            log.info("prompt cache of %s not kept: %s", family, error)
            return False
        return True

    async def _action(self, base_url: str, slot: int, action: str, name: str) -> bool:
        try:
            async with httpx2.AsyncClient(timeout=self.timeout) as http:
                response = await http.post(
                    f"{base_url}/slots/{slot}", params={"action": action}, json={"filename": name}
                )
        except httpx2.HTTPError as error:
            log.info("slot %d %s failed: %s", slot, action, error)
            return False
        if response.status_code != 200:
            log.info(
                "slot %d %s failed (%d): %s", slot, action, response.status_code, response.text
            )
            return False
        return True
