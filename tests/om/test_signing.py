"""Signed `.om` files: the trailer, keys, and `dfir.load` refusing what trusted keys did not sign.
(tests/om/test_trust_default.py: the own key, the dfir home and `trust="any"`.)"""
from __future__ import annotations

import hashlib
import json
import os
import struct

import numpy as np
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.om_writer import write_bundle, write_om
from dfir.om.keys import (SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, SigningKey, TrustedKeys, key_fingerprint,
                          load_signing_key, load_trusted_keys, signing_key, trusted_keys, write_key_pair)
from dfir.om.schema import (HEADER_OFFSETS, HEADER_SIZE, SIGNATURE_MAGIC, SIGNATURE_OFFSETS,
                            SIGNATURE_TRAILER_SIZE, SIGNED_CONTEXT, PartitionType)
from dfir.om.signature import signed, unsigned, verify_bytes, verify_signature
from dfir.om.trust import own_signing_key
from dfir.om.trust import signing_key as default_signing_key
from dfir.runtime.om import read_om
from crafted_payloads import crafted_om

PLAN = json.dumps({"format": 1, "name": "p", "inputs": [], "outputs": [], "nodes": [], "order": []},
                  sort_keys=True, separators=(",", ":")).encode()
OM = write_om([[(PartitionType.FLOW_MODEL, PLAN), (PartitionType.UDF_PAYLOAD, b"udf" * 40),
                (PartitionType.IR_TEXT, b"builtin.module {}")]], name="p")


@pytest.fixture(autouse=True)
def no_key_env(monkeypatch):
    monkeypatch.delenv(SIGNING_KEY_ENV, raising=False)
    monkeypatch.delenv(TRUSTED_KEYS_ENV, raising=False)


def resealed(data: bytes) -> bytes:
    """The unsigned `.om` `data` with both header digests recomputed, as a writer would."""
    out = bytearray(data)
    checksum = HEADER_OFFSETS["checksum"]
    out[checksum:checksum + 32] = hashlib.sha256(out[HEADER_SIZE:]).digest()
    out[checksum + 32:checksum + 64] = bytes(32)
    out[checksum + 32:checksum + 64] = hashlib.sha256(out[:HEADER_SIZE]).digest()
    return bytes(out)


ANYWAY = 'or load it with trust="any" (or env DFIR_TRUST=any) to run it unchecked'
UNSIGNED_WAYS = f"to run it, have it signed by a key you trust (`dfir trust add KEY.pub.pem` trusts one), {ANYWAY}"
BAD_WAYS = f"to run it, compile it again, {ANYWAY}"


def untrusted_ways(fingerprint: str) -> str:
    return (f"to run it, trust its signer with `dfir trust add KEY.pub.pem` (the public key of {fingerprint}; "
            f"`dfir trust export` prints it where it was signed), {ANYWAY}")


def load_error(source, **kwargs) -> str:
    with pytest.raises(GeError) as caught:
        dfir.load(source, **kwargs)
    return str(caught.value)


# ---------------------------------------------------------------- the trailer


def test_signing_appends_a_trailer_and_changes_no_byte_before_it(keys):
    data = signed(OM, keys.dev.key)
    assert len(data) == len(OM) + SIGNATURE_TRAILER_SIZE and data[:len(OM)] == OM
    assert bytes(unsigned(data)) == OM and bytes(unsigned(OM)) == OM
    trailer = data[len(OM):]
    magic, size, algorithm = struct.unpack_from("<III", trailer, 0)
    assert (magic, size, algorithm) == (SIGNATURE_MAGIC, 128, 1)
    public_key = trailer[SIGNATURE_OFFSETS["public_key"]:SIGNATURE_OFFSETS["public_key"] + 32]
    signature = trailer[SIGNATURE_OFFSETS["signature"]:SIGNATURE_OFFSETS["signature"] + 64]
    assert public_key == keys.dev.key.public_key
    # the signature is plain Ed25519 over the context string and the 256-byte header
    Ed25519PublicKey.from_public_bytes(public_key).verify(signature, SIGNED_CONTEXT + OM[:HEADER_SIZE])
    assert trailer[12:16] == bytes(4) and trailer[112:] == bytes(16)


