"""The code listing's import reading, kept between invocations: a kept entry is used while its
file's mtime and size are those it was read with, read again when they change, and the whole
cache dropped when the package's files are not the same."""

import json
from pathlib import Path

import pytest
from interference.core import code_deps

VERDICT = code_deps.PACKAGE / "findings" / "verdict.py"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "code-deps.json"
    monkeypatch.setattr(code_deps, "CACHE", path)
    for f in (code_deps.imported_by, code_deps._kept):
        f.cache_clear()
    yield path
    for f in (code_deps.imported_by, code_deps._kept):
        f.cache_clear()


def fresh() -> list[Path]:
    for f in (code_deps.imported_by, code_deps._kept):
        f.cache_clear()
    return code_deps.closure([VERDICT])


def test_a_kept_entry_is_used_while_its_file_is_unchanged_and_read_again_when_it_changes(cache):
    read = code_deps.closure([VERDICT])
    assert cache.exists() and read == fresh()  # the second from the kept entries
    kept = json.loads(cache.read_text())
    stamp, imports = kept["entries"][str(VERDICT)]
    assert sorted(map(Path, imports)) == sorted(code_deps._read_imports(VERDICT))
    # An entry with the file's stamp is believed (so it is what is used) ...
    kept["entries"][str(VERDICT)] = [stamp, []]
    cache.write_text(json.dumps(kept))
    assert fresh() == [VERDICT]
    # ... one with another stamp (the file was edited) is not.
    kept["entries"][str(VERDICT)] = [[stamp[0] - 1, stamp[1]], []]
    cache.write_text(json.dumps(kept))
    assert fresh() == read


def test_another_set_of_files_drops_every_entry(cache):
    code_deps.closure([VERDICT])
    kept = json.loads(cache.read_text())
    kept["entries"][str(VERDICT)][1] = []
    kept["files"] = "another package"
    cache.write_text(json.dumps(kept))
    assert len(fresh()) > 1


def test_an_unwritable_cache_is_no_error(tmp_path, monkeypatch):
    monkeypatch.setattr(code_deps, "CACHE", tmp_path / "missing" / "dir" / "code-deps.json")
    for f in (code_deps.imported_by, code_deps._kept):
        f.cache_clear()
    assert VERDICT in code_deps.closure([VERDICT])
    for f in (code_deps.imported_by, code_deps._kept):
        f.cache_clear()
