"""Constants of the RDB format, named as the Redis sources name them (src/rdb.h).

See docs: docs/rdb-format.md sections 1-4.
"""

from __future__ import annotations

import re

# Newest RDB version this parser knows for each magic (docs/rdb-format.md section 1.3).  A newer
# version is read on (forward compatibility): the first type or opcode rdbscan does not know stops
# the read as a limit of the tool (UnsupportedError), not as damage to the file.
RDB_VERSION_MAX = 15  # REDIS0001 .. REDIS0015 (Redis 8.10)
VALKEY_RDB_VERSIONS = (80, 81)  # VALKEY080 (Valkey 9.0, 9.1), VALKEY081 (Valkey 9.2)
VALKEY_RDB_VERSION_MIN = 80  # the VALKEY magic begins with Valkey 9.0

# Opcodes (rdb.h RDB_OPCODE_*), docs/rdb-format.md section 2.
RDB_OPCODE_HASH_TEMPLATE = 242  # Redis RDB >= 15; Valkey (VALKEY >= 81): UPDATE (replication)
RDB_OPCODE_KEY_META = 243  # Redis RDB >= 13; Valkey (VALKEY magic): SLOT_IMPORT
RDB_OPCODE_SLOT_INFO = 244
RDB_OPCODE_FUNCTION2 = 245
RDB_OPCODE_FUNCTION_PRE_GA = 246
RDB_OPCODE_MODULE_AUX = 247
RDB_OPCODE_IDLE = 248
RDB_OPCODE_FREQ = 249
RDB_OPCODE_AUX = 250
RDB_OPCODE_RESIZEDB = 251
RDB_OPCODE_EXPIRETIME_MS = 252
RDB_OPCODE_EXPIRETIME = 253
RDB_OPCODE_SELECTDB = 254
RDB_OPCODE_EOF = 255

# Redis Enterprise opcodes that carry one LEN and can be skipped (librdb #67, #91).
RDB_OPCODE_RAM_LRU = 107
RDB_OPCODE_SLOT_NUM = 121

# Length encodings (docs/rdb-format.md section 3.1).
RDB_6BITLEN = 0
RDB_14BITLEN = 1
RDB_32BITLEN = 0x80
RDB_64BITLEN = 0x81
RDB_ENCVAL = 3
RDB_ENC_INT8 = 0
RDB_ENC_INT16 = 1
RDB_ENC_INT32 = 2
RDB_ENC_LZF = 3

# Object types (rdb.h RDB_TYPE_*), docs/rdb-format.md section 4.1.
RDB_TYPE_STRING = 0
RDB_TYPE_LIST = 1
RDB_TYPE_SET = 2
RDB_TYPE_ZSET = 3
RDB_TYPE_HASH = 4
RDB_TYPE_ZSET_2 = 5
RDB_TYPE_MODULE_PRE_GA = 6
RDB_TYPE_MODULE_2 = 7
RDB_TYPE_HASH_ZIPMAP = 9
RDB_TYPE_LIST_ZIPLIST = 10
RDB_TYPE_SET_INTSET = 11
RDB_TYPE_ZSET_ZIPLIST = 12
RDB_TYPE_HASH_ZIPLIST = 13
RDB_TYPE_LIST_QUICKLIST = 14
RDB_TYPE_STREAM_LISTPACKS = 15
RDB_TYPE_HASH_LISTPACK = 16
RDB_TYPE_ZSET_LISTPACK = 17
RDB_TYPE_LIST_QUICKLIST_2 = 18
RDB_TYPE_STREAM_LISTPACKS_2 = 19
RDB_TYPE_SET_LISTPACK = 20
RDB_TYPE_STREAM_LISTPACKS_3 = 21
RDB_TYPE_HASH_METADATA_PRE_GA = 22  # Redis 7.4-rc; on VALKEY magic: HASH_2
RDB_TYPE_HASH_LISTPACK_EX_PRE_GA = 23
RDB_TYPE_HASH_METADATA = 24
RDB_TYPE_HASH_LISTPACK_EX = 25
RDB_TYPE_STREAM_LISTPACKS_4 = 26
RDB_TYPE_STREAM_LISTPACKS_5 = 27  # Redis 8.8 (RDB 14): consumer groups with a NACK zone
RDB_TYPE_ARRAY = 28  # Redis 8.8 (RDB 14): sparse array
RDB_TYPE_HASH_TMPL_LP = 29  # Redis 8.10 (RDB 15): template hash, self-contained (DUMP form)
RDB_TYPE_HASH_TMPL_LP_REF = 30  # Redis 8.10: template hash, listpack of values (save)
RDB_TYPE_HASH_TMPL_ARRAY = 31  # Redis 8.10: template hash, self-contained (DUMP form)
RDB_TYPE_HASH_TMPL_ARRAY_REF = 32  # Redis 8.10: template hash, array of values (save)
RDB_TYPE_GCRA = 33  # Redis (ENABLE_GCRA builds only): not readable without its layout
VALKEY_RDB_TYPE_PATH_HASH = 23  # Valkey 9.2 (VALKEY081); on REDIS magic: HASH_LISTPACK_EX_PRE_GA

