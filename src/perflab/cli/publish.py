"""`perflab publish`: the store's benchmarks over commits as a static site, and `--serve` to
preview it on 127.0.0.1."""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from perflab.cli.exits import EXIT_OK
from perflab.records.errors import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

PUBLISH_TEXT = """\
write the store's benchmarks over commits as a static site

Every benchmark and lens the store measured commits of (by perflab history, bisect or check)
becomes a trend; its change points are found as history finds them and confirmed by the direct
comparison the store holds of the commits either side. The front page starts with the
confirmed change points, newest first, then a grid of every trend; a page per trend links each
point to its run's report. Plain files with inline CSS and SVG: they open offline, and any web
server (GitHub Pages, GitLab Pages) can serve them. Publishing again into the same folder
analyses only the runs it has not read before (their figures are kept in DIR/.perflab-site/),
rewrites only the pages whose content changed, and removes the pages it wrote of runs the store
no longer holds (no other file).

example:
  perflab publish --out site
  perflab publish --out site --serve --port 8000
"""


def add_publish_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """The command's own options; the caller adds --store and --quiet as every command's."""
    publish = commands.add_parser(
        "publish",
        help="write the store's benchmarks over commits as a static site",
        description=PUBLISH_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    publish.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="the site's folder (made if new)"
    )
    publish.add_argument(
        "--threshold", default="2%", help="the smallest step that is a change point (default 2%%)"
    )
    publish.add_argument(
        "--serve", action="store_true", help="then serve the site on 127.0.0.1 until Ctrl-C"
    )
    publish.add_argument(
        "--port",
        type=int,
        default=8000,
        help="--serve's port (default 8000; 0: any free port)",
    )
    return publish


def run_publish(args: argparse.Namespace, out: Console, err: Console) -> int:
    """`perflab publish`: writes the site and says what it wrote; the exit status."""
    # imported here: every other command's start-up is spared the site's modules
    from perflab.bisection.threshold import parse_threshold
    from perflab.lenses.fragments import plural
    from perflab.publish import publish
    from perflab.report.escape import terminal

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port} is not a port", hint="give 1-65535, or 0: any")
    done = publish(args.out, args.store, threshold=parse_threshold(args.threshold), workers=None)
    if not args.quiet:
        out.print(
            terminal(
                f"perflab: wrote {len(done.written)} {plural('page', len(done.written))}, "
                f"{len(done.unchanged)} unchanged"
                + (f", removed {len(done.removed)}" if done.removed else "")
                + f" ({len(done.site.trends)} {plural('trend', len(done.site.trends))}, "
                f"{len(done.site.recent)} confirmed change "
                f"{plural('point', len(done.site.recent))}, {done.analysed} "
                f"{plural('run', done.analysed)} analysed) in {done.folder}: "
                f"open {Path(done.folder) / 'index.html'}"
            ),
            highlight=False,
            soft_wrap=True,  # one line whatever its length: the paths are copied whole
        )
    if args.serve:
        return serve(Path(done.folder), args.port, out)
    return EXIT_OK


def serve(folder: Path, port: int, out: Console) -> int:
    """Serves `folder` on 127.0.0.1 until Ctrl-C (or SIGTERM), then exits 0."""
    import http.server

    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's)
            pass  # a preview: the requests are the person's own clicks

    handler = functools.partial(QuietHandler, directory=str(folder))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as error:
        raise ConfigError(
            f"cannot serve on 127.0.0.1:{port}: {error.strerror}",
            hint="give another --port (0: any free port)",
        ) from None
    with server:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        out.print(
            f"perflab: serving {folder} at {url} (Ctrl-C stops)", highlight=False, soft_wrap=True
        )
        sys.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            out.print("perflab: stopped serving", highlight=False)
    return EXIT_OK
