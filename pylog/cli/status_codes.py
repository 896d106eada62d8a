"""Exit codes of every pylog command, in one place (pip's status_codes.py).

Kafka's tools exit 1 for everything; we keep 1 for a failed operation and give usage mistakes
their own code (click's), so a script can tell "you called it wrong" from "the cluster said no".
"""

SUCCESS = 0
ERROR = 1  # the operation failed (cluster refused, partial failure, unreachable, bad input file)
USAGE_ERROR = 2  # bad or conflicting options; nothing was attempted (click.UsageError's code)
