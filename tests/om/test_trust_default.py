"""Trusted by default: the user's own key, made on first use in the dfir home, signs what dfir
writes; a load runs only what a trusted key signed, unless `trust="any"` / `DFIR_TRUST=any`,
which warns once; and the compile cache refuses entries no trusted key signed."""
from __future__ import annotations

import logging
import multiprocessing
import os
import warnings

import numpy as np
import pytest

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.om_writer import write_om
from dfir.om import trust
from dfir.om.keys import SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, load_signing_key, load_trusted_keys
from dfir.om.schema import PartitionType
from dfir.om.signature import signed, unsigned
from dfir.om.trust import (HOME_ENV, TRUST_ENV, UntrustedRunWarning, add_trusted_keys, added_keys,
                           default_trusted, dfir_home, own_signing_key, remove_trusted_key)
from dfir.runtime.om import read_om
from crafted_payloads import trap_payload

ANYWAY = 'or load it with trust="any" (or env DFIR_TRUST=any) to run it unchecked'


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fresh dfir home of this test's, and no key or trust setting in the environment."""
    path = tmp_path / "home"
    monkeypatch.setenv(HOME_ENV, str(path))
    for name in (SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, TRUST_ENV):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def not_warned_yet(monkeypatch):
    monkeypatch.setattr(trust, "_warned", False)


def double_graph() -> Graph:
    graph = Graph("double")
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.mul(x, graph.const(np.full([2], 2.0, np.float32)))])
    return graph


def runs(source, **kwargs) -> list[float]:
    with dfir.load(source, **kwargs) as model:
        model.feed_data([np.ones([1, 2], np.float32)])
        outputs, _, ret = model.fetch_data(timeout=5000)
    assert ret == 0
    return outputs[0].numpy().ravel().tolist()


def load_error(source, **kwargs) -> str:
    with pytest.raises(GeError) as caught:
        dfir.load(source, **kwargs)
    return str(caught.value)


# ---------------------------------------------------------------- the own key


def test_the_first_compile_makes_the_own_key_private_to_the_user(home):
    assert own_signing_key(create=False) is None and not home.exists()
    compiled = dfir.compile(double_graph())
    key = own_signing_key()
    assert read_om(compiled.om).signature.signer == key.fingerprint
    assert os.stat(home).st_mode & 0o777 == 0o700
    assert os.stat(home / "signing_key.pem").st_mode & 0o777 == 0o600
    assert load_signing_key(home / "signing_key.pem").public_key == key.public_key
    assert load_trusted_keys(home / "signing_key.pub.pem").public_keys == {key.public_key}
    assert sorted(os.listdir(home)) == ["signing_key.pem", "signing_key.pub.pem"]  # no temporary file left
    assert dfir.compile(double_graph()).om == compiled.om  # deterministic: same graph, same key, same bytes
    assert runs(compiled.om) == [2.0, 2.0]


def test_the_home_is_dfir_home_else_the_xdg_config_dir_else_dot_config(tmp_path, monkeypatch):
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "explicit"))
    assert dfir_home() == str(tmp_path / "explicit")
    monkeypatch.delenv(HOME_ENV)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert dfir_home() == str(tmp_path / "xdg" / "dfir")
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert dfir_home() == str(tmp_path / "user" / ".config" / "dfir")
    monkeypatch.setenv(HOME_ENV, "")
    with pytest.raises(GeError) as caught:
        dfir_home()
    assert str(caught.value) == ("DFIR_HOME is empty; set it to the directory dfir keeps its keys in, or "
                                 "unset it (then $XDG_CONFIG_HOME/dfir or ~/.config/dfir)")


def _make_key(home: str, start, results) -> None:
    os.environ[HOME_ENV] = home
    start.wait()
    results.put(own_signing_key().fingerprint)


def test_processes_making_the_own_key_at_once_end_with_one_key(home):
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(6), context.Queue()
    workers = [context.Process(target=_make_key, args=(str(home), start, results)) for _ in range(6)]
    for worker in workers:
        worker.start()
    fingerprints = {results.get(timeout=60) for _ in workers}
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert fingerprints == {own_signing_key().fingerprint}
    assert sorted(os.listdir(home)) == ["signing_key.pem", "signing_key.pub.pem"]


