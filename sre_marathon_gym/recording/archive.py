"""A bundle's container at the byte level: members as canonical JSON, and the ZIP archive read
with bounded cost (nothing in its headers is trusted).

Why its own module: zipfile believes whatever an archive declares (sizes, entry counts, flags), so a
1 MB file can ask for gigabytes and `/dev/zero` never ends. Every function here checks before it
reads, reads in bounded chunks, and turns every zipfile failure into a `BundleError`. The bundle
format itself (members, manifest, seal) is `bundle`'s.
"""

from __future__ import annotations

import io
import json
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path

from ..core.errors import BundleError


def canonical_json(obj: object, what: str) -> bytes:
    """Sorted keys, no whitespace, no NaN: the same value always gives the same bytes."""
    try:
        return json.dumps(
            obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise BundleError(f"{what} cannot be stored as canonical JSON: {exc}") from exc


MAX_BUNDLE_BYTES = 512 << 20
"""Largest bundle file read (a full 90-minute run with telemetry takes a few MB)."""
MAX_CONTENT_BYTES = 512 << 20
"""Largest total of the members' declared uncompressed sizes: the most that reading may inflate."""
MAX_MEMBERS = 4096
"""Most ZIP entries a bundle may have (a bundle has six at most)."""
MAX_CENTRAL_DIRECTORY = 1 << 20
READ_CHUNK = 1 << 20
EOCD_MAGIC = b"PK\x05\x06"
EOCD_LEN = 22
ZIP64_LOCATOR = b"PK\x06\x07"
_ALLOWED_FLAGS = 0x800  # UTF-8 names; encryption, data descriptors and the rest are never written
_MAX_EXTRACT_VERSION = 20  # zipfile writes 2.0 for DEFLATE without ZIP64

ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    ValueError,
    EOFError,
    KeyError,
    IndexError,
    NotImplementedError,
    RuntimeError,
    OSError,
    struct.error,
    OverflowError,
    TypeError,
)
"""What the zipfile module raises on a malformed archive (encrypted: RuntimeError; method or version:
NotImplementedError; structure: BadZipFile, struct.error...); each becomes a `BundleError`."""


def open_regular(path: Path) -> io.BufferedReader:
    """Open `path` only if it is a regular file of at most `MAX_BUNDLE_BYTES`.

    Why fstat on the opened file, with O_NONBLOCK: a FIFO must not block the open, /dev/zero (or any
    endless stream) must be refused before one byte is read, and nothing can be swapped in between.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise BundleError(f"cannot read bundle {path}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(f"{path} is not a bundle: not a regular file (a directory, device or pipe)")
        if st.st_size > MAX_BUNDLE_BYTES:
            raise BundleError(
                f"{path} is not a bundle: {st.st_size} bytes, more than the "
                f"{MAX_BUNDLE_BYTES} a bundle may have"
            )
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_at(fh: io.BufferedReader, offset: int, n: int) -> bytes:
    fh.seek(offset)
    return fh.read(n)


def foreign_zip_names(fh: io.BufferedReader, size: int) -> list[str] | None:
    """Member names of a ZIP not laid out like a bundle, when its central directory is small enough to
    parse safely; None otherwise. Only a diagnosis: a ZIP that is not ours vs. a bundle cut short."""
    start = max(0, size - (1 << 16) - EOCD_LEN)
    window = read_at(fh, start, size - start)
    pos = window.rfind(EOCD_MAGIC)  # where zipfile looks too
    if pos < 20 or len(window) - pos < EOCD_LEN:
        return None
    if (
        int.from_bytes(window[pos + 12 : pos + 16], "little") > MAX_CENTRAL_DIRECTORY
        or window[pos - 20 : pos - 16] == ZIP64_LOCATOR
    ):
        return None
    try:
        fh.seek(0)
        with zipfile.ZipFile(fh) as zf:
            return zf.namelist()
    except ZIP_ERRORS:
        return None


def open_zip(path: Path, fh: io.BufferedReader, n_entries: int) -> zipfile.ZipFile:
    try:
        fh.seek(0)
        zf = zipfile.ZipFile(fh)
    except ZIP_ERRORS as exc:
        raise BundleError(f"{path} is damaged: ZIP structure unreadable ({exc})") from exc
    if len(zf.infolist()) != n_entries:
        zf.close()
        raise BundleError(
            f"{path} is damaged: the end-of-archive record counts {n_entries} entries, the "
            f"central directory holds {len(zf.infolist())}"
        )
    return zf


def check_entries(path: Path, zf: zipfile.ZipFile, cd_offset: int) -> dict[str, zipfile.ZipInfo]:
    """Each entry as a bundle writes it (DEFLATE, no encryption or other flags, ZIP 2.0, inside the
    archive) and the declared sizes within `MAX_CONTENT_BYTES`, before anything is inflated."""
    total = 0
    for zi in zf.infolist():
        what = f"{path}: member {zi.filename!r}"
        if zi.flag_bits & 0x41:
            raise BundleError(f"{what} is encrypted (bundles never are)")
        if zi.flag_bits & ~_ALLOWED_FLAGS:
            raise BundleError(f"{what} has unsupported ZIP flags 0x{zi.flag_bits:04x}")
        if zi.compress_type != zipfile.ZIP_DEFLATED:
            raise BundleError(f"{what} uses compression method {zi.compress_type}, not DEFLATE (8)")
        if zi.extract_version > _MAX_EXTRACT_VERSION:
            raise BundleError(f"{what} needs ZIP version {zi.extract_version / 10:.1f} (bundles use 2.0)")
        if zi.header_offset + 30 + zi.compress_size > cd_offset:
            raise BundleError(f"{what} is damaged: its data would extend past the central directory")
        total += zi.file_size
        if total > MAX_CONTENT_BYTES:
            raise BundleError(
                f"{path} is refused: its members declare more than {MAX_CONTENT_BYTES} bytes "
                "uncompressed (the most a bundle may hold; a ZIP bomb?)"
            )
    return {zi.filename: zi for zi in zf.infolist()}


def read_member(path: Path, zf: zipfile.ZipFile, zi: zipfile.ZipInfo) -> bytearray:
    """Inflate one member in bounded chunks, never past its declared size."""
    buf = bytearray(zi.file_size)
    view, n = memoryview(buf), 0
    try:
        with zf.open(zi) as member:
            while chunk := member.read(min(READ_CHUNK, zi.file_size - n + 1)):
                if n + len(chunk) > zi.file_size:
                    raise BundleError(
                        f"{path}: member {zi.filename!r} is damaged (inflates past its "
                        f"declared {zi.file_size} bytes)"
                    )
                view[n : n + len(chunk)] = chunk
                n += len(chunk)
    except ZIP_ERRORS as exc:
        raise BundleError(f"{path}: member {zi.filename!r} is damaged ({exc})") from exc
    finally:
        view.release()
    if n != zi.file_size:
        raise BundleError(
            f"{path}: member {zi.filename!r} is damaged (inflates to {n} of its declared "
            f"{zi.file_size} bytes)"
        )
    return buf


__all__ = [
    "EOCD_LEN",
    "EOCD_MAGIC",
    "MAX_BUNDLE_BYTES",
    "MAX_CENTRAL_DIRECTORY",
    "MAX_CONTENT_BYTES",
    "MAX_MEMBERS",
    "READ_CHUNK",
    "ZIP64_LOCATOR",
    "ZIP_ERRORS",
    "check_entries",
    "foreign_zip_names",
    "open_regular",
    "open_zip",
    "read_at",
    "read_member",
]
