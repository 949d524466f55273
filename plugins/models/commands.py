"""``spanaug models list|fetch|path|verify``: the presets of every plugin, and the cache they live in.

Presets come from the registry (each plugin registers its own); fetching, checking and
verifying use ``spanaug_shared.models``. ``verify`` hashes every file of every cached
folder that has a record (presets and converted copies alike), not only the ones whose
size or mtime moved.
"""

from __future__ import annotations

import click

from spanaug_core.console import note, out_console, progress_callback
from spanaug_core.errors import SpanaugError
from spanaug_core.plugins import default_registry


@click.group("models")
def models_group() -> None:
    """List, fetch, locate and verify model presets (cached under $SPANAUG_HOME, default ~/.cache/spanaug)."""


@models_group.command("list")
def models_list() -> None:
    """Show every preset the plugins register, its source and whether it is cached."""
    from rich.table import Table

    table = Table("preset", "role", "cached", "source", "description")
    for preset in default_registry().presets().values():
        table.add_row(preset.name, preset.role, "yes" if preset.cached() else "no", preset.sources, preset.description)
    out_console.print(table)


@models_group.command("fetch")
@click.argument("name")
@click.option("--force", is_flag=True, help="delete the cached copy first and fetch it again (e.g. after a failed check)")
def models_fetch(name: str, force: bool) -> None:
    """Fetch a preset into the cache (sha256 verified) and print its path."""
    preset = default_registry().preset(name)
    if force:
        remove = getattr(preset, "remove", None)
        if not callable(remove):
            raise SpanaugError(f"preset '{name}' cannot be removed by spanaug; delete its cached files by hand")
        remove()
    with progress_callback(unit="packages") as progress:
        path = preset.fetch(progress)
    click.echo(str(path))


@models_group.command("path")
@click.argument("name")
def models_path(name: str) -> None:
    """Print a preset's cached path, fetching it first if needed."""
    models_fetch.callback(name, False)  # type: ignore[misc]


@models_group.command("verify")
def models_verify() -> None:
    """Hash every cached model file again and compare it with what was recorded when it was cached."""
    from rich.table import Table

    from spanaug_shared.models import RECORD, cache_dir, changed_files

    bad = []
    for preset in default_registry().presets().values():
        check, cached = getattr(preset, "check", None), preset.cached()
        folder = cached if cached is None or cached.is_dir() else cached.parent
        # A copy cached before files were recorded is checked and recorded first; the others
        # are hashed once, below.
        if folder is not None and not (folder / RECORD).is_file() and callable(check):
            try:
                check()
            except SpanaugError as exc:
                note(str(exc))
                bad.append(preset.name)
    folders = sorted(record.parent for record in cache_dir().rglob(RECORD))
    table = Table("cached folder", "files", "status")
    for folder in folders:
        changed = changed_files(folder, rehash=True)
        files = sum(1 for p in folder.rglob("*") if p.is_file() and p.name != RECORD)
        table.add_row(str(folder.relative_to(cache_dir())), str(files), f"[red]changed: {', '.join(changed)}[/]" if changed else "ok")
        if changed:
            bad.append(folder)
    out_console.print(table)
    if bad:
        raise SpanaugError(f"{len(bad)} cached model(s) changed since they were recorded: {', '.join(map(str, bad))}; "
                           "fetch presets again with `spanaug models fetch NAME --force` (converted copies are remade on next use)")
    note(f"{len(folders)} cached folder(s) verified")
