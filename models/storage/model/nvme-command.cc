#include "nvme-command.h"

#include <algorithm>
#include <cstring>

namespace ns3
{

namespace
{
void
PutLe(uint8_t* b, uint64_t v, int n)
{
    for (int i = 0; i < n; ++i)
    {
        b[i] = uint8_t(v >> (8 * i));
    }
}
} // namespace

void
NvmeWriteSqe(uint8_t* b, const NvmeCommand& c)
{
    std::memset(b, 0, NVME_SQE_BYTES);
    b[0] = c.opcode;
    b[1] = 0x40; // PSDT 01b: SGLs, as NVMe over Fabrics requires
    PutLe(b + 2, c.cid, 2);
    uint8_t* sgl = b + 24; // SGL1 (DPTR)
    if (c.inCapsule || c.bytes == 0)
    {
        PutLe(sgl + 8, c.bytes, 4); // data block at offset 0 of the capsule's data
        sgl[15] = 0x01;             // type 0 (data block), subtype 1 (offset)
    }
    else if (c.sgl == NvmeSgl::TRANSPORT)
    {
        PutLe(sgl + 8, c.bytes, 4); // transport data block: length only
        sgl[15] = 0x5A;             // type 5, subtype 0xA (transport specific)
    }
    else
    {
        PutLe(sgl, c.address, 8); // keyed SGL data block: address, 3-byte length, key
        PutLe(sgl + 8, c.bytes, 3);
        PutLe(sgl + 11, c.key, 4);
        sgl[15] = 0x40; // type 4 (keyed data block), subtype 0 (address)
    }
    if (c.opcode == NvmeOpcode::FABRICS)
    {
        b[4] = 0x01;         // FCTYPE Connect
        PutLe(b + 40, 0, 2); // RECFMT 0
        PutLe(b + 42, c.qid, 2);
        PutLe(b + 44, c.sqsize, 2);
        PutLe(b + 48, c.kato, 4);
    }
    else if (c.opcode == NvmeOpcode::READ || c.opcode == NvmeOpcode::WRITE)
    {
        PutLe(b + 4, 1, 4); // NSID
        PutLe(b + 40, c.slba, 8);
        const uint32_t blocks = std::max<uint32_t>(1, c.bytes / NVME_CAPTURE_BLOCK);
        PutLe(b + 48, blocks - 1, 2); // NLB, 0's based
    }
}

void
NvmeWriteCqe(uint8_t* b, uint32_t dw0, uint16_t sqhd, uint16_t sqid, uint16_t cid)
{
    std::memset(b, 0, NVME_CQE_BYTES);
    PutLe(b, dw0, 4);
    PutLe(b + 8, sqhd, 2);
    PutLe(b + 10, sqid, 2);
    PutLe(b + 12, cid, 2);
}

void
NvmeWriteConnectData(uint8_t* b, uint16_t cntlid, const char* subnqn, const char* hostnqn)
{
    std::memset(b, 0, NVME_CONNECT_DATA_BYTES);
    // HOSTID (bytes 0-15): a fixed UUID per host would need the host; 0 is what a host without
    // /etc/nvme/hostid sends in older nvme-cli.
    PutLe(b + 16, cntlid, 2);
    std::strncpy(reinterpret_cast<char*>(b + 256), subnqn, 255);
    std::strncpy(reinterpret_cast<char*>(b + 512), hostnqn, 255);
}

} // namespace ns3
