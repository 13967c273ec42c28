"""Per-module kill rate of the last ``mutmut run`` (see scripts/mutation.sh, docs/mutation.md).

Reads ``mutmut results --all true`` (one ``module.x_function__mutmut_N: status`` line per
mutant) and prints, per module, the mutants, those killed (a test failed or timed out) and
the survivors by name; ``mutmut show NAME`` prints a survivor's diff.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

#: ``tokstudy.metrics.x_f95__mutmut_3`` or ``tokstudy.report.cost.xǁCostSourceǁread__mutmut_1``
RESULT = re.compile(r"^\s*(?P<name>(?P<module>[\w.]+?)\.x[_ǁ]\S+__mutmut_\d+): (?P<status>.+)$")
KILLED = {"killed", "timeout"}


def main() -> int:
    """Print the summary; exit status 1 when mutmut has no results."""
    listing = subprocess.run(
        [sys.executable, "-m", "mutmut", "results", "--all", "true"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    by_module: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for line in listing.splitlines():
        match = RESULT.match(line)
        if match:
            by_module[match["module"]].append((match["name"], match["status"].strip()))
    if not by_module:
        print("no mutmut results: run scripts/mutation.sh first", file=sys.stderr)
        return 1
    print(f"{'module':<34} {'mutants':>7} {'killed':>7} {'rate':>7}")
    for module in sorted(by_module):
        results = by_module[module]
        killed = sum(status in KILLED for _, status in results)
        print(f"{module:<34} {len(results):>7} {killed:>7} {killed / len(results):>7.1%}")
    for module in sorted(by_module):
        for name, status in sorted(by_module[module]):
            if status not in KILLED:
                print(f"  {status:<10} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
