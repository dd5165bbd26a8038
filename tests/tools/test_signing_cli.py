"""`dfir keygen`, the signer in `dfir inspect`, and `dfir compile` / `dfir run` under the key
environment variables."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from dfir.frontend.dataflow import names
from dfir.lowering.om_writer import write_bundle
from dfir.om.keys import SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, load_signing_key, load_trusted_keys
from dfir.om.schema import SIGNATURE_OFFSETS
from dfir.om.signature import signed, unsigned
from dfir.om.trust import own_signing_key
from dfir.tools.cli import main
from dfir.tools.inspect_om import inspect_om

ADDER = Path(__file__).resolve().parents[2] / "lit_tests" / "tools" / "Inputs" / "adder.py"


@pytest.fixture(autouse=True)
def no_key_env(monkeypatch):
    monkeypatch.delenv(SIGNING_KEY_ENV, raising=False)
    monkeypatch.delenv(TRUSTED_KEYS_ENV, raising=False)


@pytest.fixture
def dev(tmp_path, capsys):
    assert main(["keygen", "-o", str(tmp_path / "dev")]) == 0
    capsys.readouterr()
    return load_signing_key(tmp_path / "dev.pem")


def test_keygen_writes_a_private_and_a_public_key_and_says_how_to_use_them(tmp_path, capsys):
    name = str(tmp_path / "release")
    assert main(["keygen", "-o", name]) == 0
    key = load_signing_key(f"{name}.pem")
    assert load_trusted_keys(f"{name}.pub.pem").public_keys == {key.public_key}
    assert os.stat(f"{name}.pem").st_mode & 0o777 == 0o600
    assert capsys.readouterr().out == (
        f"wrote {name}.pem (private key: keep it secret; DFIR_SIGNING_KEY={name}.pem signs)\n"
        f"wrote {name}.pub.pem (public key {key.fingerprint}; DFIR_TRUSTED_KEYS={name}.pub.pem trusts it)\n")


def test_keygen_refuses_to_overwrite(tmp_path, capsys):
    name = str(tmp_path / "release")
    assert main(["keygen", "-o", name]) == 0
    private = Path(f"{name}.pem").read_bytes()
    capsys.readouterr()
    assert main(["keygen", "-o", name]) == 1
    assert capsys.readouterr().err == f"error: {name}.pem already exists; keygen never overwrites a key\n"
    assert Path(f"{name}.pem").read_bytes() == private


def compile_adder(tmp_path, capsys, name: str) -> Path:
    names.reset()  # the script's graph gets the same names each time
    output = tmp_path / name
    assert main(["compile", str(ADDER), "-o", str(output)]) == 0
    capsys.readouterr()
    return output


def without_signature(path: Path) -> Path:
    """`path` rewritten unsigned (dfir signs every file it compiles)."""
    path.write_bytes(unsigned(path.read_bytes()))
    return path


def signature_line(report: str) -> str:
    lines = report.splitlines()
    assert lines[20].startswith("signature ") and lines[21] == "model 0"  # right after the header
    return lines[20]


def test_inspect_shows_the_signer_or_unsigned(tmp_path, capsys, dev, monkeypatch):
    plain = without_signature(compile_adder(tmp_path, capsys, "plain.om"))
    monkeypatch.setenv(SIGNING_KEY_ENV, str(tmp_path / "dev.pem"))
    signed_path = compile_adder(tmp_path, capsys, "signed.om")
    assert signature_line(inspect_om(plain)) == "signature unsigned"
    assert signature_line(inspect_om(signed_path)) == f"signature ed25519 signer={dev.fingerprint} valid"
    data = bytearray(signed_path.read_bytes())
    data[len(plain.read_bytes()) + SIGNATURE_OFFSETS["signature"]] ^= 1
    assert signature_line(inspect_om(bytes(data))) == (
        f"signature ed25519 signer={dev.fingerprint} bad (does not verify with the signer's key)")
    assert main(["inspect", str(signed_path)]) == 0
    assert f"signature ed25519 signer={dev.fingerprint} valid\n" in capsys.readouterr().out


def test_inspect_shows_one_signature_for_a_bundle(tmp_path, capsys, dev):
    member = compile_adder(tmp_path, capsys, "adder.om").read_bytes()
    report = inspect_om(signed(write_bundle([member, member], ["a", "b"], name="set"), dev))
    assert [line for line in report.splitlines() if "signature" in line] == \
        [f"signature ed25519 signer={dev.fingerprint} valid"]


def test_run_refuses_an_unsigned_model_under_trusted_keys_and_runs_a_signed_one(tmp_path, capsys, dev,
                                                                              monkeypatch):
    np.save(tmp_path / "x.npy", np.array([1, 2], np.int32))
    np.save(tmp_path / "y.npy", np.array([10, 20], np.int32))
    inputs = ["--input", f"x={tmp_path / 'x.npy'}", "--input", f"y={tmp_path / 'y.npy'}"]
    plain = without_signature(compile_adder(tmp_path, capsys, "plain.om"))
    monkeypatch.setenv(SIGNING_KEY_ENV, str(tmp_path / "dev.pem"))
    signed_path = compile_adder(tmp_path, capsys, "signed.om")
    monkeypatch.delenv(SIGNING_KEY_ENV)
    trusted = str(tmp_path / "dev.pub.pem")
    monkeypatch.setenv(TRUSTED_KEYS_ENV, trusted)
    assert main(["run", str(plain), *inputs]) == 1
    assert capsys.readouterr().err == (
        f"error: dfir.load failed; file={plain}; the .om file is unsigned; only files signed by a trusted "
        f"key load (trusted keys: your own key {own_signing_key().fingerprint}, {TRUSTED_KEYS_ENV}={trusted}); "
        f"to run it, have it signed by a key you trust (`dfir trust add KEY.pub.pem` trusts one), or load it "
        'with trust="any" (or env DFIR_TRUST=any) to run it unchecked\n')
    assert main(["run", str(signed_path), *inputs]) == 0
    assert capsys.readouterr().out.startswith("output 0: shape=[2] dtype=int32\n[-11, -22]\n")
