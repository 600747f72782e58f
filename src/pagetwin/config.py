"""One settings tree. Defaults live here; TOML in (``--config FILE``), TOML out (``pagetwin config``).

Each section is a dataclass; a TOML table of the same name overrides its fields. Algorithm
sections are named after the algorithm (``[simhash]``, ``[minhash]``, ...); hyphens in names
become underscores in the TOML (``[con_w]``).

Every field is declared with ``_setting``: its metadata holds a one-line ``help``, a ``tier``
("user": shown by each command's ``--help``; "expert": reachable by ``--set`` and TOML), the
``commands`` that use it and the values it ``allowed`` (``Settings.validate``, which the API calls
before any work, so a bad value is one ConfigError naming the setting, never a later traceback).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterator, Mapping
from dataclasses import Field, asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

class ConfigError(ValueError):
    """A setting that does not exist, has the wrong type or a value outside what is allowed (a
    usage error: exit 2)."""


# --- what a setting allows ------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    """A number between bounds (None: unbounded); ``lo_open`` / ``hi_open`` exclude the bound."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def ok(self, value: Any) -> bool:
        if not math.isfinite(value):  # NaN passes no comparison; no setting means infinity
            return False
        if self.lo is not None and (value <= self.lo if self.lo_open else value < self.lo):
            return False
        return not (self.hi is not None and (value >= self.hi if self.hi_open else value > self.hi))

    def __str__(self) -> str:
        if self.lo is not None and self.lo == self.hi:
            return f"{self.lo:g}"
        if self.lo is not None and self.hi is not None:
            return f"in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}{')' if self.hi_open else ']'}"
        if self.lo is not None:
            return f"{'>' if self.lo_open else '>='} {self.lo:g}"
        if self.hi is not None:
            return f"{'<' if self.hi_open else '<='} {self.hi:g}"
        return "any number"


@dataclass(frozen=True)
class Choice:
    """One of some names (each item of a list setting, for a list). ``source`` "module:NAME"
    names a collection defined elsewhere, imported only when checked (the fingerprint and
    cluster modules import this one)."""

    names: tuple[str, ...] = ()
    source: str = ""

    def choices(self) -> tuple[str, ...]:
        if not self.source:
            return self.names
        module, _, name = self.source.partition(":")
        return tuple(getattr(importlib.import_module(module), name))

    def ok(self, value: Any) -> bool:
        items = value if isinstance(value, list) else [value]
        return all(item in self.choices() for item in items)

    def __str__(self) -> str:
        return "one of " + ", ".join(self.choices())


@dataclass(frozen=True)
class Parsed:
    """A string that ``parser`` ("module:function", raising ValueError) accepts."""

    parser: str
    described: str

    def ok(self, value: Any) -> bool:
        module, _, name = self.parser.partition(":")
        try:
            getattr(importlib.import_module(module), name)(value)
        except ValueError:  # ConfigError included
            return False
        return True

    def __str__(self) -> str:
        return self.described


@dataclass(frozen=True)
class Folder:
    """Empty (a default elsewhere) or an existing folder: checked before the run, not when the
    first temporary file fails to open."""

    def ok(self, value: Any) -> bool:
        return value == "" or Path(value).is_dir()

    def __str__(self) -> str:
        return "'' or an existing folder"


Allowed = Range | Choice | Parsed | Folder

USER, EXPERT = "user", "expert"
# Commands that use a setting (``pagetwin config`` prints them all): each command's --help lists
# only its own user-tier settings.
DEDUP = ("dedup",)
READ = ("dedup", "text", "keywords", "templates")  # every command that reads pages
PER_PAGE = ("dedup", "text", "keywords")  # ... and extracts each page's main text
COMMANDS = ("dedup", "text", "keywords", "templates")

POSITIVE = Range(0, lo_open=True)
AT_LEAST_1 = Range(1)
AT_LEAST_0 = Range(0)
SHARE = Range(0, 1)  # a share or a similarity, bounds included
SIMILARITY = Range(0, 1, lo_open=True)  # a similarity threshold: 0 would make every pair a duplicate


