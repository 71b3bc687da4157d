/*
 * NVMe over Fabrics at the host, whatever the transport (Linux drivers/nvme/host/fabrics.c and
 * core.c): one controller per path, with I/O queues of QueueSize entries, and the controller's
 * life, which every transport shares:
 *  - a command timeout or a queue in error starts error recovery: the controller's queues are
 *    torn down, the path fails and its commands are cancelled (NVME_SC_HOST_ABORTED_CMD, a path
 *    error) and failed over by the multipath head; a reconnect follows after ReconnectDelay;
 *  - a reconnect makes new queues with a Fabrics Connect on each; the controller is live again
 *    when every one is answered, else it tries again after ReconnectDelay until
 *    CtrlLossTimeout's worth of tries, then the controller is deleted;
 *  - every KeepAliveTimeout/2 a Keep Alive command on the admin queue; one unanswered after
 *    KeepAliveTimeout resets the controller.
 * A transport (NvmeofRdmaStack, NvmeofTcpStack) makes, tears down and uses the queues; these
 * attributes are nvme connect's options, the same for every transport.
 */
#ifndef NVMEOF_STACK_H
#define NVMEOF_STACK_H

#include "ns3/event-id.h"
#include "storage-stack.h"

#include <vector>

namespace ns3
{

class NvmeofStack : public StorageStack
{
  public:
    static TypeId GetTypeId();

    uint32_t SubmissionQueues(uint32_t jobs) const override;
    void AddPathQueues(uint32_t path, const std::string& label, uint32_t queues,
                       const AddQueue& add, std::vector<uint32_t>& perQueue,
                       std::vector<uint32_t>& shared) override;
    void TimedOut(const StorageCommand& c, uint64_t token, uint32_t tag) override;
    void Finish(lfsim::RunContext& ctx, const std::string& prefix) override;

  protected:
    /// nvme_ctrl states LIVE, CONNECTING (resetting or reconnecting), DELETED.
    enum State
    {
        LIVE,
        CONNECTING,
        DELETED
    };

    /// I/O queues per controller (SubmissionQueues' answer), known from AddPathQueues on.
    uint32_t
    IoQueues() const
    {
        return m_ioQueues;
    }
    State StateOf(uint32_t path) const;
    /// Schedules the controller's keep-alive from the jobs' start (call in Build, per path).
    void StartKeepAlive(uint32_t path);
    /// Error recovery (nvme_reset_ctrl / nvme_*_error_recovery) of a live controller.
    void ResetController(uint32_t path);
    /// A Fabrics Connect of a reconnect try was answered.
    void QueueConnected(uint32_t path);
    /// A queue of the controller failed (IBV_WC_RETRY_EXC_ERR, a TCP error): recovery if it
    /// was live, the try failed if it was reconnecting.
    void QueueFailed(uint32_t path);
    /// The outstanding Keep Alive command was answered.
    void KeepAliveAnswered(uint32_t path);

    /// The controller's queues (and admin queue) torn down at both ends.
    virtual void CloseQueues(uint32_t path) = 0;
    /// A reconnect try: new I/O queues and a Fabrics Connect on each (QueueConnected per
    /// answer, QueueFailed if one fails).
    virtual void ConnectQueues(uint32_t path) = 0;
    /// A Keep Alive command on the admin queue (made when first used); KeepAliveAnswered when
    /// its completion comes.
    virtual void SendKeepAlive(uint32_t path) = 0;

    uint32_t m_nrIoQueues = 0;
    uint32_t m_queueSize = 128;
    Time m_kato;
    Time m_reconnectDelay;
    Time m_ctrlLoss;

  private:
    struct Controller
    {
        State state = LIVE;
        uint32_t connecting = 0; ///< Fabrics Connect commands not yet answered
        EventId keepAliveTimer;  ///< the outstanding Keep Alive command's timeout
        int64_t reconnects = 0;  ///< tries since it was lost
    };

    Controller& Ctrl(uint32_t path);
    void Reconnect(uint32_t path);
    void ReconnectFailed(uint32_t path);
    void KeepAlive(uint32_t path);
    void KeepAliveExpired(uint32_t path);

    uint32_t m_ioQueues = 1;
    std::vector<Controller> m_ctrl; ///< by path
    uint64_t m_resets = 0;
    Time m_firstReset;
    uint64_t m_reconnectTries = 0;
    uint64_t m_reconnected = 0;
    uint64_t m_deleted = 0;
    uint64_t m_keepAliveTimeouts = 0;
};

} // namespace ns3

#endif
