"""Module values and module opcode streams (docs/rdb-format.md section 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import constants as C
from .modules import ModuleFormatError, module_type_name, reader_for
from .records import ModuleInfo
from .values import ValueReader

if TYPE_CHECKING:
    from .records import KeyRecord


class ModuleValues(ValueReader):
    """Module values and module opcode streams."""

    def v_module(self, rec: KeyRecord) -> None:
        r = self.r
        module_id = r.length("module id")
        name, encver = module_type_name(module_id)
        reader = reader_for(name, encver)
        try:
            items = self.skip_module_opcodes(
                f"module {name} value", None if reader is None else reader.feed
            )
            fields = None if reader is None else reader.finish()
        except ModuleFormatError as e:  # what the module's own loader refuses
            raise self.corrupt(str(e)) from None
        rec.length = 1 if fields is None else fields["length"]
        rec.max_elem = 0 if fields is None else fields["max_elem"]
        rec.encoding = name
        rec.module = ModuleInfo(name, encver, items, fields)

    def skip_module_opcodes(self, what: str, visit=None) -> int:
        """Skip a module opcode stream up to its EOF opcode (docs/rdb-format.md section 6.2); returns its items.
        visit(opcode, value) sees each item: an integer's value, a string's length, None for
        a float (rdbscan/rdb/modules.py readers)."""
        r = self.r
        items = 0
        while True:
            op = r.length(f"{what}: opcode")
            if op == C.RDB_MODULE_OPCODE_EOF:
                return items
            if op in (C.RDB_MODULE_OPCODE_SINT, C.RDB_MODULE_OPCODE_UINT):
                v: int | None = r.length(f"{what}: integer")
            elif op == C.RDB_MODULE_OPCODE_FLOAT:
                r.skip(4, f"{what}: float")
                v = None
            elif op == C.RDB_MODULE_OPCODE_DOUBLE:
                r.skip(8, f"{what}: double")
                v = None
            elif op == C.RDB_MODULE_OPCODE_STRING:
                v = r.skip_string(f"{what}: string")
            else:
                raise self.corrupt(f"{what}: unknown module opcode {op}")
            if visit is not None:
                visit(op, v)
            items += 1

    def key_meta(self) -> None:
        """Redis RDB 13 KEY_META (opcode 243): per-key module metadata, skipped."""
        r = self.r
        classes = r.length("key metadata: classes")
        self.check_count(classes, "key metadata", 5)
        for _ in range(classes):
            r.skip(4, "key metadata: class spec")
            self.skip_module_opcodes("key metadata")
