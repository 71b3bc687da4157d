/*
 * iSCSI PDUs (RFC 7143 section 11): the 48-byte Basic Header Segment (11.2.1), the wire size of a
 * whole PDU, and the CRC32C digests (RFC 7143 section 13.1, polynomial 0x1EDC6F41).
 *
 * Every opcode shares the BHS layout of RFC 7143 section 11.2.1 (byte 0: I bit and opcode;
 * byte 1: F bit and flags; bytes 4-7: TotalAHSLength and the 24-bit DataSegmentLength; bytes
 * 8-15: LUN or opcode-specific; bytes 16-19: Initiator Task Tag; bytes 20-47: opcode-specific).
 * IscsiBhs keeps the 48 bytes as they go on the wire (big-endian) and names the opcode-specific
 * fields at the offsets the RFC's figures give them, so serialization is exact by construction.
 */
#ifndef ISCSI_PDU_H
#define ISCSI_PDU_H

#include "ns3/header.h"

#include <array>
#include <cstdint>

namespace ns3
{

/// Opcodes (RFC 7143 section 11.2.1.2).
namespace IscsiOpcode
{
constexpr uint8_t NOP_OUT = 0x00;
constexpr uint8_t SCSI_COMMAND = 0x01;
constexpr uint8_t TASK_MGMT_REQUEST = 0x02;
constexpr uint8_t LOGIN_REQUEST = 0x03;
constexpr uint8_t TEXT_REQUEST = 0x04;
constexpr uint8_t DATA_OUT = 0x05;
constexpr uint8_t NOP_IN = 0x20;
constexpr uint8_t SCSI_RESPONSE = 0x21;
constexpr uint8_t TASK_MGMT_RESPONSE = 0x22;
constexpr uint8_t LOGIN_RESPONSE = 0x23;
constexpr uint8_t TEXT_RESPONSE = 0x24;
constexpr uint8_t DATA_IN = 0x25;
constexpr uint8_t R2T = 0x31;
constexpr uint8_t REJECT = 0x3f;
} // namespace IscsiOpcode

/// Flag bits of byte 1.
namespace IscsiFlag
{
constexpr uint8_t FINAL = 0x80;       ///< F: last PDU of a sequence / no unsolicited data follows
constexpr uint8_t READ = 0x40;        ///< R (SCSI Command)
constexpr uint8_t WRITE = 0x20;       ///< W (SCSI Command)
constexpr uint8_t ATTR_SIMPLE = 0x01; ///< task attribute SIMPLE (SCSI Command, bits 5-7)
constexpr uint8_t STATUS = 0x01;      ///< S (Data-In): status rides in this PDU
constexpr uint8_t TRANSIT = 0x80;     ///< T (Login): go to the next stage
constexpr uint8_t CONTINUE = 0x40;    ///< C (Login, Text): text continues in the next PDU
} // namespace IscsiFlag

/// Task Management Function Request: Function (RFC 7143 section 11.5.1).
namespace IscsiTmf
{
constexpr uint8_t ABORT_TASK = 1;
} // namespace IscsiTmf

/// Task Management Function Response: Response (RFC 7143 section 11.6.1).
namespace IscsiTmfResponse
{
constexpr uint8_t FUNCTION_COMPLETE = 0;
constexpr uint8_t TASK_DOES_NOT_EXIST = 1;
constexpr uint8_t NOT_SUPPORTED = 5; ///< Task management function not supported
constexpr uint8_t REJECTED = 255;    ///< Function rejected
} // namespace IscsiTmfResponse

constexpr uint32_t ISCSI_BHS_SIZE = 48;
constexpr uint32_t ISCSI_DIGEST_SIZE = 4;
constexpr uint32_t ISCSI_RESERVED_TAG = 0xffffffff;
constexpr uint32_t ISCSI_MAX_DATA_SEGMENT = 0xffffff; ///< DataSegmentLength is 24 bits

/// Wire bytes of one PDU: BHS, AHS (TotalAHSLength is in 4-byte words), header digest, data
/// segment padded to a multiple of 4, data digest (only when there is a data segment).
constexpr uint32_t
IscsiPduSize(uint32_t ahsBytes, uint32_t dataBytes, bool headerDigest, bool dataDigest)
{
    return ISCSI_BHS_SIZE + ahsBytes + (headerDigest ? ISCSI_DIGEST_SIZE : 0)
           + ((dataBytes + 3) & ~3u) + (dataDigest && dataBytes > 0 ? ISCSI_DIGEST_SIZE : 0);
}

class IscsiBhs : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t
    GetSerializedSize() const override
    {
        return ISCSI_BHS_SIZE;
    }
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    /// The 48 wire bytes.
    const std::array<uint8_t, ISCSI_BHS_SIZE>&
    Bytes() const
    {
        return m_b;
    }
    void
    SetBytes(const uint8_t* b)
    {
        std::copy(b, b + ISCSI_BHS_SIZE, m_b.begin());
    }

