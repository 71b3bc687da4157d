/*
 * iscsi: SCSI over TCP/IP (RFC 7143, the iscsi model) on the roce fabric's IP path: per path
 * one session (one TCP connection) from the initiator's port to the target's portal on that
 * port, in the class of RoceHostIp.Dscp. A path is ready once its session has logged in. Its
 * host queues are the LUN's queue_depth per path and the session's cmds_max. A timed-out command
 * is aborted (ABORT TASK), as libiscsi's eh_abort_handler does; the workload then fails the path
 * for a while and retries it.
 */
#ifndef ISCSI_STACK_H
#define ISCSI_STACK_H

#include "storage-stack.h"

namespace ns3
{

class IscsiInitiator;
struct RoceNetwork;

class IscsiStack : public StorageStack
{
  public:
    static TypeId GetTypeId();

    std::string
    PriorityClass() const override
    {
        return "its class is RoceHostIp.Dscp";
    }
    void Prepare(int64_t& stream) override;
    void AddPathQueues(uint32_t path, const std::string& label, uint32_t queues,
                       const AddQueue& add, std::vector<uint32_t>& perQueue,
                       std::vector<uint32_t>& shared) override;
    void Build(int64_t& stream) override;
    bool
    ReadyAtStart() const override
    {
        return false;
    }
    uint32_t Submit(const StorageCommand& c, uint64_t token) override;
    void TimedOut(const StorageCommand& c, uint64_t token, uint32_t tag) override;
    /// A session is one TCP flow: the NIC's RSS steers its receive to one core, here the
    /// path's number among its host's paths.
    CompletionQueue
    Completion(const StorageCommand& c, uint32_t) const override
    {
        return {c.path, m_pathCore[c.path]};
    }

  private:
    uint32_t m_cmdsMax = 128;
    uint32_t m_queueDepth = 32;

    RoceNetwork* m_net = nullptr;
    std::vector<Ptr<IscsiInitiator>> m_sessions; ///< by path
    std::vector<uint32_t> m_pathCore;            ///< by path: its number on its host
};

} // namespace ns3

#endif
