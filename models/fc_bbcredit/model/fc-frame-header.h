/*
 * The 24-byte Fibre Channel frame header (FC-FS-3 clause 9), serialized exactly.
 */
#ifndef FC_FRAME_HEADER_H
#define FC_FRAME_HEADER_H

#include "ns3/header.h"
#include "ns3/packet.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/// R_CTL routing/information values used here (FC-FS Device_Data, FC-4 categories; Basic Link
/// Data: routing 1000b, information category the BLS command).
namespace FcRctl
{
constexpr uint8_t SOLICITED_DATA = 0x01;   ///< FCP_DATA
constexpr uint8_t UNSOLICITED_DATA = 0x04; ///< IP over FC (RFC 4338), ping-pong messages
constexpr uint8_t DATA_DESCRIPTOR = 0x05;  ///< FCP_XFER_RDY
constexpr uint8_t UNSOLICITED_CMD = 0x06;  ///< FCP_CMND
constexpr uint8_t COMMAND_STATUS = 0x07;   ///< FCP_RSP
constexpr uint8_t ABTS = 0x81;             ///< Abort Sequence (no payload)
constexpr uint8_t BA_ACC = 0x84;           ///< Basic Accept (12-byte payload for ABTS)
constexpr uint8_t BA_RJT = 0x85;           ///< Basic Reject (4-byte payload)
} // namespace FcRctl

/// TYPE field values.
namespace FcType
{
constexpr uint8_t BLS = 0x00; ///< Basic Link Services
constexpr uint8_t IP = 0x05;
constexpr uint8_t FCP = 0x08;
} // namespace FcType

/// Basic Link Services payloads (FC-FS-4; field values as Linux's fc_fs.h and Wireshark's
/// packet-fcbls.h name them).
namespace FcBls
{
/// BA_ACC for ABTS: SEQ_ID validity, SEQ_ID, reserved (2), OX_ID, RX_ID, low and high SEQ_CNT.
constexpr uint32_t BA_ACC_SIZE = 12;
/// BA_RJT: reserved, reason code, reason explanation, vendor unique.
constexpr uint32_t BA_RJT_SIZE = 4;
constexpr uint8_t RJT_UNABLE_TO_PERFORM = 0x09; ///< reason: unable to perform command request
constexpr uint8_t RJT_INVALID_OX_RX = 0x03;     ///< explanation: invalid OX_ID-RX_ID combination
} // namespace FcBls

/// F_CTL bits (24-bit field).
namespace FcFctl
{
constexpr uint32_t EXCHANGE_CONTEXT = 1u << 23; ///< set: frame from the exchange responder
constexpr uint32_t SEQUENCE_CONTEXT = 1u << 22;
constexpr uint32_t FIRST_SEQUENCE = 1u << 21;
constexpr uint32_t LAST_SEQUENCE = 1u << 20;
constexpr uint32_t END_SEQUENCE = 1u << 19;
constexpr uint32_t SEQUENCE_INITIATIVE = 1u << 16;
constexpr uint32_t RELATIVE_OFFSET = 1u << 3;
constexpr uint32_t FILL_MASK = 0x3; ///< number of fill bytes in the last payload word
} // namespace FcFctl

class FcFrameHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t
    GetSerializedSize() const override
    {
        return 24;
    }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint8_t rCtl = 0;
    uint32_t dId = 0; ///< 24-bit destination FC_ID
    uint8_t csCtl = 0;
    uint32_t sId = 0; ///< 24-bit source FC_ID
    uint8_t type = 0;
    uint32_t fCtl = 0; ///< 24 bits
    uint8_t seqId = 0;
    uint8_t dfCtl = 0;
    uint16_t seqCnt = 0;
    uint16_t oxId = 0xffff;
    uint16_t rxId = 0xffff;
    uint32_t parameter = 0; ///< relative offset for data frames
};

/// S_ID and D_ID of `frame` (FcFrameHeader first), read without deserializing the header.
inline void
FcPeekIds(const Packet& frame, uint32_t& sId, uint32_t& dId)
{
    uint8_t w[8];
    frame.CopyData(w, sizeof(w));
    dId = uint32_t(w[1]) << 16 | uint32_t(w[2]) << 8 | w[3];
    sId = uint32_t(w[5]) << 16 | uint32_t(w[6]) << 8 | w[7];
}

/// Captures only (pcap LINKTYPE_FC_2_WITH_FRAME_DELIMS): replaces `wire` with `frame` (header
/// and payload) as the link carries it: SOF, header, data field with its fill bytes (zeros) up
/// to a whole word, CRC (FC-FS: IEEE 802.3's CRC-32 over header and data field, its low byte
/// first) and EOF. Class 3 delimiters: SOFi3 on the first frame of a sequence (SEQ_CNT 0: the
/// model starts every sequence there), SOFn3 on the others; EOFt on the last one (End_Sequence
/// set), EOFn on the others, each in the form for the 8b/10b running disparity the frame
/// leaves (an ordered set starts at negative disparity; the same form at 64b/66b speeds).
void FcWireFrame(Ptr<const Packet> frame, std::vector<uint8_t>& wire);

} // namespace ns3

#endif
