"""Ed25519 signatures of exports: a platform can prove that an export came from this server,
byte for byte (names, times, top-level fields: what the seed cannot prove).

The signature covers the export without its ``signature`` member, serialized canonically: UTF-8
JSON, object keys sorted, no whitespace, non-ASCII characters as themselves (what
``orjson.dumps(doc, option=OPT_SORT_KEYS)`` writes, and Python's ``json.dumps`` with
``sort_keys``, compact separators and ``ensure_ascii=False`` too, for every export: the README
states the form). It is stored in the export as::

    "signature": {"alg": "Ed25519", "key_id": "<16 hex>", "value": "<base64 of 64 bytes>"}

``key_id`` is the first 16 hex digits of the SHA-256 of the raw 32-byte public key. The
server's keys are served at ``GET /v1/replays/keys`` (the current one and the retired ones
still accepted), raw and as PEM.

Keys (:class:`Signer`): ``CARTOUCHE_SIGNING_KEY`` names a PEM file holding the Ed25519 private
key (PKCS#8, ``openssl genpkey -algorithm ed25519``); without it the server generates one key
once and keeps it in the store (``cartouche:signing-key``), shared by every process. Rotation:
set the new key, and list the old public keys (PEM files, or raw keys as base64) in
``CARTOUCHE_SIGNING_RETIRED_KEYS`` (comma separated): they stay served and accepted.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from typing import Any, Callable, Iterable, Mapping, Sequence

import orjson
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (Ed25519PrivateKey,
                                                               Ed25519PublicKey)

from .config import SettingError

log = logging.getLogger("cartouche.signing")

ALG = "Ed25519"
#: The store key of the generated private key (raw 32 bytes) when no key file is configured.
STORED_KEY = "cartouche:signing-key"

_RAW = serialization.Encoding.Raw, serialization.PublicFormat.Raw


def canonical(doc: dict) -> bytes:
    """The bytes signed: ``doc`` without ``signature``, keys sorted, no whitespace."""
    return orjson.dumps({k: v for k, v in doc.items() if k != "signature"},
                        option=orjson.OPT_SORT_KEYS)


def raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(*_RAW)


def key_id(public: Ed25519PublicKey) -> str:
    return hashlib.sha256(raw(public)).hexdigest()[:16]


def public_key(text: str) -> Ed25519PublicKey:
    """An Ed25519 public key from PEM, or from its raw 32 bytes as base64 (or hex)."""
    text = text.strip()
    if text.startswith("-----BEGIN"):
        key = serialization.load_pem_public_key(text.encode())
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return key
    data = bytes.fromhex(text) if len(text) == 64 else base64.b64decode(text, validate=True)
    return Ed25519PublicKey.from_public_bytes(data)


#: The members of an export's ``signature``, every one of them.
SIGNATURE_FIELDS = frozenset({"alg", "key_id", "value"})


def check(doc: dict, keys: Sequence[Ed25519PublicKey]) -> str | None:
    """None when ``doc`` carries a valid signature by one of ``keys``; else why not:
    ``not_signed``, ``unknown_signing_key`` or ``signature_invalid``."""
    sig = doc.get("signature")
    if not isinstance(sig, dict) or sig.get("alg") != ALG:
        return "not_signed"
    by_id = {key_id(k): k for k in keys}
    key = by_id.get(sig.get("key_id"))
    if key is None:
        return "unknown_signing_key"
    value = sig.get("value")
    if set(sig) != SIGNATURE_FIELDS or not isinstance(value, str):
        return "signature_invalid"
    try:
        signed = base64.b64decode(value, validate=True)
        if base64.b64encode(signed).decode() != value:  # one spelling of the bytes: the one
            return "signature_invalid"                   # written (the padding bits zero)
        key.verify(signed, canonical(doc))
    except (InvalidSignature, ValueError):
        return "signature_invalid"
    return None


def describe(public: Ed25519PublicKey, current: bool) -> dict:
    """A key as ``GET /v1/replays/keys`` serves it."""
    pem = public.public_bytes(serialization.Encoding.PEM,
                              serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return {"key_id": key_id(public), "alg": ALG, "current": current,
            "public_key": base64.b64encode(raw(public)).decode(), "pem": pem}


class Signer:
    """The server's signing key (loaded on first use) and the retired public keys it still
    accepts."""

    def __init__(self, load: Callable[[], Ed25519PrivateKey],
                 retired: Iterable[Ed25519PublicKey] = ()) -> None:
        self._load = load
        self._key: Ed25519PrivateKey | None = None
        self.retired = tuple(retired)

    @property
    def key(self) -> Ed25519PrivateKey:
        if self._key is None:
            self._key = self._load()
        return self._key

    def public_keys(self) -> list[Ed25519PublicKey]:
        """The current key first, then the retired ones."""
        return [self.key.public_key(), *self.retired]

    def sign(self, doc: dict) -> dict:
        """``doc`` with its ``signature``."""
        value = self.key.sign(canonical(doc))
        return {**doc, "signature": {"alg": ALG, "key_id": key_id(self.key.public_key()),
                                     "value": base64.b64encode(value).decode()}}

    @classmethod
    def from_env(cls, client: Any, environ: Mapping[str, str] | None = None) -> "Signer":
        """``CARTOUCHE_SIGNING_KEY`` (a PEM file, read now) or the key kept in the store
        ``client`` (read at the first export); ``CARTOUCHE_SIGNING_RETIRED_KEYS``. A key
        that cannot be read stops the start (:func:`settings`)."""
        key, retired = settings(os.environ if environ is None else environ)
        return cls((lambda: key) if key else (lambda: stored_key(client)), retired)


def settings(env: Mapping[str, str]) -> tuple[Ed25519PrivateKey | None,
                                              list[Ed25519PublicKey]]:
    """The private key of ``CARTOUCHE_SIGNING_KEY`` (None: unset) and the public keys of
    ``CARTOUCHE_SIGNING_RETIRED_KEYS``; SettingError, naming the variable and the file or
    the item, for one that cannot be read."""
    path = env.get("CARTOUCHE_SIGNING_KEY")
    key = None
    if path:
        try:
            key = _from_file(path)
        except OSError as exc:
            raise SettingError(f"CARTOUCHE_SIGNING_KEY: cannot read {path}: "
                               f"{exc.strerror or exc}") from None
        except (ValueError, TypeError, UnsupportedAlgorithm):
            raise SettingError(f"CARTOUCHE_SIGNING_KEY: {path} is not a PEM Ed25519 private "
                               "key without a password (openssl genpkey -algorithm ed25519)"
                               ) from None
    items = [item for item in env.get("CARTOUCHE_SIGNING_RETIRED_KEYS", "").split(",")
             if item.strip()]
    retired = []
    for n, item in enumerate(items, 1):
        try:
            retired.append(read_public_key(item))
        except (OSError, ValueError, TypeError, UnsupportedAlgorithm):
            raise SettingError(f"CARTOUCHE_SIGNING_RETIRED_KEYS: item {n} of {len(items)} is "
                               "neither a readable PEM file nor an Ed25519 public key (PEM, "
                               "or its 32 bytes as base64 or hex)") from None
    return key, retired


def read_public_key(item: str) -> Ed25519PublicKey:
    """A public key given as a PEM file's path, or as the key itself (:func:`public_key`)."""
    item = item.strip()
    if os.path.isfile(item):
        with open(item) as fh:
            item = fh.read()
    return public_key(item)