def _setting(
    default: Any,
    help: str,  # noqa: A002 - the name argparse and the metadata use
    *,
    allowed: Allowed | None = None,
    tier: str = EXPERT,
    commands: tuple[str, ...] = DEDUP,
) -> Any:
    """A settings field with its description (see the module docstring)."""
    metadata = {"help": help, "tier": tier, "commands": commands, "allowed": allowed}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)


# --- the sections ---------------------------------------------------------------------------


@dataclass
class InputSettings:
    max_page_bytes: int = _setting(
        5_000_000, "bytes of a page body that are parsed; the rest is cut and counted",
        allowed=AT_LEAST_1, tier=USER, commands=READ)  # fmt: skip
    max_dom_depth: int = _setting(
        512, "deeper subtrees are flattened to text (lexbor itself survives deeper)",
        allowed=AT_LEAST_1, commands=READ)  # fmt: skip
    sniff_html: bool = _setting(
        True, "look at the body when Content-Type is missing or wrong", commands=READ)
    statuses: str = _setting(
        "2xx", "HTTP statuses of WARC/ARC responses that become pages; others are skipped, counted as "
        "http-status-NNN (HTML files and JSONL have no status)",
        allowed=Parsed("pagetwin.sources.payload:status_filter", "status codes and classes such as '2xx,404', or 'any'"),
        tier=USER, commands=READ)  # fmt: skip
    # Field (JSONL) and column (Parquet) names of a document: datatrove and NeMo Curator write
    # {"id", "text", "metadata"}; crawl dumps {"url", "html"}.
    jsonl_html_field: str = _setting("html", "JSONL/Parquet field holding a page's HTML", commands=READ)
    jsonl_text_field: str = _setting(
        "text", "JSONL/Parquet field holding a text-only document's text (used when there is no HTML)",
        commands=READ)  # fmt: skip
    jsonl_id_field: str = _setting("id", "JSONL/Parquet field holding a document's id", commands=READ)
    jsonl_url_field: str = _setting("url", "JSONL/Parquet field holding a document's URL", commands=READ)
    jsonl_metadata_field: str = _setting(
        "metadata", "JSONL/Parquet field holding a document's metadata, carried to the outputs", commands=READ)

    def __post_init__(self) -> None:
        from pagetwin.sources.payload import status_filter

        status_filter(self.statuses)  # ConfigError on a bad value


@dataclass
class ExtractSettings:
    templates: bool = _setting(
        True, "learn per-site templates (two passes); false = page-level noise removal only",
        tier=USER, commands=PER_PAGE)  # fmt: skip
    site_key: str = _setting(
        "host", "what makes a site, whose template is learned: the URL's host, or its registered domain",
        allowed=Choice(("host", "domain")), tier=USER, commands=READ)  # fmt: skip
    # 2 since session 8: on a site of 2-4 pages, text that an article and its near copy share
    # passes the template share, and it is spared as near-copy text (templates.SiteModel._spared),
    # not removed (tests/test_e2e_neardup.py's chain of three pages); before, the default was 5.
    min_site_pages: int = _setting(
        2, "a site with fewer pages falls back to page-level noise removal",
        allowed=AT_LEAST_1, commands=READ)  # fmt: skip
    template_share: float = _setting(
        0.25, "a block on more than this share of a site's pages is template", allowed=SHARE, commands=READ)
    # A rarer slot is a generic path in a folder of many sites' pages (bench/RESULTS.md, "Reposts").
    min_slot_share: float = _setting(
        0.2, "a structural slot's prior is used only when the slot is on this share of the site's pages",
        allowed=SHARE, commands=READ)  # fmt: skip
    max_hashes_per_site: int = _setting(
        200_000, "bound on per-site block counts (pruned above it)", allowed=AT_LEAST_1, commands=READ)


@dataclass
class TextSettings:
    lang: str = _setting(
        "", "force a language (ISO 639-1 code) instead of detecting it; empty = detect",
        tier=USER, commands=PER_PAGE)  # fmt: skip
    # keywords and weighting (of `pagetwin keywords`) were removed: REMOVED.


@dataclass
class ExactSettings:
    use_payload_digest: bool = _setting(True, "exact: WARC payload digests also make exact edges")


