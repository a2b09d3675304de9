"""The catalog file formats (pure: bytes and text in, tables and items out).

CSV, one file per provider, the same columns in the same order as gpuhunt 0.1.x publishes, so
catalogs are interchangeable both ways. The provider is the file's name. Older files without
`gpu_vendor`/`cpu_arch`/`flags`/`provider_data` read as they always did (NVIDIA when there are
GPUs, `tpu-` prefix meaning Google, x86). A malformed row is skipped, counted and logged; it never
costs the rest of the file.

Archives: a zip of `{provider}.csv` files plus `manifest.json`. Reading one refuses members with
unexpected names, paths, or sizes beyond a cap (no zip bombs), and checks every CSV against the
sha256 the manifest gives for it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import math
import re
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from gpuhunt._internal.errors import CatalogIntegrityError
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture

logger = logging.getLogger(__name__)

FIELDS = [
    "instance_name",
    "location",
    "price",
    "cpu",
    "memory",
    "gpu_count",
    "gpu_name",
    "gpu_memory",
    "spot",
    "disk_size",
    "gpu_vendor",
    "flags",
    "cpu_arch",
    "provider_data",
]
REQUIRED = ("instance_name", "location", "price", "cpu", "memory", "gpu_count", "spot")
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
MAX_MEMBER_BYTES = 512 * 1024 * 1024  # a real provider CSV is a few MB; AWS per-zone ~10 MB
MAX_TOTAL_BYTES = 2 * 1024 * 1024 * 1024
MAX_COMPRESSION_RATIO = 200  # CSVs compress ~10x; bombs compress 1000x
MAX_FIELD_CHARS = 64 * 1024
# A plain name, no folders: `{provider}.csv`, `{provider}.columns` (see `columns.py`), and room
# for kinds of member later versions may add, which this version does not read.
_MEMBER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}\.[a-z]{1,16}$")
_READ_SUFFIXES = (".csv", COLUMNS_SUFFIX := ".columns")


# --------------------------------------------------------------------------- writing


def _opt(value: Any) -> str:
    return "" if value is None else str(value)


def item_to_row(item: CatalogItem) -> list[str]:
    return [
        item.instance_name,
        item.location,
        str(item.price),
        str(item.cpu),
        str(item.memory),
        str(item.gpu_count),
        _opt(item.gpu_name),
        _opt(item.gpu_memory),
        str(item.spot),
        _opt(item.disk_size),
        item.gpu_vendor.value if item.gpu_vendor else "",
        " ".join(item.flags),
        CPUArchitecture.cast(item.cpu_arch).value,
        json.dumps(item.provider_data, sort_keys=True),
    ]


def write_csv(items: Iterable[CatalogItem], f: IO[str]) -> int:
    writer = csv.writer(f, lineterminator="\r\n")
    writer.writerow(FIELDS)
    n = 0
    for item in items:
        writer.writerow(item_to_row(item))
        n += 1
    return n


def dump(items: Iterable[CatalogItem], path: str) -> int:
    """Write a provider's catalog CSV; returns the number of rows."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        return write_csv(items, f)


def dumps(items: Iterable[CatalogItem]) -> bytes:
    buf = io.StringIO(newline="")
    write_csv(items, buf)
    return buf.getvalue().encode("utf-8")


# --------------------------------------------------------------------------- reading


@dataclass
class ParsedRow:
    """One validated row, as plain values ready for a table or a CatalogItem."""

    instance_name: str
    location: str
    price: float
    cpu: int
    memory: float
    gpu_count: int
    gpu_name: str | None
    gpu_memory: float | None
    spot: bool
    disk_size: float | None
    gpu_vendor: AcceleratorVendor | None
    flags: str
    cpu_arch: CPUArchitecture
    provider_data: str  # JSON text, validated


@dataclass
class ReadStats:
    rows: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)  # the first few, for messages

    def skip(self, line: int, reason: str) -> None:
        self.skipped += 1
        if len(self.errors) < 5:
            self.errors.append(f"line {line}: {reason}")


class _Bad(ValueError):
    pass


