"""Signing what the compiler writes: `dfir.compile`, offline compile and bundles (with the user's
own key unless another is named), and the compile cache, whose signed entries load under the same
trusted keys from a copied directory."""
from __future__ import annotations

import logging
import os
import shutil
from types import SimpleNamespace

import numpy as np
import pytest

import dfir
import dfir.data_type as dt
import dfir.dataflow as df
from dfir.driver.cache.index import read_index
from dfir.frontend.dataflow import names
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.ge.offline_compile import (GraphWithOptions, build_finalize, build_initialize, build_model,
                                     bundle_build_model, bundle_save_model, save_model)
from dfir.om.keys import SIGNING_KEY_ENV, TRUSTED_KEYS_ENV
from dfir.om.signature import signed, unsigned
from dfir.om.trust import HOME_ENV, add_trusted_keys, own_signing_key
from dfir.runtime.om import read_om
from dfir.tools.cli import main as cli

KEY = "signed"


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    monkeypatch.delenv(SIGNING_KEY_ENV, raising=False)
    monkeypatch.delenv(TRUSTED_KEYS_ENV, raising=False)
    build_finalize()
    yield
    build_finalize()


def scale_graph(name: str = "scale", scale: float = 2.0) -> Graph:
    graph = Graph(name)
    x = graph.data(0, shape=[-1, 2], dtype=dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.mul(x, graph.const(np.full([2], scale, np.float32)))])
    return graph


def flow_graph(offset: int = 1) -> df.FlowGraph:
    """x -> shift(+offset) -> scale(*2): a UDF and a GE graph, so the cache stores both kinds of unit."""
    names.reset()

    def shift(x):
        return x + offset
    x = df.FlowData(name="x")
    point = df.GraphProcessPoint(df.Framework.ONNX, scale_graph(), name="scaler")
    return df.FlowGraph([point.fnode(1, 1, name="scale")(df.pyflow(shift).fnode()(x))], name="pipe")


def signer(om: bytes) -> str | None:
    signature = read_om(om).signature
    return None if signature is None else signature.signer


def runs(om, **kwargs) -> list[float]:
    with dfir.load(om, **kwargs) as model:
        model.feed_data([np.ones([1, 2], np.float32)])
        outputs, _, ret = model.fetch_data(timeout=5000)
    assert ret == 0
    return outputs[0].numpy().ravel().tolist()


def compile_error(*args, **kwargs) -> str:
    with pytest.raises(GeError) as caught:
        dfir.compile(*args, **kwargs)
    return str(caught.value)


# ---------------------------------------------------------------- dfir.compile


def test_compile_signs_with_the_argument_and_leaves_the_unsigned_bytes_as_they_were(keys, tmp_path):
    default = dfir.compile(scale_graph()).om
    plain = bytes(unsigned(default))
    compiled = dfir.compile(scale_graph(), sign_with=keys.dev.private)
    assert signer(default) == own_signing_key().fingerprint and signer(compiled.om) == keys.dev.fingerprint
    assert bytes(unsigned(compiled.om)) == plain and compiled.om == signed(plain, keys.dev.key)
    path = compiled.save(tmp_path / "model")
    assert open(path, "rb").read() == compiled.om
    assert runs(path, trusted_keys=keys.dev.public) == [2.0, 2.0]


def test_compile_signs_with_the_environments_key_and_the_argument_wins(keys, monkeypatch):
    monkeypatch.setenv(SIGNING_KEY_ENV, keys.dev.private)
    assert signer(dfir.compile(scale_graph()).om) == keys.dev.fingerprint
    assert signer(dfir.compile(scale_graph(), sign_with=keys.other.key).om) == keys.other.fingerprint
    assert dfir.compile(scale_graph(), stop_after="shapes").om is None


def test_a_flow_graph_fed_under_both_keys_compiles_signed_and_loads(keys, monkeypatch):
    monkeypatch.setenv(SIGNING_KEY_ENV, keys.dev.private)
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)
    graph = flow_graph()
    try:
        assert graph.feed_data({"x": np.ones([1, 2], np.float32)}) == 0
        outputs, _, ret = graph.fetch_data(timeout=5000)
    finally:
        df.finalize()
    assert ret == 0 and outputs[0].numpy().ravel().tolist() == [4.0, 4.0]


def test_a_bad_signing_key_fails_the_compile(keys, monkeypatch, tmp_path):
    assert compile_error(scale_graph(), sign_with=1) == (
        "dfir.compile failed; sign_with must be the path of an Ed25519 private key PEM file, a "
        "SigningKey or an Ed25519PrivateKey, got int")
    assert compile_error(scale_graph(), sign_with=keys.dev.public) == (
        f"dfir.compile failed; the signing key sign_with={keys.dev.public} is not a PEM private key")
    missing = tmp_path / "missing.pem"
    monkeypatch.setenv(SIGNING_KEY_ENV, str(missing))
    assert compile_error(scale_graph()) == (
        f"dfir.compile failed; the signing key {SIGNING_KEY_ENV}={missing} cannot be read: "
        f"No such file or directory")


# ---------------------------------------------------------------- offline compile