def test_signatures_are_deterministic_and_signing_again_replaces_the_signature(keys):
    once = signed(OM, keys.dev.key)
    assert signed(OM, keys.dev.key) == once
    assert signed(once, keys.dev.key) == once
    assert signed(once, keys.other.key) == signed(OM, keys.other.key)
    assert signed(once, None) == OM


def test_read_om_returns_the_signature_beside_the_same_file(keys, tmp_path):
    data = signed(OM, keys.dev.key)
    path = tmp_path / "signed.om"
    path.write_bytes(data)
    for source in (data, str(path)):
        om = read_om(source)
        assert om.signature is not None and om.signature.offset == len(OM)
        assert om.signature.signer == keys.dev.fingerprint and om.signature.verifies(om.data)
        assert bytes(om.data) == OM
        assert [bytes(p.data) for p in om.models[0].partitions] == \
               [bytes(p.data) for p in read_om(OM).models[0].partitions]
    assert read_om(OM).signature is None


def test_the_fingerprint_is_sha256_of_the_raw_public_key_first_16_hex(keys):
    raw = keys.dev.key.public_key
    assert key_fingerprint(raw) == "sha256:" + hashlib.sha256(raw).hexdigest()[:16]
    assert keys.dev.fingerprint == key_fingerprint(raw) and len(keys.dev.fingerprint) == 23


def _trailer_patched(keys, offset: int, fmt: str, value) -> bytes:
    data = bytearray(signed(OM, keys.dev.key))
    struct.pack_into("<" + fmt, data, len(OM) + offset, value)
    return bytes(data)


@pytest.mark.parametrize("make, message", [
    (lambda keys: signed(OM, keys.dev.key)[:-1], f"the signature trailer at byte {len(OM)} has 127 bytes, expected 128"),
    (lambda keys: signed(OM, keys.dev.key) + b"\0", f"the signature trailer at byte {len(OM)} has 129 bytes, expected 128"),
    (lambda keys: _trailer_patched(keys, 4, "I", 64),
     f"the signature trailer at byte {len(OM)} says it has 64 bytes, expected 128"),
    (lambda keys: _trailer_patched(keys, 8, "I", 2),
     f"the signature trailer at byte {len(OM)} has algorithm 2, expected 1 (Ed25519)"),
    (lambda keys: _trailer_patched(keys, 12, "B", 1), f"the signature trailer at byte {len(OM)} has non-zero reserved bytes"),
    (lambda keys: _trailer_patched(keys, 127, "B", 1), f"the signature trailer at byte {len(OM)} has non-zero reserved bytes"),
], ids=["short", "long", "size-field", "algorithm", "pad", "reserved"])
def test_a_malformed_trailer_is_an_error_even_without_trusted_keys(keys, tmp_path, make, message):
    data = make(keys)
    with pytest.raises(GeError) as caught:
        read_om(data)
    assert str(caught.value) == message
    path = tmp_path / "bad.om"
    path.write_bytes(data)
    assert load_error(str(path)) == f"file={path}; {message}"


def test_trailing_bytes_that_are_no_trailer_stay_the_readers_error():
    with pytest.raises(GeError) as caught:
        read_om(OM + b"\0" * 10)
    assert str(caught.value).endswith("the file has 10 unexpected trailing bytes")


def test_only_om_bytes_can_be_signed(keys):
    with pytest.raises(GeError) as caught:
        signed(b"not an om", keys.dev.key)
    assert str(caught.value) == "cannot sign: the data is not an .om file (no .om header)"


# ---------------------------------------------------------------- verifying


def trusted(*pairs) -> TrustedKeys:
    return TrustedKeys([p.key.public_key for p in pairs], "test keys")


def verify_error(data: bytes, trust: TrustedKeys) -> str:
    with pytest.raises(GeError) as caught:
        verify_bytes(data, trust)
    return str(caught.value)


