/*
 * fcp: SCSI over Fibre Channel (FCP-4) on the fc fabric's FCP exchanges: one FcpInitiator per
 * initiator N_Port, logged in to every target N_Port it reaches; one FcpTarget per target
 * N_Port. Its host queues are the SCSI device's queue_depth per path and the SCSI host's
 * can_queue per HBA port. A timed-out command is aborted (ABTS), as the SCSI mid-layer's
 * eh_abort_handler does; the workload then fails the path for a while and retries it.
 *
 * Remote ports (Linux drivers/scsi/scsi_transport_fc.c): each path is an initiator port's
 * fc_rport for a target port. When the initiator port loses signal, the HBA driver deletes its
 * remote ports (fc_remote_port_delete): each goes Blocked, its commands in flight come back
 * from the HBA (DID_TRANSPORT_DISRUPTED) and, with new ones, are held. FastIoFailTmo later
 * (fc_timeout_fail_rport_io) they fail with DID_TRANSPORT_FAILFAST, a path error for
 * dm-multipath, which sends them down another path; DevLossTmo later (fc_timeout_deleted_rport)
 * the remote port and its SCSI devices are removed and the path is gone. A port whose link
 * comes back first is unblocked (fc_remote_port_add) and sends what it held. While a remote
 * port is blocked its commands' timer is reset, not fired (fc_eh_timed_out).
 */
#ifndef FCP_STACK_H
#define FCP_STACK_H

#include "ns3/event-id.h"
#include "ns3/traced-callback.h"
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
    /// The remote ports' counts and first times, if one of them was ever blocked.
    void Finish(lfsim::RunContext& ctx, const std::string& prefix) override;

    /// (path): a remote port changed state.
    typedef void (*RportCallback)(uint32_t path);
    /// (path, I/Os): a remote port's timer failed that many I/Os to the multipath layer.
    typedef void (*RportIoCallback)(uint32_t path, uint32_t ios);

  private:
    /// fc_rport port_state (FC_PORTSTATE_ONLINE, BLOCKED, NOTPRESENT) of a path's remote port.
    enum RportState
    {
        ONLINE,
        BLOCKED,
        NOT_PRESENT
    };

    struct Rport
    {
        RportState state = ONLINE;
        bool fastFailed = false;    ///< FC_RPORT_FAST_FAIL_TIMEDOUT
        EventId failIoWork;         ///< fast_io_fail_tmo
        EventId devLossWork;        ///< dev_loss_tmo
        std::vector<uint64_t> held; ///< tokens of the requests it holds, oldest first
    };

    /// Submit's tag for a request not in an exchange (held, or failing).
    static constexpr uint32_t NO_EXCHANGE = 0x10000;

    /// The initiator port at `address` lost signal (false) or has its link back (true).
    void LinkChanged(uint32_t address, bool up);
    /// fc_remote_port_delete.
    void Block(uint32_t path);
    /// fc_remote_port_add of a blocked remote port.
    void Unblock(uint32_t path);
    /// fc_timeout_fail_rport_io.
    void FailIo(uint32_t path);
    /// fc_timeout_deleted_rport.
    void DevLoss(uint32_t path);
    /// What the remote port holds fails to the multipath layer; returns how many.
    uint32_t TerminateIo(uint32_t path);
    /// A request sent to a remote port that fails I/O (fast fail timed out, or removed).
    void FailNew(uint64_t token);

    Time m_fastIoFailTmo;
    Time m_devLossTmo;
    std::vector<Rport> m_rports;                         ///< by path
    std::map<uint32_t, std::vector<uint32_t>> m_pathsOf; ///< initiator address -> its paths
    uint64_t m_blocked = 0;
    uint64_t m_unblocked = 0;
    uint64_t m_fastFailTimeouts = 0;
    uint64_t m_removed = 0;
    uint64_t m_requeued = 0;
    uint64_t m_fastFailedIos = 0;
    uint64_t m_noConnectIos = 0;
    Time m_firstBlocked;
    Time m_firstFastFail;
    TracedCallback<uint32_t> m_blockedTrace;
    TracedCallback<uint32_t> m_unblockedTrace;
    TracedCallback<uint32_t, uint32_t> m_fastFailTrace;
    TracedCallback<uint32_t, uint32_t> m_removedTrace;

    uint32_t m_lunQueueDepth = 64;
    uint32_t m_canQueue = 4086;

    FcNetwork* m_net = nullptr;
    std::map<uint32_t, uint32_t> m_canQueueOf;   ///< initiator address -> its host queue
    std::map<uint32_t, Ptr<FcpInitiator>> m_fcp; ///< by initiator address
    std::vector<Ptr<FcpTarget>> m_targets;
};

} // namespace ns3

#endif
