"""Hostile ``.skops`` files for the security tests, crafted from skops' own dump by editing schema.json.

Each payload would create ``marker`` if anything in it ran; the tests check that it does not exist.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import skops.io as sio

#: One code-running callable from each library a name prefix used to trust: (module, name, arguments).
GADGETS: dict[str, Callable[[Path], tuple[str, str, list]]] = {
    "numpy": lambda marker: ("numpy.testing._private.utils", "runstring", [touch(marker), {}]),
    "sklearn": lambda marker: ("sklearn.utils._testing", "assert_run_python_script_without_output", [touch(marker)]),
    "scipy": lambda marker: ("scipy._lib._tmpdirs", "mkdtemp", ["", marker.name, str(marker.parent)]),
    "lightgbm": lambda marker: ("lightgbm.basic", "NamedTemporaryFile",
                                ["w", -1, None, None, "", marker.name, str(marker.parent), False]),
    # A joblib-cached function: calling it writes ./cachedir in the working folder (the test runs in marker's).
    "xgboost": lambda marker: ("xgboost.testing.data", "get_cancer", []),
}


def touch(marker: Path) -> str:
    """Python code that creates ``marker``."""
    return f"open({str(marker)!r}, 'w').close()"


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def rezip(files: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return out.getvalue()


def edited(obj, edit: Callable[[dict], dict]) -> bytes:
    """``sio.dumps(obj)`` with its schema.json replaced by ``edit(schema)``."""
    files = entries(sio.dumps(obj))
    files["schema.json"] = json.dumps(edit(json.loads(files["schema.json"]))).encode()
    return rezip(files)


def call_node(module: str, name: str, args: list) -> dict:
    """A skops node that calls ``module.name(*args)`` when built (ConstructorFromReduceNode)."""
    node = _bare(json.loads(entries(sio.dumps(tuple(args)))["schema.json"]))
    return {"__class__": name, "__module__": module, "__loader__": "ConstructorFromReduceNode", "content": node}


def _bare(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k not in ("protocol", "_skops_version")}


def as_file(node: dict) -> bytes:
    """A .skops file whose whole content is ``node``."""
    return rezip({"schema.json": json.dumps(with_protocol(node)).encode()})


def with_protocol(node: dict) -> dict:
    version = json.loads(entries(sio.dumps(0))["schema.json"])
    return {**node, "protocol": version["protocol"], "_skops_version": version["_skops_version"]}


def gadget_file(marker: Path, library: str = "numpy") -> bytes:
    """A .skops file that, loaded with the old prefix trust, runs one library's gadget."""
    return as_file(call_node(*GADGETS[library](marker)))


def schema_bomb(marker: Path, padding: int, *, lying: bool = False) -> bytes:
    """A gadget file whose schema.json is followed by ``padding`` spaces (valid JSON), deflated to about 1/1000.

    Built from one deflated MiB repeated, so a GiB costs no GiB here. ``lying``: the zip states the size
    and CRC of the gadget alone, so a reader that trusts it inflates everything and keeps the gadget.
    """
    prefix = json.dumps(with_protocol(call_node(*GADGETS["numpy"](marker)))).encode()
    chunk = b" " * 2**20
    stream = _flushed(prefix) + _flushed(chunk) * (padding // len(chunk)) + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc, size = zlib.crc32(prefix), len(prefix)
    if not lying:
        for _ in range(padding // len(chunk)):
            crc = zlib.crc32(chunk, crc)
        size += padding // len(chunk) * len(chunk)
    return _patched(rezip({"schema.json": stream}), "schema.json", method=zipfile.ZIP_DEFLATED, crc=crc, size=size)


def _flushed(data: bytes) -> bytes:
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    return deflate.compress(data) + deflate.flush(zlib.Z_FULL_FLUSH)


def _patched(data: bytes, name: str, *, method: int, crc: int, size: int) -> bytes:
    """``data`` (a stored zip whose last entry is ``name``) with that entry's method, CRC and size rewritten."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        local = archive.infolist()[-1].header_offset
    central = out.rfind(b"PK\x01\x02")
    assert bytes(out[central + 46:central + 46 + len(name)]) == name.encode()
    for at, (method_at, crc_at, size_at) in ((local, (8, 14, 22)), (central, (10, 16, 24))):
        struct.pack_into("<H", out, at + method_at, method)
        struct.pack_into("<L", out, at + crc_at, crc)
        struct.pack_into("<L", out, at + size_at, size)
    return bytes(out)
