"""One settings tree. Defaults live here; TOML in (``--config FILE``), TOML out (``pagetwin config``).

Each section is a dataclass; a TOML table of the same name overrides its fields. Algorithm
sections are named after the algorithm (``[simhash]``, ``[minhash]``, ...); hyphens in names
become underscores in the TOML (``[con_w]``).
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A setting that does not exist or has the wrong type (a usage error: exit 2)."""


@dataclass
class InputSettings:
    max_page_bytes: int = 5_000_000  # bytes of a page body that are parsed; the rest is cut and counted
    max_dom_depth: int = 512  # deeper subtrees are flattened to text (lexbor itself survives deeper)
    sniff_html: bool = True  # look at the body when Content-Type is missing or wrong
    # HTTP statuses of WARC/ARC responses that become pages: codes and classes ("2xx,404") or
    # "any"; the others are skipped, counted as "http-status-NNN" (HTML files, JSONL: no status)
    statuses: str = "2xx"

    def __post_init__(self) -> None:
        from pagetwin.sources.payload import status_filter

        status_filter(self.statuses)  # ConfigError on a bad value


@dataclass
class ExtractSettings:
    templates: bool = True  # learn per-site templates (two passes); False = page-level noise removal only
    site_key: str = "host"  # "host" or "domain" (registered domain)
    min_site_pages: int = 5  # fewer pages than this: the site falls back to page-level removal
    template_share: float = 0.25  # a block on more than this share of a site's pages is template
    # A structural slot's prior is used only when the slot is on this share of the site's pages:
    # a rarer one is a generic path in a folder of many sites' pages (bench/RESULTS.md, "Reposts").
    min_slot_share: float = 0.2
    max_hashes_per_site: int = 200_000  # bound on per-site counts (pruned above it)


@dataclass
class TextSettings:
    lang: str = ""  # force a language (ISO 639-1) instead of detecting it
    keywords: int = 10  # N for `pagetwin keywords` (the keyword algorithms use keywords.n)
    weighting: str = "tfidf"  # keyword weights of `pagetwin keywords`: "tfidf" or "density"


@dataclass
class ExactSettings:
    use_payload_digest: bool = True  # WARC payload digests also make exact edges


@dataclass
class SimHashSettings:
    bits: int = 64
    k: int = 5  # Hamming distance at most k (calibrated: bench/RESULTS.md, near duplicates)
    min_tokens: int = 20  # pages with fewer content words get no SimHash
    shingle: int = 2  # words per feature (1 = single words)
    weighting: str = "tf"  # feature weight: "tf", "logtf" (1 + ln tf) or "binary"
    content_only: bool = True  # features from content words only (stop words dropped)
    blocks: int = 0  # block-table blocks n > k (C(n, k) tables); 0 = fewest giving min_key_bits
    min_key_bits: int = 16  # auto blocks: at least this many fingerprint bits per table key


@dataclass
class MinHashSettings:
    # Calibrated on reposts (spotsigs-dev; bench/RESULTS.md, "Reposts"): word pairs, as a set,
    # J >= 0.25. Profile "near-identical": words as a multiset, J >= 0.9 (copycat judgements).
    threshold: float = 0.25  # Jaccard threshold the LSH bands are derived for and edges must pass
    num_perm: int = 128
    shingle: int = 2  # words per shingle
    min_tokens: int = 10
    seed: int = 1
    content_only: bool = False  # shingles over content words only (stop words dropped)
    multiset: bool = False  # repeats count: estimate weighted (multiset) Jaccard of shingle counts
    fp_weight: float = 0.3  # bands x rows minimise fp_weight * FP area + fn_weight * FN area
    fn_weight: float = 0.7  # (a false positive costs one verification, a false negative a pair)
    containment: float = 0.8  # a candidate below threshold with this share of the smaller page's
    # shingles in the larger is a "partial" edge (merged only with match.merge_partial); 0 = off


@dataclass
class KeywordSettings:
    n: int = 10  # keywords per page
    des_mode: str = "text"  # des: "description", "text" or "auto" (sites reuse one description: RESULTS.md)
    des_bytes: int = 512
    a: float = 0.001  # con-w / sort-w: weight distance threshold (calibrated, bench/RESULTS.md)
    min_keywords: int = 5
    des_min_chars: int = 20  # des: a shorter Des(P) (after normalisation) gives no fingerprint
    tie_quantum: float = 0.001  # con: unit-length weights rounded to this rank equal, then A-Z
    weighting: str = "density"  # keyword weights: "density" measured better than "tfidf" (RESULTS.md)