@dataclass
class SimHashSettings:
    bits: int = _setting(64, "simhash: fingerprint bits (only 64 is supported)", allowed=Range(64, 64))
    k: int = _setting(
        5, "simhash: a duplicate is at most k bits apart (calibrated: bench/RESULTS.md, near duplicates)",
        allowed=Range(0, 63), tier=USER)  # fmt: skip
    min_tokens: int = _setting(20, "simhash: pages with fewer content words get no SimHash", allowed=AT_LEAST_0)
    shingle: int = _setting(2, "simhash: words per feature (1 = single words)", allowed=AT_LEAST_1)
    weighting: str = _setting(
        "tf", "simhash: feature weight, \"tf\", \"logtf\" (1 + ln tf) or \"binary\"",
        allowed=Choice(("tf", "logtf", "binary")))  # fmt: skip
    content_only: bool = _setting(True, "simhash: features from content words only (stop words dropped)")
    blocks: int = _setting(
        0, "simhash: blocks n > k of the block tables (C(n, k) tables); 0 = fewest giving min_key_bits",
        allowed=Range(0, 64))  # fmt: skip
    min_key_bits: int = _setting(
        16, "simhash: with blocks = 0, at least this many fingerprint bits per table key", allowed=Range(1, 64))


@dataclass
class MinHashSettings:
    # Calibrated on reposts (spotsigs-dev; bench/RESULTS.md, "Reposts"): word pairs, as a set,
    # J >= 0.25. Profile "near-identical": words as a multiset, J >= 0.9 (copycat judgements).
    # 1 is excluded: the LSH bands are derived for a threshold strictly inside (0, 1).
    threshold: float = _setting(
        0.25, "minhash: Jaccard threshold the LSH bands are derived for and edges must pass",
        allowed=Range(0, 1, lo_open=True, hi_open=True), tier=USER)  # fmt: skip
    num_perm: int = _setting(128, "minhash: permutations (signature length)", allowed=AT_LEAST_1, tier=USER)
    shingle: int = _setting(2, "minhash: words per shingle", allowed=AT_LEAST_1)
    min_tokens: int = _setting(10, "minhash: pages with fewer words get no signature", allowed=AT_LEAST_0)
    seed: int = _setting(1, "minhash: seed of the permutations", allowed=AT_LEAST_0)
    content_only: bool = _setting(False, "minhash: shingles over content words only (stop words dropped)")
    multiset: bool = _setting(
        False, "minhash: repeats count, estimating the weighted (multiset) Jaccard of shingle counts")
    fp_weight: float = _setting(
        0.3, "minhash: bands x rows minimise fp_weight * false-positive area + fn_weight * false-negative area",
        allowed=AT_LEAST_0)  # fmt: skip
    fn_weight: float = _setting(
        0.7, "minhash: see fp_weight (a false positive costs one verification, a false negative a pair)",
        allowed=AT_LEAST_0)  # fmt: skip
    min_bands: int = _setting(
        1, "minhash: a candidate pair shares this many LSH bands (2: far fewer chance candidates between long "
        "pages, bench/RESULTS.md); bands x rows are chosen for it",
        allowed=AT_LEAST_1)  # fmt: skip
    containment: float = _setting(
        0.8, "minhash: a candidate below threshold with this share of the smaller page's shingles in the "
        "larger is a partial edge; 0 = off",
        allowed=SHARE)  # fmt: skip


@dataclass
class KeywordSettings:
    n: int = _setting(10, "des/con/sort/con-w/sort-w: keywords per page", allowed=AT_LEAST_1)
    des_mode: str = _setting(
        "text", "des: what is hashed, \"description\", \"text\", \"prefix\" or \"auto\" "
        "(sites reuse one description: bench/RESULTS.md)",
        allowed=Choice(("auto", "description", "text", "prefix")))  # fmt: skip
    des_bytes: int = _setting(512, "des: bytes of the normalised text that are hashed", allowed=AT_LEAST_1)
    a: float = _setting(
        0.001, "con-w / sort-w: weight distance threshold (calibrated, bench/RESULTS.md)", allowed=AT_LEAST_0)
    min_keywords: int = _setting(5, "con/sort/con-w/sort-w: fewer keywords give no fingerprint", allowed=AT_LEAST_0)
    des_min_chars: int = _setting(
        20, "des: a shorter normalised text or description gives no fingerprint", allowed=AT_LEAST_0)
    tie_quantum: float = _setting(
        0.001, "con: unit-length weights rounded to this rank equal, then A-Z (0 = exact weights)",
        allowed=AT_LEAST_0)  # fmt: skip
    weighting: str = _setting(
        "density", "keyword weights of the keyword algorithms: \"density\" (measured better, RESULTS.md) "
        "or \"tfidf\"",
        allowed=Choice(("tfidf", "density")))  # fmt: skip


