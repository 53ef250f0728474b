"""Every public class in src/perflab, and every public module-level function whose body is over
MAX_BODY_LINES lines, has a docstring saying what it holds or does, so a cold reader need not
reverse-engineer it from its fields or its code. Read with ast: a class is public when neither
its name nor an enclosing class's name starts with an underscore; methods are left out (a
protocol's method is documented once, on the protocol)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "src" / "perflab"
# a function this short reads as its own description
MAX_BODY_LINES = 8

# "file under src/perflab:function" still without a docstring; an entry that has one now (or is
# gone) fails test_every_allowance_is_still_needed, so the list can only shrink
UNDOCUMENTED_FUNCTIONS: frozenset[str] = frozenset(
    {
        "analyse/design_analysis.py:stack_summaries",
        "analyse/explanation.py:summarise",
        "cli/changes.py:add_build_options",
        "cli/changes.py:add_run_like_commands",
        "cli/changes.py:change_options",
        "cli/options.py:build_parser",
        "cli/options.py:run_options",
        "cli/options.py:output_options",
        "cli/parameters.py:add_parameter_options",
        "cli/publish.py:run_publish",
        "cli/reports.py:emit",
        "cli/run.py:run_command",
        "cli/stored.py:doctor",
        "cli/stored.py:cache",
        "cli/workflows/bisect/handler.py:handle",
        "cli/workflows/check/handler.py:handle",
        "cli/workflows/history/handler.py:handle",
        "engine/cluster_ray.py:connect",
        "engine/cpu.py:measurement_cpu",
        "engine/run_notes.py:note_forked",
        "git/cache_worktree.py:add_worktree",
        "git/repo.py:resolve_ref",
        "lenses/asm/analyse.py:compile_patterns",
        "lenses/asm/code_facts.py:code_facts",
        "lenses/asm/function_code.py:list_function",
        "lenses/asm/identity.py:split_member",
        "lenses/asm/machine_code.py:line_to_json",
        "lenses/asm/machine_code.py:line_from_json",
        "lenses/asm/sources.py:region_from_json",
        "lenses/asm/summaries.py:instruction_mix",
        "lenses/asm/summaries.py:summarise_loop",
        "lenses/counters/analyse.py:hint_for",
        "lenses/counters/cost.py:counters_cost",
        "lenses/counters/render.py:section",
        "lenses/fragments.py:verdict_cell",
        "lenses/instructions/counts.py:variant_counts",
        "lenses/instructions/render.py:section",
        "lenses/memory/render.py:section",
        "lenses/rss/cost.py:rss_cost",
        "lenses/rss/render.py:section",
        "lenses/time/cost.py:time_cost",
        "lenses/time/notes.py:overload_note",
        "lenses/time/notes.py:noise_notes",
        "lenses/time/render.py:section",
        "lenses/torch/worker_ops.py:torch_profile",
        "lenses/torch/worker_ops.py:torch_warm",
        "machine/host.py:machine_facts",
        "measure/callgrind/store.py:store_repeat",
        "measure/callgrind/store.py:add_frames",
        "measure/callgrind/store.py:add_identities",
        "measure/callgrind/store.py:store_command_dumps",
        "plan/experiment_file.py:load_experiment",
        "plan/experiment_file.py:experiment_from_mapping",
        "plan/specs.py:checked_git_keys",
        "publish/figures.py:figures_of",
        "report/changes.py:provenance_table",
        "report/changes.py:render_cache_entries",
        "report/html.py:forest_rows",
        "report/html.py:block_view",
        "report/html.py:machine_rows",
        "report/json_report.py:sample_to_json",
        "report/machine_views.py:render_events",
        "report/machine_views.py:render_doctor",
        "report/machine_views.py:render_store_health",
        "report/markdown.py:table_lines",
        "report/markdown.py:section_lines",
        "report/markdown.py:render_markdown",
        "report/notes.py:group_notes",
        "report/terminal.py:table_renderable",
        "report/terminal.py:render_run_list",
        "stats/noise.py:drift_finding",
        "stats/noise.py:outlier_finding",
        "stats/noise.py:bimodality_finding",
        "stats/noise.py:migration_finding",
        "stats/noise.py:per_process_finding",
        "store/codec.py:experiment_to_json",
        "store/codec.py:experiment_from_json",
        "store/postgres.py:check_url",
        "store/sqlite_file.py:check_is_sqlite",
        "store/tables.py:sample_of",
        "tool_drivers/process_maps.py:parse_proc_maps",
        "worker/callgrind_ops.py:callgrind_probe",
        "worker/callgrind_ops.py:callgrind_sample",
        "worker/callgrind_ops.py:callgrind_discard",
        "worker/callgrind_ops.py:callgrind_collect_only",
        "worker/command_launcher.py:run_requested_command",
        "worker/peak_memory_ops.py:rss_sample",
        "worker/perflab_bench_plugin.py:pytest_addoption",
        "worker/perflab_bench_plugin.py:pytest_collection_finish",
        "worker/process_tree.py:read_entry",
        "worker/process_tree.py:process_table",
        "worker/process_tree.py:descendants",
        "worker/statement_worker.py:main",
    }
)


def _classes(
    body: list[ast.stmt], path: str, outer: str = ""
) -> Iterator[tuple[str, ast.ClassDef]]:
    """Each public class in `body` and in the public classes nested in it, as (place, node)."""
    for node in body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield f"{path}:{outer}{node.name}", node
            yield from _classes(node.body, path, f"{outer}{node.name}.")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text())


def _long_functions() -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Each public module-level function whose body is over MAX_BODY_LINES lines."""
    for path, tree in _modules():
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body_lines = (node.end_lineno or node.lineno) - node.body[0].lineno + 1
            if not node.name.startswith("_") and body_lines > MAX_BODY_LINES:
                yield f"{path}:{node.name}", node


def _undocumented_functions() -> set[str]:
    return {place for place, node in _long_functions() if ast.get_docstring(node) is None}


def test_every_public_class_has_a_docstring() -> None:
    missing = [
        place
        for path, tree in _modules()
        for place, node in _classes(tree.body, path)
        if ast.get_docstring(node) is None
    ]
    assert not missing, "say in one sentence what each holds or is for:\n" + "\n".join(missing)


def test_every_long_public_function_has_a_docstring() -> None:
    missing = sorted(_undocumented_functions() - UNDOCUMENTED_FUNCTIONS)
    assert not missing, "say in one sentence what each returns or does:\n" + "\n".join(missing)


def test_every_allowance_is_still_needed() -> None:
    stale = sorted(UNDOCUMENTED_FUNCTIONS - _undocumented_functions())
    assert not stale, f"documented now (or gone): remove from UNDOCUMENTED_FUNCTIONS: {stale}"


def test_the_check_sees_the_code() -> None:
    # a walk that found nothing would pass the checks above vacuously
    places = {place for path, tree in _modules() for place, _ in _classes(tree.body, path)}
    assert "records/model.py:Experiment" in places
    assert len(list(_long_functions())) > len(UNDOCUMENTED_FUNCTIONS)
