#include "roce-header.h"

#include "ethernet-speed.h"
#include "lfsim-crc32.h"
#include "lfsim-packet.h"

#include <algorithm>
#include <cstring>
#include <iomanip>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceHeader);
NS_OBJECT_ENSURE_REGISTERED(PfcHeader);

bool
IbOpcodeHasReth(uint8_t op)
{
    return op == IbOpcode::RDMA_WRITE_FIRST || op == IbOpcode::RDMA_WRITE_ONLY
           || op == IbOpcode::RDMA_READ_REQUEST;
}

bool
IbOpcodeHasAeth(uint8_t op)
{
    return op == IbOpcode::RDMA_READ_RESPONSE_FIRST || op == IbOpcode::RDMA_READ_RESPONSE_LAST
           || op == IbOpcode::RDMA_READ_RESPONSE_ONLY || op == IbOpcode::ACKNOWLEDGE;
}

bool
IbOpcodeIsFirst(uint8_t op)
{
    switch (op)
    {
        case IbOpcode::SEND_FIRST:
        case IbOpcode::SEND_ONLY:
        case IbOpcode::RDMA_WRITE_FIRST:
        case IbOpcode::RDMA_WRITE_ONLY:
        case IbOpcode::RDMA_READ_RESPONSE_FIRST:
        case IbOpcode::RDMA_READ_RESPONSE_ONLY:
            return true;
        default:
            return false;
    }
}

bool
IbOpcodeIsLast(uint8_t op)
{
    switch (op)
    {
        case IbOpcode::SEND_LAST:
        case IbOpcode::SEND_ONLY:
        case IbOpcode::RDMA_WRITE_LAST:
        case IbOpcode::RDMA_WRITE_ONLY:
        case IbOpcode::RDMA_READ_RESPONSE_LAST:
        case IbOpcode::RDMA_READ_RESPONSE_ONLY:
            return true;
        default:
            return false;
    }
}

Time
IbRnrTimer(uint8_t code)
{
    // IBTA Vol. 1, Table 45, in microseconds; the same values as the names of Linux's
    // enum ib_rnr_timeout (include/rdma/ib_verbs.h, IB_RNR_TIMER_655_36 = 0 ...
    // IB_RNR_TIMER_491_52 = 31). Code 0 is the longest, not the shortest.
    static const uint32_t us[32]
        = {655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,   320,
           480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240, 15360,
           20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
    return MicroSeconds(us[code & AETH_RNR_TIMER_MASK]);
}

namespace
{
uint32_t
ExtFor(uint8_t op)
{
    if (op == IbOpcode::CNP)
    {
        return ROCE_CNP_RESERVED;
    }
    return (IbOpcodeHasReth(op) ? IB_RETH : 0) + (IbOpcodeHasAeth(op) ? IB_AETH : 0);
}

// RFC 1071 checksum over the 20-byte IPv4 header.
uint16_t
Ipv4Checksum(const uint8_t* h)
{
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
    {
        sum += (uint32_t(h[i]) << 8) | h[i + 1];
    }
    while (sum >> 16)
    {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return static_cast<uint16_t>(~sum);
}

void
WriteMac(Buffer::Iterator& i, Mac48Address a)
{
    uint8_t b[6];
    a.CopyTo(b);
    i.Write(b, 6);
}

Mac48Address
ReadMac(Buffer::Iterator& i)
{
    uint8_t b[6];
    i.Read(b, 6);
    Mac48Address a;
    a.CopyFrom(b);
    return a;
}

/// Bytes restored in front of a packet after editing them in place (MarkCe, StampInt).
class RawBytesHeader : public Header
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::RoceRawBytesHeader").SetParent<Header>();
        return tid;
    }
    TypeId
    GetInstanceTypeId() const override
    {
        return GetTypeId();
    }
    void
    Print(std::ostream& os) const override
    {
        os << "raw " << m_len << " B";
    }
    uint32_t
    GetSerializedSize() const override
    {
        return m_len;
    }
    void
    Serialize(Buffer::Iterator start) const override
    {
        start.Write(m_b, m_len);
    }
    uint32_t
    Deserialize(Buffer::Iterator start) override
    {
        start.Read(m_b, m_len);
        return m_len;
    }
    uint8_t m_b[ROCE_HEADER_MAX];
    uint32_t m_len = 0;
};
} // namespace