@dataclass
class SegmentSettings:
    n: int = _setting(8, "segments: segments per page", allowed=AT_LEAST_1)
    m: int = _setting(
        5, "segments: at least m equal signatures (m <= n) make a duplicate (calibrated, bench/RESULTS.md)",
        allowed=AT_LEAST_1)  # fmt: skip
    min_tokens: int = _setting(40, "segments: pages with fewer content words get no signatures", allowed=AT_LEAST_0)


@dataclass
class ChunkSettings:
    chunk_words: int = _setting(8, "chunks: words per chunk (k-word windows)", allowed=AT_LEAST_1)
    threshold: float = _setting(
        0.9, "chunks: relative-frequency similarity for a duplicate (calibrated)", allowed=SIMILARITY)
    containment: float = _setting(
        0.8, "chunks: share of the smaller page found in the larger for a partial edge", allowed=SHARE)
    merge_partial: bool = _setting(
        False, "chunks: also cluster partial copies with their source (as match.merge_partial)")
    min_tokens: int = _setting(40, "chunks: pages with fewer content words get no chunks", allowed=AT_LEAST_0)
    winnow: int = _setting(
        8, "chunks: index keys are the smallest chunk hash of every window of this many chunks",
        allowed=AT_LEAST_1)  # fmt: skip
    max_keys: int = _setting(
        512, "chunks: at most this many index keys per page (the smallest winnowed hashes)", allowed=AT_LEAST_1)
    # f_a/f_b + f_b/f_a is 2 for equal counts, so only a bound above 2 lets a chunk be shared.
    epsilon: float = _setting(
        2.5, "chunks: a chunk is shared when f_a/f_b + f_b/f_a is below this (SCAM closeness)",
        allowed=Range(2, lo_open=True))  # fmt: skip


@dataclass
class ImageSettings:
    min_images: int = _setting(3, "images: pages with fewer images get no image features", allowed=AT_LEAST_0)
    max_words_per_image: float = _setting(
        30.0, "images: a page is image-dominant when main words / images is below this", allowed=POSITIVE)
    threshold: float = _setting(0.7, "images: set Jaccard of image identities for a duplicate", allowed=SIMILARITY)
    phash_k: int = _setting(
        6, "images: two perceptual hashes within this Hamming distance are one image", allowed=Range(0, 64))
    key_k: int = _setting(
        4, "images: candidate keys find perceptual hashes within this distance (at most phash_k)",
        allowed=Range(0, 63))  # fmt: skip
    max_images: int = _setting(
        200, "images: images per page considered (the rest ignored, counted)", allowed=AT_LEAST_1)
    substantial_words: int = _setting(
        50, "images: when both pages have this many main words, their text must agree too", allowed=AT_LEAST_0)
    min_text_jaccard: float = _setting(
        0.5, "images: ... as a token-set Jaccard of at least this", allowed=SHARE)
    min_lang_words: int = _setting(
        10, "images: captions this long on both pages make their languages count", allowed=AT_LEAST_0)
    translations_are_duplicates: bool = _setting(
        False, "images: pages with the same images and text in different languages are duplicates", tier=USER)


@dataclass
class MatchSettings:
    # Chosen by measurement (bench/RESULTS.md, "Seed algorithms" and "Near duplicates"):
    # exact digests, then con-w (the only text method that works on very short pages), then
    # MinHash (the best single similarity on longer pages). Mean F1 over copycat, LLVM and
    # LLVM-with-text 0.927, against 0.918 for exact + simhash + minhash.
    algorithms: list[str] = _setting(
        ["exact", "con-w", "minhash"], "the fingerprinting algorithms, in order (comma-separated)",
        allowed=Choice(source="pagetwin.fingerprints:MODULES"), tier=USER)  # fmt: skip
    max_bucket: int = _setting(
        200, "larger candidate buckets are compared only to near neighbours (counted)", allowed=AT_LEAST_1)
    guard: bool = _setting(
        True, "anti-chaining: a cluster's members must be related to every page of a verified core", tier=USER)
    # 1.0: the pair must verify. Reposts are each near some copies, not all (bench/RESULTS.md, "Reposts").
    guard_share: float = _setting(
        0.5, "guard: related = a similarity of at least this share of the algorithm's threshold",
        allowed=SHARE)  # fmt: skip
    # Partial edges (a teaser, an article inside a longer page) always go to pairs.jsonl.
    merge_partial: bool = _setting(
        False, "partial edges (one page contains most of the other) also join clusters", tier=USER)


