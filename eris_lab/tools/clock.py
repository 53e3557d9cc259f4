"""``clock:now``: the current time in an IANA time zone (the session's by default)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from ..errors import ToolError

if TYPE_CHECKING:
    from ..execution import Session

__all__ = ["clock_now", "zone_names"]


def _zone(name: Any) -> ZoneInfo:
    if not isinstance(name, str) or not name.strip():
        raise ToolError(f"expected an IANA time zone such as 'Europe/Berlin', got {name!r}")
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ToolError(f"unknown time zone {name!r}; expected an IANA name such as 'Europe/Berlin'") from None


def clock_now(args: Mapping[str, Any], session: Session) -> dict[str, Any]:
    """``clock:now``: the current time in ``timezone`` (default the session's)."""
    zone = _zone(args.get("timezone") or session.timezone)
    now = session.clock().astimezone(zone)
    return {"timezone": zone.key, "iso": now.isoformat(timespec="seconds"), "weekday": now.strftime("%A"),
            "utc_offset": now.strftime("%z")}


@lru_cache(maxsize=1)
def zone_names() -> tuple[dict[str, Any], ...]:
    """The IANA zones ``clock:now`` knows, as ``resolution`` candidates: ``{"value": "Asia/Tokyo",
    "aliases": ["Tokyo"]}`` (the city part of an Area/City name, ``_`` read as a space), so a city
    the model wrote for a zone resolves through ``resolve-arg`` (issue 17). Legacy names without
    an area (``Japan``) and ``Etc/`` offsets are left out: a city is never resolved to them."""
    out = []
    for key in sorted(available_timezones()):
        area, _, city = key.partition("/")
        if not city or area in ("Etc", "SystemV", "US"):
            continue
        out.append({"value": key, "aliases": [city.rsplit("/", 1)[-1].replace("_", " ")]})
    return tuple(out)