def test_a_process_losing_the_race_to_make_the_key_uses_the_winners(home, monkeypatch):
    winner = own_signing_key()
    real_exists = os.path.exists
    monkeypatch.setattr(os.path, "exists", lambda path: False if str(path).endswith(".pem") else real_exists(path))
    assert own_signing_key().public_key == winner.public_key  # its own link failed: it read the winner's
    monkeypatch.undo()
    assert sorted(os.listdir(home)) == ["signing_key.pem", "signing_key.pub.pem"]


def test_the_own_key_is_read_once_per_process_until_its_file_changes(home):
    first = own_signing_key()
    assert own_signing_key() is first
    os.unlink(home / "signing_key.pem")
    os.unlink(home / "signing_key.pub.pem")
    assert own_signing_key().public_key != first.public_key


# ---------------------------------------------------------------- refusals


def test_load_refuses_unsigned_foreign_and_badly_signed_files_saying_how_to_go_on(home, keys, tmp_path):
    own = dfir.compile(double_graph()).om
    fingerprint = own_signing_key().fingerprint
    path = tmp_path / "m.om"
    path.write_bytes(unsigned(own))
    assert load_error(str(path)) == (
        f"dfir.load failed; file={path}; the .om file is unsigned; only files signed by a trusted key load "
        f"(trusted keys: your own key {fingerprint}); to run it, have it signed by a key you trust "
        f"(`dfir trust add KEY.pub.pem` trusts one), {ANYWAY}")
    path.write_bytes(signed(own, keys.other.key))
    assert load_error(str(path)) == (
        f"dfir.load failed; file={path}; the .om file is signed by an untrusted key {keys.other.fingerprint}; "
        f"the trusted keys (your own key {fingerprint}) are {fingerprint}; to run it, trust its signer with "
        f"`dfir trust add KEY.pub.pem` (the public key of {keys.other.fingerprint}; `dfir trust export` prints "
        f"it where it was signed), {ANYWAY}")
    tampered = bytearray(own)
    tampered[-30] ^= 1  # a byte of the signature
    assert load_error(bytes(tampered)) == (
        f"dfir.load failed; the .om file has a bad signature: it does not verify with its signer's key "
        f"{fingerprint} (the file or its signature was changed after signing); to run it, compile it again, "
        f"{ANYWAY}")


def test_before_any_key_is_made_nothing_is_trusted(home, keys):
    data = signed(write_om([[(PartitionType.FLOW_MODEL, b"{}")]], name="p"), keys.other.key)
    assert load_error(data) == (
        f"dfir.load failed; the .om file is signed by an untrusted key {keys.other.fingerprint}; the trusted "
        f"keys (none yet: your own key is made when you first compile) are none; to run it, trust its signer "
        f"with `dfir trust add KEY.pub.pem` (the public key of {keys.other.fingerprint}; `dfir trust export` "
        f"prints it where it was signed), {ANYWAY}")
    assert not home.exists()  # a load makes no key


def test_an_empty_trusted_keys_variable_is_an_error_not_off(home, monkeypatch):
    om = dfir.compile(double_graph()).om
    monkeypatch.setenv(TRUSTED_KEYS_ENV, "")
    message = ("DFIR_TRUSTED_KEYS is empty; set it to a PEM file of trusted public keys, or unset it (your own "
               "key and the keys added with `dfir trust add` serve without it)")
    assert load_error(om) == f"dfir.load failed; {message}"
    with pytest.raises(GeError) as caught:
        default_trusted()
    assert str(caught.value) == message
    cache = {"ge.graph_compiler_cache_dir": str(home.parent), "ge.graph_key": "k"}
    with pytest.raises(GeError) as caught:
        dfir.compile(double_graph(), cache)
    assert str(caught.value) == f"dfir.compile failed; {message}"


def test_the_signing_keys_and_the_added_keys_are_trusted(home, keys, monkeypatch):
    om = dfir.compile(double_graph()).om
    foreign = signed(om, keys.other.key)
    assert "untrusted key" in load_error(foreign)
    assert add_trusted_keys(keys.other.public) == [(keys.other.fingerprint, True)]
    assert add_trusted_keys(keys.other.public) == [(keys.other.fingerprint, False)]
    assert [key.fingerprint for key in added_keys()] == [keys.other.fingerprint]
    assert runs(foreign) == [2.0, 2.0]
    assert remove_trusted_key(keys.other.fingerprint) == str(
        home / "trusted" / (keys.other.fingerprint.removeprefix("sha256:") + ".pub.pem"))
    assert "untrusted key" in load_error(foreign)
    with pytest.raises(GeError) as caught:
        remove_trusted_key(keys.other.fingerprint)
    assert str(caught.value) == (f"no added key has fingerprint {keys.other.fingerprint}; the added keys are: "
                                 "none (`dfir trust ls` lists every trusted key)")
    monkeypatch.setenv(SIGNING_KEY_ENV, keys.dev.private)  # the key a compile signs with loads too
    assert runs(dfir.compile(double_graph()).om) == [2.0, 2.0]