@dataclass
class ClusterSettings:
    keep: str = _setting(
        "longest", "page kept per cluster: \"longest\" (most text, then earliest, then smallest id), "
        "\"earliest\" or \"first\"",
        allowed=Choice(source="pagetwin.cluster:KEEP_POLICIES"), tier=USER)  # fmt: skip


@dataclass
class RunSettings:
    workers: int = _setting(0, "worker processes; 0 = all cores", allowed=AT_LEAST_0, tier=USER, commands=READ)
    progress: bool = _setting(True, "progress bar when stderr is a terminal", tier=USER, commands=READ)
    chunk_pages: int = _setting(16, "pages per task sent to a worker", allowed=AT_LEAST_1, commands=READ)
    reuse_parse: bool = _setting(
        True, "pass 2 reads pass 1's parsed pages from a temporary file (about 5 KB a page) instead of "
        "parsing again", commands=READ)  # fmt: skip
    temp_dir: str = _setting(
        "", "where temporary files go; empty = the system's ($TMPDIR)", allowed=Folder(), tier=USER,
        commands=READ)  # fmt: skip
    lock_timeout: float = _setting(
        10.0, "seconds a dedup run waits for another run writing the same index before it gives up",
        allowed=AT_LEAST_0, commands=DEDUP)  # fmt: skip
    checkpoint_pages: int = _setting(
        5000, "dedup commits pass 2's pages to the index every N pages, so that a killed run resumes from "
        "its last checkpoint; 0 = one commit at the end of pass 2", allowed=AT_LEAST_0, commands=DEDUP)  # fmt: skip


@dataclass
class IndexSettings:
    # false: the lean index; explain reads a page's text back from its record (explain.py).
    store_text: bool = _setting(
        True, "the SQLite index keeps each page's main text (about 5 KB a page); false = explain reads it back "
        "from the input files")  # fmt: skip


@dataclass
class SparkSettings:
    # "executors": nothing per page reaches the driver (runners.spark_link); no SQLite index then.
    link: str = _setting(
        "driver", "with --runner spark, where dedup matches and clusters: \"driver\" (the SQLite index, every "
        "output) or \"executors\" (partitioned outputs, no index)", allowed=Choice(("driver", "executors")))  # fmt: skip
    output: str = _setting(
        "", "with spark.link = executors: the Hadoop URI the executors write the outputs under (file:, hdfs:, "
        "s3a:); empty = --out")  # fmt: skip
    split_bytes: int = _setting(
        128 << 20, "with --runner spark: a WARC file (local or URI) larger than this is read by several tasks, "
        "split at record boundaries; 0 = one task a file", allowed=AT_LEAST_0)  # fmt: skip
    # "lean": pages.parquet holds no features (the job verified and clustered from them already);
    # a later use re-derives a candidate's features from its record (runners/spark_link.py).
    index: str = _setting(
        "lean", "with spark.link = executors, pages.parquet's rows: \"lean\" (record location, keys and digest "
        "cut to 4 bytes: ~100 B a page) or \"features\" (all features: ~580 B)",
        allowed=Choice(("lean", "features")))  # fmt: skip
    tasks_per_core: int = _setting(
        0, "with --runner spark: local WARC files are split smaller (down to 1 MiB) until they make this many "
        "tasks a core; 0 = off", allowed=AT_LEAST_0)  # fmt: skip


# Settings that were removed, and what replaced each (a TOML file or --set naming one gets this).
REMOVED: Mapping[str, str] = MappingProxyType({
    "text.keywords": "`pagetwin keywords --top N` (iter_keywords(top=N))",
    "text.weighting": "`pagetwin keywords --weighting tfidf|density` (iter_keywords(weighting=...))",
})


