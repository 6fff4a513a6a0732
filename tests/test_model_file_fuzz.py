"""Hostile model files: zip bombs, tampered archives, random corruptions.

Every damaged or hostile file must end in ``ModelFileError`` (naming the member
and the problem) quickly and within bounded memory; a corruption may also be
harmless (a zip timestamp), in which case the model must load and predict
exactly as the original. The random parts use fixed seeds (and hypothesis with
``derandomize=True``) so that the suite is deterministic.
"""

import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treerank import LeafRank, LinearLeafRank, MixedLeafRank, RankingForest, TreeRank
from treerank.datasets import make_nested_squares
from treerank.exceptions import ModelFileError
from treerank.model_io import _archive, load_model, save_model
from treerank.model_io._archive import read_archive, write_archive

FUZZ = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
MB = 2**20


# ----------------------------------------------------------------------
# small reference models
# ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def models(tmp_path_factory):
    directory = tmp_path_factory.mktemp("models")
    X, y = make_nested_squares(200, random_state=0)
    X_check, _ = make_nested_squares(300, random_state=1)
    fitted = {
        "tree": TreeRank(max_depth=3, random_state=0).fit(X, y),
        "forest": RankingForest(n_estimators=3, max_depth=3, random_state=0).fit(X, y),
        # box and linear rules, with a flag per node
        "mixed": RankingForest(
            n_estimators=3,
            max_depth=3,
            leafrank=MixedLeafRank(
                [LeafRank(max_depth=2, min_samples_leaf=10), LinearLeafRank()]
            ),
            random_state=0,
        ).fit(X, y),
    }
    files = {}
    for name, model in fitted.items():
        path = directory / f"{name}.trk"
        save_model(model, path)
        files[name] = (path.read_bytes(), model.decision_function(X_check))
    return files, X_check


def _read_members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def _sealed(data):
    """End a zip without comment with the whole-file digest of model files.

    Recomputing it is what a deliberate editor would do: the tests of the
    deeper checks seal their hand-made archives.
    """
    assert data[-22:-18] == b"PK\x05\x06" and data[-2:] == b"\0\0"
    body = data[:-2] + struct.pack("<H", 80) + b"treerank-sha256:"
    return body + hashlib.sha256(body).hexdigest().encode()


def _unsealed(data):
    """The zip of a model file without its digest comment."""
    assert data[-80:-64] == b"treerank-sha256:"
    return data[:-82] + b"\0\0"


def _zip_bytes(members, compression=zipfile.ZIP_DEFLATED, seal=True):
    """A zip of (name, bytes) pairs (duplicate names allowed), sealed."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile: duplicate name
        with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
            for name, content in members:
                archive.writestr(name, content)
    return _sealed(buffer.getvalue()) if seal else buffer.getvalue()


def _rebuild(data, edit=None, manifest_edit=None, recompute=True):
    """Rewrite a model file: edit members, recompute the manifest (or not)."""
    members = _read_members(data)
    manifest = json.loads(members.pop("manifest.json"))
    if edit is not None:
        edit(members)
    if recompute:
        for name, content in members.items():
            entry = manifest["members"].setdefault(name, {})
            entry["size"] = len(content)
            entry["sha256"] = hashlib.sha256(content).hexdigest()
    if manifest_edit is not None:
        manifest_edit(manifest)
    pairs = [("manifest.json", json.dumps(manifest).encode()), *members.items()]
    return _zip_bytes(pairs)


def _write(tmp_path, data, name="m.trk"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _refused(path, match=None, **kwargs):
    with pytest.raises(ModelFileError, match=match) as info:
        read_archive(path, **kwargs)
    return str(info.value)


# ----------------------------------------------------------------------
# wrong arguments and non-files
# ----------------------------------------------------------------------
@pytest.mark.parametrize("bad", [None, 3, 2.5, ["m.trk"], io.BytesIO(b"x")])
def test_load_model_wants_a_path(bad):
    with pytest.raises(TypeError, match="path must be a str or path-like"):
        load_model(bad)


def test_missing_files_and_directories_give_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "missing.trk")
    with pytest.raises(IsADirectoryError):
        load_model(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.trk"
    os.mkfifo(fifo)
    with pytest.raises(ModelFileError, match="not a regular file"):
        load_model(fifo)


@pytest.mark.parametrize("max_bytes", [0, -1, 1.5, True, "1"])
def test_max_bytes_is_validated(models, tmp_path, max_bytes):
    path = _write(tmp_path, models[0]["tree"][0])
    with pytest.raises(ValueError, match="max_bytes must be a positive int"):
        read_archive(path, max_bytes=max_bytes)


def test_max_bytes_caps_an_honest_file(models, tmp_path):
    path = _write(tmp_path, models[0]["tree"][0])
    read_archive(path, max_bytes=10**6)
    _refused(path, "more than the limit of 1000 bytes", max_bytes=1000)


# ----------------------------------------------------------------------
# zip bombs: hand-made archives whose members expand to gigabytes
# ----------------------------------------------------------------------
def _deflate_zeros(prefix, n_mebibytes):
    """A raw deflate stream of ``prefix`` then ``n_mebibytes`` MiB of zeros.

    Made of full-flush segments, so one compressed MiB of zeros (about 1 kB)
    is repeated instead of compressing gigabytes.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    segment = compressor.compress(b"\0" * MB) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.flush(zlib.Z_FINISH)
    return head + segment * n_mebibytes + tail


