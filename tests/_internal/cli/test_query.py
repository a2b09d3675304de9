"""`gpuhunt query` as a person uses it (issue 15): memory in GPU names, locations, CUDA and
compute capability as written, price columns, every field in --json/--csv, --group-by gpu,
one-line errors for every bad input, and the collector's help."""

from __future__ import annotations

import csv
import io
import json

import pytest

from gpuhunt import AcceleratorVendor
from gpuhunt._internal import cli
from gpuhunt._internal.cli import layout
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.registry import ALL_PROVIDERS
from gpuhunt._version import __version__
from tests.helpers import item, publish_archive

AWS = [
    item(
        price=1.7, instance_name="a100-40", gpu_name="A100", gpu_memory=40.0, location="us-east-1"
    ),
    item(price=4.0, instance_name="a100-80x2", gpu_name="A100", gpu_memory=80.0, gpu_count=2),
    item(
        price=1.2,
        instance_name="a100-80-spot",
        gpu_name="A100",
        gpu_memory=80.0,
        spot=True,
        location="eu-west-1",
    ),
    item(price=64, instance_name="p5", gpu_name="H100", gpu_memory=80.0, gpu_count=8),
    item(price=0.7345, instance_name="cpu", gpu_count=0, location="eu-west-1"),
]
GCP = [
    item(
        "gcp",
        price=2.5,
        instance_name="a2-ultragpu-1g",
        gpu_name="A100",
        gpu_memory=80.0,
        location="europe-west4-a",
        provider_data={"is_dws_calendar_mode": False},
    ),
]
RUNPOD = [
    item(
        "runpod",
        price=2.0,
        instance_name="NVIDIA A100 80GB PCIe",
        gpu_name="A100",
        gpu_memory=80.0,
        location="EU-SE-1",
        cuda_version="12.8",
    ),
    item(
        "runpod",
        price=1.0,
        instance_name="old-cuda",
        gpu_name="A100",
        gpu_memory=80.0,
        location="US",
        cuda_version="12.4",
    ),
]


