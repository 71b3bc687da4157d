/*
 * NVMe commands and completions as their bytes: the 64-byte submission queue entry (SQE) and
 * the 16-byte completion queue entry (CQE) that every NVMe over Fabrics transport carries in its
 * capsules (NVMe Base 1.4 sections 4.2 and 4.6, Figures 105/106 and 121; SGL descriptors Figures
 * 114-119; Read/Write CDW10-12 Figures 372-374; the Fabrics Connect command and its data,
 * NVMe-oF 1.1 Figures 20-22), little-endian as Linux's include/linux/nvme.h lays them out. Used
 * by the RDMA transport's captures (nvmeof-capture.h) and by the TCP transport's PDUs
 * (models/nvmeof_tcp).
 */
#ifndef NVME_COMMAND_H
#define NVME_COMMAND_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// Opcodes (NVMe Base 1.4 Figures 139 and 346, NVMe-oF 1.1 Figure 19).
namespace NvmeOpcode
{
constexpr uint8_t WRITE = 0x01;      ///< NVM command set
constexpr uint8_t READ = 0x02;       ///< NVM command set
constexpr uint8_t KEEP_ALIVE = 0x18; ///< admin
constexpr uint8_t FABRICS = 0x7F;    ///< with FCTYPE 0x01: Connect
} // namespace NvmeOpcode

constexpr uint32_t NVME_SQE_BYTES = 64;
constexpr uint32_t NVME_CQE_BYTES = 16;
constexpr uint32_t NVMF_CONNECT_DATA_SIZE = 1024;
constexpr uint32_t NVMF_NQN_FIELD_SIZE = 256;
constexpr uint32_t NVMF_NQN_MAX_LEN = 223;
/// Logical block size of the capsules' SLBA and NLB fields.
constexpr uint32_t NVME_CAPTURE_BLOCK = 512;

// Little-endian fields.
inline uint16_t
NvmeGetLe16(const uint8_t* p)
{
    return uint16_t(p[0] | p[1] << 8);
}

