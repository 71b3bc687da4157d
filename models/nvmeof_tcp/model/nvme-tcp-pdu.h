/*
 * NVMe/TCP PDUs (NVM Express TCP Transport Specification 1.0a, section 3.6; NVMe-oF 1.1 section
 * 7.4): the common header CH (PDU-type, FLAGS, HLEN, PDO, PLEN), the PDU-specific headers of
 * every PDU type with their real bytes, the header and data digests (CRC32C), the data alignment
 * (PDO with the receiver's HPDA / CPDA), and the framing of a received byte stream into PDUs.
 *
 * NvmeTcpPduHeader keeps the HLEN bytes of a PDU header as they go on the wire (little-endian, as
 * Linux's include/linux/nvme-tcp.h lays them out) and names each field at its offset, so
 * serialization is exact by construction. The 64-byte SQE of a CapsuleCmd and the 16-byte CQE of
 * a CapsuleResp are given as bytes; the Nvme* helpers below build the ones the queues send
 * (Fabrics Connect, Keep Alive, NVM Read / Write) as Linux's host does.
 */
#ifndef NVME_TCP_PDU_H
#define NVME_TCP_PDU_H

#include "lfsim-socket-receiver.h"
#include "ns3/header.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "nvme-command.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// PDU-type (byte 0 of the CH).
namespace NvmeTcpPduType
{
constexpr uint8_t ICREQ = 0x00;
constexpr uint8_t ICRESP = 0x01;
constexpr uint8_t H2C_TERM_REQ = 0x02;
constexpr uint8_t C2H_TERM_REQ = 0x03;
constexpr uint8_t CAPSULE_CMD = 0x04;
constexpr uint8_t CAPSULE_RESP = 0x05;
constexpr uint8_t H2C_DATA = 0x06;
constexpr uint8_t C2H_DATA = 0x07;
constexpr uint8_t R2T = 0x09;
constexpr uint8_t COUNT = 10; ///< bound of the per-type counters (types 0..9)
} // namespace NvmeTcpPduType

/// FLAGS (byte 1 of the CH). Bits 2 and 3 are PDU-type specific (H2CData / C2HData).
namespace NvmeTcpFlag
{
constexpr uint8_t HDGSTF = 0x01;   ///< a header digest follows the header
constexpr uint8_t DDGSTF = 0x02;   ///< a data digest follows the data
constexpr uint8_t LAST_PDU = 0x04; ///< last data PDU of a C2H transfer / of an R2T's H2C transfer
constexpr uint8_t SUCCESS = 0x08;  ///< C2HData: the command completed; no CapsuleResp follows
} // namespace NvmeTcpFlag

/// DGST of ICReq / ICResp.
namespace NvmeTcpDgst
{
constexpr uint8_t HDGST_ENABLE = 0x01;
constexpr uint8_t DDGST_ENABLE = 0x02;
} // namespace NvmeTcpDgst

/// Fatal Error Status of H2CTermReq / C2HTermReq.
namespace NvmeTcpFes
{
constexpr uint16_t INVALID_HEADER_FIELD = 0x01; ///< FEI: byte offset of the field in the header
constexpr uint16_t PDU_SEQUENCE_ERROR = 0x02;
constexpr uint16_t HEADER_DIGEST_ERROR = 0x03;
constexpr uint16_t DATA_OUT_OF_RANGE = 0x04;
constexpr uint16_t DATA_LIMIT_EXCEEDED = 0x05; ///< also R2T Limit Exceeded
constexpr uint16_t UNSUPPORTED_PARAMETER = 0x06;
} // namespace NvmeTcpFes

