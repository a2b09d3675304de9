"""`Settings`: what each environment variable sets; a bad value is warned about once and the
default used, never an error."""

import logging
from pathlib import Path

import pytest

from gpuhunt._internal.load import settings
from gpuhunt._internal.load.settings import DEFAULT_CATALOG_URL, Settings


def test_defaults_when_nothing_is_set():
    s = Settings.from_env({})
    assert s == Settings() and s.catalog_url == DEFAULT_CATALOG_URL
    assert s.http_timeout == (5.0, 30.0) and s.reload_interval == 4 * 3600


def test_each_variable():
    s = Settings.from_env(
        {
            "GPUHUNT_CATALOG_URL": "https://example.com/v3",
            "GPUHUNT_CATALOG_DIR": "/csvs",
            "GPUHUNT_CACHE_DIR": "/cache",
            "GPUHUNT_RELOAD_INTERVAL": "60",
            "GPUHUNT_ONLINE_TIMEOUT": "2.5",
            "GPUHUNT_ALLOW_HTTP": "1",
            "GPUHUNT_CONNECT_TIMEOUT": "1",
            "GPUHUNT_READ_TIMEOUT": "2",
            "GPUHUNT_LIVE_CACHE_TTL": "0",
        }
    )
    assert s == Settings(
        catalog_url="https://example.com/v3",
        catalog_dir="/csvs",
        cache_dir=Path("/cache"),
        reload_interval=60.0,
        online_timeout=2.5,
        allow_http=True,
        connect_timeout=1.0,
        read_timeout=2.0,
        live_cache_ttl=0.0,
    )


# ---------------------------------------------------------------- bad values (issues #23, #27)
# Each variable with values it must refuse: unreadable, non-finite, out of range. Each is
# warned about once (variable, value, default) and replaced by the default; nothing raises.
FIELD = {
    "GPUHUNT_RELOAD_INTERVAL": "reload_interval",
    "GPUHUNT_LOAD_CHECKED_WITHIN": "load_checked_within",
    "GPUHUNT_ONLINE_TIMEOUT": "online_timeout",
    "GPUHUNT_ONLINE_DEADLINE": "online_deadline",
    "GPUHUNT_CONNECT_TIMEOUT": "connect_timeout",
    "GPUHUNT_READ_TIMEOUT": "read_timeout",
    "GPUHUNT_LIVE_CACHE_TTL": "live_cache_ttl",
    "GPUHUNT_LOAD_TIMEOUT": "load_timeout",
    "GPUHUNT_MAX_DOWNLOAD_MB": "max_download_bytes",
}
BAD_VALUES = {
    "GPUHUNT_RELOAD_INTERVAL": ["abc", "nan", "inf", "-1", "1e12"],
    "GPUHUNT_LOAD_CHECKED_WITHIN": ["soon", "nan", "inf", "-1", "86401"],
    "GPUHUNT_ONLINE_TIMEOUT": ["soon", "nan", "inf", "0", "-5", "1e6"],
    "GPUHUNT_ONLINE_DEADLINE": ["x", "nan", "-inf", "0", "-1", "3601"],
    "GPUHUNT_CONNECT_TIMEOUT": ["c", "nan", "-inf", "0", "-1", "601"],
    "GPUHUNT_READ_TIMEOUT": ["y", "nan", "inf", "0", "-1", "3601"],
    "GPUHUNT_LIVE_CACHE_TTL": ["t", "nan", "inf", "-1", "86401"],
    "GPUHUNT_LOAD_TIMEOUT": ["abc", "nan", "inf", "-1", "-5", "3601"],
    "GPUHUNT_MAX_DOWNLOAD_MB": ["big", "nan", "inf", "-3", "0", "1e999", "2e6"],
}
GOOD_VALUES = {
    "GPUHUNT_RELOAD_INTERVAL": [("0", 0.0), ("60", 60.0), (" 3600 ", 3600.0)],
    "GPUHUNT_LOAD_CHECKED_WITHIN": [("0", 0.0), ("5", 5.0), ("86400", 86400.0)],
    "GPUHUNT_ONLINE_TIMEOUT": [("0.5", 0.5), ("3600", 3600.0)],
    "GPUHUNT_ONLINE_DEADLINE": [("1.5", 1.5), ("30", 30.0)],
    "GPUHUNT_CONNECT_TIMEOUT": [("1", 1.0), ("600", 600.0)],
    "GPUHUNT_READ_TIMEOUT": [("2", 2.0)],
    "GPUHUNT_LIVE_CACHE_TTL": [("0", 0.0), ("86400", 86400.0)],
    "GPUHUNT_LOAD_TIMEOUT": [("0", 0.0), ("2.5", 2.5)],
    "GPUHUNT_MAX_DOWNLOAD_MB": [("1", 2**20), ("0.5", 2**19)],
}


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    # Settings read from the environment compare equal to the defaults only without the
    # suite's own GPUHUNT_CACHE_DIR (nothing here writes to a cache).
    monkeypatch.delenv("GPUHUNT_CACHE_DIR")
    monkeypatch.delenv("GPUHUNT_LOAD_CHECKED_WITHIN")
    settings._warned.clear()
    yield
    settings._warned.clear()


