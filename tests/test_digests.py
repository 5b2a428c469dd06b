"""``brainmigrate.digests`` gives the digests ``hashlib`` gives, without loading OpenSSL."""

import hashlib
import subprocess
import sys

from brainmigrate import digests

SAMPLES = [b"", b"abc", b"x" * 1000, bytes(range(256)) * 9]


def test_blake2b_is_hashlibs():
    for data in SAMPLES:
        for size in (8, 12, 16, 32, 64):
            assert (
                digests.blake2b(data, digest_size=size).digest()
                == hashlib.blake2b(data, digest_size=size).digest()
            )
    h = digests.blake2b(digest_size=16)
    h.update(b"a")
    h.update(b"b")
    assert h.hexdigest() == hashlib.blake2b(b"ab", digest_size=16).hexdigest()


def test_sha256_is_hashlibs():
    for data in SAMPLES:
        assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


def test_check_start_up_leaves_openssl_unloaded():
    # the grammar's cache is warm from the first run on (a cold one imports Lark, which
    # loads hashlib): the second run is what a user's every run is
    code = (
        "import sys, brainmigrate.check, brainmigrate.codeindex, brainmigrate.reports.ci;"
        "print('_hashlib' in sys.modules)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert runs[-1].stdout.strip() == "False"
