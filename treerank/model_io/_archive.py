"""The container of a model file: JSON and numpy arrays in a zip archive, read safely.

Layout of the archive (format version 2):

- ``manifest.json``: the format name and version, the treerank version that
  wrote the file, and for every other member its decompressed size in bytes,
  its SHA-256 digest and, for an array, its dtype and shape;
- ``model.json``: the model's description (plain JSON: no NaN or infinity);
- ``arrays/<name>.npy``: numeric or boolean arrays in numpy's ``.npy`` format;
- the zip comment, at the very end of the file: ``treerank-sha256:`` followed
  by the SHA-256 digest (64 hex digits) of every byte of the file before these
  64 digits, so that any damage to the file (a flipped bit anywhere, a
  truncation, appended bytes) is detected before anything else is read.

The reader treats the file as hostile. It never unpickles and never imports
anything named by the file, so a model file cannot run code; and it bounds
the memory and time a damaged or malicious file can cost:

- the file is at most ``max_bytes`` long and its whole-file digest matches;
- the archive's central directory is checked (at most :data:`MAX_MEMBERS`
  members, no ZIP64, only stored or deflated members, no encryption, no
  duplicate or unexpected names) before the zip library parses it;
- the manifest fixes a budget (:func:`memory_budget`): the declared sizes of
  the members must add up to at most ``max_bytes`` (an absolute cap, 1 GiB by
  default) and, past :data:`EXPANSION_FLOOR` bytes, to at most
  :data:`MAX_EXPANSION` times the size of the file (a zip bomb expands about a
  thousand times); what the decoders allocate from the file's own numbers
  (arrays of strings, by their declared item size) is charged against the
  same budget (:class:`MemoryBudget`) before it is allocated;
- :func:`open_archive` reads an array only when a decoder first asks for it
  (:class:`ArchiveArrays`), after its declared dtype and shape, and those of
  the arrays that go with it, were checked
  (:func:`~treerank.model_io._arrays.check_declared`), so that a file refused
  for an inconsistent array does not allocate the others;
- every member is decompressed in chunks through a reader that refuses to go
  past its declared size, and its digest is computed while streaming;
- an array's ``.npy`` header is parsed and checked against the dtype and shape
  the manifest declares, and against the member's size, *before* the array is
  allocated; only plain boolean, integer and floating dtypes are accepted
  (never objects, never ``allow_pickle``);
- JSON members are limited in size, nesting depth and number of containers,
  must not repeat a key, and may not hold non-finite numbers.

What a model needs of each array (its kind and shape, finite values, indices
in range, offsets) is checked by its decoder with the functions of
:mod:`treerank.model_io._arrays`.

Every failure on a damaged or hostile file raises
:class:`~treerank.exceptions.ModelFileError` naming the file, the member and
the problem. The digests detect corruption and hand edits (they are not a
signature: someone who recomputes them can still change the model, whose
consistency is then checked when it is rebuilt by ``load_model``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import stat
import struct
import zipfile
from collections.abc import Mapping

import numpy as np

from treerank.exceptions import ModelFileError
from treerank.utils._io import atomic_write

__all__ = [
    "DEFAULT_MAX_BYTES",
    "EXPANSION_FLOOR",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAX_EXPANSION",
    "MAX_JSON_BYTES",
    "MAX_JSON_CONTAINERS",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "ArchiveArrays",
    "MemoryBudget",
    "memory_budget",
    "open_archive",
    "read_archive",
    "write_archive",
]

FORMAT_NAME = "treerank-model"
FORMAT_VERSION = 2

#: Default absolute cap on the decompressed size of a model file (all members).
DEFAULT_MAX_BYTES = 2**30
#: Most members an archive may have (the manifest and model.json included).
MAX_MEMBERS = 4096
#: Past this many decompressed bytes, a file may expand at most MAX_EXPANSION times
#: (its memory budget: :func:`memory_budget`).
EXPANSION_FLOOR = 16 * 2**20
MAX_EXPANSION = 16
#: Caps of a JSON member: bytes, nesting depth, number of arrays and objects.
MAX_JSON_BYTES = 4 * 2**20
MAX_JSON_DEPTH = 64
MAX_JSON_CONTAINERS = 200_000
_MAX_MANIFEST_BYTES = 2 * 2**20
_MAX_CENTRAL_DIRECTORY = 2 * 2**20
_MAX_NPY_HEADER = 4096
_MAX_NDIM = 32
_CHUNK = 2**20

_SEAL_PREFIX = b"treerank-sha256:"
_SEAL_LENGTH = len(_SEAL_PREFIX) + 64
_END_RECORD = 22  # the zip end of central directory record, without comment

_MANIFEST = "manifest.json"
_DESCRIPTION = "model.json"
_ARRAY_NAME = re.compile(r"[A-Za-z0-9_.]{1,200}")
_ARRAY_MEMBER = re.compile(r"arrays/([A-Za-z0-9_.]{1,200})\.npy")
_DTYPE = re.compile(r"\|b1|[<>|][iu][1248]|[<>|]f[248]")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# a JSON string, or an unterminated one running to the end: the optional closing
# quote keeps the scan linear (a failed match would restart at every quote)
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)


class _Refused(Exception):
    """A problem with one member, turned into a ModelFileError by the reader."""


# ----------------------------------------------------------------------
# JSON
# ----------------------------------------------------------------------
def _json_shape(data):
    """Nesting depth and number of arrays and objects of JSON text, before parsing.

    Exact for valid JSON (brackets inside strings are skipped); linear time
    whatever the input.
    """
    skeleton = _JSON_STRING.sub(b'""', data)
    codes = np.frombuffer(skeleton, dtype=np.uint8)
    opening = (codes == ord("[")) | (codes == ord("{"))
    closing = (codes == ord("]")) | (codes == ord("}"))
    n_containers = int(np.count_nonzero(opening))
    if not n_containers:
        return 0, 0
    depth = int(np.max(np.cumsum(opening.astype(np.int32) - closing)))
    return depth, n_containers


def _check_json_shape(data):
    """Refuse JSON nested too deeply or with too many containers, before parsing."""
    depth, n_containers = _json_shape(data)
    if n_containers > MAX_JSON_CONTAINERS:
        raise _Refused(
            f"holds {n_containers} JSON arrays and objects, more than "
            f"{MAX_JSON_CONTAINERS}"
        )
    if depth > MAX_JSON_DEPTH:
        raise _Refused(
            f"is JSON nested {depth} levels deep, more than {MAX_JSON_DEPTH}"
        )


def _unique_keys(pairs):
    result = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r} appears twice in one object")
        result[key] = value
    return result


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of the float64 range")
    return value


def _no_constant(name):
    raise ValueError(f"{name} is not a JSON value")


def parse_json(data):
    """Parse a JSON member with bounded size, depth and no NaN, infinity or repeats.

    Raises ``_Refused`` (the caller names the member).
    """
    if len(data) > MAX_JSON_BYTES:
        raise _Refused(f"has {len(data)} bytes of JSON, more than {MAX_JSON_BYTES}")
    _check_json_shape(data)
    try:
        text = data.decode("utf-8")
        return json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_float=_finite_float,
            parse_constant=_no_constant,
        )
    except (ValueError, RecursionError) as exc:
        raise _Refused(f"is not valid JSON ({exc})") from None


def _dump_json(value, what):
    """JSON bytes that :func:`parse_json` reads back (checked at write time)."""
    try:
        data = json.dumps(value, indent=1, sort_keys=True, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"The {what} is not plain JSON: {exc}") from None
    try:
        parse_json(data)
    except _Refused as exc:
        raise ValueError(f"The {what} cannot be stored: it {exc}.") from None
    return data


# ----------------------------------------------------------------------
# writing
# ----------------------------------------------------------------------
class _HashingWriter:
    """File-like wrapper counting and hashing what is written through it."""

    def __init__(self, handle):
        self._handle = handle
        self.size = 0
        self.sha256 = hashlib.sha256()

    def write(self, data):
        data = memoryview(data).cast("B")
        self.sha256.update(data)
        self.size += data.nbytes
        return self._handle.write(data)


def _check_array(name, array):
    if not (isinstance(name, str) and _ARRAY_NAME.fullmatch(name)):
        raise ValueError(
            f"array name {name!r} must be 1 to 200 characters among [A-Za-z0-9_.]"
        )
    array = np.asarray(array)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")
    if array.dtype.kind == "b":
        array = array.astype(np.bool_, copy=False)
    if not _DTYPE.fullmatch(array.dtype.str) or array.ndim > _MAX_NDIM:
        raise ValueError(
            f"array {name!r} has dtype {array.dtype} and {array.ndim} dimensions; "
            "model files hold booleans, integers and 16/32/64-bit floats with at "
            f"most {_MAX_NDIM} dimensions."
        )
    return array


def write_archive(path, description, arrays, *, overwrite=True):
    """Write a model archive atomically (see :func:`treerank.utils._io.atomic_write`).

    Parameters
    ----------
    path : str or path-like
        Destination file; its directory must exist.
    description : dict
        JSON-serializable description of the model (no NaN or infinity, at
        most :data:`MAX_JSON_DEPTH` levels of nesting).
    arrays : dict of str to ndarray
        Boolean, integer or floating arrays; names are 1 to 200 characters
        among ``[A-Za-z0-9_.]``.
    overwrite : bool, default=True
        Whether an existing file may be replaced.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from treerank.model_io._archive import read_archive, write_archive
    >>> path = os.path.join(tempfile.mkdtemp(), "x.trk")
    >>> write_archive(path, {"answer": 42}, {"values": np.arange(3)})
    >>> read_archive(path)
    ({'answer': 42}, {'values': array([0, 1, 2])})
    """
    from treerank import __version__

    if not isinstance(description, dict):
        raise ValueError("The model description must be a dict.")
    checked = {name: _check_array(name, array) for name, array in arrays.items()}
    if len(checked) + 2 > MAX_MEMBERS:
        raise ValueError(f"A model file holds at most {MAX_MEMBERS - 2} arrays.")
    model_json = _dump_json(description, "model description")
    entries = {
        _DESCRIPTION: {
            "size": len(model_json),
            "sha256": hashlib.sha256(model_json).hexdigest(),
        }
    }
    with atomic_write(path, "w+b", overwrite=overwrite) as output:
        with zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.comment = _SEAL_PREFIX + b"0" * 64  # the digest goes here
            archive.writestr(_DESCRIPTION, model_json)
            for name, array in checked.items():
                member = f"arrays/{name}.npy"
                with archive.open(member, "w") as handle:
                    writer = _HashingWriter(handle)
                    np.lib.format.write_array(writer, array, allow_pickle=False)
                entries[member] = {
                    "size": writer.size,
                    "sha256": writer.sha256.hexdigest(),
                    "dtype": array.dtype.str,
                    "shape": [int(n) for n in array.shape],
                }
            manifest = {
                "format": FORMAT_NAME,
                "format_version": FORMAT_VERSION,
                "treerank_version": __version__,
                "members": entries,
            }
            archive.writestr(_MANIFEST, _dump_json(manifest, "manifest"))
        _seal(output)


def _file_digest(handle, length):
    """SHA-256 of the first ``length`` bytes of a file, read in chunks."""
    digest = hashlib.sha256()
    handle.seek(0)
    remaining = length
    while remaining > 0:
        data = handle.read(min(remaining, _CHUNK))
        if not data:
            break
        digest.update(data)
        remaining -= len(data)
    return digest.hexdigest().encode()


def _seal(handle):
    """Write the digest of the whole file into its last 64 bytes (the comment)."""
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    digest = _file_digest(handle, size - 64)
    handle.seek(size - 64)
    handle.write(digest)


# ----------------------------------------------------------------------
# reading
# ----------------------------------------------------------------------
class _BoundedReader:
    """Stream of one member: never past ``limit`` bytes, hashed as it is read."""

    def __init__(
        self,
        handle,
        limit,
        overrun="decompresses to more bytes than the manifest declares",
    ):
        self._handle = handle
        self._overrun = overrun
        self.remaining = limit
        self.position = 0
        self.sha256 = hashlib.sha256()

    def read(self, size=-1):
        if size is None or size < 0:
            size = self.remaining + 1
        wanted = min(size, self.remaining + 1)  # one byte more detects overruns
        parts, received = [], 0
        while received < wanted:
            data = self._handle.read(min(wanted - received, _CHUNK))
            if not data:
                break
            parts.append(data)
            received += len(data)
        data = b"".join(parts)
        if len(data) > self.remaining:
            raise _Refused(self._overrun)
        self.remaining -= len(data)
        self.position += len(data)
        self.sha256.update(data)
        return data

    def read_exactly(self, size):
        data = self.read(size)
        if len(data) != size:
            raise _Refused("is shorter than the manifest declares")
        return data

    def check_end(self, expected_digest):
        if self.remaining or self.read(1):
            raise _Refused("does not have the size the manifest declares")
        if self.sha256.hexdigest() != expected_digest:
            raise _Refused(
                "does not match its checksum in the manifest: the file has been "
                "modified or corrupted"
            )


def _check_seal(handle, file_size, max_bytes):
    """The whole-file digest at the end of the file: any damage is caught here."""
    if file_size > max_bytes:
        raise _Refused(
            f"is {file_size} bytes long, more than the limit of {max_bytes} bytes "
            "(max_bytes)"
        )
    if file_size < _END_RECORD + _SEAL_LENGTH:
        raise _Refused("is not a treerank model file (too short)")
    handle.seek(file_size - _SEAL_LENGTH)
    seal = handle.read(_SEAL_LENGTH)
    if not (
        seal.startswith(_SEAL_PREFIX)
        and _SHA256.fullmatch(seal[len(_SEAL_PREFIX) :].decode("latin-1"))
    ):
        raise _Refused(
            "is not a treerank model file, or its end is damaged or truncated "
            "(no file digest at its end)"
        )
    if _file_digest(handle, file_size - 64) != seal[len(_SEAL_PREFIX) :]:
        raise _Refused(
            "is damaged or was modified: the digest of the file does not match "
            "the one at its end (a flipped bit, a truncation or an edit)"
        )


def _check_central_directory(handle, file_size):
    """Refuse oversized or ZIP64 central directories before zipfile parses them."""
    end = file_size - _SEAL_LENGTH - _END_RECORD
    before = min(20, end)  # room for a ZIP64 locator before the end record
    handle.seek(end - before)
    record = bytes(20 - before) + handle.read(before + _END_RECORD)
    if record[20:24] != b"PK\x05\x06":
        raise _Refused("is not a treerank model file (not a zip archive)")
    n_entries, cd_size, cd_offset, comment = struct.unpack("<HIIH", record[30:42])
    if comment != _SEAL_LENGTH:
        raise _Refused("is not a treerank model file (unexpected zip comment)")
    if record[:4] == b"PK\x06\x07":
        raise _Refused("is a ZIP64 archive, which model files never are")
    if n_entries > MAX_MEMBERS:
        raise _Refused(f"has {n_entries} members, more than {MAX_MEMBERS}")
    if cd_size > _MAX_CENTRAL_DIRECTORY or cd_offset + cd_size > end:
        raise _Refused("has an invalid or oversized central directory")
    handle.seek(0)


def _check_members(infos):
    names = [info.filename for info in infos]
    if len(names) > MAX_MEMBERS:
        raise _Refused(f"has {len(names)} members, more than {MAX_MEMBERS}")
    if len(set(names)) != len(names):
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise _Refused(f"has duplicate members {repeated[:5]}")
    for info in infos:
        name = info.filename
        if name not in (_MANIFEST, _DESCRIPTION) and not _ARRAY_MEMBER.fullmatch(name):
            raise _Refused(f"has an unexpected member {name[:200]!r}")
        if info.flag_bits & 0x1:
            raise _Refused(f"has an encrypted member {name}")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _Refused(
                f"member {name} uses compression method {info.compress_type}; "
                "model files are stored or deflated"
            )
    for required in (_MANIFEST, _DESCRIPTION):
        if required not in names:
            raise _Refused(f"is not a treerank model file (no {required})")
    return {info.filename: info for info in infos}


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_manifest(manifest, infos):
    """Validate the manifest; return the declared entries by member name."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise _Refused("is not a treerank model file (wrong format name)")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        shown = version if isinstance(version, (int, str)) else type(version).__name__
        raise _Refused(
            f"uses model format version {shown!r}; this treerank reads version "
            f"{FORMAT_VERSION}: refit the model and save it again"
        )
    entries = manifest.get("members")
    if not isinstance(entries, dict):
        raise _Refused("has a manifest without a members table")
    expected = set(infos) - {_MANIFEST}
    if set(entries) != expected:
        missing = sorted(expected - set(entries))[:5]
        extra = sorted(set(entries) - expected)[:5]
        raise _Refused(
            "has members that do not match its manifest (not listed: "
            f"{missing}, listed but absent: {extra})"
        )
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            raise _Refused(f"has a malformed manifest entry for {name}")
        if not _is_count(entry.get("size")):
            raise _Refused(f"declares an invalid size for {name}")
        digest = entry.get("sha256")
        if not (isinstance(digest, str) and _SHA256.fullmatch(digest)):
            raise _Refused(f"declares an invalid checksum for {name}")
        if infos[name].file_size != entry["size"]:
            raise _Refused(
                f"member {name} has been modified or corrupted: it is "
                f"{infos[name].file_size} bytes in the zip directory but "
                f"{entry['size']} in the manifest"
            )
        if name == _DESCRIPTION:
            if entry["size"] > MAX_JSON_BYTES:
                raise _Refused(
                    f"declares {entry['size']} bytes for {name}, more than "
                    f"{MAX_JSON_BYTES}"
                )
            continue
        dtype, shape = entry.get("dtype"), entry.get("shape")
        if not (isinstance(dtype, str) and _DTYPE.fullmatch(dtype)):
            raise _Refused(
                f"declares dtype {str(dtype)[:40]!r} for {name}; only booleans, "
                "integers and floats are allowed"
            )
        if not (
            isinstance(shape, list)
            and len(shape) <= _MAX_NDIM
            and all(_is_count(n) for n in shape)
        ):
            raise _Refused(f"declares an invalid shape for {name}")
    return entries


