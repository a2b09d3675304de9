import io

from gpuhunt import AcceleratorVendor, CPUArchitecture
from gpuhunt._internal.formats.csv import ReadStats, csv_bytes, load
from gpuhunt._internal.schema import FIELDS
from tests.helpers import item

HEADER = ",".join(FIELDS)


def read(text: str, provider: str = "aws"):
    stats = ReadStats()
    items = list(load(io.StringIO(text), provider=provider, stats=stats))
    return items, stats


def test_round_trip_keeps_every_field():
    items = [
        item(provider_data={"fabrics": ["f1"], "n": 1}, flags=["oci-spot", "x"], disk_size=100.5),
        item(gpu_count=0, cpu_arch=CPUArchitecture.ARM, spot=True),
        item(gpu_name="v5litepod", gpu_vendor=AcceleratorVendor.GOOGLE, gpu_memory=None),
    ]
    back, stats = read(csv_bytes(items).decode())
    assert back == items and stats.skipped == 0


def test_header_and_column_order_match_published_format():
    first = csv_bytes([item()]).decode().splitlines()[0]
    assert first == HEADER


def test_old_files_without_vendor_and_arch():
    text = (
        "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size\n"
        "p4d,us-east-1,32.7,96,1152,8,A100,40,False,\n"
        "v2-8,us-central1-b,4.5,96,334,8,tpu-v2,8,False,\n"
        "m5,us-east-1,0.1,2,8,0,,,True,\n"
    )
    (a, tpu, cpu), stats = read(text)
    assert a.gpu_vendor is AcceleratorVendor.NVIDIA and a.cpu_arch is CPUArchitecture.X86
    assert tpu.gpu_name == "v2" and tpu.gpu_vendor is AcceleratorVendor.GOOGLE
    assert (
        cpu.gpu_vendor is None and cpu.spot is True and cpu.flags == [] and cpu.provider_data == {}
    )


def test_malformed_rows_skipped_and_counted(caplog):
    good = csv_bytes([item(price=1.0), item(price=2.0)]).decode().splitlines()
    text = "\n".join(
        [
            good[0],
            good[1],
            "x,y,notaprice,1,1,0,,,False,,,,,",
            "a,b,1,1,1,0,,,maybe,,,,,",
            "a,b,1,1,1,1,A100,,False,,nvidia,,x86,{not json",
            good[2],
        ]
    )
    items, stats = read(text)
    assert [i.price for i in items] == [1.0, 2.0]
    assert stats.skipped == 3
    assert "price" in stats.errors[0] and "spot" in stats.errors[1]
    assert "Skipped 3 malformed" in caplog.text


def test_reference_written_file_reads():
    # A row as gpuhunt 0.1.x writes it (DictWriter, provider_data unsorted JSON, flags spaced).
    text = (
        HEADER
        + '\r\ngpu_1x_gh200,us-east-3,1.49,64,432.0,1,GH200,96.0,False,4096.0,nvidia,lambda-arm,arm,"{""b"": 1, ""a"": 2}"\r\n'
    )
    (i,), _ = read(text, "lambdalabs")
    assert (
        i.flags == ["lambda-arm"]
        and i.cpu_arch is CPUArchitecture.ARM
        and i.provider_data == {"b": 1, "a": 2}
    )
