"""The temporary-file sequence a run keeps what it read in."""

from __future__ import annotations

import pytest

from brainmigrate.spill import Keyed, Spill, SpillError


def test_items_come_back_in_order_across_batches_and_the_buffer():
    items = [("a", i, {"n": i}) for i in range(10)]
    s = Spill(items, batch=3)
    assert len(s) == 10
    assert list(s) == items
    assert list(s) == items  # read again


def test_two_readers_at_once_each_see_every_item():
    s = Spill(range(7), batch=2)
    pairs = list(zip(s, s, strict=True))
    assert pairs == [(i, i) for i in range(7)]


def test_appending_after_reading_extends_the_sequence():
    s = Spill(range(4), batch=2)
    assert list(s) == [0, 1, 2, 3]
    s.append(4)
    s.extend([5, 6])
    assert list(s) == list(range(7))
    assert len(s) == 7


def test_a_small_spill_writes_no_file_and_close_empties_it():
    s = Spill(range(3), batch=10)
    assert s._file is None
    assert list(s) == [0, 1, 2]
    big = Spill(range(30), batch=10)
    assert big._file is not None
    big.close()
    assert len(big) == 0 and list(big) == [] and not big


def test_keyed_values_change_in_place_and_come_back_in_key_order():
    k = Keyed(cache=2)
    for key in (5, 1, 9, 3):
        k.add(key, {"key": key, "seen": 0})
    assert k.get(7) is None
    for key in (5, 1, 9, 3, 5):
        k.get(key)["seen"] += 1  # values got are kept and written back
    assert len(k) == 4
    assert list(k) == [
        {"key": 1, "seen": 1},
        {"key": 3, "seen": 1},
        {"key": 5, "seen": 2},
        {"key": 9, "seen": 1},
    ]
    k.close()
    assert len(k) == 0 and list(k) == []


def test_keyed_values_of_some_keys_come_in_key_order_from_memory_and_the_database():
    k = Keyed(cache=3)
    for key in range(1, 1200):
        k.add(key, key * 10)
    assert k.get(4) == 40  # back in memory
    wanted = [2, 4, 600, 1198, 1199]
    assert list(k.values_of(iter(wanted), len(wanted))) == [20, 40, 6000, 11980, 11990]
    assert list(k.values_of(range(1, 1200), 1199)) == list(k)
    assert list(k.values_of([], 0)) == []
    small = Keyed()
    small.add(3, "c")
    small.add(1, "a")
    small.add(2, "b")
    assert list(small.values_of([1, 3], 2)) == ["a", "c"]


@pytest.mark.parametrize(("make", "why"), [(None, "no such folder"), ("file", "not a folder")])
def test_a_tmpdir_that_is_no_folder_is_a_clear_error(monkeypatch, tmp_path, make, why):
    given = tmp_path / "tmp"
    if make == "file":
        given.write_text("x")
    monkeypatch.setenv("TMPDIR", str(given))
    expected = f"cannot write a temporary file in {given}: {why}; set TMPDIR to a writable"
    with pytest.raises(SpillError, match=expected):
        Spill(range(3), batch=1)  # not written elsewhere instead
    keyed = Keyed(cache=1)
    keyed.add(1, "a")
    with pytest.raises(SpillError, match=expected):
        keyed.add(2, "b")  # the first value goes to the database


def test_temporary_files_are_gone_while_still_in_use(monkeypatch, tmp_path):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    s = Spill(range(10), batch=2)
    k = Keyed(cache=1)
    for i in range(5):
        k.add(i, str(i))
    assert list(s) == list(range(10)) and list(k) == [str(i) for i in range(5)]
    assert list(tmp_path.iterdir()) == []


def test_large_items_are_written_before_the_batch_is_full(monkeypatch):
    from brainmigrate import spill

    monkeypatch.setattr(spill, "BATCH_BYTES", 100)
    s = Spill(batch=1000)
    s.append("x" * 60, size=60)
    assert s._file is None  # under the byte budget: still in memory
    s.append("y" * 60, size=60)
    assert s._file is not None and s._buffer == []
    assert list(s) == ["x" * 60, "y" * 60]
