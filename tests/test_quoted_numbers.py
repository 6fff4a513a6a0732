"""Numbers quoted from benchmark results agree with their results files.

A paragraph of the README or of the documentation that cites a results file
(``benchmarks/results/<name>.md``) quotes numbers from it: every decimal
number of such a paragraph (outside inline code) must be the rounding of a
number the cited files contain, at the precision it is quoted with. A
paragraph that quotes a results file without naming it is the one thing this
cannot catch; the docs cite their sources by name.

The results files that the README or the docs quote must also say which commit
produced them (the stamp of ``benchmarks/_protocol.py``).
"""

import os
import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
CITATION = re.compile(r"benchmarks/results/([A-Za-z0-9_]+\.md)")
# a decimal number not inside a word or a version (1.9.1) or a path
NUMBER = re.compile(r"(?<![\w.])[+-]?\d[\d,]*\.\d+(?![\w.]*\d)")
INLINE_CODE = re.compile(r"``[^`]*``|`[^`]*`")


def _documents():
    paths = [os.path.join(ROOT, "README.md")]
    for folder, _, files in os.walk(os.path.join(ROOT, "docs")):
        if "_build" in folder or "generated" in folder:
            continue
        paths += [os.path.join(folder, f) for f in files if f.endswith(".rst")]
    return sorted(paths)


def _paragraphs(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return [block for block in re.split(r"\n\s*\n", text) if block.strip()]


def _citing_paragraphs():
    found = []
    for path in _documents():
        for block in _paragraphs(path):
            cited = sorted(set(CITATION.findall(block)))
            if cited:
                found.append((os.path.relpath(path, ROOT), block, cited))
    return found


def _numbers(text):
    return [m.group(0).replace(",", "") for m in NUMBER.finditer(text)]


def _file_numbers(name):
    with open(os.path.join(RESULTS, name), encoding="utf-8") as handle:
        return {Decimal(n) for n in _numbers(handle.read())}


def _matches(quoted, candidates):
    """Whether ``quoted`` is some candidate rounded to its decimals."""
    q = Decimal(quoted)
    exponent = q.as_tuple().exponent
    quantum = Decimal(1).scaleb(exponent)
    for value in candidates:
        for rounding in (ROUND_HALF_EVEN, ROUND_HALF_UP):
            if value.quantize(quantum, rounding=rounding) == q:
                return True
    return False


CITING = _citing_paragraphs()


def test_the_docs_cite_results_files():
    assert CITING, "no paragraph of the README or the docs cites a results file"


@pytest.mark.parametrize(
    ("document", "paragraph", "cited"),
    CITING,
    ids=[f"{doc}:{i}" for i, (doc, _, _) in enumerate(CITING)],
)
def test_quoted_numbers_are_in_the_cited_results(document, paragraph, cited):
    missing = [
        name for name in cited if not os.path.exists(os.path.join(RESULTS, name))
    ]
    assert not missing, f"{document} cites missing results files {missing}"
    candidates = set().union(*(_file_numbers(name) for name in cited))
    text = INLINE_CODE.sub(" ", paragraph)
    wrong = [n for n in _numbers(text) if not _matches(n, candidates)]
    assert not wrong, (
        f"{document}: the numbers {wrong} of the paragraph citing {cited} are in "
        f"none of these results files:\n{paragraph}"
    )


@pytest.mark.parametrize(
    "name", sorted({name for _, _, cited in CITING for name in cited})
)
def test_quoted_results_files_name_their_commit(name):
    with open(os.path.join(RESULTS, name), encoding="utf-8") as handle:
        head = handle.read(2000)
    assert re.search(r"Produced by commit `[0-9a-f]{7,40}`", head), (
        f"benchmarks/results/{name} is quoted by the docs but does not say which "
        "commit produced it (see benchmarks/_protocol.py, stamp_lines)"
    )
    assert "with uncommitted changes" not in head, (
        f"benchmarks/results/{name} was produced from a working tree with "
        "uncommitted changes: rerun it from a clean checkout"
    )


def test_rounding_rule():
    values = {Decimal("0.8810"), Decimal("0.87166"), Decimal("12.27")}
    assert _matches("0.881", values)
    assert _matches("0.8717", values)
    assert _matches("12.3", values)
    assert not _matches("0.882", values)
    assert _numbers("AUC 0.881 and 1.9.1 and x0.3 and 1,234.5") == ["0.881", "1234.5"]
