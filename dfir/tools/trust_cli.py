"""`dfir trust`: the keys whose `.om` files `dfir.load`, `dfir run` and the compile cache run.

    dfir trust ls                      every trusted key, and where it comes from
    dfir trust add KEY.pub.pem ...     trust the public keys of these files
    dfir trust rm FINGERPRINT          stop trusting a key added with `trust add`
    dfir trust export [-o FILE]        your own public key (made on first use), to give to others

The keys live in the dfir home (`dfir.om.trust`); docs/security.md says how they are used.
"""
from __future__ import annotations

import argparse
import os
import sys

from dfir.core.atomic_file import write_atomic
from dfir.core.errors import GeError
from dfir.om.keys import SIGNING_KEY_ENV, env_path, load_signing_key
from dfir.om.trust import (add_trusted_keys, added_keys, env_trusted_keys, own_key_path, own_public_key_path,
                           own_signing_key, remove_trusted_key)

__all__ = ["add_trust_commands"]


def add_trust_commands(commands) -> None:
    """Add `trust ls|add|rm|export` to the `dfir` command's subparsers."""
    trust_cmd = commands.add_parser("trust", help="list, add and remove the keys whose .om files run")
    actions = trust_cmd.add_subparsers(required=True, metavar="ACTION")
    ls_cmd = actions.add_parser("ls", help="list every trusted key and where it comes from")
    ls_cmd.set_defaults(command=_trust_ls)
    add_cmd = actions.add_parser("add", help="trust the public keys of PEM files (NAME.pub.pem)")
    add_cmd.add_argument("keys", nargs="+", metavar="KEY.pub.pem", help="a PEM file of public keys")
    add_cmd.set_defaults(command=_trust_add)
    rm_cmd = actions.add_parser("rm", help="stop trusting a key added with `dfir trust add`")
    rm_cmd.add_argument("fingerprint", help="the key's fingerprint, as `dfir trust ls` shows it")
    rm_cmd.set_defaults(command=_trust_rm)
    export_cmd = actions.add_parser("export", help="print (or write) your own public key, to trust elsewhere")
    export_cmd.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead of stdout")
    export_cmd.set_defaults(command=_trust_export)


def _trust_ls(args: argparse.Namespace) -> int:
    own = own_signing_key(create=False)
    rows = [("own", own.fingerprint, own_key_path()) if own is not None else
            ("own", "(none yet)", f"{own_key_path()}: made by the first compile or `dfir trust export`")]
    signing_path = env_path(SIGNING_KEY_ENV, "an Ed25519 private key PEM file")
    if signing_path is not None:
        key = load_signing_key(signing_path, f"{SIGNING_KEY_ENV}={signing_path}")
        rows.append(("signing", key.fingerprint, f"{SIGNING_KEY_ENV}={signing_path}"))
    listed = env_trusted_keys()
    if listed is not None:
        rows += [("env", fingerprint, listed.source) for fingerprint in listed.fingerprints]
    rows += [("added", key.fingerprint, key.path) for key in added_keys()]
    for kind, fingerprint, where in rows:
        print(f"{kind:<8} {fingerprint:<24} {where}")
    return 0


def _trust_add(args: argparse.Namespace) -> int:
    for path in args.keys:
        for fingerprint, new in add_trusted_keys(path):
            print(f"{'trusted' if new else 'already trusted'} {fingerprint} (from {path})")
    return 0


def _trust_rm(args: argparse.Namespace) -> int:
    removed = remove_trusted_key(args.fingerprint)
    print(f"removed {removed}")
    return 0


def _trust_export(args: argparse.Namespace) -> int:
    path = own_public_key_path()
    fingerprint = own_signing_key().fingerprint
    with open(path, "rb") as file:
        pem = file.read()
    if args.output:
        try:
            write_atomic(args.output, pem)
        except OSError as error:
            raise GeError(f"cannot write {args.output}: {error.strerror}") from None
        print(f"wrote {args.output} (your public key {fingerprint}, also at {path}); where your .om "
              f"files are loaded: dfir trust add {os.path.basename(args.output)}")
        return 0
    sys.stdout.write(pem.decode())
    print(f"your public key {fingerprint} ({path}); where your .om files are loaded: "
          "dfir trust add FILE (this key saved to FILE)", file=sys.stderr)
    return 0
