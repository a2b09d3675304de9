"""The terms file (pure: terms in, bytes out and back): a provider's commitment terms, a CSV
of its own beside `{provider}.csv`, named `{provider}.terms` (`terms_file_name`).

Why a name of its own and not a column of the catalog CSV: a term's price is not an hourly
on-demand price, and gpuhunt 0.1.x (and dstack through it) reads `{provider}.csv` by name and
never opens another member of the zip or file of the folder, so a term can never be taken for an
offer. The name has one dot and no `.csv` suffix so that this version's archive reader, which
reads `{provider}.csv` and `{provider}.columns` and leaves other plain names alone, does not
take it for a provider's catalog.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from datetime import datetime

from gpuhunt._internal.costs.terms import Term

SUFFIX = ".terms"
COLUMNS = (
    "provider",
    "instance_name",
    "location",
    "term",
    "payment",
    "offering_class",
    "hourly",
    "upfront",
    "source",
    "observed_at",
)


def terms_file_name(provider: str) -> str:
    return f"{provider}{SUFFIX}"


def terms_path_beside(catalog_csv: str) -> str:
    """`aws.csv` -> `aws.terms`: where the collector writes the terms beside its CSV."""
    base = catalog_csv[: -len(".csv")] if catalog_csv.endswith(".csv") else catalog_csv
    return base + SUFFIX


def write_terms(terms: Iterable[Term]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for t in terms:
        writer.writerow(
            [
                t.provider,
                t.instance_name,
                t.location,
                t.term,
                t.payment,
                t.offering_class,
                repr(t.hourly),
                repr(t.upfront),
                t.source,
                t.observed_at.isoformat() if t.observed_at else "",
            ]
        )
    return out.getvalue().encode()


def read_terms(data: bytes, *, source: str = "terms") -> list[Term]:
    """The terms of a terms file; a row that is not a term is a `ValueError` naming the file,
    the line and what was wrong (a terms file is ours: a bad one is a bug, not noise)."""
    reader = csv.reader(io.StringIO(data.decode()))
    header = next(reader, None)
    if header is None or tuple(header[: len(COLUMNS)]) != COLUMNS:
        raise ValueError(f"{source}: not a terms file (header {header!r})")
    out = []
    for line, row in enumerate(reader, start=2):
        if len(row) < len(COLUMNS):
            raise ValueError(f"{source}, line {line}: {len(row)} fields, {len(COLUMNS)} expected")
        fields = dict(zip(COLUMNS, row, strict=False))
        try:
            out.append(
                Term(
                    provider=fields["provider"],
                    instance_name=fields["instance_name"],
                    location=fields["location"],
                    term=fields["term"],
                    payment=fields["payment"],
                    offering_class=fields["offering_class"],
                    hourly=float(fields["hourly"]),
                    upfront=float(fields["upfront"]),
                    source=fields["source"],
                    observed_at=(
                        datetime.fromisoformat(fields["observed_at"])
                        if fields["observed_at"]
                        else None
                    ),
                )
            )
        except ValueError as e:
            raise ValueError(f"{source}, line {line}: {e}") from None
    return out