def _finite(value: str, name: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise _Bad(f"{name} is not a number: {value[:40]!r}") from None
    if not math.isfinite(x):
        raise _Bad(f"{name} is not finite: {value[:40]!r}")
    return x


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise _Bad(f"{name} is not an integer: {value[:40]!r}") from None


_json_ok: dict[str, bool] = {}


def _check_json(text: str) -> str:
    if not text:
        return "{}"
    ok = _json_ok.get(text)
    if ok is None:
        try:
            ok = isinstance(json.loads(text), dict)
        except ValueError:
            ok = False
        if len(_json_ok) < 100_000:
            _json_ok[text] = ok
    if not ok:
        raise _Bad("provider_data is not a JSON object")
    return text


def parse_row(get: Any) -> ParsedRow:
    """Validate one row; `get(name)` returns the field's text, or None when the column is absent."""
    for name in REQUIRED:
        value = get(name)
        if value is None:
            raise _Bad(f"required field {name!r} is missing")
        if value == "":
            raise _Bad(f"required field {name!r} is empty")
    gpu_count = _int(get("gpu_count"), "gpu_count")
    if gpu_count < 0:
        raise _Bad("gpu_count is negative")
    gpu_name = get("gpu_name") or None
    raw_vendor = get("gpu_vendor") or None
    vendor = AcceleratorVendor.cast(raw_vendor) if raw_vendor else None
    if gpu_name and gpu_name.startswith("tpu-"):
        # Catalogs from before the gpu_vendor column marked TPUs with this prefix.
        gpu_name = gpu_name[4:]
        vendor = vendor or AcceleratorVendor.GOOGLE
    elif vendor is None and gpu_count:
        vendor = AcceleratorVendor.NVIDIA
    spot_text = get("spot").lower()
    if spot_text not in ("true", "false"):
        raise _Bad(f"spot is not a boolean: {spot_text[:10]!r}")
    raw_arch = get("cpu_arch") or None
    gpu_memory = get("gpu_memory")
    disk = get("disk_size")
    return ParsedRow(
        instance_name=get("instance_name"),
        location=get("location"),
        price=_finite(get("price"), "price"),
        cpu=_int(get("cpu"), "cpu"),
        memory=_finite(get("memory"), "memory"),
        gpu_count=gpu_count,
        gpu_name=gpu_name,
        gpu_memory=_finite(gpu_memory, "gpu_memory") if gpu_memory else None,
        spot=spot_text == "true",
        disk_size=_finite(disk, "disk_size") if disk else None,
        gpu_vendor=vendor,
        flags=" ".join((get("flags") or "").split()),
        cpu_arch=CPUArchitecture.cast(raw_arch) if raw_arch else CPUArchitecture.X86,
        provider_data=_check_json(get("provider_data") or ""),
    )


def iter_rows(
    f: IO[str], *, provider: str, stats: ReadStats | None = None, quiet: bool = False
) -> Iterator[ParsedRow]:
    """Validated rows of a provider CSV; bad rows are skipped and counted in `stats`."""
    stats = stats if stats is not None else ReadStats()
    reader = csv.reader(f)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as e:
        stats.skip(1, f"unreadable header: {e}")
        return
    pos = {name.strip(): i for i, name in enumerate(header)}
    missing = [name for name in REQUIRED if name not in pos]
    if missing:
        logger.warning("%s catalog has no column(s) %s; every row is unusable", provider, missing)
    width = len(header)
    line = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:  # e.g. a field over the size limit; the reader goes on after it
            line += 1
            stats.skip(line, str(e))
            continue
        line += 1
        if not row:
            continue
        if len(row) < width:
            row = row + [""] * (width - len(row))

        def get(name: str, _row: list[str] = row) -> str | None:
            i = pos.get(name)
            return None if i is None else _row[i]

        try:
            if any(len(v) > MAX_FIELD_CHARS for v in row):
                raise _Bad("field too large")
            parsed = parse_row(get)
        except ValueError as e:
            stats.skip(line, str(e))
            continue
        stats.rows += 1
        yield parsed
    if stats.skipped and not quiet:
        logger.warning(
            "Skipped %d malformed row(s) in the %s catalog (%s)",
            stats.skipped,
            provider,
            "; ".join(stats.errors),
        )


def to_item(row: ParsedRow, provider: str) -> CatalogItem:
    return CatalogItem(
        provider=provider,
        instance_name=row.instance_name,
        location=row.location,
        price=row.price,
        cpu=row.cpu,
        memory=row.memory,
        gpu_count=row.gpu_count,
        gpu_name=row.gpu_name,
        gpu_memory=row.gpu_memory,
        spot=row.spot,
        disk_size=row.disk_size,
        gpu_vendor=row.gpu_vendor,
        flags=row.flags.split(),
        cpu_arch=row.cpu_arch,
        provider_data=json.loads(row.provider_data),
    )


def load(f: IO[str], *, provider: str, stats: ReadStats | None = None) -> Iterator[CatalogItem]:
    """Offers of a provider CSV, in file order; malformed rows skipped (see `iter_rows`)."""
    for row in iter_rows(f, provider=provider, stats=stats):
        yield to_item(row, provider)


def load_path(path: str, *, provider: str) -> list[CatalogItem]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(load(f, provider=provider))


# --------------------------------------------------------------------------- archives


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_archive(
    csvs: dict[str, bytes], manifest: dict[str, Any], columns: dict[str, bytes] | None = None
) -> bytes:
    """A catalog zip: `{provider}.csv` for each entry, its `{provider}.columns` if given, and
    `manifest.json`. Fixed timestamps: the same input gives the same bytes."""
    members = {f"{p}.csv": data for p, data in csvs.items()}
    members.update({f"{p}{COLUMNS_SUFFIX}": data for p, data in (columns or {}).items()})
    members[MANIFEST_NAME] = json.dumps(manifest, indent=2, sort_keys=True).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in sorted(members, key=lambda n: (n == MANIFEST_NAME, n)):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, members[name])
    return buf.getvalue()