def _removed(dotted: str) -> ConfigError:
    return ConfigError(f"setting {dotted!r} was removed: use {REMOVED[dotted]} instead")


def _check(value: Any, default: Any, f: Field, dotted: str) -> None:
    """ConfigError unless ``value`` has the type of the default and is what ``f`` allows."""
    if isinstance(default, bool):
        typed = isinstance(value, bool)
    elif isinstance(default, int):
        typed = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        typed = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, list):
        typed = isinstance(value, list) and all(isinstance(v, str) for v in value)
    else:
        typed = isinstance(value, type(default))
    if not typed:
        raise ConfigError(f"setting {dotted} = {value!r}: must be {_a(type(default))}")
    allowed = f.metadata.get("allowed")
    if allowed is not None and not allowed.ok(value):
        raise ConfigError(f"setting {dotted} = {_shown(value)}: must be {allowed}")


def _shown(value: Any) -> str:
    return ",".join(value) if isinstance(value, list) else repr(value)


MAX_SIMHASH_TABLES = 2048  # as lsh.auto_blocks: more tables cost memory and time per page


def _check_together(settings: Settings) -> None:
    """The rules that join two settings."""
    if not settings.match.algorithms:
        raise ConfigError("setting match.algorithms is empty: name at least one algorithm")
    twice = sorted({name for name in settings.match.algorithms if settings.match.algorithms.count(name) > 1})
    if twice:
        raise ConfigError(f"setting match.algorithms names {', '.join(twice)} more than once")
    sim = settings.simhash
    if sim.blocks and not sim.k < sim.blocks:
        raise ConfigError(f"setting simhash.blocks = {sim.blocks}: must be 0 or more than simhash.k = {sim.k}")
    if sim.blocks and math.comb(sim.blocks, sim.k) > MAX_SIMHASH_TABLES:
        raise ConfigError(
            f"setting simhash.blocks = {sim.blocks}: C(blocks, k = {sim.k}) = {math.comb(sim.blocks, sim.k)} "
            f"block tables, more than {MAX_SIMHASH_TABLES}; use fewer blocks or 0"
        )
    seg = settings.segments
    if seg.m > seg.n:
        raise ConfigError(f"setting segments.m = {seg.m}: must be at most segments.n = {seg.n}")
    mh = settings.minhash
    if mh.min_bands > mh.num_perm:
        raise ConfigError(f"setting minhash.min_bands = {mh.min_bands}: must be at most minhash.num_perm = {mh.num_perm}")


def setting_fields(settings: Settings | None = None) -> Iterator[tuple[str, Field, Any]]:
    """(dotted name, field, value) of every setting, in declaration order."""
    settings = settings if settings is not None else Settings()
    for section in fields(settings):
        sec = getattr(settings, section.name)
        for f in fields(sec):
            yield f"{section.name}.{f.name}", f, getattr(sec, f.name)


