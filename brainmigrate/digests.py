"""The hash constructors the start-up path uses, without ``import hashlib``.

``import hashlib`` loads OpenSSL's ``_hashlib`` (about 3 ms, issue 14) even when only
BLAKE2 is wanted. ``blake2b`` is the interpreter's own BLAKE2 module, the very function
``hashlib.blake2b`` is; ``sha256`` is the interpreter's own SHA-256 (``_sha2`` from 3.12,
``_sha256`` before), the same digests as OpenSSL's. An interpreter built without one of
them falls back to ``hashlib``'s.
"""

from __future__ import annotations

import sys

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a build without the module
    from hashlib import blake2b

try:
    if sys.version_info >= (3, 12):
        from _sha2 import sha256
    else:
        from _sha256 import sha256
except ImportError:  # pragma: no cover - a build without the module
    from hashlib import sha256

__all__ = ["blake2b", "sha256"]
