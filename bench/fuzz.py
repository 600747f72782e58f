"""Fuzz the readers and the dedup path at length (issue 14): mutated WARC, ARC, JSONL and HTML
files, each read by ``sources.iter_pages`` and, every ``--dedup-every`` inputs, run through
``pagetwin dedup`` (``pagetwin.cli.main``, in the worker process, into a fresh folder).

Each input is checked: every record is accounted for (``records_total == pages_read + images +
skipped``, and the pages yielded are the pages counted), no exception escapes (none reaches the
readers' last guard, "reading stopped", nor the dedup command), the per-file messages are
bounded, and it is read within ``--timeout`` seconds (a hung worker is killed and the input
kept). The pages of HTML and JSONL inputs (and a sample of the others) are also decoded and
parsed by the per-page kernel (``pipeline.Worker.parse``); an exception there is reported with
its input and traceback (the pipeline catches it and counts the page as extract-error).

The seed corpus (``seed_corpus``) holds small clean files of each kind and the targeted cases
of issue 14: version-line floods, Content-Length 999999999, every Content-Length off by +-7, an
ARC with huge length fields, a WARC gzipped as one stream, bogus charsets, deep nesting.
Mutations (``mutate``): byte flips, truncations, duplicated, removed and inserted spans, huge or
shifted length fields, deep nesting, bogus charsets; gzip kinds are mutated before compression
(kept readable as gzip) or after (damaged gzip).

    nice -n 10 python bench/fuzz.py --inputs 100000 --out /tmp/fuzz.json

Failing inputs are written to ``--keep`` (default /tmp/pagetwin-fuzz-failures) with a note.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

MAX_MESSAGES = 20  # per-file messages a summary may hold for one input (the readers cap theirs)
BOGUS_CHARSETS = [b"idna", b"punycode", b"utf-8\x00", b"x-no-such-charset", b"utf-7", b"utf-16", b"rot13",
                  b"base64", b"zlib", b"hex", b"uu", b"bz2", b"", b"\xff\xfe", b"utf-8'", b"cp1251;;", b"a" * 300]
SUFFIX = {"warc": ".warc", "warc.gz": ".warc.gz", "warc.gz1": ".warc.gz", "arc": ".arc", "arc.gz": ".arc.gz",
          "arc.gz1": ".arc.gz", "jsonl": ".jsonl", "html": ".html"}


# -- seed corpus ----------------------------------------------------------------------------


def _html(title: str, words: int = 40, charset: str | None = None) -> bytes:
    meta = f'<meta charset="{charset}">' if charset else ""
    text = " ".join(f"{title.lower()}w{i}" for i in range(words))
    return f"<!DOCTYPE html><html><head>{meta}<title>{title}</title></head><body><nav>Home | About</nav><p>{text}</p></body></html>".encode()


def _warc_records(n: int = 4) -> list[bytes]:
    """Plain WARC records: warcinfo, request, responses (one gzip-encoded, one with a charset),
    a revisit, an image, a metadata record."""
    from pagetwin.outputs.warc import WarcWriter

    out = []

    def one(write) -> None:
        buf = io.BytesIO()
        with WarcWriter(buf, gzip=False) as w:
            write(w)
        out.append(buf.getvalue())

    one(lambda w: w.write_warcinfo("fuzz.warc", {"software": "pagetwin-fuzz"}))
    one(lambda w: w.write_request("https://example.org/"))
    for i in range(n):
        body = _html(f"Page{i}")
        if i == 1:
            one(lambda w, b=body: w.write_response("https://example.org/1", gzip.compress(b),
                                                     http_headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")]))
        else:
            one(lambda w, b=body, i=i: w.write_response(f"https://example.org/{i}", b, content_type="text/html; charset=utf-8"))
    one(lambda w: w.write_revisit("https://example.org/0", "sha1:ABCDEF", "https://example.org/0", "2024-01-01T00:00:00Z"))
    one(lambda w: w.write_response("https://example.org/x.png", b"\x89PNG\r\n\x1a\n" + bytes(64), content_type="image/png"))
    return out


def _relength(record: bytes, new) -> bytes:
    return re.sub(rb"(?m)^Content-Length: (\d+)\r$", lambda m: b"Content-Length: %d\r" % new(int(m.group(1))), record, count=1)


def _arc_records(n: int = 4) -> list[bytes]:
    info = b"1 0 pagetwin\nURL IP-address Archive-date Content-type Archive-length\n"
    recs = [f"filedesc://fuzz.arc 0.0.0.0 20080430204825 text/plain {len(info)}\n".encode() + info + b"\n"]
    for i in range(n):
        payload = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + _html(f"Arc{i}")
        recs.append(f"http://example.org/{i} 1.2.3.4 20080430204826 text/html {len(payload)}\n".encode() + payload + b"\n")
    return recs


def seed_corpus() -> dict[str, tuple[str, list[bytes] | bytes]]:
    """name -> (kind, content): records (joined, or one gzip member each for "warc.gz" and
    "arc.gz"; gzipped as one stream for "warc.gz1" and "arc.gz1") or the file's bytes."""
    warc, arc = _warc_records(), _arc_records()
    seeds: dict[str, tuple[str, list[bytes] | bytes]] = {}
    for kind in ("warc", "warc.gz", "warc.gz1"):
        seeds[f"clean-{kind}"] = (kind, warc)
        seeds[f"huge-length-{kind}"] = (kind, [_relength(r, lambda n: 999_999_999) for r in warc])
        seeds[f"length-plus7-{kind}"] = (kind, [_relength(r, lambda n: n + 7) for r in warc])
        seeds[f"length-minus7-{kind}"] = (kind, [_relength(r, lambda n: max(0, n - 7)) for r in warc])
    seeds["version-lines-warc"] = ("warc", [b"WARC/1.0\r\n" * 3000])
    seeds["version-lines-then-records-warc"] = ("warc", [b"WARC/1.0\r\n" * 500] + warc)
    seeds["bogus-charsets-warc.gz"] = ("warc.gz", [_charset_record(c) for c in BOGUS_CHARSETS[:8]])
    for kind in ("arc", "arc.gz", "arc.gz1"):
        seeds[f"clean-{kind}"] = (kind, arc)
        seeds[f"huge-length-{kind}"] = (kind, [arc[0]] + [re.sub(rb" \d+\n", b" 999999999\n", r, count=1) for r in arc[1:]])
    lines = [json.dumps({"id": f"d{i}", "url": f"https://example.org/{i}", "html": _html(f"Json{i}").decode(),
                         "metadata": {"n": i}}).encode() for i in range(3)]
    lines.append(json.dumps({"id": "t", "text": "plain text only " * 20}).encode())
    lines.append(b'{"url": "https://example.org/bad", "html": 5}')
    seeds["clean-jsonl"] = ("jsonl", b"\n".join(lines) + b"\n")
    seeds["clean-html"] = ("html", _html("Html", charset="utf-8"))
    seeds["deep-html"] = ("html", b"<html><body>" + b"<div>" * 6000 + b"deep" + b"</div>" * 10 + b"</body></html>")
    seeds["bogus-charset-html"] = ("html", _html("Bogus", charset="idna"))
    return seeds


