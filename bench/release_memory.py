"""Peak memory of a short ``spanaug run`` over a whole FrameNet release against the shipped sample.

Does reading a whole release cost memory that grows with the release? Each run is a
separate ``spanaug run`` process (the same ``--limit`` examples, decoder, model and
aligner) measured with ``/usr/bin/time -v`` (its "Maximum resident set size"):

- ``sample``: the framenet dataset's shipped sample (no ``--input``);
- ``release``: the whole release (``--input``), which the lexicon and frame-lexicon now read too;
- ``release-exemplars``: the whole release, LU exemplars only (one target a sentence, as in the sample);
- ``one-document``: a copy of the release holding only its frame index, its frames and the
  first full-text document, so the same examples as ``release`` (the same work) from a
  release a hundred times smaller.

``release`` against ``one-document`` isolates what the release's size costs;
``release-exemplars`` against ``sample`` compares runs that rewrite as many spans. Runs
take turns, ``--repeat`` rounds; each keeps its largest peak. The last line is JSON.

    OMP_NUM_THREADS=1 .venv/bin/python bench/release_memory.py --release /work/data/framenet15/fndata-1.5
    OMP_NUM_THREADS=1 .venv/bin/python bench/release_memory.py --release ... --spanaug ../main/.venv/bin/spanaug --runs sample,release  # another build
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def one_document(release: Path, folder: Path) -> Path:
    """A release with ``release``'s frame index and frames (linked) and its first full-text document only."""
    (folder / "fulltext").mkdir(parents=True)
    shutil.copy(release / "frameIndex.xml", folder / "frameIndex.xml")
    (folder / "frame").symlink_to((release / "frame").resolve())
    first = sorted((release / "fulltext").glob("*.xml"))[0]
    shutil.copy(first, folder / "fulltext" / first.name)
    return folder


def peak_mb(command: list[str], log: Path) -> float:
    """The peak resident memory of ``command`` in MB (``/usr/bin/time -v``), its output kept in ``log``."""
    with log.open("w") as out:
        done = subprocess.run(["/usr/bin/time", "-v", *command], stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "OMP_NUM_THREADS": "1"})
    text = log.read_text()
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed; see {log}:\n{text[-2000:]}")
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, required=True, help="a FrameNet release folder (fndata-1.5)")
    parser.add_argument("--spanaug", default=str(Path(sys.executable).with_name("spanaug")), help="the spanaug command to measure")
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--aligner", default="simalign")
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="keep the runs' folders and logs here (default: a temporary folder)")
    parser.add_argument("--runs", default="sample,release,release-exemplars,one-document", help="which runs, comma-separated")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="release-memory-"))
    small = one_document(args.release, work / "one-document-release")
    inputs = {"sample": [], "release": ["--input", str(args.release)],
              "release-exemplars": ["--input", str(args.release), "--set", "dataset.source=exemplars"],
              "one-document": ["--input", str(small)]}
    inputs = {name: inputs[name] for name in args.runs.split(",")}
    common = ["run", "--dataset", "framenet", "--decoder", "vdba", "--model", args.model, "--aligner", args.aligner,
              "--limit", str(args.limit), "--iterations", "2", "--beam", "4", "--top-m", "4"]
    peaks: dict[str, list[float]] = {name: [] for name in inputs}
    for round_ in range(args.repeat):
        for name, given in inputs.items():
            out = work / f"{name}-{round_}"
            peaks[name].append(peak_mb([args.spanaug, *common, *given, "--output", str(out)], work / f"{name}-{round_}.log"))
            spans = json.loads((out / "manifest.json").read_text())["counts"]["jobs"]
            print(f"{name:18} round {round_ + 1}: {peaks[name][-1]:7.0f} MB peak RSS, {spans} spans", flush=True)
    top = {name: max(found) for name, found in peaks.items()}
    ratios = {f"{a}_over_{b}".replace("-", "_"): round(top[a] / top[b], 3)
              for a, b in (("release", "one-document"), ("release-exemplars", "sample"), ("release", "sample")) if a in top and b in top}
    print(json.dumps({"peak_mb": {name: [round(p) for p in found] for name, found in peaks.items()}, **ratios}))


if __name__ == "__main__":
    main()
