"""The container of a model file: JSON metadata and numpy arrays in a zip archive.

Layout of the archive:

- ``manifest.json``: the format name and version, the treerank version that
  wrote the file, and the SHA-256 digest of every other member;
- ``model.json``: the model's description (plain JSON);
- ``arrays/<name>.npy``: numeric arrays, read back with ``allow_pickle=False``.

Reading never unpickles and never imports anything named by the file, so a
model file cannot run code. The digests detect corruption and hand edits (they
are not a signature: someone who recomputes them can still change the model,
whose consistency is then checked when it is rebuilt).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import hashlib
import io
import json
import zipfile

import numpy as np

from treerank.exceptions import ModelFileError
from treerank.utils._io import atomic_path

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "read_archive", "write_archive"]

FORMAT_NAME = "treerank-model"
FORMAT_VERSION = 2
_MAX_MEMBER_BYTES = 2**34  # refuse absurd members (zip bombs)


def _digest(data):
    return hashlib.sha256(data).hexdigest()


def write_archive(path, description, arrays, *, overwrite=True):
    """Write a model archive atomically.

    Parameters
    ----------
    path : str or path-like
        Destination file.
    description : dict
        JSON-serializable description of the model.
    arrays : dict of str to ndarray
        Numeric (or boolean) arrays; names are ``[A-Za-z0-9_.]`` strings.
    overwrite : bool, default=True
        Whether an existing file may be replaced.
    """
    from treerank import __version__

    members = {"model.json": json.dumps(description, indent=1, sort_keys=True).encode()}
    for name, array in arrays.items():
        array = np.asarray(array)
        if array.dtype.kind not in "biuf":
            raise ValueError(
                f"array {name!r} has dtype {array.dtype}; only numbers allowed."
            )
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        members[f"arrays/{name}.npy"] = buffer.getvalue()
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "treerank_version": __version__,
        "sha256": {name: _digest(data) for name, data in members.items()},
    }
    with atomic_path(path, overwrite=overwrite) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(
                "manifest.json", json.dumps(manifest, indent=1, sort_keys=True)
            )
            for name, data in members.items():
                archive.writestr(name, data)


def read_archive(path):
    """Read and verify a model archive.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    description : dict
    arrays : dict of str to ndarray

    Raises
    ------
    ModelFileError
        If the file is not a treerank model archive, is corrupted, was edited
        (digest mismatch), or has an unsupported format version.
    """
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelFileError(f"{path} is not a treerank model file ({exc}).") from None
    with archive:
        names = set(archive.namelist())
        if "manifest.json" not in names or "model.json" not in names:
            raise ModelFileError(f"{path} is not a treerank model file (no manifest).")
        for info in archive.infolist():
            if info.file_size > _MAX_MEMBER_BYTES:
                raise ModelFileError(f"{path}: member {info.filename} is too large.")
        try:
            manifest = json.loads(archive.read("manifest.json"))
        except (ValueError, zipfile.BadZipFile) as exc:
            raise ModelFileError(f"{path}: unreadable manifest ({exc}).") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
            raise ModelFileError(f"{path} is not a treerank model file.")
        version = manifest.get("format_version")
        if version != FORMAT_VERSION:
            raise ModelFileError(
                f"{path} uses model format version {version!r}; this treerank reads "
                f"version {FORMAT_VERSION}."
            )
        digests = manifest.get("sha256")
        if not isinstance(digests, dict) or set(digests) != names - {"manifest.json"}:
            raise ModelFileError(
                f"{path} has been modified: its members do not match the manifest."
            )
        members = {}
        for name, expected in digests.items():
            try:
                data = archive.read(name)
            except (zipfile.BadZipFile, OSError) as exc:
                raise ModelFileError(f"{path} is corrupted ({exc}).") from None
            if _digest(data) != expected:
                raise ModelFileError(
                    f"{path} has been modified or corrupted: the checksum of {name} "
                    "does not match the manifest."
                )
            members[name] = data
    try:
        description = json.loads(members.pop("model.json"))
    except ValueError as exc:
        raise ModelFileError(f"{path}: model.json is not valid JSON ({exc}).") from None
    arrays = {}
    for name, data in members.items():
        if not (name.startswith("arrays/") and name.endswith(".npy")):
            raise ModelFileError(f"{path}: unexpected member {name}.")
        try:
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            raise ModelFileError(
                f"{path}: array {name} is not numeric ({exc})."
            ) from None
        arrays[name[len("arrays/") : -len(".npy")]] = array
    return description, arrays
