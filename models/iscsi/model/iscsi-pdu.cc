#include "iscsi-pdu.h"

#include <boost/crc.hpp>
#include <unordered_map>

namespace ns3
{

uint32_t
Crc32c(const uint8_t* data, size_t n)
{
    // Castagnoli polynomial, reflected in and out, init and final XOR all ones (RFC 3720 B.4).
    boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
    crc.process_bytes(data, n);
    return crc.checksum();
}

uint32_t
Crc32cZeros(uint32_t n)
{
    // Data segments are zero bytes and their lengths repeat (MaxRecvDataSegmentLength), so the
    // digest of each length is computed once.
    static std::unordered_map<uint32_t, uint32_t> memo;
    auto it = memo.find(n);
    if (it != memo.end())
    {
        return it->second;
    }
    boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
    static const uint8_t zeros[4096] = {};
    for (uint32_t left = n; left > 0;)
    {
        const uint32_t k = std::min<uint32_t>(left, sizeof(zeros));
        crc.process_bytes(zeros, k);
        left -= k;
    }
    return memo.emplace(n, crc.checksum()).first->second;
}

void
IscsiPutDigest(uint8_t* b, uint32_t crc)
{
    b[0] = crc;
    b[1] = crc >> 8;
    b[2] = crc >> 16;
    b[3] = crc >> 24;
}

uint32_t
IscsiGetDigest(const uint8_t* b)
{
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

NS_OBJECT_ENSURE_REGISTERED(IscsiBhs);

TypeId
IscsiBhs::GetTypeId()
{
    static TypeId tid = TypeId("ns3::IscsiBhs")
                            .SetParent<Header>()
                            .SetGroupName("Iscsi")
                            .AddConstructor<IscsiBhs>();
    return tid;
}

TypeId
IscsiBhs::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
IscsiBhs::Serialize(Buffer::Iterator start) const
{
    start.Write(m_b.data(), ISCSI_BHS_SIZE);
}

uint32_t
IscsiBhs::Deserialize(Buffer::Iterator start)
{
    start.Read(m_b.data(), ISCSI_BHS_SIZE);
    return ISCSI_BHS_SIZE;
}

void
IscsiBhs::SetCdb(const uint8_t* cdb, size_t n)
{
    std::fill(m_b.begin() + 32, m_b.end(), 0);
    std::copy(cdb, cdb + std::min<size_t>(n, 16), m_b.begin() + 32);
}

void
IscsiBhs::Print(std::ostream& os) const
{
    os << "opcode=0x" << std::hex << unsigned(GetOpcode()) << " flags=0x" << unsigned(GetFlags())
       << std::dec << " dsl=" << GetDataSegmentLength() << " itt=" << GetInitiatorTaskTag();
}

} // namespace ns3
