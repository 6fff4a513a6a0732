"""Editing model files as a deliberate tamperer would: change members, then
recompute every checksum (the manifest's and the whole-file digest), so that
the tests reach the loader's content checks."""

import hashlib
import io
import json
import struct
import zipfile


def read_members(path):
    """The members of a model file, by name."""
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def write_sealed(path, members):
    """Write members as a model file, with recomputed manifest and file digest."""
    manifest = json.loads(members["manifest.json"])
    for name, content in members.items():
        if name != "manifest.json" and name in manifest.get("members", {}):
            manifest["members"][name]["size"] = len(content)
            manifest["members"][name]["sha256"] = hashlib.sha256(content).hexdigest()
    members = {**members, "manifest.json": json.dumps(manifest).encode()}
    buffer = io.BytesIO()  # sealed in memory, written once
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    data = buffer.getvalue()
    body = data[:-2] + struct.pack("<H", 80) + b"treerank-sha256:"
    path.write_bytes(body + hashlib.sha256(body).hexdigest().encode())


def rewrite_description(path, edit):
    """Apply ``edit`` to the decoded model.json of a model file, re-sealed."""
    members = read_members(path)
    description = json.loads(members["model.json"])
    edit(description)
    members["model.json"] = json.dumps(description).encode()
    write_sealed(path, members)


def full_rule_form(arrays):
    """The arrays of an engine (or mixed) model file with its rules stored whole.

    Files store the engine rules by their layout (one split bit per node, the
    fields at the nodes that use them); files written before that, or with
    rules laid out otherwise, hold the children, the rule ranges and every
    field at every node. Both load; the tampering tests of the whole form use
    this. In a mixed file, the rules are those of the box rules' nodes.
    """
    import numpy as np

    from treerank.model_io._arrays import narrow
    from treerank.model_io._rules_engine import expand_rule_nodes
    from treerank.model_io._tree_arrays import segments

    owner = segments(arrays["node_offsets"].astype(np.int64))[0]
    split = arrays["children_left"] >= 0
    if "rule_kinds" in arrays:  # a mixed file: the nodes with a box rule
        box = np.zeros_like(split)
        box[np.flatnonzero(split)[arrays["rule_kinds"] == 0]] = True
        split = box
    offsets = arrays["rule_offsets"].astype(np.int64)
    full = expand_rule_nodes(arrays, split, owner, offsets)
    return {name: narrow(array) for name, array in full.items()}


def load_array(members, name):
    """The array of member ``arrays/<name>.npy``."""
    import io

    import numpy as np

    return np.load(io.BytesIO(members[f"arrays/{name}.npy"]), allow_pickle=False)


def with_array(members, name, array):
    """``members`` with ``arrays/<name>.npy`` replaced by ``array`` (a copy)."""
    import io

    import numpy as np

    buffer = io.BytesIO()
    np.save(buffer, array)
    return {**members, f"arrays/{name}.npy": buffer.getvalue()}
