"""Caps on a ``.skops`` file's zip, checked from its central directory before anything is unpacked.

A ``.skops`` file is a zip: ``schema.json`` (what to build), NumPy ``.npy`` arrays, ``.bin`` bytes
(an XGBoost booster) and, for a SciPy sparse matrix, an ``.npz`` (itself a zip of ``.npy`` arrays).
:func:`check_archive` refuses anything else and anything too large, counting every byte it
inflates in small chunks, so a file that lies about its sizes is caught without unpacking it.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib

from .._errors import ModelFileRefused

__all__ = ["MAX_UNPACKED_BYTES", "MAX_SCHEMA_BYTES", "MAX_ENTRIES", "MAX_RATIO", "check_archive", "refused"]

#: All entries together, the arrays inside a sparse matrix's ``.npz`` included, may unpack to at most this.
MAX_UNPACKED_BYTES = 512 * 2**20
#: ``schema.json`` may unpack to at most this (a 100-tree random forest's is about 2.2 MB).
MAX_SCHEMA_BYTES = 32 * 2**20
#: At most this many entries (a 100-tree random forest has about 500).
MAX_ENTRIES = 20_000
#: An entry over 1 MiB may unpack to at most this many times its packed size (skops stores without compression).
MAX_RATIO = 100

_RATIO_FROM = 2**20
_CHUNK = 2**16
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record
_LOCAL = struct.Struct("<4s5H3L2H")  # local file header
_OUTER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\.(npy|npz|bin)|schema\.json")
_INNER_NAME = re.compile(r"[A-Za-z0-9_]{1,64}\.npy")
_NPY_MAGIC = b"\x93NUMPY"


def refused(reason: str) -> ModelFileRefused:
    """The one error of a refused model file: ``reason`` says why; nothing in the file was built or run."""
    return ModelFileRefused(f"The model file was refused: {reason}. Nothing in it was built or run.")


def check_archive(data: bytes) -> None:
    """Refuse ``data`` unless it is a zip that skops could have written, within every cap.

    Raises
    ------
    ModelFileRefused
        Not a zip (a pickle or joblib file, for instance), too many entries, an entry skops does not
        write (a nested archive, a pickle), a compression skops does not use, an absurd compression
        ratio, or more than :data:`MAX_UNPACKED_BYTES` (``schema.json``: :data:`MAX_SCHEMA_BYTES`) unpacked.
    """
    _check_zip(data, nested=False, budget=MAX_UNPACKED_BYTES)


def _check_end_record(data: bytes) -> None:
    """The entry count and central directory size, from the zip's end record, before the directory is parsed."""
    tail = data[-(_EOCD.size + 0xFFFF):]
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _EOCD.size:
        raise refused("it is not a .skops file (a pickle or joblib file can run code when loaded and is never "
                      "read; save the model with skops.io.dump)")
    _, _, _, _, count, directory_size, _, _ = _EOCD.unpack_from(tail, at)
    if count == 0xFFFF or count > MAX_ENTRIES or directory_size > MAX_ENTRIES * 256:
        raise refused(f"it has more than {MAX_ENTRIES:,} entries")


def _check_zip(data: bytes, *, nested: bool, budget: int) -> int:
    """Check one zip (the file, or a sparse matrix's ``.npz`` in it); returns the bytes it unpacks to, nested ones included."""
    _check_end_record(data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error) as exc:
        raise refused(f"its zip structure is damaged ({exc})") from None
    if len(infos) > MAX_ENTRIES:
        raise refused(f"it has more than {MAX_ENTRIES:,} entries")
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        raise refused("it holds two entries of the same name")
    if not nested and "schema.json" not in names:
        raise refused("it has no schema.json (it is not a .skops file)")
    total = sum(info.file_size for info in infos)
    if total > budget:
        raise refused(f"it unpacks to more than the {MAX_UNPACKED_BYTES / 2**20:.0f} MiB allowed")
    view = memoryview(data)
    for info in infos:
        _check_entry(view, info, nested=nested)
    for info in infos:
        if info.filename.endswith(".npz"):  # checked above: a zip, within the caps, of the size it declares
            total += _check_zip(archive.read(info), nested=True, budget=budget - total)
    return total


def _check_entry(data: memoryview, info: zipfile.ZipInfo, *, nested: bool) -> None:
    name = info.filename
    if not (_INNER_NAME if nested else _OUTER_NAME).fullmatch(name):
        kind = "an archive inside an archive" if name.lower().endswith((".zip", ".npz", ".gz", ".tar", ".pkl", ".joblib")) \
            else "an entry skops does not write"
        raise refused(f"it holds {name[:80]!r}, {kind}")
    if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise refused(f"{name} is encrypted or compressed in a way skops does not write (re-save with skops.io.dump)")
    if name == "schema.json" and info.file_size > MAX_SCHEMA_BYTES:
        raise refused(f"its schema.json unpacks to {info.file_size / 2**20:,.0f} MiB, more than the "
                      f"{MAX_SCHEMA_BYTES / 2**20:.0f} MiB allowed")
    if info.file_size > _RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise refused(f"{name} unpacks to {info.file_size / max(info.compress_size, 1):,.0f} times its packed size "
                      f"(at most {MAX_RATIO} is allowed)")
    packed = _packed(data, info)
    if _unpacked_size(packed, info.compress_type, info.file_size) != info.file_size:
        raise refused(f"{name} does not unpack to the size its zip header declares")
    head = _head(packed, info.compress_type)
    if name.endswith(".npy") and not head.startswith(_NPY_MAGIC):
        raise refused(f"{name} is not a NumPy array")
    if name.endswith(".npz") and not head.startswith(b"PK\x03\x04"):
        raise refused(f"{name} is not a sparse matrix's archive")


def _packed(data: memoryview, info: zipfile.ZipInfo) -> memoryview:
    """An entry's packed bytes, located from its local header."""
    start = info.header_offset
    if start + _LOCAL.size > len(data):
        raise refused(f"the zip entry {info.filename} lies outside the file")
    fields = _LOCAL.unpack_from(data, start)
    if fields[0] != b"PK\x03\x04":
        raise refused(f"the zip entry {info.filename} has a damaged header")
    begin = start + _LOCAL.size + fields[-2] + fields[-1]
    if begin + info.compress_size > len(data):
        raise refused(f"the zip entry {info.filename} lies outside the file")
    return data[begin:begin + info.compress_size]


def _unpacked_size(packed: memoryview, method: int, declared: int) -> int:
    """What ``packed`` inflates to, inflated in small chunks and stopped as soon as it passes ``declared``."""
    if method == zipfile.ZIP_STORED:
        return len(packed)
    inflater, size = zlib.decompressobj(-15), 0
    try:
        for start in range(0, len(packed), _CHUNK):
            pending = bytes(packed[start:start + _CHUNK])
            while pending and not inflater.eof:
                size += len(inflater.decompress(pending, _CHUNK))
                if size > declared:
                    return size
                pending = inflater.unconsumed_tail
        return size + len(inflater.flush()) if inflater.eof else -1
    except zlib.error:
        return -1


def _head(packed: memoryview, method: int) -> bytes:
    if method == zipfile.ZIP_STORED:
        return bytes(packed[:8])
    return zlib.decompressobj(-15).decompress(bytes(packed[:_CHUNK]), 8)
