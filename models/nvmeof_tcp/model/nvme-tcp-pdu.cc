#include "nvme-tcp-pdu.h"

#include "lfsim-crc32c.h"

#include <algorithm>

namespace ns3
{

namespace
{
/// PLEN above this is taken as a corrupt header rather than waited for (a C2HData of the largest
/// transfer, 65536 blocks of 4 KiB, with header, pad and digests).
constexpr uint32_t MAX_PLEN = (256u << 20) + 256;

uint32_t
Align(uint8_t pda)
{
    return (uint32_t(pda) + 1) * 4;
}
} // namespace

// ---------------------------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(NvmeTcpPduHeader);

NvmeTcpPduHeader::NvmeTcpPduHeader(uint8_t type)
{
    m_b[0] = type;
    m_b[2] = NvmeTcpHlen(type);
}

TypeId
NvmeTcpPduHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NvmeTcpPduHeader")
                            .SetParent<Header>()
                            .SetGroupName("NvmeofTcp")
                            .AddConstructor<NvmeTcpPduHeader>();
    return tid;
}

TypeId
NvmeTcpPduHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
NvmeTcpPduHeader::GetSerializedSize() const
{
    return std::clamp<uint32_t>(GetHlen(), NVME_TCP_CH_SIZE, NVME_TCP_MAX_HLEN);
}

void
NvmeTcpPduHeader::Serialize(Buffer::Iterator start) const
{
    start.Write(m_b.data(), GetSerializedSize());
}

uint32_t
NvmeTcpPduHeader::Deserialize(Buffer::Iterator start)
{
    start.Read(m_b.data(), NVME_TCP_CH_SIZE);
    const uint32_t n = GetSerializedSize();
    start.Read(m_b.data() + NVME_TCP_CH_SIZE, n - NVME_TCP_CH_SIZE);
    return n;
}

void
NvmeTcpPduHeader::SetBytes(const uint8_t* b, uint32_t n)
{
    n = std::min(n, NVME_TCP_MAX_HLEN);
    std::copy(b, b + n, m_b.begin());
    std::fill(m_b.begin() + n, m_b.end(), 0);
}

void
NvmeTcpPduHeader::SetSqe(const uint8_t* sqe)
{
    std::copy(sqe, sqe + NVME_TCP_SQE_SIZE, m_b.begin() + 8);
}

void
NvmeTcpPduHeader::SetCqe(const uint8_t* cqe)
{
    std::copy(cqe, cqe + NVME_TCP_CQE_SIZE, m_b.begin() + 8);
}

void
NvmeTcpPduHeader::Print(std::ostream& os) const
{
    os << "type=" << unsigned(GetPduType()) << " flags=0x" << std::hex << unsigned(GetFlags())
       << std::dec << " hlen=" << unsigned(GetHlen()) << " pdo=" << unsigned(GetPdo())
       << " plen=" << GetPlen();
}

// ---------------------------------------------------------------------------------------------

uint32_t
NvmeTcpFrame(NvmeTcpPduHeader& h, uint32_t dataLength, const NvmeTcpFormat& f)
{
    const uint8_t type = h.GetPduType();
    const uint32_t hlen = h.GetHlen();
    uint8_t flags = h.GetFlags() & ~(NvmeTcpFlag::HDGSTF | NvmeTcpFlag::DDGSTF);
    if (!NvmeTcpHasDigests(type))
    {
        h.SetFlags(flags);
        h.SetPdo(0);
        h.SetPlen(hlen + dataLength);
        return 0;
    }
    const uint32_t hd = f.headerDigest ? NVME_TCP_DIGEST_SIZE : 0;
    const uint32_t dd = f.dataDigest && dataLength > 0 ? NVME_TCP_DIGEST_SIZE : 0;
    flags |= (hd ? NvmeTcpFlag::HDGSTF : 0) | (dd ? NvmeTcpFlag::DDGSTF : 0);
    h.SetFlags(flags);
    if (dataLength == 0)
    {
        h.SetPdo(0);
        h.SetPlen(hlen + hd);
        return 0;
    }
    // The data starts at the first multiple of the receiver's alignment after the header and
    // its digest; the gap is PAD.
    const uint32_t align = Align(f.pda);
    const uint32_t pdo = (hlen + hd + align - 1) / align * align;
    h.SetPdo(uint8_t(pdo));
    h.SetPlen(pdo + dataLength + dd);
    return pdo - hlen - hd;
}

NvmeTcpWirePdu
NvmeTcpBuild(NvmeTcpPduHeader& h, const uint8_t* data, uint32_t dataLength, const NvmeTcpFormat& f)
{
    const uint32_t pad = NvmeTcpFrame(h, dataLength, f);
    const uint32_t hlen = h.GetHlen();
    // Header, header digest and pad in one piece; PDO is at most 255.
    uint8_t head[256] = {};
    std::copy(h.Bytes(), h.Bytes() + hlen, head);
    uint32_t at = hlen;
    if (h.GetFlags() & NvmeTcpFlag::HDGSTF)
    {
        lfsim::PutCrc32(head + at, lfsim::Crc32c(head, hlen));
        at += NVME_TCP_DIGEST_SIZE;
    }
    at += pad;
    NvmeTcpWirePdu pdu;
    pdu.pieces[pdu.count++] = Create<Packet>(head, at);
    if (dataLength > 0)
    {
        pdu.pieces[pdu.count++]
            = data ? Create<Packet>(data, dataLength) : Create<Packet>(dataLength);
        if (h.GetFlags() & NvmeTcpFlag::DDGSTF)
        {
            uint8_t d[NVME_TCP_DIGEST_SIZE];
            lfsim::PutCrc32(d, data ? lfsim::Crc32cData(data, dataLength)
                                    : lfsim::Crc32cZeros(dataLength));
            pdu.pieces[pdu.count++] = Create<Packet>(d, NVME_TCP_DIGEST_SIZE);
        }
    }
    return pdu;
}