inline uint32_t
NvmeGetLe32(const uint8_t* p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

inline uint64_t
NvmeGetLe64(const uint8_t* p)
{
    return uint64_t(NvmeGetLe32(p)) | uint64_t(NvmeGetLe32(p + 4)) << 32;
}

inline void
NvmePutLe16(uint8_t* p, uint16_t v)
{
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
}

inline void
NvmePutLe32(uint8_t* p, uint32_t v)
{
    NvmePutLe16(p, uint16_t(v));
    NvmePutLe16(p + 2, uint16_t(v >> 16));
}

inline void
NvmePutLe64(uint8_t* p, uint64_t v)
{
    NvmePutLe32(p, uint32_t(v));
    NvmePutLe32(p + 4, uint32_t(v >> 32));
}

namespace NvmeFctype
{
constexpr uint8_t CONNECT = 0x01;
} // namespace NvmeFctype

/// SGL descriptor type byte (Descriptor Type << 4 | Sub Type).
namespace NvmeSgl
{
/// Keyed SGL Data Block, Address: RDMA, the host buffer by address, length and R_Key (Linux
/// nvme_rdma_map_sg_single / nvme_rdma_map_sg_fr).
constexpr uint8_t KEYED_DATA_BLOCK = 0x40;
/// Data Block, Offset: in-capsule data (Linux nvme_tcp_set_sg_inline).
constexpr uint8_t DATA_BLOCK_OFFSET = 0x01;
/// Transport SGL Data Block, Transport specific 0xA: data by C2HData / H2CData (Linux
/// nvme_tcp_set_sg_host_data, nvme_tcp_set_sg_null).
constexpr uint8_t TRANSPORT_DATA_BLOCK = 0x5A;
} // namespace NvmeSgl

/// CDW0 byte 1: PSDT 01b, SGLs (Linux NVME_CMD_SGL_METABUF on every command nvme-tcp sends).
constexpr uint8_t NVME_CMD_PSDT_SGL = 0x40;
/// Connect CATTR bit 2: SQ flow control disabled (Linux NVME_CONNECT_DISABLE_SQFLOW).
constexpr uint8_t NVMF_CATTR_DISABLE_SQFLOW = 0x04;
constexpr uint16_t NVME_CNTLID_DYNAMIC = 0xFFFF;

/// Status Field of a CQE without the phase bit (Linux NVME_SC_*: SCT << 8 | SC, DNR 0x4000).
namespace NvmeStatus
{
constexpr uint16_t SUCCESS = 0x000;
constexpr uint16_t INVALID_OPCODE = 0x001;
constexpr uint16_t INVALID_FIELD = 0x002;
constexpr uint16_t CMDID_CONFLICT = 0x003;
constexpr uint16_t CMD_SEQ_ERROR = 0x00C;
constexpr uint16_t SGL_INVALID_DATA = 0x00F;
constexpr uint16_t SGL_INVALID_OFFSET = 0x016;
constexpr uint16_t CONNECT_FORMAT = 0x180;
constexpr uint16_t CONNECT_INVALID_PARAM = 0x182;
constexpr uint16_t HOST_ABORTED_CMD = 0x371;
constexpr uint16_t DNR = 0x4000;
} // namespace NvmeStatus

using NvmeSqe = std::array<uint8_t, NVME_SQE_BYTES>;
using NvmeCqe = std::array<uint8_t, NVME_CQE_BYTES>;

/// Fabrics Connect (OPC 7Fh, FCTYPE 01h): its 1024-byte data in the capsule (SGL Data Block,
/// Offset 0), RECFMT 0, QID, SQSIZE (0's based), CATTR, KATO in ms (admin queue only).
NvmeSqe NvmeConnectSqe(uint16_t cid, uint16_t qid, uint16_t sqsize, uint8_t cattr, uint32_t kato);
/// Connect data: HOSTID (0-15), CNTLID (16-17), SUBNQN (256-511), HOSTNQN (512-767).
std::vector<uint8_t> NvmeConnectData(const std::array<uint8_t, 16>& hostId, uint16_t cntlid,
                                     const std::string& subNqn, const std::string& hostNqn);
/// NVM Read / Write: NSID, SLBA (CDW10-11), NLB 0's based (CDW12), SGL1 of `sglType`.
NvmeSqe NvmeRwSqe(bool write, uint16_t cid, uint32_t nsid, uint64_t slba, uint16_t nlb,
                  uint8_t sglType, uint32_t sglLength);
/// Keep Alive (admin 18h), no data (a null Transport SGL Data Block).
NvmeSqe NvmeKeepAliveSqe(uint16_t cid);
/// CQE: DW0, SQHD, SQID, CID, Status Field (stored shifted past the phase bit).
NvmeCqe NvmeMakeCqe(uint32_t dw0, uint16_t sqhd, uint16_t sqid, uint16_t cid, uint16_t status);

// SQE / CQE fields.
inline uint16_t
NvmeSqeCid(const uint8_t* sqe)
{
    return NvmeGetLe16(sqe + 2);
}

inline uint32_t
NvmeSqeSglLength(const uint8_t* sqe)
{
    return NvmeGetLe32(sqe + 32);
}

inline uint8_t
NvmeSqeSglType(const uint8_t* sqe)
{
    return sqe[39];
}

inline uint16_t
NvmeCqeCid(const uint8_t* cqe)
{
    return NvmeGetLe16(cqe + 12);
}

inline uint16_t
NvmeCqeStatus(const uint8_t* cqe)
{
    return NvmeGetLe16(cqe + 14) >> 1;
}

/// One command as the RDMA transport's captures describe it.
struct NvmeCommand
{
    uint8_t opcode = 0;
    uint16_t cid = 0;
    uint16_t qid = 0;       ///< Connect: the queue it connects
    uint16_t sqsize = 0;    ///< Connect: entries - 1
    uint64_t slba = 0;      ///< Read, Write
    uint32_t bytes = 0;     ///< data the command moves
    bool inCapsule = false; ///< the data follows the SQE in the capsule (SGL offset descriptor)
    uint64_t address = 0;   ///< otherwise: the host buffer of the keyed SGL descriptor ...
    uint32_t key = 0;       ///< ... and its R_Key
};

/// The 64 bytes of the SQE of `c`: SGL1 a keyed SGL data block, or a data block at offset 0 of
/// the capsule for in-capsule data (and for a command without data, length 0).
void NvmeWriteSqe(uint8_t* b, const NvmeCommand& c);
/// The 16 bytes of a successful CQE: DW0, SQHD, SQID, CID, status 0.
void NvmeWriteCqe(uint8_t* b, uint32_t dw0, uint16_t sqhd, uint16_t sqid, uint16_t cid);

} // namespace ns3

#endif
