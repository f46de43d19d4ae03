"""Module values: the type name a module id encodes, and what rdbscan reads from the values of
module types whose serialization is public (docs/modules.md).

A module value is a stream of typed items (integers, floats, strings) up to an EOF opcode; the
parser walks it item by item and hands each item to the reader of its type, if rdbscan has one
(`reader_for`).  A reader keeps counters and a few lengths, never the items themselves, so a
module value costs bounded memory however large it is.  A value of a type without a reader is
skipped with its type name kept; its memory is then its serialized size, a lower bound.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import constants as C

if TYPE_CHECKING:
    from .records import ModuleInfo

# moduleTypeEncodeId (Redis src/module.c): 9 characters of 6 bits, then a 10-bit encoding version.
MODULE_CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

_OPCODE_NAMES = {
    C.RDB_MODULE_OPCODE_SINT: "signed integer",
    C.RDB_MODULE_OPCODE_UINT: "unsigned integer",
    C.RDB_MODULE_OPCODE_FLOAT: "float",
    C.RDB_MODULE_OPCODE_DOUBLE: "double",
    C.RDB_MODULE_OPCODE_STRING: "string",
}


def module_type_name(module_id: int) -> tuple[str, int]:
    """(9-character type name, encoding version) of a 64-bit module type id
    (moduleTypeNameByID in Redis src/module.c)."""
    encver = module_id & 1023
    x = module_id >> 10
    chars = []
    for _ in range(9):
        chars.append(MODULE_CHARSET[x & 63])
        x >>= 6
    return "".join(reversed(chars)), encver


class ModuleFormatError(ValueError):
    """A module value that its module's own loader would refuse."""


# -- vector sets (Redis 8 built-in module "vectorset") ----------------------------------------
# VectorSetRdbSave in Redis modules/vector-sets/vset.c (identical in 8.0-8.6): dimension, element
# count, hnsw config (quantization | M << 8), save flags; when projected, the input dimension and
# the projection matrix (4 * input * output bytes); then per element, head of the node list
# first: its name, its JSON attribute when the set has any ("" for none), the quantized vector,
# and the node's serialized parameters (hnsw_serialize_node: id, version|level, then per layer
# num_links, max_links, the linked ids, worst link).
VSET_FLAG_HAS_PROJMATRIX = 1
VSET_FLAG_HAS_ATTRIBS = 2
VSET_QUANT_NAMES = {0: "f32", 1: "int8", 2: "bin"}  # HNSW_QUANT_NONE/Q8/BIN, as VINFO says
VSET_MAX_VECTOR_DIM = 1 << 16
VSET_SCAN_EFFORT = 20  # elements VectorSetMemUsage samples for the name and attribute sizes

# x86-64 sizes of the structs VectorSetMemUsage charges (vset.c, hnsw.h).
VSET_OBJECT = 112  # struct vsetObject (a pthread_rwlock_t of 56 bytes inside)
HNSW_STRUCT = 1672  # HNSW: 32 epochs, a rwlock and 32 mutexes (HNSW_MAX_THREADS = 32)
HNSW_NODE = 312  # hnswNode without its layers (32 visited epochs)
HNSW_LAYER = 24  # hnswNodeLayer
ROBJ = 16
EMBSTR_SIZE_LIMIT = 44  # OBJ_ENCODING_EMBSTR_SIZE_LIMIT: longer argv strings are raw


def quant_bytes(quant: int, dim: int) -> int:
    """hnsw_quants_bytes: bytes of one stored vector."""
    if quant == 0:
        return 4 * dim
    if quant == 1:
        return dim
    return (dim + 63) // 64 * 8


