"""`fingerprint-subgraphs`: a structural content key on every process point and graph.

Reads: the whole module. Writes: `fingerprint = "sha256:<hex>"` on every `df.func_pp`,
`df.graph_pp`, `df.flow_graph_pp`, `ge.graph` and `df.graph` (sub-FlowGraphs included). The compile cache keys a graph's cached model by its
`df.graph` fingerprint and each process point's cached compiled form by the point's own; the
summary counts the ops that carry one. With `keep_existing`, an op that already carries a
fingerprint keeps it, and ops referring to it hash that one: the compile cache sets the
fingerprints of the process points it reuses without importing their graphs.

    df.func_pp @f_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"} payload "gASV..."
  ==>
    df.func_pp @f_pp [#df.func<"f"(0) -> (0)>] {fingerprint = "sha256:3f2a...", kind = "py_func"} payload "gASV..."

1. Each top-level symbol op gets a *structural digest*: the SHA-256 of a canonical form of the
   ops it holds, in order: op name; operands as the numbers of the values they use (values are
   numbered in definition order, so SSA names never matter); result types; properties and
   attributes sorted by name (`fingerprint` itself left out) in their printed form; the shape
   of regions and blocks. A dense constant hashes its raw bytes, not its printed hex; a UDF
   payload hashes its bytes as shipped (made canonical by `dfir.core.canonical_payload`: cloudpickle's
   per-process class ids).
2. Its key hashes that digest and, for each symbol it refers to (a node to its process point, a
   graph process point to its `ge.graph`, a FlowGraph process point to its `df.graph`, an
   invoked closure to its process point), the symbol and that symbol's key: a change below a
   process point changes its key, and any change changes the graph's. A sub-FlowGraph a UDF
   invokes is keyed with the graph of the node running the UDF, not with the UDF (it runs
   beside it, as nodes of the plan): changing one of its nodes recompiles that node only. The digest and the symbols are the op's `Structure`, from which
   `fingerprint_from` computes the key again given the keys of the symbols.
3. Every key is salted with the `salt` option, which the compiler sets to a digest of dfir's
   version, the `.om` IR version, the compile options and the configuration files that affect
   the output (`dfir.driver.cache.settings.compile_salt`).

Attributes are printed once per distinct attribute, and nothing is printed whole, so hashing
costs a small fraction of printing the module.
"""
from __future__ import annotations

import base64
import hashlib
import io
from collections import Counter
from dataclasses import dataclass
from typing import Mapping

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from dfir.core.canonical_payload import canonical_payload
from dfir.dialects import df, ge

__all__ = ["FINGERPRINT_ATTR", "FingerprintSubgraphs", "Structure", "fingerprint_from", "fingerprint_module",
           "fingerprint_of"]

FINGERPRINT_ATTR = "fingerprint"
_KEYED = (df.FuncPpOp, df.GraphPpOp, df.FlowGraphPpOp, ge.GraphOp, df.GraphOp)


