"""Apply ledger migrations in order; stops at the first failure."""

import subprocess
import sys
from pathlib import Path


class MigrationRunner:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def pending(self) -> list[Path]:
        return sorted(self.folder.glob("*.sql"))

    def run(self) -> int:
        for script in self.pending():
            done = subprocess.run(["psql", "-f", str(script)], check=False)
            if done.returncode:
                return done.returncode
        return 0


if __name__ == "__main__":
    sys.exit(MigrationRunner(Path(sys.argv[1])).run())
