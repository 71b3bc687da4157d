/*
 * NVMe commands and completions as their bytes: the 64-byte submission queue entry (SQE) and
 * the 16-byte completion queue entry (CQE) that every NVMe over Fabrics transport carries in
 * its capsules (NVMe Base 1.4 sections 4.2 and 4.6, NVMe-oF 1.1 sections 2 and 3). Used by the
 * RDMA transport's captures and by the TCP transport's PDUs.
 */
#ifndef NVME_COMMAND_H
#define NVME_COMMAND_H

#include <cstdint>

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
/// The data of a Fabrics Connect command (NVMe-oF 1.1 Figure 22): host ID, CNTLID, SUBNQN,
/// HOSTNQN.
constexpr uint32_t NVME_CONNECT_DATA_BYTES = 1024;
/// Logical block size of the capsules' SLBA and NLB fields.
constexpr uint32_t NVME_CAPTURE_BLOCK = 512;

/// How a command's SGL1 describes its data (NVMe Base 1.4 Figures 114-119; NVMe-oF 1.1 7.3.2
/// and 7.4.5.2).
enum class NvmeSgl : uint8_t
{
    IN_CAPSULE, ///< data block at an offset in the capsule (type 0, subtype 1)
    KEYED,      ///< RDMA: keyed data block (type 4, subtype 0): host address, length, R_Key
    TRANSPORT   ///< TCP: transport data block (type 5, subtype 0xA): the transport moves it
};

/// One command as its SQE gives it.
struct NvmeCommand
{
    uint8_t opcode = 0;
    uint16_t cid = 0;
    uint16_t qid = 0;       ///< Connect: the queue it connects
    uint16_t sqsize = 0;    ///< Connect: entries - 1
    uint16_t cntlid = 0;    ///< Connect: 0xFFFF on the admin queue (dynamic controller)
    uint32_t kato = 0;      ///< Connect on the admin queue: Keep Alive Timeout, ms
    uint64_t slba = 0;      ///< Read, Write
    uint32_t bytes = 0;     ///< data the command moves
    bool inCapsule = false; ///< the data follows the SQE in the capsule (SGL offset descriptor)
    NvmeSgl sgl = NvmeSgl::KEYED; ///< how data not in the capsule is described
    uint64_t address = 0;         ///< KEYED: the host buffer of the descriptor ...
    uint32_t key = 0;             ///< ... and its R_Key
};

/// The 64 bytes of the SQE of `c` (little-endian fields; NVMe Base 1.4 Figures 105 and 106, SGL
/// descriptors Figures 114-119, Read/Write CDW10-12 Figures 372-374; Connect: NVMe-oF 1.1
/// Figure 20).
void NvmeWriteSqe(uint8_t* b, const NvmeCommand& c);
/// The 16 bytes of a successful CQE (NVMe Base 1.4 Figure 121): DW0, SQHD, SQID, CID, status 0.
void NvmeWriteCqe(uint8_t* b, uint32_t dw0, uint16_t sqhd, uint16_t sqid, uint16_t cid);
/// The 1024 bytes of a Connect command's data (NVMe-oF 1.1 Figure 22).
void NvmeWriteConnectData(uint8_t* b, uint16_t cntlid, const char* subnqn, const char* hostnqn);

} // namespace ns3

#endif
