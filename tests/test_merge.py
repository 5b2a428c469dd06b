"""The repeat rule (SPEC.md §Merge): stems, numbers, the exact index against brute force."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainmigrate.merge.index import Key, MergeIndex, qualifies, similarity
from brainmigrate.merge.rule import Repeats, Stems, humps, numbers
from brainmigrate.model import ParsedFact


def test_words_split_at_humps_and_digit_edges_and_are_stemmed():
    stems = Stems()
    assert stems("HTTPAdapter retries parseJSONBody v2beta") == frozenset(
        {"http", "adapt", "retri", "pars", "json", "bodi", "v", "beta"}
    )
    assert stems("retries retried retry") == frozenset({"retri"})
    assert stems("") == frozenset()


def test_humps():
    assert humps("parseHTTPResponse") == ["parse", "HTTP", "Response"]
    assert humps("PaymentGateway") == ["Payment", "Gateway"]
    assert humps("ÉcoleNormale") == ["École", "Normale"]
    assert humps("lower") == ["lower"]


def test_numbers_compare_as_strings():
    assert numbers("a 001 b 1 c1.5") == frozenset({"001", "1", "5"})


def test_threshold_is_exact_in_integers():
    a = frozenset(str(i) for i in range(20))
    b17 = frozenset(str(i) for i in range(17)) | {"x", "y", "z"}  # 17/23 < 0.85
    b = a - {"0", "1", "2"}  # 17/20 = 0.85 exactly
    assert qualifies(a, b) and similarity(a, b) == 0.85
    assert not qualifies(a, b17)
    assert qualifies(frozenset(), frozenset())
    assert not qualifies(frozenset(), frozenset({"a"}))


def brute_best(entries, key, stems):
    best = None
    for seq, (k, s) in entries.items():
        if k != key or not qualifies(stems, s):
            continue
        sim = similarity(stems, s)
        if best is None or sim > best[1] or (sim == best[1] and seq < best[0]):
            best = (seq, sim)
    return best


def merged_step(index, entries: dict, seq: int, key, stems) -> None:
    """One fact through ``index`` and through ``brute_best`` over ``entries``: the same
    best match (or none), then replaced or added in both."""
    got = index.best(key, stems)
    want = brute_best(entries, key, stems)
    assert (got[0], round(got[1], 9)) == (want[0], round(want[1], 9)) if want else got is None
    if got:
        index.replace(got[0], key, stems)
        entries[got[0]] = (key, stems)
    else:
        index.add(seq, key, stems)
        entries[seq] = (key, stems)


sets = st.frozensets(st.sampled_from("abcdefghijklmnop"), max_size=9)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["s1", "s2"]), sets), min_size=1, max_size=40),
    st.sampled_from([0, 3, 1000]),
)
def test_index_finds_exactly_what_brute_force_finds(items, postings_from):
    # postings_from 0 and 3: blocks get prefix postings at once or midway; 1000: scanned
    df = MergeIndex.frequencies(s for _, s in items)
    index = MergeIndex(df, postings_from=postings_from)
    entries = {}
    for seq, (scope, stems) in enumerate(items):
        key = Key(scope, frozenset(), frozenset())
        merged_step(index, entries, seq, key, stems)


@pytest.mark.parametrize("digests", [1, 3, 4096])
def test_index_over_many_blocks_finds_what_brute_force_finds(digests, monkeypatch):
    """Block keys' digests kept a few at a time (forgotten and made again) and the ranks
    of a stem set made once for ``best`` then ``add``: the answers stay exact."""
    from brainmigrate.merge import index as merge_index

    monkeypatch.setattr(merge_index, "DIGESTS", digests)
    rng = random.Random(digests)
    words = "abcdefghij"
    index = MergeIndex(postings_from=2)
    entries = {}
    for seq in range(400):
        key = Key(rng.choice("xy"), frozenset(rng.sample("123", rng.randrange(2))), frozenset())
        stems = frozenset(rng.sample(words, rng.randrange(1, 6)))
        if rng.random() < 0.1:
            stems = frozenset({*stems, f"new{seq}"})  # a stem met first now
        merged_step(index, entries, seq, key, stems)
    assert len(index._digests) <= digests


# Sets that share most of their stems (a template with a word or two changed), of sizes
# where the short and the long prefixes differ: the two-prefix index must still find every
# qualifying earlier fact, and the best one.
COMMON = [f"t{i}" for i in range(24)]
RARE = [f"r{i}" for i in range(60)]
templated = st.builds(
    lambda common, rare: frozenset(common) | frozenset(rare),
    st.lists(st.sampled_from(COMMON), min_size=8, max_size=24, unique=True),
    st.lists(st.sampled_from(RARE), max_size=4, unique=True),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(templated, min_size=1, max_size=60), st.sampled_from([0, 5]))
def test_two_prefix_index_is_exact_on_sets_sharing_most_stems(items, postings_from):
    df = MergeIndex.frequencies(items[: len(items) // 2])  # later stems: ranked when met
    index = MergeIndex(df, postings_from=postings_from)
    key = Key("s", frozenset(), frozenset())
    entries = {}
    for seq, stems in enumerate(items):
        merged_step(index, entries, seq, key, stems)


def test_one_template_with_one_word_changed_merges_nothing():
    """Every pair at 11/13 = 0.846: no merge, and no other fact is even a candidate."""
    template = [f"t{i}" for i in range(11)]
    facts = [frozenset([*template, f"u{i}"]) for i in range(3000)]
    probe = frozenset([*template, "new"])  # an import counts every stem it will meet
    index = MergeIndex(MergeIndex.frequencies([*facts, probe]), postings_from=0)
    key = Key("s", frozenset(), frozenset())
    for seq, stems in enumerate(facts):
        assert index.best(key, stems) is None
        index.add(seq, key, stems)
    assert index.best(key, frozenset([*template, "u7"])) == (7, 1.0)
    assert index.best(key, frozenset([*template[1:], "u7"])) == (7, 11 / 12)

    class Counted(list):  # the stored stems, counting the facts verified
        read = 0

        def __getitem__(self, seq):
            Counted.read += 1
            return super().__getitem__(seq)

    index._stems = Counted(index._stems)
    assert index.best(key, probe) is None
    assert index.best(key, frozenset([*template, "u9"])) == (9, 1.0)
    assert Counted.read == 1


def test_numbers_and_tasks_block_merges():
    index = MergeIndex()
    s = frozenset({"retri", "webhook"})
    index.add(1, Key("area:a", frozenset({"3"}), frozenset({"TER-1"})), s)
    assert index.best(Key("area:a", frozenset({"3"}), frozenset({"TER-1"})), s) == (1, 1.0)
    assert index.best(Key("area:a", frozenset({"4"}), frozenset({"TER-1"})), s) is None
    assert index.best(Key("area:a", frozenset({"3"}), frozenset({"TER-2"})), s) is None
    assert index.best(Key("area:b", frozenset({"3"}), frozenset({"TER-1"})), s) is None


def test_most_similar_wins_ties_go_to_the_earliest():
    rng = random.Random(1)
    words = [f"w{i}" for i in range(40)]
    base = frozenset(rng.sample(words, 20))
    near = base - {sorted(base)[0]}  # 19/20
    nearer = base  # 20/20
    index = MergeIndex()
    key = Key("s", frozenset(), frozenset())
    index.add(5, key, near)
    index.add(9, key, nearer)
    index.add(7, key, nearer)
    assert index.best(key, base) == (7, 1.0)


def test_more_than_65536_stems_repack_what_was_indexed():
    index = MergeIndex(postings_from=0)
    key = Key("s", frozenset(), frozenset())
    small = frozenset({"retri", "webhook", "ledger"})
    index.add(1, key, small)
    huge = frozenset(f"w{i}" for i in range(70_000))  # ranks beyond two bytes
    index.add(2, key, huge)
    assert index.best(key, small) == (1, 1.0)
    assert index.best(key, huge) == (2, 1.0)
    assert index.best(key, huge - {"w5"}) == (2, 69_999 / 70_000)
    index.replace(1, key, small | {"charg"})
    assert index.best(key, small | {"charg"}) == (1, 1.0)


def test_remove_takes_a_fact_out_of_its_block_indexed_or_not():
    """A fact whose numbers change (a fixed path ``v1/`` -> ``v2/``) moves to another block:
    ``remove`` then ``add``; small blocks and blocks with postings alike."""
    for size in (1, 3, 40):
        index = MergeIndex(postings_from=8)
        old, new = Key("s", frozenset({"1"}), frozenset()), Key("s", frozenset({"2"}), frozenset())
        for seq in range(size):
            index.add(seq, old, frozenset({f"w{seq}", "common", "words", "here"}))
        stems = frozenset({"w0", "common", "words", "here"})
        assert index.best(old, stems) == (0, 1.0)
        index.remove(0, old)
        assert index.best(old, stems) is None
        index.add(0, new, stems)
        assert index.best(new, stems) == (0, 1.0)
        index.remove(0, old)  # not there any more: nothing happens
        index.remove(7, Key("t", frozenset(), frozenset()))  # no such block


def _line(text: str, line: int, **kw) -> ParsedFact:
    fields = dict(file="n.md", line=line, scope="area:x", kind="decision", marker="~")
    fields.update(text=text, full_text=text, task=None, tasks=frozenset(), run=None)
    fields.update(created=None, status="active")
    fields.update(kw)
    return ParsedFact(**fields)


def test_the_repeat_rule_is_pure_a_repeat_updates_the_fact_it_repeats():
    """``Repeats`` decides and updates without a store (SPEC.md §Merge)."""
    stems, rule = Stems(), Repeats(MergeIndex())

    def parts(fact):
        st, nums = stems(fact.full_text), numbers(fact.full_text)
        return (
            tuple(sorted(st)),
            nums,
            Key(fact.scope, nums, fact.tasks),
            st,
        )

    first = _line(
        "retries use exponential backoff with jitter for the payment client",
        1,
        run="r1",
        created="2026-01-01T00:00:00Z",
    )
    stem_tuple, nums, key, st = parts(first)
    assert rule.which(key, st, None, lambda: None) == (None, None, None)
    rec = rule.new(1, first, stem_tuple, nums, key, st)
    later = _line(
        "retries use exponential backoff with jitter for the payment client!",
        9,
        marker="!",
        kind="blocker",
    )
    stem_tuple, nums, key, st = parts(later)
    fid, sim, edits = rule.which(key, st, None, lambda: None)
    assert (fid, sim, edits) == (1, 1.0, None)
    rule.update(rec, later, stem_tuple, nums, key, st)
    assert (rec.text, rec.kind, rec.marker) == (later.text, "blocker", "!")
    assert (rec.run, rec.created) == ("r1", "2026-01-01T00:00:00Z")  # kept: the line has none
    # a known line is that fact, asked before anything else
    assert rule.which(key, st, 7, lambda: (8, [])) == (7, None, None)
    assert rule.which(key, st, None, lambda: (8, [("a", "b")])) == (8, None, [("a", "b")])