def _charset_record(charset: bytes) -> bytes:
    from pagetwin.outputs.warc import WarcWriter

    buf = io.BytesIO()
    with WarcWriter(buf, gzip=False) as w:
        w.write_response("https://example.org/cs", _html("Charset") + "é".encode("utf-8"),
                         http_headers=[("Content-Type", "text/html; charset=" + charset.decode("latin-1"))])
    return buf.getvalue()


def render(kind: str, content: list[bytes] | bytes) -> bytes:
    """The file's bytes of a seed (or a mutated seed)."""
    if isinstance(content, bytes):
        return content
    if kind in ("warc.gz", "arc.gz"):
        return b"".join(gzip.compress(r, mtime=0) for r in content)
    joined = b"".join(content)
    return gzip.compress(joined, mtime=0) if kind.endswith(".gz1") else joined


# -- mutations ------------------------------------------------------------------------------


def _op(data: bytearray, rng: random.Random) -> None:
    n = len(data)
    at = rng.randrange(n) if n else 0
    op = rng.choice(["flip", "flip", "truncate", "dup", "remove", "insert", "length", "length", "nest", "charset"])
    if op == "flip" and n:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(n)] ^= 1 << rng.randrange(8)
    elif op == "truncate":
        del data[at:]
    elif op == "dup":
        span = rng.randint(1, 600)
        data[at:at] = data[at : at + span] * rng.randint(1, 4)
    elif op == "remove":
        del data[at : at + rng.randint(1, 400)]
    elif op == "insert":
        junk = rng.choice([bytes(rng.randrange(256) for _ in range(rng.randint(1, 80))), b"WARC/1.0\r\n" * rng.randint(1, 50),
                           b"\r\n\r\n", b"http://x.org/ 1.2.3.4 20080430204826 text/html 999999\n", b"\x1f\x8b\x08\x00"])
        data[at:at] = junk
    elif op == "length":
        _length_op(data, rng)
    elif op == "nest":
        data[at:at] = rng.choice([b"<div>", b"<b><i>", b"<table><tr><td>", b"<!--"]) * rng.randint(100, 4000)
    else:
        _charset_op(data, rng)