@dataclass
class Settings:
    input: InputSettings = field(default_factory=InputSettings)
    extract: ExtractSettings = field(default_factory=ExtractSettings)
    text: TextSettings = field(default_factory=TextSettings)
    exact: ExactSettings = field(default_factory=ExactSettings)
    simhash: SimHashSettings = field(default_factory=SimHashSettings)
    minhash: MinHashSettings = field(default_factory=MinHashSettings)
    keywords: KeywordSettings = field(default_factory=KeywordSettings)
    segments: SegmentSettings = field(default_factory=SegmentSettings)
    chunks: ChunkSettings = field(default_factory=ChunkSettings)
    images: ImageSettings = field(default_factory=ImageSettings)
    match: MatchSettings = field(default_factory=MatchSettings)
    cluster: ClusterSettings = field(default_factory=ClusterSettings)
    run: RunSettings = field(default_factory=RunSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    spark: SparkSettings = field(default_factory=SparkSettings)

    def validate(self) -> Settings:
        """Check every setting (type, allowed values, the rules joining two); ConfigError naming
        the first bad one. Returns self, so ``settings = Settings.load(...).validate()`` reads."""
        defaults = Settings()
        for section in fields(self):
            sec = getattr(self, section.name)
            if not isinstance(sec, type(getattr(defaults, section.name))):
                raise ConfigError(f"settings section {section.name!r} is a {type(sec).__name__}")
        for (dotted, f, value), (_, _, default) in zip(setting_fields(self), setting_fields(defaults)):
            _check(value, default, f, dotted)
        _check_together(self)
        return self

    @classmethod
    def with_profile(cls, name: str) -> Settings:
        """The defaults with a named profile's settings applied (``PROFILES``)."""
        if name not in PROFILES:
            raise ConfigError(f"unknown profile {name!r} (profiles: {', '.join(sorted(PROFILES))})")
        settings = cls()
        for dotted, value in PROFILES[name].items():
            settings.set(dotted, value)
        return settings

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_toml(self) -> str:
        import tomli_w

        return tomli_w.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Settings:
        """Settings from a dict such as ``to_dict`` gives. Removed settings are ignored: such a
        dict may have been stored by an earlier version (an index's settings)."""
        return _merge(cls(), data, "", strict=False)

    @classmethod
    def load(cls, path: str | Path | None, profile: str = "") -> Settings:
        """The defaults, with ``profile`` applied (``PROFILES``), then the TOML file at ``path``."""
        base = cls.with_profile(profile) if profile else cls()
        if path is None:
            return base
        import tomllib  # (only a config file needs it)

        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except OSError as exc:
            raise ConfigError(f"cannot read config {path}: {exc.strerror}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config {path} is not valid TOML: {exc}") from exc
        return _merge(base, data, "")

    def set(self, dotted: str, value: Any) -> None:
        """Override one setting by its dotted name, e.g. ``set("minhash.threshold", 0.7)``."""
        section, _, name = dotted.partition(".")
        if f"{section}.{name}".replace("-", "_") in REMOVED:
            raise _removed(f"{section}.{name}".replace("-", "_"))
        sec = getattr(self, section.replace("-", "_"), None)
        if sec is None or not is_dataclass(sec) or name not in {f.name for f in fields(sec)}:
            raise ConfigError(f"unknown setting {dotted!r}")
        setattr(self, section.replace("-", "_"), _merge(sec, {name: value}, section))


# Named sets of settings over the defaults (``--profile NAME``; ``pagetwin config --profile NAME``
# prints the result). The defaults are the "reposts" profile: the same story republished by
# other sites, in their own templates, with small edits (bench/RESULTS.md, "Reposts").
PROFILES: dict[str, dict[str, Any]] = {
    "reposts": {},
    # Verbatim and near-verbatim copies only (LLM-dataset deduplication): MinHash over the
    # multiset of words at J >= 0.9 (calibrated on the copycat judgements, label 3 against 0.5/1).
    "near-identical": {
        "minhash.shingle": 1,
        "minhash.multiset": True,
        "minhash.threshold": 0.9,
        "match.guard_share": 1.0,
    },
}


def _merge(obj: Any, data: dict[str, Any], where: str, strict: bool = True) -> Any:
    """``obj`` with ``data``'s values; a removed setting is an error when ``strict``, else skipped."""
    if not isinstance(data, dict):
        raise ConfigError(f"[{where}] must be a table")
    known = {f.name: f for f in fields(obj)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        path = f"{where}.{key}" if where else key
        if path.replace("-", "_") in REMOVED:
            if strict:
                raise _removed(path.replace("-", "_"))
            continue
        if name not in known:
            raise ConfigError(f"unknown setting {path!r}")
        current = getattr(obj, name)
        if is_dataclass(current):
            changes[name] = _merge(current, value, path, strict)
        else:
            changes[name] = _coerce(current, value, path)
    return replace(obj, **changes)


def _coerce(current: Any, value: Any, path: str) -> Any:
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
    elif isinstance(current, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value)  # not str.isdigit: it is true of "²", which int() refuses
            except ValueError:
                pass
    elif isinstance(current, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
    elif isinstance(current, list):
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list):
            return [str(v) for v in value]
    elif isinstance(current, str):
        if isinstance(value, str):
            return value
    raise ConfigError(f"setting {path!r}: {value!r} is not {_a(type(current))}")


def _a(kind: type) -> str:
    """The type a setting wants, for messages: "an int", "a float", "a list of names"..."""
    return {int: "an int", float: "a number", bool: "a bool (true or false)", str: "a string",
            list: "a comma-separated list"}.get(kind, f"a {kind.__name__}")  # fmt: skip
