"""Exact duplicates: a digest of the normalized main text, and the WARC payload digest."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pagetwin.config import ExactSettings
from pagetwin.fingerprints.base import Algorithm, key64, register
from pagetwin.model import Doc, Evidence


@register
class Exact(Algorithm):
    """Two pages are exact duplicates when their normalized main texts are equal (NFKC,
    case-folded, whitespace collapsed; see text.normalize) or their payloads are byte-identical
    (WARC-Payload-Digest). Pages with no main text are keyed by payload only, so empty pages
    are not all one cluster."""

    name = "exact"
    keys_are_proof = True
    settings_class = ExactSettings

    def features(self, doc: Doc) -> dict[str, str] | None:
        text = doc.text_digest if doc.text.strip() else ""
        payload = (doc.payload_digest or "") if self.settings.use_payload_digest else ""
        if not text and not payload:
            return None
        return {"t": text, "p": payload}

    def keys(self, features: dict[str, str]) -> Iterable[int]:
        if features["t"]:
            yield key64("text", features["t"])
        if features["p"]:
            yield key64("payload", features["p"])

    def verify(self, a: Any, b: Any) -> Evidence:
        same_text = bool(a["t"]) and a["t"] == b["t"]
        same_payload = bool(a["p"]) and a["p"] == b["p"]
        passed = same_text or same_payload
        return Evidence(
            self.name,
            1.0 if passed else 0.0,
            passed,
            {"same_text": same_text, "same_payload": same_payload},
        )
