"""Reading a file a person hands autonoma (settings, domains, later worlds and personas):
a regular file of bounded size, or one clear error. A named pipe would hang the read and
/dev/zero would fill memory; neither is opened for reading past a look at what it is."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from autonoma.errors import ConfigError

MAX_INPUT_BYTES = 4_000_000


class InputFileError(ConfigError):
    """A file handed to autonoma cannot be read as one."""


def read_input(path: Path, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of `path`, or InputFileError naming `what` it was meant to be and why."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise InputFileError(f"cannot read {what} {path}: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputFileError(f"{what} {path} is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError(f"{what} {path} is not a regular file (a pipe or a device)")
        if st.st_size > limit:
            raise InputFileError(f"{what} {path} is {st.st_size} bytes; at most {limit} are read")
        data = os.read(fd, limit + 1)
    except OSError as err:
        raise InputFileError(f"cannot read {what} {path}: {err.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InputFileError(f"{what} {path} is over {limit} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputFileError(
            f"{what} {path} is not UTF-8 text ({err.reason} at byte {err.start})"
        ) from None
