"""Sealed run bundles: one file per run that is enough to recompute every metric offline.

Why a bundle: a score is only as trustworthy as the evidence behind it. A bundle freezes that
evidence (ground truth, alerts, incident events, actions with policy verdicts, probe results,
degradation, usage, the run's metric series and the scoring weights used) in one file that
`verify_bundle` refuses as soon as anything in it changed, so `sre-marathon score BUNDLE` rescores
exactly what was recorded.

Format (``format_version`` 1): a ZIP archive written deterministically (fixed member order, fixed
timestamps 1980-01-01 00:00:00, fixed permissions 0644, DEFLATE level 6, no extra fields) with
these members, in this order:

``manifest.json``
    canonical JSON (sorted keys, no whitespace): format name and version, package version, catalog
    digest (`catalog_digest`), the run (app, seed, mode, env config, durations), the seal kind,
    caller-supplied ``extra`` and, for every other member except ``seal``, its sha256 and size.
``record.json``
    the `RunRecord` as canonical JSON.
``scoring.json`` (when a catalog is given)
    the catalog's scoring weights, so the bundle rescores without the catalog it was run with.
``telemetry.json`` / ``telemetry.bin`` (when a metric store is given)
    the series index (name and labels per row, grid step, first sample time, dtype) and the values
    as one little-endian row-major matrix ``[series, samples]`` on the 15 s grid; NaN = no sample.
``seal``
    ``sha256:<hex>`` of the manifest bytes, or ``hmac-sha256:<hex>`` when a key was given.

The ZIP comment holds ``sre-marathon-bundle/1 sha256=<hex>``: a checksum of every byte of the file
before the hex digits, so a flipped byte in a ZIP header (which no member hash covers) is refused
too.

What the seal protects against: accidental damage (a truncated copy, a flipped bit) and naive
edits (someone changes ``record.json`` by hand). The plain sha256 seal does NOT stop a determined
forger, who can recompute every hash; maintainers who need forgery resistance seal with a secret
key (``key=`` or ``SRE_MARATHON_BUNDLE_KEY``), which makes the seal an HMAC-SHA256 that only key
holders can produce or check.

Completeness: the manifest's ``completeness`` is ``{"complete": true}`` for a run that reached its
end, or ``{"complete": false, "reached_s": T, "reason": "..."}`` for one that stopped early
(written by `evaluation.episode_runner.save_incomplete` when a run crashes or is interrupted). It is
sealed, so renaming ``x.incomplete.bundle`` to ``x.bundle`` hides nothing; `rescoring.score_bundles`
refuses an incomplete bundle unless ``allow_incomplete=True``. A bundle sealed before the field
existed counts as complete.

Catalog: ``catalog_version`` (and ``run.catalog_schema_version``, the record's own copy) is the
`catalog_digest` of the catalog the run used. Scoring under a catalog with another digest is refused
unless ``rescore_with_catalog=True`` (`rescoring`): a rescore is never silent. The bounded
ZIP reading is `archive`.

Reading is bounded before anything is decompressed: the file must be a regular file of at most
`MAX_BUNDLE_BYTES`; the end-of-archive record must sit where a bundle puts it (no ZIP64, a central
directory of at most 1 MiB and `MAX_MEMBERS` entries); every member must be DEFLATE, unencrypted and
declare at most `MAX_CONTENT_BYTES` in total; members are then inflated in 1 MiB chunks up to their
declared size. Every malformed archive raises `BundleError`.

Writing: an interrupted write leaves nothing at the target. A write killed outright (kill -9, power
loss) leaves a hidden ``.NAME.bundle.XXXXXXXX.tmp``; the next write into that directory removes those
older than `STALE_TMP_AGE_S` (see `_remove_stale_temps` for why age and not the writer's PID).

Byte identity: the same record and telemetry give the same members on every platform (their
hashes are in the manifest); the archive bytes are also identical for the same zlib build.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import math
import os
import re
import stat
import struct
import tempfile
import threading
import time
import weakref
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from ..core.errors import BundleError, BundleWriteError
from ..scoring import RunRecord
from .archive import (
    EOCD_LEN,
    EOCD_MAGIC,
    MAX_BUNDLE_BYTES,
    MAX_CENTRAL_DIRECTORY,
    MAX_CONTENT_BYTES,
    MAX_MEMBERS,
    READ_CHUNK,
    ZIP64_LOCATOR,
    canonical_json,
    check_entries,
    foreign_zip_names,
    open_regular,
    open_zip,
    read_at,
    read_member,
)
from .metrics import RecordedMetrics

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..catalog.settings import Scoring
    from ..metrics.store import MetricStore

Telemetry = RecordedMetrics  # the earlier name (deprecated)

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_FORMAT_VERSION",
    "KEY_ENV",
    "MAX_BUNDLE_BYTES",
    "MAX_CONTENT_BYTES",
    "MAX_MEMBERS",
    "STALE_TMP_AGE_S",
    "Bundle",
    "BundleError",
    "BundleInfo",
    "Incomplete",
    "RecordedMetrics",
    "catalog_digest",
    "load_bundle",
    "verify_bundle",
    "write_bundle",
]

BUNDLE_FORMAT = "sre-marathon-bundle"
BUNDLE_FORMAT_VERSION = 1
SUPPORTED_FORMAT_VERSIONS = frozenset({1})
KEY_ENV = "SRE_MARATHON_BUNDLE_KEY"
"""Environment variable holding the HMAC key when ``key=`` is not passed."""

MANIFEST = "manifest.json"
RECORD = "record.json"
SCORING = "scoring.json"
TELEMETRY_INDEX = "telemetry.json"
TELEMETRY_VALUES = "telemetry.bin"
SEAL = "seal"

_DATE_TIME = (1980, 1, 1, 0, 0, 0)
_FILE_MODE = 0o100644  # regular file, rw-r--r--
_COMPRESS_LEVEL = 6
_COMMENT_PREFIX = f"{BUNDLE_FORMAT}/{BUNDLE_FORMAT_VERSION} sha256=".encode("ascii")
_HEX_LEN = 64
_ZIP_MAGIC = b"PK\x03\x04"
_WRITE_BLOCK = 1 << 20

STALE_TMP_AGE_S = 600.0
"""A write's temp file untouched for this long belongs to a writer that died (see `_remove_stale_temps`)."""