uint32_t
RoceHeaderBytes(uint8_t opcode, bool vlan)
{
    return ETH_HEADER + (vlan ? VLAN_TAG : 0) + IPV4_HEADER + UDP_HEADER + IB_BTH + ExtFor(opcode);
}

TypeId
RoceHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RoceHeader")
                            .SetParent<Header>()
                            .SetGroupName("RocePfcEcn")
                            .AddConstructor<RoceHeader>();
    return tid;
}

TypeId
RoceHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
RoceHeader::ExtBytes() const
{
    return ExtFor(opcode);
}

uint32_t
RoceHeader::GetSerializedSize() const
{
    return RoceHeaderBytes(opcode, vlan) + tel.Bytes();
}

namespace
{
uint8_t*
Put16(uint8_t* b, uint16_t v)
{
    b[0] = uint8_t(v >> 8);
    b[1] = uint8_t(v);
    return b + 2;
}

uint8_t*
Put32(uint8_t* b, uint32_t v)
{
    return Put16(Put16(b, uint16_t(v >> 16)), uint16_t(v));
}

uint16_t
Get16(const uint8_t* b)
{
    return uint16_t(b[0]) << 8 | b[1];
}

uint32_t
Get32(const uint8_t* b)
{
    return uint32_t(Get16(b)) << 16 | Get16(b + 2);
}
} // namespace

uint32_t
RoceHeader::Write(uint8_t* start) const
{
    uint8_t* b = start;
    std::memcpy(b, dst.b.data(), 6);
    std::memcpy(b + 6, src.b.data(), 6);
    b += 12;
    if (vlan)
    {
        b = Put16(b, ETHERTYPE_VLAN);
        b = Put16(b, static_cast<uint16_t>((pcp & 7) << 13 | (vid & 0xFFF)));
    }
    b = Put16(b, ETHERTYPE_IPV4);

    const uint32_t l4 = UDP_HEADER + IB_BTH + ExtBytes() + tel.Bytes() + trailing;
    uint8_t* ip = b;
    ip[0] = 0x45;
    ip[1] = static_cast<uint8_t>((dscp & 0x3F) << 2 | (ecn & 3));
    Put16(ip + 2, static_cast<uint16_t>(IPV4_HEADER + l4));
    Put16(ip + 4, ipId);
    ip[6] = 0x40; // don't fragment, as RoCEv2 NICs send
    ip[7] = 0;
    ip[8] = ttl;
    ip[9] = 17; // UDP
    ip[10] = ip[11] = 0;
    Put32(ip + 12, ipSrc.v);
    Put32(ip + 16, ipDst.v);
    Put16(ip + 10, Ipv4Checksum(ip));
    b += IPV4_HEADER;

    b = Put16(b, udpSrc);
    b = Put16(b, udpDst);
    b = Put16(b, static_cast<uint16_t>(l4));
    b = Put16(b, 0); // RoCEv2 senders leave the UDP checksum zero

    *b++ = opcode;
    *b++ = static_cast<uint8_t>((solicited ? 0x80 : 0) | (migReq ? 0x40 : 0)
                                | (padCount & 3) << 4); // TVer 0
    b = Put16(b, pkey);
    b = Put32(b, (fecn ? 0x80000000u : 0) | (becn ? 0x40000000u : 0)
                     | uint32_t(tel.flags & 0x3F) << 24 | (destQp & 0xFFFFFF));
    b = Put32(b, (ackReq ? 0x80000000u : 0) | (psn & 0xFFFFFF));
    if (opcode == IbOpcode::CNP)
    {
        std::memset(b, 0, ROCE_CNP_RESERVED);
        return uint32_t(b + ROCE_CNP_RESERVED - start);
    }
    if (IbOpcodeHasReth(opcode))
    {
        b = Put32(Put32(b, uint32_t(va >> 32)), uint32_t(va));
        b = Put32(b, rkey);
        b = Put32(b, dmaLength);
    }
    if (IbOpcodeHasAeth(opcode))
    {
        b = Put32(b, uint32_t(syndrome) << 24 | (msn & 0xFFFFFF));
    }
    if (tel.flags & TEL_TIMESTAMP)
    {
        b = Put32(Put32(b, uint32_t(tel.ts >> 32)), uint32_t(tel.ts));
    }
    if (tel.flags & TEL_INT)
    {
        *b++ = tel.nHop;
        *b++ = tel.slots;
        for (uint8_t k = 0; k < tel.slots; ++k)
        {
            b = Put32(Put32(b, uint32_t(tel.hops[k].word >> 32)), uint32_t(tel.hops[k].word));
        }
    }
    return uint32_t(b - start);
}

