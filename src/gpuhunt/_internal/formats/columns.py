"""Column files: a provider's parsed `Table` as it sits in memory, published beside its CSV so a
client loads it with a few `np.frombuffer` calls instead of parsing the CSV (pure: no I/O).

Layout of `{provider}.columns` (all numbers little-endian):

    b"GPUHUNT-COLUMNS\\n"      16-byte magic
    uint32                      length H of the header
    H bytes                     JSON header: format, provider, rows, skipped, csv_sha256, the
                                vendor and CPU architecture names the codes refer to, the string
                                lists, and each column's dtype and offset into the data
    data                        each column's raw array, 8-byte aligned

The CSV stays the source of truth: a column file names the sha256 of the CSV it was built from,
and a client uses it only when that matches the CSV it has; anything unexpected in it raises
`ValueError`, and the client parses the CSV instead. No pickles: only plain dtypes are read.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

from gpuhunt._internal import offer_spec
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture
from gpuhunt._internal.query.masks import ARCHS, VENDORS
from gpuhunt._internal.query.table import STORED_COLUMNS, STRING_LISTS, Table
from gpuhunt._internal.schema import check_json

MAGIC = b"GPUHUNT-COLUMNS\n"
# 2: `provider_datas` holds offer texts (`offer_spec`). A format-1 file (catalogs published
# before) holds provider_data texts that may carry the library's keys: they are moved out as
# its CSV's reader moves them (`offer_spec.migrate`, once per distinct text).
FORMAT = 2
_READ_FORMATS = (1, 2)
MAX_HEADER_BYTES = 64 * 1024 * 1024
_LISTS = [name for column, name in STRING_LISTS.items() if column != "provider"]
# Codes that may be -1 ("none"); every other code column must point into its list.
_MAY_BE_NONE = {"gpu_name", "gpu_vendor"}


def encode(table: Table, csv_sha256: str) -> bytes:
    """The column file of a one-provider `table` built from the CSV with `csv_sha256`."""
    return pack(*_encoding(table, csv_sha256), counts=False)


def encode_pieces(table: Table, csv_sha256: str) -> list[Any]:
    """`encode`'s bytes as pieces to write one after another (`pack_pieces`): the arrays are
    the table's own columns, not a copy of them."""
    return pack_pieces(*_encoding(table, csv_sha256), counts=False)


def _encoding(table: Table, csv_sha256: str) -> tuple[bytes, dict[str, Any], str, Any]:
    if len(table.providers) != 1:
        raise ValueError("a column file holds exactly one provider's table")
    header = {
        "format": FORMAT,
        "provider": table.providers[0],
        "rows": len(table),
        "skipped": sum(table.skipped.values()),
        "csv_sha256": csv_sha256,
        "vendors": [v.value for v in VENDORS],
        "archs": [a.value for a in ARCHS],
        "strings": {name: getattr(table, name) for name in _LISTS},
    }
    arrays = {
        name: np.asarray(getattr(table, name), dtype=np.dtype(dtype).newbyteorder("<"))
        for name, dtype in STORED_COLUMNS.items()
    }
    return MAGIC, header, "columns", arrays


def string_lists(header: dict[str, Any], names: list[str]) -> dict[str, list[str]]:
    """The string lists `names` of a header (`strings`), each checked to be a list of strings:
    a ValueError naming what is wrong otherwise (a column file's or a warm snapshot's)."""
    strings = header.get("strings")
    if not isinstance(strings, dict):
        raise ValueError("header has no string lists")
    lists: dict[str, list[str]] = {}
    for name in names:
        values = strings.get(name)
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValueError(f"string list {name} is missing or not strings")
        lists[name] = values
    return lists


def pack_pieces(
    magic: bytes,
    header: dict[str, Any],
    key: str,
    arrays: dict[str, np.ndarray],
    *,
    counts: bool,
) -> list[Any]:
    """What `pack` makes, as pieces (the head, then each array and its padding) whose joining
    is `pack`'s bytes: written one after another, a table is never copied to be written."""
    layout, head, _ = _layout(magic, header, key, arrays, counts)
    pieces: list[Any] = [head]
    for a in arrays.values():
        pieces.append(np.ascontiguousarray(a).data.cast("B"))
        if a.nbytes % 8:
            pieces.append(bytes(-a.nbytes % 8))
    return pieces


def _layout(
    magic: bytes, header: dict[str, Any], key: str, arrays: dict[str, np.ndarray], counts: bool
) -> tuple[dict[str, dict[str, Any]], bytes, int]:
    """Each array's place (the arrays made little-endian in `arrays`), the file's head (magic,
    header length, header) and the data's length."""
    layout: dict[str, dict[str, Any]] = {}
    offset = 0
    for name, a in arrays.items():
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        arrays[name] = a
        layout[name] = {"dtype": a.dtype.str, "offset": offset}
        if counts:
            layout[name]["count"] = len(a)
        offset += a.nbytes + (-a.nbytes % 8)
    head = json.dumps({**header, key: layout}, separators=(",", ":"), sort_keys=True).encode()
    head += b" " * (-(len(magic) + 4 + len(head)) % 8)  # data starts 8-byte aligned
    return layout, magic + struct.pack("<I", len(head)) + head, offset


