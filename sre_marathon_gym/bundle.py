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

Byte identity: the same record and telemetry give the same members on every platform (their
hashes are in the manifest); the archive bytes are also identical for the same zlib build.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from .errors import BundleError
from .scoring import RunRecord, ScoreCard, score_run

if TYPE_CHECKING:
    from .catalog import Catalog
    from .catalog.settings import Scoring
    from .sim.telemetry import MetricStore

__all__ = [
    "BUNDLE_FORMAT", "BUNDLE_FORMAT_VERSION", "KEY_ENV", "Bundle", "BundleError", "BundleInfo",
    "Telemetry", "bundle_scoring", "catalog_digest", "load_bundle", "score_bundles", "verify_bundle",
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
_EOCD_MAGIC = b"PK\x05\x06"
_EOCD_LEN = 22
_WRITE_BLOCK = 1 << 20


# ---------------------------------------------------------------------------------------------- helpers
def _canonical_json(obj: Any, what: str) -> bytes:
    """Sorted keys, no whitespace, no NaN: the same value always gives the same bytes."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise BundleError(f"{what} cannot be stored as canonical JSON: {exc}") from exc


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
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and p.suffix in (".yaml", ".yml", ".json")
                   and not any(part.startswith(".") or part == "__pycache__"
                               for part in p.relative_to(root).parts))
    h = hashlib.sha256()
    for p in files:
        rel = p.relative_to(root).as_posix().encode("utf-8")
        data = p.read_bytes()
        h.update(len(rel).to_bytes(8, "little") + rel + len(data).to_bytes(8, "little"))
        h.update(data)
    return f"sha256:{h.hexdigest()}"


# ---------------------------------------------------------------------------------------------- telemetry
@dataclass(frozen=True)
class Telemetry:
    """The run's metric series as stored in a bundle: one row per series on the sample grid.

    `values[i, j]` is series i at `times[j]`; NaN means no sample (the pod did not exist, or the
    series had ended). Staleness markers are not kept: they only matter to instant queries.
    """

    step_s: int
    start_s: float
    names: list[str]
    labels: list[dict[str, str]]
    values: np.ndarray

    @property
    def times(self) -> np.ndarray:
        return self.start_s + np.arange(self.values.shape[1], dtype=np.float64) * self.step_s

    def __len__(self) -> int:
        return len(self.names)

    def series(self) -> Iterator[tuple[str, dict[str, str], np.ndarray, np.ndarray]]:
        """Yield (name, labels, times, values) per series, NaNs dropped (like `MetricStore.iter_samples`)."""
        times = self.times
        for name, labels, row in zip(self.names, self.labels, self.values):
            mask = ~np.isnan(row)
            yield name, dict(labels), times[mask], row[mask].astype(np.float64)

    def metric_store(self) -> MetricStore:
        """A `MetricStore` holding the same samples, for PromQL-style queries over a bundle."""
        from .sim.telemetry import MetricStore

        store = MetricStore(step_s=self.step_s, dtype=self.values.dtype,
                            initial_series_capacity=max(1, len(self.names)))
        ids = np.asarray([store.series_id(n, lab) for n, lab in zip(self.names, self.labels)], dtype=np.intp)
        for j, t in enumerate(self.times.tolist()):
            col = self.values[:, j]
            present = ~np.isnan(col)
            if present.any():
                store.record(t, ids[present], col[present])
        return store

    @classmethod
    def from_store(cls, store: MetricStore) -> Telemetry:
        """Densify `store.iter_samples()` (its retained range) onto the grid."""
        step = int(store.step_s)
        dtype = np.dtype(store.dtype).newbyteorder("<")
        rows = list(store.iter_samples())
        if not rows:
            return cls(step, 0.0, [], [], np.empty((0, 0), dtype=dtype))
        start = min(float(r[2][0]) for r in rows)
        end = max(float(r[2][-1]) for r in rows)
        n_times = int(round((end - start) / step)) + 1
        values = np.full((len(rows), n_times), np.nan, dtype=dtype)
        for i, (_, _, times, vals) in enumerate(rows):
            values[i, np.rint((times - start) / step).astype(np.intp)] = vals
        return cls(step, start, [r[0] for r in rows], [dict(r[1]) for r in rows], values)

    def encode(self) -> tuple[bytes, bytes]:
        """(index JSON, values bytes): canonical, so equal telemetry gives equal bytes."""
        dtype = self.values.dtype.newbyteorder("<")
        index = {
            "dtype": dtype.str,
            "layout": "row-major [series, samples]; NaN = no sample",
            "n_samples": int(self.values.shape[1]),
            "series": [[n, dict(sorted(lab.items()))] for n, lab in zip(self.names, self.labels)],
            "start_s": float(self.start_s),
            "step_s": int(self.step_s),
        }
        values = np.ascontiguousarray(self.values, dtype=dtype)
        return _canonical_json(index, "telemetry index"), values.tobytes()

    @classmethod
    def decode(cls, index_bytes: bytes, values_bytes: bytes) -> Telemetry:
        try:
            index = json.loads(index_bytes)
            dtype = np.dtype(index["dtype"])
            if dtype.kind != "f":
                raise ValueError(f"dtype {dtype} is not a float type")
            n_series, n_samples = len(index["series"]), int(index["n_samples"])
            if len(values_bytes) != n_series * n_samples * dtype.itemsize:
                raise ValueError(f"{len(values_bytes)} value bytes for {n_series} series x "
                                 f"{n_samples} samples")
            values = np.frombuffer(values_bytes, dtype=dtype).reshape(n_series, n_samples)
            return cls(int(index["step_s"]), float(index["start_s"]),
                       [str(s[0]) for s in index["series"]], [dict(s[1]) for s in index["series"]],
                       values.astype(dtype.newbyteorder("=")))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise BundleError(f"telemetry members are inconsistent: {exc}") from exc


# ---------------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class BundleInfo:
    """What `verify_bundle` established about a bundle."""

    path: Path
    format_version: int
    manifest: dict[str, Any]
    seal_kind: str  # "sha256" or "hmac-sha256"
    size: int
    members: dict[str, str] = field(default_factory=dict)  # name -> sha256 (manifest and seal excluded)

    @property
    def catalog_version(self) -> str | None:
        return self.manifest.get("catalog_version")


@dataclass(frozen=True)
class Bundle:
    """A verified bundle, decoded: the record to score, telemetry (if stored) and the manifest."""

    info: BundleInfo
    record: RunRecord
    telemetry: Telemetry | None
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
        fh.write(view[off: off + _WRITE_BLOCK])


def _atomic_write(path: Path, data: bytes) -> None:
    """Temp file in the same directory, fsync, rename: `path` is either the old file or the whole new one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            _write_all(fh, data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
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


def build_bundle_bytes(record: RunRecord, store: MetricStore | Telemetry | None = None,
                       catalog: Catalog | None = None, extra: Mapping[str, Any] | None = None,
                       key: str | bytes | None = None) -> bytes:
    """The bundle's bytes (what `write_bundle` writes); pure, so equal inputs give equal bytes."""
    from . import __version__

    if not isinstance(record, RunRecord):
        raise BundleError(f"record must be a RunRecord, got {type(record).__name__}")
    members: list[tuple[str, bytes]] = [(RECORD, _canonical_json(record.model_dump(mode="json"), "record"))]
    if catalog is not None:
        members.append((SCORING, _canonical_json(catalog.scoring.model_dump(mode="json"), "scoring")))
    telemetry_summary = None
    if store is not None:
        tel = store if isinstance(store, Telemetry) else Telemetry.from_store(store)
        index, values = tel.encode()
        members += [(TELEMETRY_INDEX, index), (TELEMETRY_VALUES, values)]
        telemetry_summary = {"series": len(tel), "samples": int(np.count_nonzero(~np.isnan(tel.values)))}
    resolved = _resolve_key(key)
    m = record.manifest
    manifest = {
        "format": BUNDLE_FORMAT,
        "format_version": BUNDLE_FORMAT_VERSION,
        "package_version": __version__,
        "catalog_version": catalog_digest(catalog) if catalog is not None else None,
        "record_schema_version": record.schema_version,
        "run": {"app": m.app, "seed": m.seed, "mode": m.mode, "interval_s": m.interval_s,
                "injection_s": m.injection_s, "observation_s": m.observation_s,
                "env_config": m.env_config, "catalog_schema_version": m.catalog_version},
        "counts": {"faults": len(record.faults), "alerts": len(record.alerts), "actions": len(record.actions),
                   "incident_events": len(record.incident_events), "probes": len(record.probes)},
        "telemetry": telemetry_summary,
        "seal": "sha256" if resolved is None else "hmac-sha256",
        "members": [{"name": n, "sha256": _sha256(d), "size": len(d)} for n, d in members],
        "extra": dict(extra) if extra else {},
    }
    manifest_bytes = _canonical_json(manifest, "manifest (check `extra`)")
    return _zip_bytes([(MANIFEST, manifest_bytes), *members, (SEAL, _seal_bytes(manifest_bytes, resolved))])


def write_bundle(path: str | os.PathLike[str], record: RunRecord,
                 store: MetricStore | Telemetry | None = None,
                 catalog: Catalog | None = None, extra: Mapping[str, Any] | None = None,
                 key: str | bytes | None = None) -> Path:
    """Write a sealed bundle atomically and return its path.

    `store` adds the run's metric series; `catalog` adds its digest and scoring weights; `extra`
    (JSON-serialisable) lands in the manifest; `key` (or ``SRE_MARATHON_BUNDLE_KEY``) makes the seal
    an HMAC. An interrupted write leaves no file at `path` (or the previous one, untouched).
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise BundleError(f"cannot write bundle {path}: directory {path.parent} does not exist")
    data = build_bundle_bytes(record, store, catalog, extra, key)
    _atomic_write(path, data)
    return path


# ---------------------------------------------------------------------------------------------- verifying
def _check_container(path: Path, data: bytes) -> zipfile.ZipFile:
    """Not-a-bundle, truncation and ZIP-structure checks, before any member is read."""
    if len(data) < len(_ZIP_MAGIC) or not data.startswith(_ZIP_MAGIC):
        raise BundleError(f"{path} is not a bundle: not a ZIP archive (a bundle starts with PK\\x03\\x04)")
    tail_len = _EOCD_LEN + len(_COMMENT_PREFIX) + _HEX_LEN
    tail = data[-tail_len:]
    if (len(data) < tail_len or not tail.startswith(_EOCD_MAGIC)
            or int.from_bytes(tail[20:22], "little") != len(_COMMENT_PREFIX) + _HEX_LEN):
        try:  # a complete ZIP that is simply not ours, or a bundle cut short / appended to?
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError):
            names = None
        if names is not None and MANIFEST not in names:
            raise BundleError(f"{path} is not a bundle: ZIP archive without {MANIFEST}")
        raise BundleError(f"{path} is truncated or has trailing data: its end-of-archive record with the "
                          f"bundle checksum is missing ({len(data)} bytes)")
    comment = tail[_EOCD_LEN:]
    if not comment.startswith(_COMMENT_PREFIX):
        if comment.startswith(BUNDLE_FORMAT.encode("ascii")):
            raise BundleError(f"{path}: bundle format {comment[:-_HEX_LEN - 8].decode('ascii', 'replace')!r} "
                              f"is unsupported (this package reads version {BUNDLE_FORMAT_VERSION})")
        raise BundleError(f"{path} is not a bundle: ZIP archive without the {BUNDLE_FORMAT} checksum comment")
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise BundleError(f"{path} is damaged: ZIP structure unreadable ({exc})") from exc


def _read_member(path: Path, zf: zipfile.ZipFile, name: str) -> bytes:
    try:
        return zf.read(name)
    except (zipfile.BadZipFile, zlib.error, ValueError, EOFError, KeyError, NotImplementedError) as exc:
        raise BundleError(f"{path}: member {name!r} is damaged ({exc})") from exc


def _verify(path: Path, key: str | bytes | None) -> tuple[BundleInfo, dict[str, bytes]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc}") from exc
    zf = _check_container(path, data)
    with zf:
        names = zf.namelist()
        if MANIFEST not in names or SEAL not in names:
            raise BundleError(f"{path} is not a bundle: ZIP archive without {MANIFEST} and {SEAL}")
        manifest_bytes = _read_member(path, zf, MANIFEST)
        try:
            manifest = json.loads(manifest_bytes)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BundleError(f"{path}: {MANIFEST} is not valid JSON ({exc})") from exc
        if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
            raise BundleError(f"{path} is not a bundle: {MANIFEST} does not declare format {BUNDLE_FORMAT!r}")
        version = manifest.get("format_version")
        if version not in SUPPORTED_FORMAT_VERSIONS:
            raise BundleError(f"{path}: bundle format version {version!r} is unsupported "
                              f"(this package reads {sorted(SUPPORTED_FORMAT_VERSIONS)})")
        listed = manifest.get("members")
        try:
            expected = {m["name"]: (m["sha256"], int(m["size"])) for m in listed}
        except (TypeError, KeyError, ValueError) as exc:
            raise BundleError(f"{path}: {MANIFEST} has a malformed member list ({exc})") from exc
        order = [MANIFEST, *(m["name"] for m in listed), SEAL]
        if names != order:
            missing = sorted(set(order) - set(names))
            unexpected = sorted(set(names) - set(order))
            raise BundleError(f"{path}: members differ from the manifest (missing {missing}, unexpected "
                              f"{unexpected}, or duplicated/reordered: {names})")
        contents: dict[str, bytes] = {}
        for name, (digest, size) in expected.items():
            body = _read_member(path, zf, name)
            if len(body) != size or _sha256(body) != digest:
                raise BundleError(f"{path}: member {name!r} hash mismatch (it was changed after sealing)")
            contents[name] = body
        seal = _read_member(path, zf, SEAL).decode("ascii", "replace").strip()
    kind, _, got = seal.partition(":")
    resolved = _resolve_key(key)
    if kind != manifest.get("seal"):
        raise BundleError(f"{path}: seal mismatch (seal is {kind!r} but the manifest says "
                          f"{manifest.get('seal')!r})")
    if kind == "sha256":
        if resolved is not None:
            raise BundleError(f"{path}: seal mismatch: a key was given but the bundle has only a plain "
                              "sha256 seal (it was written without a key, or its HMAC seal was replaced)")
        want = _sha256(manifest_bytes)
    elif kind == "hmac-sha256":
        if resolved is None:
            raise BundleError(f"{path}: bundle is HMAC-sealed; pass key= (--key) or set {KEY_ENV} "
                              "to verify it")
        want = hmac.new(resolved, manifest_bytes, hashlib.sha256).hexdigest()
    else:
        raise BundleError(f"{path}: seal kind {kind!r} is unknown")
    if not hmac.compare_digest(got, want):
        why = "wrong key or manifest altered" if kind == "hmac-sha256" else "manifest altered"
        raise BundleError(f"{path}: seal mismatch ({why})")
    stored = data[-_HEX_LEN:].decode("ascii", "replace")
    if not hmac.compare_digest(stored, _sha256(data[:-_HEX_LEN])):
        raise BundleError(f"{path}: container checksum mismatch: ZIP headers were altered "
                          "(the members themselves verify)")
    info = BundleInfo(path=path, format_version=int(version), manifest=manifest, seal_kind=kind,
                      size=len(data), members={n: d for n, (d, _) in expected.items()})
    return info, contents


def verify_bundle(path: str | os.PathLike[str], key: str | bytes | None = None) -> BundleInfo:
    """Check container, member hashes and seal; raise `BundleError` naming what failed.

    `key` (or ``SRE_MARATHON_BUNDLE_KEY``) is required for HMAC-sealed bundles, and refuses
    bundles that carry only a plain seal.
    """
    return _verify(Path(path), key)[0]


def load_bundle(path: str | os.PathLike[str], key: str | bytes | None = None) -> Bundle:
    """Verify, then decode the record, the telemetry and the scoring weights."""
    path = Path(path)
    info, contents = _verify(path, key)
    try:
        record = RunRecord.model_validate_json(contents[RECORD])
    except KeyError:
        raise BundleError(f"{path}: bundle has no {RECORD}") from None
    except ValidationError as exc:
        raise BundleError(f"{path}: {RECORD} does not validate as a RunRecord: {exc}") from exc
    telemetry = None
    if TELEMETRY_INDEX in contents and TELEMETRY_VALUES in contents:
        telemetry = Telemetry.decode(contents[TELEMETRY_INDEX], contents[TELEMETRY_VALUES])
    scoring = None
    if SCORING in contents:
        from .catalog.settings import Scoring

        try:
            scoring = Scoring.model_validate_json(contents[SCORING])
        except ValidationError as exc:
            raise BundleError(f"{path}: {SCORING} does not validate: {exc}") from exc
    return Bundle(info=info, record=record, telemetry=telemetry, scoring=scoring)


def bundle_scoring(bundle: Bundle, catalog: Catalog | None = None, rules: int | None = None) -> Scoring:
    """The scoring a bundle is rescored under, and why it is that one.

    Weights and rules: `catalog`'s when given, else the ones sealed in the bundle (a bundle sealed
    before rule sets were versioned is rules v1), else the shipped catalog's. `rules` overrides the
    rule set; v2's matching and penalties then come from the shipped catalog if the chosen scoring
    has none (an old v1 bundle rescored with ``--rules v2``).
    """
    from .catalog import load_catalog

    scoring = catalog.scoring if catalog is not None else bundle.scoring
    if scoring is None:
        scoring = load_catalog().scoring
    if rules is not None and rules != scoring.rules_version:
        scoring = scoring.with_rules(rules, defaults=load_catalog().scoring)
    return scoring


def score_bundles(paths: Iterable[str | os.PathLike[str]], catalog: Catalog | None = None,
                  key: str | bytes | None = None, rules: int | None = None) -> list[ScoreCard]:
    """Verify and score each bundle (CLI hook for `sre-marathon score`); see `bundle_scoring` for
    which weights and rules. The first bundle that fails verification raises `BundleError`."""
    cards = []
    for p in paths:
        bundle = load_bundle(p, key)
        cards.append(score_run(bundle.record, bundle_scoring(bundle, catalog, rules)))
    return cards