_MAX_SEAL_BYTES = 1024
_TMP_NAME = re.compile(r"\..+\.bundle\.[a-z0-9_]{8}\.tmp")  # tempfile.mkstemp's 8 random characters


# ---------------------------------------------------------------------------------------------- helpers
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _resolve_key(key: str | bytes | None) -> bytes | None:
    """An explicit key wins; otherwise SRE_MARATHON_BUNDLE_KEY; an empty key means no key."""
    if key is None:
        key = os.environ.get(KEY_ENV) or None
    if key is None or key == "" or key == b"":
        return None
    return key.encode("utf-8") if isinstance(key, str) else bytes(key)


def _seal_bytes(manifest: bytes, key: bytes | None) -> bytes:
    if key is None:
        return f"sha256:{_sha256(manifest)}\n".encode("ascii")
    return f"hmac-sha256:{hmac.new(key, manifest, hashlib.sha256).hexdigest()}\n".encode("ascii")


def catalog_digest(catalog: Catalog | str | os.PathLike[str]) -> str:
    """sha256 over the catalog's data files (relative path and bytes, sorted by path).

    Why: the catalog's ``schema_version`` says which shape its files have, not which numbers are
    in them; the digest changes whenever any fault, rule or weight changes, so two bundles with
    the same digest were run against the same catalog.
    """
    root = Path(catalog) if isinstance(catalog, (str, os.PathLike)) else Path(catalog.root)
    if not root.is_dir():
        raise BundleError(f"catalog directory {root} does not exist")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix in (".yaml", ".yml", ".json")
        and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts)
    )
    h = hashlib.sha256()
    for p in files:
        rel = p.relative_to(root).as_posix().encode("utf-8")
        data = p.read_bytes()
        h.update(len(rel).to_bytes(8, "little") + rel + len(data).to_bytes(8, "little"))
        h.update(data)
    return f"sha256:{h.hexdigest()}"


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Incomplete:
    """A run that stopped before its end: how far it got and why.

    Why sealed: a partial run scores as if its missing faults had been missed; the flag must travel
    with the evidence, not with a file name that anyone can change.
    """

    reached_s: float | None
    reason: str = ""

    def describe(self, run_s: float | None = None) -> str:
        """``interrupted at t=1234 s of 5400 s: KeyboardInterrupt``."""
        at = "an unknown time" if self.reached_s is None else f"t={self.reached_s:.0f} s"
        of = f" of {run_s:.0f} s" if run_s is not None and self.reached_s is not None else ""
        return f"interrupted at {at}{of}" + (f": {self.reason}" if self.reason else "")

    def to_json(self) -> dict[str, Any]:
        return {"complete": False, "reached_s": self.reached_s, "reason": self.reason}

    @classmethod
    def from_exception(cls, reached_s: float | None, exc: BaseException) -> Incomplete:
        """The reason recorded for a run that `exc` stopped at `reached_s` (one line, <= 500 chars)."""
        text = " ".join(str(exc).split())
        return cls(reached_s, (type(exc).__name__ + (f": {text}" if text else ""))[:500])


