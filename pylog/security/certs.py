"""A throwaway certificate authority for tests, benchmarks and `scripts/quickstart secure` (openssl CLI).

Everything is generated locally (nothing downloaded): a CA, then PEM keystores (private key followed
by the certificate, as ssl.keystore.type=PEM expects) signed by it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LocalCA", "Keystore"]


def _openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {args[0]} failed: {r.stderr.strip()}")


@dataclass(frozen=True)
class Keystore:
    """A PEM keystore (key + certificate) and the certificate alone."""

    path: Path
    cert: Path


class LocalCA:
    """A CA in `directory`: ca.pem (trust this) and ca.key."""

    def __init__(self, directory: str | Path, name: str = "pylog-test-ca") -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.cert, self.key = self.dir / "ca.pem", self.dir / "ca.key"
        if not self.cert.exists():
            _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
                     "-days", "30", "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=self.dir)

    def issue(self, name: str, subject: str, sans: tuple[str, ...] = ("IP:127.0.0.1", "DNS:localhost"),
              days: int = 30, not_before_days_ago: int = 0, key_password: str | None = None) -> Keystore:
        """Sign a certificate for `subject` (e.g. '/CN=broker'); a negative `days` gives an expired one."""
        d = self.dir
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", subject, cwd=d)
        ext = d / f"{name}.ext"
        ext.write_text(f"subjectAltName={','.join(sans)}\nextendedKeyUsage=serverAuth,clientAuth\n")
        if days > 0 and not not_before_days_ago:
            _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                     "-out", f"{name}.crt", "-days", str(days), "-extfile", ext.name, cwd=d)
        else:  # an expired certificate: signed with explicit validity dates in the past (openssl ca)
            self._sign_dated(name, ext, not_before_days_ago or 10, days)
        key = (d / f"{name}.key").read_text()
        if key_password is not None:
            _openssl("pkey", "-in", f"{name}.key", "-out", f"{name}.enc.key", "-aes256", "-passout",
                     f"pass:{key_password}", cwd=d)
            key = (d / f"{name}.enc.key").read_text()
        keystore = d / f"{name}.keystore.pem"
        keystore.write_text(key + (d / f"{name}.crt").read_text())
        return Keystore(keystore, d / f"{name}.crt")

    def _sign_dated(self, name: str, ext: Path, start_days_ago: int, days: int) -> None:
        d = self.dir
        (d / "index.txt").touch()
        (d / "serial").write_text("1000\n") if not (d / "serial").exists() else None
        conf = d / "ca.cnf"
        conf.write_text("[ca]\ndefault_ca=c\n[c]\ndatabase=index.txt\nserial=serial\nnew_certs_dir=.\n"
                        "default_md=sha256\npolicy=p\nunique_subject=no\n[p]\ncommonName=supplied\n")
        import datetime as dt
        now = dt.datetime.now(dt.timezone.utc)
        start = (now - dt.timedelta(days=start_days_ago)).strftime("%Y%m%d%H%M%SZ")
        end = (now - dt.timedelta(days=start_days_ago) + dt.timedelta(days=days if days > 0 else 1)).strftime(
            "%Y%m%d%H%M%SZ")
        _openssl("ca", "-batch", "-config", conf.name, "-cert", "ca.pem", "-keyfile", "ca.key", "-in",
                 f"{name}.csr", "-out", f"{name}.crt", "-startdate", start, "-enddate", end, "-extfile", ext.name,
                 "-notext", cwd=d)
