"""The CUDA version of an offer's host: its own field, and older catalogs' provider_data key."""

from gpuhunt._internal.offer_state import cuda_version_of, offer_cuda_version
from tests.helpers import item


def test_cuda_version_read_and_anything_else_is_unknown():
    assert cuda_version_of("12.8") == (12, 8)
    assert cuda_version_of(12.4) == (12, 4)
    for bad in (None, "new", ""):
        assert cuda_version_of(bad) is None


def test_older_provider_data_key_still_read_for_the_shim():
    assert offer_cuda_version({"cuda_version": "12.8"}) == (12, 8)
    assert offer_cuda_version({"cuda_version": "new"}) is None
    assert offer_cuda_version(None) is None


def test_the_offer_carries_it_as_a_field_not_in_provider_data():
    offer = item(cuda_version="12.8")
    assert offer.cuda_version == "12.8" and offer.provider_data == {}
    assert item().cuda_version is None
