"""The local stack's certificate authority: made once, trusted by every local client.

Every embedded store answers over TLS only (``local/stack/tls_front.py``), with a certificate
for ``localhost`` and ``127.0.0.1`` signed by a CA made here on first use and kept in
``.local/tls``. Clients verify it as the functions verify AWS's: through the platform's trust
store, so the production code needs no option of its own to trust it. Locally that store is
OpenSSL's own two variables, read by every ``ssl.create_default_context()``: ``SSL_CERT_FILE``
names this CA alone and ``SSL_CERT_DIR`` the system's hashed CA folder, so a client that also
talks to the internet keeps working. Not one bundle file of both: OpenSSL 3 parses a bundle
whole for every new context (about 30 ms for the system's 145 CAs, and redis-py makes a context
per connection), a folder only the certificate a handshake looks up.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / ".local" / "tls"
CA_DAYS = 3650
TRUST_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")  # what OpenSSL's clients read their CAs from
SERVER_DAYS = 825  # the longest a server certificate may live for clients that follow the CA/B rules
RENEW_BEFORE = datetime.timedelta(days=30)


@dataclass(frozen=True)
class Certificates:
    """Where the CA and the servers' certificate and key are."""

    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def cert(self) -> Path:
        return self.folder / "server.pem"

    @property
    def key(self) -> Path:
        return self.folder / "server-key.pem"

    @property
    def client_environment(self) -> dict[str, str]:
        """What a process needs to trust the local stores, and still the system's CAs."""
        return dict(zip(TRUST_VARIABLES, (str(self.ca), ssl.get_default_verify_paths().openssl_capath), strict=True))


def certificates(folder: Path = FOLDER) -> Certificates:
    """The stack's certificates in ``folder``, made now if missing or about to expire.

    Made in a folder of their own and renamed into place whole, so that processes starting at
    the same time end with one complete set.
    """
    found = Certificates(folder)
    if _valid(found):
        return found
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tls-", dir=folder.parent))
    _make(Certificates(staging))
    if folder.exists() and not _valid(found):
        shutil.rmtree(folder, ignore_errors=True)
    try:
        staging.rename(folder)
    except OSError:  # another process put a set in place first
        shutil.rmtree(staging, ignore_errors=True)
    return found


def _valid(found: Certificates) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(found.cert.read_bytes())
        ok = found.ca.exists() and found.key.exists()
    except (OSError, ValueError):
        return False
    return ok and cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC) > RENEW_BEFORE


def _make(target: Certificates) -> None:
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "coupon-system local stack CA")])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key(), now, CA_DAYS)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = (
        _builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]), ca_name, key.public_key(), now,
                 SERVER_DAYS)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    pem = serialization.Encoding.PEM
    target.ca.write_bytes(ca.public_bytes(pem))
    target.cert.write_bytes(server.public_bytes(pem))
    target.key.touch(mode=0o600)
    target.key.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    os.chmod(target.folder, 0o755)  # PostgreSQL's system user reads nothing here; the fronts run as us


def _builder(
    subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey, now: datetime.datetime, days: int
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
    )


def proxy_ends() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """The TLS of a fault proxy in front of a local store (``local.testkit.fault_proxy``): as the
    server, the stack's certificate; as the store's client, verified against the stack's CA."""
    found = certificates()
    as_server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    as_server.load_cert_chain(found.cert, found.key)
    return as_server, ssl.create_default_context(cafile=found.ca)
