/*
 * Frames of lossless Ethernet as they are on the wire:
 *  - RoceHeader: Ethernet II (+ optional IEEE 802.1Q tag) / IPv4 / UDP (dport 4791) /
 *    InfiniBand BTH (12 B) / RETH (16 B) or AETH (4 B) as the opcode requires, or the 16
 *    reserved bytes of a CNP (IBTA RoCEv2 Annex A17). One ns-3 header for the whole stack so a
 *    packet is built with one AddHeader; the payload (zeros) and the 4-byte ICRC follow it.
 *  - PfcHeader: an IEEE 802.1Qbb Priority-based Flow Control frame (MAC Control 0x8808,
 *    opcode 0x0101, class-enable vector, eight 2-byte timers), padded to the minimum frame.
 * The FCS is not in the packet (captures usually omit it); the link counts it in wire time.
 */
#ifndef ROCE_HEADER_H
#define ROCE_HEADER_H

#include "ns3/header.h"
#include "ns3/ipv4-address.h"
#include "ns3/mac48-address.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

#include <array>
#include <cstdint>

namespace ns3
{

constexpr uint16_t ETHERTYPE_IPV4 = 0x0800;
constexpr uint16_t ETHERTYPE_VLAN = 0x8100;
constexpr uint16_t ETHERTYPE_MAC_CONTROL = 0x8808;
constexpr uint16_t MAC_CONTROL_PFC = 0x0101;
constexpr uint16_t ROCEV2_UDP_PORT = 4791;
constexpr uint32_t IPV4_HEADER = 20;
constexpr uint32_t UDP_HEADER = 8;
constexpr uint32_t IB_BTH = 12;
constexpr uint32_t IB_RETH = 16;
constexpr uint32_t IB_AETH = 4;
constexpr uint32_t IB_ICRC = 4;
constexpr uint32_t ROCE_CNP_RESERVED = 16;
constexpr uint32_t PFC_FRAME = 60; ///< without FCS

/// InfiniBand RC opcodes (IBTA Vol. 1, Table 38) and the RoCEv2 CNP.
namespace IbOpcode
{
constexpr uint8_t SEND_FIRST = 0x00;
constexpr uint8_t SEND_MIDDLE = 0x01;
constexpr uint8_t SEND_LAST = 0x02;
constexpr uint8_t SEND_ONLY = 0x04;
constexpr uint8_t RDMA_WRITE_FIRST = 0x06;
constexpr uint8_t RDMA_WRITE_MIDDLE = 0x07;
constexpr uint8_t RDMA_WRITE_LAST = 0x08;
constexpr uint8_t RDMA_WRITE_ONLY = 0x0A;
constexpr uint8_t RDMA_READ_REQUEST = 0x0C;
constexpr uint8_t RDMA_READ_RESPONSE_FIRST = 0x0D;
constexpr uint8_t RDMA_READ_RESPONSE_MIDDLE = 0x0E;
constexpr uint8_t RDMA_READ_RESPONSE_LAST = 0x0F;
constexpr uint8_t RDMA_READ_RESPONSE_ONLY = 0x10;
constexpr uint8_t ACKNOWLEDGE = 0x11;
constexpr uint8_t CNP = 0x81;
} // namespace IbOpcode

/// AETH syndromes (IBTA Vol. 1, 9.7.5.1): ACK with "no credit limit", PSN sequence error NAK.
constexpr uint8_t AETH_ACK = 0x1F;
constexpr uint8_t AETH_NAK_PSN_SEQ_ERROR = 0x60;
/// Bits 7:5 of the syndrome say what it is (000 ACK, 001 RNR NAK, 011 NAK); bits 4:0 carry the
/// credit count, the RNR NAK timer or the NAK code.
constexpr uint8_t AETH_TYPE_MASK = 0xE0;
/// RNR NAK (IBTA Vol. 1, 9.7.5.2.8): OR'd with the responder's 5-bit RNR timer code.
constexpr uint8_t AETH_RNR_NAK = 0x20;
constexpr uint8_t AETH_RNR_TIMER_MASK = 0x1F;

/// The time an RNR NAK timer code (0..31) asks the requester to wait: IBTA Vol. 1, Table 45
/// "Encoding for RNR NAK Timer Field" (0 = 655.36 ms, 1 = 0.01 ms, ..., 31 = 491.52 ms).
Time IbRnrTimer(uint8_t code);

bool IbOpcodeHasReth(uint8_t op);
bool IbOpcodeHasAeth(uint8_t op);
/// First or only packet of a message (the one carrying RETH for writes).
bool IbOpcodeIsFirst(uint8_t op);
/// Last or only packet of a message.
bool IbOpcodeIsLast(uint8_t op);

/// Bytes of the headers before the payload for an opcode: Eth (+VLAN) + IPv4 + UDP + BTH + ext.
uint32_t RoceHeaderBytes(uint8_t opcode, bool vlan);

/*
 * Telemetry for congestion control (not IBTA; present only when the sender's controller asks
 * for it, so without it no byte changes on the wire). Bits 0-1 of the BTH's resv6a field say
 * what follows the BTH and its extension header (RETH or AETH), before the payload:
 *  - TEL_TIMESTAMP: 8 bytes, the sending NIC's clock in ns when the packet left (data), or the
 *    timestamp of the data packet an ACK answers (echo);
 *  - TEL_INT: in-band network telemetry as HPCC uses it (Li et al., SIGCOMM 2019): 1 byte the
 *    number of records filled, 1 byte the slots reserved, then one 8-byte record per slot. The
 *    sender reserves the slots (so a frame does not change size on its way), each switch egress
 *    fills the next one as the packet leaves, and the ACK echoes the records to the sender.
 * ECN echo needs no byte: the responder sets BTH.BECN in an ACK that acknowledges a CE-marked
 * packet (as IBTA's congestion control returns BECN, Vol. 1 Annex A10).
 */
constexpr uint8_t TEL_TIMESTAMP = 0x01;
constexpr uint8_t TEL_INT = 0x02;
constexpr uint32_t TEL_TIMESTAMP_BYTES = 8;
constexpr uint32_t INT_HEADER_BYTES = 2;
constexpr uint32_t INT_HOP_BYTES = 8;
constexpr uint8_t INT_MAX_HOPS = 8;
/// The longest RoCEv2 header: Ethernet, 802.1Q tag, IPv4, UDP, BTH and RETH (or a CNP's 16
/// reserved bytes), then the telemetry a congestion control may ask for: a timestamp and the
/// INT records (14 + 4 + 20 + 8 + 12 + 16 + 8 + 2 + 8 x 8 bytes).
constexpr uint32_t ROCE_HEADER_MAX = 14 + 4 + 20 + 8 + 12 + 16 + TEL_TIMESTAMP_BYTES
                                     + INT_HEADER_BYTES + INT_HOP_BYTES * INT_MAX_HOPS;

/// One switch egress's INT record, 64 bits big-endian on the wire: bits 63-60 the port speed
/// (EthSpeed code), 59-36 its clock in ns modulo 2^24, 35-16 the line bytes it has sent
/// (preamble, FCS and gap included) in units of INT_TX_UNIT modulo 2^20, 15-0 the bytes queued in
/// the packet's egress queue as it left, in units of INT_QLEN_UNIT (saturating).
struct IntHop
{
    static constexpr uint32_t TIME_BITS = 24;
    static constexpr uint32_t TX_BITS = 20;
    static constexpr uint32_t TX_UNIT = 128;   ///< bytes
    static constexpr uint32_t QLEN_UNIT = 256; ///< bytes: 16 bits reach 16 MiB
    uint64_t word = 0;