def memory_budget(file_size, max_bytes=DEFAULT_MAX_BYTES):
    """Bytes a load may allocate for what a file of ``file_size`` bytes declares.

    ``min(max_bytes, max(EXPANSION_FLOOR, MAX_EXPANSION * file_size))``: a
    small multiple of the file's own size (model files expand 1 to 7 times
    when they are large; only small ones, under the floor, compress much
    more), with ``max_bytes`` as the absolute cap. The archive's members and
    what the decoders allocate from the file's own numbers (arrays of
    strings, by their declared item size) are charged against it before
    they are allocated.

    Examples
    --------
    >>> from treerank.model_io._archive import memory_budget
    >>> memory_budget(10_000) == 16 * 2**20  # the floor
    True
    >>> memory_budget(12 * 2**20) == 192 * 2**20  # 16 times the file
    True
    """
    return min(max_bytes, max(EXPANSION_FLOOR, MAX_EXPANSION * file_size))


class MemoryBudget:
    """What a load may still allocate (see :func:`memory_budget`).

    Parameters
    ----------
    limit : int
        The budget in bytes.
    used : int, default=0
        Bytes already charged (the archive's members).
    """

    def __init__(self, limit, used=0):
        self.limit = int(limit)
        self.used = int(used)

    def charge(self, nbytes, what):
        """Count ``nbytes`` more, or raise ``ValueError`` naming ``what``."""
        left = self.limit - self.used
        if nbytes > left:
            raise ValueError(
                f"{what} would take {nbytes} bytes, more than the {left} "
                f"left of this file's memory budget ({self.limit} bytes: "
                f"{MAX_EXPANSION} times the file, at least {EXPANSION_FLOOR}, at most "
                "max_bytes)"
            )
        self.used += int(nbytes)