# The first RDB version that writes each type id (REDIS magic); an id above the version's own
# set is damage in a dump of a known version and a limit of rdbscan in a newer one.
TYPE_MIN_VERSION = {27: 14, 28: 14, 29: 15, 30: 15, 31: 15, 32: 15}

# Sparse array element tags (Redis 8.8 t_array.c AR_RDB_TAG_*).
ARRAY_TAG_SDS = 0
ARRAY_TAG_INT = 1
ARRAY_TAG_FLOAT = 2
ARRAY_TAG_SMALLSTR = 3

# Module value opcodes (docs/rdb-format.md section 6.2).
RDB_MODULE_OPCODE_EOF = 0
RDB_MODULE_OPCODE_SINT = 1
RDB_MODULE_OPCODE_UINT = 2
RDB_MODULE_OPCODE_FLOAT = 3
RDB_MODULE_OPCODE_DOUBLE = 4
RDB_MODULE_OPCODE_STRING = 5

# Quicklist 2 node containers (quicklist.h).
QUICKLIST_NODE_CONTAINER_PLAIN = 1
QUICKLIST_NODE_CONTAINER_PACKED = 2

# Logical type of each RDB type id.
TYPE_NAMES = {
    0: "string",
    1: "list",
    2: "set",
    3: "zset",
    4: "hash",
    5: "zset",
    6: "module",
    7: "module",
    9: "hash",
    10: "list",
    11: "set",
    12: "zset",
    13: "hash",
    14: "list",
    15: "stream",
    16: "hash",
    17: "zset",
    18: "list",
    19: "stream",
    20: "set",
    21: "stream",
    22: "hash",
    23: "hash",
    24: "hash",
    25: "hash",
    26: "stream",
    27: "stream",
    28: "array",
    29: "hash",
    30: "hash",
    31: "hash",
    32: "hash",
}

# redis-check-rdb's label of each type id, used in error messages.
RDB_TYPE_LABELS = {
    0: "string",
    1: "list-linked",
    2: "set-hashtable",
    3: "zset-v1",
    4: "hash-hashtable",
    5: "zset-v2",
    6: "module-pre-release",
    7: "module-value",
    9: "hash-zipmap",
    10: "list-ziplist",
    11: "set-intset",
    12: "zset-ziplist",
    13: "hash-ziplist",
    14: "quicklist",
    15: "stream",
    16: "hash-listpack",
    17: "zset-listpack",
    18: "quicklist-v2",
    19: "stream-v2",
    20: "set-listpack",
    21: "stream-v3",
    22: "hash-hashtable-md-pre-release",
    23: "hash-listpack-md-pre-release",
    24: "hash-hashtable-md",
    25: "hash-listpack-md",
    26: "stream-v4",
    27: "stream-v5",
    28: "array",
    29: "hash-template-listpack",
    30: "hash-template-listpack-ref",
    31: "hash-template-array",
    32: "hash-template-array-ref",
    33: "gcra",
}

# Encoding the writing server held the value in, by RDB type (docs/rdb-format.md section 7.3).  Strings and
# quicklist-2 lists depend on the content and are decided by the parser.
TYPE_ENCODINGS = {
    1: "linkedlist",
    2: "hashtable",
    3: "skiplist",
    4: "hashtable",
    5: "skiplist",
    9: "zipmap",
    10: "ziplist",
    11: "intset",
    12: "ziplist",
    13: "ziplist",
    14: "quicklist",
    15: "stream",
    16: "listpack",
    17: "listpack",
    18: "quicklist",
    19: "stream",
    20: "listpack",
    21: "stream",
    22: "hashtable",
    23: "listpackex",
    24: "hashtable",
    25: "listpackex",
    26: "stream",
    27: "stream",
    28: "array",
    29: "template-listpack",
    30: "template-listpack",
    31: "template-array",
    32: "template-array",
}

