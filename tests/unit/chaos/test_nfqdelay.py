"""The delayer's nfnetlink_queue messages: the ids it reads from packet messages, the verdicts it writes."""

from __future__ import annotations

import struct

from pylog.chaos.nemesis.nfqdelay import NFNL_SUBSYS_QUEUE, NFQNL_MSG_PACKET, _attr, _message, packet_ids, verdict


def _packet(queue: int, packet_id: int) -> bytes:
    # NFQA_PACKET_HDR (packet id, hw protocol, hook) after an attribute the parser must skip
    attrs = _attr(9, b"\x01\x02\x03") + _attr(1, struct.pack("!IHB", packet_id, 0x0800, 3))
    return _message(NFQNL_MSG_PACKET, queue, attrs)


def test_packet_ids_come_from_every_packet_message_of_a_datagram_and_a_verdict_accepts_one():
    assert packet_ids(_packet(7, 41) + _packet(7, 42)) == [41, 42]
    assert packet_ids(b"") == [] and packet_ids(_message(2, 7, b"")) == []
    v = verdict(7, 42)
    length, kind = struct.unpack_from("=IH", v)
    assert length == len(v) == 32 and kind == (NFNL_SUBSYS_QUEUE << 8) | 1
    assert struct.unpack_from("!H", v, 18)[0] == 7  # the queue number, big-endian, in nfgenmsg
    assert struct.unpack_from("!II", v, 24) == (1, 42)  # NFQA_VERDICT_HDR: NF_ACCEPT, packet id