std::vector<uint8_t>
NvmeTcpSerialize(NvmeTcpPduHeader& h, const uint8_t* data, uint32_t dataLength,
                 const NvmeTcpFormat& f)
{
    const NvmeTcpWirePdu pdu = NvmeTcpBuild(h, data, dataLength, f);
    std::vector<uint8_t> out;
    for (size_t i = 0; i < pdu.count; ++i)
    {
        const uint32_t n = pdu.pieces[i]->GetSize();
        out.resize(out.size() + n);
        pdu.pieces[i]->CopyData(out.data() + out.size() - n, n);
    }
    return out;
}

// ---------------------------------------------------------------------------------------------

NvmeTcpFramer::Status
NvmeTcpFramer::Fail(Fault& fault, uint16_t fes, uint32_t fei, const uint8_t* b, uint32_t n)
{
    fault.fes = fes;
    fault.fei = fei;
    fault.header = b;
    fault.headerLength = std::min<uint32_t>(n, NVME_TCP_TERM_REQ_MAX_DATA);
    return Status::FATAL;
}

NvmeTcpFramer::Status
NvmeTcpFramer::Next(Pdu& pdu, Fault& fault)
{
    using namespace NvmeTcpPduType;
    const size_t avail = m_rx.Size();
    if (avail < NVME_TCP_CH_SIZE)
    {
        return Status::NEED_MORE;
    }
    const uint8_t* b = m_rx.Data();
    const uint8_t type = b[0];
    const uint8_t flags = b[1];
    const uint32_t hlen = NvmeTcpHlen(type);
    const uint32_t seen = uint32_t(std::min<size_t>(avail, NVME_TCP_MAX_HLEN));
    if (hlen == 0)
    {
        return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 0, b, NVME_TCP_CH_SIZE);
    }
    if (b[2] != hlen)
    {
        return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 2, b, NVME_TCP_CH_SIZE);
    }
    const bool digests = NvmeTcpHasDigests(type);
    const uint32_t hd = digests && m_format.headerDigest ? NVME_TCP_DIGEST_SIZE : 0;
    const bool hdgstf = flags & NvmeTcpFlag::HDGSTF;
    if (digests ? hdgstf != (hd > 0) : (flags & (NvmeTcpFlag::HDGSTF | NvmeTcpFlag::DDGSTF)))
    {
        return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 1, b, std::min(seen, hlen));
    }
    if (avail < hlen + hd)
    {
        return Status::NEED_MORE;
    }
    // The header digest is checked before PLEN and PDO are trusted.
    if (hd && lfsim::GetCrc32c(b + hlen) != lfsim::Crc32c(b, hlen))
    {
        return Fail(fault, NvmeTcpFes::HEADER_DIGEST_ERROR, 0, b, hlen + hd);
    }
    const uint32_t plen = NvmeGetLe32(b + 4);
    const uint32_t pdo = b[3];
    uint32_t dataOffset = hlen + hd;
    uint32_t dataLength = 0;
    uint32_t dd = 0;
    if (type == ICREQ || type == ICRESP)
    {
        if (plen != hlen)
        {
            return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 4, b, hlen);
        }
    }
    else if (type == H2C_TERM_REQ || type == C2H_TERM_REQ)
    {
        if (plen < hlen || plen > hlen + NVME_TCP_TERM_REQ_MAX_DATA)
        {
            return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 4, b, hlen);
        }
        dataLength = plen - hlen;
    }
    else if (plen < hlen + hd || plen > MAX_PLEN)
    {
        return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 4, b, hlen + hd);
    }
    else if (plen > hlen + hd)
    {
        // PDU data: DDGSTF as negotiated, PDO at the alignment this end asked for.
        dd = m_format.dataDigest ? NVME_TCP_DIGEST_SIZE : 0;
        if (bool(flags & NvmeTcpFlag::DDGSTF) != (dd > 0))
        {
            return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 1, b, hlen + hd);
        }
        if (pdo < hlen + hd || pdo % Align(m_format.pda) != 0 || pdo + dd >= plen)
        {
            return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 3, b, hlen + hd);
        }
        dataOffset = pdo;
        dataLength = plen - pdo - dd;
    }
    else if (flags & NvmeTcpFlag::DDGSTF)
    {
        return Fail(fault, NvmeTcpFes::INVALID_HEADER_FIELD, 1, b, hlen + hd);
    }
    if (avail < plen)
    {
        return Status::NEED_MORE; // the rest of this PDU is still in flight
    }
    pdu.header.SetBytes(b, hlen);
    pdu.data = b + dataOffset;
    pdu.dataLength = dataLength;
    pdu.plen = plen;
    if (dd && lfsim::GetCrc32c(b + plen - dd) != lfsim::Crc32cData(pdu.data, dataLength))
    {
        fault.header = b;
        fault.headerLength = hlen + hd;
        return Status::DATA_DIGEST;
    }
    m_rx.Consume(plen);
    return Status::PDU;
}

} // namespace ns3
