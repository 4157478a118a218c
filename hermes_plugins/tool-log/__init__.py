"""tool-log: a Hermes-style plugin (``register(ctx)``) that records tool calls.

Each ``post_tool_call`` appends one JSON line to ``$HERMES_HOME/logs/tool-calls.jsonl``; the
slash command ``/tool-log [N]`` shows the last N calls (10 by default).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_MAX_RESULT_CHARS = 500


def register(ctx: Any) -> None:
    """Register the observer and the slash command."""
    log_path = Path(ctx.hermes_home) / "logs" / "tool-calls.jsonl"

    def on_post_tool_call(
        tool_name: str,
        args: Any,
        result: Any,
        duration_ms: Any,
        status: Any,
        session_id: Any,
        tool_call_id: Any,
    ) -> None:
        record = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "session_id": session_id,
            "tool_call_id": tool_call_id,
            "tool": tool_name,
            "args": args,
            "status": status,
            "duration_ms": duration_ms,
            "result": str(result)[:_MAX_RESULT_CHARS] if result is not None else None,
        }
        line = json.dumps(record, default=repr, ensure_ascii=False)
        with _lock:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            with log_path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    def show_log(args: str = "") -> str:
        count = int(args) if args.strip().isdigit() else 10
        if not log_path.exists():
            return "No tool calls logged yet."
        with log_path.open(encoding="utf-8") as fh:
            last = deque(fh, maxlen=count)
        rows = [json.loads(line) for line in last]
        return "\n".join(
            f"{r['time']}  {r['tool']:<16} {r['status'] or '-':<8} {r['duration_ms'] or 0:>6} ms"
            for r in rows
        )

    ctx.register_hook("post_tool_call", on_post_tool_call)
    ctx.register_command(
        "tool-log", show_log, description="Show the last tool calls", args_hint="[N]"
    )
