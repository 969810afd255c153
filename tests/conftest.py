"""Test-run settings: in CI (CI=true), hypothesis draws the same examples on every run,
so a red run always points at a change in the code, never at a new random draw."""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