def test_verify_accepts_a_file_signed_by_a_trusted_key(keys):
    verify_bytes(signed(OM, keys.dev.key), trusted(keys.dev))
    verify_bytes(signed(OM, keys.dev.key), trusted(keys.other, keys.dev))


def test_verify_refuses_unsigned_untrusted_and_bad_signatures_saying_which(keys):
    assert verify_error(OM, trusted(keys.dev)) == (
        "the .om file is unsigned; only files signed by a trusted key load (trusted keys: test keys)")
    assert verify_error(signed(OM, keys.other.key), trusted(keys.dev)) == (
        f"the .om file is signed by an untrusted key {keys.other.fingerprint}; the trusted keys "
        f"(test keys) are {keys.dev.fingerprint}")
    tampered = bytearray(signed(OM, keys.dev.key))
    tampered[len(OM) + SIGNATURE_OFFSETS["signature"]] ^= 1
    assert verify_error(bytes(tampered), trusted(keys.dev)) == (
        f"the .om file has a bad signature: it does not verify with its signer's key "
        f"{keys.dev.fingerprint} (the file or its signature was changed after signing)")


def test_a_file_changed_after_signing_with_its_checksums_recomputed_has_a_bad_signature(keys):
    trailer = signed(OM, keys.dev.key)[len(OM):]
    header_changed = bytearray(OM)
    struct.pack_into("<I", header_changed, HEADER_OFFSETS["ops"], 9)
    body_changed = write_om([[(PartitionType.FLOW_MODEL, PLAN), (PartitionType.UDF_PAYLOAD, b"evil" * 30),
                              (PartitionType.IR_TEXT, b"builtin.module {}")]], name="p")
    for forged in (resealed(bytes(header_changed)) + trailer, body_changed + trailer):
        read_om(forged)  # every checksum holds: only the signature tells
        assert verify_error(forged, trusted(keys.dev)).startswith("the .om file has a bad signature")


def test_verify_signature_reads_only_the_header(keys):
    om = read_om(signed(OM, keys.dev.key))
    verify_signature(om.data[:HEADER_SIZE], om.signature, trusted(keys.dev))


# ---------------------------------------------------------------- keys


def _pem_private(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_public(key) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def test_a_trusted_keys_file_holds_one_or_more_public_keys(keys, tmp_path):
    both = tmp_path / "both.pem"
    both.write_bytes(open(keys.dev.public, "rb").read() + b"\n" + open(keys.other.public, "rb").read())
    loaded = load_trusted_keys(both)
    assert loaded.public_keys == {keys.dev.key.public_key, keys.other.key.public_key}
    assert loaded.fingerprints == sorted([keys.dev.fingerprint, keys.other.fingerprint])
    assert loaded.source == str(both)
    assert load_signing_key(keys.dev.private).public_key == keys.dev.key.public_key


@pytest.mark.parametrize("content, message", [
    (None, "the signing key {path} cannot be read: No such file or directory"),
    (b"not a key", "the signing key {path} is not a PEM private key"),
    (_pem_private(rsa.generate_private_key(public_exponent=65537, key_size=1024)),
     "the signing key {path} is an RSA key, expected an Ed25519 key"),
    (_pem_private(ec.generate_private_key(ec.SECP256R1())),
     "the signing key {path} is an EC key, expected an Ed25519 key"),
    (Ed25519PrivateKey.generate().private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.BestAvailableEncryption(b"secret")),
     "the signing key {path} is encrypted; dfir reads unencrypted PEM keys (`dfir keygen` writes one)"),
], ids=["missing", "garbage", "rsa", "ec", "encrypted"])
def test_a_bad_signing_key_file_is_an_error_naming_it(tmp_path, content, message):
    path = tmp_path / "key.pem"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(GeError) as caught:
        load_signing_key(path)
    assert str(caught.value) == message.format(path=path)