def _raw_zip(entries, seal=True):
    """A zip archive from (name, compressed data, method, crc, size) entries."""
    out, directory = io.BytesIO(), io.BytesIO()
    for name, data, method, crc, size in entries:
        name = name.encode()
        offset = out.tell()
        out.write(
            struct.pack(
                "<4sHHHHHIIIHH",
                b"PK\x03\x04",
                20,
                0,
                method,
                0,
                0x21,
                crc,
                len(data),
                size,
                len(name),
                0,
            )
            + name
        )
        out.write(data)
        directory.write(
            struct.pack(
                "<4sHHHHHHIIIHHHHHII",
                b"PK\x01\x02",
                20,
                20,
                0,
                method,
                0,
                0x21,
                crc,
                len(data),
                size,
                len(name),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + name
        )
    cd_offset, cd = out.tell(), directory.getvalue()
    n = len(entries)
    out.write(cd)
    out.write(
        struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n, n, len(cd), cd_offset, 0)
    )
    return _sealed(out.getvalue()) if seal else out.getvalue()


def _stored(name, content):
    return (name, content, zipfile.ZIP_STORED, zlib.crc32(content), len(content))


def _npy_header(shape, dtype="<f8"):
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buffer.getvalue()


def _manifest(members):
    return json.dumps(
        {"format": "treerank-model", "format_version": 2, "members": members}
    ).encode()


def _bomb(n_members, gib_each, manifest="true", zip_directory="true", header="true"):
    """Members of ``gib_each`` GiB of float64 zeros, with true or small sizes.

    ``manifest``, ``zip_directory`` and ``header`` say which size the
    manifest, the zip central directory and the .npy header declare: the
    true one, or a small one (100 floats).
    """
    description = b'{"estimator": "TreeRank"}'
    n = gib_each * 2**30 // 8
    stream = _deflate_zeros(
        _npy_header((100,) if header == "small" else (n,)), gib_each * 1024
    )
    sizes = {
        "true": len(_npy_header((n,))) + 8 * n,
        "small": len(_npy_header((100,))) + 800,
    }
    declared = {
        "model.json": {
            "size": len(description),
            "sha256": hashlib.sha256(description).hexdigest(),
        }
    }
    entries = [_stored("model.json", description)]
    for k in range(n_members):
        name = f"arrays/bomb{k}.npy"
        declared[name] = {
            "size": sizes[manifest],
            "sha256": "0" * 64,  # never matched: refused before or at the digest
            "dtype": "<f8",
            "shape": [100] if manifest == "small" else [n],
        }
        entries.append((name, stream, zipfile.ZIP_DEFLATED, 0, sizes[zip_directory]))
    return _raw_zip([_stored("manifest.json", _manifest(declared)), *entries])