void
RoceHeader::Serialize(Buffer::Iterator i) const
{
    uint8_t b[ROCE_HEADER_MAX];
    i.Write(b, Write(b));
}

uint32_t
RoceHeader::Read(const uint8_t* start, uint32_t len)
{
    const uint8_t* b = start;
    // The shortest RoCEv2 header (an ACK without VLAN tag) before any field is looked at.
    if (len < ETH_HEADER + IPV4_HEADER + UDP_HEADER + IB_BTH + IB_AETH)
    {
        return 0;
    }
    std::memcpy(dst.b.data(), b, 6);
    std::memcpy(src.b.data(), b + 6, 6);
    b += 12;
    uint16_t type = Get16(b);
    b += 2;
    vlan = type == ETHERTYPE_VLAN;
    if (vlan)
    {
        const uint16_t tci = Get16(b);
        pcp = tci >> 13;
        vid = tci & 0xFFF;
        type = Get16(b + 2);
        b += 4;
    }
    const uint8_t* ip = b;
    dscp = ip[1] >> 2;
    ecn = ip[1] & 3;
    const uint16_t total = Get16(ip + 2);
    ipId = Get16(ip + 4);
    ttl = ip[8];
    ipSrc.v = Get32(ip + 12);
    ipDst.v = Get32(ip + 16);
    b += IPV4_HEADER;
    udpSrc = Get16(b);
    udpDst = Get16(b + 2);
    b += UDP_HEADER; // length and checksum are not kept
    opcode = b[0];
    const uint8_t f = b[1];
    solicited = f & 0x80;
    migReq = f & 0x40;
    padCount = (f >> 4) & 3;
    pkey = Get16(b + 2);
    uint32_t w = Get32(b + 4);
    fecn = w & 0x80000000u;
    becn = w & 0x40000000u;
    tel.flags = uint8_t(w >> 24) & (TEL_TIMESTAMP | TEL_INT);
    destQp = w & 0xFFFFFF;
    w = Get32(b + 8);
    ackReq = w & 0x80000000u;
    psn = w & 0xFFFFFF;
    b += IB_BTH;
    const uint32_t ext = ExtBytes();
    if (uint32_t(b - start) + ext > len)
    {
        return 0;
    }
    if (opcode != IbOpcode::CNP)
    {
        if (IbOpcodeHasReth(opcode))
        {
            va = uint64_t(Get32(b)) << 32 | Get32(b + 4);
            rkey = Get32(b + 8);
            dmaLength = Get32(b + 12);
        }
        if (IbOpcodeHasAeth(opcode))
        {
            w = Get32(b);
            syndrome = w >> 24;
            msn = w & 0xFFFFFF;
        }
    }
    b += ext;
    if (opcode != IbOpcode::CNP && tel.flags)
    {
        if (tel.flags & TEL_TIMESTAMP)
        {
            if (uint32_t(b - start) + TEL_TIMESTAMP_BYTES > len)
            {
                return 0;
            }
            tel.ts = uint64_t(Get32(b)) << 32 | Get32(b + 4);
            b += TEL_TIMESTAMP_BYTES;
        }
        if (tel.flags & TEL_INT)
        {
            if (uint32_t(b - start) + INT_HEADER_BYTES > len)
            {
                return 0;
            }
            tel.nHop = b[0];
            tel.slots = std::min(b[1], INT_MAX_HOPS);
            b += INT_HEADER_BYTES;
            if (uint32_t(b - start) + INT_HOP_BYTES * tel.slots > len)
            {
                return 0;
            }
            for (uint8_t k = 0; k < tel.slots; ++k, b += INT_HOP_BYTES)
            {
                tel.hops[k].word = uint64_t(Get32(b)) << 32 | Get32(b + 4);
            }
        }
    }
    trailing = total - IPV4_HEADER - UDP_HEADER - IB_BTH - ext - tel.Bytes();
    return uint32_t(b - start);
}

