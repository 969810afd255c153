"""Test-run settings: in CI (CI=true), hypothesis draws the same examples on every run,
so a red run always points at a change in the code, never at a new random draw.

jit's native tier is off unless DIDAX_NATIVE_TIER says otherwise: building C for every
function the suite jits would cost minutes; tests/_src/native turns it on where tested."""
import os

os.environ.setdefault("DIDAX_NATIVE_TIER", "off")

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
