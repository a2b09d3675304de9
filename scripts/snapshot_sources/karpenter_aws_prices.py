"""Karpenter's generated on-demand price tables (aws/karpenter-provider-aws
`pkg/providers/pricing/zz_generated.pricing_aws.go` and `..._us_gov.go`) -> on-demand prices of
the AWS collector's CPU families in us-east-1, us-gov-east-1 and us-gov-west-1.

The stored inputs are `data/karpenter_pricing_aws_6fc13b52_excerpt.txt` and
`data/karpenter_pricing_aws_us_gov_6fc13b52_excerpt.txt` (how they were cut is in that folder's
README): lines of the Go files kept verbatim, the `// generated at <time> for us-east-1` line,
the map's `var` line, each region's `"<region>": {` line and the `// <family> family` blocks of
`aws.CPU_FAMILIES`, whose lines are `"<type>": <USD/hour>, ...`. Karpenter's code generator
writes those tables from the AWS Price List API (on-demand Linux prices). Decisions:

- The date is the file's own `generated at` line (the same day as the commit that wrote it).
- Only the CPU families the collector publishes are kept: the GPU types have their own dated
  vantage.sh sources, and one offer must not have two prices.
- A price that is not a positive number is skipped and counted; a type the same region lists
  twice is skipped and counted.
- The tables give prices only. vCPUs and memory come from DescribeInstanceTypes data (moto's
  copy, the one the replay serves the collector), when the Price List rows are written
  (tests/providers/data/aws/README.md); the collector then reads those rows as any other.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "aws/karpenter-provider-aws"
COMMIT = "6fc13b5236fd04fd16ff3f9dc7490d0813994099"
PATHS = (
    "pkg/providers/pricing/zz_generated.pricing_aws.go",
    "pkg/providers/pricing/zz_generated.pricing_aws_us_gov.go",
)
STORED = (
    DATA / "karpenter_pricing_aws_6fc13b52_excerpt.txt",
    DATA / "karpenter_pricing_aws_us_gov_6fc13b52_excerpt.txt",
)

_GENERATED = re.compile(r"^// generated at (\d{4}-\d{2}-\d{2})T[\d:]+Z for ", re.M)
_REGION = re.compile(r'^\t"([a-z0-9-]+)": \{$')
_PRICE = re.compile(r'"([a-z0-9.-]+)": ([^,\s]+)')


@dataclass
class Parsed:
    generated: list[str]  # each file's `generated at` date
    prices: dict[tuple[str, str], float] = field(default_factory=dict)  # (type, region) -> USD/h
    skipped: Counter[str] = field(default_factory=Counter)


def parse(texts: list[str] | tuple[str, ...], names: tuple[str, ...] = ()) -> Parsed:
    parsed = Parsed(generated=[])
    for n, text in enumerate(texts):
        name = names[n] if n < len(names) else f"file {n + 1}"
        dated = _GENERATED.search(text)
        if dated is None:
            raise ValueError(f"{name}: no `// generated at` line")
        parsed.generated.append(dated.group(1))
        region = None
        for line in text.splitlines():
            if m := _REGION.match(line):
                region = m.group(1)
                continue
            if not line.startswith('\t\t"'):
                continue
            if region is None:
                raise ValueError(f"{name}: a price line before any region: {line.strip()!r}")
            for instance_type, raw in _PRICE.findall(line):
                try:
                    price = float(raw)
                except ValueError:
                    parsed.skipped["malformed_price"] += 1
                    continue
                if not price > 0:
                    parsed.skipped["malformed_price"] += 1
                    continue
                key = (instance_type, region)
                if key in parsed.prices:
                    parsed.skipped["duplicate"] += 1
                    continue
                parsed.prices[key] = price
    return parsed


def load() -> Parsed:
    return parse(
        tuple(p.read_text(encoding="utf-8") for p in STORED), tuple(p.name for p in STORED)
    )


_FAMILY_KIND = {"m": "General purpose", "t": "General purpose"}
_FAMILY_KIND |= {"c": "Compute optimized", "r": "Memory optimized"}


def instance_list(
    prices: dict[tuple[str, str], float], specs: dict[str, tuple[int, float]]
) -> list[dict[str, Any]]:
    """The instance list `make_aws_price_list.py` writes Price List rows from (the format of
    tsaol/aws-gpu's files): per type its vCPUs and GiB (`specs`, from DescribeInstanceTypes)
    and its price per region. A type without specs is an error, never a guess."""
    by_type: dict[str, dict[str, dict[str, float]]] = {}
    for (instance_type, region), price in sorted(prices.items()):
        by_type.setdefault(instance_type, {})[region] = {"onDemand": price}
    missing = sorted(set(by_type) - set(specs))
    if missing:
        raise ValueError(f"no vCPU/memory for {', '.join(missing)}")
    return [
        {
            "name": name,
            "gpu": "",
            "gpuCount": 0,
            "gpuMemory": "Unknown",
            "vcpu": specs[name][0],
            "memory": f"{specs[name][1]:g} GB",
            "pricing": pricing,
            "family": _FAMILY_KIND[name[0]],
        }
        for name, pricing in by_type.items()
    ]