@dataclass
class SegmentSettings:
    n: int = 8  # segments per page
    m: int = 5  # at least m equal signatures make a duplicate (calibrated, bench/RESULTS.md)
    min_tokens: int = 40


@dataclass
class ChunkSettings:
    chunk_words: int = 8  # k-word windows registered in the inverted index
    threshold: float = 0.9  # relative-frequency similarity for a duplicate (calibrated)
    containment: float = 0.8  # share of the smaller page found in the larger for "partial"
    merge_partial: bool = False  # also cluster chunks' partial copies with their source (as match.merge_partial)
    min_tokens: int = 40
    winnow: int = 8  # index keys: the smallest chunk hash of every window of this many chunks
    max_keys: int = 512  # at most this many index keys per page (the smallest winnowed hashes)
    epsilon: float = 2.5  # SCAM closeness: f_a/f_b + f_b/f_a below this counts a chunk as shared


@dataclass
class ImageSettings:
    min_images: int = 3
    max_words_per_image: float = 30.0  # image-dominant when main words / images is below this
    threshold: float = 0.7  # set Jaccard of image identities
    phash_k: int = 6  # two perceptual hashes within this Hamming distance are one image
    key_k: int = 4  # candidate keys find phashes within this distance (block tables; <= phash_k)
    max_images: int = 200  # images per page considered (the rest ignored, counted in features)
    substantial_words: int = 50  # both pages with this many main words: their text must agree too
    min_text_jaccard: float = 0.5  # ... token-set Jaccard of at least this
    min_lang_words: int = 10  # captions this long on both pages make their languages count
    translations_are_duplicates: bool = False  # same images, text in different languages


@dataclass
class MatchSettings:
    # Chosen by measurement (bench/RESULTS.md, "Seed algorithms" and "Near duplicates"):
    # exact digests, then con-w (the only text method that works on very short pages), then
    # MinHash (the best single similarity on longer pages). Mean F1 over copycat, LLVM and
    # LLVM-with-text 0.927, against 0.918 for exact + simhash + minhash.
    algorithms: list[str] = field(default_factory=lambda: ["exact", "con-w", "minhash"])
    max_bucket: int = 200  # larger candidate buckets are compared only to near neighbours, counted
    guard: bool = True  # anti-chaining: members must be related to every page of a verified core
    # ... related = a similarity of at least this share of the algorithm's threshold (1.0: the
    # pair must verify). Reposts are each near some copies, not all (bench/RESULTS.md, "Reposts").
    guard_share: float = 0.5
    # Partial edges (one page contains most of the other: a teaser, an article inside a longer
    # page) are written to pairs.jsonl as "partial"; they join clusters only when this is true.
    merge_partial: bool = False


@dataclass
class ClusterSettings:
    keep: str = "longest"  # "longest" (most text, then earliest, then smallest id), "earliest", "first"


@dataclass
class RunSettings:
    workers: int = 0  # 0 = all cores
    progress: bool = True  # progress bar when stderr is a terminal
    chunk_pages: int = 16  # pages per task sent to a worker
    # Pass 2 reads pass 1's parsed pages from a temporary file instead of parsing again
    # (disk: about 5 KB a page; runners.spill).
    reuse_parse: bool = True
    temp_dir: str = ""  # where temporary files go ("" = the system's, $TMPDIR)


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
        return _merge(cls(), data, "")

    @classmethod
    def load(cls, path: str | Path | None, profile: str = "") -> Settings:
        """The defaults, with ``profile`` applied (``PROFILES``), then the TOML file at ``path``."""
        base = cls.with_profile(profile) if profile else cls()
        if path is None:
            return base
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


def _merge(obj: Any, data: dict[str, Any], where: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"[{where}] must be a table")
    known = {f.name: f for f in fields(obj)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        path = f"{where}.{key}" if where else key
        if name not in known:
            raise ConfigError(f"unknown setting {path!r}")
        current = getattr(obj, name)
        if is_dataclass(current):
            changes[name] = _merge(current, value, path)
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
        if isinstance(value, str) and value.lstrip("-").isdigit():
            return int(value)
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
    raise ConfigError(f"setting {path!r}: {value!r} is not a {type(current).__name__}")