    static IntHop Make(uint8_t speedCode, uint64_t timeNs, uint64_t txBytes, uint64_t qlenBytes);
    uint8_t
    SpeedCode() const
    {
        return uint8_t(word >> 60);
    }
    uint32_t
    TimeNs() const
    {
        return uint32_t(word >> 36) & ((1u << TIME_BITS) - 1);
    }
    uint32_t
    TxUnits() const
    {
        return uint32_t(word >> 16) & ((1u << TX_BITS) - 1);
    }
    uint64_t
    QueueBytes() const
    {
        return (word & 0xFFFF) * uint64_t(QLEN_UNIT);
    }
    /// The port's line rate, bit/s.
    double LineRate() const;
    /// ns from `before`'s record to this one (the clock wraps at 2^24 ns = 16.8 ms).
    uint64_t
    NsSince(const IntHop& before) const
    {
        return (TimeNs() - before.TimeNs()) & ((1u << TIME_BITS) - 1);
    }
    /// Line bytes sent between `before`'s record and this one (wraps at 2^20 units = 128 MiB).
    uint64_t
    TxBytesSince(const IntHop& before) const
    {
        return uint64_t((TxUnits() - before.TxUnits()) & ((1u << TX_BITS) - 1)) * TX_UNIT;
    }
};

struct RoceTelemetry
{
    uint8_t flags = 0; ///< TEL_TIMESTAMP | TEL_INT
    uint64_t ts = 0;   ///< ns
    uint8_t nHop = 0;  ///< records filled
    uint8_t slots = 0; ///< records reserved
    std::array<IntHop, INT_MAX_HOPS> hops{};