uint32_t
RoceHeader::Deserialize(Buffer::Iterator start)
{
    uint8_t b[ROCE_HEADER_MAX];
    const uint32_t n = std::min<uint32_t>(ROCE_HEADER_MAX, start.GetRemainingSize());
    start.Read(b, n);
    return Read(b, n);
}

void
RoceHeader::Print(std::ostream& os) const
{
    os << "Eth " << Mac48Address(src) << " > " << Mac48Address(dst);
    if (vlan)
    {
        os << " 802.1Q pcp=" << unsigned(pcp) << " vid=" << vid;
    }
    os << " IPv4 " << Ipv4Address(ipSrc) << " > " << Ipv4Address(ipDst)
       << " dscp=" << unsigned(dscp) << " ecn=" << unsigned(ecn) << " UDP " << udpSrc << " > "
       << udpDst << " BTH op=0x" << std::hex << unsigned(opcode) << std::dec << " qp=" << destQp
       << " psn=" << psn << (ackReq ? " A" : "");
    if (opcode != IbOpcode::CNP && IbOpcodeHasReth(opcode))
    {
        os << " RETH va=" << va << " rkey=" << rkey << " len=" << dmaLength;
    }
    if (opcode != IbOpcode::CNP && IbOpcodeHasAeth(opcode))
    {
        os << " AETH syn=0x" << std::hex << unsigned(syndrome) << std::dec << " msn=" << msn;
    }
    if (tel.flags & TEL_TIMESTAMP)
    {
        os << " TS=" << tel.ts;
    }
    if (tel.flags & TEL_INT)
    {
        os << " INT " << unsigned(tel.nHop) << "/" << unsigned(tel.slots);
    }
}

IntHop
IntHop::Make(uint8_t speedCode, uint64_t timeNs, uint64_t txBytes, uint64_t qlenBytes)
{
    IntHop h;
    const uint64_t q = std::min<uint64_t>(qlenBytes / QLEN_UNIT, 0xFFFF);
    h.word = uint64_t(speedCode & 0xF) << 60 | (timeNs & ((1u << TIME_BITS) - 1)) << 36
             | ((txBytes / TX_UNIT) & ((1u << TX_BITS) - 1)) << 16 | q;
    return h;
}

double
IntHop::LineRate() const
{
    return double(EthBitRate(EthSpeed(SpeedCode())));
}

TypeId
PfcHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PfcHeader")
                            .SetParent<Header>()
                            .SetGroupName("RocePfcEcn")
                            .AddConstructor<PfcHeader>();
    return tid;
}