def _completeness(path: Path, manifest: dict[str, Any]) -> Incomplete | None:
    """The sealed ``completeness``: None for a complete run (or a bundle older than the field)."""
    value = manifest.get("completeness")
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("complete"), bool):
        raise BundleError(f"{path}: {MANIFEST} has a malformed completeness {value!r:.100}")
    if value["complete"]:
        return None
    reached, reason = value.get("reached_s"), value.get("reason", "")
    if not (reached is None or _is_number(reached)) or not isinstance(reason, str):
        raise BundleError(f"{path}: {MANIFEST} has a malformed completeness {value!r:.100}")
    return Incomplete(None if reached is None else float(reached), reason)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class BundleInfo:
    """What `verify_bundle` established about a bundle."""

    path: Path
    format_version: int
    manifest: dict[str, Any]
    seal_kind: str  # "sha256" or "hmac-sha256"
    size: int
    members: dict[str, str] = field(default_factory=dict)  # name -> sha256 (manifest and seal excluded)
    incomplete: Incomplete | None = None  # sealed: None when the run reached its end

    @property
    def catalog_version(self) -> str | None:
        return self.manifest.get("catalog_version")

    @property
    def catalog_digest(self) -> str | None:
        """The digest of the catalog the run used: the manifest's, else the record's own copy."""
        run = self.manifest.get("run")
        for value in (
            self.manifest.get("catalog_version"),
            run.get("catalog_schema_version") if isinstance(run, dict) else None,
        ):
            if isinstance(value, str) and value.startswith("sha256:"):
                return value
        return None

    @property
    def complete(self) -> bool:
        return self.incomplete is None

    def describe_incomplete(self) -> str:
        """``interrupted at t=... s of ... s: reason`` (empty for a complete run)."""
        if self.incomplete is None:
            return ""
        run = self.manifest.get("run") or {}
        parts = [run.get("injection_s"), run.get("observation_s")]
        run_s = sum(parts) if all(_is_number(p) for p in parts) else None
        return self.incomplete.describe(run_s)


@dataclass(frozen=True)
class Bundle:
    """A verified bundle, decoded: the record to score, telemetry (if stored) and the manifest."""

    info: BundleInfo
    record: RunRecord
    telemetry: RecordedMetrics | None
    scoring: Scoring | None

    @property
    def manifest(self) -> dict[str, Any]:
        return self.info.manifest

    @property
    def extra(self) -> dict[str, Any]:
        return dict(self.info.manifest.get("extra") or {})