    uint32_t
    Bytes() const
    {
        return (flags & TEL_TIMESTAMP ? TEL_TIMESTAMP_BYTES : 0)
               + (flags & TEL_INT ? INT_HEADER_BYTES + INT_HOP_BYTES * slots : 0);
    }
};

/*
 * Addresses as their bytes on the wire. RoceHeader keeps its addresses in this form so a frame
 * is written and read with plain copies: Mac48Address's and Ipv4Address's own members each check
 * a log level in Debian's build (eight calls per frame built and read). They convert to and
 * from the ns-3 types where a header is made by hand or printed.
 */
struct MacBytes
{
    std::array<uint8_t, 6> b{};

    MacBytes() = default;

    MacBytes(Mac48Address a) // NOLINT: implicit, so `h.src = Mac48Address(...)` reads naturally
    {
        a.CopyTo(b.data());
    }

    operator Mac48Address() const // NOLINT: implicit
    {
        Mac48Address a;
        a.CopyFrom(b.data());
        return a;
    }

    bool
    operator==(const MacBytes& o) const
    {
        return b == o.b;
    }
};

/// An IPv4 address as a host-order number (written big-endian).
struct Ipv4Bytes
{
    uint32_t v = 0;

    Ipv4Bytes() = default;

    Ipv4Bytes(Ipv4Address a) // NOLINT: implicit
        : v(a.Get())
    {
    }

    operator Ipv4Address() const // NOLINT: implicit
    {
        return Ipv4Address(v);
    }

    bool
    operator==(const Ipv4Bytes& o) const
    {
        return v == o.v;
    }
};

class RoceHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    void Print(std::ostream& os) const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    /// The header's bytes into plain memory (at least ROCE_HEADER_MAX), as Serialize writes
    /// them; returns their count. The per-packet path uses these two: one copy into or out of
    /// the packet instead of a buffer call per field.
    uint32_t Write(uint8_t* b) const;
    /// Reads the header from the first `len` bytes of a frame; returns the bytes it took, 0 if
    /// they are too few.
    uint32_t Read(const uint8_t* b, uint32_t len);

    // Ethernet / 802.1Q
    MacBytes dst;
    MacBytes src;
    bool vlan = false;
    uint8_t pcp = 0;
    uint16_t vid = 0;
    // IPv4
    Ipv4Bytes ipSrc;
    Ipv4Bytes ipDst;
    uint8_t dscp = 0;
    uint8_t ecn = 0; ///< 0 Not-ECT, 2 ECT(0), 1 ECT(1), 3 CE
    uint8_t ttl = 64;
    uint16_t ipId = 0;
    // UDP
    uint16_t udpSrc = 0;
    uint16_t udpDst = ROCEV2_UDP_PORT;
    // BTH
    uint8_t opcode = IbOpcode::SEND_ONLY;
    bool solicited = false;
    bool migReq = true;
    uint8_t padCount = 0;
    uint16_t pkey = 0xFFFF;
    bool fecn = false;
    bool becn = false;
    uint32_t destQp = 0; ///< 24 bits
    bool ackReq = false;
    uint32_t psn = 0; ///< 24 bits
    // RETH
    uint64_t va = 0;
    uint32_t rkey = 0;
    uint32_t dmaLength = 0;
    // AETH
    uint8_t syndrome = AETH_ACK;
    uint32_t msn = 0; ///< 24 bits
    /// Bytes after these headers: payload, pad and ICRC (sets the IPv4 and UDP lengths).
    uint32_t trailing = IB_ICRC;
    /// Congestion-control telemetry after the extension header (flags 0: none).
    RoceTelemetry tel;

  private:
    uint32_t ExtBytes() const;
};

class PfcHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    void Print(std::ostream& os) const override;
    uint32_t
    GetSerializedSize() const override
    {
        return PFC_FRAME;
    }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;

    Mac48Address src;
    uint8_t classEnable = 0;          ///< bit c: timer c is valid
    std::array<uint16_t, 8> quanta{}; ///< pause time per class in quanta (0 = XON)
};

/// What a switch needs from a frame, read from its first bytes without building headers.
struct FrameView
{
    uint16_t etherType = 0; ///< after any VLAN tag
    bool vlan = false;
    uint8_t pcp = 0;
    uint8_t dscp = 0;
    uint8_t ecn = 0;
    uint8_t proto = 0;
    uint8_t ip = 0; ///< where the IPv4 header starts (0: not IPv4, or too short to read)
    uint32_t ipSrc = 0;
    uint32_t ipDst = 0;
    uint16_t sport = 0;
    uint16_t dport = 0;
};

