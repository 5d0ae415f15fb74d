"""A small writer of Chakra protobuf .et files, standard library only, for
tests that need .et files made wrong on purpose (`chakrashim check`'s .et
rules): a GlobalMetadata record, then Node records, each preceded by its
length as a varint. Field numbers are those of tools/convert/chakra_et.proto.

  node(3, "c10d::allreduce_", COMM_COLL, data=[2], attrs={"is_cpu_op": False,
       "comm_type": 0, "comm_size": 4096, "pg_name": "1"})
"""
import struct

METADATA, COMP, COMM_SEND, COMM_RECV, COMM_COLL = 1, 4, 5, 6, 7
ALL_REDUCE, ALL_GATHER = 0, 2


def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _bytes(field, data):
    return _key(field, 2) + _varint(len(data)) + data


def _attr(name, value):
    body = _bytes(1, name.encode())
    if isinstance(value, bool):
        body += _key(27, 0) + _varint(int(value))  # bool_val
    elif isinstance(value, int):
        body += _key(9, 0) + _varint(value)  # int64_val
    elif isinstance(value, float):
        body += _key(3, 1) + struct.pack("<d", value)  # double_val
    else:
        body += _bytes(29, str(value).encode())  # string_val
    return body


def node(nid, name, ntype, data=(), ctrl=(), duration=1, attrs=None):
    """One Node message. attrs: name -> bool, int, float or str."""
    out = _key(1, 0) + _varint(nid) + _bytes(2, name.encode()) + _key(3, 0) + _varint(ntype)
    if ctrl:
        out += _bytes(4, b"".join(_varint(d) for d in ctrl))
    if data:
        out += _bytes(5, b"".join(_varint(d) for d in data))
    out += _key(7, 0) + _varint(duration)
    for k, v in (attrs if attrs is not None else {"is_cpu_op": ntype != COMM_COLL}).items():
        out += _bytes(10, _attr(k, v))
    return out


def write(path, nodes, schema="1.1.1-chakra.0.0.4"):
    """A .et file: the metadata record, then `nodes` (each from node())."""
    meta = _bytes(2, _attr("schema", schema))
    with open(path, "wb") as f:
        for record in [meta, *nodes]:
            f.write(_varint(len(record)) + record)


def allreduce(nid, after, size=4096, pg=None):
    attrs = {"is_cpu_op": False, "comm_type": ALL_REDUCE, "comm_size": size}
    if pg is not None:
        attrs["pg_name"] = pg
    return node(nid, "c10d::allreduce_", COMM_COLL, data=[after], attrs=attrs)


def good_rank():
    """A step of one rank: compute, an all-reduce, compute."""
    return [node(1, "[pytorch|profiler|execution_trace|thread]", COMP),
            node(2, "aten::mm", COMP, data=[1], ctrl=[1]),
            allreduce(3, 2),
            node(4, "aten::add_", COMP, data=[3], ctrl=[1])]
