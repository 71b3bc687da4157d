#include "fc-frame-header.h"

#include <iomanip>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FcFrameHeader);

TypeId
FcFrameHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FcFrameHeader")
                            .SetParent<Header>()
                            .SetGroupName("FcBbCredit")
                            .AddConstructor<FcFrameHeader>();
    return tid;
}

TypeId
FcFrameHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
FcFrameHeader::Serialize(Buffer::Iterator i) const
{
    i.WriteHtonU32((uint32_t(rCtl) << 24) | (dId & 0xffffff));
    i.WriteHtonU32((uint32_t(csCtl) << 24) | (sId & 0xffffff));
    i.WriteHtonU32((uint32_t(type) << 24) | (fCtl & 0xffffff));
    i.WriteU8(seqId);
    i.WriteU8(dfCtl);
    i.WriteHtonU16(seqCnt);
    i.WriteHtonU16(oxId);
    i.WriteHtonU16(rxId);
    i.WriteHtonU32(parameter);
}

uint32_t
FcFrameHeader::Deserialize(Buffer::Iterator i)
{
    uint32_t w = i.ReadNtohU32();
    rCtl = w >> 24;
    dId = w & 0xffffff;
    w = i.ReadNtohU32();
    csCtl = w >> 24;
    sId = w & 0xffffff;
    w = i.ReadNtohU32();
    type = w >> 24;
    fCtl = w & 0xffffff;
    seqId = i.ReadU8();
    dfCtl = i.ReadU8();
    seqCnt = i.ReadNtohU16();
    oxId = i.ReadNtohU16();
    rxId = i.ReadNtohU16();
    parameter = i.ReadNtohU32();
    return 24;
}

void
FcFrameHeader::Print(std::ostream& os) const
{
    os << std::hex << "R_CTL=0x" << int(rCtl) << " D_ID=0x" << dId << " S_ID=0x" << sId
       << " TYPE=0x" << int(type) << " F_CTL=0x" << fCtl << std::dec << " SEQ_ID=" << int(seqId)
       << " SEQ_CNT=" << seqCnt << " OX_ID=" << oxId << " RX_ID=" << rxId << " PARAM=" << parameter;
}

} // namespace ns3