def _peak_memory(function):
    """Peak of the memory allocated (tracemalloc) while ``function`` runs."""
    tracemalloc.start()
    try:
        function()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


BOMBS = {
    # name: (archive maker, what the refusal says)
    "true sizes, 2 GiB": (lambda: _bomb(1, 2), "more than the limit"),
    "true sizes, 2 x 2 GiB": (lambda: _bomb(2, 2), "more than the limit"),
    "small sizes in manifest and zip": (
        lambda: _bomb(1, 2, manifest="small", zip_directory="small"),
        r"CRC|has shape \(268435456,\) in its header but \(100,\)",
    ),
    "small sizes everywhere, 2 GiB behind": (
        lambda: _bomb(1, 2, manifest="small", zip_directory="small", header="small"),
        "CRC|checksum",
    ),
    "small size in zip directory only": (
        lambda: _bomb(1, 2, zip_directory="small"),
        "bytes in the zip directory but",
    ),
    "small size in manifest only": (
        lambda: _bomb(1, 2, manifest="small"),
        "bytes in the zip directory but",
    ),
}


@pytest.mark.parametrize("kind", sorted(BOMBS))
def test_zip_bombs_are_refused_in_bounded_memory(tmp_path, kind):
    make, match = BOMBS[kind]
    path = _write(tmp_path, make())
    assert os.path.getsize(path) < 4.5 * MB  # about 2 MB per 2 GiB member
    start = time.perf_counter()
    peak = _peak_memory(lambda: _refused(path, match))
    elapsed = time.perf_counter() - start
    assert peak < 100 * MB, (kind, peak / MB)
    print(f"{kind}: refused in {elapsed:.3f} s, peak {peak / MB:.2f} MiB")


def test_a_bomb_is_refused_even_under_a_huge_max_bytes(tmp_path):
    """Past 32 MiB, a file may expand at most 100 times."""
    path = _write(tmp_path, _bomb(1, 2))
    peak = _peak_memory(lambda: _refused(path, "zip bomb", max_bytes=2**40))
    assert peak < 100 * MB


