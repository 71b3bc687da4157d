#include "nvmeof-capture.h"

#include "lfsim-capture.h"
#include "ns3/uinteger.h"
#include "roce-header.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

namespace
{

void
PutBe(uint8_t* b, uint64_t v, int n)
{
    for (int i = 0; i < n; ++i)
    {
        b[i] = uint8_t(v >> (8 * (n - 1 - i)));
    }
}

uint32_t
GetBe(const uint8_t* b, int n)
{
    uint32_t v = 0;
    for (int i = 0; i < n; ++i)
    {
        v = v << 8 | b[i];
    }
    return v;
}

// IBTA Vol. 1: management datagrams (13.4), the Communication Manager (chapter 12) and RDMA IP
// CM Service (Annex A11).
constexpr uint32_t MAD_BYTES = 256;
constexpr uint32_t MAD_HEADER = 24;
constexpr uint32_t IB_DETH = 8;
constexpr uint8_t UD_SEND_ONLY = 0x64;
constexpr uint32_t GSI_QP = 1;
constexpr uint32_t GSI_QKEY = 0x80010000;
constexpr uint8_t MGMT_CLASS_CM = 0x07;
constexpr uint8_t CM_CLASS_VERSION = 2;
constexpr uint8_t MAD_METHOD_SEND = 0x03;
constexpr uint16_t CM_REQ = 0x0010;
constexpr uint16_t CM_REP = 0x0013;
constexpr uint16_t CM_RTU = 0x0014;
/// RDMA IP CM service ID (Annex A11.2.1): prefix 0x0000000001, port space TCP (0x06), port
/// 4420 (the IANA port of NVMe-oF, which Wireshark's nvme-rdma expects by default).
constexpr uint64_t NVMEOF_SERVICE_ID = 0x0000000001061144ULL;
constexpr uint32_t CM_REQ_PRIVATE = 140; ///< offset of the REQ's 92 bytes of private data
constexpr uint32_t CM_REP_PRIVATE = 36;  ///< the REP's 196
constexpr uint32_t IP_CM_HEADER = 36;    ///< Annex A11.6 header opening the REQ's private data
constexpr uint8_t RNR_RETRY = 7;         ///< what nvme-rdma asks of rdma_connect
constexpr uint8_t RETRY_COUNT = 7;
constexpr uint8_t CM_RESPONSE_TIMEOUT = 20; ///< 4.096 us x 2^20, rdma_cm's CMA_CM_RESPONSE_TIMEOUT
constexpr uint8_t MAX_CM_RETRIES = 15;      ///< rdma_cm's CMA_MAX_CM_RETRIES
constexpr uint8_t RD_ATOMIC = 16;           ///< responder resources / initiator depth

uint8_t
MtuCode(uint32_t mtu)
{
    uint8_t code = 1; // 256
    while (code < 5 && (256u << (code - 1)) < mtu)
    {
        ++code;
    }
    return code;
}

uint64_t
Guid(Mac48Address mac)
{
    // EUI-64 from the port's MAC, as RoCE NICs derive their node GUID.
    uint8_t m[6];
    mac.CopyTo(m);
    return uint64_t(m[0] ^ 0x02) << 56 | uint64_t(m[1]) << 48 | uint64_t(m[2]) << 40
           | uint64_t(0xFFFE) << 24 | uint64_t(m[3]) << 16 | uint64_t(m[4]) << 8 | m[5];
}

/// An IPv4 address as a GID (IPv4-mapped IPv6, ::ffff:a.b.c.d), as RoCEv2 names it.
void
PutGid(uint8_t* b, uint32_t ip)
{
    std::memset(b, 0, 16);
    b[10] = b[11] = 0xFF;
    PutBe(b + 12, ip, 4);
}

void
MadHeader(uint8_t* mad, uint64_t tid, uint16_t attribute)
{
    mad[0] = 1; // BaseVersion
    mad[1] = MGMT_CLASS_CM;
    mad[2] = CM_CLASS_VERSION;
    mad[3] = MAD_METHOD_SEND;
    PutBe(mad + 8, tid, 8);
    PutBe(mad + 16, attribute, 2);
}

} // namespace

