"""`dfir trust ls|add|rm|export`, the offline flow's one trust step (compile as one user, load as
another), `dfir run` refusing a bundle or a foreign file before any of its code runs, and the
commands that run no code (`inspect`, `cache ls`) working on unsigned files."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.ge.offline_compile import build_finalize, build_initialize, build_model, save_model
from dfir.lowering.om_writer import write_bundle
from dfir.om.keys import SIGNING_KEY_ENV, TRUSTED_KEYS_ENV
from dfir.om.signature import signed, unsigned
from dfir.om.trust import HOME_ENV, TRUST_ENV, own_signing_key
from dfir.runtime.om import read_om
from dfir.tools.cli import main
from dfir.tools.inspect_om import inspect_om
from crafted_payloads import crafted_om


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fresh dfir home of this test's, and no key or trust setting in the environment."""
    path = tmp_path / "home"
    monkeypatch.setenv(HOME_ENV, str(path))
    for name in (SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, TRUST_ENV):
        monkeypatch.delenv(name, raising=False)
    return path


def output(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def error(capsys, *argv: str) -> str:
    assert main(list(argv)) == 1
    return capsys.readouterr().err


def test_trust_ls_add_and_rm(home, keys, capsys):
    assert output(capsys, "trust", "ls") == (
        f"own      (none yet)               {home}/signing_key.pem: made by the first compile or `dfir trust export`\n")
    assert output(capsys, "trust", "add", keys.other.public) == f"trusted {keys.other.fingerprint} (from {keys.other.public})\n"
    assert output(capsys, "trust", "add", keys.other.public) == (
        f"already trusted {keys.other.fingerprint} (from {keys.other.public})\n")
    own = own_signing_key()
    added = home / "trusted" / (keys.other.fingerprint.removeprefix("sha256:") + ".pub.pem")
    assert output(capsys, "trust", "ls") == (f"own      {own.fingerprint:<24} {home}/signing_key.pem\n"
                                             f"added    {keys.other.fingerprint:<24} {added}\n")
    assert output(capsys, "trust", "rm", keys.other.fingerprint.removeprefix("sha256:")) == f"removed {added}\n"
    assert error(capsys, "trust", "rm", keys.other.fingerprint) == (
        f"error: no added key has fingerprint {keys.other.fingerprint}; the added keys are: none "
        "(`dfir trust ls` lists every trusted key)\n")
    assert error(capsys, "trust", "add", keys.other.private) == (
        f"error: the trusted keys file {keys.other.private}: PEM block 0 is a PRIVATE KEY, expected a PUBLIC "
        "KEY (trust public keys only)\n")


def test_trust_ls_lists_the_environments_keys(home, keys, capsys, monkeypatch):
    monkeypatch.setenv(SIGNING_KEY_ENV, keys.dev.private)
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.other.public)
    lines = output(capsys, "trust", "ls").splitlines()
    assert lines[1:] == [f"signing  {keys.dev.fingerprint:<24} {SIGNING_KEY_ENV}={keys.dev.private}",
                         f"env      {keys.other.fingerprint:<24} {TRUSTED_KEYS_ENV}={keys.other.public}"]
    monkeypatch.setenv(TRUSTED_KEYS_ENV, "")
    assert error(capsys, "trust", "ls").startswith("error: DFIR_TRUSTED_KEYS is empty; ")


def test_trust_export_prints_or_writes_the_own_public_key_making_it_on_first_use(home, capsys, tmp_path):
    assert main(["trust", "export"]) == 0
    printed = capsys.readouterr()
    own = own_signing_key()
    public = (home / "signing_key.pub.pem").read_text()
    assert printed.out == public and public.startswith("-----BEGIN PUBLIC KEY-----")
    assert printed.err == (f"your public key {own.fingerprint} ({home}/signing_key.pub.pem); where your .om "
                           "files are loaded: dfir trust add FILE (this key saved to FILE)\n")
    target = tmp_path / "alice.pub.pem"
    assert output(capsys, "trust", "export", "-o", str(target)) == (
        f"wrote {target} (your public key {own.fingerprint}, also at {home}/signing_key.pub.pem); where your "
        ".om files are loaded: dfir trust add alice.pub.pem\n")
    assert target.read_text() == public