def _check_budget(entries, file_size, max_bytes):
    total = sum(entry["size"] for entry in entries.values())
    if total > max_bytes:
        raise _Refused(
            f"declares {total} bytes of content, more than the limit of "
            f"{max_bytes} bytes (max_bytes)"
        )
    if total > memory_budget(file_size, max_bytes):
        raise _Refused(
            f"would expand {total} / {file_size} = {total / file_size:.0f} times "
            f"past {EXPANSION_FLOOR} bytes, more than {MAX_EXPANSION}: refused as "
            "a likely zip bomb"
        )
    return MemoryBudget(memory_budget(file_size, max_bytes), total)


def _read_json_member(archive, info, limit, expected_digest=None):
    """Parse a JSON member: the manifest (no digest) or model.json (digest)."""
    if expected_digest is None and info.file_size > limit:
        raise _Refused(f"is larger than {limit} bytes")
    with archive.open(info) as handle:
        if expected_digest is None:
            reader = _BoundedReader(handle, limit, f"is larger than {limit} bytes")
            data = reader.read(limit + 1)
        else:
            reader = _BoundedReader(handle, limit)
            data = reader.read(limit)
            reader.check_end(expected_digest)
    return parse_json(data)


def _read_npy_header(reader):
    try:
        version = np.lib.format.read_magic(reader)
    except ValueError as exc:
        raise _Refused(f"is not a .npy array ({exc})") from None
    if version == (1, 0):
        read_header = np.lib.format.read_array_header_1_0
    elif version == (2, 0):
        read_header = np.lib.format.read_array_header_2_0
    else:
        raise _Refused(f"has an unsupported .npy version {version}")
    try:
        return read_header(reader, max_header_size=_MAX_NPY_HEADER)
    except _Refused:
        raise
    except Exception as exc:  # numpy's header parser raises several kinds
        raise _Refused(
            f"has an invalid .npy header ({type(exc).__name__}: {exc})"
        ) from None