# ---------------------------------------------------------------------------------------------- writing
def _zip_bytes(members: list[tuple[str, bytes]]) -> bytes:
    """Deterministic ZIP of `members` with the container checksum in the comment."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", allowZip64=True) as zf:
        for name, data in members:
            zi = zipfile.ZipInfo(name, date_time=_DATE_TIME)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.create_system = 3
            zi.external_attr = _FILE_MODE << 16
            zf.writestr(zi, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=_COMPRESS_LEVEL)
        zf.comment = _COMMENT_PREFIX + b"0" * _HEX_LEN
    data = bytearray(buf.getvalue())
    data[-_HEX_LEN:] = _sha256(bytes(data[:-_HEX_LEN])).encode("ascii")
    return bytes(data)


def _write_all(fh: Any, data: bytes) -> None:
    """Write in blocks (a seam for tests that interrupt a write half-way)."""
    view = memoryview(data)
    for off in range(0, len(view), _WRITE_BLOCK):
        fh.write(view[off : off + _WRITE_BLOCK])


def _remove_stale_temps(directory: Path, now: float | None = None) -> list[Path]:
    """Remove the temp files of bundle writes that were killed in `directory`; return them.

    Why the age of the file and not its writer's PID: a PID means nothing on a shared file system
    (the writer may run on another host or in another container) and PIDs are reused, so a PID test
    could delete a live writer's file or keep a dead one's forever. A live writer keeps its temp
    file fresh: the bytes are built before the file exists, then written, fsynced and renamed within
    seconds, so a file untouched for `STALE_TMP_AGE_S` has no writer left (a writer suspended longer
    than that mid-write fails loudly at its rename; it never renames a damaged file). Only regular
    files named like ours (``.NAME.bundle.XXXXXXXX.tmp``) are touched; errors are ignored (another
    writer may be cleaning up too).
    """
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not _TMP_NAME.fullmatch(entry.name):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TMP_AGE_S:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _atomic_write(path: Path, data: bytes) -> None:
    """Temp file in the same directory, fsync, rename: `path` is either the old file or the whole new one.

    File-system errors become `BundleWriteError` (still an `OSError`) naming the bundle."""
    _remove_stale_temps(path.parent)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise BundleWriteError(f"cannot write bundle {path}: {exc}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_all(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, BundleError):
            raise BundleWriteError(f"cannot write bundle {path}: {exc}") from exc
        raise
    try:  # make the rename itself durable; not possible everywhere (e.g. Windows)
        dfd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _checked_catalog_digest(record: RunRecord, catalog: Catalog | None) -> str | None:
    """`catalog`'s digest, refused when the record says the run used another catalog.

    Why: the bundle seals `catalog`'s scoring weights; sealing weights of a catalog the run did not
    use would make every later rescore silently wrong."""
    if catalog is None:
        return None
    digest = catalog_digest(catalog)
    used = record.manifest.catalog_version
    if used.startswith("sha256:") and used != digest:
        raise BundleError(
            f"cannot seal the run with catalog {catalog.root} ({digest[:19]}...): the run used "
            f"catalog {used[:19]}...; pass the catalog the run was made with"
        )
    return digest


_last_encoded: list = [None, -1, None]  # [weak reference to a store, its revision, its members]
_encoded_lock = threading.Lock()


def _forget_encoded(ref: weakref.ref) -> None:
    with _encoded_lock:
        if _last_encoded[0] is ref:
            _last_encoded[:] = [None, -1, None]


def _telemetry_members(store: MetricStore | RecordedMetrics) -> tuple[bytes, bytes, dict]:
    """(index, values, manifest summary) of the telemetry. A store sealed again at the same revision
    right after (the agents of a shared world that never left it, `envs.shared_world`, seal one
    after another) is encoded once; only the last store's encoding is kept, and only while it lives."""
    revision = getattr(store, "revision", None)
    if revision is not None:
        with _encoded_lock:
            ref, rev, members = _last_encoded
            if ref is not None and ref() is store and rev == revision:
                return members
    tel = store if isinstance(store, RecordedMetrics) else RecordedMetrics.from_store(store)
    index, values = tel.encode()
    out = index, values, {"series": len(tel), "samples": int(np.count_nonzero(~np.isnan(tel.values)))}
    if revision is not None:
        with _encoded_lock:
            _last_encoded[:] = [weakref.ref(store, _forget_encoded), revision, out]
    return out


