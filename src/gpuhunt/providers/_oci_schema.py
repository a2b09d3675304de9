"""The two Oracle Cost Estimator documents (shapes.json, products.json) as pydantic models.

A module of its own so that `gpuhunt.providers.oci` imports without pydantic (the `oci` extra):
it is imported when a collection parses the documents.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuhunt._internal.errors import ProviderError
from gpuhunt.providers import _report

# A document in which more than this share of records fails validation has changed shape.
MAX_INVALID_SHARE = 0.5


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class TypeValue(_Model):
    value: str


class ShapeProduct(_Model):
    part_number: str = Field(alias="partNumber")
    # fractional in places (81.6 for a DenseIO disk); whole where we use it
    qty: float | None = None
    type: TypeValue


class Shape(_Model):
    name: str
    hidden: bool
    status: str
    allow_preemptible: bool = Field(alias="allowPreemptible")
    bundle_memory_qty: float | None = Field(default=None, alias="bundleMemoryQty")
    gpu_qty: int | None = Field(default=None, alias="gpuQty")
    gpu_memory_qty: float | None = Field(default=None, alias="gpuMemoryQty")
    processor_type: TypeValue = Field(alias="processorType")
    shape_type: TypeValue = Field(alias="shapeType")
    sub_type: TypeValue = Field(alias="subType")
    products: list[ShapeProduct]


class Price(_Model):
    model: str
    value: float
    range_min: float | None = Field(default=None, alias="rangeMin")
    range_max: float | None = Field(default=None, alias="rangeMax")


class Localization(_Model):
    currency_code: str = Field(alias="currencyCode")
    prices: list[Price]


class Product(_Model):
    part_number: str = Field(alias="partNumber")
    billing_model: str = Field(alias="billingModel")
    price_type: str = Field(alias="pricetype")
    currency_code_localizations: list[Localization] = Field(alias="currencyCodeLocalizations")


class _Document(_Model):
    items: list[Any]


ModelT = TypeVar("ModelT", bound=BaseModel)


def describe(error: ValidationError) -> str:
    """The first problem of a validation error, naming the JSON field (by its alias)."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(document)"
    return f"field {where!r}: {first['msg']}"


def parse_document(
    payload: Any, model: type[ModelT], document: str, report: _report.ParseReport
) -> list[ModelT]:
    """`{"items": [...]}` -> validated records; bad records skipped, a changed shape raised."""
    try:
        items = _Document.model_validate(payload).items
    except ValidationError as e:
        raise ProviderError(f"oci: {document}: {describe(e)}") from None
    records: list[ModelT] = []
    failures: list[str] = []
    for index, item in enumerate(items):
        try:
            records.append(model.model_validate(item))
        except ValidationError as e:
            label = item.get("name") or item.get("partNumber") if isinstance(item, dict) else None
            why = describe(e)
            failures.append(why)
            report.skip(f"{document} item {index} ({label or 'unnamed'})", why)
    if failures and len(failures) > MAX_INVALID_SHARE * len(items):
        common, count = Counter(failures).most_common(1)[0]
        raise ProviderError(
            f"oci: {document}: {len(failures)} of {len(items)} records are invalid "
            f"({count} with {common}); has the format changed?"
        )
    return records
