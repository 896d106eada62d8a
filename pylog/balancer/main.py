"""bin/pylog-cruise-control-start.sh: run the balancer service until SIGTERM or SIGINT."""

from __future__ import annotations

import logging
import signal
import sys
import threading

from pylog.balancer.config import ConfigError, load
from pylog.balancer.load import CapacityError
from pylog.balancer.server import serve, wait_for_execution
from pylog.balancer.service import Balancer

STOP_WAIT_S = 60.0  # a stop lets the moves in flight finish and clears the throttles; bounded


def main(argv: list[str] | None = None) -> int:
    """Load cruisecontrol.properties, serve the REST API, stop cleanly on a signal."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("USAGE: pylog-cruise-control-start.sh [-daemon] cruisecontrol.properties", file=sys.stderr)
        return 1
    try:
        cfg = load(args[0])
    except ConfigError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)")
    logging.getLogger("kafka").setLevel(logging.WARNING)  # the load monitor's consumer logs every connection
    try:
        balancer = Balancer(cfg)
    except CapacityError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    try:
        httpd, _ = serve(balancer)
    except OSError as exc:
        print(f"Error: cannot listen on {cfg['webserver.http.address']}:{cfg['webserver.http.port']}: "
              f"{exc.strerror}", file=sys.stderr)
        return 1
    try:
        balancer.start()
    except Exception as exc:  # the cluster must be reachable to find an execution left in flight
        httpd.shutdown()
        print(f"Error: cannot read the cluster at {cfg['bootstrap.servers']}: {exc}", file=sys.stderr)
        return 1
    host, port = httpd.server_address[:2]
    logging.getLogger("pylog.balancer").info("pylog balancer serving http://%s:%d%s/", host, port, cfg.url_prefix)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    balancer.stop()
    httpd.shutdown()
    if balancer.executor.stop():
        wait_for_execution(balancer, STOP_WAIT_S)
    return 0


if __name__ == "__main__":
    sys.exit(main())