@pytest.mark.parametrize("content, message", [
    (None, "the trusted keys file {path} cannot be read: No such file or directory"),
    (b"", "the trusted keys file {path} holds no PEM public key"),
    (_pem_public(Ed25519PrivateKey.generate()) + _pem_private(Ed25519PrivateKey.generate()),
     "the trusted keys file {path}: PEM block 1 is a PRIVATE KEY, expected a PUBLIC KEY (trust public keys only)"),
    (b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
     "the trusted keys file {path}: PEM block 0 is not a valid public key"),
    (_pem_public(rsa.generate_private_key(public_exponent=65537, key_size=1024)),
     "the trusted keys file {path}: PEM block 0 is an RSA key, expected an Ed25519 key"),
], ids=["missing", "empty", "private-block", "garbage-block", "rsa"])
def test_a_bad_trusted_keys_file_is_an_error_naming_it_and_the_block(tmp_path, content, message):
    path = tmp_path / "keys.pem"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(GeError) as caught:
        load_trusted_keys(path)
    assert str(caught.value) == message.format(path=path)


def test_the_signing_key_is_the_argument_else_the_environment_else_the_own_key(keys, monkeypatch):
    assert signing_key() is None
    assert default_signing_key() is own_signing_key() and default_signing_key().source.endswith("signing_key.pem (your own key)")
    monkeypatch.setenv(SIGNING_KEY_ENV, keys.dev.private)
    assert signing_key().public_key == keys.dev.key.public_key == default_signing_key().public_key
    assert signing_key().source == f"{SIGNING_KEY_ENV}={keys.dev.private}"
    assert signing_key(keys.other.private).public_key == keys.other.key.public_key
    assert signing_key(keys.other.key) is keys.other.key
    raw = Ed25519PrivateKey.generate()
    assert isinstance(signing_key(raw), SigningKey) and signing_key(raw).source == "sign_with"
    monkeypatch.setenv(SIGNING_KEY_ENV, "")
    with pytest.raises(GeError) as caught:
        signing_key()
    assert str(caught.value) == (f"{SIGNING_KEY_ENV} is empty; set it to an Ed25519 private key PEM file, or "
                                 "unset it (your own key and the keys added with `dfir trust add` serve "
                                 "without it)")
    with pytest.raises(GeError) as caught:
        signing_key(42)
    assert str(caught.value) == ("sign_with must be the path of an Ed25519 private key PEM file, a "
                                 "SigningKey or an Ed25519PrivateKey, got int")


def test_the_trusted_keys_are_the_argument_else_the_environment(keys, monkeypatch):
    assert trusted_keys() is None
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)
    assert trusted_keys().public_keys == {keys.dev.key.public_key}
    assert trusted_keys().source == f"{TRUSTED_KEYS_ENV}={keys.dev.public}"
    other = keys.other.key.public_key
    assert trusted_keys(keys.other.public).public_keys == {other}
    assert trusted_keys(keys.other.public).source == f"trusted_keys={keys.other.public}"
    public_object = Ed25519PublicKey.from_public_bytes(other)
    assert trusted_keys(public_object).public_keys == {other}
    assert trusted_keys([public_object, keys.dev.public]).public_keys == {other, keys.dev.key.public_key}
    given = TrustedKeys([other], "mine")
    assert trusted_keys(given) is given
    for bad, message in ([], "trusted_keys is empty; give at least one public key"), (
            [42], "trusted_keys must be the path of a PEM file of Ed25519 public keys, a TrustedKeys, "
                  "an Ed25519PublicKey or a list of them, got int"):
        with pytest.raises(GeError) as caught:
            trusted_keys(bad)
        assert str(caught.value) == message


def test_write_key_pair_writes_a_private_file_only_its_owner_reads_and_never_overwrites(tmp_path):
    private, public, key = write_key_pair(str(tmp_path / "k"))
    assert (private, public) == (str(tmp_path / "k.pem"), str(tmp_path / "k.pub.pem"))
    assert os.stat(private).st_mode & 0o777 == 0o600
    assert load_signing_key(private).public_key == key.public_key
    assert load_trusted_keys(public).public_keys == {key.public_key}
    written = open(public, "rb").read()
    with pytest.raises(GeError) as caught:
        write_key_pair(str(tmp_path / "k"))
    assert str(caught.value) == f"{private} already exists; keygen never overwrites a key"
    os.unlink(private)  # the public key alone is not overwritten either
    with pytest.raises(GeError) as caught:
        write_key_pair(str(tmp_path / "k"))
    assert str(caught.value) == f"{public} already exists; keygen never overwrites a key"
    assert not os.path.exists(private) and open(public, "rb").read() == written