# Table `key_rows` stores an encoding as its position in this tuple (`encoding_id`) and the view
# `keys` shows the name: positions are part of the database format, so names are only ever
# appended.  "module" stands for module values, whose encoding is their type name
# (`key_rows.module_type`).
ENCODING_NAMES = (
    "raw",
    "int",
    "embstr",
    "linkedlist",
    "ziplist",
    "quicklist",
    "listpack",
    "listpackex",
    "intset",
    "hashtable",
    "skiplist",
    "zipmap",
    "stream",
    "unknown",
    "module",
    "array",  # Redis 8.8 sparse arrays
    "template-listpack",  # Redis 8.10 hashes that use a template
    "template-array",
    "btree",  # Valkey 9.2 sorted sets (the skiplist's successor)
    "pathhash",  # Valkey 9.2 path hashes
)
ENCODING_IDS = {name: i for i, name in enumerate(ENCODING_NAMES)}
MODULE_ENCODING_ID = ENCODING_IDS["module"]

# Why a value that decodes is one a Redis server refuses to load (its integrity checks, the
# ones redis-check-rdb runs): key_rows.extras[9] stores the position in this tuple plus one and
# the view `keys` shows the name (keys.invalid, docs/hostile-inputs.md).  Only ever appended.
INVALID_KINDS = (
    "listpack back-length",  # an entry's back-length is not its size (lpValidateNext)
    "listpack count",  # the header's entry count is neither the entries' nor 65535
    "listpack terminator",  # the last byte is not 0xff
    "ziplist previous length",  # an entry's prevlen is not the previous entry's size
    "ziplist tail",  # zltail does not point at the last entry
    "ziplist count",  # zllen is neither the entries' count nor 65535
    "ziplist terminator",  # the last byte is not 0xff
    "intset order",  # members not strictly ascending (out of order or repeated)
    "intset empty",  # no members
    "empty",  # a collection of no elements (rdbLoadObject: empty keys are refused)
    "lzf length",  # LZF data that does not decompress to the length its header gives
)
INVALID_IDS = {name: i + 1 for i, name in enumerate(INVALID_KINDS)}

# Largest string that Redis stores as embstr (object.c OBJ_ENCODING_EMBSTR_SIZE_LIMIT).
EMBSTR_SIZE_LIMIT = 44
EMBSTR_SIZE_LIMIT_3_0 = 39

CLUSTER_SLOTS = 16384

# The server release line that writes each RDB version (docs/rdb-format.md section 1.3): what a
# dump without a redis-ver / valkey-ver aux field is taken for.  A version several lines write
# maps to the newest of them (9: Redis 5.0-6.2).
RDB_VERSION_SERVERS = {
    1: (2, 0),
    2: (2, 4),
    3: (2, 6),
    4: (2, 6),
    5: (2, 6),
    6: (2, 8),
    7: (3, 2),
    8: (4, 0),
    9: (6, 2),
    10: (7, 0),
    11: (7, 2),
    12: (7, 4),
    13: (8, 6),
    14: (8, 8),
    15: (8, 10),
    80: (9, 0),
    81: (9, 2),
}


def server_version(text: str | None, rdb_version: int | None) -> tuple[int, int] | None:
    """(major, minor) of the server that wrote a dump: from its aux version text ('7.2.4'), else
    from its RDB version; None when neither tells."""
    m = re.match(r"\s*(\d+)\.(\d+)", text or "")
    if m:
        return int(m.group(1)), int(m.group(2))
    v = rdb_version or 0
    if RDB_VERSION_MAX < v < VALKEY_RDB_VERSION_MIN:  # newer than rdbscan: the newest it knows
        v = RDB_VERSION_MAX
    elif v > max(VALKEY_RDB_VERSIONS):
        v = max(VALKEY_RDB_VERSIONS)
    return RDB_VERSION_SERVERS.get(v)
