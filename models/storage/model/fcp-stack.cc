#include "fcp-stack.h"

#include "fc-fabric.h"
#include "fcp.h"
#include "lfsim-run.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <utility>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FcpStack);

TypeId
FcpStack::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcpStack")
              .SetParent<StorageStack>()
              .SetGroupName("Storage")
              .AddConstructor<FcpStack>()
              .AddAttribute("Layers",
                            "Initiator software of fcp as name:delay per layer (delay per I/O, "
                            "half on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,scsi:1us,fcp:1us,hba:1us"),
                            MakeStringAccessor(&FcpStack::m_layers), MakeStringChecker())
              .AddAttribute(
                  "SubmitCpu",
                  "CPU of a request's submit path: the SCSI mid-layer and sd, dm-multipath and the "
                  "HBA "
                  "driver building its IOCB, half of the Linux SCSI stack's 3.5 us per "
                  "I/O: Intel's 6.0 us for SCSI/AHCI less the ~2.5 us of AHCI's "
                  "uncacheable register reads, which an FC HBA does not do (AnandTech "
                  "7843). "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(1750)), MakeTimeAccessor(&FcpStack::m_submitCpu),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "CompletionCpu",
                  "CPU of a request's completion path on its queue's interrupt core (qla2xxx's "
                  "queue pair of "
                  "the submitting CPU): the response-queue interrupt and the SCSI "
                  "completion, the other half of the SCSI stack's 3.5 us. "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(1750)), MakeTimeAccessor(&FcpStack::m_completionCpu),
                  MakeTimeChecker(Time(0)))
              .AddAttribute("ReadCpuPerKiB",
                            "CPU per KiB of a read's data: none, the HBA places it by DMA. "
                            "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                            "validation/data/host_cpu_sources.csv.)",
                            TimeValue(NanoSeconds(0)), MakeTimeAccessor(&FcpStack::m_readCpuPerKiB),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("WriteCpuPerKiB",
                            "CPU per KiB of a write's data: none, the HBA fetches it by DMA. "
                            "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                            "validation/data/host_cpu_sources.csv.)",
                            TimeValue(NanoSeconds(0)),
                            MakeTimeAccessor(&FcpStack::m_writeCpuPerKiB), MakeTimeChecker(Time(0)))
              .AddAttribute("LunQueueDepth",
                            "I/Os outstanding per path (the SCSI device's queue_depth, set by the "
                            "HBA driver: qla2xxx ql2xmaxqdepth, default 64, "
                            "drivers/scsi/qla2xxx/qla_os.c; lpfc lun_queue_depth, default 30, "
                            "drivers/scsi/lpfc/lpfc_attr.c).",
                            UintegerValue(64), MakeUintegerAccessor(&FcpStack::m_lunQueueDepth),
                            MakeUintegerChecker<uint32_t>(1, 65535))
              .AddAttribute("CanQueue",
                            "I/Os outstanding per initiator N_Port over all its paths (the SCSI "
                            "host's can_queue; qla2xxx: num_outstanding_cmds - 10 = 4086 with "
                            "DEFAULT_OUTSTANDING_COMMANDS 4096, qla_os.c and qla_def.h, when the "
                            "firmware offers that many exchanges).",
                            UintegerValue(4086), MakeUintegerAccessor(&FcpStack::m_canQueue),
                            MakeUintegerChecker<uint32_t>(1, 65535))
              .AddAttribute(
                  "FastIoFailTmo",
                  "After an initiator port loses signal and its remote ports are blocked "
                  "(fc_remote_port_delete), this long until the I/Os a remote port holds, and "
                  "any sent to it later, fail with DID_TRANSPORT_FAILFAST "
                  "(fc_timeout_fail_rport_io, drivers/scsi/scsi_transport_fc.c): dm-multipath "
                  "fails the path and sends them down another (a device of one path fails them, "
                  "ENOLINK). The rport's fast_io_fail_tmo (Documentation/scsi/"
                  "scsi_fc_transport.rst: /sys/class/fc_remote_ports/rport-*/) is off in the "
                  "kernel; 5 s is multipath-tools' default (multipath.conf(5): fast_io_fail_tmo, "
                  "'The default is: 5'), which multipathd sets on the remote port of every path "
                  "it manages. A value not below DevLossTmo is the kernel's off: the I/Os wait "
                  "for DevLossTmo.",
                  TimeValue(Seconds(5)), MakeTimeAccessor(&FcpStack::m_fastIoFailTmo),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "DevLossTmo",
                  "A remote port still blocked this long after its initiator port lost signal "
                  "is removed with its SCSI devices (fc_timeout_deleted_rport, "
                  "drivers/scsi/scsi_transport_fc.c): what it still holds fails (DID_NO_CONNECT) "
                  "and the path leaves its multipath device, a device with no path left fails "
                  "its I/Os. Default: the FC transport's dev_loss_tmo, fc_dev_loss_tmo = 60 s "
                  "(scsi_transport_fc.c), which multipath.conf(5) leaves as the driver set it "
                  "unless dev_loss_tmo is given. A removed port is not found again in the run "
                  "(its new login and SCSI scan are not modelled).",
                  TimeValue(Seconds(60)), MakeTimeAccessor(&FcpStack::m_devLossTmo),
                  MakeTimeChecker(Time(0)))
              .AddTraceSource("RportBlocked",
                              "A path's remote port is blocked: its initiator port lost signal "
                              "(path).",
                              MakeTraceSourceAccessor(&FcpStack::m_blockedTrace),
                              "ns3::FcpStack::RportCallback")
              .AddTraceSource("RportUnblocked",
                              "A blocked remote port is back before DevLossTmo: its link came "
                              "back (path).",
                              MakeTraceSourceAccessor(&FcpStack::m_unblockedTrace),
                              "ns3::FcpStack::RportCallback")
              .AddTraceSource("FastIoFail",
                              "FastIoFailTmo expired on a blocked remote port: (path, I/Os it "
                              "held, failed to the multipath layer).",
                              MakeTraceSourceAccessor(&FcpStack::m_fastFailTrace),
                              "ns3::FcpStack::RportIoCallback")
              .AddTraceSource("RportRemoved",
                              "DevLossTmo expired: the remote port and its SCSI devices are "
                              "removed (path, I/Os it still held, failed).",
                              MakeTraceSourceAccessor(&FcpStack::m_removedTrace),
                              "ns3::FcpStack::RportIoCallback");
    return tid;
}

