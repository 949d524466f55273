"""The ``spanaug`` command: core sub-commands plus whatever plugins add.

The core owns ``run``, ``list`` and ``convert``; ``train`` and ``eval`` are groups that
plugins fill (``spanaug train aligner``, ``spanaug eval framenet-lus``). Plugins add
commands through the ``register_commands(cli)`` hook. A ``SpanaugError`` becomes one red
line and exit status 2; set ``SPANAUG_DEBUG=1`` to see tracebacks instead.
"""

from __future__ import annotations

import os
import sys

import click

from spanaug_core import __version__
from spanaug_core.console import error, note
from spanaug_core.errors import SpanaugError


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="spanaug")
def cli() -> None:
    """Grow span-labeled datasets by iterative constrained paraphrasing and span alignment."""


@cli.group("train")
def train_group() -> None:
    """Train a model (sub-commands come from plugins, e.g. `spanaug train aligner`)."""


@cli.group("eval")
def eval_group() -> None:
    """Evaluate a run or a model (sub-commands come from plugins)."""


def _load_plugin_commands() -> None:
    from spanaug_core.plugins import default_registry

    default_registry().add_commands(cli)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    debug = bool(os.environ.get("SPANAUG_DEBUG"))
    try:
        _load_plugin_commands()
        cli.main(args=argv, prog_name="spanaug", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        note("aborted")
        return 130
    except KeyboardInterrupt:
        note("interrupted")
        return 130
    except SpanaugError as exc:
        if debug:
            raise
        error(str(exc))
        return 2
    except Exception as exc:  # the last line of defence: one line, not a traceback
        if debug:
            raise
        error(f"internal error: {type(exc).__name__}: {exc} (rerun with SPANAUG_DEBUG=1 for the traceback)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
