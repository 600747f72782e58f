"""What pass 1 learns, as one model: site templates, document frequencies, image hashes.

``Learning`` says what is to be learned (a parameter of the learn step: ``pagetwin templates``
learns templates only, ``pagetwin keywords`` document frequencies whatever the match algorithms
are). ``Learned`` holds it and is the only place that folds pass-1 records into models
(``Learned.fit``), merges models (``Learned.merge``) and serialises them (``to_parts`` /
``from_parts`` for the index, one blob per model as the index has always stored them;
``to_bytes`` / ``from_bytes`` for one blob, as Spark partitions send them back).

The merge contract, for every model it holds: ``a.merge(b)`` adds ``b``'s counts into ``a``
and returns ``a`` (in place, like ``fit``); ``b`` is left as it was. Models learned with
different settings (``LEARNED_WITH``: what turns a page into the counts) are refused with
``LearnedMismatch``, naming the setting.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from pagetwin.fingerprints.base import key64

if TYPE_CHECKING:
    from pagetwin.config import Settings
    from pagetwin.html.templates import PageStats, SiteTemplates
    from pagetwin.model import Page
    from pagetwin.text.keywords import DocFreq

# Settings that decide what a page counts for (its cut body, its DOM, its site, its words):
# counts made with other values do not add up. Thresholds applied to the counts
# (extract.template_share, min_site_pages...) may differ: they are read in pass 2.
LEARNED_WITH = ("input.max_page_bytes", "input.max_dom_depth", "extract.site_key", "text.lang")

# The names under which the index stores each part (Index.save_model); unchanged from the
# index's first schema, so indexes built before this module read as they did.
PART_NAMES = ("site_templates", "doc_freq", "image_hashes", "learned_with")

_MAGIC = b"PTLEARN1"


class LearnedMismatch(ValueError):
    """Two models learned with different settings cannot be merged."""


@dataclass(frozen=True)
class Learning:
    """What pass 1 learns: site templates, document frequencies (for tf-idf keyword weights),
    perceptual hashes of image records (which pass 1 then reads)."""

    templates: bool = False
    doc_freq: bool = False
    images: bool = False

    @property
    def anything(self) -> bool:
        return self.templates or self.doc_freq or self.images

    @classmethod
    def for_dedup(cls, settings: Settings) -> Learning:
        """What ``pagetwin dedup`` with these settings needs."""
        from pagetwin.pipeline import needs_doc_freq, needs_images

        return cls(settings.extract.templates, needs_doc_freq(settings), needs_images(settings))


class ImageHash(NamedTuple):
    url: str  # normalised image URL (html.images.normalize_image_url)
    phash: int


class LearnRecord(NamedTuple):
    """What pass 1 makes of one page (``Worker.learn``): the page's site, its subtree
    statistics (when templates are learned), its word set (when document frequencies are),
    an image record's hash, and the page's parsed blocks as bytes (when the engine keeps them
    for pass 2, else b"")."""

    site: str = ""
    stats: PageStats | None = None
    words: list[str] | None = None
    image: ImageHash | None = None
    parsed: bytes = b""


def learned_with(settings: Settings) -> dict[str, Any]:
    """The values of ``LEARNED_WITH`` in ``settings``."""
    out: dict[str, Any] = {}
    for name in LEARNED_WITH:
        section, _, key = name.partition(".")
        out[name] = getattr(getattr(settings, section), key)
    return out


@dataclass
class Learned:
    """What pass 1 learned, handed to pass 2 (pickled once per worker). ``learned_with``: the
    settings the counts were made with (``learned_with(settings)``; {} for a model made by hand,
    which merges only with another such)."""

    templates: SiteTemplates | None = None
    doc_freq: DocFreq | None = None
    image_hashes: dict[str, int] = field(default_factory=dict)  # normalised image URL -> phash
    learned_with: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def empty(cls, settings: Settings, learning: Learning) -> Learned:
        """The models ``learning`` asks for, with nothing counted yet."""
        from pagetwin.html.templates import SiteTemplates
        from pagetwin.text.keywords import DocFreq

        return cls(
            SiteTemplates(settings.extract) if learning.templates else None,
            DocFreq() if learning.doc_freq else None,
            {},
            learned_with(settings),
        )

    @classmethod
    def fit(
        cls,
        records: Iterable[tuple[Page, LearnRecord]],
        settings: Settings,
        learning: Learning,
        on_page: Callable[[], None] = lambda: None,
    ) -> Learned:
        """Fold pass-1 records, (page, Worker.learn(page)) in input order, into a model (both
        engines: the local one over the whole input, Spark per partition, then merged)."""
        learned = cls.empty(settings, learning)
        templates, doc_freq, image_hashes = learned.templates, learned.doc_freq, learned.image_hashes
        # Byte-identical copies of a page are counted once: a site holding one article under three
        # URLs must not make that article look like its template.
        seen_payloads: set[int] = set()
        for page, record in records:
            on_page()
            if record.image is not None:  # every URL of an image, byte-identical copies included
                image_hashes[record.image.url] = record.image.phash
            if page.payload_digest:
                digest = key64(page.payload_digest)
                if digest in seen_payloads:
                    continue
                seen_payloads.add(digest)
            if record.stats is not None and templates is not None:
                templates.fit(record.site, record.stats)
            if record.words is not None and doc_freq is not None:
                doc_freq.fit(record.words)
        return learned

    def check_mergeable(self, other: Learned) -> None:
        """LearnedMismatch, naming the setting, when ``other`` was learned with other settings."""
        if self.learned_with == other.learned_with:
            return
        names = sorted(set(self.learned_with) | set(other.learned_with))
        diff = [n for n in names if self.learned_with.get(n) != other.learned_with.get(n)]
        detail = "; ".join(f"{n} = {other.learned_with.get(n)!r}, not {self.learned_with.get(n)!r}" for n in diff)
        raise LearnedMismatch(f"cannot merge learned models: one was learned with {detail}")

    def merge(self, other: Learned | None) -> Learned:
        """Add ``other``'s counts into this model and return it (``other`` is unchanged; see
        the module docstring). This model's image hashes win over ``other``'s."""
        if other is None:
            return self
        self.check_mergeable(other)
        # SiteTemplates.merge returns a new model, DocFreq.merge adds into self and returns it:
        # keeping what each returns gives this contract whichever theirs is.
        if self.templates is not None and other.templates is not None:
            self.templates = self.templates.merge(other.templates)
        if self.doc_freq is not None and other.doc_freq is not None:
            self.doc_freq = self.doc_freq.merge(other.doc_freq)
        self.image_hashes = {**other.image_hashes, **self.image_hashes}
        return self

    # -- serialising ----------------------------------------------------------------------

    def to_parts(self) -> dict[str, bytes]:
        """One blob per model, under ``PART_NAMES`` (a model not learned has no blob)."""
        parts: dict[str, bytes] = {}
        if self.templates is not None:
            parts["site_templates"] = self.templates.to_bytes()
        if self.doc_freq is not None:
            parts["doc_freq"] = self.doc_freq.to_bytes()
        if self.image_hashes:
            parts["image_hashes"] = json.dumps(self.image_hashes).encode()
        if self.learned_with:
            parts["learned_with"] = json.dumps(self.learned_with, sort_keys=True).encode()
        return parts

    @classmethod
    def from_parts(
        cls, parts: Mapping[str, bytes | None], settings: Settings, templates: SiteTemplates | None = None
    ) -> Learned | None:
        """The model ``to_parts`` gave, or None when it holds neither templates nor document
        frequencies. A model stored without ``learned_with`` (an index written before it was
        recorded, whose own settings check passed) counts as learned with ``settings``.
        ``templates``: the site templates read another way (a Spark output's row per site,
        runners.spark_output), in place of a ``site_templates`` part."""
        from pagetwin.html.templates import SiteTemplates
        from pagetwin.text.keywords import DocFreq

        blob, doc_freq = parts.get("site_templates"), parts.get("doc_freq")
        if templates is None and blob:
            templates = SiteTemplates.from_bytes(blob, settings.extract)
        if templates is None and not doc_freq:
            return None
        images, recorded = parts.get("image_hashes"), parts.get("learned_with")
        return cls(
            templates,
            DocFreq.from_bytes(doc_freq) if doc_freq else None,
            {k: int(v) for k, v in json.loads(images).items()} if images else {},
            json.loads(recorded) if recorded else learned_with(settings),
        )

    def to_bytes(self) -> bytes:
        """The whole model as one blob: a JSON header of the parts' lengths, then the parts."""
        return self.blob(self.to_parts())

    @staticmethod
    def blob(parts: Mapping[str, bytes]) -> bytes:
        """``to_bytes`` of the model whose ``to_parts`` are ``parts``."""
        head = json.dumps({name: len(data) for name, data in parts.items()}).encode()
        return b"".join([_MAGIC, len(head).to_bytes(4, "big"), head, *parts.values()])

    @classmethod
    def from_bytes(cls, data: bytes, settings: Settings) -> Learned:
        """The model ``to_bytes`` gave (its templates read with ``settings.extract``)."""
        if not data.startswith(_MAGIC):
            raise ValueError("not a pagetwin learned model")
        at = len(_MAGIC) + 4
        size = int.from_bytes(data[len(_MAGIC) : at], "big")
        lengths = json.loads(data[at : at + size])
        at += size
        parts: dict[str, bytes] = {}
        for name, length in lengths.items():
            parts[name] = data[at : at + length]
            at += length
        learned = cls.from_parts(parts, settings)
        if learned is None:  # image hashes alone
            images = json.loads(parts.get("image_hashes", b"{}"))
            learned = cls(None, None, {k: int(v) for k, v in images.items()}, learned_with(settings))
        if "learned_with" in parts:
            learned.learned_with = json.loads(parts["learned_with"])
        return learned
