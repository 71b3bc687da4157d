#include "iscsi-pdu.h"

namespace ns3
{

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