NvmeofCapture::Endpoint
NvmeofCapture::Local(const RdmaQueuePair& qp)
{
    return {qp.GetNic()->GetIp().Get(), qp.GetQpn()};
}

NvmeofCapture::Connection&
NvmeofCapture::Of(const RdmaQueuePair& qp)
{
    return m_connections[m_connectionOf.at(Local(qp))];
}

void
NvmeofCapture::Connect(const RdmaQueuePair& host, const RdmaQueuePair& target, uint16_t qid,
                       uint16_t cntlid, uint16_t entries)
{
    Connection c;
    std::tie(c.hostIp, c.hostQpn) = Local(host);
    std::tie(c.targetIp, c.targetQpn) = Local(target);
    c.hostGuid = Guid(host.GetNic()->GetPort()->GetMac());
    c.targetGuid = Guid(target.GetNic()->GetPort()->GetMac());
    c.hostPsn = uint32_t(host.GetNextPsn() & 0xFFFFFF);
    c.targetPsn = uint32_t(target.GetNextPsn() & 0xFFFFFF);
    c.qid = qid;
    c.cntlid = cntlid;
    c.entries = entries;
    c.mtu = MtuCode(host.GetNic()->GetPathMtu());
    c.submitted = 0;
    const uint32_t k = m_connections.size();
    m_connections.push_back(c);
    m_connectionOf[{c.hostIp, c.hostQpn}] = k;
    m_connectionOf[{c.targetIp, c.targetQpn}] = k;
}

void
NvmeofCapture::Expect(const RdmaQueuePair& from, const Message& m)
{
    const Connection& c = Of(from);
    const bool fromHost = Local(from) == Endpoint{c.hostIp, c.hostQpn};
    m_next[{fromHost ? c.targetIp : c.hostIp, fromHost ? c.targetQpn : c.hostQpn,
            uint32_t(from.GetNextPsn() & 0xFFFFFF)}]
        = m;
}

void
NvmeofCapture::Submit(const RdmaQueuePair& host, NvmeCommand c)
{
    Connection& conn = Of(host);
    ++conn.submitted;
    if (!c.inCapsule)
    {
        c.key = conn.hostQpn; // the R_Key the model's RDMA READ and WRITE carry
    }
    if (c.opcode == NvmeOpcode::FABRICS)
    {
        c.qid = conn.qid;
        c.sqsize = conn.entries - 1;
    }
    else if (c.opcode == NvmeOpcode::READ || c.opcode == NvmeOpcode::WRITE)
    {
        // The model draws no offsets: each controller's commands read or write consecutive
        // blocks, as the iSCSI initiator's do.
        uint64_t& lba = m_nextLba[conn.cntlid];
        c.slba = lba;
        lba += std::max<uint32_t>(1, c.bytes / NVME_CAPTURE_BLOCK);
    }
    Message m{};
    m.kind = Kind::SQE;
    m.command = c;
    Expect(host, m);
}

void
NvmeofCapture::Complete(const RdmaQueuePair& target, uint16_t cid, uint32_t pending, uint32_t dw0)
{
    const Connection& conn = Of(target);
    Message m{};
    m.kind = Kind::CQE;
    m.cid = cid;
    m.dw0 = dw0;
    m.sqid = conn.qid;
    m.sqhd = uint16_t((conn.submitted - pending) % conn.entries);
    Expect(target, m);
}

void
NvmeofCapture::Transfer(const RdmaQueuePair& target, uint64_t address)
{
    Message m{};
    m.kind = Kind::RETH;
    m.address = address;
    Expect(target, m);
}