def test_build_model_and_bundles_are_signed_and_load_under_the_trusted_key(keys, tmp_path):
    build_initialize({})
    model = build_model(scale_graph(), sign_with=keys.dev.private)
    save_model(str(tmp_path / "model"), model)
    assert signer((tmp_path / "model.om").read_bytes()) == keys.dev.fingerprint
    assert runs(str(tmp_path / "model.om"), trusted_keys=keys.dev.public) == [2.0, 2.0]
    bundle = bundle_build_model([GraphWithOptions(scale_graph("double", 2.0)),
                                 GraphWithOptions(scale_graph("triple", 3.0))], sign_with=keys.dev.key)
    bundle_save_model(str(tmp_path / "bundle"), bundle)
    om = read_om(str(tmp_path / "bundle.om"))
    assert om.signature.signer == keys.dev.fingerprint
    assert [member.om.signature for member in om.bundle] == [None, None]
    loaded = dfir.load(str(tmp_path / "bundle.om"), trusted_keys=keys.dev.public)
    try:
        assert list(loaded.models) == ["double", "triple"]
    finally:
        loaded.close()
    own_bundle = bundle_build_model([GraphWithOptions(scale_graph("double", 2.0)),
                                     GraphWithOptions(scale_graph("triple", 3.0))])
    assert unsigned(bundle._data) == unsigned(own_bundle._data)
    assert signer(own_bundle._data) == own_signing_key().fingerprint


def test_offline_compile_signs_with_the_environments_key_and_reports_a_bad_one(keys, monkeypatch):
    build_initialize({})
    monkeypatch.setenv(SIGNING_KEY_ENV, keys.dev.private)
    assert signer(build_model(scale_graph())._data) == keys.dev.fingerprint
    assert signer(build_model(scale_graph(), sign_with=keys.other.private)._data) == keys.other.fingerprint
    with pytest.raises(GeError) as caught:
        build_model(scale_graph(), sign_with=b"key")
    assert str(caught.value) == ("BuildModel failed; sign_with must be the path of an Ed25519 private "
                                 "key PEM file, a SigningKey or an Ed25519PrivateKey, got bytes")
    with pytest.raises(GeError) as caught:
        bundle_build_model([GraphWithOptions(scale_graph("a")), GraphWithOptions(scale_graph("b"))],
                           sign_with=keys.dev.public)
    assert str(caught.value) == (f"BundleBuildModel failed; the signing key sign_with={keys.dev.public} "
                                 f"is not a PEM private key")


# ---------------------------------------------------------------- the compile cache


def cache_options(directory) -> dict[str, str]:
    return {"ge.graph_compiler_cache_dir": str(directory), "ge.graph_key": KEY}


def cache_files(directory) -> list[str]:
    """The cached models and units of the key."""
    (entry,) = read_index(str(directory), KEY)
    units = [os.path.join(directory, KEY, name) for name in sorted(os.listdir(directory / KEY))]
    return [str(directory / entry.cache_file_name), *units]


def unsign_cache(directory) -> None:
    """Strip the signatures of the key's cached model and units: files anyone could have put there."""
    for path in cache_files(directory):
        with open(path, "rb") as file:
            data = file.read()
        with open(path, "wb") as out:
            out.write(bytes(unsigned(data)))


def status(compiled) -> str:
    return next(line for line in compiled.report if line.startswith("cache: graph key"))


@pytest.fixture
def signed_cache(keys, tmp_path):
    """A cache directory filled by a compile signing with the dev key."""
    directory = tmp_path / "dev-cache"
    directory.mkdir()
    compiled = dfir.compile(flow_graph(), cache_options(directory), sign_with=keys.dev.private)
    return SimpleNamespace(directory=directory, om=compiled.om)


def test_the_cache_signs_its_models_and_units(keys, signed_cache):
    assert signer(signed_cache.om) == keys.dev.fingerprint
    files = cache_files(signed_cache.directory)
    assert len(files) == 4  # the model, two process points, the df.graph
    assert {signer(open(path, "rb").read()) for path in files} == {keys.dev.fingerprint}


def test_a_copied_signed_cache_loads_under_the_trusted_key(keys, signed_cache, tmp_path, monkeypatch):
    target = tmp_path / "target-cache"
    shutil.copytree(signed_cache.directory, target)
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "target-home"))  # another user, with a key of its own
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)  # who trusts dev
    warm = dfir.compile(flow_graph(), cache_options(target))
    assert status(warm).endswith("2 of 2 process points reused") and " hit " in status(warm)
    assert warm.om == signed(signed_cache.om, own_signing_key()) and runs(warm.om) == [4.0, 4.0]
    changed = dfir.compile(flow_graph(offset=2), cache_options(target))  # reuses the signed units
    assert "miss" in status(changed) and "1 of 2 process points reused" in status(changed)
    assert cli(["cache", "verify", str(target)]) == 0  # the new model and unit: the target's own key
    monkeypatch.delenv(TRUSTED_KEYS_ENV)
    assert cli(["cache", "verify", str(target)]) == 1  # dev's units: not trusted without DFIR_TRUSTED_KEYS


