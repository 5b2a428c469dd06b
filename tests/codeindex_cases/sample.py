"""A module docstring."""

import dataclasses

LIMIT = 10


@dataclasses.dataclass
class Account:
    """An account."""

    owner = "nobody"

    def deposit(self, amount):
        total = amount + 1
        return total

    class Ledger:
        def post(self):
            pass


def top_level(x):
    def inner():
        return x

    return inner
