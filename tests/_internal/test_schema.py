"""The offer schema: the CSV's fields match the offer model, and each rule reads older and
awkward spellings the same way on both readers (row by row, and into a table)."""

import dataclasses
import io

import pytest

from gpuhunt import AcceleratorVendor, CatalogItem, CPUArchitecture, QueryFilter
from gpuhunt._internal import errors, schema
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


# ------------------------------------------- impossible values and odd headers (issue 40)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("price", -1.5),
        ("price", 0.0),
        ("cpu", -4),
        ("memory", -1.0),
        ("gpu_memory", -80.0),
        ("disk_size", -100.0),
        ("gpu_count", 5000),
    ],
)
def test_impossible_values_are_skipped_and_counted_in_published_rows_as_online(field, value):
    from gpuhunt._internal.query import online

    good = [item(price=2.0, instance_name="good")]
    bad = dataclasses.replace(good[0], instance_name="bad", **{field: value})
    text = "".join(",".join(item_to_row(i)) + "\n" for i in [*good, bad])
    header = ",".join(schema.FIELDS) + "\n"
    stats = ReadStats()
    table = build_table(header + text, provider="aws", stats=stats)
    assert (len(table.price), stats.skipped) == (1, 1)
    assert list(load(io.StringIO(header + text), provider="aws")) == good
    # The same rule, the same words, for an online provider's offer.
    problem = online.offer_problem(bad)
    assert problem is not None and problem == schema.value_problem(field, value)
    assert stats.errors[0].endswith(problem)


def test_a_renamed_gpu_name_column_refuses_the_file_naming_it():
    header = ",".join("gpu_model" if f == "gpu_name" else f for f in schema.FIELDS)
    with pytest.raises(errors.MissingColumns, match="gpu_name.*'gpu_model'"):
        build_table(header + "\n", provider="aws")


def test_a_duplicated_column_refuses_the_file_naming_it():
    header = ",".join([*schema.FIELDS, "price"])
    with pytest.raises(errors.MissingColumns, match="'price' twice"):
        build_table(header + "\n", provider="aws")
    with pytest.raises(errors.MissingColumns, match="'price' twice"):
        list(load(io.StringIO(header + "\n"), provider="aws"))
