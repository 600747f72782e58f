"""Text-analysis throughput per language on real pages (issue 4).

For each language: characters per CPU second (time.process_time, so other load on the machine
does not count) of TextAnalyzer.analyze (language identification,
segmentation, morphology, stop words) plus top_keywords (tf-idf with document frequencies
fitted beforehand on the same pages), on a single core; also the mean token length and a
sample of tokens (the Chinese pages must yield words), and py3langid's agreement with the
language the source is known to be in.

Pages: ../shared/data (chinese_wce gold text, resiliparse and servo crawls, scrapinghub gold
articles) and Debian documentation packages (debian-faq-{ru,ja,zh-cn}, debian-faq, gimp-help-
{ru,ja}) fetched once with apt-get download into --docs (default ~/.cache/pagetwin-bench/docs).
Text is extracted simply (selectolax .text() of <body> without script/style): the real
extractor is a separate component.

    .venv/bin/python bench/text_speed.py [--per-source 60] [--no-docs] [--json OUT] [--kernels]

``--kernels`` (issue 16) also times, on the same pages, the native kernels against their
pure-Python references (word scan + lookups: ``analyze`` vs ``analyze_reference``; language
identification: the native DFA walk vs py3langid's ``classify``), and the language identifier
on shorter samples (the first 4,000 / 2,000 / 1,000 / 500 characters): accuracy against the
source's language, agreement with the 4,000-character label, and characters per CPU second;
and pages per CPU second of py3langid's scoring against the native gather of its rows, and of
MinHash.features native against its numpy references.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
_CJK_WORD = __import__("regex").compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\u30fc]+")
DOC_PACKAGES = ["debian-faq", "debian-faq-ru", "debian-faq-ja", "debian-faq-zh-cn", "gimp-help-ru", "gimp-help-ja"]


def html_text(html: str) -> str:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    for node in tree.css("script, style, noscript"):
        node.decompose()
    body = tree.body or tree.root
    return " ".join(body.text(separator=" ").split()) if body is not None else ""


def _decode_body(body: bytes, encoding: str) -> bytes:
    encoding = (encoding or "").lower().strip()
    try:
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "br":
            import brotli

            return brotli.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except Exception:  # noqa: BLE001 - a bad body is skipped by the caller
        return b""
    return body


def warc_html_pages(path: Path):
    """(url, text) of each HTML response in a WARC file."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    from pagetwin.html.parse import decode_html, looks_like_html

    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True):
            headers = rec.http_headers
            ctype = (headers.get("Content-Type") or "") if headers else ""
            if headers is None or "html" not in ctype.lower():
                continue
            body = _decode_body(rec.reader.read(), headers.get("Content-Encoding") or "")
            if not looks_like_html(body):
                continue  # JSONP and scripts served as text/html
            charset = None
            if "charset=" in ctype.lower():
                charset = ctype.lower().split("charset=")[-1].split(";")[0].strip()
            html, _, _ = decode_html(body, charset)
            yield rec.headers.get("WARC-Target-URI"), html_text(html)


def fetch_docs(docs_dir: Path, packages=DOC_PACKAGES) -> Path:
    """apt-get download + dpkg -x the Debian documentation packages into docs_dir (once)."""
    docs_dir.mkdir(parents=True, exist_ok=True)
    root = docs_dir / "root"
    for pkg in packages:
        mark = docs_dir / f"{pkg}.done"
        if mark.exists():
            continue
        subprocess.run(["apt-get", "download", pkg], cwd=docs_dir, check=True, capture_output=True)
        deb = sorted(docs_dir.glob(f"{pkg}_*.deb"))[-1]
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
        deb.unlink()
        mark.touch()
    return root


def _html_files(folder: Path, limit: int):
    files = sorted(p for p in folder.rglob("*.html") if p.is_file())
    for p in files[:limit]:
        yield str(p), html_text(p.read_text("utf-8", errors="replace"))


