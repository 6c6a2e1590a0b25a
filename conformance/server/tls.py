"""A throwaway CA (trustme) and a server certificate for the loopback names, written as PEM files."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

import trustme

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class CertFiles:
    ca_path: str
    cert_path: str  # server certificate chain
    key_path: str


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def make_certs(directory: str, host: str = "127.0.0.1", ca_path: str | None = None) -> CertFiles:
    names = list(LOOPBACK_NAMES)
    if host and host not in names and not _is_wildcard(host):
        names.append(host)
    ca = trustme.CA(key_type=trustme.KeyType.ECDSA, organization_name="Conformance reference server CA")
    cert = ca.issue_cert(*names, key_type=trustme.KeyType.ECDSA)
    os.makedirs(directory, exist_ok=True)
    ca_file = ca_path or os.path.join(directory, "ca.pem")
    cert_file = os.path.join(directory, "server.pem")
    key_file = os.path.join(directory, "server.key")
    ca.cert_pem.write_to_path(ca_file)
    cert.private_key_pem.write_to_path(key_file)
    with open(cert_file, "wb") as fh:
        for blob in cert.cert_chain_pems:
            fh.write(blob.bytes())
    os.chmod(key_file, 0o600)
    return CertFiles(ca_file, cert_file, key_file)
