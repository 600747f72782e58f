"""Command-line parsing only; the work is done by the API (``pagetwin.app``, ``explain``).

Settings: each command takes as options the settings it uses (``config.setting_fields``, their
``commands``); its --help lists the user tier only, the expert tier is reachable by
``--set SECTION.NAME=VALUE``, ``--config FILE`` and its unlisted ``--section-name`` option.
``pagetwin config --describe`` lists every setting. ``Settings.validate`` judges the values.

Exit status: 0 success (for dedup: every input was read cleanly); 1 failure (no page could be
read and some input could not be, an unusable index); 2 bad usage (options, settings, an output
target that cannot be written, an --out holding an earlier run without --add or --replace, a
missing optional dependency: all checked before any work); 3 done, but some inputs could not be
read or their reading stopped early (each named on stderr; all in summary.json input_errors).
Records skipped for normal reasons (non-HTML responses, requests, ...) do not change the status.
Data goes to stdout, messages to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys

from pagetwin.config import COMMANDS, PROFILES, USER, ConfigError, Settings, setting_fields

# Settings that have a short option of their own; their --section-name flag stays, unlisted.
_SHORT = {"match.algorithms": "--algorithms", "cluster.keep": "--keep", "run.workers": "--workers"}


class _Parser(argparse.ArgumentParser):
    """A usage mistake is one line on stderr (and exit 2), not argparse's usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _shown(value: object) -> str:
    """A setting's value as one would type it (an empty string as '')."""
    if isinstance(value, list):
        return ",".join(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if value != "" else "''"


def _setting_help(f, value: object) -> str:
    allowed = f.metadata.get("allowed")
    text = f"{f.metadata['help']} (default {_shown(value)}" + (f"; {allowed}" if allowed else "") + ")"
    return text.replace("%", "%%")  # argparse formats help with %


def _add_setting_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The settings ``command`` uses as --<section>-<name> (e.g. --minhash-threshold): the user
    tier listed in --help, the expert tier accepted but unlisted (all of them: --set, TOML)."""
    group = parser.add_argument_group(
        "settings", "the ones this command uses; every setting, expert ones included, also by "
        "--set SECTION.NAME=VALUE or --config FILE (pagetwin config --describe lists them all)")  # fmt: skip
    for dotted, f, value in setting_fields():
        if command != "config" and command not in f.metadata["commands"]:
            continue
        section, _, name = dotted.partition(".")
        shown = f.metadata["tier"] == USER and dotted not in _SHORT
        group.add_argument(
            f"--{section}-{name}".replace("_", "-"),
            dest=f"set:{dotted}",
            metavar=type(value).__name__.upper(),
            default=None,
            help=_setting_help(f, value) if shown else argparse.SUPPRESS,
        )


def _add_common(parser: argparse.ArgumentParser, command: str) -> None:
    if command != "config":
        parser.add_argument("inputs", nargs="+", metavar="INPUT", help="WARC/ARC files, folders of HTML, .jsonl files")
    parser.add_argument("--profile", metavar="NAME", choices=sorted(PROFILES),
                        help="named settings over the defaults: 'reposts' (the default: the same story on other sites) "
                        "or 'near-identical' (verbatim and near-verbatim copies only); `pagetwin config --profile NAME` shows them")
    parser.add_argument("--config", metavar="FILE", help="TOML settings file (applied over the profile)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.NAME=VALUE",
                        help="override any setting (applied over --config; `pagetwin config --describe` lists them)")
    workers = {dotted: (f, v) for dotted, f, v in setting_fields()}["run.workers"]
    parser.add_argument("--workers", type=int, metavar="N", help=_setting_help(*workers))
    _add_setting_options(parser, command)


def _add_matching(parser: argparse.ArgumentParser) -> None:
    described = {dotted: (f, v) for dotted, f, v in setting_fields()}
    parser.add_argument("--algorithms", metavar="LIST", help=_setting_help(*described["match.algorithms"]))
    parser.add_argument("--keep", metavar="POLICY", help=_setting_help(*described["cluster.keep"]))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pagetwin", description="Find duplicate and near-duplicate web pages in crawls.")
    parser.add_argument("--version", action="version", version=f"pagetwin {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    assert set(COMMANDS) <= {"dedup", "text", "keywords", "templates"}  # the commands settings name

    p = sub.add_parser("dedup", help="cluster duplicate pages; write clusters.jsonl, pairs.jsonl, summary.json")
    _add_common(p, "dedup")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--index", metavar="PATH", help="SQLite index (default DIR/index.sqlite); one outside DIR is reused incrementally")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--add", dest="mode", action="store_const", const="add",
                      help="--out holds an earlier run: add this run to its index (the outputs then describe the whole index)")
    mode.add_argument("--replace", dest="mode", action="store_const", const="replace",
                      help="--out holds an earlier run: delete its outputs and index first")
    _add_matching(p)
    p.add_argument("--survivors", metavar="FILE", help="also write the kept pages as a WARC file (.warc.gz)")
    p.add_argument("--parquet", action="store_true", help="also write clusters.parquet and pairs.parquet")
    p.add_argument("--dedup-warc", metavar="FILE",
                   help="also write every input record as a WARC file, exact payload copies as revisit records "
                        "(identical-payload-digest) and near duplicates beside a metadata record naming their cluster")
    p.add_argument("--documents", metavar="FILE",
                   help="also write the kept documents as JSONL (.jsonl, .jsonl.gz) or Parquet (.parquet): "
                        "id, text, metadata (url, cluster, cluster size, source file and offset)")
    p.add_argument("--runner", choices=("local", "spark"), default="local",
                   help="who runs the two passes: local process pool (default) or Apache Spark (extra 'spark')")
    p.add_argument("--spark-master", metavar="URL", help="Spark master (default: local[*], or spark-submit's)")
    p.set_defaults(func=cmd_dedup)

    p = sub.add_parser("text", help="print each page's main text as JSON lines {id, url, text}")
    _add_common(p, "text")
    p.set_defaults(func=cmd_text)

    p = sub.add_parser("keywords", help="print each page's language and top N keywords as JSON lines {id, url, lang, keywords}")
    _add_common(p, "keywords")
    p.add_argument("--top", type=_positive, default=10, metavar="N", help="keywords per page (default 10)")
    p.add_argument("--weighting", choices=("tfidf", "density"), default="tfidf",
                   help="keyword weights: tfidf (the default; learns document frequencies over the inputs first) or density")
    # The settings these replaced (text.keywords, text.weighting) had these flags.
    p.add_argument("--text-keywords", dest="top", type=_positive, help=argparse.SUPPRESS)
    p.add_argument("--text-weighting", dest="weighting", choices=("tfidf", "density"), help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_keywords)

    p = sub.add_parser("endings", help="learn a word-ending frequency table (the stemmer's fallback) from a text corpus")
    p.add_argument("corpus", nargs="+", metavar="CORPUS", help="UTF-8 text or HTML files, or folders of them")
    p.add_argument("--lang", required=True, help="ISO 639-1 code of the corpus language")
    p.add_argument("--out", required=True, metavar="FILE", help="the table to write (TSV)")
    p.add_argument("--min-stem", type=int, default=3, metavar="N")
    p.add_argument("--max-ending", type=int, default=5, metavar="N")
    p.add_argument("--min-count", type=int, default=3, metavar="N")
    p.add_argument("--source", default="", help="where the corpus came from (written into the table)")
    p.set_defaults(func=cmd_endings)

    p = sub.add_parser("templates", help="learn each site's template from the inputs and show what is removed")
    _add_common(p, "templates")
    p.add_argument("--site", metavar="HOST", help="show only this site")
    p.add_argument("--samples", type=int, default=3, metavar="N", help="sample texts per block (default 3)")
    p.add_argument("--json", action="store_true", help="one JSON object per site instead of text")
    p.set_defaults(func=cmd_templates)

    p = sub.add_parser("config", help="print the resolved settings as TOML (--describe: what each setting is)")
    _add_common(p, "config")
    _add_matching(p)
    p.add_argument("--describe", action="store_true",
                   help="list every setting, expert ones included: name, value, tier, commands, allowed values, description")
    p.set_defaults(func=cmd_config)

    p = sub.add_parser("explain", help="why two pages are (or are not) duplicates: passages, similarities, shared keys")
    p.add_argument("dir", metavar="DIR", help="output folder of pagetwin dedup (or its index file; or spark.output, a folder or file: URI)")
    p.add_argument("a", metavar="A", help="page id or URL")
    p.add_argument("b", metavar="B", help="page id or URL")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    p.set_defaults(func=cmd_explain)
    _add_query(sub)
    _add_add(sub)
    _add_serve(sub)
    _add_report(sub)
    return parser


def _add_report(sub) -> None:
    p = sub.add_parser(
        "report", help="write a self-contained HTML report of a dedup run (clusters, sites, pairs, templates)",
        description="One static HTML file (inline style, script and SVG; nothing fetched; crawled text escaped and "
        "no script of a crawled page can run): the run at a glance, cluster sizes and the largest clusters, "
        "per site, pairs side by side as pagetwin explain shows them, and a site's template on one of its pages "
        "(the pages read again from the run's inputs, when they are still there). Its size is bounded: the "
        "largest clusters and sites are listed, the rest summed.",
    )  # fmt: skip
    p.add_argument("dir", metavar="OUT_DIR", help="output folder of pagetwin dedup")
    p.add_argument("--to", metavar="FILE", help="the HTML file to write (default OUT_DIR/report.html)")
    p.add_argument("--pair", nargs=2, action="append", default=[], metavar=("A", "B"),
                   help="also show this pair side by side (page ids or URLs, as pagetwin explain takes them); repeatable")
    p.set_defaults(func=cmd_report)


def _add_serve(sub) -> None:
    from pagetwin.server import DEFAULT_PORT, MAX_BATCH, MAX_BODY, READERS, TOKEN_ENV

    p = sub.add_parser(
        "serve", help="answer queries and adds for one index over HTTP/JSON (127.0.0.1 by default; the serve extra)",
        description="POST /query and POST /add (a page {url, html} or {id, text}, or {pages: [...]}), GET /pages/{id}, "
        "GET /health, GET /stats, GET /openapi.json. Each add is committed before it is answered. Pages are "
        f"fingerprinted with the index's settings and learned model. With ${TOKEN_ENV} set, requests need "
        "'Authorization: Bearer TOKEN' (required to bind another address than 127.0.0.1).",
    )  # fmt: skip
    p.add_argument("--index", required=True, metavar="PATH", help="index file (or dedup --out folder); created when missing")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: a free one, printed)")
    p.add_argument("--readonly", action="store_true", help="serve queries only; the index is not written (no lock taken)")
    p.add_argument("--max-body", type=int, default=MAX_BODY, metavar="BYTES", help=f"largest request body (default {MAX_BODY})")
    p.add_argument("--max-batch", type=int, default=MAX_BATCH, metavar="PAGES", help=f"most pages in one request (default {MAX_BATCH})")
    p.add_argument("--readers", type=int, default=READERS, metavar="N",
                   help=f"read-only connections answering queries side by side (default {READERS}); adds go through one writer")  # fmt: skip
    p.set_defaults(func=cmd_serve)


def _add_query(sub) -> None:
    p = sub.add_parser(
        "query", help="print each input page's matches in an index as JSON lines {id, url, matches}; the index is not changed",
        description="For each page of the inputs, the pages of the index it duplicates (exact payload copies, "
        "near duplicates), as JSON lines {id, url, matches: [{id, url, cluster, kind, evidence}]}. The index is "
        "opened read only. It takes no settings options: pages are fingerprinted with the settings and learned "
        "model stored in the index, as the indexed pages were.",
    )  # fmt: skip
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="WARC/ARC files, folders of HTML, .jsonl files")
    p.add_argument("--index", required=True, metavar="PATH", help="index file of pagetwin dedup (or its --out folder)")
    p.set_defaults(func=cmd_query)


def _add_add(sub) -> None:
    p = sub.add_parser(
        "add", help="add each input page to an index and print its cluster and matches as JSON lines",
        description="Add the pages of the inputs to an index (created when missing), as pagetwin.Index.add does: only "
        "the new pages are matched with the index, and the clusters they join made again; each batch of pages is "
        "committed before its lines are printed. One JSON line per page: {id, url, status (added, or known: the "
        "index held its id), cluster, keep, kept_id, cluster_size, error, matches: [{id, url, cluster, kind, "
        "evidence}]}; a summary line on stderr. It takes no settings options: an existing index's settings and "
        "learned model are used, a new index gets the defaults. dedup's output files of the index are not "
        "rewritten.",
    )  # fmt: skip
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="WARC/ARC files, folders of HTML, .jsonl files")
    p.add_argument("--index", required=True, metavar="PATH", help="index file (or dedup --out folder); created when missing")
    p.add_argument("--batch", type=_positive, default=500, metavar="PAGES", help="pages per transaction (default 500)")
    p.set_defaults(func=cmd_add)


def resolve_settings(args: argparse.Namespace) -> Settings:
    settings = Settings.load(getattr(args, "config", None), getattr(args, "profile", None) or "")
    for key, value in vars(args).items():
        if key.startswith("set:") and value is not None:
            settings.set(key[4:], value)
    for item in getattr(args, "set", []) or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set wants SECTION.NAME=VALUE, got {item!r}")
        settings.set(name.strip(), value.strip())
    if getattr(args, "workers", None) is not None:
        settings.set("run.workers", args.workers)
    if getattr(args, "algorithms", None):
        settings.set("match.algorithms", args.algorithms)
    if getattr(args, "keep", None):
        settings.set("cluster.keep", args.keep)
    return settings.validate()


def _err(msg: str) -> None:
    print(f"pagetwin: {msg}", file=sys.stderr)


EXIT_INPUT_ERRORS = 3  # done, but some inputs (or the rest of some file) could not be read
_INPUT_STATUS_EXIT = {"ok": 0, "partial": EXIT_INPUT_ERRORS, "none": 1}


def cmd_dedup(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.app import dedup
    from pagetwin.outputs.files import check_outputs

    mode = args.mode or "new"
    check_outputs(  # before Spark starts
        args.out, args.index, args.survivors, args.parquet, mode, dedup_warc=args.dedup_warc, documents=args.documents
    )
    engine = None
    if args.runner == "spark":
        from pagetwin.runners.spark import SparkEngine  # raises ConfigError without pyspark

        engine = SparkEngine(master=args.spark_master)
    summary = dedup(
        args.inputs, args.out, settings, args.index, log=_err, survivors=args.survivors, parquet=args.parquet,
        dedup_warc=args.dedup_warc, documents=args.documents,
        engine=engine, mode=mode,
    )  # fmt: skip
    records = summary["records"]
    status = summary.get("input_status", "ok")
    n = len(summary["input_errors"])
    errors = f"{n} input error{'s' if n != 1 else ''}"
    if status == "none":
        _err(f"no page could be read ({errors}); summary in {args.out}")
        return 1
    _err(
        f"{summary['pages']['read']} pages read, {sum(records['skipped'].values())} records skipped, "
        f"{summary['clusters']} clusters, {summary['duplicates']} duplicates; results in {args.out}"
    )
    if status != "ok":
        _err(f"done, but not every input could be read: {errors} (summary.json input_errors)")
    return _INPUT_STATUS_EXIT.get(status, EXIT_INPUT_ERRORS)


def _readable(inputs: list[str]) -> list[str]:
    """The inputs that can be read; a message on stderr for each that cannot (InputError: none)."""
    from pagetwin.sources import readable_inputs

    readable, problems = readable_inputs(inputs)
    for problem in problems:
        _err(problem)
    return readable


def _print_rows(iter_rows, args: argparse.Namespace, settings: Settings, **options) -> int:
    """One JSON line per page on stdout, from a row iterator of the API; skips summed on stderr."""
    from pagetwin.sources import SourceStats

    stats = SourceStats()
    return _write_rows(iter_rows(_readable(args.inputs), settings, stats, **options), stats)


def _write_rows(rows, stats) -> int:
    """Each row as a JSON line on stdout; the records skipped while reading, summed on stderr."""
    from pagetwin.sources import no_pages_message

    out = sys.stdout
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False))
        out.write("\n")
    if not stats.records_total and not stats.errors:
        _err(no_pages_message(stats))
    skipped = sum(stats.skipped.values())
    if skipped:
        _err(f"{stats.pages_read} pages, {skipped} records skipped: {dict(stats.skipped)}")
    return 0


def cmd_text(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.app import iter_texts

    return _print_rows(iter_texts, args, settings)


def cmd_keywords(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.app import iter_keywords

    return _print_rows(iter_keywords, args, settings, top=args.top, weighting=args.weighting)


def cmd_endings(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.text.morph import main as morph_main

    argv = ["build-endings", *args.corpus, "--lang", args.lang, "--out", args.out, "--source", args.source]
    argv += ["--min-stem", str(args.min_stem), "--max-ending", str(args.max_ending), "--min-count", str(args.min_count)]
    return morph_main(argv)


def cmd_templates(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.app import learn_templates
    from pagetwin.html.templates import format_report, normalize_site

    templates = learn_templates(_readable(args.inputs), settings)
    site = normalize_site(args.site, settings.extract) if args.site else None
    rows = templates.report(site, samples=max(1, args.samples))
    if site is not None and not rows:
        _err(f"no pages of site {site!r} in the inputs")
        return 1
    if args.json:
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_report(rows))
    return 0


def describe(settings: Settings) -> str:
    """Every setting: ``section.name = value``, then its tier, the commands that use it, what it
    allows, and its description (``pagetwin config --describe``)."""
    lines = []
    for dotted, f, value in setting_fields(settings):
        allowed = f.metadata.get("allowed")
        lines.append(f"{dotted} = {_shown(value)}")
        lines.append(f"    {f.metadata['help']}")
        facts = [f"{f.metadata['tier']} tier", "used by " + ", ".join(f.metadata["commands"])]
        if allowed is not None:
            facts.append(str(allowed))
        flag = _SHORT.get(dotted) or ("--" + dotted.replace(".", "-").replace("_", "-"))
        facts.append(flag if f.metadata["tier"] == USER else f"--set {dotted}=VALUE")
        lines.append("    (" + "; ".join(facts) + ")")
    return "\n".join(lines) + "\n"


def cmd_config(args: argparse.Namespace, settings: Settings) -> int:
    if args.describe:
        sys.stdout.write(describe(settings))
        return 0
    profile = getattr(args, "profile", None) or "reposts"
    sets = PROFILES[profile]
    lines = [f"# profile {profile!r} (--profile): the defaults" + (", and" if sets else "")]
    lines += [f"#   {name} = {value!r}" for name, value in sets.items()]
    others = [name for name in sorted(PROFILES) if name != profile]
    lines.append(f"# other profiles: {', '.join(others)} (pagetwin config --profile NAME)")
    sys.stdout.write("\n".join(lines) + "\n" + settings.to_toml())
    return 0


def cmd_explain(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.explain import AmbiguousPage, ExplainError, explain, format_explain

    try:
        result = explain(args.dir, args.a, args.b)
    except AmbiguousPage as exc:  # a URL (or id) several pages share: say which, a usage error
        _err(str(exc))
        return 2
    except ExplainError as exc:
        _err(str(exc))
        return 1
    if args.json:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write(format_explain(result))
    return 0


def cmd_query(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.api import Index
    from pagetwin.sources import SourceStats

    stats = SourceStats()
    # The settings are the index's (query takes none); opening it first reports a missing or
    # foreign index before any input is read.
    with Index.open(args.index, readonly=True) as index:
        rows = (r.to_dict() for r in index.query_inputs(_readable(args.inputs), stats))
        return _write_rows(rows, stats)


def cmd_add(args: argparse.Namespace, settings: Settings) -> int:
    from collections import Counter

    from pagetwin.api import Index
    from pagetwin.sources import SourceStats, readable_inputs

    stats = SourceStats()
    status: Counter = Counter()
    readable, unreadable = readable_inputs(args.inputs)  # before the index is opened (and its lock taken)
    for problem in unreadable:
        _err(problem)
    with Index.open(args.index) as index:
        for added in index.add_inputs(readable, stats, args.batch):
            status[added.status] += 1
            status["joined"] += added.cluster_size > 1 and added.status == "added"
            sys.stdout.write(json.dumps(added.to_dict(), ensure_ascii=False) + "\n")
        size = len(index)
    skipped = sum(stats.skipped.values())
    _err(
        f"{status['added']} pages added ({status['joined']} joined a cluster), {status['known']} known already, "
        f"{skipped} records skipped{f': {dict(stats.skipped)}' if skipped else ''}; the index holds {size} pages"
    )
    for message in stats.errors:
        _err(message)
    return EXIT_INPUT_ERRORS if unreadable or stats.errors else 0


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    from pagetwin.outputs.report import ReportError, write_report

    try:
        written = write_report(args.dir, args.to, pairs=[tuple(p) for p in args.pair])
    except ReportError as exc:
        _err(str(exc))
        return 1
    _err(f"report written to {written['path']} ({written['bytes'] / 1e6:.2f} MB in {written['seconds']:.1f} s)")
    return 0


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    import os

    from pagetwin.server import TOKEN_ENV, serve

    if args.max_body < 1 or args.max_batch < 1 or args.readers < 1 or not 0 <= args.port <= 65535:
        raise ConfigError("--max-body, --max-batch and --readers must be at least 1, --port from 0 to 65535")
    if args.readonly:
        from pagetwin.index.sqlite import index_file

        index_file(args.index)  # a missing index is an error when it is only read
    serve(args.index, args.host, args.port, os.environ.get(TOKEN_ENV) or None, args.readonly, args.max_body, args.max_batch, readers=args.readers)
    return 0


def _version() -> str:
    from pagetwin import __version__

    return __version__


def _unrecognized(command: str, extras: list[str]) -> str:
    """The one-line error for options ``command`` does not take, saying when one is a setting
    another command uses (``pagetwin text --chunks-epsilon``)."""
    flags = {"--" + dotted.replace(".", "-").replace("_", "-"): f for dotted, f, _ in setting_fields()}
    message = f"pagetwin {command}: unrecognized arguments: {' '.join(extras)}"
    for extra in extras:
        f = flags.get(extra.partition("=")[0])
        if f is not None:
            message += f"; {extra.partition('=')[0]} is a setting of {', '.join(f.metadata['commands'])} only"
            break
    return message + f" (see pagetwin {command} --help)"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        parser.exit(2, _unrecognized(args.command, extras) + "\n")
    try:
        settings = resolve_settings(args)
    except ConfigError as exc:
        _err(str(exc))
        return 2
    from pagetwin.index.sqlite import IndexError_
    from pagetwin.sources import InputError

    try:
        return args.func(args, settings)
    except ConfigError as exc:
        _err(str(exc))
        return 2
    except (InputError, IndexError_) as exc:
        _err(str(exc))
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        _err("interrupted")
        return 1


if __name__ == "__main__":
    sys.exit(main())