def test_write_key_pair_loses_no_race_and_leaves_no_half_pair(tmp_path, monkeypatch):
    public = tmp_path / "k.pub.pem"
    public.write_bytes(b"written meanwhile")
    monkeypatch.setattr(os.path, "lexists", lambda path: False)  # another keygen wins after the check
    with pytest.raises(GeError) as caught:
        write_key_pair(str(tmp_path / "k"))
    assert str(caught.value) == f"{public} already exists; keygen never overwrites a key"
    assert not (tmp_path / "k.pem").exists() and public.read_bytes() == b"written meanwhile"


def test_write_key_pair_names_a_folder_it_cannot_write(tmp_path):
    with pytest.raises(GeError) as caught:
        write_key_pair(str(tmp_path / "missing" / "k"))
    assert str(caught.value) == f"cannot write {tmp_path / 'missing' / 'k.pem'}: No such file or directory"


# ---------------------------------------------------------------- dfir.load


def scale_om() -> bytes:
    graph = Graph("double")
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.mul(x, graph.const(np.full([2], 2.0, np.float32)))])
    return dfir.compile(graph).om


@pytest.fixture(scope="module")
def model_om() -> bytes:
    return scale_om()


def runs(source, **kwargs) -> list[float]:
    with dfir.load(source, **kwargs) as model:
        model.feed_data([np.ones([1, 2], np.float32)])
        outputs, _, ret = model.fetch_data(timeout=5000)
    assert ret == 0
    return outputs[0].numpy().ravel().tolist()


def test_a_signed_model_loads_under_its_trusted_key_from_bytes_and_path(keys, model_om, tmp_path):
    data = signed(model_om, keys.dev.key)
    path = tmp_path / "model.om"
    path.write_bytes(data)
    assert runs(data, trusted_keys=keys.dev.public) == [2.0, 2.0]
    assert runs(str(path), trusted_keys=trusted_keys(keys.dev.public)) == [2.0, 2.0]
    assert runs(path, trusted_keys=[Ed25519PublicKey.from_public_bytes(keys.dev.key.public_key)]) == [2.0, 2.0]


def test_by_default_the_own_keys_files_load_and_others_with_trust_any(keys, model_om):
    assert read_om(model_om).signature.signer == own_signing_key().fingerprint
    assert runs(model_om) == [2.0, 2.0]
    assert runs(bytes(unsigned(model_om)), trust="any") == [2.0, 2.0]
    assert runs(signed(model_om, keys.other.key), trust="any") == [2.0, 2.0]


def test_load_refuses_what_the_trusted_keys_did_not_sign(keys, model_om, tmp_path):
    path = tmp_path / "model.om"
    path.write_bytes(unsigned(model_om))
    assert load_error(str(path), trusted_keys=keys.dev.public) == (
        f"dfir.load failed; file={path}; the .om file is unsigned; only files signed by a trusted key "
        f"load (trusted keys: trusted_keys={keys.dev.public}); {UNSIGNED_WAYS}")
    path.write_bytes(signed(model_om, keys.other.key))
    assert load_error(str(path), trusted_keys=keys.dev.public) == (
        f"dfir.load failed; file={path}; the .om file is signed by an untrusted key "
        f"{keys.other.fingerprint}; the trusted keys (trusted_keys={keys.dev.public}) are {keys.dev.fingerprint}; "
        f"{untrusted_ways(keys.other.fingerprint)}")
    tampered = bytearray(signed(model_om, keys.dev.key))
    tampered[-1 - 16 - 10] ^= 1  # a byte of the signature
    assert load_error(bytes(tampered), trusted_keys=keys.dev.public) == (
        f"dfir.load failed; the .om file has a bad signature: it does not verify with its signer's key "
        f"{keys.dev.fingerprint} (the file or its signature was changed after signing); {BAD_WAYS}")
    # the trusted keys given are the only ones: the own key signed model_om
    assert "signed by an untrusted key" in load_error(model_om, trusted_keys=keys.dev.public)