constexpr uint32_t NVME_TCP_CH_SIZE = 8;
constexpr uint32_t NVME_TCP_DIGEST_SIZE = 4;
constexpr uint32_t NVME_TCP_MAX_HLEN = 128;
constexpr uint32_t NVME_TCP_SQE_SIZE = 64;
constexpr uint32_t NVME_TCP_CQE_SIZE = 16;
constexpr uint32_t NVME_TCP_TERM_REQ_MAX_DATA = 128; ///< TermReq PLEN is at most 152
constexpr uint8_t NVME_TCP_MAX_PDA = 31;             ///< HPDA / CPDA: 0..31 (4..128-byte alignment)
constexpr uint32_t NVME_TCP_MIN_MAXH2CDATA = 4096;   ///< Linux: NVME_TCP_MIN_MAXH2CDATA
constexpr uint16_t NVME_TCP_PORT = 4420;             ///< IANA "nvme-tcp"

/// HLEN of each PDU type (0: not a PDU type).
constexpr uint8_t
NvmeTcpHlen(uint8_t type)
{
    switch (type)
    {
        case NvmeTcpPduType::ICREQ:
        case NvmeTcpPduType::ICRESP:
            return 128;
        case NvmeTcpPduType::H2C_TERM_REQ:
        case NvmeTcpPduType::C2H_TERM_REQ:
            return 24;
        case NvmeTcpPduType::CAPSULE_CMD:
            return 72; // CH + SQE
        case NvmeTcpPduType::CAPSULE_RESP:
        case NvmeTcpPduType::H2C_DATA:
        case NvmeTcpPduType::C2H_DATA:
        case NvmeTcpPduType::R2T:
            return 24;
        default:
            return 0;
    }
}

/// Digests, once negotiated, are on every PDU but ICReq, ICResp and the TermReqs.
constexpr bool
NvmeTcpHasDigests(uint8_t type)
{
    return type >= NvmeTcpPduType::CAPSULE_CMD;
}

class NvmeTcpPduHeader : public Header
{
  public:
    NvmeTcpPduHeader() = default;
    /// A header of `type` with its HLEN, every other byte zero.
    explicit NvmeTcpPduHeader(uint8_t type);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    /// HLEN bytes (the header digest, pad and data are not part of it).
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    /// The wire bytes (the first HLEN are the header).
    const uint8_t*
    Bytes() const
    {
        return m_b.data();
    }
    /// Takes `n` (at most 128) header bytes.
    void SetBytes(const uint8_t* b, uint32_t n);