def _read_array_member(archive, info, entry):
    declared_dtype = np.dtype(entry["dtype"])
    declared_shape = tuple(entry["shape"])
    with archive.open(info) as handle:
        reader = _BoundedReader(handle, entry["size"])
        shape, fortran_order, dtype = _read_npy_header(reader)
        if (
            dtype.str != entry["dtype"]
            or dtype.fields is not None
            or dtype.hasobject
            or dtype.subdtype is not None
        ):
            raise _Refused(
                f"has dtype {str(dtype)[:60]} in its header but {entry['dtype']} in "
                "the manifest"
            )
        if tuple(shape) != declared_shape or fortran_order:
            raise _Refused(
                f"has shape {str(shape)[:80]} in its header but {declared_shape} in "
                "the manifest"
            )
        count = math.prod(declared_shape)
        if reader.position + count * declared_dtype.itemsize != entry["size"]:
            raise _Refused(
                f"has shape {declared_shape} and dtype {entry['dtype']}, which do "
                f"not fill the {entry['size']} bytes the manifest declares"
            )
        # the allocation is now bounded by the declared (budgeted) size
        array = np.empty(count, dtype=declared_dtype)
        buffer = memoryview(array.view(np.uint8))
        offset = 0
        while offset < buffer.nbytes:
            data = reader.read_exactly(min(_CHUNK, buffer.nbytes - offset))
            buffer[offset : offset + len(data)] = data
            offset += len(data)
        reader.check_end(entry["sha256"])
    if declared_dtype.kind == "b" and np.any(array.view(np.uint8) > 1):
        raise _Refused("holds booleans other than 0 and 1")
    return array.reshape(declared_shape)