def _length_op(data: bytearray, rng: random.Random) -> None:
    fields = [m.span(1) for m in re.finditer(rb"Content-Length: (\d+)", data)] + [m.span(1) for m in re.finditer(rb" (\d+)\n", data)]
    if not fields:
        return
    lo, hi = rng.choice(fields)
    old = int(data[lo:hi] or b"0")
    new = rng.choice([0, 1, 999_999_999, 2**63, old + 7, max(0, old - 7), old * 2, rng.randrange(1 << 20)])
    data[lo:hi] = str(new).encode()


def _charset_op(data: bytearray, rng: random.Random) -> None:
    spots = [m.span(1) for m in re.finditer(rb"charset=([^\s\";>]*)", data)]
    bogus = rng.choice(BOGUS_CHARSETS)
    if spots:
        lo, hi = rng.choice(spots)
        data[lo:hi] = bogus
    else:
        at = data.find(b"<head>")
        if at >= 0:
            data[at + 6 : at + 6] = b'<meta charset="' + bogus + b'">'


def mutate(kind: str, content: list[bytes] | bytes, rng: random.Random) -> bytes:
    """A mutated file of a seed: 1-4 operations, on the records before compression (mostly)
    or on the file's bytes (a damaged gzip)."""
    ops = rng.randint(1, 4)
    if not isinstance(content, bytes) and kind.endswith((".gz", ".gz1")) and rng.random() < 0.7:
        records = [bytearray(r) for r in content]
        for _ in range(ops):
            target = rng.randrange(len(records))
            _op(records[target], rng)
        return render(kind, [bytes(r) for r in records])
    data = bytearray(render(kind, content))
    for _ in range(ops):
        _op(data, rng)
    return bytes(data)


# -- checks ---------------------------------------------------------------------------------