def build_bundle_bytes(
    record: RunRecord,
    store: MetricStore | RecordedMetrics | None = None,
    catalog: Catalog | None = None,
    extra: Mapping[str, Any] | None = None,
    key: str | bytes | None = None,
    *,
    incomplete: Incomplete | None = None,
) -> bytes:
    """The bundle's bytes (what `write_bundle` writes); pure, so equal inputs give equal bytes."""
    from ..core.version import __version__

    if not isinstance(record, RunRecord):
        raise BundleError(f"record must be a RunRecord, got {type(record).__name__}")
    if incomplete is not None and not isinstance(incomplete, Incomplete):
        raise BundleError(f"incomplete must be an Incomplete or None, got {type(incomplete).__name__}")
    digest = _checked_catalog_digest(record, catalog)
    members: list[tuple[str, bytes]] = [(RECORD, canonical_json(record.model_dump(mode="json"), "record"))]
    if catalog is not None:
        members.append((SCORING, canonical_json(catalog.scoring.model_dump(mode="json"), "scoring")))
    telemetry_summary = None
    if store is not None:
        index, values, telemetry_summary = _telemetry_members(store)
        members += [(TELEMETRY_INDEX, index), (TELEMETRY_VALUES, values)]
    resolved = _resolve_key(key)
    m = record.manifest
    manifest = {
        "format": BUNDLE_FORMAT,
        "format_version": BUNDLE_FORMAT_VERSION,
        "package_version": __version__,
        "catalog_version": digest,
        "completeness": {"complete": True} if incomplete is None else incomplete.to_json(),
        "record_schema_version": record.schema_version,
        "run": {
            "app": m.app,
            "seed": m.seed,
            "mode": m.mode,
            "interval_s": m.interval_s,
            "injection_s": m.injection_s,
            "observation_s": m.observation_s,
            "env_config": m.env_config,
            "catalog_schema_version": m.catalog_version,
        },
        "counts": {
            "faults": len(record.faults),
            "alerts": len(record.alerts),
            "actions": len(record.actions),
            "incident_events": len(record.incident_events),
            "probes": len(record.probes),
        },
        "telemetry": telemetry_summary,
        "seal": "sha256" if resolved is None else "hmac-sha256",
        "members": [{"name": n, "sha256": _sha256(d), "size": len(d)} for n, d in members],
        "extra": dict(extra) if extra else {},
    }
    manifest_bytes = canonical_json(manifest, "manifest (check `extra`)")
    return _zip_bytes([(MANIFEST, manifest_bytes), *members, (SEAL, _seal_bytes(manifest_bytes, resolved))])


