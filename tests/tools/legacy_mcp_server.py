"""An MCP server of the 2025-11-25 protocol, as servers built on older SDKs speak it: the
initialize handshake only (a newer client's `server/discover` is an unknown method), and
one tool, `later`, that runs only as a task (`execution.taskSupport: "required"`), beside
`add`. Written as raw JSON-RPC lines on stdio, so the test sees what is on the wire."""

from __future__ import annotations

import json
import sys
from typing import Any

VERSION = "2025-11-25"
TOOLS: list[dict[str, Any]] = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "later",
        "description": "Runs only as a task.",
        "inputSchema": {"type": "object", "properties": {}},
        "execution": {"taskSupport": "required"},
    },
]


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:
        return None  # a notification
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "add":
        total = params["arguments"]["a"] + params["arguments"]["b"]
        result = {"content": [{"type": "text", "text": str(total)}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        reply = answer(json.loads(line))
        if reply is not None:
            print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
