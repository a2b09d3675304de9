"""Where an offer is: each provider location's country (ISO 3166-1 alpha-2) and area (pure).

The facts are in `resources/geography.csv` (`provider,location,country,area,source`: one row per
location string a provider's offers carry, `source` the provider's page saying where that region
is), read once, on first use. Three rules cover what a row per string cannot:

- **Zones are their region plus a suffix.** For the providers in `ZONE_SUFFIXES` a location that
  is not itself in the table, but is a tabled region of that provider plus the provider's zone
  suffix, is where that region is: AWS `us-east-1a` (a letter), GCP `us-central1-a` and Crusoe
  `us-east1-a` (a hyphen and a letter). Only a single-letter suffix counts: AWS Local Zones
  (`us-east-1-lim-1`, Lima) and Wavelength Zones are in other cities and often other countries,
  so each has its own row.
- **Locations that are country codes.** Vast.ai (`"Guangxi, CN"` -> `cn-guangxi`, or a bare
  country code or name), Lium (`<country code>-<region>`: `us-va`), TensorDock (the host's
  country name without spaces: `unitedstates`) and RunPod's Community Cloud (a country code:
  `US`; its Secure Cloud data centers have rows) name the country in the location itself: the
  leading two letters are an ISO code when followed by `-` or the end; otherwise the whole
  string is read as an English country name (`COUNTRY_NAMES`). A table row still wins.
- **A country's area** (for derived countries) is `AREA_OF_COUNTRY`'s; the table's own rows say
  their area.

Areas: `north-america` (Mexico, Central America and the Caribbean included), `south-america`,
`europe` (Turkey, Russia, Cyprus and the Caucasus included), `middle-east` (the Gulf states,
the Levant, Iraq, Iran, Israel, Yemen), `africa` (Egypt included), `asia-pacific` (the rest of
Asia and Oceania). A row may give an area without a country (Daytona's `eu`), and none at all
(Daytona's `earth`: scheduled anywhere); such an offer fails a `country` filter (and an `area`
filter without an area).
"""

from __future__ import annotations

import csv
import io
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass

AREAS = ("north-america", "south-america", "europe", "middle-east", "africa", "asia-pacific")

# A zone of one of these providers' regions: the region plus this suffix.
ZONE_SUFFIXES = {
    "aws": re.compile(r"^(.+-\d+)[a-z]$"),
    "gcp": re.compile(r"^(.+\d+)-[a-z]$"),
    "crusoe": re.compile(r"^(.+\d+)-[a-z]$"),
}
# Providers whose locations name their country (see the module docstring).
COUNTRY_IN_LOCATION = frozenset({"vastai", "lium", "tensordock", "runpod"})

# UN M49 sub-regions, grouped into the six areas as the module docstring says.
_AREA_CODES = {
    "north-america": "AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC "
    "MF MQ MS MX NI PA PM PR SV SX TC TT UM US VC VG VI",
    "south-america": "AR BO BR BV CL CO EC FK GF GS GY PE PY SR UY VE",
    "europe": "AD AL AM AT AX AZ BA BE BG BY CH CY CZ DE DK EE ES FI FO FR GB GE GG GI GR HR HU "
    "IE IM IS IT JE LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ SK SM TR UA VA XK",
    "middle-east": "AE BH IL IQ IR JO KW LB OM PS QA SA SY YE",
    "africa": "AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW IO KE KM LR "
    "LS LY MA MG ML MR MU MW MZ NA NE NG RE RW SC SD SH SL SN SO SS ST SZ TD TF TG TN TZ UG "
    "YT ZA ZM ZW",
    "asia-pacific": "AF AQ AS AU BD BN BT CC CK CN CX FJ FM GU HK HM ID IN JP KG KH KI KP KR KZ "
    "LA LK MH MM MN MO MP MV MY NC NF NP NR NU NZ PF PG PH PK PN PW SB SG TH TJ TK TL TM TO "
    "TV TW UZ VN VU WF WS",
}
AREA_OF_COUNTRY: dict[str, str] = {
    code: area for area, codes in _AREA_CODES.items() for code in codes.split()
}
# English short names (ISO 3166), lower-case without spaces, as TensorDock's and Vast.ai's
# locations carry them; the countries where GPU hosts are listed, and their common variants.
COUNTRY_NAMES: dict[str, str] = {
    "unitedstates": "US",
    "usa": "US",
    "canada": "CA",
    "mexico": "MX",
    "brazil": "BR",
    "argentina": "AR",
    "chile": "CL",
    "colombia": "CO",
    "peru": "PE",
    "uruguay": "UY",
    "unitedkingdom": "GB",
    "uk": "GB",
    "ireland": "IE",
    "france": "FR",
    "germany": "DE",
    "netherlands": "NL",
    "thenetherlands": "NL",
    "belgium": "BE",
    "luxembourg": "LU",
    "switzerland": "CH",
    "austria": "AT",
    "italy": "IT",
    "spain": "ES",
    "portugal": "PT",
    "norway": "NO",
    "sweden": "SE",
    "finland": "FI",
    "denmark": "DK",
    "iceland": "IS",
    "poland": "PL",
    "czechia": "CZ",
    "czechrepublic": "CZ",
    "slovakia": "SK",
    "hungary": "HU",
    "romania": "RO",
    "bulgaria": "BG",
    "greece": "GR",
    "croatia": "HR",
    "slovenia": "SI",
    "serbia": "RS",
    "estonia": "EE",
    "latvia": "LV",
    "lithuania": "LT",
    "ukraine": "UA",
    "moldova": "MD",
    "belarus": "BY",
    "russia": "RU",
    "russianfederation": "RU",
    "turkey": "TR",
    "türkiye": "TR",
    "georgia": "GE",
    "armenia": "AM",
    "cyprus": "CY",
    "malta": "MT",
    "israel": "IL",
    "unitedarabemirates": "AE",
    "saudiarabia": "SA",
    "qatar": "QA",
    "bahrain": "BH",
    "oman": "OM",
    "kuwait": "KW",
    "jordan": "JO",
    "southafrica": "ZA",
    "egypt": "EG",
    "nigeria": "NG",
    "kenya": "KE",
    "morocco": "MA",
    "india": "IN",
    "pakistan": "PK",
    "bangladesh": "BD",
    "china": "CN",
    "hongkong": "HK",
    "taiwan": "TW",
    "japan": "JP",
    "southkorea": "KR",
    "korea": "KR",
    "singapore": "SG",
    "malaysia": "MY",
    "thailand": "TH",
    "vietnam": "VN",
    "indonesia": "ID",
    "philippines": "PH",
    "australia": "AU",
    "newzealand": "NZ",
    "kazakhstan": "KZ",
}


