"""The per-run workspace: the only directory the file tools can touch.

Every operation walks from a descriptor of the workspace's root one name at a time, each
directory opened relative to the one before with O_NOFOLLOW, and then reads, writes or deletes
through the descriptors it opened. A name is looked up once: another process that turns a
file or folder into a link between a check and a use finds nothing left to redirect (the
check-then-open of the path on which links races play). Links are never followed, special
files (pipes, sockets, devices) are refused before anything can block on them, reads stop at
their limit, and walks tolerate entries that vanish or change type under them. autonoma's own
state (its home with the run store and logs, its model cache) is unreachable even when the
workspace contains it.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import posixpath
import secrets
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import platformdirs

from autonoma.errors import AutonomaError
from autonoma.runtime.store import default_home
from autonoma.tools.listing import visible

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # non-blocking: a FIFO cannot hold us
_TEMP_PREFIX = ".autonoma-write-"  # a write's file before it is renamed into place
MAX_WALKED = 20_000  # entries a walk visits before it stops and says the listing is cut
MAX_DEPTH = 64  # folders nested deeper are not walked (each level holds a descriptor open)


class WorkspaceError(AutonomaError):
    """A path was refused: it leads outside the workspace, through a link, to a special file,
    or into autonoma's own state."""


@dataclass(frozen=True)
class FileRead:
    data: bytes  # at most the limit asked for
    size: int  # the file's whole size

    @property
    def cut(self) -> bool:
        return self.size > len(self.data)

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass
class Listing:
    files: list[str]  # regular files, relative, sorted
    cut: bool  # the walk stopped at its limit of entries


def own_state() -> list[Path]:
    """Where autonoma keeps what runs and records it: its home (run store, logs, trials) and
    its model cache. No file tool and no sandbox may reach them."""
    cache = os.environ.get("AUTONOMA_CACHE_DIR") or platformdirs.user_cache_dir("autonoma")
    return [default_home(), Path(cache)]


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


