"""The output tables: their columns, types and sort order, declared once for both engines.

Rows travel as tuples in column order (the named tuples of :mod:`.rows`, cheap to pickle
between Spark workers); the
python engine turns them into Arrow tables with :func:`arrow_schema`, the Spark engine into
DataFrames with the equivalent Spark schema, and both write Parquet with these exact
types, so the files compare equal whichever engine wrote them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

#: column types: "string", "long" (int64), "int" (int32), "bool", "double"
Columns = tuple[tuple[str, str], ...]

PACKETS: Columns = (
    ("capture", "string"), ("connection", "string"), ("direction", "string"),
    ("frame", "long"), ("first_frame", "long"), ("offset", "long"), ("length", "long"),
    ("type", "string"), ("dup", "bool"), ("qos", "int"), ("retain", "bool"),
    ("topic", "string"), ("packet_id", "int"), ("payload_len", "long"),
    ("error_rule", "string"), ("error_kind", "string"), ("edition", "string"),
    ("reason_code", "int"), ("topic_alias", "int"), ("properties", "string"),
)  # fmt: skip
VIOLATIONS: Columns = (
    ("capture", "string"), ("connection", "string"), ("direction", "string"),
    ("frame", "long"), ("offset", "long"), ("rule", "string"), ("rules", "string"),
    ("provoked", "string"), ("kind", "string"), ("source", "string"), ("role", "string"),
    ("endpoint", "string"), ("message", "string"), ("evidence", "string"),
)  # fmt: skip
CONNECTIONS: Columns = (
    ("capture", "string"), ("connection", "string"), ("client", "string"),
    ("server", "string"), ("client_id", "string"), ("protocol", "string"), ("level", "int"),
    ("edition", "string"), ("clean_session", "bool"), ("first_frame", "long"),
    ("last_frame", "long"), ("frames", "long"), ("bytes_c2s", "long"), ("bytes_s2c", "long"),
    ("framed_bytes", "long"), ("missing_bytes", "long"), ("unparsed", "string"),
    ("packets", "long"), ("violations", "long"), ("tolerated", "long"),
    ("deviations", "long"), ("closed", "string"),
    ("status", "string"),
)  # fmt: skip
QUARANTINE: Columns = (
    ("capture", "string"), ("frame", "long"), ("last_frame", "long"), ("frames", "long"),
    ("reason", "string"), ("connection", "string"), ("offset", "long"), ("bytes", "long"),
    ("detail", "string"),
)  # fmt: skip
#: the cross-connection stage's input (a scratch table, removed when it is done): see
#: :class:`pubproof.pipeline.rows.EventRow`
EVENTS: Columns = (
    ("capture", "string"), ("server", "string"), ("topic", "string"), ("t", "double"),
    ("at_frame", "long"), ("connection", "string"), ("seq", "long"), ("frame", "long"),
    ("offset", "long"), ("direction", "string"), ("type", "string"), ("qos", "int"),
    ("dup", "bool"), ("retain", "bool"), ("packet_id", "int"), ("code", "int"),
    ("digest", "string"), ("size", "long"), ("detail", "string"), ("skew", "double"),
)  # fmt: skip
DELIVERIES: Columns = (
    ("capture", "string"), ("server", "string"), ("topic", "string"),
    ("direction", "string"), ("connection", "string"), ("client_id", "string"),
    ("frame", "long"), ("offset", "long"), ("time", "double"), ("qos", "int"),
    ("dup", "bool"), ("retain", "bool"), ("packet_id", "int"),
    ("payload_digest", "string"), ("payload_len", "long"), ("in_connection", "string"),
    ("in_frame", "long"), ("in_offset", "long"), ("properties_changed", "bool"),
    ("latency", "double"),
    ("outcome", "string"), ("copies", "long"),
)  # fmt: skip
SUMMARY: Columns = (
    ("role", "string"), ("endpoint", "string"), ("rule", "string"), ("kind", "string"),
    ("count", "long"), ("connections", "long"), ("example_capture", "string"),
    ("example_connection", "string"), ("example_frame", "long"), ("example_offset", "long"),
    ("example_message", "string"), ("example_evidence", "string"), ("example_source", "string"),
)  # fmt: skip

TABLES: Mapping[str, Columns] = MappingProxyType({
    "packets": PACKETS, "violations": VIOLATIONS, "connections": CONNECTIONS,
    "quarantine": QUARANTINE, "summary": SUMMARY, "deliveries": DELIVERIES, "events": EVENTS,
})  # fmt: skip
#: the tables a check leaves under its output directory (``events`` is scratch)
OUTPUTS = ("packets", "violations", "connections", "quarantine", "summary", "deliveries")

#: the sort order of each table (all columns break ties, so the order is total)
SORT_KEYS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "packets": ("capture", "connection", "frame", "offset", "direction"),
    "violations": ("capture", "connection", "frame", "offset", "direction", "rule", "kind",
                   "role", "message"),
    "connections": ("capture", "connection"),
    "quarantine": ("capture", "frame", "reason", "connection", "offset"),
    "summary": ("role", "endpoint", "rule", "kind"),
    # a server's events without a topic first (its sessions: CONNECT, SUBSCRIBE, ...),
    # then each topic's, in time order: what the cross-connection stage reads in one pass
    "events": ("capture", "server", "topic", "t", "at_frame", "connection", "seq"),
    "deliveries": ("capture", "server", "topic", "in_connection", "in_frame", "in_offset",
                   "direction", "connection", "frame", "offset"),
})  # fmt: skip


def index(columns: Columns) -> dict[str, int]:
    """Column name -> position in a row tuple."""
    return {name: i for i, (name, _) in enumerate(columns)}


def sort_key(table: str) -> Any:
    """A key function that sorts row tuples of ``table`` (nulls first, as Spark does)."""
    positions = [index(TABLES[table])[name] for name in SORT_KEYS[table]]

    def key(row: Sequence[Any]) -> tuple[Any, ...]:
        return tuple((row[i] is not None, row[i] if row[i] is not None else 0) for i in positions)

    return key


def arrow_schema(table: str) -> Any:
    """The pyarrow schema of ``table``."""
    import pyarrow as pa

    types = {
        "string": pa.string(), "long": pa.int64(), "int": pa.int32(), "bool": pa.bool_(),
        "double": pa.float64(),
    }  # fmt: skip
    return pa.schema([pa.field(name, types[kind], nullable=True) for name, kind in TABLES[table]])


def spark_schema(table: str) -> Any:
    """The Spark SQL schema of ``table``."""
    from pyspark.sql import types as T

    kinds = {
        "string": T.StringType(),
        "long": T.LongType(),
        "int": T.IntegerType(),
        "bool": T.BooleanType(),
        "double": T.DoubleType(),
    }
    return T.StructType([T.StructField(name, kinds[kind], True) for name, kind in TABLES[table]])
