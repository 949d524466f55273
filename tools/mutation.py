"""Mutation testing (mutmut) of the code whose bugs the fast tests must catch: the constraint
tries, the VDBA search, the run store and the readers' validation.

mutmut 3 mutates a copy of the sources under ``mutants/`` and imports them from there, by
the module name their path gives; a plugin of spanaug is imported under another name
(``plugins/decoders`` is ``spanaug_decoders``), and its tests would import the editable
install instead. So each target runs in a scratch copy of the working tree (``out/mutation/
TARGET``) where every plugin folder is linked under its import name, with a ``[tool.mutmut]``
section naming the files to mutate and the fast tests that exercise them. mutmut then finds
the mutated packages ahead of the editable install, and runs, for each mutant, the tests that
cover its function. Results: docs/results/mutation-testing.md.

    OMP_NUM_THREADS=1 .venv/bin/python tools/mutation.py tries --sample 1   # or vdba, run-store, readers
    cd out/mutation/tries && ../../../.venv/bin/mutmut results   # the survivors; `mutmut show NAME`

``--sample D`` tests only the mutants whose number ends in the digit D (mutmut numbers the
mutants of each function from 1): about a tenth of them, the first mutant of every function
included; without it every mutant is tested (hours on 2 cores). ``--minutes M`` stops the
run after M minutes, making the mutants and a clean run of the tests included; mutmut goes
from the mutants with the fastest tests to the slowest, so a run cut short has tested the
cheapest part of its sample.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The scripted bigram model's tests: a second each. The tiny-model tests (test_subword.py,
# test_models.py) take about a minute a mutant on a shared 2-core machine, so they are left out.
DECODER_TESTS = ["tests/plugins/decoders/test_tries.py", "tests/plugins/decoders/test_vdba.py"]
# target: (files to mutate, by import path; the tests to run)
TARGETS = {
    "tries": (["spanaug_decoders/tries.py"], DECODER_TESTS),
    "vdba": (["spanaug_decoders/vdba.py"], DECODER_TESTS),
    "run-store": (["spanaug_core/output.py"], ["tests/core/test_run.py", "tests/core/test_interrupts.py"]),
    "readers": (
        ["spanaug_core/types.py", "spanaug_core/files.py", "spanaug_jsonl/dataset.py", "spanaug_shared/jsonlines.py"],
        ["tests/core/test_refusals.py", "tests/core/test_offsets.py", "tests/core/test_types_text.py", "tests/core/test_files.py",
         "tests/plugins/jsonl/test_jsonl.py"],
    ),
}


def scratch_copy(target: str, root: Path) -> Path:
    """The working tree's files (tracked and new, not ignored) under ``root/target``, plugins linked by import name."""
    folder = root / target
    shutil.rmtree(folder, ignore_errors=True)
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    for plugin in (REPO / "plugins").iterdir():
        if (plugin / "__init__.py").is_file():
            (folder / f"spanaug_{plugin.name}").symlink_to(Path("plugins") / plugin.name)
    return folder


def configure(folder: Path, mutate: list[str], tests: list[str]) -> None:
    """Append the ``[tool.mutmut]`` section of this target to the copy's pyproject.toml."""
    packages = sorted({path.split("/")[0] for path in mutate})
    section = (
        "\n[tool.mutmut]\n"
        f"source_paths = {json.dumps(packages)}\n"  # a JSON list of strings is a TOML array
        f"only_mutate = {json.dumps(mutate)}\n"
        # mutmut runs the tests from its mutants/ copy; some read the plugins' sample files.
        'also_copy = ["plugins"]\n'
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]\n'
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}\n"
    )
    with (folder / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write(section)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--sample", choices=list("0123456789"), help="test only the mutants whose number ends in this digit")
    parser.add_argument("--minutes", type=float, help="stop after this long (mutmut tests the cheapest mutants first)")
    parser.add_argument("--out", type=Path, default=REPO / "out" / "mutation", help="where the scratch copies go")
    args = parser.parse_args()
    mutate, tests = TARGETS[args.target]
    folder = scratch_copy(args.target, args.out)
    configure(folder, mutate, tests)
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    names = [f"*__mutmut_*{args.sample}"] if args.sample else []
    run = subprocess.Popen([str(mutmut), "run", "--max-children", "1", *names], cwd=folder, env=env)
    try:
        run.wait(timeout=args.minutes * 60 if args.minutes else None)
    except subprocess.TimeoutExpired:
        run.send_signal(signal.SIGINT)  # mutmut keeps each verdict as it comes, and stops cleanly on Ctrl-C
        run.wait()
    results = subprocess.run([str(mutmut), "results", "--all", "true"], cwd=folder, env=env, check=True, capture_output=True, text=True)
    statuses = Counter(line.rsplit(": ", 1)[-1].strip() for line in results.stdout.splitlines() if ": " in line)
    statuses.pop("not checked", None)  # outside the sample, or not reached in --minutes
    caught = statuses["killed"] + statuses["timeout"]  # a mutant that makes a test hang is caught too
    tested = sum(statuses.values()) - statuses["no tests"]
    if not tested:
        print(f"{args.target}: no mutant was tested; --minutes also covers making the mutants and a clean run of the tests")
        return 1
    print(f"{args.target}: {dict(statuses)}; score {caught}/{tested} = {caught / tested:.1%} of the mutants the tests reach")
    return 0


if __name__ == "__main__":
    sys.exit(main())
