"""bench/rehost.py: a crawl written again under many hosts keeps every record, its payload and
its order, spreads the pages over the hosts asked for, and rewrites the truth's URLs the same way."""

from __future__ import annotations

import io
import json

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from bench.rehost import main, rehosted


def _crawl(path, urls):
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for i, url in enumerate(urls):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            body = f"<html><body><p>page {i}</p></body></html>".encode()
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
    with open(f"{path}.truth.jsonl", "w") as fh:
        for i, url in enumerate(urls):
            fh.write(json.dumps({"url": url, "source": f"s{i // 2}"}) + "\n")


def _read(path):
    with open(path, "rb") as fh:
        return [(r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read()) for r in ArchiveIterator(fh)]


def test_every_record_under_a_new_host_payloads_and_truth_kept(tmp_path):
    urls = [f"https://docs.example/a/{i}.html?x={i % 3}" for i in range(200)]
    src, out = tmp_path / "in.warc.gz", tmp_path / "out.warc.gz"
    _crawl(src, urls)
    assert main([str(src), str(out), "--hosts", "50"]) == 0
    before, after = _read(src), _read(out)
    assert [body for _, body in after] == [body for _, body in before]
    assert [url for url, _ in after] == [rehosted(url, 50) for url in urls]
    hosts = {url.split("/")[2] for url, _ in after}
    assert 40 <= len(hosts) <= 50 and all(h.count(".") == 1 for h in hosts)  # each its own registered domain
    assert all(url.endswith(orig.split("://", 1)[1]) for (url, _), orig in zip(after, urls))  # host and path kept in the path
    truth = [json.loads(line) for line in open(f"{out}.truth.jsonl")]
    assert [t["url"] for t in truth] == [url for url, _ in after] and [t["source"] for t in truth][:2] == ["s0", "s0"]
    assert rehosted(urls[0], 50, seed=1) != rehosted(urls[0], 50) or rehosted(urls[1], 50, seed=1) != rehosted(urls[1], 50)