def test_the_environment_adds_trusted_keys_and_the_argument_wins(keys, model_om, monkeypatch):
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)
    assert load_error(bytes(unsigned(model_om))) == (
        f"dfir.load failed; the .om file is unsigned; only files signed by a trusted key load "
        f"(trusted keys: your own key {own_signing_key().fingerprint}, {TRUSTED_KEYS_ENV}={keys.dev.public}); "
        f"{UNSIGNED_WAYS}")
    assert runs(signed(model_om, keys.dev.key)) == [2.0, 2.0]
    assert runs(model_om) == [2.0, 2.0]  # the own key's
    assert runs(signed(model_om, keys.other.key), trusted_keys=keys.other.public) == [2.0, 2.0]
    assert load_error(signed(model_om, keys.dev.key), trusted_keys=keys.other.public).startswith(
        f"dfir.load failed; the .om file is signed by an untrusted key {keys.dev.fingerprint}")


def test_unusable_trusted_keys_fail_the_load(keys, model_om, monkeypatch, tmp_path):
    missing = tmp_path / "missing.pem"
    monkeypatch.setenv(TRUSTED_KEYS_ENV, str(missing))
    assert load_error(signed(model_om, keys.dev.key)) == (
        f"dfir.load failed; the trusted keys file {TRUSTED_KEYS_ENV}={missing} cannot be read: "
        f"No such file or directory")
    assert load_error(model_om, trusted_keys=3.5) == (
        "dfir.load failed; trusted_keys must be the path of a PEM file of Ed25519 public keys, a "
        "TrustedKeys, an Ed25519PublicKey or a list of them, got float")


# ---------------------------------------------------------------- a crafted file


@df.pyflow
def double(x):
    return x * 2


def crafted_doubler(marker) -> bytes:
    """A doubling graph compiled, then crafted around a payload that creates `marker` (`crafted_om`)."""
    return crafted_om(df.FlowGraph([double.fnode()(df.FlowData(name="x"))], name="crafted"), marker)


def test_a_crafted_file_with_valid_checksums_is_refused_before_its_payload_is_unpickled(keys, tmp_path):
    marker = tmp_path / "marker"
    crafted = crafted_doubler(marker)
    stolen_trailer = signed(OM, keys.dev.key)[len(OM):]  # a genuine signature, of another file
    for data, problem in ((crafted, "is unsigned"), (signed(crafted, keys.other.key), "is signed by an untrusted key"),
                          (crafted + stolen_trailer, "has a bad signature")):
        assert problem in load_error(data, trusted_keys=keys.dev.public)
        assert not marker.exists()
    own_trailer = signed(OM, own_signing_key())[len(OM):]
    for data, problem in ((crafted, "is unsigned"), (signed(crafted, keys.other.key), "is signed by an untrusted key"),
                          (crafted + own_trailer, "has a bad signature")):
        assert problem in load_error(data)  # the default trust: the own key
        assert not marker.exists()
    # the same file with trust="any": loading it runs the payload's code
    with pytest.raises(GeError):
        dfir.load(crafted, trust="any")
    assert marker.exists()


# ---------------------------------------------------------------- bundles


def test_a_bundle_drops_its_members_signatures_and_its_own_covers_them(keys, model_om):
    member = signed(model_om, keys.dev.key)
    bundle = write_bundle([member, model_om], ["a", "b"], name="set")
    assert bundle == write_bundle([model_om, model_om], ["a", "b"], name="set")
    om = read_om(signed(bundle, keys.dev.key))
    assert om.signature.signer == keys.dev.fingerprint
    assert [member.om.signature for member in om.bundle] == [None, None]
    loaded = dfir.load(signed(bundle, keys.dev.key), trusted_keys=keys.dev.public)
    try:
        assert list(loaded.models) == ["a", "b"]
    finally:
        loaded.close()
    assert "is unsigned" in load_error(bundle, trusted_keys=keys.dev.public)
    assert "is unsigned" in load_error(bundle)