@pytest.fixture(autouse=True)
def catalog_dir(tmp_path, monkeypatch):
    publish_archive(
        tmp_path,
        "20261129-1",
        {"aws": csv_bytes(AWS), "gcp": csv_bytes(GCP), "runpod": csv_bytes(RUNPOD)},
    )
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    for var in ("HOTAISLE_API_KEY", "HOTAISLE_TEAM_HANDLE"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def run_json(capsys, *args):
    assert cli.main(["query", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def instances(capsys, *args):
    return sorted(d["instance_name"] for d in run_json(capsys, *args))


EVERY_A100_80 = ["NVIDIA A100 80GB PCIe", "a100-80-spot", "a100-80x2", "a2-ultragpu-1g", "old-cuda"]


@pytest.mark.parametrize(
    "gpu, left_out",
    [
        ("A100 80GB", None),
        ("A100-80GB", None),
        # A form factor in the name asks for it too: GCP's a2-ultragpu is SXM, the RunPod
        # offer says PCIe; the others do not say, and are kept.
        ("a100-80g-pcie", "a2-ultragpu-1g"),
        ("A100 SXM4 80GB", "NVIDIA A100 80GB PCIe"),
    ],
)
def test_gpu_names_with_memory(capsys, gpu, left_out):
    expected = [i for i in EVERY_A100_80 if i != left_out]
    assert instances(capsys, "--gpu", gpu, "--min-gpu-count", "1") == expected
    assert instances(capsys, "--gpu", "A100-40GB") == ["a100-40"]


def test_location_names_and_patterns_repeatable(capsys):
    assert instances(capsys, "--location", "eu-west-1") == ["a100-80-spot", "cpu"]
    assert instances(capsys, "--location", "europe-*", "--location", "EU-SE-?") == [
        "NVIDIA A100 80GB PCIe",
        "a2-ultragpu-1g",
    ]


def test_min_cuda_keeps_offers_of_providers_that_do_not_say(capsys):
    found = instances(capsys, "--min-cuda", "12.8")
    assert "old-cuda" not in found and "NVIDIA A100 80GB PCIe" in found and "p5" in found


def test_min_cuda_asks_for_an_nvidia_gpu(capsys):
    # The CPU-only offer (the cheapest in eu-west-1) used to come first (issue 24).
    assert "cpu" in instances(capsys, "--location", "eu-west-1")
    assert instances(capsys, "--min-cuda", "11.0", "--location", "eu-west-1") == ["a100-80-spot"]


@pytest.mark.parametrize(
    "gpu, expected",
    [
        ("A100:2", ["a100-80x2"]),
        ("a100-80gb:1", ["NVIDIA A100 80GB PCIe", "a100-80-spot", "a2-ultragpu-1g", "old-cuda"]),
        ("A100 SXM:1", ["a100-40", "a100-80-spot", "a2-ultragpu-1g", "old-cuda"]),
        ("H100:8", ["p5"]),
        ("H100:4", []),
    ],
)
def test_gpu_name_count_as_skypilot_writes_it(capsys, gpu, expected):
    assert instances(capsys, "--gpu", gpu) == expected


def test_gpu_name_counts_of_several_gpus(capsys):
    assert instances(capsys, "--gpu", "A100:2", "--gpu", "H100:8") == ["a100-80x2", "p5"]


def test_json_carries_form_factor_and_tflops_per_dollar(capsys):
    rows = {d["instance_name"]: d for d in run_json(capsys, "--gpu", "A100")}
    # GCP's a2-ultragpu is an SXM machine; 312 dense BF16 TFLOPS for $2.50/h.
    assert rows["a2-ultragpu-1g"]["form_factor"] == "sxm"
    assert rows["a2-ultragpu-1g"]["tflops_per_dollar"] == 124.8
    assert rows["NVIDIA A100 80GB PCIe"]["form_factor"] == "pcie"
    assert rows["a100-80x2"]["form_factor"] is None
    assert rows["a100-80x2"]["tflops_per_dollar"] == round(2 * 312 / 4.0, 3)
    assert list(rows["a100-40"])[-13:-8] == [
        "form_factor",
        "tflops_per_dollar",
        "observed_at",
        "available",
        "resold_from",
    ]


def test_sort_tflops_per_dollar_puts_offers_without_a_figure_last(capsys):
    rows = run_json(capsys, "--sort", "tflops-per-dollar")
    order = [(d["instance_name"], d["tflops_per_dollar"]) for d in rows]
    figures = [t for _, t in order if t is not None]
    assert figures == sorted(figures, reverse=True) and len(figures) == 6
    # The H100 p5 has no known board (no figure), nor the CPU offer: last, by price.
    assert [n for n, t in order if t is None] == ["cpu", "p5"]
    assert order[0] == ("old-cuda", 312.0)


def test_table_shows_tflops_per_dollar_and_form_factor(capsys):
    assert cli.main(["query", "--gpu", "A100", "--sort", "tflops-per-dollar", "--limit", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "PROVIDER", "INSTANCE", "LOCATION", "PRICE/H", "$/GPU/H", "TFLOPS/$", "GPU", "CPU",
        "MEMORY", "SPOT", "DISK",
    ]  # fmt: skip
    assert lines[1].split()[:6] == ["runpod", "old-cuda", "US", "$1.00", "$1.00", "312"]
    # Unknown board: no form factor after the GPU.
    assert lines[2].split()[1:7] == ["a100-80-spot", "eu-west-1", "$1.20", "$1.20", "260", "1xA100"]
    assert lines[2].split()[7] == "80GB" and lines[2].split()[8] == "8"
    assert cli.main(["query", "--provider", "gcp"]) == 0
    assert "1xA100 80GB SXM" in capsys.readouterr().out


@pytest.mark.parametrize("cc", ["9", "9.0"])
def test_compute_capability_as_written(capsys, cc):
    assert instances(capsys, "--min-compute-capability", cc) == ["p5"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--min-compute-capability", "abc"], "Invalid --min-compute-capability 'abc'"),
        (["--max-compute-capability", "9.0.1"], "Invalid --max-compute-capability"),
        (["--min-cuda", "twelve"], "Invalid --min-cuda 'twelve'"),
        (["--gpu", "A100:0"], "Invalid --gpu 'A100:0': NAME:COUNT takes a whole number"),
        (["--gpu", "A100:eight"], "Invalid --gpu 'A100:eight'"),
        (["--gpu", "H100 SXM PCIe"], "Invalid --gpu 'H100 SXM PCIe': it names two form factors"),
        (["--min-price", "5", "--max-price", "1"], "--min-price 5 is above --max-price 1"),
        (["--min-gpu-count", "4", "--max-gpu-count", "2"], "--min-gpu-count 4 is above"),
        (
            ["--min-compute-capability", "9", "--max-compute-capability", "8.0"],
            "--min-compute-capability 9.0 is above --max-compute-capability 8.0",
        ),
        (["--max-price", "-1"], "--max-price -1 is negative"),
        (["--min-gpu-count", "-2"], "--min-gpu-count -2 is negative"),
        (["--limit", "-1"], "--limit -1 is negative"),
        (["--min-price", "abc"], "argument --min-price: invalid float value: 'abc'"),
        (["--sort", "cost"], "argument --sort: invalid choice"),
        (["--provider", "hotaisle"], "hotaisle is an online provider, queried live: add --online"),
        (["--provider", "hotaisle", "--provider", "primeintellect"], "are online providers"),
        (["--include", "cheap"], "--include: unknown kind 'cheap' (known: restricted,"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args, message):
    assert exit_code(["query", *args]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert message in err and len(err.splitlines()) == 1, err
    assert "Traceback" not in captured.err and captured.out == ""


def exit_code(argv):
    """`cli.main`'s status, whether it returns it or argparse exits with it."""
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


def test_missing_credential_names_the_variable(capsys):
    assert cli.main(["query", "--provider", "hotaisle", "--online"]) == 2
    err = capsys.readouterr().err.strip()
    assert "HOTAISLE_API_KEY" in err and len(err.splitlines()) == 1


def test_online_failure_printed_once(capsys, monkeypatch):
    from gpuhunt.providers.vultr import VultrProvider

    def fail(self, query_filter=None, balance_resources=True, apply_filter=False):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(VultrProvider, "get", fail)
    # The only provider asked failed: not the user's doing, so exit 1 (issue #23), the reason
    # once.
    assert cli.main(["query", "--provider", "vultr", "--online"]) == 1
    err = capsys.readouterr().err
    assert err.count("no route to host") == 1 and "vultr: ConnectionError" in err
    assert len(err.strip().splitlines()) == 1


def test_online_failure_beside_an_answer_is_a_warning(capsys, monkeypatch):
    from gpuhunt.providers.lium import LiumProvider
    from gpuhunt.providers.vultr import VultrProvider

    def fail(self, query_filter=None, balance_resources=True, apply_filter=False):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(VultrProvider, "get", fail)
    monkeypatch.setattr(LiumProvider, "get", lambda self, **kw: [])
    assert cli.main(["query", "--provider", "vultr", "--provider", "lium", "--online"]) == 0
    err = capsys.readouterr().err
    assert err.count("no route to host") == 1 and "vultr left out" in err


def test_online_only_query_footer_names_whom_it_asked(capsys, monkeypatch):
    """A query of online providers only does not read the catalog: its footer names the
    providers asked and which failed, not why the bundled snapshot was loaded."""
    from gpuhunt.providers.vultr import VultrProvider

    def fail(self, query_filter=None, balance_resources=True, apply_filter=False):
        raise ConnectionError("no route to host")

    from gpuhunt.providers.lium import LiumProvider

    monkeypatch.setattr(VultrProvider, "get", fail)
    monkeypatch.setattr(LiumProvider, "get", lambda self, **kw: [])
    assert cli.main(["query", "--provider", "vultr", "--provider", "lium", "--online"]) == 0
    out = capsys.readouterr().out
    assert "0 of 0 offers. Asked live: vultr (failed, see below), lium." in " ".join(out.split())
    assert "snapshot" not in out and "catalog" not in out.lower()


def test_unknown_gpu_name_says_the_closest(capsys):
    assert cli.main(["query", "--gpu", "H1000"]) == 2
    err = capsys.readouterr().err.strip()
    assert "did you mean H100" in err and len(err.splitlines()) == 1


def test_table_shows_price_per_gpu_and_two_decimals(capsys):
    assert cli.main(["query"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[3:5] == ["PRICE/H", "$/GPU/H"]
    p5 = next(line for line in lines if line.startswith("aws") and " p5 " in line)
    assert "$64.00" in p5 and "$8.00" in p5
    a100 = next(line for line in lines if "a100-40" in line)
    assert "$1.70" in a100
    cpu = next(line for line in lines if " cpu " in line)
    assert "$0.7345" in cpu and cpu.split()[4] == "-"


def test_no_per_gpu_column_without_gpus_unless_sorted_by_it(capsys):
    assert cli.main(["query", "--max-gpu-count", "0", "--min-gpu-count", "0"]) == 0
    out = capsys.readouterr().out
    assert "$/GPU/H" not in out.splitlines()[0]
    assert cli.main(["query", "--max-price", "1", "--sort", "price-per-gpu"]) == 0
    assert "$/GPU/H" in capsys.readouterr().out.splitlines()[0]


def test_price_format():
    assert [layout.price(x) for x in (1.7, 64, 0.7345, 2.49, 0.123456, None)] == [
        "$1.70",
        "$64.00",
        "$0.7345",
        "$2.49",
        "$0.1235",
        "-",
    ]


def test_json_and_csv_carry_every_catalog_item_field(capsys):
    import dataclasses

    from gpuhunt import CatalogItem

    fields = [f.name for f in dataclasses.fields(CatalogItem)]
    data = run_json(capsys, "--provider", "gcp")
    # provider_data as published; when the offer was observed is a field of its own
    observed = data[0]["observed_at"]
    assert observed.endswith("Z") and len(observed) == len("2026-11-29T00:00:00Z")
    assert set(fields) <= set(data[0]) and data[0]["provider_data"] == {
        "is_dws_calendar_mode": False
    }
    assert data[0]["gpu_vendor"] == AcceleratorVendor.NVIDIA.value
    assert cli.main(["query", "--provider", "gcp", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert set(fields) <= set(rows[0])
    assert json.loads(rows[0]["provider_data"]) == {"is_dws_calendar_mode": False}
    assert rows[0]["observed_at"] == observed
    assert list(rows[0]) == list(data[0])  # the same columns in the same order


def test_csv_without_matches_still_has_every_column(capsys):
    assert cli.main(["query", "--provider", "gcp", "--location", "nowhere-*", "--csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].split(",")[:7] == [
        "provider",
        "instance_name",
        "location",
        "country",
        "area",
        "price",
        "price_per_gpu",
    ]
    assert out[0].endswith(
        ",cpu_arch,provider_data,form_factor,tflops_per_dollar,observed_at,available,resold_from"
        ",currency,price_native,fx_rate,fx_date,cuda_version,gpu_fraction,location_source,momentary"
    )
    assert "price_per_gpu" in out[0]


def test_group_by_gpu(capsys):
    assert cli.main(["query", "--group-by", "gpu", "--json"]) == 0
    groups = {
        (g["gpu_name"], g["gpu_memory"], g["gpu_count"]): g
        for g in json.loads(capsys.readouterr().out)
    }
    assert set(groups) == {
        ("A100", 40.0, 1),
        ("A100", 80.0, 1),
        ("A100", 80.0, 2),
        ("H100", 80.0, 8),
    }
    a100 = groups[("A100", 80.0, 1)]
    assert a100["on_demand"] == {"price": 1.0, "provider": "runpod", "location": "US"}
    assert a100["spot"] == {"price": 1.2, "provider": "aws", "location": "eu-west-1"}
    assert a100["offers"] == 4 and a100["providers"] == 3
    assert groups[("H100", 80.0, 8)]["spot"] is None
    assert cli.main(["query", "--group-by", "gpu"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["GPU", "COUNT", "ON-DEMAND/H"]
    row = next(line for line in out if line.startswith("A100 80GB") and line.split()[2] == "1")
    assert row.split() == [
        "A100",
        "80GB",
        "1",
        "$1.00",
        "runpod",
        "US",
        "$1.20",
        "aws",
        "eu-west-1",
        "4",
        "3",
    ]
    assert "4 of 4 GPU models and counts, cheapest first, from 7 offers with GPUs" in "\n".join(out)
    assert cli.main(["query", "--group-by", "gpu", "--csv", "--gpu", "H100"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows == [
        {
            "gpu_name": "H100",
            "gpu_memory": "80.0",
            "gpu_count": "8",
            "on_demand_price": "64.0",
            "on_demand_provider": "aws",
            "on_demand_location": "us-east-1",
            "spot_price": "",
            "spot_provider": "",
            "spot_location": "",
            "offers": "1",
            "providers": "1",
        }
    ]


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"gpuhunt {__version__}"


def test_help_shows_the_collection_form_and_providers(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert "python -m gpuhunt PROVIDER --output FILE" in out
    assert all(p in out for p in ALL_PROVIDERS)
    with pytest.raises(SystemExit):
        cli.main(["query", "--help"])
    out = capsys.readouterr().out
    for unit in ("USD per hour", "GiB", "RAM in GB", "disk in GB"):
        assert unit in out


def test_collecting_an_unknown_provider_names_the_providers(capsys):
    assert cli.main(["nosuch", "--output", "x.csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert "unknown provider 'nosuch'" in err and "lambdalabs" in err and "vastai" in err
    assert len(err.splitlines()) == 1


def test_country_and_area_options_and_columns(capsys):
    assert cli.main(["query", "--area", "Europe", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    where = {(d["provider"], d["location"], d["country"], d["area"]) for d in data}
    assert where == {
        ("aws", "eu-west-1", "IE", "europe"),
        ("gcp", "europe-west4-a", "NL", "europe"),
        ("runpod", "EU-SE-1", "SE", "europe"),
    }
    assert cli.main(["query", "--country", "se", "--country", "NL", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(d["location"] for d in data) == ["EU-SE-1", "europe-west4-a"]
    assert cli.main(["query", "--provider", "aws", "--location", "us-east-1", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and {(r["country"], r["area"]) for r in rows} == {("US", "north-america")}


def test_a_bad_country_or_area_is_a_usage_error(capsys):
    assert cli.main(["query", "--country", "Germany"]) == 2
    assert "Invalid country 'Germany'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli.main(["query", "--area", "eu"])
    assert e.value.code == 2 and "invalid choice: 'eu'" in capsys.readouterr().err


# Offers that say something about themselves (the shared provider_data keys): a converted EUR
# price, a resale, availability readings and observation times.
STATE = [
    item(
        "seeweb",
        price=1.15,
        instance_name="ECS1GPU3",
        location="it-fr2",
        currency="EUR",
        price_native=0.99,
        fx_rate=1.1616,
        fx_date="2026-12-01",
        observed_at="2026-12-01T06:00:00Z",
    ),
    item(
        "shadeform",
        price=2.0,
        instance_name="lambdalabs_A100",
        location="us-south-1",
        resold_from="lambdalabs",
        available=True,
    ),
    item(
        "shadeform",
        price=2.5,
        instance_name="own_A100",
        location="us-south-1",
        available=False,
        observed_at="2020-01-01T00:00:00Z",
    ),
]


@pytest.fixture
def state_catalog(tmp_path, monkeypatch):
    root = tmp_path / "state"
    by = {}
    for i in STATE:
        by.setdefault(i.provider, []).append(i)
    publish_archive(root, "20261202-1", {p: csv_bytes(v) for p, v in by.items()})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(root))
    return root


def test_json_rows_carry_observed_at_available_and_resold_from(capsys, state_catalog):
    rows = {d["instance_name"]: d for d in run_json(capsys)}
    assert rows["ECS1GPU3"]["observed_at"] == "2026-12-01T06:00:00Z"
    assert rows["ECS1GPU3"]["available"] is None
    assert rows["lambdalabs_A100"]["resold_from"] == "lambdalabs"
    assert rows["own_A100"]["available"] is False


def test_state_options_filter(capsys, state_catalog):
    assert instances(capsys, "--available") == ["lambdalabs_A100"]
    assert instances(capsys, "--no-resales") == ["ECS1GPU3", "own_A100"]
    # Offers of a published catalog are dated by its manifest (`observed.py`).
    assert instances(capsys, "--max-age", "36500d") == ["ECS1GPU3", "lambdalabs_A100", "own_A100"]
    assert instances(capsys, "--max-age", "1s") == []


@pytest.mark.parametrize("age", ["30", "3w", "-1d", "d"])
def test_a_bad_max_age_is_a_usage_error(capsys, age):
    with pytest.raises(SystemExit) as e:
        cli.main(["query", f"--max-age={age}"])
    assert e.value.code == 2
    assert "invalid age" in capsys.readouterr().err


def test_table_marks_converted_prices_resales_and_availability(capsys, state_catalog):
    assert cli.main(["query", "--all-regions"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "AVAILABLE" in lines[0]
    seeweb = next(line for line in lines if "ECS1GPU3" in line)
    assert "$1.15*" in seeweb
    assert "* converted from EUR at the ECB rate of 2026-12-01" in lines
    resale = next(line for line in lines if "lambdalabs_A100" in line)
    assert resale.startswith("shadeform (lambdalabs)") and " yes" in resale
    assert " no" in next(line for line in lines if "own_A100" in line)


def test_no_availability_column_without_readings(capsys):
    assert cli.main(["query"]) == 0
    assert "AVAILABLE" not in capsys.readouterr().out.splitlines()[0]


def test_tflops_sort_says_offers_without_a_figure_are_last(capsys):
    assert cli.main(["query", "--sort", "tflops-per-dollar"]) == 0
    out = capsys.readouterr().out
    assert "2 of these offers have no published TFLOPS figure" in " ".join(out.split())


def test_offline_vastai_is_asked_live_or_refused(capsys, tmp_path, monkeypatch):
    # The bundled snapshot holds no Vast.ai offers (their host specs were placeholders), so an
    # offline `--provider vastai` has nothing to stand in with: it says to ask live.
    root = tmp_path / "vast"
    publish_archive(root, "20261202-1", {"aws": csv_bytes(AWS)})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(root))
    assert cli.main(["query", "--provider", "vastai"]) == 2
    assert "add --online" in capsys.readouterr().err


def test_an_unknown_provider_gets_did_you_mean(capsys):
    assert cli.main(["query", "--provider", "lambda"]) == 2
    assert "did you mean 'lambdalabs'?" in capsys.readouterr().err


GENERATED_OPTIONS = [
    [],
    ["--gpu", "H100"],
    ["--sort", "price-per-gpu", "--limit", "30"],
    ["--sort", "gpu-memory", "--on-demand"],
    ["--sort", "tflops-per-dollar", "--limit", "7"],
    ["--provider", "aws", "--provider", "gcp", "--min-gpu-count", "2"],
    ["--max-price", "0.0001"],
    ["--all-regions", "--gpu", "A100", "--sort", "gpu-memory"],
    ["--limit", "0", "--sort", "price-per-gpu"],
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from benchmarks.bench_catalog import generate

    root = tmp_path_factory.mktemp("generated")
    publish_archive(root, "20261129-1", generate(2000))
    return root


@pytest.mark.parametrize("fmt", ["--json", "--csv", "--limit=5", "--sort=price"])
@pytest.mark.parametrize("options", GENERATED_OPTIONS)
def test_answers_chosen_on_the_columns_are_the_built_answer(
    generated, capsys, monkeypatch, fmt, options
):
    """--json, --csv and the table of an offline catalog are chosen on its columns
    (`top.choose`, the server's path), byte for byte what the whole built answer prints."""
    from gpuhunt._internal.query import top

    argv = ["query", "--catalog-url", str(generated), fmt, *options]
    chosen = []
    choose = top.choose

    def spy(*a, **kw):
        found = choose(*a, **kw)
        chosen.append(found is not None)
        return found

    monkeypatch.setattr(top, "choose", spy)
    assert cli.main(argv) == 0
    streamed = capsys.readouterr()
    assert chosen == [True]
    monkeypatch.setattr(top, "choose", lambda *a, **kw: None)
    assert cli.main(argv) == 0
    built = capsys.readouterr()
    assert streamed.out == built.out and len(built.out) > 2
    assert streamed.err == built.err


def test_a_spot_table_is_built_with_its_bands_and_spot_json_is_chosen(
    generated, capsys, monkeypatch
):
    """The table of spot offers has its INTERRUPT column (docs/costs.md): it is priced from
    `Catalog.query`'s offers; `--json` rows of spot offers carry no band unless asked, so they
    are chosen on the columns like any other answer (the server's path too)."""
    from gpuhunt._internal.query import top

    calls = []
    choose = top.choose
    monkeypatch.setattr(top, "choose", lambda *a, **kw: calls.append(1) or choose(*a, **kw))
    argv = ["query", "--catalog-url", str(generated), "--spot", "--limit", "3"]
    assert cli.main(argv) == 0
    assert calls == [] and "spot" in capsys.readouterr().out
    assert cli.main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert calls == [1] and rows and all(r["spot"] for r in rows)