def adder_graph() -> df.FlowGraph:
    names.reset()

    @df.pyflow
    def add(a, b):
        return a + b
    x, y = df.FlowData(name="x"), df.FlowData(name="y")
    return df.FlowGraph([add.fnode()(x, y)], name="adder")


def test_the_offline_flow_compile_as_one_user_load_as_another_after_one_trust_add(tmp_path, monkeypatch, capsys):
    for name in (SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, TRUST_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "build-home"))  # the compiling environment
    build_initialize({})
    try:
        save_model(str(tmp_path / "adder"), build_model(adder_graph()))
    finally:
        build_finalize()
    output(capsys, "trust", "export", "-o", str(tmp_path / "builder.pub.pem"))
    np.save(tmp_path / "x.npy", np.array([1, 2], np.int32))
    np.save(tmp_path / "y.npy", np.array([10, 20], np.int32))
    run = ["run", str(tmp_path / "adder.om"), "--input", f"x={tmp_path / 'x.npy'}",
           "--input", f"y={tmp_path / 'y.npy'}"]
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "run-home"))  # the loading environment
    assert "the .om file is signed by an untrusted key" in error(capsys, *run)
    output(capsys, "trust", "add", str(tmp_path / "builder.pub.pem"))
    assert output(capsys, *run) == "output 0: shape=[2] dtype=int32\n[11, 22]\n"


def test_dfir_run_refuses_a_foreign_or_any_bundle_before_its_code_runs(home, keys, tmp_path, capsys, monkeypatch):
    marker = tmp_path / "marker"
    crafted = crafted_om(adder_graph(), marker)
    bundle = write_bundle([crafted, crafted], ["a", "b"], name="set")
    path = tmp_path / "bundle.om"
    np.save(tmp_path / "x.npy", np.array([1], np.int32))
    run = ["run", str(path), "--input", f"x={tmp_path / 'x.npy'}"]
    path.write_bytes(signed(bundle, keys.other.key))
    assert error(capsys, *run).startswith(
        f"error: dfir.load failed; file={path}; the .om file is signed by an untrusted key {keys.other.fingerprint}; ")
    assert not marker.exists()
    for data in (signed(bundle, own_signing_key()), bundle):  # trusted, or run with DFIR_TRUST=any
        monkeypatch.setenv(TRUST_ENV, "any" if data is bundle else "signed")
        path.write_bytes(data)
        assert error(capsys, *run) == f"error: {path} is a bundle of 2 models; dfir run runs a flow model\n"
        assert not marker.exists()
    path.write_bytes(crafted)  # a crafted flow model, run anyway: the proof that the trap works
    assert main(run) == 1
    assert marker.exists()


def test_inspect_and_cache_ls_work_on_unsigned_files(home, tmp_path, capsys):
    om = bytes(unsigned(dfir.compile(adder_graph()).om))
    path = tmp_path / "plain.om"
    path.write_bytes(om)
    assert "signature unsigned\n" in output(capsys, "inspect", str(path))
    assert inspect_om(om) == inspect_om(path) and read_om(path).signature is None
    cache = tmp_path / "cache"
    cache.mkdir()
    dfir.compile(adder_graph(), {"ge.graph_compiler_cache_dir": str(cache), "ge.graph_key": "adder"})
    for name in os.listdir(cache):
        if name.endswith(".om"):
            (cache / name).write_bytes(unsigned((cache / name).read_bytes()))
    assert output(capsys, "cache", "ls", str(cache)).startswith("adder: 1 cached models, ")
    assert main(["cache", "verify", str(cache)]) == 1
    assert "the .om file is unsigned; " in capsys.readouterr().out
