/*
 * nvmeof_tcp: NVMe over Fabrics on TCP (the NVMe/TCP transport binding; Linux nvme-tcp and
 * nvmet-tcp), a storage stack plug-in of the Fio workload on the roce fabric's IP path (ns-3's
 * TCP over lfsim's Ethernet, in the class of RoceHostIp.Dscp).
 *
 * Per path a controller (NvmeofStack: keep-alive, reset, reconnect, ctrl-loss) whose admin queue
 * and NrIoQueues I/O queues are each a TCP connection to the target port's 4420 (nvme-tcp-queue.h):
 * ICReq / ICResp, then a Fabrics Connect; the admin queue first, then the I/O queues, as Linux's
 * nvme_tcp_setup_ctrl. A path is ready when all its queues are live. Per I/O a CapsuleCmd; a read
 * is answered by C2HData and a CapsuleResp, a write of at most InlineDataSize carries its data
 * in the capsule, a larger one is answered by an R2T and sent as H2CData. On every target host an
 * NvmeTcpTarget (nvmet-tcp) listens on each port and serves its block device.
 */
#ifndef NVMEOF_TCP_STACK_H
#define NVMEOF_TCP_STACK_H

#include "nvmeof-stack.h"

#include <memory>
#include <vector>

namespace ns3
{

class NvmeTcpHostQueue;
class NvmeTcpTarget;
struct NvmeTcpCounters;
struct NvmeTcpTargetParams;
struct RoceNetwork;

class NvmeofTcpStack : public NvmeofStack
{
  public:
    static TypeId GetTypeId();
    NvmeofTcpStack();
    ~NvmeofTcpStack() override;

    std::string
    PriorityClass() const override
    {
        return "its class is RoceHostIp.Dscp";
    }
    void Prepare(int64_t& stream) override;
    void Build(int64_t& stream) override;
    bool
    ReadyAtStart() const override
    {
        return false;
    }
    uint32_t Submit(const StorageCommand& c, uint64_t token) override;
    void Finish(lfsim::RunContext& ctx, const std::string& prefix) override;

  private:
    /// A path's controller at the host: its queues of the current connection.
    struct Controller
    {
        std::unique_ptr<NvmeTcpHostQueue> admin;
        std::vector<std::unique_ptr<NvmeTcpHostQueue>> io;
        uint32_t generation = 0; ///< its connections so far: a callback of an older one is stale
        uint32_t live = 0;       ///< I/O queues live in this connection
        bool ready = false;      ///< it has been ready once (PathReady said)
        uint64_t nextLba = 0;    ///< its commands take consecutive blocks (captures only)
    };

    void CloseQueues(uint32_t path) override;
    void ConnectQueues(uint32_t path) override;
    void SendKeepAlive(uint32_t path) override;

    /// A new connection of the path's controller: the admin queue, then its I/O queues.
    void Open(uint32_t path);
    void AdminLive(uint32_t path, uint32_t generation, uint16_t cntlid);
    void IoLive(uint32_t path, uint32_t generation);
    void Failed(uint32_t path, uint32_t generation);
    std::unique_ptr<NvmeTcpHostQueue> MakeQueue(uint32_t path, uint16_t qid, uint16_t cntlid);
    /// The targets' parameters from the attributes (SUBNQN aside: SubNqn).
    NvmeTcpTargetParams TargetParams() const;
    /// Target `target`'s subsystem NQN, as its NvmeTcpTarget serves it and its hosts ask for it.
    std::string SubNqn(uint32_t target) const;
    void Count(const NvmeTcpCounters& c);

    // attributes
    uint32_t m_inlineData = 16384;
    uint32_t m_maxH2cData = 0x400000;
    bool m_headerDigest = false;
    bool m_dataDigest = false;

    RoceNetwork* m_net = nullptr;
    std::vector<Controller> m_ctrls;                       ///< by path
    std::vector<std::unique_ptr<NvmeTcpTarget>> m_targets; ///< by target
    /// Queues of closed connections: kept until the run ends (a queue's own callback may close
    /// it), and their PDUs counted.
    std::vector<std::unique_ptr<NvmeTcpHostQueue>> m_closed;
    std::vector<uint64_t> m_pdusSent;     ///< by PDU type, over every host queue
    std::vector<uint64_t> m_pdusReceived; ///< by PDU type, over every host queue
    uint64_t m_digestErrors = 0;
};

} // namespace ns3

#endif
