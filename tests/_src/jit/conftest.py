"""jit's tests run on both tiers: once on the NumPy tier alone, once with jit's "check" mode
(every function they compile built as native code before its first call, and every call run
on both tiers, failing with TierMismatchError unless the results are the same bits). Tests
about tiering itself set the tier they need."""
import pytest

from didax._src.config import flag_context

TIERS = {"numpy tier": "off", "both tiers": "check"}


@pytest.fixture(autouse=True, params=list(TIERS))
def jit_tier(request):
    with flag_context("didax_native_tier", TIERS[request.param]):
        yield request.param
