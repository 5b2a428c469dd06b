"""Generate a realistic synthetic corpus of brain-notation notes files.

Every line class of SPEC.md §Notation appears: facts with every marker (some bulleted, some
with `!P3`), continuations, trailers (valid, offset, undated), task ids and deny-listed
prefixes, cited paths (found in the sample checkout, gone, outside, URLs), CamelCase
names, `@`/`%` lines with indented lines under them, headings, fences, HTML comments,
orphans, prose and blank lines; about 10% of facts repeat an earlier one (reworded,
inflected or identical).

With ``--cite TREE`` the cited paths are files of that tree instead (say, a venv's
site-packages, passed as ``--root``): 200 of its ``*.py`` files found, and gone paths in
its top folders; the corpus is otherwise made the same way.

    python bench/corpus.py OUT_DIR [--lines 200000] [--files 100] [--seed 1] [--cite TREE]
"""

from __future__ import annotations

import argparse
import os
import random
from pathlib import Path

WORDS = (
    "cache retries webhook ledger charge refund queue worker timeout build image compose "
    "migration schema index token session login payment gateway processor handler event "
    "deploy release branch commit review flaky test sandbox staging metrics alert budget "
    "latency throughput backoff jitter lock transaction rollback replica shard partition"
).split()
PATHS_FOUND = [
    "src/main/kotlin/com/example/payments/PaymentGateway.kt",
    "src/main/kotlin/com/example/payments/WebhookHandler.kt",
    "src/main/kotlin/com/example/ledger/LedgerRepository.kt",
    "docker/Dockerfile",
    "docker/compose.yaml",
    "scripts/migrate.py",
]
PATHS_GONE = ["src/main/kotlin/com/example/payments/ChargeService.kt", "docker/certs/dev.pem"]
NAMES = ["PaymentGateway", "LedgerRepository", "WebhookHandler", "MigrationRunner", "RetryPolicy"]
MARKERS = ["+", "+", "+", "!", "~", "=", "?", ">", "->", "x"]


def vocabulary(rng: random.Random, size: int = 4000) -> tuple[list[str], list[float]]:
    """Common words plus pseudo-words, with Zipf weights (cumulative), as notes have."""
    syllables = "ka lo mi re tu ven sor dal pin gre fo nu bas tek lim orn quo zel".split()
    words = list(WORDS)
    while len(words) < size:
        w = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3)))
        if w not in words:
            words.append(w)
    total, cum = 0.0, []
    for rank in range(1, len(words) + 1):
        total += 1 / rank
        cum.append(total)
    return words, cum


VOCAB: tuple[list[str], list[float]] | None = None


def _sentence(
    rng: random.Random, found: list[str] = PATHS_FOUND, gone: list[str] = PATHS_GONE
) -> str:
    global VOCAB
    if VOCAB is None:
        VOCAB = vocabulary(random.Random(0))
    vocab, cum = VOCAB
    words = rng.choices(vocab, cum_weights=cum, k=rng.randint(6, 14))
    r = rng.random()
    if r < 0.25:
        words.insert(rng.randrange(len(words)), rng.choice(found) + f":{rng.randint(1, 300)}")
    elif r < 0.30:
        words.insert(rng.randrange(len(words)), rng.choice(gone))
    elif r < 0.32:
        words.append("https://example.com/docs/page.html")
    if rng.random() < 0.2:
        words.insert(rng.randrange(len(words)), rng.choice(NAMES))
    if rng.random() < 0.5:
        words.append(f"TER-{rng.randint(1, 900)}")
    if rng.random() < 0.05:
        words.append("SHA-256")
    if rng.random() < 0.2:
        words.append(str(rng.randint(1, 5000)))
    return " ".join(words)


def trailer(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:
        return (
            f" <!-- 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} "
            f"run-{rng.randint(1, 40)} -->"
        )
    if r < 0.65:
        return " <!-- 2026-09-23T13:16+02:00 nightly -->"
    if r < 0.68:
        return " <!-- reviewed -->"
    return ""


def tree_paths(tree: Path, seed: int = 1, count: int = 200) -> tuple[list[str], list[str]]:
    """``count`` ``*.py`` files of ``tree`` (relative, POSIX), and as many paths that are gone
    (a file name no file has, in a folder of the tree), both picked with ``seed``."""
    files = []
    for folder, dirs, names in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        rel = Path(folder).relative_to(tree).as_posix()
        files += [n if rel == "." else f"{rel}/{n}" for n in sorted(names) if n.endswith(".py")]
    if not files:
        raise SystemExit(f"{tree}: no *.py files to cite")
    rng = random.Random(seed)
    found = rng.sample(files, min(count, len(files)))
    gone = [f.rsplit("/", 1)[0] + "/removed_module.py" if "/" in f else "removed.py" for f in found]
    return found, gone


def generate(
    out: Path, lines: int = 200_000, files: int = 100, seed: int = 1, cite: Path | None = None
) -> list[Path]:
    """Write ``files`` notes files holding ``lines`` lines in all under ``out``; with
    ``cite``, citing files of that tree (``tree_paths``)."""
    found, gone = tree_paths(cite, seed) if cite is not None else (PATHS_FOUND, PATHS_GONE)

    def sentence(rng: random.Random) -> str:
        return _sentence(rng, found, gone)

    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    per_file = max(1, lines // files)
    written = []
    for i in range(files):
        facts: list[str] = []
        buf: list[str] = [f"# Notes {i}", ""]
        while len(buf) < per_file:
            r = rng.random()
            if r < 0.62:
                if facts and rng.random() < 0.10:
                    text = rng.choice(facts)
                    if rng.random() < 0.5:
                        text = text.replace("retries", "retried").replace("cache", "caches")
                else:
                    text = sentence(rng)
                    facts.append(text)
                marker = rng.choice(MARKERS)
                bullet = "- " if rng.random() < 0.1 else ""
                if marker == "!" and rng.random() < 0.2:
                    buf.append(f"{bullet}!P{rng.randint(0, 4)} {text}{trailer(rng)}")
                else:
                    buf.append(f"{bullet}{marker} {text}{trailer(rng)}")
                for _ in range(rng.choice([0, 0, 0, 0, 1, 1, 2])):
                    buf.append("  " + sentence(rng))
            elif r < 0.70:
                buf.append("")
            elif r < 0.76:
                buf.append(f"{rng.choice('@%')} TER-{rng.randint(1, 900)} {sentence(rng)}")
                if rng.random() < 0.3:
                    buf.append("  " + sentence(rng))
            elif r < 0.80:
                buf.append(f"## {rng.choice(WORDS).title()}")
            elif r < 0.83:
                buf += ["```kotlin", "+ val x = 1", "", "fun y() = 2", "```"]
            elif r < 0.85:
                buf += ["<!-- review notes", "  " + sentence(rng), "-->"]
            elif r < 0.87:
                buf.append("   orphan " + sentence(rng))
            elif r < 0.90:
                buf.append(rng.choice(["xterm output", "=> see above", "- [x] done", "-->"]))
            else:
                buf.append("Plain prose " + sentence(rng))
        f = out / f"notes-{i:04d}.md"
        f.write_text("\n".join(buf[:per_file]) + "\n", encoding="utf-8")
        written.append(f)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cite", type=Path, help="cite files of this tree (pass it as --root)")
    a = ap.parse_args()
    files = generate(a.out, a.lines, a.files, a.seed, a.cite)
    print(f"wrote {len(files)} files, {a.lines} lines, under {a.out}")


if __name__ == "__main__":
    main()