class ArchiveArrays(Mapping):
    """The arrays of an open archive, each read and verified when first asked.

    The manifest gives every array's dtype and shape: decoders check them
    (:func:`check_array`) before the array is read, so that an array of the
    wrong shape is refused without allocating it, and an array the model
    does not use is never read (it is refused by name).
    """

    def __init__(self, archive, infos, entries, path, budget):
        self._archive = archive
        self._infos = infos
        self._entries = entries
        self._path = path
        self._cache = {}
        self._members = {
            _ARRAY_MEMBER.fullmatch(member).group(1): member
            for member in entries
            if member != _DESCRIPTION
        }
        self.budget = budget

    def __getitem__(self, name):
        if name not in self._cache:
            member = self._members[name]
            try:
                self._cache[name] = _read_array_member(
                    self._archive, self._infos[member], self._entries[member]
                )
            except _Refused as exc:
                raise ModelFileError(f"{self._path}: member {member} {exc}.") from None
            except Exception as exc:  # zlib.error, EOFError, OSError, ...
                raise ModelFileError(
                    f"{self._path}: member {member} is damaged "
                    f"({type(exc).__name__}: {exc})."
                ) from None
        return self._cache[name]

    def __contains__(self, name):
        return name in self._members

    def __iter__(self):
        return iter(sorted(self._members))

    def __len__(self):
        return len(self._members)

    def declared(self, name):
        entry = self._entries[self._members[name]]
        return np.dtype(entry["dtype"]), tuple(entry["shape"])