def _from_file(path: str) -> Ed25519PrivateKey:
    with open(path, "rb") as fh:
        key = serialization.load_pem_private_key(fh.read(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path}: not an Ed25519 private key")
    return key


def stored_key(client: Any) -> Ed25519PrivateKey:
    """The private key kept in the store, generated by the first process that asks (read
    first: a store at its memory limit refuses every write, even one that would change
    nothing, and an export must still be signed then)."""
    kept = client.get(STORED_KEY)
    if kept is None:
        fresh = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
            serialization.NoEncryption())
        client.set(STORED_KEY, fresh, nx=True)
        kept = client.get(STORED_KEY)
    return Ed25519PrivateKey.from_private_bytes(kept)


def ensure_stored_key(environ: dict | None = None) -> None:
    """Generate the stored key now unless a key file is configured (at the API's start: a
    store that fills before the first export could not store it then). Best effort: the first
    export generates it otherwise."""
    env = os.environ if environ is None else environ
    url = env.get("EVENTSTORE_URL") or env.get("REDIS_URL")
    if env.get("CARTOUCHE_SIGNING_KEY") or not url:
        return
    from .store import connect

    try:
        stored_key(connect.client(url))
    except Exception:  # noqa: BLE001 - the server starts all the same
        log.warning("could not generate the signing key yet", exc_info=True)