def corpus(docs_root: Path | None = None, per_source: int = 60) -> dict[str, list[tuple[str, str, str]]]:
    """{lang: [(source, id, text), ...]} of real pages; the language is known from the source."""
    out: dict[str, list[tuple[str, str, str]]] = {}

    def add(lang, source, pid, text):
        if len(text) >= 200:
            out.setdefault(lang, []).append((source, pid, text))

    if DATA.exists():
        wce = DATA / "extraction" / "chinese_wce" / "cleaned"
        for p in sorted(wce.glob("*.txt"))[:per_source]:
            add("zh", "chinese_wce", p.name, p.read_text("utf-8", errors="replace"))
        for url, text in warc_html_pages(DATA / "warc" / "resiliparse_warcfile.warc.gz"):
            host = url.split("/")[2]
            lang = {"01spb.ru": "ru", "0900-hovenier.nl": "nl", "06.live-radsport.ch": "de", "037426.cn": "en"}.get(host, "zh")
            add(lang, "resiliparse", url, text)
        for name in ["Sina", "Sohu", "Baidu", "JD", "Taobao", "Tmall", "qq"]:
            p = DATA / "warc" / "servo" / f"{name}.warc.gz"
            if p.exists():
                for url, text in warc_html_pages(p):
                    add("zh", "servo", url, text)
        p = DATA / "warc" / "servo" / "VK.warc.gz"
        if p.exists():
            for url, text in warc_html_pages(p):
                add("ru", "servo", url, text)
        gt = DATA / "extraction" / "scrapinghub" / "ground-truth.json"
        if gt.exists():
            for pid, item in sorted(json.loads(gt.read_text("utf-8")).items())[:per_source]:
                add("en", "scrapinghub", pid, item.get("articleBody") or "")
    if docs_root is not None and docs_root.exists():
        faq = docs_root / "usr" / "share" / "doc" / "debian" / "FAQ"
        for lang, sub in [("ru", "ru"), ("ja", "ja"), ("zh", "zh-cn")]:
            for pid, text in _html_files(faq / sub, per_source):
                add(lang, f"debian-faq-{sub}", pid, text)
        for pid, text in [(str(p), html_text(p.read_text("utf-8", "replace"))) for p in sorted(faq.glob("*.en.html"))]:
            add("en", "debian-faq", pid, text)
        for lang in ["ru", "ja"]:
            for pid, text in _html_files(docs_root / "usr" / "share" / "gimp" / "2.0" / "help" / lang, per_source):
                add(lang, f"gimp-help-{lang}", pid, text)
    return out


def _rate(fn, texts) -> float:
    import time

    t0 = time.process_time()
    for text in texts:
        fn(text)
    return sum(map(len, texts)) / (time.process_time() - t0)


def compare_segmenters(pages) -> dict[str, float]:
    """Characters per second of the candidate segmenters on the same pages (those installed)."""
    out: dict[str, float] = {}
    zh = [t for _, _, t in pages.get("zh", [])]
    ja = [t for _, _, t in pages.get("ja", [])]
    if zh:
        import rjieba

        out["zh rjieba.cut"] = _rate(lambda t: rjieba.cut(t, True), zh)
        try:
            import jieba

            jieba.setLogLevel(60)
            jieba.initialize()
            out["zh jieba.lcut"] = _rate(jieba.lcut, zh)
        except ImportError:
            pass
    if ja:
        try:
            from sudachipy import Dictionary, SplitMode

            tok = Dictionary(dict="core").tokenizer(mode=SplitMode.C)
            out["ja sudachi (core, mode C)"] = _rate(lambda t: [m.normalized_form() for i in range(0, len(t), 12000) for m in tok.tokenize(t[i : i + 12000])], ja)
        except ImportError:
            pass
        try:
            import fugashi

            tagger = fugashi.Tagger()
            out["ja fugashi (unidic-lite)"] = _rate(lambda t: [w.feature.lemma for w in tagger(t)], ja)
        except (ImportError, RuntimeError):
            pass
    for name, rate in out.items():
        print(f"{name:28} {rate:12.0f} chars/s")
    return {k: round(v) for k, v in out.items()}


