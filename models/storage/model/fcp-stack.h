/*
 * fcp: SCSI over Fibre Channel (FCP-4) on the fc fabric's FCP exchanges: one FcpInitiator per
 * initiator N_Port, logged in to every target N_Port it reaches; one FcpTarget per target
 * N_Port. Its host queues are the SCSI device's queue_depth per path and the SCSI host's
 * can_queue per HBA port. A timed-out command is aborted (ABTS), as the SCSI mid-layer's
 * eh_abort_handler does; the workload then fails the path for a while and retries it.
 */
#ifndef FCP_STACK_H
#define FCP_STACK_H

#include "storage-stack.h"

#include <map>

namespace ns3
{

class FcpInitiator;
class FcpTarget;
struct FcNetwork;

class FcpStack : public StorageStack
{
  public:
    static TypeId GetTypeId();

    void AddPathQueues(uint32_t path, const std::string& label, uint32_t queues,
                       const AddQueue& add, std::vector<uint32_t>& perQueue,
                       std::vector<uint32_t>& shared) override;
    void Build(int64_t& stream) override;
    uint32_t Submit(const StorageCommand& c, uint64_t token) override;
    void TimedOut(const StorageCommand& c, uint64_t token, uint32_t tag) override;
    /// qla2xxx in multi-queue mode (ql2xmqsupport=1, Linux 4.19's default): a queue pair per
    /// CPU, its response queue's vector on that CPU.
    CompletionQueue Completion(const StorageCommand& c, uint32_t threadCore) const override;

  private:
    uint32_t m_lunQueueDepth = 64;
    uint32_t m_canQueue = 4086;

    FcNetwork* m_net = nullptr;
    std::map<uint32_t, uint32_t> m_canQueueOf;   ///< initiator address -> its host queue
    std::map<uint32_t, Ptr<FcpInitiator>> m_fcp; ///< by initiator address
    std::vector<Ptr<FcpTarget>> m_targets;
};

} // namespace ns3

#endif