@dataclass
class Archive:
    csvs: dict[str, bytes]  # provider -> CSV bytes
    manifest: dict[str, Any] | None
    columns: dict[str, bytes] = field(default_factory=dict)  # provider -> column file
    sha256: dict[str, str] = field(default_factory=dict)  # provider -> its CSV's, if computed


def read_archive(data: bytes, *, source: str = "catalog.zip") -> Archive:
    """Open a catalog zip safely and verify it against its manifest, if it has one.

    Raises `CatalogIntegrityError` naming `source` and the member at fault.
    """
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as e:
        raise CatalogIntegrityError(f"{source}: not a readable zip archive ({e})") from None
    with z:
        infos = z.infolist()
        total = 0
        for info in infos:
            name = info.filename
            if name != MANIFEST_NAME and not _MEMBER_NAME.match(name):
                raise CatalogIntegrityError(f"{source}: unexpected member {name[:80]!r}")
            if info.file_size > MAX_MEMBER_BYTES:
                raise CatalogIntegrityError(f"{source}: member {name} is too large")
            if info.compress_size and info.file_size / info.compress_size > MAX_COMPRESSION_RATIO:
                raise CatalogIntegrityError(f"{source}: member {name} is suspiciously compressed")
            total += info.file_size
        if total > MAX_TOTAL_BYTES:
            raise CatalogIntegrityError(f"{source}: archive expands beyond the size cap")
        members: dict[str, bytes] = {}
        for info in infos:
            if info.filename != MANIFEST_NAME and not info.filename.endswith(_READ_SUFFIXES):
                continue
            try:
                with z.open(info) as member:
                    # Read one byte past the declared size: a lying header cannot expand further.
                    content = member.read(info.file_size + 1)
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as e:
                raise CatalogIntegrityError(
                    f"{source}: member {info.filename} is corrupt ({e})"
                ) from None
            if len(content) != info.file_size:
                raise CatalogIntegrityError(f"{source}: member {info.filename} has the wrong size")
            members[info.filename] = content
    manifest = None
    if MANIFEST_NAME in members:
        try:
            manifest = json.loads(members.pop(MANIFEST_NAME))
            if not isinstance(manifest, dict):
                raise ValueError("not an object")
        except ValueError as e:
            raise CatalogIntegrityError(f"{source}: manifest.json is not valid ({e})") from None
    csvs = {n[: -len(".csv")]: data for n, data in members.items() if n.endswith(".csv")}
    columns = {
        n[: -len(COLUMNS_SUFFIX)]: data
        for n, data in members.items()
        if n.endswith(COLUMNS_SUFFIX) and n[: -len(COLUMNS_SUFFIX)] in csvs
    }
    hashes: dict[str, str] = {}
    if manifest is not None:
        entries = manifest.get("providers") or {}
        for provider, content in csvs.items():
            entry = entries.get(provider) or {}
            expected = entry.get("sha256")
            if expected:
                hashes[provider] = sha256(content)
                if hashes[provider] != expected:
                    raise CatalogIntegrityError(
                        f"{source}: {provider}.csv does not match the sha256 in its manifest"
                    )
            wanted = entry.get("columns_sha256")
            if provider in columns and (not wanted or sha256(columns[provider]) != wanted):
                # Only a faster way to the same offers: without it the CSV is parsed instead.
                logger.warning(
                    "%s: %s%s does not match its manifest; parsing the CSV instead",
                    source,
                    provider,
                    COLUMNS_SUFFIX,
                )
                del columns[provider]
        for provider in entries:
            if provider not in csvs:
                raise CatalogIntegrityError(
                    f"{source}: {provider}.csv listed in the manifest is missing"
                )
    return Archive(csvs=csvs, manifest=manifest, columns=columns, sha256=hashes)
