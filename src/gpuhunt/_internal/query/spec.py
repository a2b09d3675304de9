"""The query spec: every filter `Catalog.query` takes, defined once (pure, no gpuhunt imports
but the geography table's area names).

One `Option` per filter, in the order `gpuhunt query --help` lists them: its name (the
`QueryFilter` field and `Catalog.query` keyword), how its value is checked (`check`, read by
`validate.check_field`), its documentation, its command-line option (flag, metavar, choices,
repeatable, on/off switches), how a text value is read (`read`, for the command line and the
wire), its wire name and JSON type (HTTP parameter, MCP argument, OpenAPI schema), whether
`explain` counts it as a GPU filter, and, for a filter evaluated by its own functions, that it
is (`own`: `query.match.PREDICATES` and `query.masks.MASKS` hold its predicate and mask under
its name). `VIEWS` are the options that shape an answer without filtering it (sort order, one
row per region), shared by the command line and the servers the same way.

Everything that lists filters is derived from `FILTERS`: `validate`'s checks, `ParsedQuery`'s
values of `own` filters, the CLI's options (`cli/query.py`), the HTTP parameters
(`serve/parameters.py`) and so the OpenAPI document and the MCP tools' input schemas, and
`explain`'s GPU filters. `QueryFilter` and `Catalog.query` keep their explicit fields (the
public contract); tests check both against `FILTERS`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal.geography import AREAS

# How `validate.check_field` checks a value of the filter (its rules are listed there).
# "text": a view or history option taking a word (`sort`, `since`), no filter of `QueryFilter`.
# "kinds": `include`, names of `INCLUDE_KINDS` (`include_hidden` reads them).
CHECKS = frozenset(
    {"count", "size", "flag", "names", "enum", "version", "age", "flag_set", "text", "kinds"}
)
# JSON types of wire values, by the Python type a text value is read into.
WIRE_TYPES: dict[Any, str] = {int: "integer", float: "number"}


@dataclass(frozen=True)
class Switch:
    """An on/off command-line option setting its filter to `value` (`--spot`: True)."""

    flag: str
    value: bool
    doc: str | None


@dataclass(frozen=True)
class Option:
    """One filter (or view option); see the module docstring."""

    name: str
    check: str
    doc: str | None = None
    flag: str | None = None  # the CLI option; default --NAME-WITH-DASHES
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    repeatable: bool = False
    read: Callable[[str], Any] | None = None  # text -> value; None: the text as it is
    switches: tuple[Switch, ...] = ()  # on/off options instead of one taking a value
    gpu: bool = False  # a GPU filter: GPU-less offers are no near misses of it (`explain`)
    own: bool = False  # evaluated by `match.PREDICATES[name]` and `masks.MASKS[name]`
    default: Any = None  # the command line's default (a filter's is always None)

    @property
    def option(self) -> str:
        """The command-line option taking a value (`--min-cpu`, `--gpu`)."""
        return self.flag or "--" + self.name.replace("_", "-")

    @property
    def wire(self) -> str:
        """Its name as an HTTP parameter and MCP argument: the option's (`gpu`, `allow_flag`),
        or, for on/off switches, the filter's (`spot=false` is `--on-demand`)."""
        if self.switches:
            return self.name
        return self.option.lstrip("-").replace("-", "_")

    @property
    def wire_type(self) -> str:
        if self.switches or self.check == "flag":
            return "boolean"
        return WIRE_TYPES.get(self.read, "string")

    @property
    def labels(self) -> tuple[str, ...]:
        """Every command-line spelling (`--spot`, `--on-demand`)."""
        return tuple(s.flag for s in self.switches) or (self.option,)