class Workspace:
    """A directory jail walked by descriptors (see the module's docstring)."""

    def __init__(self, root: Path, protected: Iterable[Path] | None = None) -> None:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise WorkspaceError(f"cannot create the workspace {root}: {err.strerror}") from err
        self.root = root.resolve()
        self._protected = [p for p in (own_state() if protected is None else protected)]
        for place in self._protected:
            with contextlib.suppress(OSError):
                if place.resolve() == self.root:
                    raise WorkspaceError(
                        f"the workspace {self.root} is autonoma's own state ({place}); "
                        "give another directory"
                    )

    # naming

    def resolve(self, path: str) -> Path:
        """The real path of `path` inside the workspace, or WorkspaceError saying why not.
        For naming a file to a sandboxed command; the file tools never open by it."""
        self._parts(path)
        resolved = (self.root / path).resolve()
        if not resolved.is_relative_to(self.root):
            raise WorkspaceError(
                f"{path!r} leads outside the workspace (to {resolved}); it is refused"
            )
        return resolved

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def _parts(self, path: str) -> list[str]:
        """The path's names below the root, or WorkspaceError. `..` is resolved by name: with
        links refused on the way, `a/../b` can only be `b`."""
        if not path or not path.strip():
            raise WorkspaceError("the path is empty; give a path relative to the workspace")
        if "\0" in path:
            raise WorkspaceError("the path contains a NUL byte")
        if PurePosixPath(path).is_absolute() or Path(path).is_absolute():
            raise WorkspaceError(
                f"{path!r} is an absolute path; only paths relative to the workspace are allowed"
            )
        normal = posixpath.normpath(path)
        if normal == ".." or normal.startswith("../"):
            raise WorkspaceError(f"{path!r} leads outside the workspace; it is refused")
        return [] if normal == "." else normal.split("/")

    # descriptors

    def _guarded(self) -> set[tuple[int, int]]:
        found = set()
        for place in self._protected:
            with contextlib.suppress(OSError):
                st = os.stat(place)
                found.add((st.st_dev, st.st_ino))
        return found

    @contextlib.contextmanager
    def _folder(self, parts: list[str], create: bool = False) -> Iterator[int]:
        """A descriptor of the folder `parts` names, opened one name at a time from the root
        without following links (folders made on the way when `create`)."""
        guarded = self._guarded()
        fd = os.open(self.root, _DIR)
        try:
            for i, part in enumerate(parts):
                shown = "/".join(parts[: i + 1])
                try:
                    inner = os.open(part, _DIR, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise FileNotFoundError(
                            f"{shown} does not exist in the workspace"
                        ) from None
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, dir_fd=fd)
                    inner = os.open(part, _DIR, dir_fd=fd)
                except OSError as err:
                    raise self._refusal(fd, part, shown, err) from None
                os.close(fd)
                fd = inner
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) in guarded:
                    raise WorkspaceError(
                        f"{shown} holds autonoma's own state (its run store, logs or models); "
                        "file tools cannot reach it"
                    )
            yield fd
        finally:
            os.close(fd)

    def _refusal(self, folder: int, name: str, shown: str, err: OSError) -> Exception:
        """Why opening `name` failed, in words: a link, a special file, not a folder."""
        try:
            mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
        except OSError:
            return err
        if stat.S_ISLNK(mode):
            return WorkspaceError(
                f"{shown} is a symbolic link; file tools do not follow links (one could lead "
                "outside the workspace)"
            )
        if stat.S_ISDIR(mode):
            return IsADirectoryError(f"{shown} is a directory; list_files shows its files")
        if stat.S_ISREG(mode):
            if err.errno == errno.ENOTDIR:
                return NotADirectoryError(f"{shown} is a file, not a directory")
            return err
        return WorkspaceError(f"{shown} is {_kind(mode)}; file tools only use regular files")

    @contextlib.contextmanager
    def _file(self, path: str, flags: int, create: bool = False) -> Iterator[int]:
        """A descriptor of the regular file `path`, or an error saying why not. The kind is
        looked at before opening (so a device or pipe is never opened) and checked again on
        the descriptor (what was opened is what is used)."""
        parts = self._parts(path)
        if not parts:
            raise IsADirectoryError(f"{path} is the workspace itself, not a file")
        with self._folder(parts[:-1], create=create) as folder:
            name = parts[-1]
            try:
                mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
            except FileNotFoundError:
                if not create:
                    raise self.not_a_file(path) from None
                mode = stat.S_IFREG
            if not stat.S_ISREG(mode):
                raise self._refusal(folder, name, path, OSError(errno.EINVAL, "not a file"))
            try:
                fd = os.open(name, flags | _FILE, 0o644, dir_fd=folder)
            except FileNotFoundError:
                raise self.not_a_file(path) from None
            except OSError as err:
                raise self._refusal(folder, name, path, err) from None
            try:
                mode = os.fstat(fd).st_mode
                if not stat.S_ISREG(mode):
                    raise WorkspaceError(
                        f"{path} is {_kind(mode)}; file tools only use regular files"
                    )
                yield fd
            finally:
                os.close(fd)

    # operations

    def read(self, path: str, limit: int) -> FileRead:
        """At most `limit` bytes of the file, and its whole size: never more is read."""
        with self._file(path, os.O_RDONLY) as fd:
            size = os.fstat(fd).st_size
            return FileRead(_read_up_to(fd, limit), size)

    def chunks(self, path: str, size: int = 1 << 20) -> Iterator[bytes]:
        """The whole file, `size` bytes at a time (for hashing a file too big to hold)."""
        with self._file(path, os.O_RDONLY) as fd:
            while chunk := os.read(fd, size):
                yield chunk

    def write(self, path: str, data: bytes) -> None:
        """Replace the file's content at once: written to a new file in the same folder, then
        renamed over the name (a link put there meanwhile is replaced, never followed)."""
        parts = self._parts(path)
        if not parts:
            raise IsADirectoryError(f"{path} is the workspace itself, not a file")
        with self._folder(parts[:-1], create=True) as folder:
            name = parts[-1]
            mode = 0o644
            with contextlib.suppress(FileNotFoundError):
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    raise IsADirectoryError(f"{path} is a directory; it cannot be written")
                if not stat.S_ISREG(st.st_mode):
                    raise self._refusal(folder, name, path, OSError(errno.EINVAL, "not a file"))
                mode = stat.S_IMODE(st.st_mode)
            temp = f"{_TEMP_PREFIX}{secrets.token_hex(6)}"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE, 0o600, dir_fd=folder)
            try:
                try:
                    _write_all(fd, data)
                    os.fchmod(fd, mode)
                finally:
                    os.close(fd)
                os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=folder)
                raise

    def append(self, path: str, data: bytes, limit: int, *, on_new_line: bool = False) -> FileRead:
        """Add to the end of the file (made if missing); then at most `limit` bytes of it.
        `on_new_line`: `data` is whole lines: it starts on a line of its own (one newline it
        begins with is taken as saying so: a model's "\\nline" made blank lines) and ends
        with a newline."""
        if on_new_line and data and not data.endswith(b"\n"):
            data += b"\n"
        with self._file(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, create=True) as fd:
            if on_new_line:
                size = os.fstat(fd).st_size
                at_start = not size or os.pread(fd, 1, size - 1) == b"\n"
                if at_start and data.startswith(b"\n"):
                    data = data[1:]
                elif not at_start and not data.startswith(b"\n"):
                    data = b"\n" + data
            _write_all(fd, data)
            size = os.fstat(fd).st_size
            os.lseek(fd, 0, os.SEEK_SET)
            return FileRead(_read_up_to(fd, limit), size)

    def delete(self, path: str) -> None:
        """Remove the regular file `path` (a link or special file is refused, not removed)."""
        parts = self._parts(path)
        if not parts:
            raise IsADirectoryError("the workspace itself cannot be deleted")
        with self._folder(parts[:-1]) as folder:
            name = parts[-1]
            try:
                mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
            except FileNotFoundError:
                raise self.not_a_file(path) from None
            if not stat.S_ISREG(mode):
                raise self._refusal(folder, name, path, OSError(errno.EISDIR, "not a file"))
            os.unlink(name, dir_fd=folder)

    def is_dir(self, path: str) -> bool:
        try:
            with self._folder(self._parts(path)):
                return True
        except (OSError, WorkspaceError):
            return False

    def stat(self, path: str) -> os.stat_result | None:
        """The stat of the regular file `path` (links not followed); None if it is not one."""
        try:
            parts = self._parts(path)
            if not parts:
                return None
            with self._folder(parts[:-1]) as folder:
                found = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        except (OSError, WorkspaceError):
            return None
        return found if stat.S_ISREG(found.st_mode) else None

    def is_file(self, path: str) -> bool:
        return self.stat(path) is not None

    # walking

    def walk(self, directory: str = ".", most: int = MAX_WALKED) -> Iterator[WalkEntry]:
        """Regular files under `directory` with their stat, depth first in name order. Links
        are not followed, autonoma's state and writes in progress are skipped, entries that
        vanish or change type mid-walk are passed over, folders deeper than MAX_DEPTH are not
        entered; after `most` entries the walk ends with an entry whose `cut` is set."""
        parts = self._parts(directory)
        guarded = self._guarded()
        seen = 0
        with self._folder(parts) as top:
            stack = [(os.dup(top), "/".join(parts), iter(_names(top)))]
            try:
                while stack:
                    fd, prefix, names = stack[-1]
                    name = next(names, None)
                    if name is None:
                        os.close(fd)
                        stack.pop()
                        continue
                    seen += 1
                    if seen > most:
                        yield WalkEntry("", None, cut=True)
                        return
                    if name.startswith(_TEMP_PREFIX):
                        continue
                    shown = f"{prefix}/{name}" if prefix else name
                    try:
                        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    except OSError:
                        continue  # gone since it was listed
                    if stat.S_ISREG(st.st_mode):
                        yield WalkEntry(shown, st)
                    elif stat.S_ISDIR(st.st_mode) and len(stack) < MAX_DEPTH:
                        try:
                            inner = os.open(name, _DIR, dir_fd=fd)
                        except OSError:
                            continue  # gone, or no longer a folder
                        st = os.fstat(inner)
                        if (st.st_dev, st.st_ino) in guarded:
                            os.close(inner)
                            continue
                        stack.append((inner, shown, iter(_names(inner))))
            finally:
                for fd, _, _ in stack:
                    os.close(fd)

    def listing(self, directory: str = ".", most: int = MAX_WALKED) -> Listing:
        files, cut = [], False
        for entry in self.walk(directory, most):
            if entry.cut:
                cut = True
            else:
                files.append(entry.path)
        return Listing(sorted(files), cut)

    def files(self) -> list[str]:
        """Every regular file in the workspace, relative, sorted (links are not followed; a
        workspace too big to walk gives its first MAX_WALKED entries)."""
        try:
            return self.listing().files
        except (OSError, WorkspaceError):
            return []

    def visible_files(self) -> list[str]:
        """The files a listing shows a person or the model: `files()` without the insides of
        .git, .venv, node_modules and the like, nor what .gitignore ignores (listing.py)."""
        return visible(self, self.files())

    def not_a_file(self, path: str) -> Exception:
        """The error for a path that is not a file here, naming the files it may have meant.
        Small models ask for "notes" when the file is notes.md and, told only that it is
        missing, ask again and again."""
        if self.is_dir(path):
            return IsADirectoryError(f"{path} is a directory; list_files shows its files")
        files = self.files()
        wanted = PurePosixPath(path.strip())
        close = difflib.get_close_matches(wanted.as_posix(), files, n=3, cutoff=0.75)
        stem = wanted.with_suffix("") if wanted.name not in ("", ".", "..") else wanted
        same = [
            f
            for f in files
            if PurePosixPath(f).with_suffix("") == stem or PurePosixPath(f).name == wanted.name
        ]
        meant = list(dict.fromkeys([*close, *same]))[:3]
        if meant:
            names = " or ".join(meant)
            return FileNotFoundError(
                f"{path} is not a file in the workspace; did you mean {names}?"
            )
        return FileNotFoundError(
            f"{path} is not a file in the workspace (list_files shows what is)"
        )


@dataclass(frozen=True)
class WalkEntry:
    path: str
    stat: os.stat_result | None
    cut: bool = False


def _names(fd: int) -> list[str]:
    try:
        return sorted(os.listdir(fd))
    except OSError:
        return []  # removed while we walked


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
