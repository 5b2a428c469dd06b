"""The temporary-file sequence a run keeps what it read in."""

from __future__ import annotations

from brainmigrate.spill import Spill


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