TypeId
PfcHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
PfcHeader::Serialize(Buffer::Iterator i) const
{
    // 01-80-C2-00-00-01: the reserved MAC Control multicast address (IEEE 802.3 Annex 31B).
    WriteMac(i, Mac48Address("01:80:c2:00:00:01"));
    WriteMac(i, src);
    i.WriteHtonU16(ETHERTYPE_MAC_CONTROL);
    i.WriteHtonU16(MAC_CONTROL_PFC);
    i.WriteHtonU16(classEnable);
    for (uint16_t q : quanta)
    {
        i.WriteHtonU16(q);
    }
    i.WriteU8(0, PFC_FRAME - 34);
}

uint32_t
PfcHeader::Deserialize(Buffer::Iterator start)
{
    Buffer::Iterator i = start;
    ReadMac(i);
    src = ReadMac(i);
    i.ReadNtohU16();
    i.ReadNtohU16();
    classEnable = static_cast<uint8_t>(i.ReadNtohU16());
    for (auto& q : quanta)
    {
        q = i.ReadNtohU16();
    }
    i.Next(PFC_FRAME - 34);
    return PFC_FRAME;
}

void
PfcHeader::Print(std::ostream& os) const
{
    os << "PFC " << src << " cev=0x" << std::hex << unsigned(classEnable) << std::dec;
    for (int c = 0; c < 8; ++c)
    {
        if (classEnable & (1 << c))
        {
            os << " c" << c << "=" << quanta[c];
        }
    }
}

FrameView
ParseFrame(const FrameBytes& f)
{
    const uint8_t* b = f.b;
    const uint32_t n = f.n;
    FrameView v;
    if (n < 14)
    {
        return v;
    }
    uint32_t o = 12;
    v.etherType = uint16_t(b[o]) << 8 | b[o + 1];
    if (v.etherType == ETHERTYPE_VLAN)
    {
        v.vlan = true;
        v.pcp = b[14] >> 5;
        o += 4;
        v.etherType = uint16_t(b[o]) << 8 | b[o + 1];
    }
    o += 2;
    if (v.etherType != ETHERTYPE_IPV4 || n < o + 24)
    {
        return v;
    }
    v.ip = uint8_t(o);
    v.dscp = b[o + 1] >> 2;
    v.ecn = b[o + 1] & 3;
    v.proto = b[o + 9];
    v.ipSrc = uint32_t(b[o + 12]) << 24 | uint32_t(b[o + 13]) << 16 | uint32_t(b[o + 14]) << 8
              | b[o + 15];
    v.ipDst = uint32_t(b[o + 16]) << 24 | uint32_t(b[o + 17]) << 16 | uint32_t(b[o + 18]) << 8
              | b[o + 19];
    v.sport = uint16_t(b[o + 20]) << 8 | b[o + 21];
    v.dport = uint16_t(b[o + 22]) << 8 | b[o + 23];
    return v;
}

FrameView
PeekFrame(Ptr<const Packet> p)
{
    FrameBytes f;
    f.n = p->CopyData(f.b, ETH_HEADER + VLAN_TAG + IPV4_HEADER + UDP_HEADER);
    return ParseFrame(f);
}

Ptr<Packet>
MakeRocePacket(const RoceHeader& h)
{
    uint8_t b[ROCE_HEADER_MAX];
    const uint32_t n = h.Write(b);
    return MakePacketFromBytes(b, n, h.trailing);
}

Ptr<Packet>
MakePacketFromBytes(const uint8_t* b, uint32_t n, uint32_t zeros)
{
    RawBytesHeader raw;
    raw.m_len = n;
    std::memcpy(raw.m_b, b, n);
    Ptr<Packet> p = lfsim::ZeroPayload(zeros);
    p->AddHeader(raw);
    return p;
}