class VectorSetReader:
    """Reads a vectorset value item by item (feed), as VectorSetRdbLoad would, keeping what
    VectorSetMemUsage needs: counts, the first few name and attribute lengths."""

    name = "vectorset"

    def __init__(self):
        self.dim = self.count = self.quant = self.m = self.flags = 0
        self.projection_input_dim = 0
        self.nodes = 0
        self.attributes = 0  # elements with a non-empty attribute (numattribs)
        self.max_name = 0
        self.name_lengths: list[int] = []  # of the first VSET_SCAN_EFFORT elements
        self.attribute_lengths: list[int] = []
        self.level0_max_links = 0  # of the head node, which VectorSetMemUsage uses
        self.done = False
        self._steps = self._walk()
        next(self._steps)

    def feed(self, op: int, value) -> None:
        self._steps.send((op, value))

    def finish(self) -> dict:
        if not self.done:
            raise ModuleFormatError(
                f"vectorset value ends after {self.nodes} of {self.count} elements"
            )
        return {
            "length": self.count,
            "max_elem": self.max_name,
            "dim": self.dim,
            "quant": VSET_QUANT_NAMES[self.quant],
            "m": self.m,
            "projection_input_dim": self.projection_input_dim,
            "attributes": self.attributes,
            "mem_usage_fields": self._mem_fields(),
        }

    def _mem_fields(self) -> tuple:
        return (
            self.dim,
            self.count,
            self.quant,
            self.projection_input_dim,
            self.attributes,
            self.level0_max_links,
            tuple(self.name_lengths),
            tuple(self.attribute_lengths),
        )

    @staticmethod
    def _take(want: int, what: str):
        op, value = yield
        if op != want:
            raise ModuleFormatError(
                f"vectorset {what}: expected a {_OPCODE_NAMES[want]}, "
                f"found a {_OPCODE_NAMES.get(op, op)}"
            )
        return value

    def _walk(self):
        uint, string, take = C.RDB_MODULE_OPCODE_UINT, C.RDB_MODULE_OPCODE_STRING, self._take
        self.dim = yield from take(uint, "dimension")
        if not 0 < self.dim <= VSET_MAX_VECTOR_DIM:
            raise ModuleFormatError(
                f"vectorset dimension {self.dim} is outside 1..{VSET_MAX_VECTOR_DIM}"
            )
        self.count = yield from take(uint, "element count")
        config = yield from take(uint, "hnsw config")
        self.quant, self.m = config & 0xFF, ((config >> 8) & 0xFFFF) or 16
        if self.quant not in VSET_QUANT_NAMES:
            raise ModuleFormatError(f"vectorset quantization {self.quant} is not 0, 1 or 2")
        self.flags = yield from take(uint, "save flags")
        if self.flags & VSET_FLAG_HAS_PROJMATRIX:
            self.projection_input_dim = yield from take(uint, "projection input dimension")
            size = yield from take(string, "projection matrix")
            if size != 4 * self.projection_input_dim * self.dim:
                raise ModuleFormatError(
                    f"vectorset projection matrix of {size} bytes, not "
                    f"4 x {self.projection_input_dim} x {self.dim}"
                )
        attrs = self.flags & VSET_FLAG_HAS_ATTRIBS
        vector = quant_bytes(self.quant, self.dim)
        while self.nodes < self.count:
            name = yield from take(string, "element name")
            sampled = self.nodes < VSET_SCAN_EFFORT
            if sampled:
                self.name_lengths.append(name)
            self.max_name = max(self.max_name, name)
            if attrs:
                attr = yield from take(string, "element attribute")
                if attr:
                    self.attributes += 1
                    if sampled:
                        self.attribute_lengths.append(attr)
            size = yield from take(string, "vector")
            if size != vector:
                raise ModuleFormatError(f"vectorset vector of {size} bytes, not {vector}")
            params = yield from take(uint, "node parameter count")
            for j in range(params):
                p = yield from take(uint, "node parameter")
                if j == 3 and self.nodes == 0:
                    self.level0_max_links = p
            self.nodes += 1
        self.done = True
        op, _ = yield
        raise ModuleFormatError(f"vectorset value goes on after its {self.count} elements")


def _module_string(length: int, J) -> int:
    """RedisModule_MallocSizeString of a string a client sent: robj + sds, one allocation up
    to EMBSTR_SIZE_LIMIT bytes (embstr), else robj and a separate sds."""
    if length <= EMBSTR_SIZE_LIMIT:
        return J(ROBJ + 3 + length + 1)
    hdr = 3 if length < 256 else 5 if length < 65536 else 9
    return ROBJ + J(hdr + length + 1)


def vectorset_mem_usage(fields: tuple, J) -> int:
    """VectorSetMemUsage (vset.c), term by term, from the fields VectorSetReader kept; J rounds
    an allocation to the allocator's size class."""
    dim, n, quant, input_dim, attributes, l0_links, names, attrs = fields
    size = VSET_OBJECT + HNSW_STRUCT
    if input_dim:
        size += 4 * input_dim * dim
    if n == 0:
        return size
    size += HNSW_NODE * n
    size += quant_bytes(quant, dim) * n
    size += HNSW_LAYER * n * 4 // 3  # "1.33 layers per node"
    size += 8 * l0_links * n
    size += 8 * (l0_links // 2) * n // 3
    if names:
        size += sum(_module_string(x, J) for x in names) // len(names) * n
    if attrs:
        size += sum(_module_string(x, J) for x in attrs) // len(attrs) * attributes
    else:
        size += 64 * attributes  # "a fixed arbitrary value"
    size += 16 * n  # the element -> node dict, "an approximation"
    return size


READERS = {"vectorset": (0, VectorSetReader)}  # type name: (encoding version, reader)
ESTIMATED = tuple(READERS)  # types whose memory rdbscan estimates


def reader_for(name: str, encver: int):
    """A reader for values of this module type and encoding version, or None."""
    known = READERS.get(name)
    if known is None or known[0] != encver:
        return None
    return known[1]()


def value_bytes(module: ModuleInfo, serialized: int, J) -> tuple[int, bool]:
    """(bytes of a module value without its object header, whether that is only a lower
    bound): the module's own memory estimate where rdbscan reads the type, else the serialized
    size."""
    fields = module.fields
    if fields is not None and module.name == "vectorset":
        return vectorset_mem_usage(fields["mem_usage_fields"], J), False
    return serialized, True