def pack(
    magic: bytes,
    header: dict[str, Any],
    key: str,
    arrays: dict[str, np.ndarray],
    *,
    counts: bool,
) -> bytes:
    """`magic`, the length of the JSON header, the header (with each array's dtype, offset and,
    with `counts`, length under `key`), then the arrays, each 8-byte aligned. Written into one
    buffer: a table's worth of bytes is allocated once, not once per column and again whole."""
    layout, head, offset = _layout(magic, header, key, arrays, counts)
    start = len(head)
    out = bytearray(start + offset)
    out[:start] = head
    for name, a in arrays.items():
        at = start + layout[name]["offset"]
        np.frombuffer(out, dtype=a.dtype, count=len(a), offset=at)[:] = a
    # A bytearray: `bytes(out)` would copy the whole table once more.
    return out  # type: ignore[return-value]


def decode(data: bytes, *, provider: str, csv_sha256: str) -> Table:
    """The table in a column file, checked to be whole, in range and built from the CSV with
    `csv_sha256`. Raises ValueError saying what is wrong otherwise."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        raise ValueError("not a column file")
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4 + size
    if size > MAX_HEADER_BYTES or start > len(data):
        raise ValueError("header runs past the end of the file")
    try:
        header = json.loads(data[len(MAGIC) + 4 : start])
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"header is not JSON ({type(e).__name__})") from None
    if not isinstance(header, dict):
        raise ValueError("header is not a JSON object")
    if header.get("format") not in _READ_FORMATS:
        raise ValueError(f"unknown column file format {header.get('format')!r}")
    if header.get("provider") != provider:
        raise ValueError(f"it holds {header.get('provider')!r}, not {provider!r}")
    if header.get("csv_sha256") != csv_sha256:
        raise ValueError("it was built from another CSV")
    rows = header.get("rows")
    if not isinstance(rows, int) or rows < 0:
        raise ValueError("bad row count")
    columns: dict[str, np.ndarray] = {}
    layout = header.get("columns")
    if not isinstance(layout, dict):
        raise ValueError("header has no column layout")
    for name, dtype in STORED_COLUMNS.items():
        spec = layout.get(name)
        if not isinstance(spec, dict):
            raise ValueError(f"column {name} is missing")
        want = np.dtype(dtype).newbyteorder("<")
        if spec.get("dtype") != want.str:
            raise ValueError(f"column {name} has dtype {spec.get('dtype')!r}, not {want.str}")
        offset = spec.get("offset")
        if not isinstance(offset, int) or offset < 0:
            raise ValueError(f"column {name} has a bad offset")
        if start + offset + rows * want.itemsize > len(data):
            raise ValueError(f"column {name} runs past the end of the file")
        # A view on `data`, not a copy: read-only (also on a bytearray), as nobody writes to
        # a loaded column.
        array = np.frombuffer(data, dtype=want, count=rows, offset=start + offset)
        array.flags.writeable = False
        columns[name] = array
    lists = string_lists(header, _LISTS)
    if header["format"] == 1:
        lists["provider_datas"] = [
            offer_spec.migrate(check_json(t)) for t in lists["provider_datas"]
        ]
    for text in lists["provider_datas"]:
        check_offer_text(text)
    for column, name in STRING_LISTS.items():
        if column != "provider":
            check_codes(columns[column], len(lists[name]), column)
    columns["gpu_vendor"] = _recode(
        columns["gpu_vendor"], header.get("vendors"), VENDORS, AcceleratorVendor, "gpu_vendor"
    )
    columns["cpu_arch"] = _recode(
        columns["cpu_arch"], header.get("archs"), ARCHS, CPUArchitecture, "cpu_arch"
    )
    check_numbers(columns)
    skipped = header.get("skipped")
    if not isinstance(skipped, int) or skipped < 0:
        raise ValueError("bad skipped count")
    fields: dict[str, Any] = {**columns, **lists}
    return Table(
        providers=[provider],
        provider=np.zeros(rows, dtype=np.int8),
        skipped={provider: skipped} if skipped else {},
        **fields,
    )


def check_offer_text(text: str) -> str:
    """A column file's offer text (`offer_spec`) checked whole; raises ValueError otherwise."""
    return offer_spec.check_text(text, check_json)


def check_codes(codes: np.ndarray, size: int, column: str) -> None:
    if len(codes) == 0:
        return
    low = -1 if column in _MAY_BE_NONE else 0
    if int(codes.min()) < low or int(codes.max()) >= size:
        raise ValueError(f"column {column} has codes outside its list")


def _recode(codes: np.ndarray, names: Any, current: list[Any], enum: Any, column: str) -> Any:
    """Codes written against the writer's list of names, as codes into this version's list."""
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"the names behind {column} are missing")
    try:
        mapping = [current.index(enum(n)) for n in names]
    except ValueError:
        raise ValueError(f"{column} uses a name this gpuhunt does not know") from None
    check_codes(codes, len(names), column)
    if mapping == list(range(len(names))):
        return codes
    return np.array(mapping + [-1], dtype=codes.dtype)[codes]


def check_numbers(c: dict[str, np.ndarray]) -> None:
    """What a query relies on in the number columns (price, where given, finite and sorted)."""
    if "price" in c and not np.isfinite(c["price"]).all():
        raise ValueError("price is not a finite number")
    if not np.isfinite(c["memory"]).all():
        raise ValueError("memory is not a finite number")
    for name in ("gpu_memory", "disk_size"):
        if np.isinf(c[name]).any():
            raise ValueError(f"{name} is infinite")
    if (c["gpu_count"] < 0).any():
        raise ValueError("negative gpu_count")
    if "price" in c and len(c["price"]) > 1 and (np.diff(c["price"]) < 0).any():
        raise ValueError("rows are not in price order")
    if (c["spot"].view(np.uint8) > 1).any():
        raise ValueError("spot holds a byte that is not a boolean")