void
FcpStack::AddPathQueues(uint32_t path, const std::string& label, uint32_t, const AddQueue& add,
                        std::vector<uint32_t>& perQueue, std::vector<uint32_t>& shared)
{
    perQueue.push_back(add(label + ":queue_depth", m_lunQueueDepth));
    const uint32_t a = m_layout->paths[path].from;
    if (!m_canQueueOf.count(a))
    {
        m_canQueueOf[a] = add(AddressLabel(a) + ":can_queue", m_canQueue);
    }
    shared.push_back(m_canQueueOf[a]);
}

void
FcpStack::Build(int64_t&)
{
    // An FcpTarget on every target N_Port, then an FcpInitiator on every initiator N_Port with
    // a path (one receive path per N_Port carries all its I/Os).
    m_net = dynamic_cast<FcNetwork*>(m_layout->network);
    FcTopology& t = m_net->topology;
    const lfsim::Graph& g = m_layout->ctx->graph;
    uint32_t firstBurst = 0;
    for (uint32_t k = 0; k < m_layout->targets.size(); ++k)
    {
        for (uint32_t a : g.AddressesOf(m_layout->targets[k]))
        {
            Ptr<FcpTarget> target = CreateObject<FcpTarget>();
            target->Setup(t.hostPorts[a]);
            target->SetBackend([this, k](bool read, uint32_t bytes, std::function<void()> done)
                               { m_host->Backend(k, read, bytes, std::move(done)); });
            firstBurst = target->GetFirstBurstSize();
            m_targets.push_back(target);
        }
    }
    m_rports.assign(m_layout->paths.size(), Rport{});
    for (uint32_t k = 0; k < m_layout->paths.size(); ++k)
    {
        const StoragePath& p = m_layout->paths[k];
        if (!m_fcp.count(p.from))
        {
            Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
            ini->Setup(t.hostPorts[p.from], t.hostPorts[p.to]->GetFcId(), firstBurst);
            m_fcp[p.from] = ini;
            t.hostPorts[p.from]->TraceConnectWithoutContext(
                "Link", MakeCallback(&FcpStack::LinkChanged, this).Bind(p.from));
        }
        m_pathsOf[p.from].push_back(k);
    }
}

