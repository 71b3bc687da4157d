#include "nvmeof-stack.h"

#include "lfsim-run.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NvmeofStack);

TypeId
NvmeofStack::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NvmeofStack")
              .SetParent<StorageStack>()
              .SetGroupName("Storage")
              .AddAttribute("NrIoQueues",
                            "I/O queues per controller, i.e. per path (nvme connect's "
                            "nr_io_queues; Linux default num_online_cpus(), "
                            "drivers/nvme/host/fabrics.c). A host's k-th job uses queue k mod "
                            "this, as fio jobs on distinct CPUs do. 0: one per job of the host.",
                            UintegerValue(0), MakeUintegerAccessor(&NvmeofStack::m_nrIoQueues),
                            MakeUintegerChecker<uint32_t>(0, 1024))
              .AddAttribute("QueueSize",
                            "Entries of each I/O queue (nvme connect's queue_size; default "
                            "NVMF_DEF_QUEUE_SIZE = 128, drivers/nvme/host/fabrics.h). Its tag set "
                            "has queue_size tags, one reserved for the Fabrics Connect command "
                            "(NVMF_RESERVED_TAGS = 1): queue_size - 1 I/Os outstanding per "
                            "queue.",
                            UintegerValue(128), MakeUintegerAccessor(&NvmeofStack::m_queueSize),
                            MakeUintegerChecker<uint32_t>(16, 1024))
              .AddAttribute("KeepAliveTimeout",
                            "The controller's Keep Alive Timeout (KATO; nvme connect's "
                            "keep_alive_tmo, NVME_DEFAULT_KATO 5 s). The host sends a Keep Alive "
                            "command every KATO/2 on the controller's admin queue "
                            "(nvme_keep_alive_work_period); one unanswered after KATO (its "
                            "request timeout) resets the controller. 0: no keep-alive.",
                            TimeValue(Seconds(5)), MakeTimeAccessor(&NvmeofStack::m_kato),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("ReconnectDelay",
                            "After a controller reset (a queue in error, an I/O or keep-alive "
                            "timeout) the host tries to reconnect it this long after, and again "
                            "after each failed try (nvme connect's reconnect_delay, "
                            "NVMF_DEF_RECONNECT_DELAY 10 s).",
                            TimeValue(Seconds(10)),
                            MakeTimeAccessor(&NvmeofStack::m_reconnectDelay),
                            MakeTimeChecker(MicroSeconds(1)))
              .AddAttribute("CtrlLossTimeout",
                            "A controller not reconnected within this long of its loss is "
                            "deleted (nvme connect's ctrl_loss_tmo, NVMF_DEF_CTRL_LOSS_TMO "
                            "600 s); when a device has no controller left its I/Os fail (EIO).",
                            TimeValue(Seconds(600)), MakeTimeAccessor(&NvmeofStack::m_ctrlLoss),
                            MakeTimeChecker(MicroSeconds(1)));
    return tid;
}

uint32_t
NvmeofStack::SubmissionQueues(uint32_t jobs) const
{
    return m_nrIoQueues ? m_nrIoQueues : jobs;
}

void
NvmeofStack::AddPathQueues(uint32_t path, const std::string& label, uint32_t queues,
                           const AddQueue& add, std::vector<uint32_t>& perQueue,
                           std::vector<uint32_t>&)
{
    m_ioQueues = queues;
    for (uint32_t q = 0; q < queues; ++q)
    {
        perQueue.push_back(add(label + ":q" + std::to_string(q), m_queueSize - 1));
    }
}

NvmeofStack::Controller&
NvmeofStack::Ctrl(uint32_t path)
{
    if (path >= m_ctrl.size())
    {
        m_ctrl.resize(m_layout->paths.size());
    }
    return m_ctrl[path];
}

NvmeofStack::State
NvmeofStack::StateOf(uint32_t path) const
{
    // A controller nothing has happened to yet is live (made on first use).
    return path < m_ctrl.size() ? m_ctrl[path].state : LIVE;
}

void
NvmeofStack::TimedOut(const StorageCommand& c, uint64_t, uint32_t)
{
    // nvme_*_timeout starts error recovery (Linux sends no NVMe Abort over fabrics); the reset
    // cancels the command with the controller's others, and the multipath head sends it again
    // (its path is live: a path leaves LIVE only by a reset, which cancels all it carries).
    ResetController(c.path);
}

