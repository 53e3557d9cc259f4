"""``agenda:*``: reminders and to-dos in a SQLite file in the session folder.

Times are ISO 8601; a naive time means the session's zone, and an unreadable one is an error,
never a guess. Items are named by id (``3``, ``#3``) or by title, resolved like any argument value
(``resolution.resolve``: auto, ask or not found).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..errors import ToolError

if TYPE_CHECKING:
    from ..execution import Session

__all__ = ["agenda_list", "agenda_remind_at", "agenda_remind_self", "agenda_complete", "agenda_remove", "agenda_push"]

_AGENDA_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'todo',
    due TEXT,
    repeat TEXT NOT NULL DEFAULT 'none',
    priority TEXT NOT NULL DEFAULT 'normal',
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'open',
    note TEXT,
    created TEXT NOT NULL,
    done_at TEXT
)
"""


@contextmanager
def _db(session: Session):
    """One connection per call (executors run in worker threads): commit on success, always close."""
    con = sqlite3.connect(session.agenda_path, timeout=5.0)
    try:
        con.row_factory = sqlite3.Row
        con.execute(_AGENDA_SCHEMA)
        yield con
        con.commit()
    finally:
        con.close()


def _row(row: sqlite3.Row) -> dict[str, Any]:
    item = dict(row)
    item["tags"] = json.loads(item.get("tags") or "[]")
    return {k: v for k, v in item.items() if v is not None}


def _when(value: Any, session: Session, what: str) -> datetime:
    """An ISO 8601 time; naive means the session's zone. Unparseable is an error, never a guess."""
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"{what}: expected an ISO 8601 date-time such as '2026-12-01T10:00:00+01:00', got {value!r}")
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ToolError(f"{what}: cannot read {value!r} as an ISO 8601 date-time; nothing was guessed") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=ZoneInfo(session.timezone))
    return when


def _title(args: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise ToolError(f"expected a non-empty {keys[0]!r}")


def _find(con: sqlite3.Connection, ref: str, *, statuses: tuple[str, ...]) -> sqlite3.Row:
    """An item by id (``3``, ``#3``) or by title (resolved like any argument value, issue #5)."""
    from ..resolution import resolve

    marks = ",".join("?" * len(statuses))
    m = re.fullmatch(r"#?(\d+)", ref.strip())
    if m:
        row = con.execute(f"SELECT * FROM items WHERE id = ? AND status IN ({marks})",
                          (int(m.group(1)), *statuses)).fetchone()
        if row is None:
            raise ToolError(f"no {'/'.join(statuses)} agenda item with id {m.group(1)}")
        return row
    rows = con.execute(f"SELECT * FROM items WHERE status IN ({marks}) ORDER BY id", statuses).fetchall()
    res = resolve(ref, [r["title"] for r in rows])
    if res.status == "auto":
        return next(r for r in rows if r["title"] == res.match)
    if res.status == "ask":
        options = "; ".join(f"{v!r}" for v, _ in res.candidates)
        raise ToolError(f"{ref!r} matches more than one item or only loosely; ask the user which: {options}")
    listing = ", ".join(repr(r["title"]) for r in rows[:10]) or "(none)"
    raise ToolError(f"no agenda item matches {ref!r}; items: {listing}")


def agenda_list(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``agenda:list``: items by ``status`` (open, done, all), optional ``due_before``, ``limit``."""
    status = args.get("status") or "open"
    limit = int(args.get("limit") or 20)
    where, params = [], []
    if status != "all":
        where.append("status = ?")
        params.append(status)
    with _db(session) as con:
        sql = "SELECT * FROM items" + (f" WHERE {' AND '.join(where)}" if where else "")
        rows = [_row(r) for r in con.execute(sql + " ORDER BY due IS NULL, due, id", params).fetchall()]
    if args.get("due_before"):
        limit_at = _when(args["due_before"], session, "due_before")
        rows = [r for r in rows if r.get("due") and datetime.fromisoformat(r["due"]) < limit_at]
    return {"items": rows[:limit], "count": len(rows)}


def agenda_remind_at(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``agenda:remind_at``: a reminder ``text`` due ``at`` (ISO 8601), optional ``repeat``."""
    title = _title(args, "text", "item", "title")
    due = _when(args.get("at"), session, "at")
    with _db(session) as con:
        cur = con.execute("INSERT INTO items (title, kind, due, repeat, created) VALUES (?, 'reminder', ?, ?, ?)",
                          (title, due.isoformat(timespec="seconds"), args.get("repeat") or "none",
                           session.now().isoformat(timespec="seconds")))
        row = con.execute("SELECT * FROM items WHERE id = ?", (cur.lastrowid,)).fetchone()
    return {"added": _row(row)}


def agenda_remind_self(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``agenda:remind_self``: a to-do ``text`` without a time, optional ``priority`` and ``tags``."""
    title = _title(args, "text", "item", "title")
    tags = args.get("tags") or []
    with _db(session) as con:
        cur = con.execute("INSERT INTO items (title, kind, priority, tags, created) VALUES (?, 'todo', ?, ?, ?)",
                          (title, args.get("priority") or "normal", json.dumps(list(tags), ensure_ascii=False),
                           session.now().isoformat(timespec="seconds")))
        row = con.execute("SELECT * FROM items WHERE id = ?", (cur.lastrowid,)).fetchone()
    return {"added": _row(row)}


def agenda_complete(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``agenda:complete``: mark the open ``item`` (id or title) done, with an optional ``note``."""
    ref = _title(args, "item", "text", "title")
    with _db(session) as con:
        row = _find(con, ref, statuses=("open",))
        con.execute("UPDATE items SET status = 'done', done_at = ?, note = COALESCE(?, note) WHERE id = ?",
                    (session.now().isoformat(timespec="seconds"), args.get("note"), row["id"]))
        row = con.execute("SELECT * FROM items WHERE id = ?", (row["id"],)).fetchone()
    return {"completed": _row(row)}


def agenda_remove(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``agenda:remove``: delete ``item`` (id or title), open or done."""
    ref = _title(args, "item", "text", "title")
    with _db(session) as con:
        row = _find(con, ref, statuses=("open", "done"))
        con.execute("DELETE FROM items WHERE id = ?", (row["id"],))
    return {"removed": _row(row)}


def agenda_push(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``agenda:push``: postpone ``item`` ``until`` ``{"at": ISO}`` or ``{"delay_minutes": n}``."""
    ref = _title(args, "item", "text", "title")
    until = args.get("until")
    if not isinstance(until, Mapping) or not ({"at", "delay_minutes"} & until.keys()):
        raise ToolError("until: expected {\"at\": ISO 8601} or {\"delay_minutes\": minutes}")
    with _db(session) as con:
        row = _find(con, ref, statuses=("open",))
        if "at" in until:
            due = _when(until["at"], session, "until.at")
        else:
            minutes = until["delay_minutes"]
            if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 1:
                raise ToolError(f"until.delay_minutes: expected a whole number of minutes >= 1, got {minutes!r}")
            base = datetime.fromisoformat(row["due"]) if row["due"] else session.now()
            due = base + timedelta(minutes=minutes)
        con.execute("UPDATE items SET due = ? WHERE id = ?", (due.isoformat(timespec="seconds"), row["id"]))
        row = con.execute("SELECT * FROM items WHERE id = ?", (row["id"],)).fetchone()
    return {"pushed": _row(row)}