# ---------------------------------------------------------------- trust="any"


def test_trust_any_runs_an_unsigned_file_and_warns_once_per_process(home, not_warned_yet):
    om = bytes(unsigned(dfir.compile(double_graph()).om))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert runs(om, trust="any") == [2.0, 2.0]
        assert runs(om, trust="any") == [2.0, 2.0]
    assert [(w.category, str(w.message)) for w in caught] == [(UntrustedRunWarning, (
        f'trust="any" (or DFIR_TRUST=any): dfir runs .om files without checking who signed them, starting '
        f"with an .om of {len(om)} bytes; this warning is shown once per process"))]
    assert caught[0].filename == __file__  # it points at the dfir.load call


def test_dfir_trust_any_in_the_environment_does_the_same_and_the_argument_wins(home, monkeypatch, not_warned_yet):
    om = bytes(unsigned(dfir.compile(double_graph()).om))
    monkeypatch.setenv(TRUST_ENV, "any")
    with pytest.warns(UntrustedRunWarning):
        assert runs(om) == [2.0, 2.0]
    assert "the .om file is unsigned" in load_error(om, trust="signed")
    monkeypatch.setenv(TRUST_ENV, "none")
    assert load_error(om) == ("dfir.load failed; DFIR_TRUST='none' is not a trust mode; use any (run any "
                              "file) or signed (the default: run files a trusted key signed), or unset it")
    assert load_error(om, trust="all") == ('dfir.load failed; trust=\'all\' is not a trust mode; use "any" (run '
                                           'any file) or "signed" (the default: run files a trusted key signed)')


# ---------------------------------------------------------------- the compile cache


def pipeline(offset: float = 1.0) -> df.FlowGraph:
    names.reset()  # the same names each time: the same graph key

    @df.pyflow
    def shift(x):
        return x + offset
    x = df.FlowData(name="x")
    return df.FlowGraph([shift.fnode()(x)], name="pipe")


def test_a_poisoned_cache_entry_is_a_miss_that_compiles_again_and_never_runs(home, keys, tmp_path, caplog):
    cache = tmp_path / "cache"
    cache.mkdir()
    options = {"ge.graph_compiler_cache_dir": str(cache), "ge.graph_key": "pipe"}
    first = dfir.compile(pipeline(), options)
    (model_name,) = [name for name in os.listdir(cache) if name.endswith(".om")]
    model_path = cache / model_name
    marker = tmp_path / "marker"
    payload = trap_payload(marker)
    om = read_om(model_path.read_bytes())
    partitions = [(p.type, payload if p.type == PartitionType.UDF_PAYLOAD else bytes(p.data))
                  for p in om.models[0].partitions if p.type != PartitionType.PARTITION_CHECKSUMS]
    poisoned = write_om([partitions], name=om.name)
    for planted, problem in ((poisoned, "the .om file is unsigned"),
                             (signed(poisoned, keys.other.key), f"the .om file is signed by an untrusted key {keys.other.fingerprint}")):
        model_path.write_bytes(planted)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="dfir.cache"):
            again = dfir.compile(pipeline(), options)
        assert f"cached model {model_path} is not usable ({problem}" in caplog.text
        assert again.om == first.om and runs_shift(again.om) == [2.0, 2.0]
        assert not marker.exists()
        (model_name,) = [name for name in os.listdir(cache) if name.endswith(".om")]
        model_path = cache / model_name
        assert read_om(model_path.read_bytes()).signature.signer == own_signing_key().fingerprint  # overwritten


def runs_shift(om: bytes) -> list[float]:
    with dfir.load(om) as model:
        model.feed_data({"x": np.ones([2], np.float32)})
        outputs, _, ret = model.fetch_data(timeout=5000)
    assert ret == 0
    return outputs[0].numpy().ravel().tolist()