def write_bundle(
    path: str | os.PathLike[str],
    record: RunRecord,
    store: MetricStore | RecordedMetrics | None = None,
    catalog: Catalog | None = None,
    extra: Mapping[str, Any] | None = None,
    key: str | bytes | None = None,
    *,
    incomplete: Incomplete | None = None,
) -> Path:
    """Write a sealed bundle atomically and return its path.

    `store` adds the run's metric series; `catalog` (the one the run used) adds its digest and
    scoring weights; `extra` (JSON-serialisable) lands in the manifest; `key` (or
    ``SRE_MARATHON_BUNDLE_KEY``) makes the seal an HMAC. `incomplete` marks, in the sealed manifest,
    a run that stopped early (None: the run reached its end). An interrupted write leaves no file at
    `path` (or the previous one, untouched); stale temp files of killed writes are removed.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise BundleError(f"cannot write bundle {path}: directory {path.parent} does not exist")
    data = build_bundle_bytes(record, store, catalog, extra, key, incomplete=incomplete)
    _atomic_write(path, data)
    return path


# ---------------------------------------------------------------------------------------------- verifying
_TAIL_LEN = EOCD_LEN + len(_COMMENT_PREFIX) + _HEX_LEN


def _check_container(path: Path, fh: io.BufferedReader, size: int) -> tuple[int, int]:
    """Not-a-bundle, truncation and end-of-archive checks, before the ZIP is parsed.

    Returns (entries, central directory offset). Why so strict: zipfile believes whatever the
    end-of-archive and ZIP64 records say (entry counts, directory sizes), so they are bounded here.
    """
    if read_at(fh, 0, len(_ZIP_MAGIC)) != _ZIP_MAGIC:
        raise BundleError(f"{path} is not a bundle: not a ZIP archive (a bundle starts with PK\\x03\\x04)")
    tail = read_at(fh, max(0, size - _TAIL_LEN), _TAIL_LEN)
    if (
        size < _TAIL_LEN
        or not tail.startswith(EOCD_MAGIC)
        or int.from_bytes(tail[20:22], "little") != len(_COMMENT_PREFIX) + _HEX_LEN
    ):
        names = foreign_zip_names(fh, size)
        if names is not None and MANIFEST not in names:
            raise BundleError(f"{path} is not a bundle: ZIP archive without {MANIFEST}")
        raise BundleError(
            f"{path} is truncated or has trailing data: its end-of-archive record with the "
            f"bundle checksum is missing ({size} bytes)"
        )
    comment = tail[EOCD_LEN:]
    if not comment.startswith(_COMMENT_PREFIX):
        if comment.startswith(BUNDLE_FORMAT.encode("ascii")):
            raise BundleError(
                f"{path}: bundle format {comment[: -_HEX_LEN - 8].decode('ascii', 'replace')!r} "
                f"is unsupported (this package reads version {BUNDLE_FORMAT_VERSION})"
            )
        raise BundleError(f"{path} is not a bundle: ZIP archive without the {BUNDLE_FORMAT} checksum comment")
    disk, cd_disk, n_disk, n_total, cd_size, cd_offset = struct.unpack("<HHHHII", tail[4:20])
    eocd = size - _TAIL_LEN
    if (
        disk
        or cd_disk
        or n_disk != n_total
        or not 0 < n_total <= MAX_MEMBERS
        or cd_size > MAX_CENTRAL_DIRECTORY
        or cd_offset + cd_size != eocd
    ):
        raise BundleError(
            f"{path} is damaged: inconsistent end-of-archive record ({n_total} entries, a "
            f"central directory of {cd_size} bytes at {cd_offset}, end record at {eocd})"
        )
    if eocd >= 20 and read_at(fh, eocd - 20, 4) == ZIP64_LOCATOR:
        raise BundleError(f"{path} is damaged: it has ZIP64 records, which a bundle never needs")
    return n_total, cd_offset


def _parse_manifest(path: Path, body: bytes | bytearray) -> dict[str, Any]:
    """The manifest as a dict whose fields this module reads have the right types."""
    try:
        manifest = json.loads(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise BundleError(f"{path}: {MANIFEST} is not valid JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{path} is not a bundle: {MANIFEST} does not declare format {BUNDLE_FORMAT!r}")
    version = manifest.get("format_version")
    if type(version) is not int or version not in SUPPORTED_FORMAT_VERSIONS:
        raise BundleError(
            f"{path}: bundle format version {version!r:.40} is unsupported "
            f"(this package reads {sorted(SUPPORTED_FORMAT_VERSIONS)})"
        )
    for name in ("run", "extra"):
        if manifest.get(name) is not None and not isinstance(manifest[name], dict):
            raise BundleError(f"{path}: {MANIFEST} field {name!r} is not an object")
    return manifest


def _listed_members(path: Path, manifest: dict[str, Any]) -> dict[str, tuple[str, int]]:
    """name -> (sha256, size) from the manifest's member list, in its order."""
    listed = manifest.get("members")
    if not isinstance(listed, list) or not all(
        isinstance(m, dict)
        and isinstance(m.get("name"), str)
        and isinstance(m.get("sha256"), str)
        and type(m.get("size")) is int
        and m["size"] >= 0
        for m in listed
    ):
        raise BundleError(f"{path}: {MANIFEST} has a malformed member list")
    expected = {m["name"]: (m["sha256"], m["size"]) for m in listed}
    if len(expected) != len(listed) or {MANIFEST, SEAL} & set(expected):
        raise BundleError(f"{path}: {MANIFEST} lists a member twice (or lists itself or the seal)")
    return expected