def fingerprint_of(op: Operation) -> str | None:
    """The `fingerprint` an op carries, if the pass has run."""
    attr = op.attributes.get(FINGERPRINT_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


@dataclass(frozen=True)
class FingerprintSubgraphs(ModulePass):
    name = "fingerprint-subgraphs"

    salt: str = ""
    keep_existing: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fingerprint_module(op, self.salt, self.keep_existing)

    def summary(self, op: ModuleOp) -> str:
        counts = Counter(top.name for top in op.ops if fingerprint_of(top) is not None)
        return "fingerprinted " + (", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "nothing")


@dataclass(frozen=True)
class Structure:
    """What an op's key hashes besides the salt: its structural digest (step 1) and the keyed
    symbols it refers to, in order (step 2)."""

    digest: str
    references: tuple[str, ...]


def fingerprint_from(structure: Structure, keys: Mapping[str, str], salt: str = "") -> str:
    """The key of an op of `structure` whose references have the `keys` given (by symbol):
    what the pass computes, for an op the compile cache did not build."""
    digest = hashlib.sha256(f"salt {salt}\0".encode())
    digest.update(structure.digest.encode())
    for symbol in structure.references:
        digest.update(f"\0@{symbol}={keys[symbol]}".encode())
    return "sha256:" + digest.hexdigest()


def fingerprint_module(module: ModuleOp, salt: str = "", keep_existing: bool = False) -> dict[str, Structure]:
    """The pass's work: the fingerprint of every keyed top-level op. Returns the structure of
    each op it hashed, by symbol, which the compile cache keeps to key the op again later."""
    fingerprinter = _Fingerprinter(module, salt, keep_existing)
    keys = {top: fingerprinter.key(top) for top in module.ops if isinstance(top, _KEYED)}
    for top, key in keys.items():
        top.attributes[FINGERPRINT_ATTR] = StringAttr(key)
    return fingerprinter.structures


class _Fingerprinter:
    """Keys of a module's symbol ops, each computed once."""

    def __init__(self, module: ModuleOp, salt: str, keep_existing: bool):
        self.symbols = {top.sym_name.data: top for top in module.ops
                        if isinstance(getattr(top, "sym_name", None), StringAttr)}
        self.salt = salt
        self.canonicalizer = _Canonicalizer()
        self.keep_existing = keep_existing
        self.keys: dict[Operation, str] = {}
        self.structures: dict[str, Structure] = {}
        self.visiting: set[Operation] = set()

    def key(self, top: Operation) -> str:
        if top not in self.keys:
            existing = fingerprint_of(top) if self.keep_existing else None
            self.keys[top] = existing if existing is not None else self._hash(top)
        return self.keys[top]

    def _hash(self, top: Operation) -> str:
        self.visiting.add(top)
        digest, references = self.canonicalizer.digest(top)
        references = self._closure_graphs(top, references)
        keyed = {symbol: self.key(target) for symbol in dict.fromkeys(references)
                 if isinstance(target := self.symbols.get(symbol), _KEYED) and target not in self.visiting}
        structure = self.structures[top.sym_name.data] = Structure(digest, tuple(keyed))
        self.visiting.discard(top)
        return fingerprint_from(structure, keyed, self.salt)


    def _closure_graphs(self, top: Operation, references: list[str]) -> list[str]:
        """`references` of `top` with the sub-FlowGraphs UDFs invoke moved from the UDF to the
        graph of the nodes running it (step 2)."""
        if isinstance(top, df.FuncPpOp):
            return [s for s in references if not isinstance(self.symbols.get(s), df.FlowGraphPpOp)]
        if not isinstance(top, df.GraphOp):
            return references
        extra = []
        for symbol in references:
            udf = self.symbols.get(symbol)
            if isinstance(udf, df.FuncPpOp):
                extra += [c.pp.root_reference.data for c in udf.closures.block.ops
                          if isinstance(self.symbols.get(c.pp.root_reference.data), df.FlowGraphPpOp)]
        return references + extra


class _Canonicalizer:
    """Structural digests (step 1), printing each distinct attribute once."""

    def __init__(self):
        self.texts: dict[Attribute, str] = {}

    def digest(self, top: Operation) -> tuple[str, list[str]]:
        """The structural digest of `top` and the symbols it and the ops inside it refer to."""
        canonical, references = self._canonical(top)
        return hashlib.sha256(canonical.encode()).hexdigest(), references

    def _canonical(self, top: Operation) -> tuple[str, list[str]]:
        """The canonical text of `top` and every op inside it, and the symbols they refer to."""
        ops = list(top.walk())
        numbers: dict[SSAValue, int] = {}
        for op in ops:  # a graph region may use a value before the op defining it
            for value in op.results:
                numbers[value] = len(numbers)
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        numbers[arg] = len(numbers)
        parts: list[str] = []
        references: list[str] = []
        for op in ops:
            parts.append(op.name)
            parts.append(" ".join(str(numbers.get(v, -1)) for v in op.operands))
            parts.append(" ".join(self._text(r.type) for r in op.results))
            for kind, attrs in (("p", op.properties), ("a", op.attributes)):
                for name in sorted(attrs):
                    if name == FINGERPRINT_ATTR and op is top:
                        continue
                    attr = attrs[name]
                    parts.append(f"{kind}:{name}={self._attribute(op, name, attr)}")
                    if isinstance(attr, SymbolRefAttr):
                        references.append(attr.root_reference.data)
            for region in op.regions:
                shape = [f"{len(block.ops)}({' '.join(self._text(a.type) for a in block.args)})"
                         for block in region.blocks]
                parts.append("region " + " ".join(shape))
            parts.append(f"successors {len(op.successors)}")
        return "\0".join(parts), references

    def _attribute(self, op: Operation, name: str, attr: Attribute) -> str:
        if isinstance(op, df.FuncPpOp) and name == "payload" and isinstance(attr, StringAttr):
            payload = canonical_payload(base64.b64decode(attr.data))
            return "payload " + hashlib.sha256(payload).hexdigest()
        if type(attr) is StringAttr:
            return repr(attr.data)
        if isinstance(attr, DenseIntOrFPElementsAttr):
            return f"dense {self._text(attr.type)} {hashlib.sha256(attr.data.data).hexdigest()}"
        return self._text(attr)

    def _text(self, attr: Attribute) -> str:
        """The printed form of `attr`, printed once per distinct attribute."""
        text = self.texts.get(attr)
        if text is None:
            stream = io.StringIO()
            Printer(stream=stream).print_attribute(attr)
            text = self.texts[attr] = stream.getvalue()
        return text
