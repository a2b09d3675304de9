"""`distinct`: what tells apart offers a table would show alike but for the price (issue 37:
CUDO's H100 sizes read as one machine at four prices at 80 columns)."""

from __future__ import annotations

from gpuhunt._internal.cli import render
from gpuhunt._internal.distinct import describe, differences
from tests.helpers import item

SIZES = [
    item("cudo", instance_name=f"sapphire-rapids-h100_1x{c}v{m}gb", cpu=c, memory=float(m),
         gpu_name="H100", price=p, location="no-kristiansand-1")
    for c, m, p in [(2, 4, 1.8214), (4, 8, 1.8528), (12, 24, 1.9784)]
]  # fmt: skip


def test_host_sizes_spot_names_and_flags():
    assert differences(SIZES) == {0: ["cpu", "memory"], 1: ["cpu", "memory"], 2: ["cpu", "memory"]}
    assert describe(SIZES[0], ["cpu", "memory"]) == "2 vCPU 4GB RAM"
    twins = [
        item("gcp", instance_name="g4", flags=["gcp-g4"], spot=True),
        item("gcp", instance_name="g4", flags=["gcp-g4", "gcp-dws-calendar-mode"], spot=True),
        item("gcp", instance_name="g4", spot=False),
        item("gcp", instance_name="other", location="elsewhere"),
    ]
    found = differences(twins)
    assert found == {0: ["flags", "spot"], 1: ["flags", "spot"], 2: ["spot"]}
    assert describe(twins[1], ["flags", "spot"]) == "gcp-dws-calendar-mode gcp-g4 spot"
    names = [item(instance_name="a-1"), item(instance_name="a-2")]
    assert differences(names) == {0: ["instance_name"], 1: ["instance_name"]}
    data = [item(provider_data={"k": 1}), item(provider_data={"k": 2})]
    assert differences(data) == {0: ["provider_data.k"], 1: ["provider_data.k"]}
    assert describe(data[1], ["provider_data.k"]) == "k=2"
    # The same offer twice, or offers that differ in what the table shows anyway: nothing.
    assert differences([item(), item(price=2.0)]) == {}
    assert differences([item(), item(gpu_count=2)]) == {}


def test_the_table_shows_what_differs_at_80_columns():
    out = render.offers_table(SIZES, width=80).splitlines()
    assert out[0].split()[-1] == "DIFFERS"
    assert [line.split("  ")[-1].strip() for line in out[1:]] == [
        "2 vCPU 4GB RAM",
        "4 vCPU 8GB RAM",
        "12 vCPU 24GB RAM",
    ]
    assert max(map(len, out)) <= 80
    # Wide enough for the CPU and MEMORY columns: no DIFFERS column.
    wide = render.offers_table(SIZES, width=None).splitlines()
    assert "DIFFERS" not in wide[0] and "CPU" in wide[0]