def evaluate_ending_table(docs_root: Path) -> dict[str, float]:
    """Held-out check of the learned Russian ending table: learn it from GIMP help (ru), then
    for the Debian FAQ (ru) words GIMP help does not contain and the dictionary knows, the
    share whose predicted ending equals the dictionary's; Snowball's Russian stemmer on the
    same words for comparison."""
    import Stemmer

    from pagetwin.text.morph import build_endings, corpus_words, ending_labeler

    gimp = sorted((docs_root / "usr/share/gimp/2.0/help/ru").rglob("*.html"))
    faq = sorted((docs_root / "usr/share/doc/debian/FAQ/ru").glob("*.html"))
    if not gimp or not faq:
        return {}
    table = build_endings(gimp, "ru")
    train = set(corpus_words(gimp))
    label = ending_labeler("ru")
    snowball = Stemmer.Stemmer("russian")
    n = table_hit = snowball_hit = 0
    for w in corpus_words(faq):
        if w in train or len(w) <= table.min_stem:
            continue
        gold = label(w)
        if gold is None:
            continue
        n += 1
        table_hit += table.ending(w) == gold
        snowball_hit += w[len(snowball.stemWord(w)) :] == gold if w.startswith(snowball.stemWord(w)) else 0
    out = {"held_out_words": n, "table_accuracy": round(table_hit / n, 3), "snowball_accuracy": round(snowball_hit / n, 3), "table_endings": len(table.n_end_)}
    print(f"ending table (learned on gimp-help-ru, {out['table_endings']} endings) on {n} unseen debian-faq-ru words: "
          f"exact ending {out['table_accuracy']:.1%}; Snowball russian {out['snowball_accuracy']:.1%}")
    return out


def _cpu_rate(fn, items, chars) -> float:
    import time

    t0 = time.process_time()
    for item in items:
        fn(*item)
    return chars / max(time.process_time() - t0, 1e-9)


def compare_kernels(pages) -> dict:
    """Native kernels against their pure-Python references, and the language identifier on
    shorter samples (module docstring, ``--kernels``)."""
    from pagetwin.text import lang as lang_module
    from pagetwin.text.analyze import TextAnalyzer

    items = [(lang, text) for lang, rows in pages.items() for _, _, text in rows]
    chars = sum(len(t) for _, t in items)
    analyzer = TextAnalyzer()
    for lang, text in items:  # warm the word caches, as a worker is after its first pages
        analyzer.analyze(text, lang)
    out = {
        "pages": len(items),
        "chars": chars,
        "analyze_reference_chars_per_s": round(_cpu_rate(analyzer.analyze_reference, [(t, l) for l, t in items], chars)),
        "analyze_native_chars_per_s": round(_cpu_rate(analyzer.analyze, [(t, l) for l, t in items], chars)),
        "langid": {},
    }
    full = [lang_module.detect_language(t) for _, t in items]
    sampled = lambda n: sum(min(len(t), n) for _, t in items)  # noqa: E731
    ref = [(t,) for _, t in items]
    out["langid"]["py3langid classify, 4000 chars"] = {
        "chars_per_s": round(_cpu_rate(lang_module.detect_language_reference, ref, sampled(4000))),
        "accuracy": round(sum(lang_module.detect_language_reference(t) == l for l, t in items) / len(items), 4),
    }
    for n in (4000, 2000, 1000, 500):
        labels = [lang_module.detect_language(t[:n]) for _, t in items]
        out["langid"][f"native DFA, {n} chars"] = {
            "chars_per_s": round(_cpu_rate(lambda t, n=n: lang_module.detect_language(t[:n]), ref, sampled(n))),
            "accuracy": round(sum(d == l for d, (l, _) in zip(labels, items)) / len(items), 4),
            "same_as_4000": round(sum(a == b for a, b in zip(labels, full)) / len(items), 4),
        }
    out["pages_per_cpu_s"] = _fingerprint_kernels(analyzer, items)
    return out


def _pages_rate(fn, items) -> float:
    import time

    t0 = time.process_time()
    for item in items:
        fn(item)
    return round(len(items) / max(time.process_time() - t0, 1e-9), 1)


