"""Redis 8.10 hashes that use a template (RDB 15; docs/rdb-format.md section 4.6) and Valkey 9.2
path hashes (VALKEY081, type 23).

Redis 8.10 writes each set of field names shared by many hashes once, at the top of the file
(opcode 242, HASH_TEMPLATE: LEN id, LEN field count, the names sorted by length then bytes), and
each hash that uses it as a reference and its values only:
- type 30 (TMPL_LP_REF): STR listpack: the template id (an integer), then the values;
- type 32 (TMPL_ARRAY_REF): LEN template id, then one STR per field.
Types 29 and 31 are the self-contained forms DUMP writes (accepted from files too): LEN fields
format (0: one listpack STR of names; 1: LEN count then a STR per name), then the values as in
30 (a listpack with a leading id entry) or 31 (one STR per field).
Layouts from redis/librdb 2.4.0 (src/lib/parser.c, elementHashTemplate and its neighbours) and
the Redis pull request that added them (redis/redis#15364); no Redis 8.10 could be run here.

The registry (id -> field count) is what the reference forms need to be read; it is bounded
(MAX_KEPT_TEMPLATES) like every other accumulation of the parser.  Per-key memory leaves the
shared names out, as MEMORY USAGE does; the registry's memory is the dump's, counted once
(DumpInfo.templates_*, dumps.hash_template_bytes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import constants as C
from .blobs import listpack_entries
from .errors import BlobError, UnsupportedError
from .values import ValueReader

if TYPE_CHECKING:
    from .records import KeyRecord

MAX_KEPT_TEMPLATES = 1 << 16  # templates whose field counts are kept (Redis's example: 100)
TEMPLATE_ID_MAX = 1 << 32
NAME_KEEP = 256  # bytes of a field name kept to check the order (longer names compare by length)
FIELDS_LP, FIELDS_RAW = 0, 1


class TemplateValues(ValueReader):
    """Opcode 242 (Redis 8.10 HASH_TEMPLATE, or Valkey 9.2 UPDATE), types 29-32 and Valkey 23."""

    # -- opcode 242 ---------------------------------------------------------------------------
    def hash_template(self, off: int) -> None:
        """One template record: LEN id, LEN field count, the field names."""
        r, info = self.r, self.info
        tid = r.length("hash template id")
        count = r.length("hash template field count")
        if count == 0:
            raise self.corrupt("hash template of no fields", off)
        if tid >= TEMPLATE_ID_MAX:
            raise self.corrupt(f"hash template id {tid} is out of range", off)
        if tid in info.templates:
            raise self.corrupt(f"hash template id {tid} is defined twice", off)
        self.check_count(count, "hash template", 1)
        lens = self._names(count, "hash template field name")
        info.template_count += 1
        info.template_fields += count
        for ln in lens:
            info.template_name_lens[ln] = info.template_name_lens.get(ln, 0) + 1
        if info.keep("hash_templates", len(info.templates), MAX_KEPT_TEMPLATES):
            info.templates[tid] = (count, max(lens))

    def _names(self, count: int, what: str) -> list[int]:
        """Read `count` field names in the template order (length, then bytes; strictly
        ascending); their lengths."""
        r = self.r
        lens = []
        prev: tuple[int, bytes] | None = None
        for _ in range(count):
            at = r.tell()
            head, ln = r.string_head(what, NAME_KEEP)
            cur = (ln, head)
            if prev is not None and cur <= prev:
                raise self.corrupt("hash template field names are not in ascending order", at)
            prev = cur
            lens.append(ln)
        return lens

    def skip_update_command(self, off: int) -> None:
        """Valkey 9.2 opcode 242 (UPDATE): a command replicated during a forkless save, as a RESP
        multibulk (`*argc\\r\\n` then `$len\\r\\n` arg `\\r\\n` each).  Skipped and counted."""
        r = self.r
        argc = self._resp_number(b"*", "replicated command")
        self.check_count(argc, "replicated command", 5)
        for _ in range(argc):
            n = self._resp_number(b"$", "replicated command argument")
            r.skip(n, "replicated command argument")
            if r.read(2, "replicated command argument end") != b"\r\n":
                raise self.corrupt("replicated command argument does not end with CRLF")
        self.info.replication_commands += 1

    def _resp_number(self, mark: bytes, what: str) -> int:
        r = self.r
        at = r.tell()
        if r.read(1, what) != mark:
            raise self.corrupt(f"{what}: expected '{mark.decode()}'", at)
        digits = b""
        while True:
            b = r.read(1, what)
            if b == b"\r":
                break
            if not b.isdigit() or len(digits) >= 19:
                raise self.corrupt(f"{what}: malformed RESP length", at)
            digits += b
        if r.read(1, what) != b"\n" or not digits:
            raise self.corrupt(f"{what}: malformed RESP length", at)
        return int(digits)

    # -- types 29-32 --------------------------------------------------------------------------
    def _template_fields(self, tid: int, at: int) -> tuple[int, int]:
        """(field count, longest name) of a template the dump defined."""
        known = self.info.templates.get(tid)
        if known is None:
            if self.info.cut.get("hash_templates"):
                raise UnsupportedError(
                    f"hash template {tid} is beyond rdbscan's bound of {MAX_KEPT_TEMPLATES} "
                    f"templates: its hashes cannot be read",
                    at,
                )
            raise self.corrupt(f"hash refers to template {tid}, which the dump does not define", at)
        return known

    def v_hash_template(self, rec: KeyRecord) -> None:
        r = self.r
        t = rec.rdb_type
        at = r.tell()
        names: list[int] | None = None
        if t in (C.RDB_TYPE_HASH_TMPL_LP, C.RDB_TYPE_HASH_TMPL_ARRAY):
            fmt = r.length("hash template fields format")
            if fmt == FIELDS_LP:
                start = r.tell()
                blob = self.blob("hash template field names")
                try:
                    names = [len(e) for e in listpack_entries(blob)]
                except BlobError as e:
                    raise self.corrupt(f"hash template field names: {e}", start) from None
            elif fmt == FIELDS_RAW:
                count = r.length("hash template field count")
                self.check_count(count, "hash template", 1)
                names = self._names(count, "hash template field name")
            else:
                raise self.corrupt(f"hash template fields format {fmt} is neither 0 nor 1", at)
            if not names:
                raise self.corrupt("hash template of no fields", at)
        vals: dict[int, int] = {}
        mx = max(names) if names else 0
        if t in (C.RDB_TYPE_HASH_TMPL_LP, C.RDB_TYPE_HASH_TMPL_LP_REF):
            start = r.tell()
            blob = self.blob("template hash values")
            try:
                entries = listpack_entries(blob)
            except BlobError as e:
                raise self.corrupt(f"template hash values: {e}", start) from None
            if not entries or not isinstance(entries[0], int) or entries[0] < 0:
                raise self.corrupt("template hash values do not start with a template id", start)
            if names is None:
                count, longest = self._template_fields(entries[0], start)
                mx = max(mx, longest)
            else:
                count = len(names)
            if len(entries) != count + 1:
                raise self.corrupt(
                    f"template hash holds {len(entries) - 1} values for {count} fields", start
                )
            for v in entries[1:]:
                ln = len(v) if isinstance(v, bytes) else len(str(v))
                vals[ln] = vals.get(ln, 0) + 1
            rec.blob_bytes = len(blob)
            rec.encoding = "template-listpack"
        else:
            if names is None:
                count, longest = self._template_fields(r.length("hash template id"), at)
                mx = max(mx, longest)
            else:
                count = len(names)
            self.check_count(count, "template hash", 1)
            skip = r.skip_string
            for _ in range(count):
                ln = skip("template hash value")
                vals[ln] = vals.get(ln, 0) + 1
            rec.elems = {}
            rec.encoding = "template-array"
        for ln in vals:
            if ln > mx:
                mx = ln
        rec.length = count
        rec.max_elem = mx
        rec.vals = vals

    # -- Valkey 9.2 type 23 -------------------------------------------------------------------
    def v_path_hash(self, rec: KeyRecord) -> None:
        """Valkey 9.2 PATH_HASH: LEN path count, then per path STR path, LEN field count (> 0),
        field count x (STR field, STR value).  From the review diffs of valkey-io/valkey#4506
        (formats-2026.md: unverified, partial); a field's name is taken as its path's plus its
        own for the memory model."""
        r = self.r
        paths = r.length("path hash path count")
        if paths == 0:
            raise self.corrupt("path hash of no paths")
        self.check_count(paths, "path hash", 3)
        fields: dict[int, int] = {}
        vals: dict[int, int] = {}
        n = mx = 0
        skip = r.skip_string
        for _ in range(paths):
            plen = skip("path hash path")
            count = r.length("path hash field count")
            if count == 0:
                raise self.corrupt("path hash path of no fields")
            self.check_count(count, "path hash fields", 2)
            for _ in range(count):
                f = skip("path hash field")
                v = skip("path hash value")
                fields[plen + f] = fields.get(plen + f, 0) + 1
                vals[v] = vals.get(v, 0) + 1
                mx = max(mx, plen + f, v)
            n += count
        rec.length = n
        rec.max_elem = mx
        rec.elems = fields
        rec.vals = vals
        rec.encoding = "pathhash"
