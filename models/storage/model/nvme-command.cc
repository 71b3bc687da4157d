#include "nvme-command.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

NvmeSqe
NvmeConnectSqe(uint16_t cid, uint16_t qid, uint16_t sqsize, uint8_t cattr, uint32_t kato)
{
    NvmeSqe s{};
    s[0] = NvmeOpcode::FABRICS;
    s[1] = NVME_CMD_PSDT_SGL;
    NvmePutLe16(&s[2], cid);
    s[4] = NvmeFctype::CONNECT;
    // SGL1: the Connect data in the capsule at offset 0 (ICDOFF 0).
    NvmePutLe64(&s[24], 0);
    NvmePutLe32(&s[32], NVMF_CONNECT_DATA_SIZE);
    s[39] = NvmeSgl::DATA_BLOCK_OFFSET;
    NvmePutLe16(&s[40], 0); // RECFMT
    NvmePutLe16(&s[42], qid);
    NvmePutLe16(&s[44], sqsize);
    s[46] = cattr;
    NvmePutLe32(&s[48], kato);
    return s;
}

std::vector<uint8_t>
NvmeConnectData(const std::array<uint8_t, 16>& hostId, uint16_t cntlid, const std::string& subNqn,
                const std::string& hostNqn)
{
    std::vector<uint8_t> d(NVMF_CONNECT_DATA_SIZE, 0);
    std::copy(hostId.begin(), hostId.end(), d.begin());
    NvmePutLe16(&d[16], cntlid);
    // NUL-terminated in 256-byte fields (NQNs are at most 223 bytes).
    std::copy_n(subNqn.begin(), std::min<size_t>(subNqn.size(), NVMF_NQN_MAX_LEN), d.begin() + 256);
    std::copy_n(hostNqn.begin(), std::min<size_t>(hostNqn.size(), NVMF_NQN_MAX_LEN),
                d.begin() + 512);
    return d;
}

NvmeSqe
NvmeRwSqe(bool write, uint16_t cid, uint32_t nsid, uint64_t slba, uint16_t nlb, uint8_t sglType,
          uint32_t sglLength)
{
    NvmeSqe s{};
    s[0] = write ? NvmeOpcode::WRITE : NvmeOpcode::READ;
    s[1] = NVME_CMD_PSDT_SGL;
    NvmePutLe16(&s[2], cid);
    NvmePutLe32(&s[4], nsid);
    NvmePutLe64(&s[24], 0); // Transport SGL: no address; Data Block Offset: ICDOFF 0
    NvmePutLe32(&s[32], sglLength);
    s[39] = sglType;
    NvmePutLe64(&s[40], slba);
    NvmePutLe16(&s[48], nlb);
    return s;
}

NvmeSqe
NvmeKeepAliveSqe(uint16_t cid)
{
    NvmeSqe s{};
    s[0] = NvmeOpcode::KEEP_ALIVE;
    s[1] = NVME_CMD_PSDT_SGL;
    NvmePutLe16(&s[2], cid);
    s[39] = NvmeSgl::TRANSPORT_DATA_BLOCK;
    return s;
}

NvmeCqe
NvmeMakeCqe(uint32_t dw0, uint16_t sqhd, uint16_t sqid, uint16_t cid, uint16_t status)
{
    NvmeCqe c{};
    NvmePutLe32(&c[0], dw0);
    NvmePutLe16(&c[8], sqhd);
    NvmePutLe16(&c[10], sqid);
    NvmePutLe16(&c[12], cid);
    NvmePutLe16(&c[14], uint16_t(status << 1)); // bit 0: the phase tag, unused over fabrics
    return c;
}

void
NvmeWriteSqe(uint8_t* b, const NvmeCommand& c)
{
    NvmeSqe s{};
    switch (c.opcode)
    {
        case NvmeOpcode::FABRICS:
            s = NvmeConnectSqe(c.cid, c.qid, c.sqsize, 0, 0);
            break;
        case NvmeOpcode::READ:
        case NvmeOpcode::WRITE:
        {
            const uint32_t blocks = std::max<uint32_t>(1, c.bytes / NVME_CAPTURE_BLOCK);
            s = NvmeRwSqe(c.opcode == NvmeOpcode::WRITE, c.cid, 1, c.slba, uint16_t(blocks - 1),
                          NvmeSgl::DATA_BLOCK_OFFSET, c.bytes);
            break;
        }
        default:
            s = NvmeKeepAliveSqe(c.cid);
    }
    uint8_t* sgl = s.data() + 24; // SGL1 (DPTR)
    std::memset(sgl, 0, 16);
    if (c.inCapsule || c.bytes == 0)
    {
        NvmePutLe32(sgl + 8, c.bytes); // data block at offset 0 of the capsule's data
        sgl[15] = NvmeSgl::DATA_BLOCK_OFFSET;
    }
    else
    {
        NvmePutLe64(sgl, c.address); // keyed SGL data block: address, 3-byte length, key
        NvmePutLe32(sgl + 8, c.bytes & 0xFFFFFF);
        NvmePutLe32(sgl + 11, c.key);
        sgl[15] = NvmeSgl::KEYED_DATA_BLOCK;
    }
    std::copy(s.begin(), s.end(), b);
}

void
NvmeWriteCqe(uint8_t* b, uint32_t dw0, uint16_t sqhd, uint16_t sqid, uint16_t cid)
{
    const NvmeCqe c = NvmeMakeCqe(dw0, sqhd, sqid, cid, NvmeStatus::SUCCESS);
    std::copy(c.begin(), c.end(), b);
}

} // namespace ns3