_AGE_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_age(text: str) -> dt.timedelta:
    """An age as `--max-age` takes it: a number and a unit, s, m, h or d (`30d`, `12h`,
    `1.5h`); anything else is a ValueError saying so."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text.lower())
    if m is None:
        raise ValueError(f"invalid age {text!r}: a number and a unit, s, m, h or d (30d, 12h)")
    return dt.timedelta(**{_AGE_UNITS[m.group(2)]: float(m.group(1))})


# What `include` can ask for beside rentable offers (`rentable.hidden_kind` tests each).
INCLUDE_KINDS = ("restricted", "fractional", "stale-listings", "enumerated")
INCLUDE_ALL = "all"


def include_hidden(value: Any) -> frozenset[str]:
    """The kinds an `include` value leaves out: every kind it does not name. A text or a list
    of texts, each a kind or several joined by commas (`"restricted,fractional"`), or `all`
    (nothing left out); an unknown kind is a ValueError naming it."""
    given = [value] if isinstance(value, str) else list(value)
    named = {k.strip().lower() for v in given for k in v.split(",") if k.strip()}
    unknown = sorted(named - set(INCLUDE_KINDS) - {INCLUDE_ALL})
    if unknown:
        raise ValueError(
            f"include: unknown kind {unknown[0]!r} (known: {', '.join(INCLUDE_KINDS)}, all)"
        )
    if INCLUDE_ALL in named:
        return frozenset()
    return frozenset(INCLUDE_KINDS) - named


def _range(what: str, read: type, unit: str, *, gpu: bool = False) -> tuple[Option, Option]:
    """`min_WHAT` and `max_WHAT`, `--min-what N` / `--max-what N`."""
    check = "count" if what in ("cpu", "gpu_count") else "size"
    return (
        Option(f"min_{what}", check, f"minimum {unit}", metavar="N", read=read, gpu=gpu),
        Option(f"max_{what}", check, f"maximum {unit}", metavar="N", read=read, gpu=gpu),
    )


FILTERS: tuple[Option, ...] = (
    Option("provider", "names", "provider name (repeatable)", repeatable=True),
    Option(
        "gpu_name",
        "names",
        'GPU name, any common spelling: H100, "RTX 4090"; a size or form factor in the name '
        'asks for it: "A100 80GB", "H100 SXM", a100-80g-pcie (offers of unknown form factor '
        "are kept); NAME:COUNT asks for exactly COUNT of them: A100:8 (repeatable)",
        flag="--gpu",
        repeatable=True,
        gpu=True,
    ),
    Option(
        "gpu_vendor",
        "enum",
        choices=("nvidia", "amd", "google", "intel", "tenstorrent"),
        gpu=True,
    ),
    Option("cpu_arch", "enum", choices=("x86", "arm")),
    Option(
        "location",
        "names",
        'region or zone, or a shell-style pattern: us-east-1, "europe-*" (repeatable)',
        repeatable=True,
    ),
    Option(
        "country",
        "names",
        "ISO 3166 country code of the offer's location: DE, US (repeatable)",
        metavar="CC",
        repeatable=True,
    ),
    Option(
        "area",
        "names",
        "area of the offer's location (repeatable); locations gpuhunt cannot place are left "
        "out when --country or --area is given",
        choices=tuple(AREAS),
        repeatable=True,
        read=str.lower,
    ),
    *_range("cpu", int, "vCPUs"),
    *_range("memory", float, "RAM in GB"),
    *_range("gpu_count", int, "GPUs", gpu=True),
    *_range("gpu_memory", float, "memory per GPU in GiB", gpu=True),
    *_range("total_gpu_memory", float, "memory of all GPUs in GiB", gpu=True),
    *_range("disk_size", int, "disk in GB (offers of unknown disk size are kept)"),
    *_range("price", float, "USD per hour"),
    Option(
        "min_compute_capability", "version", "NVIDIA only, e.g. 8.0 or 9", metavar="X.Y", gpu=True
    ),
    Option("max_compute_capability", "version", metavar="X.Y", gpu=True),
    Option(
        "min_cuda",
        "version",
        "CUDA version the host must run, e.g. 12.8: NVIDIA GPU offers only (RunPod and "
        "Vast.ai say their hosts' version; offers of providers that do not are kept)",
        metavar="X.Y",
        gpu=True,
    ),
    Option(
        "spot",
        "flag",
        switches=(
            Switch("--spot", True, "spot offers only"),
            Switch("--on-demand", False, "on-demand offers only"),
        ),
    ),
    Option(
        "allowed_flags",
        "flag_set",
        "hide offers with other flags",
        flag="--allow-flag",
        repeatable=True,
    ),
    Option(
        "available",
        "flag",
        switches=(
            Switch(
                "--available",
                True,
                "offers their provider read as available when they were observed only (offers "
                "whose provider does not say are left out)",
            ),
        ),
    ),
    Option(
        "max_age",
        "age",
        "leave out offers observed longer ago than AGE, and offers of unknown age: a number "
        "and a unit, s, m, h or d (30d, 12h)",
        metavar="AGE",
        read=parse_age,
    ),
    Option(
        "resale",
        "flag",
        switches=(
            Switch(
                "--no-resales",
                False,
                "leave out marketplace resales of another cloud's machine (Shadeform's Lambda "
                "offers, ...)",
            ),
        ),
    ),
    Option(
        "min_memory_per_gpu",
        "size",
        "minimum RAM per GPU in GB: offers with GPUs only",
        metavar="N",
        read=float,
        gpu=True,
        own=True,
    ),
    Option(
        "max_interruption",
        "size",
        "spot offers whose interruption band (AWS Spot Instance Advisor) has an upper bound "
        "of at most PCT percent (10 keeps the bands under 5 and 5-10 percent); spot offers of unknown band are "
        "left out, on-demand offers kept",
        metavar="PCT",
        read=float,
    ),
    Option(
        "include",
        "kinds",
        "also answer offers a person cannot simply rent as listed, left out by default: "
        "restricted (regions that need the provider's approval), fractional (a share of a "
        "GPU), stale-listings (a marketplace host's listing older than its provider's "
        "cadence), enumerated (a location a third-party catalog lists every type in; shown "
        "anyway when no listed offer matches), all; comma-separated or repeated",
        metavar="KIND",
        repeatable=True,
        own=True,
        default=[],
    ),
)

SORTS = ("price", "price-per-gpu", "gpu-memory", "tflops-per-dollar")

VIEWS: tuple[Option, ...] = (
    Option(
        "sort",
        "text",
        "price: USD/hour (default); price-per-gpu: USD/hour per GPU; gpu-memory: largest "
        "first; tflops-per-dollar: most dense BF16 TFLOPS per USD/hour first (offers without a "
        "published figure last)",
        choices=SORTS,
        default="price",
    ),
    Option(
        "all_regions",
        "flag",
        switches=(
            Switch(
                "--all-regions",
                True,
                "one row per offer and region (default: each offer once, at its cheapest "
                "region, with the number of other regions selling it)",
            ),
        ),
        default=False,
    ),
)

# `Catalog.history`'s filters (`gpuhunt history`, `/v1/history`, the `price_history` tool), in
# the order `gpuhunt history --help` lists them: the first `HISTORY_LEAD` before the command
# line's own output options, the rest after them.
HISTORY: tuple[Option, ...] = (
    Option("gpu_name", "names", "GPU name (repeatable)", flag="--gpu", repeatable=True),
    Option("provider", "names", "provider name (repeatable)", repeatable=True),
    Option("location", "names", "region or zone (repeatable)", repeatable=True),
    Option(
        "spot",
        "flag",
        switches=(Switch("--spot", True, None), Switch("--on-demand", False, None)),
    ),
    Option("since", "text", "first day to show, YYYY-MM-DD"),
    Option("by", "text", choices=("gpu", "instance"), default="gpu"),
    Option("version", "text", "read the history as of this version (default: the latest)"),
    Option(
        "availability",
        "flag",
        switches=(
            Switch(
                "--availability",
                True,
                "per offer and location: observations and the share available over the "
                "window, from the published observations dataset (needs gpuhunt[dataset])",
            ),
        ),
        default=False,
    ),
)
HISTORY_LEAD = 6

# What a decision costs (issue 49, docs/costs.md): options of `Catalog.query_costs` and the
# query doors that price an answer, not filters (a 0.1.x query never takes them).
COSTS: tuple[Option, ...] = (
    Option(
        "hours_per_month",
        "size",
        "price each offer for H hours a month: the cheapest way to pay (on demand, spot or a "
        "commitment term), its monthly cost and the break-even hours of each term",
        metavar="H",
        read=float,
    ),
    Option(
        "months",
        "count",
        "months of that usage (default 1; with --term alone, the term's length)",
        metavar="M",
        read=int,
    ),
    Option("term", "text", "show commitment terms of this length only", choices=("1y", "3y")),
    Option(
        "job_hours",
        "size",
        "price a job of H hours: a TOTAL of compute, egress and storage",
        metavar="H",
        read=float,
    ),
    Option("egress_gb", "size", "GB the job sends to the internet", metavar="GB", read=float),
    Option("storage_gb", "size", "GB the job keeps on disk", metavar="GB", read=float),
)
COST_NAMES: tuple[str, ...] = tuple(o.name for o in COSTS)


def history_filters(args: Any) -> dict[str, Any]:
    """The `Catalog.history` keywords that filter, from an object holding `HISTORY`'s values
    (a parsed command line, a read request): all but `version` and `availability`, which
    each door treats its own way."""
    return {o.name: getattr(args, o.name) for o in HISTORY[:HISTORY_LEAD]}


BY_NAME: dict[str, Option] = {o.name: o for o in FILTERS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
OWN: tuple[Option, ...] = tuple(o for o in FILTERS if o.own)
GPU_FILTERS = frozenset(o.name for o in FILTERS if o.gpu)
# `min_X`/`max_X` pairs, checked together (a minimum above its maximum matches nothing).
RANGES: tuple[str, ...] = tuple(
    n.removeprefix("min_") for n in NAMES if n.startswith("min_") and "max_" + n[4:] in BY_NAME
)


def names_of(check: str) -> frozenset[str]:
    """The filters checked as `check`."""
    assert check in CHECKS, check
    return frozenset(o.name for o in FILTERS if o.check == check)