void
NvmeofCapture::Fill(lfsim::PortCapture& file, std::vector<uint8_t>& frame)
{
    const FrameOffsets f = FindOffsets(frame.data(), frame.size());
    if (!f.bth)
    {
        return;
    }
    uint8_t* bth = frame.data() + f.bth;
    const uint32_t ipDst = GetBe(frame.data() + f.ip + 16, 4);
    const uint32_t qpn = GetBe(bth + 5, 3);
    auto conn = m_connectionOf.find({ipDst, qpn});
    if (conn == m_connectionOf.end())
    {
        return;
    }
    if (m_shown.insert({&file, conn->second}).second)
    {
        WriteConnect(file, frame, m_connections[conn->second], conn->second);
    }
    auto it = m_next.find({ipDst, qpn, GetBe(bth + 9, 3)});
    if (it == m_next.end())
    {
        return;
    }
    const Message& m = it->second;
    const uint8_t op = bth[0];
    const uint32_t payload = f.bth + IB_BTH + (IbOpcodeHasReth(op) ? IB_RETH : 0);
    const uint32_t room = f.end - IB_ICRC - std::min(f.end - IB_ICRC, payload);
    const bool firstSend = op == IbOpcode::SEND_ONLY || op == IbOpcode::SEND_FIRST;
    if (m.kind == Kind::SQE && firstSend && room >= NVME_SQE_BYTES)
    {
        NvmeWriteSqe(frame.data() + payload, m.command);
    }
    else if (m.kind == Kind::CQE && firstSend && room >= NVME_CQE_BYTES)
    {
        NvmeWriteCqe(frame.data() + payload, m.dw0, m.sqhd, m.sqid, m.cid);
    }
    else if (m.kind == Kind::RETH && IbOpcodeHasReth(op))
    {
        PutBe(bth + IB_BTH, m.address, 8);
    }
}