def _fingerprint_kernels(analyzer, items) -> dict:
    """Pages per CPU second of py3langid's scoring (its _sparse_score vs the native gather of
    float16 rows) and of MinHash.features (native _sketch vs the numpy references)."""
    from pagetwin.config import MinHashSettings
    from pagetwin.fingerprints import hashing
    from pagetwin.fingerprints.minhash import MinHash
    from pagetwin.model import Doc
    from pagetwin.text import lang as lang_module

    identifier = lang_module._get_identifier()
    samples = [identifier._encode(t[: lang_module.SAMPLE_CHARS]) for _, t in items]
    visits = [v for v in (lang_module._counter.visits(e) for e in samples) if v]
    arrays = [a for a in (lang_module._counter.visit_arrays(e) for e in samples) if len(a[0])]
    docs = []
    for i, (lang, text) in enumerate(items):
        a = analyzer.analyze(text, lang)
        docs.append(Doc(page_id=str(i), url="", host="", crawl_date="", text=text, lang=lang, tokens=a.tokens, stop=a.stop))
    out = {
        "langid scores, py3langid": _pages_rate(lambda v: identifier._sparse_score(v, identifier.nb_ptc), visits),
        "langid scores, native gather": _pages_rate(lambda a: lang_module._scorer(*a), arrays),
    }
    native = MinHash(MinHashSettings())
    native.features(docs[0])
    out["minhash features, native"] = _pages_rate(native.features, docs)
    sketch, hashing._sketch = hashing._sketch, None
    hashing._SKETCH_MISSING = "switched off to time the references"  # said once in the warning
    try:
        reference = MinHash(MinHashSettings())
        reference.features(docs[0])
        out["minhash features, numpy reference"] = _pages_rate(reference.features, docs)
    finally:
        hashing._sketch = sketch
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse
    import statistics
    import sys
    import time

    from pagetwin.config import TextSettings
    from pagetwin.text.analyze import TextAnalyzer
    from pagetwin.text.keywords import DocFreq, top_keywords
    from pagetwin.text.lang import detect_language

    ap = argparse.ArgumentParser()
    ap.add_argument("--per-source", type=int, default=60, help="pages per source (default 60)")
    ap.add_argument("--docs", type=Path, default=Path.home() / ".cache" / "pagetwin-bench" / "docs")
    ap.add_argument("--no-docs", action="store_true", help="do not fetch the Debian documentation packages")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here")
    ap.add_argument("--kernels", action="store_true", help="also time the native kernels against their references and the language identifier on shorter samples")
    ap.add_argument("--compare", action="store_true", help="also time the alternatives (jieba vs rjieba, Sudachi vs fugashi) and check the ending table on held-out words")
    args = ap.parse_args(argv)

    docs_root = None
    if not args.no_docs:
        try:
            docs_root = fetch_docs(args.docs)
        except Exception as exc:  # noqa: BLE001 - no apt here: bench the shared data only
            print(f"Debian documentation not fetched ({exc}); shared data only", file=sys.stderr)
    pages = corpus(docs_root, args.per_source)
    if not pages:
        print("no pages found (../shared/data missing?)", file=sys.stderr)
        return 1

    analyzer = TextAnalyzer(TextSettings())
    # Load every resource before timing (one-off costs, reported separately).
    t0 = time.perf_counter()
    for lang in pages:
        analyzer.analyze(pages[lang][0][2][:2000], lang)
    load_s = time.perf_counter() - t0

    results = {"load_seconds": round(load_s, 2), "languages": {}}
    print(f"resources loaded in {load_s:.2f} s")
    print(f"{'lang':5} {'pages':>5} {'chars':>9} {'chars/cpu-s':>11} {'tokens/cpu-s':>12} {'mean tok':>8} {'langid ok':>9}")
    for lang, items in sorted(pages.items(), key=lambda kv: -len(kv[1])):
        texts = [t for _, _, t in items]
        chars = sum(map(len, texts))
        # Document frequencies are pass 1: fitted before the timed pass 2.
        analyses = [analyzer.analyze(t) for t in texts]
        doc_freq = DocFreq()
        for a in analyses:
            doc_freq.fit(a.tokens)
        fresh = TextAnalyzer(TextSettings())  # cold word caches, as in a new worker
        fresh.analyze(texts[0][:2000], lang)
        t0 = time.process_time()
        n_tokens = 0
        for text in texts:
            a = fresh.analyze(text)
            top_keywords(a, 10, "tfidf", doc_freq)
            n_tokens += len(a.tokens)
        dt = time.process_time() - t0
        t0 = time.process_time()
        detected = [detect_language(t) for t in texts]
        langid_s = time.process_time() - t0
        agree = sum(d == lang for d in detected)
        content = [tok for a in analyses for tok, s in zip(a.surface, a.stop) if not s]
        mean_len = statistics.fmean(len(t) for a in analyses for t in a.surface) if n_tokens else 0.0
        row = {
            "pages": len(texts), "chars": chars, "chars_per_s": round(chars / dt), "tokens_per_s": round(n_tokens / dt),
            "mean_token_chars": round(mean_len, 2), "langid_agree": f"{agree}/{len(texts)}",
            "langid_chars_per_s": round(chars / langid_s) if langid_s else None,
            "sources": sorted({s for s, _, _ in items}),
        }
        if lang in ("zh", "ja"):
            # Words written in Han/kana only: Latin ids and numbers of the crawled pages aside.
            cjk = _CJK_WORD.fullmatch
            per_source: dict[str, list[str]] = {}
            for (src, _, _), a in zip(items, analyses):
                per_source.setdefault(src, []).extend(w for w in a.surface if cjk(w))
            words = [w for ws in per_source.values() for w in ws]
            row["cjk_tokens"] = len(words)
            row["mean_cjk_token_chars"] = round(statistics.fmean(map(len, words)), 2) if words else 0.0
            row["mean_cjk_token_chars_by_source"] = {s: round(statistics.fmean(map(len, w)), 2) for s, w in per_source.items() if w}
            row["single_char_share"] = round(sum(len(w) == 1 for w in words) / max(len(words), 1), 3)
            row["longest"] = sorted(set(words), key=lambda w: (-len(w), w))[:5]
            row["sample"] = [w for w in content if cjk(w)][1000:1040]
        results["languages"][lang] = row
        print(f"{lang:5} {len(texts):5} {chars:9} {chars / dt:10.0f} {n_tokens / dt:12.0f} {mean_len:8.2f} {agree:4}/{len(texts):<4}")
    for lang in ("zh", "ja"):
        if lang in results["languages"]:
            row = results["languages"][lang]
            print(
                f"{lang}: {row['cjk_tokens']} Han/kana tokens, mean length {row['mean_cjk_token_chars']} chars "
                f"(by source {row['mean_cjk_token_chars_by_source']}), single-char share {row['single_char_share']}, "
                f"longest {row['longest']}"
            )
            print(f"{lang} sample: {' '.join(row['sample'])}")
    if args.compare:
        results["segmenters"] = compare_segmenters(pages)
        if docs_root is not None:
            results["ending_table"] = evaluate_ending_table(docs_root)
    if args.kernels:
        results["kernels"] = kernels = compare_kernels(pages)
        print(f"kernels on {kernels['pages']} pages, {kernels['chars']} chars: analyze "
              f"{kernels['analyze_reference_chars_per_s']:,} (reference) vs {kernels['analyze_native_chars_per_s']:,} "
              "(native) chars/cpu-s")
        for name, row in kernels["langid"].items():
            print(f"  {name:32} {row['chars_per_s']:>11,} chars/cpu-s  accuracy {row['accuracy']:.4f}"
                  + (f"  same label as 4000: {row['same_as_4000']:.4f}" if "same_as_4000" in row else ""))
        for name, rate in kernels["pages_per_cpu_s"].items():
            print(f"  {name:36} {rate:>10,} pages/cpu-s")
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