    // --- fields common to every opcode (section 11.2.1) ---
    uint8_t
    GetOpcode() const
    {
        return m_b[0] & 0x3f;
    }
    void
    SetOpcode(uint8_t op)
    {
        m_b[0] = (m_b[0] & 0x40) | (op & 0x3f);
    }
    bool
    IsImmediate() const
    {
        return m_b[0] & 0x40;
    }
    void
    SetImmediate(bool i)
    {
        m_b[0] = (m_b[0] & 0x3f) | (i ? 0x40 : 0);
    }
    uint8_t
    GetFlags() const
    {
        return m_b[1];
    }
    void
    SetFlags(uint8_t f)
    {
        m_b[1] = f;
    }
    bool
    IsFinal() const
    {
        return m_b[1] & IscsiFlag::FINAL;
    }
    /// Total length of the AHSs in 4-byte words.
    uint8_t
    GetTotalAhsLength() const
    {
        return m_b[4];
    }
    void
    SetTotalAhsLength(uint8_t words)
    {
        m_b[4] = words;
    }
    uint32_t
    GetDataSegmentLength() const
    {
        return Get24(5);
    }
    void
    SetDataSegmentLength(uint32_t n)
    {
        Put24(5, n);
    }
    uint64_t
    GetLun() const
    {
        return Get64(8);
    }
    void
    SetLun(uint64_t lun)
    {
        Put64(8, lun);
    }
    uint32_t
    GetInitiatorTaskTag() const
    {
        return Get32(16);
    }
    void
    SetInitiatorTaskTag(uint32_t t)
    {
        Put32(16, t);
    }

    // --- opcode-specific bytes 2 and 3 ---
    /// SCSI Response: iSCSI service response (byte 2). Login: Version-max (byte 2). Task
    /// Management Function Response: Response (byte 2).
    uint8_t
    GetByte2() const
    {
        return m_b[2];
    }
    void
    SetByte2(uint8_t v)
    {
        m_b[2] = v;
    }
    /// SCSI Response and Data-In: SCSI status (byte 3). Login: Version-min / Version-active.
    uint8_t
    GetByte3() const
    {
        return m_b[3];
    }
    void
    SetByte3(uint8_t v)
    {
        m_b[3] = v;
    }

