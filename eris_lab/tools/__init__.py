"""The demo catalogue's real executors, safe by construction; every other tool is routing-only.

``clock:now`` (IANA time zones), ``agenda:*`` (SQLite in the session folder), ``vault:*`` (a
sandboxed folder: ``..``, absolute paths and symlinks refused), ``calc:evaluate`` (arithmetic on
the ``ast``, never ``eval``) and ``calc:convert`` (a unit table). An executor is
``fn(arguments, session) -> JSON-able result`` and raises :class:`~eris_lab.errors.ToolError` for
an expected failure, whose text goes back to the model (``execution.execute`` labels both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .agenda import (
    agenda_complete,
    agenda_list,
    agenda_push,
    agenda_remind_at,
    agenda_remind_self,
    agenda_remove,
)
from .calc import UNITS, calc_convert, calc_evaluate, unit_names
from .clock import clock_now, zone_names
from .vault import vault_list, vault_read, vault_write

if TYPE_CHECKING:
    from ..execution import Session

__all__ = ["EXECUTORS", "KNOWN_VALUES", "UNITS"]

#: Real and safe executors of the demo catalogue; every other tool is routing-only.
EXECUTORS: dict[str, Callable[[Mapping[str, Any], Session], Any]] = {
    "clock:now": clock_now,
    "agenda:list": agenda_list,
    "agenda:remove": agenda_remove,
    "agenda:complete": agenda_complete,
    "agenda:remind_at": agenda_remind_at,
    "agenda:push": agenda_push,
    "agenda:remind_self": agenda_remind_self,
    "vault:read": vault_read,
    "vault:write": vault_write,
    "vault:list": vault_list,
    "calc:evaluate": calc_evaluate,
    "calc:convert": calc_convert,
}

#: The values an executor knows for an argument, as ``resolution`` candidates (a callable, so a
#: table is built only when a call was rejected). A rejected value is resolved against them and
#: the call retried once (``execution.resolve_rejected``; issue 17: "Tokyo" -> Asia/Tokyo).
KNOWN_VALUES: dict[str, dict[str, Callable[[], Any]]] = {
    "clock:now": {"timezone": zone_names},
    "calc:convert": {"from": unit_names, "to": unit_names, "from_unit": unit_names, "to_unit": unit_names},
}