def check_read(path: str, parse: bool) -> dict:
    """Read ``path`` with sources.iter_pages: its counts and the problems found (an empty
    list when none)."""
    from pagetwin.config import InputSettings, Settings
    from pagetwin.sources import SourceStats, iter_pages

    stats = SourceStats()
    problems: list[str] = []
    parse_errors: list[str] = []
    try:
        pages = list(iter_pages([path], InputSettings(max_page_bytes=1 << 16), stats, want_images=True))
    except Exception:  # noqa: BLE001 - what the fuzz looks for
        return {"records": 0, "pages": 0, "skips": 0, "problems": ["exception: " + traceback.format_exc()], "parse_errors": []}
    if not stats.consistent():
        problems.append(f"accounting: {stats.records_total} records != {stats.pages_read} pages + {stats.images} images + {sum(stats.skipped.values())} skips")
    if len(pages) != stats.pages_read + stats.images:
        problems.append(f"{len(pages)} pages yielded, {stats.pages_read + stats.images} counted")
    problems.extend(f"guard: {e}" for e in stats.errors if "reading stopped" in e)
    if len(stats.errors) > MAX_MESSAGES:
        problems.append(f"{len(stats.errors)} messages for one file")
    if parse:
        from pagetwin.pipeline import Worker

        worker = Worker(Settings())
        for page in pages:
            if page.kind == "response":
                try:
                    worker.parse(page)
                except Exception:  # noqa: BLE001
                    parse_errors.append(traceback.format_exc(limit=6))
    return {"records": stats.records_total, "pages": len(pages), "skips": sum(stats.skipped.values()),
            "problems": problems, "parse_errors": parse_errors}


def check_dedup(path: str) -> dict:
    """Run ``pagetwin dedup`` on ``path`` into a fresh folder: its exit status and the problems
    found (an exception, an undocumented status, a summary whose counts do not add up)."""
    from pagetwin.cli import main

    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        sink = io.StringIO()
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                status = main(["dedup", path, "--out", out, "--workers", "1"])
        except SystemExit as exc:
            status = exc.code
        except Exception:  # noqa: BLE001
            return {"exit": None, "problems": ["dedup exception: " + traceback.format_exc()]}
        if status not in (0, 1, 3):
            problems.append(f"dedup exit status {status}: {sink.getvalue()[-300:]}")
        summary = os.path.join(out, "summary.json")
        if os.path.exists(summary):
            rec = json.load(open(summary)).get("records", {})
            if rec and rec.get("records_total") != rec.get("pages_read", 0) + rec.get("images", 0) + rec.get("skipped_total", 0):
                problems.append(f"summary records do not add up: {rec}")
        elif status in (0, 3):
            problems.append("no summary.json")
    return {"exit": status, "problems": problems}


def _worker(conn) -> None:
    while True:
        job = conn.recv()
        if job is None:
            return
        path, parse, dedup = job
        started = time.perf_counter()
        result = check_read(path, parse)
        if dedup:
            d = check_dedup(path)
            result["exit"] = d["exit"]
            result["problems"] += d["problems"]
        result["seconds"] = time.perf_counter() - started
        conn.send(result)


class _Runner:
    """One worker process reading inputs; restarted when an input hangs it."""

    def __init__(self) -> None:
        self.ctx = mp.get_context("spawn")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()

    def run(self, job, timeout: float) -> dict | None:
        """The result, or None when the input took longer than ``timeout`` (the worker is
        killed and restarted)."""
        self.conn.send(job)
        if self.conn.poll(timeout):
            try:
                return self.conn.recv()
            except EOFError:
                pass
        self.proc.kill()
        self.proc.join()
        self._start()
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError, BrokenPipeError):
            self.conn.send(None)
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()


# -- the run --------------------------------------------------------------------------------