void
NvmeofStack::ResetController(uint32_t path)
{
    Controller& c = Ctrl(path);
    if (c.state != LIVE)
    {
        return;
    }
    c.state = CONNECTING;
    c.reconnects = 0;
    if (m_resets++ == 0)
    {
        m_firstReset = Simulator::Now();
    }
    c.keepAliveTimer.Cancel();
    CloseQueues(path);
    m_host->PathDown(path);
    Simulator::Schedule(m_reconnectDelay, &NvmeofStack::Reconnect, this, path);
}

void
NvmeofStack::Reconnect(uint32_t path)
{
    Controller& c = Ctrl(path);
    ++c.reconnects;
    ++m_reconnectTries;
    c.connecting = m_ioQueues;
    ConnectQueues(path);
}

void
NvmeofStack::ReconnectFailed(uint32_t path)
{
    Controller& c = Ctrl(path);
    CloseQueues(path);
    c.connecting = 0;
    // ctrl_loss_tmo's worth of tries: max_reconnects = DIV_ROUND_UP(ctrl_loss_tmo,
    // reconnect_delay).
    const int64_t delay = m_reconnectDelay.GetTimeStep();
    const int64_t tries = (m_ctrlLoss.GetTimeStep() + delay - 1) / delay;
    if (c.reconnects < tries)
    {
        Simulator::Schedule(m_reconnectDelay, &NvmeofStack::Reconnect, this, path);
        return;
    }
    c.state = DELETED;
    ++m_deleted;
    m_host->PathGone(path);
}

void
NvmeofStack::QueueConnected(uint32_t path)
{
    Controller& c = Ctrl(path);
    if (c.state != CONNECTING || c.connecting == 0 || --c.connecting > 0)
    {
        return;
    }
    c.state = LIVE;
    ++m_reconnected;
    m_host->PathUp(path);
}

void
NvmeofStack::QueueFailed(uint32_t path)
{
    const Controller& c = Ctrl(path);
    if (c.state == LIVE)
    {
        ResetController(path);
    }
    else if (c.state == CONNECTING && c.connecting > 0)
    {
        ReconnectFailed(path);
    }
}

void
NvmeofStack::StartKeepAlive(uint32_t path)
{
    // From the controller's connect; runs too short to send one have no event for it.
    const Time first = m_layout->start + m_kato / 2;
    if (m_kato.IsStrictlyPositive() && first < m_layout->stop)
    {
        Simulator::Schedule(first, &NvmeofStack::KeepAlive, this, path);
    }
}

void
NvmeofStack::KeepAlive(uint32_t path)
{
    Controller& c = Ctrl(path);
    if (c.state == DELETED)
    {
        return;
    }
    Simulator::Schedule(m_kato / 2, &NvmeofStack::KeepAlive, this, path);
    if (c.state != LIVE || c.keepAliveTimer.IsRunning())
    {
        return; // one at a time
    }
    SendKeepAlive(path);
    // Its request timeout is KATO (nvme_keep_alive_work).
    c.keepAliveTimer = Simulator::Schedule(m_kato, &NvmeofStack::KeepAliveExpired, this, path);
}

void
NvmeofStack::KeepAliveExpired(uint32_t path)
{
    ++m_keepAliveTimeouts;
    ResetController(path);
}

void
NvmeofStack::KeepAliveAnswered(uint32_t path)
{
    Ctrl(path).keepAliveTimer.Cancel();
}

void
NvmeofStack::Finish(lfsim::RunContext& ctx, const std::string& prefix)
{
    ctx.SetMetric(prefix + "controller_resets", m_resets);
    ctx.SetMetric(prefix + "controller_reset_first_us",
                  m_resets ? m_firstReset.GetSeconds() * 1e6 : 0.0);
    ctx.SetMetric(prefix + "reconnect_tries", m_reconnectTries);
    ctx.SetMetric(prefix + "controllers_reconnected", m_reconnected);
    ctx.SetMetric(prefix + "controllers_deleted", m_deleted);
    ctx.SetMetric(prefix + "keep_alive_timeouts", m_keepAliveTimeouts);
}

} // namespace ns3
