"""Terminal views of git variants: where each came from (provenance) and the build cache.
(Stacks and matrices are sections: :mod:`perflab.report.design_views`.)"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from perflab.git.cache_entry import CacheEntry
from perflab.records.results import RunResult
from perflab.report.escape import terminal


def provenance_table(result: RunResult) -> Table | None:
    """Where each git= variant came from (ref, commit, tree, build); None when no variant has a
    commit."""
    rows = [
        (name, info.commit_provenance)
        for name, info in result.variant_info.items()
        if info.commit_provenance is not None
    ]
    if not rows:
        return None
    table = Table(title="provenance", title_justify="left")
    for column in ("variant", "ref", "commit", "tree", "changes", "build", "subject"):
        table.add_column(column)
    order = {v.name: i for i, v in enumerate(result.experiment.variants)}
    for name, prov in sorted(rows, key=lambda row: order.get(row[0], 0)):
        changes = ", ".join(c.get("name", "?") for c in prov.get("changes", []))
        build = str(prov.get("build") or "")
        if prov.get("cached"):
            build += " (cached)"
        table.add_row(
            *(
                terminal(cell)
                for cell in (
                    name,
                    _short_ref(str(prov.get("ref", ""))),
                    str(prov.get("commit", ""))[:10],
                    str(prov.get("tree", ""))[:10],
                    changes,
                    build,
                    str(prov.get("subject", "")),
                )
            )
        )
    return table


def _short_ref(ref: str) -> str:
    """A full commit id as git shows it short; names as they are."""
    is_sha = len(ref) == 40 and all(c in "0123456789abcdef" for c in ref)
    return ref[:10] if is_sha else ref


def render_cache_entries(entries: Sequence[CacheEntry], console: Console) -> None:
    """The build cache's checkouts as a terminal table."""
    if not entries:
        console.print("the build cache is empty")
        return
    table = Table(title="cached checkouts and builds", title_justify="left")
    for column in ("key", "ref", "commit", "tree", "changes", "build", "status", "path"):
        table.add_column(column)
    for e in entries:
        table.add_row(
            *(
                terminal(cell)
                for cell in (
                    e.key[:12],
                    _short_ref(e.ref),
                    e.commit[:10],
                    e.tree[:10],
                    ", ".join(e.changes),
                    e.build or "",
                    e.status.value,
                    str(e.path),
                )
            )
        )
    console.print(table)
