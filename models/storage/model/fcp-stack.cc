#include "fcp-stack.h"

#include "fc-fabric.h"
#include "fcp.h"
#include "lfsim-run.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

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
                            MakeUintegerChecker<uint32_t>(1, 65535));
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
    for (const StoragePath& p : m_layout->paths)
    {
        if (!m_fcp.count(p.from))
        {
            Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
            ini->Setup(t.hostPorts[p.from], t.hostPorts[p.to]->GetFcId(), firstBurst);
            m_fcp[p.from] = ini;
        }
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
    const StoragePath& p = m_layout->paths[c.path];
    return m_fcp[p.from]->SubmitIo(
        c.read, c.bytes, [this, token](Time) { m_host->Completed(token); },
        m_net->topology.hostPorts[p.to]->GetFcId());
}

void
FcpStack::TimedOut(const StorageCommand& c, uint64_t token, uint32_t tag)
{
    // The SCSI mid-layer aborts the command (scsi_abort_command -> eh_abort_handler): an ABTS
    // for its exchange. The escalation to LUN, target and host reset is not modelled.
    const uint64_t io = m_host->Aborting(token);
    m_fcp[m_layout->paths[c.path].from]->Abort(uint16_t(tag),
                                               [this, io](bool) { m_host->Aborted(io); });
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