def test_unsigned_cache_entries_are_dropped_and_compiled_again_under_trusted_keys(keys, tmp_path, monkeypatch,
                                                                                   caplog):
    directory = tmp_path / "cache"
    directory.mkdir()
    dfir.compile(flow_graph(), cache_options(directory))
    unsign_cache(directory)
    model = cache_files(directory)[0]
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        again = dfir.compile(flow_graph(), cache_options(directory), sign_with=keys.dev.private)
    assert (f"cached model {model} is not usable (the .om file is unsigned; only files signed by a "
            f"trusted key load (trusted keys: your own key {own_signing_key().fingerprint}, "
            f"{TRUSTED_KEYS_ENV}={keys.dev.public})); compiling again") in caplog.text
    assert "subgraph cache" in caplog.text and "is not usable (the .om file is unsigned" in caplog.text
    assert "miss" in status(again) and "0 of 2 process points reused" in status(again)
    assert not os.path.exists(model)
    assert {signer(open(path, "rb").read()) for path in cache_files(directory)} == {keys.dev.fingerprint}


def test_a_signing_compile_never_signs_what_it_did_not_write(keys, tmp_path, caplog):
    directory = tmp_path / "cache"
    directory.mkdir()
    dfir.compile(flow_graph(), cache_options(directory))
    unsign_cache(directory)  # unsigned entries, anyone's
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        again = dfir.compile(flow_graph(), cache_options(directory), sign_with=keys.dev.private)
    assert "0 of 2 process points reused" in status(again)
    assert "is not usable (the .om file is unsigned" in caplog.text


def test_cache_entries_signed_by_an_untrusted_key_or_badly_are_dropped(keys, signed_cache, caplog):
    directory = signed_cache.directory
    model, *units = cache_files(directory)
    data = bytearray(open(units[0], "rb").read())
    data[-20] ^= 1  # a byte of the unit's signature
    with open(units[0], "wb") as out:
        out.write(bytes(data))
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        again = dfir.compile(flow_graph(), cache_options(directory), sign_with=keys.other.private)
    own = own_signing_key().fingerprint
    assert (f"cached model {model} is not usable (the .om file is signed by an untrusted key "
            f"{keys.dev.fingerprint}; the trusted keys (your own key {own} and the signing key "
            f"sign_with={keys.other.private}) are {', '.join(sorted([own, keys.other.fingerprint]))}); "
            "compiling again") in caplog.text
    assert "0 of 2 process points reused" in status(again)
    assert signer(again.om) == keys.other.fingerprint


def test_a_trusted_cache_hit_is_signed_again_with_this_compiles_key(keys, signed_cache, monkeypatch, caplog):
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)
    with caplog.at_level(logging.WARNING, logger="dfir.cache"):
        warm = dfir.compile(flow_graph(), cache_options(signed_cache.directory), sign_with=keys.other.private)
    assert " hit " in status(warm) and caplog.text == ""
    assert warm.om == signed(signed_cache.om, keys.other.key)


def test_a_bad_trusted_keys_file_fails_a_cache_compile(keys, signed_cache, monkeypatch, tmp_path):
    missing = tmp_path / "missing.pem"
    monkeypatch.setenv(TRUSTED_KEYS_ENV, str(missing))
    assert compile_error(flow_graph(), cache_options(signed_cache.directory)) == (
        f"dfir.compile failed; the trusted keys file {TRUSTED_KEYS_ENV}={missing} cannot be read: "
        f"No such file or directory")


def test_dfir_cache_verify_and_prune_check_signatures_under_trusted_keys(keys, signed_cache, monkeypatch,
                                                                        tmp_path, capsys):
    directory = signed_cache.directory
    model, *units = cache_files(directory)
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))  # a home of this test's, trusting no added key yet
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)
    assert cli(["cache", "verify", str(directory)]) == 0
    with open(units[0], "wb") as out:
        out.write(bytes(unsigned(open(units[0], "rb").read())))
    capsys.readouterr()
    assert cli(["cache", "verify", str(directory)]) == 1
    name = os.path.relpath(units[0], directory)
    assert (f"BAD  {name}: the .om file is unsigned; only files signed by a trusted key load (trusted "
            f"keys: {TRUSTED_KEYS_ENV}={keys.dev.public})") in capsys.readouterr().out  # no own key made yet
    monkeypatch.setenv(TRUSTED_KEYS_ENV, str(tmp_path / "missing.pem"))
    assert cli(["cache", "prune", str(directory)]) == 1
    assert "cannot be read" in capsys.readouterr().err and os.path.exists(units[0])
    monkeypatch.setenv(TRUSTED_KEYS_ENV, keys.dev.public)
    assert cli(["cache", "prune", str(directory)]) == 0
    assert not os.path.exists(units[0]) and os.path.exists(model)
    monkeypatch.delenv(TRUSTED_KEYS_ENV)
    assert cli(["cache", "verify", str(directory)]) == 1  # dev is trusted no more
    add_trusted_keys(keys.dev.public)
    assert cli(["cache", "verify", str(directory)]) == 0