/// What a switch may write into a frame as it leaves, found by the hop's one parse (ParseFrame,
/// then EditOf): 4 bytes that go with the frame through the switch (in its egress queue's
/// RoceNetDevice::Item), so that the frame is read once and rewritten at most once per hop.
struct FrameEdit
{
    static constexpr uint8_t ECT = 1; ///< ECN-capable (ECT(0) or ECT(1)): RED may mark it
    static constexpr uint8_t CE = 2;  ///< marked as it joined its queue, written as it leaves
    uint8_t ip = 0;                   ///< where the IPv4 header starts (0: nothing to mark)
    uint8_t intAt = 0; ///< where the INT header of a data frame with a free slot starts (0: none)
    uint8_t intFilled = 0; ///< the records already filled there
    uint8_t flags = 0;     ///< ECT | CE
};

/// The first bytes of a frame (up to ROCE_HEADER_MAX), copied out of the packet once per hop:
/// every header the port, the switch and the NIC look at is in them.
struct FrameBytes
{
    uint8_t b[ROCE_HEADER_MAX];
    uint32_t n = 0;
};

FrameView PeekFrame(Ptr<const Packet> p);
/// The same from bytes already copied out of the frame.
FrameView ParseFrame(const FrameBytes& f);
/// What a switch may write into the frame of `f` (parsed as `v`): its IPv4 header and ECT, and
/// with `intSlot` where its next INT record goes, read on from where ParseFrame stopped (the
/// BTH and the telemetry after it; no header read twice). Where StampInt would write: a RoCE
/// data frame (not an ACK or CNP, whose records are an echo) carrying TEL_INT with a free slot.
FrameEdit EditOf(const FrameBytes& f, const FrameView& v, bool intSlot);
/// The one rewrite of a frame's first bytes at a switch: CE into its IPv4 header (`ce`; the
/// header checksum recomputed) and `*hop` into its next INT slot (`hop` not null and e.intAt
/// set), with one copy out of the packet and one back.
void EditFrame(const Ptr<Packet>& p, const FrameEdit& e, bool ce, const IntHop* hop);
/// The same edit on a frame's first bytes in memory (a RoceFrame's; they hold its headers).
void EditFrameBytes(uint8_t* b, const FrameEdit& e, bool ce, const IntHop* hop);
/// A packet of the `n` bytes at `b` in front of `zeros` zero bytes (built as MakeRocePacket's).
Ptr<Packet> MakePacketFromBytes(const uint8_t* b, uint32_t n, uint32_t zeros);
/// A RoCEv2 packet: the header's bytes in front of `h.trailing` bytes (payload, pad and ICRC)
/// left as zeros, which ns-3 keeps as a virtual area (no bytes allocated).
Ptr<Packet> MakeRocePacket(const RoceHeader& h);

/// Captures only: where the parts of a frame's bytes start (0 where it has no such part).
struct FrameOffsets
{
    uint32_t ip = 0;  ///< the IPv4 header, after Ethernet II (+ 802.1Q)
    uint32_t end = 0; ///< the end of the IPv4 packet
    uint32_t bth = 0; ///< RoCEv2 (UDP to port 4791, with room for BTH and ICRC): the BTH
};

FrameOffsets FindOffsets(const uint8_t* frame, uint32_t len);
/// Captures only: writes the RoCEv2 invariant CRC into the last 4 bytes of a frame's UDP
/// payload, where the model leaves zeros; a frame that is not RoCEv2 over IPv4 is left alone.
/// The CRC-32 covers 8 bytes of ones (in place of the LRH), then the IPv4 header with TOS, TTL
/// and header checksum as ones, the UDP header with its checksum as ones, the BTH with its
/// resv8a byte (FECN, BECN, resv6a) as ones, and everything after up to the ICRC (IBTA Vol. 1
/// Annex A17, as Linux's rdma_rxe computes it). Its low byte goes first, as an Ethernet FCS.
void FillRoceIcrc(uint8_t* frame, uint32_t len);
/// Sets the IPv4 ECN field to CE (and fixes the header checksum) in a RoCE frame (parses and
/// rewrites it: a switch uses EditOf and EditFrame instead).
void MarkCe(Ptr<Packet> p);
/// Writes `hop` into the next free INT slot of a RoCE data frame that carries INT (TEL_INT; not
/// an ACK, whose records are an echo). False when the frame has no INT or no free slot. (Parses
/// and rewrites it: a switch uses EditOf and EditFrame instead.)
bool StampInt(Ptr<Packet> p, IntHop hop);

/// Host IP output: puts Ethernet II (with an 802.1Q tag of priority `pcp` and id `vid` if
/// `vlan`) in front of an IPv4 packet and sets its DSCP, keeping its ECN field (the header
/// checksum is recomputed). One header operation on the packet.
void AddEthernetToIpv4(Ptr<Packet> ip, Mac48Address dst, Mac48Address src, bool vlan, uint8_t pcp,
                       uint16_t vid, uint8_t dscp);
/// Host IP input: removes the Ethernet II (+ 802.1Q) header; returns the sender's MAC.
Mac48Address RemoveEthernet(Ptr<Packet> frame);

} // namespace ns3

#endif