FrameOffsets
FindOffsets(const uint8_t* frame, uint32_t len)
{
    FrameOffsets f;
    if (len < ETH_HEADER + IPV4_HEADER)
    {
        return f;
    }
    const uint32_t o = (uint32_t(frame[12]) << 8 | frame[13]) == ETHERTYPE_VLAN ? 18 : 14;
    const uint8_t* ip = frame + o;
    if ((uint32_t(frame[o - 2]) << 8 | frame[o - 1]) != ETHERTYPE_IPV4 || len < o + IPV4_HEADER)
    {
        return f;
    }
    const uint32_t ihl = (ip[0] & 0x0F) * 4u;
    const uint32_t total = uint32_t(ip[2]) << 8 | ip[3];
    if (ihl < IPV4_HEADER || total < ihl || o + total > len)
    {
        return f;
    }
    f.ip = o;
    f.end = o + total;
    const uint8_t* udp = ip + ihl;
    if (ip[9] == 17 && total >= ihl + UDP_HEADER + IB_BTH + IB_ICRC
        && (uint32_t(udp[2]) << 8 | udp[3]) == ROCEV2_UDP_PORT)
    {
        f.bth = o + ihl + UDP_HEADER;
    }
    return f;
}

void
FillRoceIcrc(uint8_t* frame, uint32_t len)
{
    const FrameOffsets f = FindOffsets(frame, len);
    if (!f.bth)
    {
        return;
    }
    const uint8_t* ip = frame + f.ip;
    const uint32_t ihl = f.bth - f.ip - UDP_HEADER;
    const uint32_t total = f.end - f.ip;
    const uint32_t masked = ihl + UDP_HEADER + IB_BTH;
    uint8_t h[60 + UDP_HEADER + IB_BTH];
    std::memcpy(h, ip, masked);
    h[1] = 0xFF;                    // TOS: DSCP and ECN change on the way
    h[8] = 0xFF;                    // TTL
    h[10] = h[11] = 0xFF;           // header checksum
    h[ihl + 6] = h[ihl + 7] = 0xFF; // UDP checksum
    h[ihl + UDP_HEADER + 4] = 0xFF; // BTH resv8a: FECN and BECN change on the way
    static const uint8_t ones[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    boost::crc_32_type crc;
    crc.process_bytes(ones, sizeof(ones));
    crc.process_bytes(h, masked);
    crc.process_bytes(ip + masked, total - masked - IB_ICRC);
    lfsim::PutCrc32(frame + f.end - IB_ICRC, crc.checksum());
}

FrameEdit
EditOf(const FrameBytes& f, const FrameView& v, bool intSlot)
{
    FrameEdit e;
    e.ip = v.ip;
    e.flags = (v.ecn == 1 || v.ecn == 2) ? FrameEdit::ECT : 0;
    if (!intSlot || !v.ip || v.proto != 17 || v.dport != ROCEV2_UDP_PORT)
    {
        return e;
    }
    const uint8_t* b = f.b;
    const uint32_t bth = v.ip + IPV4_HEADER + UDP_HEADER;
    if (f.n < bth + IB_BTH)
    {
        return e;
    }
    const uint8_t opcode = b[bth];
    const uint8_t flags = b[bth + 4] & (TEL_TIMESTAMP | TEL_INT);
    if (!(flags & TEL_INT) || opcode == IbOpcode::ACKNOWLEDGE || opcode == IbOpcode::CNP)
    {
        return e;
    }
    const uint32_t at = bth + IB_BTH + ExtFor(opcode) + (flags & TEL_TIMESTAMP ? 8 : 0);
    if (f.n < at + INT_HEADER_BYTES)
    {
        return e;
    }
    const uint8_t filled = b[at];
    if (filled >= std::min(b[at + 1], INT_MAX_HOPS))
    {
        return e;
    }
    e.intAt = uint8_t(at);
    e.intFilled = filled;
    return e;
}

/// Up to the end of what an edit changes: the IPv4 header, or the INT record (after it).
static uint32_t
EditLength(const FrameEdit& e, const IntHop* hop)
{
    return hop ? e.intAt + INT_HEADER_BYTES + INT_HOP_BYTES * (e.intFilled + 1)
               : e.ip + IPV4_HEADER;
}

/// The edit on bytes that hold at least EditLength of the frame (hop already cleared when the
/// frame has no INT slot).
static void
EditBytes(uint8_t* b, const FrameEdit& e, bool ce, const IntHop* hop)
{
    if (ce)
    {
        uint8_t* ip = b + e.ip;
        ip[1] |= 3;
        ip[10] = ip[11] = 0;
        const uint16_t sum = Ipv4Checksum(ip);
        ip[10] = sum >> 8;
        ip[11] = sum & 0xFF;
    }
    if (hop)
    {
        const uint32_t rec = e.intAt + INT_HEADER_BYTES + INT_HOP_BYTES * e.intFilled;
        for (int k = 0; k < 8; ++k)
        {
            b[rec + k] = uint8_t(hop->word >> (56 - 8 * k));
        }
        b[e.intAt] = e.intFilled + 1;
    }
}

void
EditFrame(const Ptr<Packet>& p, const FrameEdit& e, bool ce, const IntHop* hop)
{
    ce = ce && e.ip;
    hop = e.intAt ? hop : nullptr;
    if (!ce && !hop)
    {
        return;
    }
    RawBytesHeader h;
    h.m_len = EditLength(e, hop);
    p->CopyData(h.m_b, h.m_len);
    EditBytes(h.m_b, e, ce, hop);
    p->RemoveAtStart(h.m_len);
    p->AddHeader(h);
}

void
EditFrameBytes(uint8_t* b, const FrameEdit& e, bool ce, const IntHop* hop)
{
    ce = ce && e.ip;
    hop = e.intAt ? hop : nullptr;
    if (ce || hop)
    {
        EditBytes(b, e, ce, hop);
    }
}

void
MarkCe(Ptr<Packet> p)
{
    FrameEdit e;
    e.ip = PeekFrame(p).ip;
    EditFrame(p, e, true, nullptr);
}

bool
StampInt(Ptr<Packet> p, IntHop hop)
{
    FrameBytes f;
    f.n = p->CopyData(f.b, ROCE_HEADER_MAX);
    const FrameEdit e = EditOf(f, ParseFrame(f), true);
    EditFrame(p, e, false, &hop);
    return e.intAt != 0;
}

void
AddEthernetToIpv4(Ptr<Packet> ip, Mac48Address dst, Mac48Address src, bool vlan, uint8_t pcp,
                  uint16_t vid, uint8_t dscp)
{
    RawBytesHeader h;
    const uint32_t eth = ETH_HEADER + (vlan ? VLAN_TAG : 0);
    uint8_t* b = h.m_b;
    dst.CopyTo(b);
    src.CopyTo(b + 6);
    uint32_t o = 12;
    if (vlan)
    {
        const uint16_t tci = uint16_t(pcp) << 13 | (vid & 0x0FFF);
        b[o++] = ETHERTYPE_VLAN >> 8;
        b[o++] = ETHERTYPE_VLAN & 0xFF;
        b[o++] = tci >> 8;
        b[o++] = tci & 0xFF;
    }
    b[o++] = ETHERTYPE_IPV4 >> 8;
    b[o++] = ETHERTYPE_IPV4 & 0xFF;
    uint8_t* iph = b + eth;
    ip->CopyData(iph, IPV4_HEADER);
    iph[1] = uint8_t(dscp << 2) | (iph[1] & 3);
    iph[10] = iph[11] = 0;
    const uint16_t sum = Ipv4Checksum(iph);
    iph[10] = sum >> 8;
    iph[11] = sum & 0xFF;
    h.m_len = eth + IPV4_HEADER;
    ip->RemoveAtStart(IPV4_HEADER);
    ip->AddHeader(h);
}

Mac48Address
RemoveEthernet(Ptr<Packet> frame)
{
    uint8_t b[14];
    frame->CopyData(b, 14);
    Mac48Address src;
    src.CopyFrom(b + 6);
    const bool vlan = (uint16_t(b[12]) << 8 | b[13]) == ETHERTYPE_VLAN;
    frame->RemoveAtStart(ETH_HEADER + (vlan ? VLAN_TAG : 0));
    return src;
}

} // namespace ns3
