"""Which addresses the web tools may reach: no private, loopback or link-local ones by default.

``web_extract`` and the browser tools act on URLs a model chose, often read off a web page,
so each URL is judged by the addresses its host *resolves to* (a public name may point at
``127.0.0.1``), and :func:`~hermes_hooks.backends.web_search.fetch.fetch_url` judges again at
connect time, for every redirect, and dials only the address it judged (no DNS rebinding).

Refused unless allowed: private (RFC 1918, ``fc00::/7``), loopback, link-local, carrier-grade
NAT (``100.64.0.0/10``), reserved, multicast and unspecified addresses. ``config.yaml``
allows some or all of them::

    security:
      private_url_allowlist: [127.0.0.1, 192.168.1.0/24, nas.local]   # addresses, networks, hosts
      allow_private_urls: false        # Hermes' switch: true allows every private address

``HERMES_ALLOW_PRIVATE_URLS=1`` (or ``0``) overrides ``allow_private_urls``, as in Hermes. The
cloud metadata endpoints (``169.254.169.254`` and its kin, ``metadata.google.internal``) are
refused always, whatever is allowed.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import attrs

from hermes_hooks.errors import ConfigError, HermesHooksError
from hermes_hooks.plugins.config import config_path, load_config
from hermes_hooks.plugins.settings import read_section

__all__ = [
    "ALLOW_ENV",
    "UrlBlockedError",
    "UrlPolicy",
    "check_url",
]

ALLOW_ENV: Final = "HERMES_ALLOW_PRIVATE_URLS"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_METADATA_IPS: Final = frozenset(
    ipaddress.ip_address(ip)
    for ip in ("169.254.169.254", "169.254.170.2", "169.254.169.253", "100.100.100.200")
) | {ipaddress.ip_address("fd00:ec2::254")}
_METADATA_HOSTS: Final = frozenset({"metadata.google.internal", "metadata.goog"})
_CGNAT: Final = ipaddress.ip_network("100.64.0.0/10")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


class UrlBlockedError(HermesHooksError):
    """A URL's host is, or resolves to, an address the policy refuses."""


def _plain(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _is_internal(ip: IPAddress) -> bool:
    ip = _plain(ip)
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
        or (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT)
    )


@attrs.frozen
class UrlPolicy:
    """What may be reached: see the module's docstring.

    :param allow_private: every private address is allowed (the metadata endpoints aside).
    :param networks: addresses and networks allowed although private.
    :param hosts: host names allowed whatever they resolve to (lower case).
    """

    allow_private: bool = False
    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, config: Mapping[str, Any], source: Path | None = None) -> UrlPolicy:
        """Read the ``security`` section (and ``$HERMES_ALLOW_PRIVATE_URLS``).

        :raises ConfigError: the section or a field has the wrong type, or an entry is
            neither an address, a network nor a host name.
        """
        values, _ = read_section(config, "security", source=source)
        where = f"{source if source is not None else 'config'}: "
        allow: bool = values["allow_private_urls"]
        env = os.environ.get(ALLOW_ENV, "").strip().lower()
        if env in _TRUE:
            allow = True
        elif env in _FALSE:
            allow = False
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for number, entry in enumerate(values["private_url_allowlist"], 1):
            if not entry.strip():  # the table checked that each entry is a string
                raise ConfigError(
                    f"{where}security.private_url_allowlist item {number} must be an address, "
                    f"a network or a host name, found {entry!r}"
                )
            text = entry.strip().lower()
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                if "/" in text or " " in text:
                    raise ConfigError(
                        f"{where}security.private_url_allowlist item {number} {entry!r} is "
                        f"neither an address, a network (10.0.0.0/8) nor a host name"
                    ) from None
                hosts.add(text.rstrip("."))
        return cls(allow_private=allow, networks=tuple(networks), hosts=frozenset(hosts))

    @classmethod
    def from_home(cls, home: Path) -> UrlPolicy:
        """Read the policy of ``home``'s ``config.yaml``."""
        return cls.from_config(load_config(home), config_path(home))

    def refusal(self, host: str, ip: IPAddress) -> str | None:
        """Return why ``host`` at ``ip`` may not be reached, or ``None`` when it may."""
        plain = _plain(ip)
        if plain in _METADATA_IPS or ip in _METADATA_IPS:
            return f"{ip} is a cloud metadata endpoint, which is never reached"
        if not _is_internal(ip):
            return None
        if self.allow_private or host in self.hosts:
            return None
        if any(plain in net or ip in net for net in self.networks):
            return None
        what = f"{host} is {ip}," if host.strip("[]") != str(ip) else f"{ip} is"
        return (
            f"{what} a private, loopback or link-local address; allow it with "
            f"security.private_url_allowlist in config.yaml"
        )

    def resolve(self, host: str, port: int) -> list[str]:
        """Return the addresses of ``host`` to dial, every one of them allowed.

        :raises UrlBlockedError: the host cannot be resolved, or one of its addresses is
            refused (one refused address refuses the host: which one a client dials is not
            ours to choose).
        """
        name = host.strip("[]").lower().rstrip(".")
        if name in _METADATA_HOSTS:
            raise UrlBlockedError(f"{host} is a cloud metadata endpoint, which is never reached")
        try:
            literal: IPAddress | None = ipaddress.ip_address(name.split("%", 1)[0])
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [literal]
        else:
            try:
                infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
            except (socket.gaierror, UnicodeError) as exc:
                raise UrlBlockedError(f"cannot resolve host {host!r}: {exc}") from exc
            addresses = []
            for info in infos:
                try:
                    found = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
                except ValueError:
                    continue
                if found not in addresses:
                    addresses.append(found)
            if not addresses:
                raise UrlBlockedError(f"host {host!r} resolves to no usable address")
        for ip in addresses:
            reason = self.refusal(name, ip)
            if reason is not None:
                raise UrlBlockedError(f"Blocked: {reason}")
        return [str(ip) for ip in addresses]


def split_url(url: str) -> tuple[str, str, int]:
    """Return ``(scheme, host, port)`` of an ``http(s)`` URL.

    :raises UrlBlockedError: another scheme, or no host.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UrlBlockedError(f"not a valid URL: {url!r} ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"}:
        raise UrlBlockedError(f"only http and https URLs are fetched, found {url!r}")
    if not parts.hostname:
        raise UrlBlockedError(f"URL {url!r} has no host")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80)


def check_url(url: str, policy: UrlPolicy) -> str | None:
    """Return why ``url`` may not be reached under ``policy``, or ``None`` when it may."""
    try:
        _, host, port = split_url(url)
        policy.resolve(host, port)
    except UrlBlockedError as exc:
        return str(exc)
    return None


def hosts_of(urls: Sequence[str]) -> list[str]:
    """Return the hosts of ``urls`` (for messages), skipping what does not parse."""
    found = []
    for url in urls:
        try:
            found.append(split_url(url)[1])
        except UrlBlockedError:
            continue
    return found
