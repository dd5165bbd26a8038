"""`fingerprint-subgraphs`: a structural content key on every process point and graph.

Reads: the whole module. Writes: `fingerprint = "sha256:<hex>"` on every `df.func_pp`,
`df.graph_pp`, `ge.graph` and `df.graph`. The compile cache keys a graph's cached model by its
`df.graph` fingerprint and each process point's cached compiled form by the point's own; the
summary counts what was fingerprinted.

    df.func_pp @f_pp [#df.func<"f"(0) -> (0)>] {kind = "py_func"} payload "gASV..."
  ==>
    df.func_pp @f_pp [#df.func<"f"(0) -> (0)>] {fingerprint = "sha256:3f2a...", kind = "py_func"} payload "gASV..."

1. Each top-level symbol op is hashed from a canonical form of the ops it holds, in order: op
   name; operands as the numbers of the values they use (values are numbered in definition
   order, so SSA names never matter); result types; properties and attributes sorted by name
   (`fingerprint` itself left out) in their printed form; the shape of regions and blocks.
   A dense constant hashes its raw bytes, not its printed hex; a UDF payload hashes its bytes
   as shipped (made canonical by `dfir.cache.payload`: cloudpickle's per-process class ids).
2. An op that refers to another symbol (a node to its process point, a graph process point to
   its `ge.graph`, an invoked closure to its process point) hashes that symbol's fingerprint
   too: a change below a process point changes its key, and any change changes the graph's.
3. Every key is salted with dfir's version, the `.om` IR version and the `salt` option, which
   the compiler sets to a digest of the compile options and configuration files that affect
   the output (`dfir.cache.settings.compile_salt`).

Attributes are printed once per distinct attribute, and nothing is printed whole, so hashing
costs a small fraction of printing the module.
"""
from __future__ import annotations

import base64
import hashlib
import io
from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from dfir.dialects import df, ge

__all__ = ["FINGERPRINT_ATTR", "FingerprintSubgraphs", "fingerprint_of"]

FINGERPRINT_ATTR = "fingerprint"
_KEYED = (df.FuncPpOp, df.GraphPpOp, ge.GraphOp, df.GraphOp)


def fingerprint_of(op: Operation) -> str | None:
    """The `fingerprint` an op carries, if the pass has run."""
    attr = op.attributes.get(FINGERPRINT_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


@dataclass(frozen=True)
class FingerprintSubgraphs(ModulePass):
    name = "fingerprint-subgraphs"

    salt: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fingerprinter = _Fingerprinter(op, self.salt)
        keyed = [top for top in op.ops if isinstance(top, _KEYED)]
        keys = {top: fingerprinter.key(top) for top in keyed}
        for top, key in keys.items():
            top.attributes[FINGERPRINT_ATTR] = StringAttr(key)

    def summary(self, op: ModuleOp) -> str:
        counts = Counter(top.name for top in op.ops if fingerprint_of(top) is not None)
        return "fingerprinted " + (", ".join(f"{n} {name}" for name, n in sorted(counts.items())) or "nothing")


class _Fingerprinter:
    """Keys of a module's symbol ops, each computed once."""

    def __init__(self, module: ModuleOp, salt: str):
        import dfir
        from dfir.lowering.om_schema import OM_IR_VERSION
        self.symbols = {top.sym_name.data: top for top in module.ops
                        if isinstance(getattr(top, "sym_name", None), StringAttr)}
        self.salt = f"dfir {dfir.__version__}\0om ir {OM_IR_VERSION}\0salt {salt}\0".encode()
        self.texts: dict[Attribute, str] = {}
        self.keys: dict[Operation, str] = {}
        self.visiting: set[Operation] = set()

    def key(self, top: Operation) -> str:
        if top not in self.keys:
            self.visiting.add(top)
            canonical, references = self._canonical(top)
            digest = hashlib.sha256(self.salt)
            digest.update(canonical.encode())
            for symbol in dict.fromkeys(references):
                target = self.symbols.get(symbol)
                if isinstance(target, _KEYED) and target not in self.visiting:
                    digest.update(f"\0@{symbol}={self.key(target)}".encode())
            self.visiting.discard(top)
            self.keys[top] = "sha256:" + digest.hexdigest()
        return self.keys[top]

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
            from dfir.cache.payload import canonical_payload
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
