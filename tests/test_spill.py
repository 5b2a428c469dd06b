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


def test_sorted_spill_sorts_in_runs_and_keeps_equal_items_in_order(monkeypatch):
    """An external merge sort: runs of ``SORT_RUN`` items sorted and merged; equal keys
    keep their order across runs (a stable sort, as ``list.sort``)."""
    from brainmigrate import spill

    monkeypatch.setattr(spill, "SORT_RUN", 4)
    items = [(k, i) for i, k in enumerate([3, 1, 2, 1, 3, 0, 1, 2, 0, 3, 1])]
    out = spill.sorted_spill(Spill(items, batch=2), key=lambda t: t[0])
    assert list(out) == sorted(items, key=lambda t: t[0])
    assert len(out) == len(items)


def test_sorted_spill_returns_items_in_order_as_they_are():
    from brainmigrate.spill import sorted_spill

    s = Spill([(0, "b"), (1, "a"), (1, "c")], batch=2)
    assert sorted_spill(s, key=lambda t: t[0]) is s
    assert list(sorted_spill(Spill(), key=lambda t: t)) == []


def test_a_sorter_gives_a_stable_sort_of_items_nearly_in_order(monkeypatch):
    """Items kept in order are written once and not sorted; late ones are sorted and
    merged in; equal keys come in the order appended, as ``sorted`` gives them."""
    import random

    from brainmigrate import spill
    from brainmigrate.spill import Sorter

    monkeypatch.setattr(spill, "SORT_RUN", 4)
    key = lambda t: t[0]  # noqa: E731
    rng = random.Random(5)
    for n in (0, 1, 7, 40):
        for shape in ("in order", "nearly", "reversed", "random"):
            keys = sorted(rng.randrange(6) for _ in range(n))
            if shape == "nearly":  # a few items each a little early or late
                for _ in range(n // 4):
                    i = rng.randrange(max(n - 2, 1))
                    keys[i : i + 2] = keys[i : i + 2][::-1]
            elif shape == "reversed":
                keys.reverse()
            elif shape == "random":
                rng.shuffle(keys)
            items = [(k, i) for i, k in enumerate(keys)]
            sorter = Sorter(key, items[:2])
            sorter.extend(items[2:])
            assert len(sorter) == n and bool(sorter) == (n > 0)
            out = sorter.sorted()
            assert list(out) == sorted(items, key=key), (n, shape)
            assert list(out) == sorted(items, key=key)  # read again
            assert len(out) == n
            if shape == "in order":
                assert isinstance(out, Spill)  # nothing late: the items as written
            out.close()
            assert len(sorter) == 0


def test_merged_spills_read_as_one_stable_sort_of_them_all():
    from brainmigrate.spill import Merged

    key = lambda t: t[0]  # noqa: E731
    a = Spill([(0, "a0"), (2, "a2"), (2, "a2'")], batch=2)
    b = Spill([(1, "b1"), (2, "b2")], batch=1)
    c = Spill([(0, "c0"), (3, "c3")])
    merged = Merged([a, b, c], key)
    want = sorted([*a, *b, *c], key=key)
    assert list(merged) == want and list(merged) == want  # read twice
    assert list(zip(merged, merged, strict=True)) == list(zip(want, want, strict=True))
    assert len(merged) == 7 and merged
    merged.close()
    assert len(a) == len(b) == len(c) == 0 and not merged


def test_an_imports_warnings_are_spilled_so_its_memory_stays_flat(tmp_path):
    """Every warning goes to a temporary file as the facts do: an import of 20,000 facts
    with an undated comment each (BM301) peaks no higher than 40 bytes a warning above the
    same facts without (it held about 110 bytes each), and the warnings come back in
    order."""
    import tracemalloc

    from brainmigrate import importer
    from brainmigrate.read.run import ImportOptions

    n = 20_000
    plain, warned = tmp_path / "plain.md", tmp_path / "warned.md"
    plain.write_text("".join(f"+ fact number {i} about the cache\n" for i in range(n)))
    warned.write_text(
        "".join(f"+ fact number {i} about the cache <!-- note -->\n" for i in range(n))
    )

    def peak(notes):
        tracemalloc.start()
        result = importer.import_notes([notes], ImportOptions(), tmp_path / "no.db", dry_run=True)
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top, result

    without, _ = peak(plain)
    with_them, result = peak(warned)
    assert (with_them - without) / n < 40, (with_them - without) / n
    assert [(w.line, w.code) for w in result.warnings] == [(i + 1, "BM301") for i in range(n)]