StorageStack::CompletionQueue
FcpStack::Completion(const StorageCommand& c, uint32_t threadCore) const
{
    // One response queue per CPU on each HBA port (initiator address).
    return {uint64_t(m_layout->paths[c.path].from) << 32 | threadCore, threadCore};
}

uint32_t
FcpStack::Submit(const StorageCommand& c, uint64_t token)
{
    Rport& r = m_rports[c.path];
    if (r.state == ONLINE)
    {
        const StoragePath& p = m_layout->paths[c.path];
        return m_fcp[p.from]->SubmitIo(
            c.read, c.bytes, [this, token](Time) { m_host->Completed(token); },
            m_net->topology.hostPorts[p.to]->GetFcId(), token);
    }
    if (r.state == BLOCKED && !r.fastFailed)
    {
        // fc_remote_port_chkready: DID_IMM_RETRY, the blocked device holds it.
        r.held.push_back(token);
        return NO_EXCHANGE;
    }
    // DID_TRANSPORT_FAILFAST once fast_io_fail_tmo fired, DID_NO_CONNECT once removed: it comes
    // straight back (after this call returns: the workload is still dispatching).
    Simulator::ScheduleNow(&FcpStack::FailNew, this, token);
    return NO_EXCHANGE;
}

void
FcpStack::FailNew(uint64_t token)
{
    const StorageCommand* c = m_host->Live(token);
    if (!c)
    {
        return;
    }
    const RportState state = m_rports[c->path].state;
    if (state == ONLINE)
    {
        m_host->Requeue(token); // its link came back at this very time
        return;
    }
    ++(state == NOT_PRESENT ? m_noConnectIos : m_fastFailedIos);
    m_host->PathError(token);
}

void
FcpStack::TimedOut(const StorageCommand& c, uint64_t token, uint32_t tag)
{
    if (tag == NO_EXCHANGE || m_rports[c.path].state != ONLINE)
    {
        // Held by a blocked remote port (or failing back now): fc_eh_timed_out resets the timer.
        m_host->ResetTimer(token);
        return;
    }
    // The SCSI mid-layer aborts the command (scsi_abort_command -> eh_abort_handler): an ABTS
    // for its exchange. The escalation to LUN, target and host reset is not modelled.
    const uint64_t io = m_host->Aborting(token);
    m_fcp[m_layout->paths[c.path].from]->Abort(uint16_t(tag),
                                               [this, io](bool) { m_host->Aborted(io); });
}

void
FcpStack::LinkChanged(uint32_t address, bool up)
{
    const std::vector<uint32_t>& paths = m_pathsOf.at(address);
    if (up)
    {
        // The port logged in again (FLOGI, PLOGI and PRLI are not modelled: at once).
        for (uint32_t p : paths)
        {
            if (m_rports[p].state == BLOCKED)
            {
                Unblock(p);
            }
        }
        return;
    }
    // The driver marks the port's remote ports lost, then its commands come back from the HBA
    // (DID_TRANSPORT_DISRUPTED) and the SCSI mid-layer requeues them to their blocked devices.
    for (uint32_t p : paths)
    {
        Block(p);
    }
    for (const auto& [target, token] : m_fcp.at(address)->EndExchanges())
    {
        if (const StorageCommand* c = m_host->Live(token))
        {
            m_rports[c->path].held.push_back(token);
            ++m_requeued;
        }
    }
}