@dataclass(frozen=True)
class Place:
    """Where a location is. `country` is ISO 3166-1 alpha-2 (upper case) or None when the
    location is not in one country; `area` one of `AREAS` or None; `source` where the fact
    comes from (a URL, or the rule that derived it)."""

    country: str | None
    area: str | None
    source: str


_lock = threading.Lock()
_table: dict[tuple[str, str], Place] | None = None


def table() -> dict[tuple[str, str], Place]:
    """(provider, location lower-cased) -> Place, from `resources/geography.csv`, read once."""
    global _table
    found = _table
    if found is None:
        with _lock:
            if _table is None:
                # Imported here: a query that filters on no place never reads the table.
                from importlib import resources

                text = (
                    resources.files("gpuhunt.resources")
                    .joinpath("geography.csv")
                    .read_text(encoding="utf-8")
                )
                _table = parse(text)
            found = _table
    return found


def parse(text: str) -> dict[tuple[str, str], Place]:
    """The table from the CSV's text; a row with an unknown area, a country that is not two
    letters or a duplicate location raises ValueError naming the row (the file ships with
    gpuhunt, so a bad row is a bug to catch in tests, not data to skip)."""
    out: dict[tuple[str, str], Place] = {}
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames != ["provider", "location", "country", "area", "source"]:
        raise ValueError(f"geography.csv: unexpected header {reader.fieldnames}")
    for n, row in enumerate(reader, start=2):
        country = row["country"].strip().upper() or None
        area = row["area"].strip() or None
        if country is not None and not re.fullmatch(r"[A-Z]{2}", country):
            raise ValueError(f"geography.csv line {n}: country {row['country']!r}")
        if area is not None and area not in AREAS:
            raise ValueError(f"geography.csv line {n}: area {area!r} is not one of {AREAS}")
        key = (row["provider"].strip(), row["location"].strip().lower())
        if key in out:
            raise ValueError(f"geography.csv line {n}: {key} is listed twice")
        out[key] = Place(country, area, row["source"].strip())
    return out


def locate(provider: str, location: str) -> Place | None:
    """Where `provider`'s `location` is, or None when neither the table nor a rule knows."""
    rows = table()
    loc = location.strip().lower()
    place = rows.get((provider, loc))
    if place is not None:
        return place
    zone = ZONE_SUFFIXES.get(provider)
    if zone is not None:
        m = zone.match(loc)
        if m is not None and (provider, m.group(1)) in rows:
            return rows[(provider, m.group(1))]
    if provider in COUNTRY_IN_LOCATION:
        return country_in_location(loc)
    return None


def country_in_location(location: str) -> Place | None:
    """A location naming its country: `cn-guangxi`, `us`, `norway` (see the module docstring)."""
    m = re.match(r"^([a-z]{2})(?:-|$)", location)
    code = m.group(1).upper() if m else COUNTRY_NAMES.get(location.replace("-", ""))
    if code is None or code not in AREA_OF_COUNTRY:
        return None
    return Place(code, AREA_OF_COUNTRY[code], "derived: the location names its country")


def check_values(what: str, values: Iterable[str]) -> list[str]:
    """A `country` or `area` filter's values, normalised (upper-case codes, lower-case areas);
    ValueError naming the keyword and the value for anything else."""
    out = []
    for v in values:
        if not isinstance(v, str):
            raise ValueError(f"Invalid {what} {v!r}: expected a string")
        text = v.strip()
        if what == "country":
            if not re.fullmatch(r"[A-Za-z]{2}", text):
                raise ValueError(
                    f"Invalid country {v!r}: expected an ISO 3166 alpha-2 code such as DE or US"
                )
            out.append(text.upper())
        else:
            if text.lower() not in AREAS:
                raise ValueError(f"Invalid area {v!r}: expected one of {', '.join(AREAS)}")
            out.append(text.lower())
    return out


def place_matches(
    place: Place | None, countries: list[str] | None, areas: list[str] | None
) -> bool:
    """Whether an offer at `place` passes the `country` and `area` filters (None: not given).
    An unknown place passes only when neither is given."""
    if countries is None and areas is None:
        return True
    if place is None:
        return False
    if countries is not None and place.country not in countries:
        return False
    return areas is None or place.area in areas
