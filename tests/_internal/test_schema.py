"""The offer schema: the CSV's fields match the offer model, and each rule reads older and
awkward spellings the same way on both readers (row by row, and into a table)."""

import dataclasses
import io

import pytest

from gpuhunt import AcceleratorVendor, CatalogItem, CPUArchitecture, QueryFilter
from gpuhunt._internal import schema
from gpuhunt._internal.formats.csv import ReadStats, item_to_row, load
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.query import answers
from tests.helpers import item


def test_csv_fields_are_the_offer_fields_but_the_provider():
    assert ["provider", *schema.FIELDS] == [f.name for f in dataclasses.fields(CatalogItem)]
    assert len(item_to_row(item())) == len(schema.FIELDS)
    assert set(schema.REQUIRED) <= set(schema.FIELDS)


@pytest.mark.parametrize(
    "name, vendor, has_gpus, expected",
    [
        ("A100", "", True, ("A100", AcceleratorVendor.NVIDIA)),  # before gpu_vendor existed
        ("tpu-v5p", "", True, ("v5p", AcceleratorVendor.GOOGLE)),
        ("tpu-v5p", "google", True, ("v5p", AcceleratorVendor.GOOGLE)),
        ("MI300X", "AMD", True, ("MI300X", AcceleratorVendor.AMD)),
        ("", "", False, (None, None)),
        ("tpu-", "", False, (None, AcceleratorVendor.GOOGLE)),
    ],
)
def test_gpu_rule(name, vendor, has_gpus, expected):
    assert schema.gpu(name, vendor, has_gpus) == expected


def test_small_rules():
    assert [schema.spot(t) for t in ("True", "false", "TRUE")] == [True, False, True]
    assert schema.cpu_arch("") is CPUArchitecture.X86 and schema.cpu_arch(" Arm ").value == "arm"
    assert schema.flags(" a  b ") == "a b" and schema.check_json("") == "{}"
    for rule, text in [
        (schema.spot, "yes"),
        (schema.gpu_count, "-1"),
        (schema.check_json, "[1]"),
        (schema.cpu_arch, "mips"),
    ]:
        with pytest.raises(ValueError):
            rule(text)


def test_both_readers_apply_the_same_rules_to_awkward_spellings():
    header = ",".join(schema.FIELDS)
    rows = [
        "a,r,1.0,8,32,1,A100,80,TRUE,,,,,",
        "b,r,2.0,8,32,4,tpu-v5p,,False,,, x  y ,Arm,",
        "c,r,3.0,8,32,0,,,true,100,,,x86,{}",
        "d,r,4.0,8,32,1,tpu-,,false,,,,,",
        "e,r,5.0,8,32,1,A100,80,maybe,,,,,",  # bad: skipped by both
    ]
    text = "\n".join([header, *rows]) + "\n"
    row_stats, table_stats = ReadStats(), ReadStats()
    by_row = list(load(io.StringIO(text), provider="aws", stats=row_stats))
    table = build_table(text, provider="aws", stats=table_stats)
    assert answers.items(table, table.select(QueryFilter())) == by_row
    assert row_stats.skipped == table_stats.skipped == 1
    assert [i.gpu_vendor for i in by_row] == [
        AcceleratorVendor.NVIDIA,
        AcceleratorVendor.GOOGLE,
        None,
        AcceleratorVendor.GOOGLE,
    ]