def _read_seal(path: Path, zf: zipfile.ZipFile, zi: zipfile.ZipInfo) -> str:
    if zi.file_size > _MAX_SEAL_BYTES:
        raise BundleError(f"{path}: {SEAL} is damaged ({zi.file_size} bytes; a seal has under 100)")
    try:
        return read_member(path, zf, zi).decode("ascii").strip()
    except UnicodeDecodeError:
        raise BundleError(f"{path}: seal mismatch ({SEAL} is not ASCII text)") from None


def _check_seal(
    path: Path,
    manifest: dict[str, Any],
    manifest_bytes: bytes | bytearray,
    seal: str,
    key: str | bytes | None,
) -> str:
    """The seal's kind, once the seal matches the manifest (and the key, for an HMAC seal)."""
    kind, _, got = seal.partition(":")
    resolved = _resolve_key(key)
    if kind != manifest.get("seal"):
        raise BundleError(
            f"{path}: seal mismatch (seal is {kind!r:.40} but the manifest says {manifest.get('seal')!r:.40})"
        )
    if kind == "sha256":
        if resolved is not None:
            raise BundleError(
                f"{path}: seal mismatch: a key was given but the bundle has only a plain "
                "sha256 seal (it was written without a key, or its HMAC seal was replaced)"
            )
        want = _sha256(manifest_bytes)
    elif kind == "hmac-sha256":
        if resolved is None:
            raise BundleError(f"{path}: bundle is HMAC-sealed; pass key= or set {KEY_ENV} to verify it")
        want = hmac.new(resolved, manifest_bytes, hashlib.sha256).hexdigest()
    else:
        raise BundleError(f"{path}: seal kind {kind!r:.40} is unknown")
    if not hmac.compare_digest(got, want):  # both ASCII str: `_read_seal` decoded strictly
        why = "wrong key or manifest altered" if kind == "hmac-sha256" else "manifest altered"
        raise BundleError(f"{path}: seal mismatch ({why})")
    return kind


def _checksum_matches(fh: io.BufferedReader, size: int) -> bool:
    """The ZIP comment's sha256 against every byte before it, read in blocks."""
    h = hashlib.sha256()
    fh.seek(0)
    left = size - _HEX_LEN
    while left > 0:
        block = fh.read(min(READ_CHUNK, left))
        if not block:
            return False
        h.update(block)
        left -= len(block)
    return hmac.compare_digest(fh.read(_HEX_LEN), h.hexdigest().encode("ascii"))


def _verify(path: Path, key: str | bytes | None) -> tuple[BundleInfo, dict[str, bytearray]]:
    with open_regular(path) as fh:
        try:
            return _verify_open(path, fh, os.fstat(fh.fileno()).st_size, key)
        except OSError as exc:
            raise BundleError(f"cannot read bundle {path}: {exc}") from exc