    // --- CH: common header (bytes 0-7) ---
    uint8_t
    GetPduType() const
    {
        return m_b[0];
    }
    void
    SetPduType(uint8_t t)
    {
        m_b[0] = t;
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
    uint8_t
    GetHlen() const
    {
        return m_b[2];
    }
    void
    SetHlen(uint8_t h)
    {
        m_b[2] = h;
    }
    /// PDU Data Offset: where the PDU data starts, 0 without data.
    uint8_t
    GetPdo() const
    {
        return m_b[3];
    }
    void
    SetPdo(uint8_t o)
    {
        m_b[3] = o;
    }
    /// PDU Length: every byte of the PDU (header, digests, pad, data).
    uint32_t
    GetPlen() const
    {
        return NvmeGetLe32(&m_b[4]);
    }
    void
    SetPlen(uint32_t n)
    {
        NvmePutLe32(&m_b[4], n);
    }

    // --- ICReq / ICResp ---
    /// PDU Format Version (bytes 8-9), 0.
    uint16_t
    GetPfv() const
    {
        return NvmeGetLe16(&m_b[8]);
    }
    void
    SetPfv(uint16_t v)
    {
        NvmePutLe16(&m_b[8], v);
    }
    /// ICReq: Host PDU Data Alignment (byte 10), 0's based dwords.
    uint8_t
    GetHpda() const
    {
        return m_b[10];
    }
    void
    SetHpda(uint8_t a)
    {
        m_b[10] = a;
    }
    /// ICResp: Controller PDU Data Alignment (byte 10), 0's based dwords.
    uint8_t
    GetCpda() const
    {
        return m_b[10];
    }
    void
    SetCpda(uint8_t a)
    {
        m_b[10] = a;
    }
    /// DGST (byte 11): HDGST_ENABLE, DDGST_ENABLE.
    uint8_t
    GetDgst() const
    {
        return m_b[11];
    }
    void
    SetDgst(uint8_t d)
    {
        m_b[11] = d;
    }
    /// ICReq: MAXR2T (bytes 12-15), R2Ts outstanding per command, 0's based.
    uint32_t
    GetMaxr2t() const
    {
        return NvmeGetLe32(&m_b[12]);
    }
    void
    SetMaxr2t(uint32_t n)
    {
        NvmePutLe32(&m_b[12], n);
    }
    /// ICResp: MAXH2CDATA (bytes 12-15), PDU data bytes per H2CData PDU at most.
    uint32_t
    GetMaxh2cdata() const
    {
        return NvmeGetLe32(&m_b[12]);
    }
    void
    SetMaxh2cdata(uint32_t n)
    {
        NvmePutLe32(&m_b[12], n);
    }

    // --- H2CTermReq / C2HTermReq ---
    /// Fatal Error Status (bytes 8-9).
    uint16_t
    GetFes() const
    {
        return NvmeGetLe16(&m_b[8]);
    }
    void
    SetFes(uint16_t v)
    {
        NvmePutLe16(&m_b[8], v);
    }
    /// Fatal Error Information (bytes 10-13).
    uint32_t
    GetFei() const
    {
        return NvmeGetLe32(&m_b[10]);
    }
    void
    SetFei(uint32_t v)
    {
        NvmePutLe32(&m_b[10], v);
    }

    // --- CapsuleCmd: SQE (bytes 8-71); CapsuleResp: CQE (bytes 8-23) ---
    const uint8_t*
    GetSqe() const
    {
        return &m_b[8];
    }
    void SetSqe(const uint8_t* sqe);
    const uint8_t*
    GetCqe() const
    {
        return &m_b[8];
    }
    void SetCqe(const uint8_t* cqe);

    // --- H2CData, C2HData, R2T ---
    /// Command Capsule CID (bytes 8-9).
    uint16_t
    GetCccid() const
    {
        return NvmeGetLe16(&m_b[8]);
    }
    void
    SetCccid(uint16_t c)
    {
        NvmePutLe16(&m_b[8], c);
    }
    /// H2CData, R2T: Transfer Tag (bytes 10-11); reserved in C2HData.
    uint16_t
    GetTtag() const
    {
        return NvmeGetLe16(&m_b[10]);
    }
    void
    SetTtag(uint16_t t)
    {
        NvmePutLe16(&m_b[10], t);
    }
    /// Data Offset (bytes 12-15) from the start of the command's data.
    uint32_t
    GetDatao() const
    {
        return NvmeGetLe32(&m_b[12]);
    }
    void
    SetDatao(uint32_t o)
    {
        NvmePutLe32(&m_b[12], o);
    }
    /// Data Length (bytes 16-19) of this PDU.
    uint32_t
    GetDatal() const
    {
        return NvmeGetLe32(&m_b[16]);
    }
    void
    SetDatal(uint32_t n)
    {
        NvmePutLe32(&m_b[16], n);
    }
    /// R2T Offset (bytes 12-15).
    uint32_t
    GetR2to() const
    {
        return NvmeGetLe32(&m_b[12]);
    }
    void
    SetR2to(uint32_t o)
    {
        NvmePutLe32(&m_b[12], o);
    }
    /// R2T Length (bytes 16-19).
    uint32_t
    GetR2tl() const
    {
        return NvmeGetLe32(&m_b[16]);
    }
    void
    SetR2tl(uint32_t n)
    {
        NvmePutLe32(&m_b[16], n);
    }

  private:
    std::array<uint8_t, NVME_TCP_MAX_HLEN> m_b{};
};

/// How PDUs are sent on a connection: the digests negotiated by ICReq / ICResp and the
/// receiver's data alignment (CPDA for host to controller PDUs, HPDA for controller to host).
struct NvmeTcpFormat
{
    bool headerDigest = false;
    bool dataDigest = false;
    uint8_t pda = 0; ///< 0's based dwords: PDU data starts at a multiple of (pda + 1) * 4
};

/// Sets FLAGS HDGSTF / DDGSTF, PDO and PLEN of `h` for `dataLength` bytes of PDU data in format
/// `f` and returns the pad between the header (and its digest) and the data. A data digest only
/// on a PDU with data; ICReq, ICResp and TermReqs never have digests, and a TermReq's data (the
/// header in error) follows its header with PDO 0.
uint32_t NvmeTcpFrame(NvmeTcpPduHeader& h, uint32_t dataLength, const NvmeTcpFormat& f);

/// A PDU as a connection queues it: the header with its digest and the pad; the data; the data
/// digest (pieces[0, count)). Data given as null are zeros, a zero-filled packet that takes no
/// payload memory.
struct NvmeTcpWirePdu
{
    std::array<Ptr<Packet>, 3> pieces;
    size_t count = 0;
};

/// The whole PDU on the wire, what NvmeTcpConnection sends: `h` framed as NvmeTcpFrame does, its
/// header digest, the pad (zero bytes), the data (`data`, or zeros when null) and its data digest.
NvmeTcpWirePdu NvmeTcpBuild(NvmeTcpPduHeader& h, const uint8_t* data, uint32_t dataLength,
                            const NvmeTcpFormat& f);
/// The bytes of NvmeTcpBuild's PDU, in one buffer (tests).
std::vector<uint8_t> NvmeTcpSerialize(NvmeTcpPduHeader& h, const uint8_t* data, uint32_t dataLength,
                                      const NvmeTcpFormat& f);

/// Frames a received byte stream into PDUs by their CH, whatever the TCP segment boundaries:
/// checks PDU-type, HLEN, the digest flags against what was negotiated, the header digest
/// (before PLEN is trusted), PDO against the alignment asked of the sender, PLEN, then the data
/// digest once the PDU is whole.
class NvmeTcpFramer
{
  public:
    enum class Status
    {
        NEED_MORE,   ///< no whole PDU buffered
        PDU,         ///< `pdu` is the next PDU
        FATAL,       ///< a fatal transport error: `fault` says which (for the TermReq)
        DATA_DIGEST, ///< a whole PDU whose data digest does not match
    };

