"""Packet-level pieces of the command phase, without a server: cutting packets out of the
receive buffer (take_packet), the fixed-type parameter decoder, and whole framed responses."""

from __future__ import annotations

import struct

import pytest
from mysql_mimic.errors import MysqlError
from rawmysql import packet, split_packets

from noria_py.server import protocol as P
from noria_py.server.connection import take_packet

pytestmark = pytest.mark.wire

T_LONG, T_LONGLONG, T_DOUBLE, T_VAR_STRING = 0x03, 0x08, 0x05, 0xFD


def test_take_packet_whole_partial_and_pipelined():
    data = packet(b"\x03SELECT 1") + packet(b"\x0e")
    assert take_packet(data, 0, 1 << 20) == (b"\x03SELECT 1", 0, 0, 13)
    assert take_packet(data, 13, 1 << 20) == (b"\x0e", 0, 0, len(data))
    assert take_packet(data, len(data), 1 << 20) is None
    for cut in range(13):
        assert take_packet(data[:cut], 0, 1 << 20) is None


def test_take_packet_split_payloads():
    payload = b"\x03" + b"x" * (0xFFFFFF + 10)
    data = split_packets(payload)
    assert take_packet(data[:-1], 0, 1 << 25) is None  # the short last part is incomplete
    assert take_packet(data[: 0xFFFFFF + 4], 0, 1 << 25) is None  # only the first part
    got, first, last, end = take_packet(data, 0, 1 << 25)
    assert got == payload and (first, last, end) == (0, 1, len(data))
    exact = b"\x03" + b"y" * (0xFFFFFF - 1)  # exactly 0xFFFFFF: an empty part follows
    data = split_packets(exact)
    assert len(data) == 0xFFFFFF + 8
    assert take_packet(data[:-4], 0, 1 << 25) is None
    assert take_packet(data, 0, 1 << 25)[0] == exact


def test_take_packet_limits_and_order():
    with pytest.raises(P.PacketTooLarge):
        take_packet(b"\xff\xff\xff\x00", 0, 1 << 20)  # refused from its header alone
    with pytest.raises(P.PacketTooLarge):
        take_packet(packet(b"x" * 100), 0, 99)
    data = bytearray(split_packets(b"\x03" + b"z" * 0xFFFFFF))
    data[0xFFFFFF + 4 + 3] = 7
    with pytest.raises(MysqlError):
        take_packet(bytes(data), 0, 1 << 25)


def _types(*ts: tuple[int, bool]) -> bytes:
    return b"".join(struct.pack("<BB", t, 0x80 if u else 0) for t, u in ts)


def test_fixed_params_fast_decoding():
    types = [(T_LONGLONG, False), (T_DOUBLE, False), (T_LONG, True)]
    fp = P.FixedParams.of(types)
    assert fp is not None
    values = struct.pack("<qdI", -5, 2.5, 4000000000)
    payload = b"\x17" + b"\x01\x00\x00\x00" + b"\x00" + b"\x01\x00\x00\x00"
    sent = payload + b"\x00" + b"\x01" + _types(*types) + values
    assert fp.decode(sent, 10) == (-5, 2.5, 4000000000)
    assert fp.decode(payload + b"\x00" + b"\x00" + values, 10) == (-5, 2.5, 4000000000)
    # what the general decoder must handle instead: NULLs, other types, a wrong length
    assert fp.decode(payload + b"\x02" + b"\x01" + _types(*types) + values, 10) is None
    other = [(T_LONGLONG, False), (T_DOUBLE, False), (T_LONG, False)]
    assert fp.decode(payload + b"\x00" + b"\x01" + _types(*other) + values, 10) is None
    assert fp.decode(sent[:-1], 10) is None
    assert fp.decode(sent + b"\x00", 10) is None
    assert P.FixedParams.of([(T_LONGLONG, False), (T_VAR_STRING, False)]) is None
    # the general decoder agrees
    assert P.decode_params(sent, 10, 3, None, None)[0] == [-5, 2.5, 4000000000]


def test_result_shape_frames_whole_responses():
    shape = P.ResultShape(["a", "b"], ["BIGINT", "VARCHAR"], [False, True])
    rows = [(1, "x"), (2, None), (3, "é" * 300)]
    data = shape.text_response(rows, 1, P.STATUS_AUTOCOMMIT, False)
    packets, pos, seqs = [], 0, []
    while pos < len(data):
        n = int.from_bytes(data[pos : pos + 3], "little")
        seqs.append(data[pos + 3])
        packets.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    assert seqs == list(range(1, 1 + len(packets)))
    assert packets[0] == b"\x02" and P.is_eof_payload(packets[3])
    assert packets[4] == b"\x011\x01x" and packets[5] == b"\x012\xfb"
    big = "é".encode() * 300
    assert packets[6] == b"\x013" + b"\xfc" + len(big).to_bytes(2, "little") + big
    assert P.is_eof_payload(packets[7]) and len(packets) == 8
    # binary rows: NULL bitmap offset by 2 bits
    data = shape.binary_response([(2, None)], 1, P.STATUS_AUTOCOMMIT, True)
    assert data.endswith(
        packet(b"\x00\x08" + struct.pack("<q", 2), 4) + packet(b"\xfe\x00\x00\x02\x00\x00\x00", 5)
    )
    # a NULL-typed column that holds values is retyped after them
    assert P.typed_columns(["NULL", "NULL"], [(None, None), (7, None)]) == ["BIGINT", "NULL"]