def run(inputs: int, seed: int, timeout: float, dedup_every: int, parse_every: int, keep: Path, log=print) -> dict:
    seeds = seed_corpus()
    names = sorted(seeds)
    rng = random.Random(seed)
    figures: dict = {"inputs": 0, "by_kind": Counter(), "records": 0, "pages": 0, "skips": 0, "hangs": 0,
                     "failures": 0, "dedup_runs": 0, "dedup_exits": Counter(), "parse_errors": 0, "max_seconds": 0.0,
                     "failure_examples": [], "parse_error_examples": []}
    times: list[float] = []
    runner = _Runner()
    started = time.time()
    tmp = Path(tempfile.mkdtemp(prefix="pagetwin-fuzz-"))
    try:
        for i in range(inputs):
            name = names[i % len(names)] if i < len(names) else rng.choice(names)
            kind, content = seeds[name]
            data = render(kind, content) if i < len(names) else mutate(kind, content, rng)  # the seeds themselves first
            path = tmp / f"input{SUFFIX[kind]}"
            path.write_bytes(data)
            dedup = dedup_every > 0 and i % dedup_every == 0
            parse = kind in ("html", "jsonl") or (parse_every > 0 and i % parse_every == 0)
            result = runner.run((str(path), parse, dedup), timeout * (4 if dedup else 1))
            figures["inputs"] += 1
            figures["by_kind"][kind] += 1
            if result is None:
                figures["hangs"] += 1
                _keep(keep, i, name, data, SUFFIX[kind], [f"no answer within {timeout} s"], figures)
                continue
            times.append(result["seconds"])
            for key in ("records", "pages", "skips"):
                figures[key] += result[key]
            if dedup:
                figures["dedup_runs"] += 1
                figures["dedup_exits"][str(result.get("exit"))] += 1
            if result["problems"]:
                _keep(keep, i, name, data, SUFFIX[kind], result["problems"], figures)
            if result["parse_errors"]:
                figures["parse_errors"] += 1
                if len(figures["parse_error_examples"]) < 5:
                    kept = _save(keep, i, name, data, SUFFIX[kind], result["parse_errors"])
                    figures["parse_error_examples"].append({"input": kept, "traceback": result["parse_errors"][0][-1500:]})
            if (i + 1) % 5000 == 0:
                log(f"{i + 1} inputs, {figures['failures']} failures, {figures['hangs']} hangs, {time.time() - started:.0f} s")
    finally:
        runner.close()
        shutil.rmtree(tmp, ignore_errors=True)
    times.sort()
    figures.update(seconds=round(time.time() - started, 1), max_seconds=round(times[-1], 3) if times else 0.0,
                   p99_seconds=round(times[int(0.99 * (len(times) - 1))], 4) if times else 0.0,
                   by_kind=dict(figures["by_kind"]), dedup_exits=dict(figures["dedup_exits"]), seed=seed, timeout=timeout)
    return figures


def _save(keep: Path, i: int, name: str, data: bytes, suffix: str, notes: list[str]) -> str:
    keep.mkdir(parents=True, exist_ok=True)
    path = keep / f"{i:06d}-{name}{suffix}"
    path.write_bytes(data)
    (keep / f"{i:06d}-{name}.txt").write_text("\n\n".join(notes))
    return str(path)


def _keep(keep: Path, i: int, name: str, data: bytes, suffix: str, problems: list[str], figures: dict) -> None:
    figures["failures"] += 1
    kept = _save(keep, i, name, data, suffix, problems)
    if len(figures["failure_examples"]) < 10:
        figures["failure_examples"].append({"input": kept, "problems": [p[-1500:] for p in problems]})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds an input may take to read (dedup: 4 times as long)")
    ap.add_argument("--dedup-every", type=int, default=250, help="run the whole dedup path on every Nth input (0: never)")
    ap.add_argument("--parse-every", type=int, default=20, help="also parse the pages of every Nth WARC/ARC input")
    ap.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()) / "pagetwin-fuzz-failures")
    ap.add_argument("--out", type=Path, help="write the figures here (JSON)")
    args = ap.parse_args(argv)
    figures = run(args.inputs, args.seed, args.timeout, args.dedup_every, args.parse_every, args.keep,
                  log=lambda m: print(m, file=sys.stderr, flush=True))
    text = json.dumps(figures, indent=2, sort_keys=True)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 1 if figures["failures"] or figures["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())
