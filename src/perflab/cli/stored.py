"""The commands that read rather than measure: `list`, `show` and `compare` (runs read back
from the store, a damaged store warned about), `doctor` and `cache`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from perflab.cli.exits import EXIT_BAD_INPUT, EXIT_DAMAGED_STORE, EXIT_OK
from perflab.cli.options import output_options
from perflab.cli.reports import check_report_targets, emit, write_json
from perflab.report.escape import terminal, visible

# a command imports what it uses where it runs (`perflab show --help` and `perflab list` load no
# statistics, engine or lens): every perflab process pays its start-up, inside its budget
if TYPE_CHECKING:
    from perflab.git.cache_entry import CacheEntry
    from perflab.store.health import StoreHealth
    from perflab.store.selection import StoreSetting


def read_runs(args: argparse.Namespace, out: Console, err: Console) -> int:
    """`list`, `show` and `compare`: runs read back from the store."""
    from perflab import api
    from perflab.report.terminal import render_run_list, render_section
    from perflab.store import location_facts

    if args.command in ("show", "compare"):
        check_report_targets(output_options(args))
    if location_facts(args.store).is_file and not _files_only(args):
        # a file's pages; a server checks its own
        _warn_if_damaged(api.check_store(args.store), err)
    if args.command == "list":
        runs = api.list_runs(args.store, args.limit)
        if write_json(args.json_path, [run.to_json() for run in runs]) and not args.quiet:
            render_run_list(runs, out)
        return EXIT_OK
    if args.command == "show" and args.asm is not None:
        from perflab.lenses.asm.render import asm_view_section  # loads capstone: only here

        views = api.asm_views(args.asm, args.run, args.store)
        if not views:
            err.print(terminal(f"perflab: no function matching {args.asm!r} in run {args.run}"))
            return EXIT_BAD_INPUT
        for view in views:
            render_section(asm_view_section(view), out, max_rows=None)
        return EXIT_OK
    if args.command == "show":
        result = api.show(args.run, args.store)
    else:
        result = api.compare(args.run_a, args.run_b, args.store)
    return emit(result, output_options(args), out, err, command=args.command)


def _files_only(args: argparse.Namespace) -> bool:
    """`compare A.json B.json` reads no store."""
    from perflab.store.json_runs import is_document_reference

    return args.command == "compare" and all(
        is_document_reference(ref) for ref in (args.run_a, args.run_b)
    )


def _warn_if_damaged(health: StoreHealth, err: Console) -> None:
    if not health.damaged:
        return
    from perflab.store.health import describe_runs

    readable = (
        f"; readable runs: {describe_runs(health.readable_runs)}, unreadable: "
        f"{describe_runs(health.unreadable_runs)}"
        if health.run_ids
        else ""
    )
    err.print(
        Text("perflab: warning: ", style="bold yellow")
        + Text(
            f"the store {health.path} is damaged ({health.check}: {health.problems[0]})"
            f"{readable}\nhint: perflab doctor --store {health.path}; keep a copy of the file "
            "before trying to repair it"
        ),
        highlight=False,
    )


def doctor(args: argparse.Namespace, out: Console) -> int:
    """`perflab doctor`: what this machine can measure, or with --check-store a store's health; the
    exit status."""
    from perflab.report.machine_views import render_doctor, render_store_health

    if args.check_store is not None:
        from perflab import api

        health = api.check_store(args.check_store, thorough=True)
        if write_json(args.json_path, health.to_json()):
            render_store_health(health, out)
        return EXIT_DAMAGED_STORE if health.damaged else EXIT_OK
    # imported here: its probes' parsers are not needed to run, and perflab's start-up is in
    # the first benchmark's budget
    from perflab.diagnose.doctor import diagnose

    report = diagnose()
    setting: StoreSetting = args.store_setting
    if write_json(args.json_path, {**report.to_json(), "store": setting.to_json()}):
        render_doctor(report, out)
        # one line whatever its length: a path is read and copied whole
        out.print(
            f"store: {setting.shown()} (from {setting.source})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    return EXIT_OK


def cache(args: argparse.Namespace, out: Console) -> int:
    """`perflab cache`: lists the build cache's checkouts, or prunes them; the exit status."""
    from perflab import api
    from perflab.report.provenance_views import render_cache_entries

    if args.action == "prune":
        in_use: list[CacheEntry] = []
        removed = api.prune_cache(args.cache_dir, in_use=in_use)
        if write_json(args.json_path, [e.to_json() for e in removed]):
            out.print(f"removed {len(removed)} cached checkout(s)", highlight=False)
            if in_use:
                out.print(
                    f"left {len(in_use)} in use by a running perflab run: "
                    + ", ".join(visible(str(e.path)) for e in in_use),
                    highlight=False,
                    markup=False,
                )
        return EXIT_OK
    entries = api.cache_entries(args.cache_dir)
    if write_json(args.json_path, [e.to_json() for e in entries]):
        render_cache_entries(entries, out)
    return EXIT_OK