    /// A received PDU. `data` points into the buffer until the next Receive or Append.
    struct Pdu
    {
        NvmeTcpPduHeader header;
        const uint8_t* data = nullptr; ///< PDU data (a TermReq's: the error data)
        uint32_t dataLength = 0;
        uint32_t plen = 0;
    };

    struct Fault
    {
        uint16_t fes = 0;
        uint32_t fei = 0;
        const uint8_t* header = nullptr; ///< the header in error, for the TermReq's data
        uint32_t headerLength = 0;
    };

    /// What the receiver expects: the negotiated digests and the alignment it asked (its own
    /// HPDA at the host, CPDA at the controller).
    void
    SetFormat(const NvmeTcpFormat& f)
    {
        m_format = f;
    }
    /// Takes all that `socket` has received, copied once into the buffer.
    void
    Receive(Ptr<Socket> socket)
    {
        m_rx.Receive(socket);
    }
    /// Takes the bytes of `p` (a segment, in the tests).
    void
    Append(const Packet& p)
    {
        m_rx.Append(p);
    }
    Status Next(Pdu& pdu, Fault& fault);
    /// Bytes buffered and not yet parsed.
    size_t
    Buffered() const
    {
        return m_rx.Size();
    }

  private:
    Status Fail(Fault& fault, uint16_t fes, uint32_t fei, const uint8_t* b, uint32_t n);

    NvmeTcpFormat m_format;
    lfsim::SocketReceiver m_rx;
};

} // namespace ns3

#endif
