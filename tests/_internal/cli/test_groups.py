"""`--group-by gpu`: groups ordered by their cheapest price, so a cut table keeps the cheap
models whatever their names (issue 37: H100 was cut off by the alphabet)."""

from gpuhunt._internal.cli.groups import group_by_gpu, groups_table
from tests.helpers import item


def test_groups_are_ordered_by_their_cheapest_price():
    # 60 models early in the alphabet, all dearer than the H100.
    offers = [item(gpu_name=f"A{k:02d}", price=10.0 + k) for k in range(60)]
    offers.append(item(gpu_name="H100", price=2.0, spot=True))
    offers.append(item(gpu_name="H100", price=3.0))
    groups = group_by_gpu(offers)
    assert [g.gpu_name for g in groups[:50]][0] == "H100"
    assert groups[0].cheapest == 2.0 and groups[0].on_demand.price == 3.0
    assert [g.gpu_name for g in groups[1:4]] == ["A00", "A01", "A02"]


def test_ties_are_ordered_by_name_memory_and_count():
    offers = [
        item(gpu_name="B", price=1.0),
        item(gpu_name="A", price=1.0, gpu_count=2),
        item(gpu_name="A", price=1.0),
        item(gpu_count=0, price=0.1),  # no GPU: in no group
    ]
    assert [(g.gpu_name, g.gpu_count) for g in group_by_gpu(offers)] == [
        ("A", 1),
        ("A", 2),
        ("B", 1),
    ]
    assert groups_table(group_by_gpu(offers)).splitlines()[0].startswith("GPU")