    // --- opcode-specific words (offsets from the figures of section 11) ---
    /// Task Management Function Request: the F bit (always set) and Function (byte 1, bits
    /// 0-6).
    uint8_t
    GetFunction() const
    {
        return m_b[1] & 0x7f;
    }
    void
    SetFunction(uint8_t f)
    {
        m_b[1] = IscsiFlag::FINAL | (f & 0x7f);
    }
    /// Task Management Function Request: Referenced Task Tag (bytes 20-23).
    uint32_t
    GetReferencedTaskTag() const
    {
        return Get32(20);
    }
    void
    SetReferencedTaskTag(uint32_t t)
    {
        Put32(20, t);
    }
    /// Task Management Function Request: RefCmdSN (bytes 32-35).
    uint32_t
    GetRefCmdSn() const
    {
        return Get32(32);
    }
    void
    SetRefCmdSn(uint32_t n)
    {
        Put32(32, n);
    }
    /// Data-Out, Data-In, R2T, NOP-Out, NOP-In: Target Transfer Tag (bytes 20-23).
    uint32_t
    GetTargetTransferTag() const
    {
        return Get32(20);
    }
    void
    SetTargetTransferTag(uint32_t t)
    {
        Put32(20, t);
    }
    /// SCSI Command: Expected Data Transfer Length (bytes 20-23).
    uint32_t
    GetExpectedDataTransferLength() const
    {
        return Get32(20);
    }
    void
    SetExpectedDataTransferLength(uint32_t n)
    {
        Put32(20, n);
    }
    /// Requests (SCSI Command, Task Management, NOP-Out, Login/Text Request): CmdSN (bytes
    /// 24-27).
    uint32_t
    GetCmdSn() const
    {
        return Get32(24);
    }
    void
    SetCmdSn(uint32_t n)
    {
        Put32(24, n);
    }
    /// Responses (SCSI and Task Management Response, Data-In, R2T, NOP-In, Login/Text Response):
    /// StatSN (24-27).
    uint32_t
    GetStatSn() const
    {
        return Get32(24);
    }
    void
    SetStatSn(uint32_t n)
    {
        Put32(24, n);
    }
    /// Requests and Data-Out: ExpStatSN (bytes 28-31).
    uint32_t
    GetExpStatSn() const
    {
        return Get32(28);
    }
    void
    SetExpStatSn(uint32_t n)
    {
        Put32(28, n);
    }
    /// Responses: ExpCmdSN (bytes 28-31).
    uint32_t
    GetExpCmdSn() const
    {
        return Get32(28);
    }
    void
    SetExpCmdSn(uint32_t n)
    {
        Put32(28, n);
    }
    /// Responses: MaxCmdSN (bytes 32-35).
    uint32_t
    GetMaxCmdSn() const
    {
        return Get32(32);
    }
    void
    SetMaxCmdSn(uint32_t n)
    {
        Put32(32, n);
    }
    /// Data-In, Data-Out: DataSN; R2T: R2TSN; SCSI Response and Task Management Request:
    /// ExpDataSN (bytes 36-39).
    uint32_t
    GetDataSn() const
    {
        return Get32(36);
    }
    void
    SetDataSn(uint32_t n)
    {
        Put32(36, n);
    }
    uint32_t
    GetR2tSn() const
    {
        return Get32(36);
    }
    void
    SetR2tSn(uint32_t n)
    {
        Put32(36, n);
    }
    uint32_t
    GetExpDataSn() const
    {
        return Get32(36);
    }
    void
    SetExpDataSn(uint32_t n)
    {
        Put32(36, n);
    }
    /// Data-In, Data-Out, R2T: Buffer Offset (bytes 40-43).
    uint32_t
    GetBufferOffset() const
    {
        return Get32(40);
    }
    void
    SetBufferOffset(uint32_t n)
    {
        Put32(40, n);
    }
    /// SCSI Response: Bidirectional Read Residual Count (bytes 40-43).
    uint32_t
    GetBidiReadResidualCount() const
    {
        return Get32(40);
    }
    void
    SetBidiReadResidualCount(uint32_t n)
    {
        Put32(40, n);
    }
    /// R2T: Desired Data Transfer Length (bytes 44-47).
    uint32_t
    GetDesiredDataTransferLength() const
    {
        return Get32(44);
    }
    void
    SetDesiredDataTransferLength(uint32_t n)
    {
        Put32(44, n);
    }
    /// SCSI Response, Data-In: Residual Count (bytes 44-47).
    uint32_t
    GetResidualCount() const
    {
        return Get32(44);
    }
    void
    SetResidualCount(uint32_t n)
    {
        Put32(44, n);
    }
    /// SCSI Command: the 16-byte CDB (bytes 32-47).
    const uint8_t*
    GetCdb() const
    {
        return &m_b[32];
    }
    void SetCdb(const uint8_t* cdb, size_t n);
    /// Login Request/Response: ISID (bytes 8-13, 48 bits) and TSIH (bytes 14-15).
    uint64_t
    GetIsid() const
    {
        return Get64(8) >> 16;
    }
    void
    SetIsid(uint64_t isid)
    {
        Put64(8, (isid << 16) | GetTsih());
    }
    uint16_t
    GetTsih() const
    {
        return uint16_t(m_b[14] << 8 | m_b[15]);
    }
    void
    SetTsih(uint16_t t)
    {
        m_b[14] = t >> 8;
        m_b[15] = t;
    }
    /// Login Response: Status-Class and Status-Detail (bytes 36 and 37).
    uint8_t
    GetStatusClass() const
    {
        return m_b[36];
    }
    void
    SetStatusClass(uint8_t c)
    {
        m_b[36] = c;
    }

  private:
    uint32_t
    Get24(int o) const
    {
        return uint32_t(m_b[o]) << 16 | uint32_t(m_b[o + 1]) << 8 | m_b[o + 2];
    }
    void
    Put24(int o, uint32_t v)
    {
        m_b[o] = v >> 16;
        m_b[o + 1] = v >> 8;
        m_b[o + 2] = v;
    }
    uint32_t
    Get32(int o) const
    {
        return uint32_t(m_b[o]) << 24 | Get24(o + 1);
    }
    void
    Put32(int o, uint32_t v)
    {
        m_b[o] = v >> 24;
        Put24(o + 1, v);
    }
    uint64_t
    Get64(int o) const
    {
        return uint64_t(Get32(o)) << 32 | Get32(o + 4);
    }
    void
    Put64(int o, uint64_t v)
    {
        Put32(o, uint32_t(v >> 32));
        Put32(o + 4, uint32_t(v));
    }

    std::array<uint8_t, ISCSI_BHS_SIZE> m_b{};
};

} // namespace ns3

#endif
