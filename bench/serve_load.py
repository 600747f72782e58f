"""Load test of ``pagetwin serve`` on loopback (issue 17, Show): N concurrent clients, bounded in
count and time.

A copy of ``--index`` (at least 20,000 pages for the issue's figure) is served by ``pagetwin
serve`` in a child process; ``--clients`` threads, each with its own keep-alive connection,
send ``POST /query`` with pages of ``--pages-from`` (a WARC, JSONL or folder) until
``--queries`` were answered or ``--seconds`` passed, then ``POST /add`` of one page each the
same way (``--adds``), then both at once (``--mixed``: the query clients, and one client adding
``--adds`` more pages: what a crawler asking and adding at once sees). Reported: requests/s, p50
and p99 latency per phase, errors, and the server's resident memory (VmRSS now, VmHWM peak)
after each phase. Clients and server share the machine: on 2 cores the clients' own CPU is part
of what is measured. The server is the ``pagetwin`` on ``sys.path`` (PYTHONPATH selects
another checkout's, to compare two in one run).

    nice -n 10 .venv/bin/python -m bench.serve_load --index /tmp/add_cost/index-20000.sqlite \
        --pages-from bench/data/corpus-5000.warc.gz --clients 4 --queries 400 --adds 200 [--mixed]
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def _bodies(source: str, limit: int) -> list[bytes]:
    """JSON bodies of the first ``limit`` response pages of ``source`` (HTML as text)."""
    from pagetwin.config import Settings
    from pagetwin.html.parse import decode_html
    from pagetwin.sources import SourceStats, iter_pages

    out = []
    for page in iter_pages([source], Settings().input, SourceStats()):
        if page.kind != "response" or not page.body:
            continue
        html = decode_html(page.body, page.http_charset).text
        out.append(json.dumps({"id": f"load:{page.id}", "url": page.url, "html": html}).encode())
        if len(out) >= limit:
            break
    return out


def _memory(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": fields.get("VmRSS"), "peak_rss_mb": fields.get("VmHWM")}


def _together(host: str, port: int, bodies: list[bytes], clients: int, queries: int, adds: int, seconds: float) -> dict:
    """Queries from ``clients`` clients while one client adds pages (the last ``adds`` bodies,
    not added before), each side bounded in count and by ``seconds``."""
    out: dict = {}
    fresh = [b.replace(b'"id": "load:', b'"id": "mixed:', 1) for b in bodies[-adds:]]
    sides = [("query", "/query", bodies, clients, queries), ("add", "/add", fresh, 1, adds)]
    threads = [threading.Thread(target=lambda n=n, a=a: out.__setitem__(n, _phase(host, port, *a, seconds))) for n, *a in sides]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _phase(host: str, port: int, path: str, bodies: list[bytes], clients: int, total: int, seconds: float) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    taken = iter(range(total))
    deadline = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        while time.monotonic() < deadline:
            with lock:
                n = next(taken, None)
            if n is None:
                break
            t = time.monotonic()
            try:
                conn.request("POST", path, body=bodies[n % len(bodies)], headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                ok = resp.status == 200
            except (OSError, http.client.HTTPException) as exc:
                ok, resp = False, None
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=120)
                errors.append(type(exc).__name__)
            with lock:
                if ok:
                    latencies.append(time.monotonic() - t)
                elif resp is not None:
                    errors.append(str(resp.status))
        conn.close()

    started = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    ordered = sorted(latencies)
    return {
        "requests": len(latencies),
        "errors": len(errors),
        "seconds": round(wall, 2),
        "per_second": round(len(latencies) / wall, 1) if wall else None,
        "p50_ms": round(1000 * statistics.median(ordered), 1) if ordered else None,
        "p99_ms": round(1000 * ordered[int(0.99 * (len(ordered) - 1))], 1) if ordered else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True, help="index to serve (a copy is served; it is not changed)")
    parser.add_argument("--pages-from", required=True, help="pages to query and add (WARC, JSONL, folder)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=120.0, help="time cap per phase")
    parser.add_argument("--mixed", action="store_true", help="then queries and adds at once")
    parser.add_argument("--readers", type=int, default=None, help="pagetwin serve --readers (default: the server's own)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="pagetwin-serve-load-"))
    copy = work / "index.sqlite"
    shutil.copy(args.index, copy)
    bodies = _bodies(args.pages_from, max(args.queries, args.adds))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pagetwin", "serve", "--index", str(copy), "--port", "0",
         *(["--readers", str(args.readers)] if args.readers else [])], stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = proc.stderr.readline()
        if "listening on" not in line:
            raise SystemExit(f"the server did not start: {line}")
        host, port = line.split("http://")[1].split()[0].rsplit(":", 1)
        result = {"pages_in_index": None, "clients": args.clients, "memory_at_start": _memory(proc.pid)}
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        conn.request("GET", "/health")
        result["pages_in_index"] = json.loads(conn.getresponse().read())["pages"]
        conn.request("POST", "/query", body=bodies[-1])  # warm-up, not counted: models load on first use
        conn.getresponse().read()
        conn.close()
        result["query"] = _phase(host, int(port), "/query", bodies, args.clients, args.queries, args.seconds)
        result["memory_after_queries"] = _memory(proc.pid)
        result["add"] = _phase(host, int(port), "/add", bodies, args.clients, args.adds, args.seconds)
        result["memory_after_adds"] = _memory(proc.pid)
        if args.mixed:
            result["mixed"] = _together(host, int(port), bodies, args.clients, args.queries, args.adds, args.seconds)
            result["memory_after_mixed"] = _memory(proc.pid)
        print(json.dumps(result, indent=1))
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
