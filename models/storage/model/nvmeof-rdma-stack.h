/*
 * nvmeof_rdma: NVMe over Fabrics on RDMA (NVMe-oF 1.1 section 7.3; Linux nvme-rdma and
 * nvmet-rdma) over the roce fabric's RC queue pairs. Per path a controller (NvmeofStack) whose
 * I/O queues are each an RC queue pair; per I/O a 64-byte command capsule by SEND; the target
 * moves the data itself (RDMA WRITE to the host for a read, RDMA READ from the host for a write,
 * or in-capsule data) and answers with a 16-byte completion by SEND. With ReplicaHosts the
 * target forwards a write (command + data by SEND) to each and completes only when each has
 * written it and answered.
 *
 * Queue pairs connect at once (no RDMA-CM exchange is simulated; captures show one, see
 * nvmeof-capture.h); after a reset each queue is connected again with a Fabrics Connect.
 */
#ifndef NVMEOF_RDMA_STACK_H
#define NVMEOF_RDMA_STACK_H

#include "ns3/ptr.h"
#include "nvmeof-stack.h"

#include <deque>
#include <map>
#include <memory>

namespace ns3
{

class BlockTarget;
class NvmeofCapture;
class RdmaQueuePair;
struct RoceNetwork;

class NvmeofRdmaStack : public NvmeofStack
{
  public:
    static TypeId GetTypeId();
    NvmeofRdmaStack();
    ~NvmeofRdmaStack() override;

    void UsePriority(int32_t priority) override;
    std::vector<uint32_t> ReservedHosts() override;
    void Build(int64_t& stream) override;
    uint32_t Submit(const StorageCommand& c, uint64_t token) override;

  private:
    /// The SENDs of one direction of a queue pair, each carrying a token. RC delivers them
    /// whole and in order, so the receiver's n-th receive completion is the sender's n-th SEND.
    struct SendChannel
    {
        Ptr<RdmaQueuePair> qp;
        std::deque<uint64_t> ids;

        void Send(uint64_t id, uint32_t bytes);
        uint64_t Received();
    };

    /// One queue of one controller (path), its queue pair at both ends.
    struct Channel
    {
        Ptr<RdmaQueuePair> host;
        Ptr<RdmaQueuePair> target;
        SendChannel toTarget;               ///< command capsules
        SendChannel toHost;                 ///< completions
        std::map<uint64_t, uint64_t> reads; ///< target's RDMA READ work request -> token
        uint32_t path = 0;                  ///< the controller (path) it belongs to
    };

    /// A target's queue pair to a replica host.
    struct ReplicaLink
    {
        SendChannel toReplica; ///< target side: command and data
        SendChannel toTarget;  ///< replica side: the answer
        Ptr<BlockTarget> device;
    };

    void CloseQueues(uint32_t path) override;
    void ConnectQueues(uint32_t path) override;
    void SendKeepAlive(uint32_t path) override;

    void SetPriority(Ptr<RdmaQueuePair> a, Ptr<RdmaQueuePair> b) const;
    /// The channel's queue pair at both ends (rdma_connect), with its callbacks.
    void Open(uint32_t ch);
    uint32_t ChannelOf(const StorageCommand& c) const;
    bool Inline(const StorageCommand& c) const;
    uint32_t TargetOf(const StorageCommand& c) const;

    void HostQpError(uint32_t ch, Ptr<RdmaQueuePair> qp);
    void TargetCommand(uint32_t ch, Ptr<RdmaQueuePair>, uint32_t);
    void TargetExecute(uint64_t token);
    void TargetReadDone(uint64_t token);
    void SendReadData(uint64_t token);
    void TargetTransferDone(uint32_t ch, Ptr<RdmaQueuePair>, uint64_t wr, uint32_t, Time);
    void WriteDataReceived(uint64_t token);
    void ReplicaCommand(uint32_t k, Ptr<RdmaQueuePair>, uint32_t bytes);
    void ReplicaExecute(uint32_t k, uint64_t token, uint32_t bytes);
    void ReplicaWritten(uint32_t k, uint64_t token);
    void ReplicaAnswer(uint32_t k, uint64_t token);
    void ReplicaAck(uint32_t k, Ptr<RdmaQueuePair>, uint32_t);
    void WriteCopyDone(uint64_t token);
    void SendCompletion(uint64_t token);
    void HostCompletion(uint32_t ch, Ptr<RdmaQueuePair>, uint32_t);

    // attributes
    uint32_t m_inlineData = 4096;
    std::string m_replicaHostsText;
    Time m_replicaDelay;
    bool m_targetHostInterface = true;

    RoceNetwork* m_net = nullptr;
    int32_t m_priority = -1;
    std::vector<uint32_t> m_replicaHosts;
    std::vector<Channel> m_channels;
    std::vector<std::vector<uint32_t>> m_pathChannels;   ///< by path: its I/O queues' channels
    std::vector<uint32_t> m_admin;                       ///< by path: its admin queue, or NONE
    std::vector<std::vector<uint32_t>> m_targetReplicas; ///< by target: its replica links
    std::vector<ReplicaLink> m_replicaLinks;
    std::map<uint64_t, uint32_t> m_copiesPending; ///< a write's token -> copies not yet written
    std::unique_ptr<NvmeofCapture> m_capture;     ///< when the run captures
};

} // namespace ns3

#endif