def test_every_numeric_variable_has_a_range_and_bad_values_here():
    assert set(settings.RANGES) == set(FIELD) == set(BAD_VALUES) == set(GOOD_VALUES)


@pytest.mark.parametrize(("name", "text"), [(n, v) for n, vs in BAD_VALUES.items() for v in vs])
def test_a_bad_value_is_warned_about_once_and_the_default_used(name, text, monkeypatch, caplog):
    monkeypatch.setenv(name, text)
    default = getattr(Settings(), FIELD[name])
    with caplog.at_level(logging.WARNING, logger="gpuhunt._internal.load.settings"):
        first = Settings.from_env()
        again = Settings.from_env()  # every catalog and session reads them: still one warning
    assert getattr(first, FIELD[name]) == default == getattr(again, FIELD[name])
    assert first == Settings() == again
    [record] = caplog.records
    message = record.getMessage()
    assert f"{name}={text.strip()!r}" in message
    shown = default / 2**20 if name == "GPUHUNT_MAX_DOWNLOAD_MB" else default
    assert f"using the default {shown:g} (valid: {settings.RANGES[name]})" in message


@pytest.mark.parametrize(
    ("name", "text", "value"), [(n, t, v) for n, vs in GOOD_VALUES.items() for t, v in vs]
)
def test_a_good_value_is_used_without_a_word(name, text, value, monkeypatch, caplog):
    monkeypatch.setenv(name, text)
    with caplog.at_level(logging.WARNING):
        s = Settings.from_env()
    assert getattr(s, FIELD[name]) == value
    assert caplog.records == []


@pytest.mark.parametrize(("text", "on"), [("1", True), ("0", False), ("", False)])
def test_allow_http(text, on, monkeypatch, caplog):
    monkeypatch.setenv("GPUHUNT_ALLOW_HTTP", text)
    with caplog.at_level(logging.WARNING):
        assert Settings.from_env().allow_http is on
    assert caplog.records == []


@pytest.mark.parametrize("text", ["true", "yes", "2"])
def test_allow_http_other_values_are_off_and_warned(text, monkeypatch, caplog):
    monkeypatch.setenv("GPUHUNT_ALLOW_HTTP", text)
    with caplog.at_level(logging.WARNING):
        assert Settings.from_env().allow_http is False
        Settings.from_env()
    [record] = caplog.records
    assert f"GPUHUNT_ALLOW_HTTP={text!r} is neither 1 nor 0; using the default 0" in (
        record.getMessage()
    )


def test_several_bad_values_each_warned(monkeypatch, caplog):
    monkeypatch.setenv("GPUHUNT_LOAD_TIMEOUT", "-1")
    monkeypatch.setenv("GPUHUNT_MAX_DOWNLOAD_MB", "-3")
    with caplog.at_level(logging.WARNING):
        s = Settings.from_env()
    assert (s.load_timeout, s.max_download_bytes) == (10.0, 256 * 2**20)
    text = caplog.text
    assert "GPUHUNT_LOAD_TIMEOUT='-1' is out of range; using the default 10" in text
    assert "GPUHUNT_MAX_DOWNLOAD_MB='-3' is out of range; using the default 256" in text


def test_a_changed_bad_value_is_warned_about_again(monkeypatch, caplog):
    with caplog.at_level(logging.WARNING):
        monkeypatch.setenv("GPUHUNT_RELOAD_INTERVAL", "abc")
        Settings.from_env()
        monkeypatch.setenv("GPUHUNT_RELOAD_INTERVAL", "-1")
        Settings.from_env()
    assert len(caplog.records) == 2


def test_the_readme_settings_table_states_the_ranges_of_RANGES():
    # RANGES is the source; the settings tables of the README and of the docs pages say the
    # same in their "valid values" column, with notes in parentheses ("0 (check on every
    # query) to 31536000 (a year)") and one range per variable of a row naming two ("above 0
    # to 600 / above 0 to 3600").
    import re

    root = Path(__file__).parents[3]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages if p.is_file())
    stated: dict[str, str] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`GPUHUNT_"):
            continue
        names = re.findall(r"`(GPUHUNT_[A-Z_]+)", cells[0])
        valid = [re.sub(r"\s*\([^)]*\)", "", v).strip() for v in cells[2].split(" / ")]
        if len(valid) == len(names):
            stated.update(zip(names, valid))
    expected = {name: str(r).removesuffix(f" {r.unit}") for name, r in settings.RANGES.items()}
    assert {name: stated.get(name) for name in settings.RANGES} == expected