void
FcpStack::Block(uint32_t path)
{
    Rport& r = m_rports[path];
    if (r.state != ONLINE)
    {
        return; // already blocked, or removed for good
    }
    r.state = BLOCKED;
    r.fastFailed = false;
    if (m_blocked++ == 0)
    {
        m_firstBlocked = Simulator::Now();
    }
    if (m_fastIoFailTmo < m_devLossTmo)
    {
        r.failIoWork = Simulator::Schedule(m_fastIoFailTmo, &FcpStack::FailIo, this, path);
    }
    r.devLossWork = Simulator::Schedule(m_devLossTmo, &FcpStack::DevLoss, this, path);
    m_blockedTrace(path);
}

void
FcpStack::Unblock(uint32_t path)
{
    Rport& r = m_rports[path];
    r.failIoWork.Cancel();
    r.devLossWork.Cancel();
    const bool failed = r.fastFailed;
    r.state = ONLINE;
    r.fastFailed = false;
    ++m_unblocked;
    m_unblockedTrace(path);
    // scsi_target_unblock: what the device held goes out, oldest first.
    for (uint64_t token : std::exchange(r.held, {}))
    {
        if (m_host->Live(token))
        {
            m_host->Requeue(token);
        }
    }
    if (failed)
    {
        m_host->PathUp(path); // dm-multipath gets its failed path back
    }
}

void
FcpStack::FailIo(uint32_t path)
{
    Rport& r = m_rports[path];
    if (r.state != BLOCKED)
    {
        return;
    }
    r.fastFailed = true;
    if (m_fastFailTimeouts++ == 0)
    {
        m_firstFastFail = Simulator::Now();
    }
    const uint32_t n = TerminateIo(path);
    m_fastFailedIos += n;
    m_fastFailTrace(path, n);
}

void
FcpStack::DevLoss(uint32_t path)
{
    Rport& r = m_rports[path];
    if (r.state != BLOCKED)
    {
        return;
    }
    r.failIoWork.Cancel();
    r.state = NOT_PRESENT;
    ++m_removed;
    const uint32_t n = TerminateIo(path);
    m_noConnectIos += n;
    m_removedTrace(path, n);
    m_host->PathGone(path);
}

uint32_t
FcpStack::TerminateIo(uint32_t path)
{
    uint32_t n = 0;
    for (uint64_t token : std::exchange(m_rports[path].held, {}))
    {
        if (m_host->Live(token))
        {
            ++n;
            m_host->PathError(token);
        }
    }
    return n;
}

void
FcpStack::Finish(lfsim::RunContext& ctx, const std::string& prefix)
{
    if (m_blocked == 0)
    {
        return; // no initiator port lost signal: the run's metrics are as they were
    }
    ctx.SetMetric(prefix + "rports_blocked", m_blocked);
    ctx.SetMetric(prefix + "rport_blocked_first_us", m_firstBlocked.GetSeconds() * 1e6);
    ctx.SetMetric(prefix + "rports_unblocked", m_unblocked);
    ctx.SetMetric(prefix + "rports_fast_io_failed", m_fastFailTimeouts);
    ctx.SetMetric(prefix + "fast_io_fail_first_us",
                  m_fastFailTimeouts ? m_firstFastFail.GetSeconds() * 1e6 : 0.0);
    ctx.SetMetric(prefix + "rports_removed", m_removed);
    ctx.SetMetric(prefix + "ios_requeued", m_requeued);
    ctx.SetMetric(prefix + "ios_fast_failed", m_fastFailedIos);
    ctx.SetMetric(prefix + "ios_no_connect", m_noConnectIos);
}

namespace
{
const bool g_stack = RegisterStorageStack(
    {"fcp",
     "ns3::FcpStack",
     "SCSI over Fibre Channel (FCP-4): FCP exchanges with BB_Credit, XFER_RDY for writes",
     {"fc"}});
} // namespace

} // namespace ns3
