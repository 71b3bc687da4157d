#include "fc-frame-header.h"

#include "fc-speed.h"
#include "lfsim-crc32.h"

#include <array>
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

namespace
{
/// Ordered sets (FC-FS), first character K28.5 (0xBC), in transmission order.
constexpr uint8_t K28_5 = 0xBC;
constexpr std::array<uint8_t, 4> SOF_I3 = {K28_5, 0xB5, 0x56, 0x56}; // D21.5 D22.2 D22.2
constexpr std::array<uint8_t, 4> SOF_N3 = {K28_5, 0xB5, 0x36, 0x36}; // D21.5 D22.1 D22.1
constexpr uint8_t EOF_NEG = 0x95; // D21.4: after K28.5 at negative disparity
constexpr uint8_t EOF_POS = 0xB5; // D21.5: after K28.5 at positive disparity
constexpr uint8_t EOF_T = 0x75;   // D21.3 D21.3: EOFt
constexpr uint8_t EOF_N = 0xD5;   // D21.6 D21.6: EOFn

/// flips[b]: an 8b/10b encoder's running disparity flips on data byte b. A sub-block flips
/// it when its code has unequal ones and zeros: 5b/6b codes D.0, 1, 2, 4, 8, 15, 16, 23, 24,
/// 27, 29, 30, 31 and 3b/4b codes D.x.0, 4, 7 (IEEE 802.3 Tables 36-1a/b).
std::array<bool, 256>
MakeFlips()
{
    constexpr uint32_t sixB = 1u << 0 | 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8 | 1u << 15 | 1u << 16
                              | 1u << 23 | 1u << 24 | 1u << 27 | 1u << 29 | 1u << 30 | 1u << 31;
    constexpr uint32_t fourB = 1u << 0 | 1u << 4 | 1u << 7;
    std::array<bool, 256> f{};
    for (uint32_t b = 0; b < 256; ++b)
    {
        f[b] = ((sixB >> (b & 0x1F)) & 1) != ((fourB >> (b >> 5)) & 1);
    }
    return f;
}
} // namespace

void
FcWireFrame(Ptr<const Packet> frame, std::vector<uint8_t>& wire)
{
    static const std::array<bool, 256> flips = MakeFlips();
    const uint32_t size = frame->GetSize();
    const uint32_t field = FcPaddedPayload(size - FC_HEADER);
    wire.assign(FC_SOF + FC_HEADER + field + FC_CRC + FC_EOF, 0);
    uint8_t* h = wire.data() + FC_SOF;
    frame->CopyData(h, size);
    const uint16_t seqCnt = uint16_t(h[14]) << 8 | h[15];
    const bool endSequence = h[9] & (FcFctl::END_SEQUENCE >> 16);
    const auto& sof = seqCnt == 0 ? SOF_I3 : SOF_N3;
    std::copy(sof.begin(), sof.end(), wire.begin());
    uint8_t* crc = h + FC_HEADER + field;
    boost::crc_32_type fcCrc;
    fcCrc.process_bytes(h, FC_HEADER + field);
    lfsim::PutCrc32(crc, fcCrc.checksum());
    // K28.5 of the SOF turns the disparity positive; its data characters keep it.
    bool positive = true;
    for (const uint8_t* b = h; b < crc + FC_CRC; ++b)
    {
        positive ^= flips[*b];
    }
    uint8_t* eof = crc + FC_CRC;
    eof[0] = K28_5;
    eof[1] = positive ? EOF_POS : EOF_NEG;
    eof[2] = eof[3] = endSequence ? EOF_T : EOF_N;
}

} // namespace ns3