def _open_regular_file(path):
    info = os.stat(path)  # FileNotFoundError / PermissionError as they are
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
    if not stat.S_ISREG(info.st_mode):
        raise ModelFileError(f"{path} is not a regular file.")
    return open(path, "rb")


def _check_arguments(path, max_bytes):
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(
            "path must be a str or path-like object naming a model file; got "
            f"{type(path).__name__}."
        )
    if (
        isinstance(max_bytes, bool)
        or not isinstance(max_bytes, (int, np.integer))
        or max_bytes < 1
    ):
        raise ValueError(f"max_bytes must be a positive int; got {max_bytes!r}.")
    return os.fsdecode(os.fspath(path))


@contextlib.contextmanager
def open_archive(path, *, max_bytes=DEFAULT_MAX_BYTES):
    """Open and verify a model archive; its arrays are read when first used.

    The whole-file digest, the central directory, the manifest (with the
    memory budget, :func:`memory_budget`) and ``model.json`` are checked
    first; each array is then read and verified when a decoder first asks
    for it (:class:`ArchiveArrays`), after its declared dtype and shape were
    checked. Used by :func:`~treerank.model_io.load_model`, so that a file
    refused for an inconsistent array never allocates the arrays after it.

    Parameters
    ----------
    path : str or path-like
    max_bytes : int, default=DEFAULT_MAX_BYTES

    Yields
    ------
    description : dict
    arrays : ArchiveArrays
        With a ``budget`` (:class:`MemoryBudget`) holding what is left for
        the decoders.

    Raises
    ------
    TypeError, FileNotFoundError, PermissionError, IsADirectoryError, ModelFileError
        As :func:`read_archive`.
    """
    path = _check_arguments(path, max_bytes)
    with _open_regular_file(path) as handle:
        file_size = os.fstat(handle.fileno()).st_size
        member = None
        try:
            _check_seal(handle, file_size, max_bytes)
            _check_central_directory(handle, file_size)
            archive = zipfile.ZipFile(handle)
        except _Refused as exc:
            raise ModelFileError(f"{path}: {exc}.") from None
        except Exception as exc:  # BadZipFile, OSError, ...
            raise ModelFileError(
                f"{path}: not a readable treerank model file "
                f"({type(exc).__name__}: {exc})."
            ) from None
        with archive:
            try:
                infos = _check_members(archive.infolist())
                member = _MANIFEST
                manifest = _read_json_member(
                    archive, infos[_MANIFEST], _MAX_MANIFEST_BYTES
                )
                member = None
                entries = _check_manifest(manifest, infos)
                budget = _check_budget(entries, file_size, max_bytes)
                member = _DESCRIPTION
                entry = entries[_DESCRIPTION]
                description = _read_json_member(
                    archive, infos[_DESCRIPTION], entry["size"], entry["sha256"]
                )
                if not isinstance(description, dict):
                    raise _Refused("is not a JSON object")
            except _Refused as exc:
                where = "" if member is None else f" member {member}"
                raise ModelFileError(f"{path}:{where} {exc}.") from None
            except Exception as exc:  # zlib.error, BadZipFile, EOFError, ...
                problem = (
                    "not a readable treerank model file"
                    if member is None
                    else f"member {member} is damaged"
                )
                raise ModelFileError(
                    f"{path}: {problem} ({type(exc).__name__}: {exc})."
                ) from None
            yield description, ArchiveArrays(archive, infos, entries, path, budget)