def _verify_open(
    path: Path, fh: io.BufferedReader, size: int, key: str | bytes | None
) -> tuple[BundleInfo, dict[str, bytearray]]:
    n_entries, cd_offset = _check_container(path, fh, size)
    with open_zip(path, fh, n_entries) as zf:
        infos = check_entries(path, zf, cd_offset)
        if MANIFEST not in infos or SEAL not in infos:
            raise BundleError(f"{path} is not a bundle: ZIP archive without {MANIFEST} and {SEAL}")
        manifest_bytes = read_member(path, zf, infos[MANIFEST])
        manifest = _parse_manifest(path, manifest_bytes)
        expected = _listed_members(path, manifest)
        names = zf.namelist()
        order = [MANIFEST, *expected, SEAL]
        if names != order:
            missing = sorted(set(order) - set(names))
            unexpected = sorted(set(names) - set(order))
            raise BundleError(
                f"{path}: members differ from the manifest (missing {missing}, unexpected "
                f"{unexpected}, or duplicated/reordered: {names})"[:500]
            )
        contents: dict[str, bytearray] = {}
        for name, (digest, member_size) in expected.items():
            if infos[name].file_size != member_size:
                raise BundleError(
                    f"{path}: member {name!r} hash mismatch (its size differs from the sealed "
                    "one: it was changed after sealing)"
                )
            body = read_member(path, zf, infos[name])
            if _sha256(body) != digest:
                raise BundleError(f"{path}: member {name!r} hash mismatch (it was changed after sealing)")
            contents[name] = body
        seal = _read_seal(path, zf, infos[SEAL])
    kind = _check_seal(path, manifest, manifest_bytes, seal, key)
    if not _checksum_matches(fh, size):
        raise BundleError(
            f"{path}: container checksum mismatch: ZIP headers were altered (the members themselves verify)"
        )
    info = BundleInfo(
        path=path,
        format_version=manifest["format_version"],
        manifest=manifest,
        seal_kind=kind,
        size=size,
        members={n: d for n, (d, _) in expected.items()},
        incomplete=_completeness(path, manifest),
    )
    return info, contents


def verify_bundle(path: str | os.PathLike[str], key: str | bytes | None = None) -> BundleInfo:
    """Check container, member hashes and seal; raise `BundleError` naming what failed.

    `key` (or ``SRE_MARATHON_BUNDLE_KEY``) is required for HMAC-sealed bundles, and refuses
    bundles that carry only a plain seal.
    """
    return _verify(Path(path), key)[0]


def _validation_summary(exc: ValidationError) -> str:
    """One line for a pydantic error (its own text spans lines): the count and the first problem."""
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ())) or "(top level)"
    return f"{exc.error_count()} problem(s), first {where}: {first.get('msg', exc)}"[:300]


def load_bundle(path: str | os.PathLike[str], key: str | bytes | None = None) -> Bundle:
    """Verify, then decode the record, the telemetry and the scoring weights."""
    path = Path(path)
    info, contents = _verify(path, key)
    try:
        record = RunRecord.model_validate_json(contents[RECORD])
    except KeyError:
        raise BundleError(f"{path}: bundle has no {RECORD}") from None
    except ValidationError as exc:
        raise BundleError(
            f"{path}: {RECORD} does not validate as a RunRecord: {_validation_summary(exc)}"
        ) from exc
    telemetry = None
    if TELEMETRY_INDEX in contents and TELEMETRY_VALUES in contents:
        telemetry = RecordedMetrics.decode(contents[TELEMETRY_INDEX], contents[TELEMETRY_VALUES])
    scoring = None
    if SCORING in contents:
        from ..catalog.settings import Scoring

        try:
            scoring = Scoring.model_validate_json(contents[SCORING])
        except ValidationError as exc:
            raise BundleError(f"{path}: {SCORING} does not validate: {_validation_summary(exc)}") from exc
    return Bundle(info=info, record=record, telemetry=telemetry, scoring=scoring)