void
NvmeofCapture::WriteConnect(lfsim::PortCapture& file, const std::vector<uint8_t>& frame,
                            const Connection& c, uint32_t index)
{
    const FrameOffsets f = FindOffsets(frame.data(), frame.size());
    const bool toHost = GetBe(frame.data() + f.ip + 16, 4) == c.hostIp;
    const uint32_t udp = f.bth - UDP_HEADER;
    const uint64_t tid = 0x4E564D4500000000ULL | index; // "NVME", then the connection
    const uint32_t hostComm = 0x10000000 | index;
    const uint32_t targetComm = 0x20000000 | index;
    std::vector<uint8_t> out(f.ip + IPV4_HEADER + UDP_HEADER + IB_BTH + IB_DETH + MAD_BYTES
                             + IB_ICRC);
    uint8_t* mad = out.data() + f.ip + IPV4_HEADER + UDP_HEADER + IB_BTH + IB_DETH;

    // One MAD to QP1 of the other end: the frame's Ethernet header (reversed for the other
    // direction), IPv4 in its traffic class, UDP from its source port, BTH and DETH.
    auto send = [&](bool fromHost, uint32_t psn)
    {
        std::copy(frame.begin(), frame.begin() + f.ip, out.begin());
        if (fromHost == toHost)
        {
            std::swap_ranges(out.begin(), out.begin() + 6, out.begin() + 6);
        }
        uint8_t* ip = out.data() + f.ip;
        std::memset(ip, 0, IPV4_HEADER);
        ip[0] = 0x45;
        ip[1] = frame[f.ip + 1] & 0xFC; // its DSCP, not ECN-capable
        PutBe(ip + 2, out.size() - f.ip, 2);
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = 17;
        PutBe(ip + 12, fromHost ? c.hostIp : c.targetIp, 4);
        PutBe(ip + 16, fromHost ? c.targetIp : c.hostIp, 4);
        PutBe(ip + 10, lfsim::InternetChecksum(ip, IPV4_HEADER), 2);
        uint8_t* u = ip + IPV4_HEADER;
        std::copy(frame.begin() + udp, frame.begin() + udp + 2, u);
        PutBe(u + 2, ROCEV2_UDP_PORT, 2);
        PutBe(u + 4, out.size() - f.ip - IPV4_HEADER, 2);
        PutBe(u + 6, 0, 2);
        uint8_t* b = u + UDP_HEADER;
        std::memset(b, 0, IB_BTH + IB_DETH);
        b[0] = UD_SEND_ONLY;
        PutBe(b + 2, 0xFFFF, 2); // default P_Key
        PutBe(b + 5, GSI_QP, 3);
        PutBe(b + 9, psn, 3);
        PutBe(b + IB_BTH, GSI_QKEY, 4);
        PutBe(b + IB_BTH + 5, GSI_QP, 3);
        FillRoceIcrc(out.data(), out.size());
        file.Write(out.data(), out.size());
    };

    // ConnectRequest (IBTA Vol. 1 12.6.5), host to target.
    std::memset(mad, 0, MAD_BYTES);
    MadHeader(mad, tid, CM_REQ);
    uint8_t* d = mad + MAD_HEADER;
    PutBe(d, hostComm, 4);
    PutBe(d + 8, NVMEOF_SERVICE_ID, 8);
    PutBe(d + 16, c.hostGuid, 8);
    PutBe(d + 32, c.hostQpn, 3);
    d[35] = RD_ATOMIC;                             // responder resources
    d[43] = CM_RESPONSE_TIMEOUT << 3 | 0 << 1 | 1; // transport RC, end-to-end flow control
    PutBe(d + 44, c.hostPsn, 3);
    d[47] = CM_RESPONSE_TIMEOUT << 3 | RETRY_COUNT;
    PutBe(d + 48, 0xFFFF, 2);
    d[50] = c.mtu << 4 | RNR_RETRY;
    d[51] = MAX_CM_RETRIES << 4;
    PutBe(d + 52, 0xFFFF, 2); // LIDs: permissive (RoCE has none)
    PutBe(d + 54, 0xFFFF, 2);
    PutGid(d + 56, c.hostIp);
    PutGid(d + 72, c.targetIp);
    d[92] = frame[f.ip + 1] & 0xFC; // traffic class
    d[93] = 64;                     // hop limit
    uint8_t* p = d + CM_REQ_PRIVATE;
    p[1] = 0x40;                                // IP CM header: IPV 4
    PutBe(p + 2, 0xC000 | (index & 0x3FFF), 2); // the host's source port
    PutBe(p + 16, c.hostIp, 4);
    PutBe(p + 32, c.targetIp, 4);
    uint8_t* nvme = p + IP_CM_HEADER; // NVMe-oF 1.1 Figure 54: RECFMT 0, QID, HRQSIZE, HSQSIZE
    NvmePutLe16(nvme + 2, c.qid);
    NvmePutLe16(nvme + 4, c.entries);
    NvmePutLe16(nvme + 6, c.entries - 1);
    NvmePutLe16(nvme + 8, c.cntlid);
    send(true, 0);

    // ConnectReply (12.6.8), target to host: NVMe-oF 1.1 Figure 55, RECFMT 0, CRQSIZE.
    std::memset(mad, 0, MAD_BYTES);
    MadHeader(mad, tid, CM_REP);
    PutBe(d, targetComm, 4);
    PutBe(d + 4, hostComm, 4);
    PutBe(d + 12, c.targetQpn, 3);
    PutBe(d + 20, c.targetPsn, 3);
    d[25] = RD_ATOMIC; // initiator depth: the target reads the host's buffers
    d[26] = CM_RESPONSE_TIMEOUT << 3 | 1;
    d[27] = RNR_RETRY << 5;
    PutBe(d + 28, c.targetGuid, 8);
    NvmePutLe16(d + CM_REP_PRIVATE + 2, c.entries);
    send(false, 0);

    // ReadyToUse (12.6.9), host to target.
    std::memset(mad, 0, MAD_BYTES);
    MadHeader(mad, tid, CM_RTU);
    PutBe(d, hostComm, 4);
    PutBe(d + 4, targetComm, 4);
    send(true, 1);
}

} // namespace ns3
