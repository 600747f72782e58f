"""Test-wide settings: Hypothesis runs derandomized under CI (CI=true), so a CI run is
reproducible; locally it explores new examples each run. Neither profile times examples: the
machines are shared and loaded (load 20-30 while a test run's neighbours work), so Hypothesis'
deadline and its too-slow health check failed tests whose code was right; speed is measured by
bench/, not by tests."""

import os

from hypothesis import HealthCheck, settings

_UNTIMED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("untimed", **_UNTIMED)
settings.register_profile("ci", derandomize=True, print_blob=True, **_UNTIMED)
settings.load_profile("ci" if os.environ.get("CI") else "untimed")