@pytest.mark.parametrize("member", ["manifest.json", "model.json"])
def test_json_bombs_are_refused(tmp_path, member):
    """A JSON member expanding to 2 GiB of blanks."""
    stream = _deflate_zeros(b"{", 2048)  # zeros are not JSON: size stops first
    size = 1 + 2**31
    if member == "manifest.json":
        entries = [(member, stream, zipfile.ZIP_DEFLATED, 0, size)]
        entries.append(_stored("model.json", b"{}"))
        match = "larger than"
    else:
        declared = {member: {"size": size, "sha256": "0" * 64}}
        entries = [_stored("manifest.json", _manifest(declared))]
        entries.append((member, stream, zipfile.ZIP_DEFLATED, 0, size))
        match = "more than"
    path = _write(tmp_path, _raw_zip(entries))
    peak = _peak_memory(lambda: _refused(path, match))
    assert peak < 100 * MB


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kB on Linux")
def test_zip_bomb_resident_memory_in_a_fresh_process(tmp_path):
    """The bomb is refused with < 100 MB of resident memory growth."""
    path = _write(tmp_path, _bomb(2, 2))
    script = textwrap.dedent(
        f"""
        import resource, sys
        from treerank.exceptions import ModelFileError
        from treerank.model_io import load_model
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            load_model({str(path)!r})
        except ModelFileError:
            pass
        else:
            sys.exit("not refused")
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) * 1024)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    growth = int(result.stdout.split()[-1])
    assert growth < 100 * MB, growth / MB


# ----------------------------------------------------------------------
# tampered archives: each refusal names the problem
# ----------------------------------------------------------------------
def _drop(name):
    def edit(members):
        del members[name]

    return edit


def _json_member(name, transform):
    def edit(members):
        members[name] = transform(members[name])

    return edit


def _set_description(key, raw):
    """Replace a key of model.json by a raw JSON text (may be non-standard)."""

    def transform(content):
        description = json.loads(content)
        description[key] = "@@"
        return json.dumps(description).replace('"@@"', raw).encode()

    return _json_member("model.json", transform)


def _manifest_entry(member, **changes):
    def edit(manifest):
        manifest["members"][member].update(changes)

    return edit


def _replace_header(shape=None, descr="<f8", fortran_order=False, raw=None):
    """Replace the .npy header of arrays/rule_improvement.npy (data kept)."""

    def edit(members):
        content = members["arrays/rule_improvement.npy"]
        array = np.load(io.BytesIO(content))
        header = raw
        if header is None:
            header = _npy_header(array.shape if shape is None else shape, descr)
            if fortran_order:
                header = header.replace(b"False", b"True ")
        members["arrays/rule_improvement.npy"] = header + array.tobytes()

    return edit


TAMPERING = {
    # name: (edit, manifest_edit, recompute, expected message)
    "members not in manifest": (
        None,
        lambda m: m["members"].pop("model.json"),
        False,
        "do not match its manifest",
    ),
    "missing model.json": (_drop("model.json"), None, False, "no model.json"),
    "unexpected member": (
        lambda members: members.update({"../evil.sh": b"x"}),
        None,
        True,
        "unexpected member",
    ),
    "pickle member": (
        lambda members: members.update({"arrays/x.pkl": b"x"}),
        None,
        True,
        "unexpected member",
    ),
    "wrong format name": (
        None,
        lambda m: m.update(format="zip"),
        True,
        "wrong format name",
    ),
    "old format version": (
        None,
        lambda m: m.update(format_version=1),
        True,
        "format version 1",
    ),
    "members not a table": (
        None,
        lambda m: m.update(members=[]),
        True,
        "without a members table",
    ),
    "size is a bool": (
        None,
        _manifest_entry("model.json", size=True),
        True,
        "invalid size",
    ),
    "size is negative": (
        None,
        _manifest_entry("model.json", size=-1),
        True,
        "invalid size",
    ),
    "size is wrong": (
        None,
        _manifest_entry("model.json", size=3),
        True,
        "in the manifest",
    ),
    "digest is not hex": (
        None,
        _manifest_entry("model.json", sha256="z" * 64),
        True,
        "invalid checksum",
    ),
    "digest is wrong": (
        None,
        _manifest_entry("model.json", sha256="0" * 64),
        True,
        "model.json does not match its checksum",
    ),
    "object dtype declared": (
        None,
        _manifest_entry("arrays/rule_improvement.npy", dtype="|O"),
        True,
        "only booleans, integers and floats",
    ),
    "complex dtype declared": (
        None,
        _manifest_entry("arrays/rule_improvement.npy", dtype="<c16"),
        True,
        "only booleans, integers and floats",
    ),
    "negative shape declared": (
        None,
        _manifest_entry("arrays/rule_improvement.npy", shape=[-1]),
        True,
        "invalid shape",
    ),
    "huge shape in header": (
        _replace_header(shape=(2**40,)),
        None,
        True,
        r"shape \(1099511627776,\) in its header",
    ),
    "huge shape in header and manifest": (
        _replace_header(shape=(2**40,)),
        _manifest_entry("arrays/rule_improvement.npy", shape=[2**40]),
        True,
        "do not fill",
    ),
    "object dtype in header": (
        _replace_header(descr="|O"),
        None,
        True,
        "has dtype object in its header",
    ),
    "structured dtype in header": (
        _replace_header(descr=[("a", "<f8")]),
        None,
        True,
        "in its header",
    ),
    "fortran order": (
        _replace_header(fortran_order=True),
        None,
        True,
        "in its header",
    ),
    "not a npy": (
        _replace_header(raw=b"PK\x03\x04garbage"),
        None,
        True,
        "is not a .npy",
    ),
    "npy version 3": (
        _replace_header(raw=b"\x93NUMPY\x03\x00" + b"\x00" * 8),
        None,
        True,
        "unsupported .npy version",
    ),
    "oversized npy header": (
        _replace_header(
            raw=b"\x93NUMPY\x02\x00" + struct.pack("<I", 10**6) + b" " * 10**6
        ),
        None,
        True,
        "invalid .npy header",
    ),
    "NaN in model.json": (_set_description("x", "NaN"), None, True, "not valid JSON"),
    "Infinity in model.json": (
        _set_description("x", "-Infinity"),
        None,
        True,
        "not valid JSON",
    ),
    "1e999 in model.json": (
        _set_description("n_features_in", "1e999"),
        None,
        True,
        "out of the float64",
    ),
    "deep nesting": (
        _set_description("x", "[" * 1000 + "]" * 1000),
        None,
        True,
        "nested 1001 levels",
    ),
    "many containers": (
        _set_description("x", "[" + "[]," * 300_000 + "[]]"),
        None,
        True,
        "JSON arrays and objects",
    ),
    "repeated key": (
        _json_member("model.json", lambda c: c[:-1] + b', "estimator": "x"}'),
        None,
        True,
        "appears twice",
    ),
    "not UTF-8": (
        _json_member("model.json", lambda c: c.replace(b"{", b"{\xff", 1)),
        None,
        True,
        "not valid JSON",
    ),
    "model.json is a list": (
        _json_member("model.json", lambda c: b"[]"),
        None,
        True,
        "not a JSON object",
    ),
    "manifest is a list": (
        None,
        None,
        True,
        "wrong format name",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_tampered_files_are_refused_with_the_problem_named(models, tmp_path, case):
    edit, manifest_edit, recompute, match = TAMPERING[case]
    data = models[0]["tree"][0]
    if case == "manifest is a list":
        members = _read_members(data)
        members["manifest.json"] = b"[]"
        data = _zip_bytes(members.items())
    else:
        data = _rebuild(data, edit, manifest_edit, recompute)
    path = _write(tmp_path, data)
    message = _refused(path, match)
    assert str(path) in message
    with pytest.raises(ModelFileError):
        load_model(path)


def test_duplicate_members_are_refused(models, tmp_path):
    members = _read_members(models[0]["tree"][0])
    pairs = [*members.items(), ("model.json", members["model.json"])]
    _refused(_write(tmp_path, _zip_bytes(pairs)), r"duplicate members \['model.json'\]")


@pytest.mark.parametrize(
    ("method", "match"),
    [(zipfile.ZIP_BZIP2, "compression method 12"), (zipfile.ZIP_LZMA, "method 14")],
)
def test_other_compression_methods_are_refused(models, tmp_path, method, match):
    members = _read_members(models[0]["tree"][0])
    _refused(_write(tmp_path, _zip_bytes(members.items(), compression=method)), match)


def test_encrypted_members_are_refused(models, tmp_path):
    data = bytearray(models[0]["tree"][0])
    members = _read_members(bytes(data))
    entries = [_stored(name, content) for name, content in members.items()]
    raw = bytearray(_raw_zip(entries, seal=False))
    # set the encryption bit in every central directory record
    position = raw.find(b"PK\x01\x02")
    while position >= 0:
        raw[position + 8] |= 1
        position = raw.find(b"PK\x01\x02", position + 4)
    _refused(_write(tmp_path, _sealed(bytes(raw))), "encrypted member")


def test_booleans_other_than_0_and_1_are_refused(tmp_path):
    path = tmp_path / "b.trk"
    write_archive(path, {}, {"mask": np.array([True, False])})
    data = _rebuild(
        path.read_bytes(),
        _json_member("arrays/mask.npy", lambda c: c[:-1] + b"\x02"),
    )
    _refused(_write(tmp_path, data, "b2.trk"), "booleans other than 0 and 1")


def test_central_directory_limits(models, tmp_path):
    many = [_stored(f"arrays/a{k}.npy", b"") for k in range(_archive.MAX_MEMBERS + 1)]
    _refused(_write(tmp_path, _raw_zip(many), "many.trk"), "members, more than")
    data = bytearray(_unsealed(models[0]["tree"][0]))
    end = data.rfind(b"PK\x05\x06")
    zip64 = bytes(data[:end]) + b"PK\x06\x07" + b"\x00" * 16 + bytes(data[end:])
    _refused(_write(tmp_path, _sealed(zip64), "z64.trk"), "ZIP64")
    data[end + 12 : end + 16] = struct.pack("<I", 2**31)  # central directory size
    _refused(_write(tmp_path, _sealed(bytes(data)), "cd.trk"), "central directory")
    # bytes appended after the digest, or a file without it
    sealed = models[0]["tree"][0]
    _refused(_write(tmp_path, sealed + b"\n", "tail.trk"), "no file digest")
    _refused(_write(tmp_path, _unsealed(sealed), "bare.trk"), "no file digest")


@pytest.mark.parametrize("content", [b"", b"PK\x05\x06", b"\x00" * 100])
def test_tiny_files_are_refused(tmp_path, content):
    _refused(_write(tmp_path, content), "not a treerank model file")


def test_writer_refuses_what_the_reader_would_refuse(tmp_path):
    path = tmp_path / "x.trk"
    with pytest.raises(ValueError, match="not plain JSON"):
        write_archive(path, {"x": float("nan")}, {})
    deep = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="nested"):
        write_archive(path, {"x": deep}, {})
    with pytest.raises(ValueError, match="dtype object"):
        write_archive(path, {}, {"x": np.array([None])})
    with pytest.raises(ValueError, match="dtype complex128"):
        write_archive(path, {}, {"x": np.zeros(2, dtype=complex)})
    with pytest.raises(ValueError, match="array name"):
        write_archive(path, {}, {"../x": np.zeros(2)})
    assert not path.exists()


def test_round_trip_of_every_supported_dtype(tmp_path):
    arrays = {
        f"a_{dtype}": (np.arange(6) % 3).astype(dtype).reshape(2, 3)
        for dtype in [
            "bool",
            "int8",
            "uint8",
            "int16",
            "uint32",
            "int64",
            "float16",
            "float32",
            "float64",
        ]
    }
    arrays["scalar"] = np.array(2.5)
    arrays["empty"] = np.zeros((0, 4))
    arrays["strided"] = np.arange(10.0)[::3]
    arrays["fortran"] = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    path = tmp_path / "x.trk"
    write_archive(path, {"nested": {"a": [1, 2.5, None, "s"]}}, arrays)
    description, loaded = read_archive(path)
    assert description == {"nested": {"a": [1, 2.5, None, "s"]}}
    assert loaded.keys() == arrays.keys()
    for name, array in arrays.items():
        assert loaded[name].dtype == array.dtype, name
        np.testing.assert_array_equal(loaded[name], array)


# ----------------------------------------------------------------------
# random corruptions
# ----------------------------------------------------------------------
def _corrupt(data, rng):
    """One random byte-level corruption of a file."""
    data = bytearray(data)
    n = len(data)
    kind = rng.integers(7)
    if kind == 0:  # flip 1 to 4 bits
        for position in rng.integers(n, size=rng.integers(1, 5)):
            data[position] ^= 1 << int(rng.integers(8))
    elif kind == 1:  # truncate
        del data[int(rng.integers(n)) :]
    elif kind == 2:  # overwrite a run with random bytes
        start = int(rng.integers(n))
        run = rng.integers(256, size=int(rng.integers(1, 17)), dtype=np.uint8)
        data[start : start + len(run)] = run.tobytes()
    elif kind == 3:  # delete a run
        start = int(rng.integers(n))
        del data[start : start + int(rng.integers(1, 65))]
    elif kind == 4:  # insert random bytes
        start = int(rng.integers(n))
        data[start:start] = rng.integers(
            256, size=int(rng.integers(1, 17)), dtype=np.uint8
        ).tobytes()
    elif kind == 5:  # zero a run
        start = int(rng.integers(n))
        length = int(rng.integers(1, 257))
        data[start : start + length] = bytes(len(data[start : start + length]))
    else:  # duplicate a run
        start = int(rng.integers(n))
        length = int(rng.integers(1, 257))
        data[start:start] = data[start : start + length]
    return bytes(data)


def _outcome(path, reference, X_check):
    """'refused', or 'harmless' if the model loads and predicts identically."""
    try:
        model = load_model(path)
    except ModelFileError:
        return "refused"
    np.testing.assert_array_equal(model.decision_function(X_check), reference)
    return "harmless"


N_BYTE_CORRUPTIONS = 500  # per model kind and test


@pytest.mark.parametrize("kind", ["tree", "forest", "mixed"])
def test_random_byte_corruptions_are_all_refused(models, tmp_path, kind):
    files, _ = models
    data, _ = files[kind]
    rng = np.random.default_rng(15)
    path = tmp_path / "c.trk"
    n_refused = 0
    start = time.perf_counter()
    for _ in range(N_BYTE_CORRUPTIONS):
        corrupted = _corrupt(data, rng)
        if corrupted == data:
            continue
        path.write_bytes(corrupted)
        with pytest.raises(ModelFileError):
            load_model(path)
        n_refused += 1
    print(f"{kind}: {n_refused} refused in {time.perf_counter() - start:.2f} s")
    assert n_refused > 0.95 * N_BYTE_CORRUPTIONS


@pytest.mark.parametrize("kind", ["tree", "forest", "mixed"])
def test_resealed_corruptions_are_refused_or_harmless(models, tmp_path, kind):
    """Corrupt the zip, then recompute the file digest: the deeper checks act."""
    files, X_check = models
    data, reference = files[kind]
    bare = _unsealed(data)
    rng = np.random.default_rng(16)
    path = tmp_path / "c.trk"
    counts = {"refused": 0, "harmless": 0}
    start = time.perf_counter()
    for _ in range(N_BYTE_CORRUPTIONS):
        corrupted = _corrupt(bare, rng)
        if corrupted[-22:-18] != b"PK\x05\x06" or corrupted[-2:] != b"\0\0":
            corrupted += b"PK\x05\x06" + bytes(18)  # it hit the end record
        path.write_bytes(_sealed(corrupted))
        counts[_outcome(path, reference, X_check)] += 1
    print(f"{kind}: {counts} in {time.perf_counter() - start:.2f} s")
    assert counts["refused"] > 0.9 * N_BYTE_CORRUPTIONS


@FUZZ
@given(data=st.binary(max_size=2000))
def test_random_bytes_are_refused(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("random") / "r.trk"
    path.write_bytes(data)
    with pytest.raises(ModelFileError):
        read_archive(path)


def _json_values():
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=8),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.text(max_size=4), inner, max_size=3),
        ),
        max_leaves=8,
    )


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _set_at(value, path, new):
    if not path:
        return new
    target = value
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return value


@FUZZ
@given(
    kind=st.sampled_from(["tree", "forest", "mixed"]),
    choice=st.integers(0, 10**6),
    new=_json_values(),
    in_model_json=st.booleans(),
)
def test_edited_json_with_recomputed_checksums(
    models, tmp_path_factory, kind, choice, new, in_model_json
):
    """Valid checksums, edited content: refused, or loaded without a crash.

    Whether every inconsistent model is refused is the job of the structural
    validation in ``load_model`` (the decoders); here nothing but a
    ``ModelFileError`` may escape.
    """
    files, _ = models
    data = files[kind][0]
    member = "model.json" if in_model_json else "manifest.json"

    def transform(content):
        value = json.loads(content)
        paths = list(_paths(value))
        return json.dumps(_set_at(value, paths[choice % len(paths)], new)).encode()

    if member == "model.json":
        data = _rebuild(data, _json_member(member, transform))
    else:
        members = _read_members(data)
        members[member] = transform(members[member])
        data = _zip_bytes(members.items())
    path = tmp_path_factory.mktemp("json") / "j.trk"
    path.write_bytes(data)
    try:
        load_model(path)
    except ModelFileError:
        pass


@FUZZ
@given(
    kind=st.sampled_from(["tree", "forest", "mixed"]),
    choice=st.integers(0, 10**6),
    shape=st.lists(st.integers(0, 2**62), max_size=3),
    dtype=st.sampled_from(["<f8", "<i8", "|b1", "<f4", "|O", "<U3", "<c8", "V8"]),
    declare=st.booleans(),
)
def test_edited_array_headers(
    models, tmp_path_factory, kind, choice, shape, dtype, declare
):
    """A header announcing another shape or dtype is refused before allocation."""
    files, _ = models
    data = files[kind][0]
    names = sorted(n for n in _read_members(data) if n.startswith("arrays/"))
    member = names[choice % len(names)]

    def edit(members):
        content = members[member]
        array = np.load(io.BytesIO(content))
        members[member] = _npy_header(tuple(shape), dtype) + array.tobytes()

    def manifest_edit(manifest):
        if declare:
            manifest["members"][member].update(dtype=dtype, shape=shape)

    path = tmp_path_factory.mktemp("header") / "h.trk"
    path.write_bytes(_rebuild(data, edit, manifest_edit))
    original = np.load(io.BytesIO(_read_members(data)[member]))
    unchanged = tuple(shape) == original.shape and dtype == original.dtype.str
    peak = _peak_memory(lambda: _outcome_or_refused(path, unchanged))
    assert peak < 100 * MB


def _outcome_or_refused(path, unchanged):
    if unchanged:
        read_archive(path)
    else:
        with pytest.raises(ModelFileError):
            read_archive(path)


# ----------------------------------------------------------------------
# check_array: what the decoders ask of an array
# ----------------------------------------------------------------------
def test_check_array_names_the_array_and_the_problem():
    from treerank.model_io._arrays import check_array

    arrays = {
        "left": np.array([1, -1, -1]),
        "big": np.array([2**40], dtype=np.uint64),
        "x": np.array([0.5, np.nan]),
        "m": np.zeros((2, 3)),
    }
    assert check_array(arrays, "left", kinds="i", bounds=(-1, 2)).tolist() == [
        1,
        -1,
        -1,
    ]
    cases = [
        ({"name": "nope", "kinds": "i"}, "the array nope is missing"),
        ({"name": "left", "kinds": "bf"}, "holds integers .int64.; expected booleans"),
        ({"name": "left", "kinds": "i", "ndim": 2}, r"shape \(3,\); expected 2 dim"),
        ({"name": "m", "kinds": "f", "ndim": 2, "shape": (2, 4)}, r"expected \(2, 4\)"),
        ({"name": "left", "kinds": "i", "bounds": (0, None)}, r"outside \[0, None\]"),
        ({"name": "x", "kinds": "f", "finite": True}, "NaN or infinity"),
        ({"name": "x", "kinds": "f", "bounds": (0, 1)}, "holds NaN"),
        ({"name": "big", "kinds": "u", "dtype": np.int32}, "does not fit int32"),
    ]
    for kwargs, match in cases:
        name = kwargs.pop("name")
        with pytest.raises(ValueError, match=match):
            check_array(arrays, name, **kwargs)
    converted = check_array(arrays, "big", kinds="iu", dtype=np.int64)
    assert converted.dtype == np.int64 and converted[0] == 2**40


# ----------------------------------------------------------------------
# the JSON pre-scan
# ----------------------------------------------------------------------
def _depth(value):
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _containers(value):
    if isinstance(value, dict):
        return 1 + sum(_containers(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_containers(v) for v in value)
    return 0


_TRICKY_TEXT = st.text(alphabet='[]{}"\\ab\n\u00e9', max_size=6)


@FUZZ
@given(
    value=st.recursive(
        st.one_of(st.none(), st.integers(), _TRICKY_TEXT),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(_TRICKY_TEXT, inner, max_size=3),
        ),
        max_leaves=12,
    ),
    ascii_only=st.booleans(),
)
def test_json_prescan_is_exact_on_valid_json(value, ascii_only):
    """Brackets, quotes and backslashes inside strings do not fool the depth count."""
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert _archive._json_shape(data) == (_depth(value), _containers(value))


def test_json_prescan_is_linear_on_unterminated_escapes():
    """A string of 2 MiB of escaped quotes, never closed (quadratic for a naive
    scanner that restarts at every quote: hours at this size)."""
    data = b'{"a": "' + b'\\"' * 2**20
    with pytest.raises(_archive._Refused, match="not valid JSON"):
        _archive.parse_json(data)