def read_archive(path, *, max_bytes=DEFAULT_MAX_BYTES):
    """Read and verify a model archive, with bounded memory.

    Parameters
    ----------
    path : str or path-like
        The model file.
    max_bytes : int, default=DEFAULT_MAX_BYTES
        Cap on the total decompressed size of the file's members (1 GiB by
        default). The memory the reader uses is bounded by the sizes the
        manifest declares, which must fit this cap.

    Returns
    -------
    description : dict
        The parsed ``model.json``.
    arrays : dict of str to ndarray
        The arrays, by name, with the dtypes and shapes the manifest declares.

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like object.
    FileNotFoundError, PermissionError, IsADirectoryError
        If the file cannot be opened.
    ModelFileError
        If the file is not a treerank model archive, is damaged or hostile
        (a zip bomb, wrong sizes, digests or array headers, malformed JSON),
        or has an unsupported format version. The message names the member
        and the problem.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from treerank.model_io._archive import read_archive, write_archive
    >>> path = os.path.join(tempfile.mkdtemp(), "x.trk")
    >>> write_archive(path, {"kind": "demo"}, {"w": np.ones(2)})
    >>> description, arrays = read_archive(path)
    >>> description, arrays["w"]
    ({'kind': 'demo'}, array([1., 1.]))
    """
    with open_archive(path, max_bytes=max_bytes) as (description, arrays):
        return description, {name: arrays[name] for name in arrays}
