"""Test-wide settings: Hypothesis runs derandomized under CI (CI=true), so a CI run is
reproducible; locally it explores new examples each run."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
