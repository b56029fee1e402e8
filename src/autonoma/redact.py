"""Credentials out of what autonoma shows and stores: the user info of every URL in a text
(`http://user:KEY@host` -> `http://user:***@host`) and the values of key-like query
parameters (`?api_key=KEY` -> `?api_key=***`). The real value lives only in memory, in the
model client that uses it.

A leaf: it imports nothing of ours, so every layer may use it."""

from __future__ import annotations

import re

HIDDEN = "***"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_KEYISH = re.compile(
    r"(?i)^(?:api[-_]?key|apikey|key|token|access[-_]?token|auth|authorization|secret|"
    r"client[-_]?secret|password|passwd|pwd|sig|signature|x-api-key|code)$"
)


def redact(text: str) -> str:
    """`text` with the credentials in its URLs replaced by ***."""
    if "://" not in text:
        return text
    return _URL.sub(lambda found: _url(found.group(0)), text)


def has_secret(text: str) -> bool:
    return redact(text) != text


def _url(url: str) -> str:
    scheme, _, rest = url.partition("://")
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    netloc, tail = rest[:cut], rest[cut:]
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:{HIDDEN}@{host}" if colon else f"{HIDDEN}@{host}"
    path, mark, query = tail.partition("?")
    if mark:
        query, hash_mark, fragment = query.partition("#")
        pairs = []
        for pair in query.split("&"):
            name, equals, value = pair.partition("=")
            hidden = equals and value and _KEYISH.match(name)
            pairs.append(f"{name}={HIDDEN}" if hidden else pair)
        tail = path + "?" + "&".join(pairs) + hash_mark + fragment
    return f"{scheme}://{netloc}{tail}"
