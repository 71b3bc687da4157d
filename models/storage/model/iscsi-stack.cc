#include "iscsi-stack.h"

#include "iscsi-initiator.h"
#include "iscsi-target.h"
#include "lfsim-run.h"
#include "ns3/inet-socket-address.h"
#include "ns3/pointer.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "roce-fabric.h"

#include <stdexcept>

namespace ns3
{

namespace
{
/// Tasks libiscsi keeps per session for NOP-Outs and task management (ISCSI_MGMT_CMDS_MAX).
constexpr uint32_t ISCSI_MGMT_TASKS = 15;
} // namespace

NS_OBJECT_ENSURE_REGISTERED(IscsiStack);

TypeId
IscsiStack::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::IscsiStack")
              .SetParent<StorageStack>()
              .SetGroupName("Storage")
              .AddConstructor<IscsiStack>()
              .AddAttribute("Layers",
                            "Initiator software of iscsi as name:delay per layer (delay per I/O, "
                            "half on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,scsi:1us,iscsi:1us,tcp:1us,"
                                        "ip:1us,nic:1us"),
                            MakeStringAccessor(&IscsiStack::m_layers), MakeStringChecker())
              .AddAttribute(
                  "SubmitCpu",
                  "CPU of a request's submit path: as nvmeof_tcp's (1.076 us), plus half of what "
                  "the SCSI "
                  "path costs over NVMe's (0.35 of 0.7 us: Intel's SCSI/AHCI 6.0 us less "
                  "2.5 us of AHCI register reads, less NVMe's 2.8 us; AnandTech 7843), "
                  "plus libiscsi handing the task to its transmit work queue thread "
                  "(iscsi_xmitworker): a wake-up and a context switch, 980 + 1,240 ns "
                  "(UnICom, FAST '26). "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(3646)), MakeTimeAccessor(&IscsiStack::m_submitCpu),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "CompletionCpu",
                  "CPU of a request's completion path, in the receive softirq of the session's "
                  "core (RSS "
                  "steers a session's flow to one): nvmeof_tcp's 2.696 us plus the other "
                  "0.35 us of the SCSI path. "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(3046)), MakeTimeAccessor(&IscsiStack::m_completionCpu),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "ReadCpuPerKiB",
                  "CPU per KiB of a read's data received: TCP receive processing and its copy, as "
                  "nvmeof_tcp's (Cai et al., SIGCOMM '21). "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(195)), MakeTimeAccessor(&IscsiStack::m_readCpuPerKiB),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "WriteCpuPerKiB",
                  "CPU per KiB of a write's data sent (sendpage, no copy), as nvmeof_tcp's. "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(78)), MakeTimeAccessor(&IscsiStack::m_writeCpuPerKiB),
                  MakeTimeChecker(Time(0)))
              .AddAttribute("CmdsMax",
                            "Commands per session (open-iscsi node.session.cmds_max, default "
                            "128, etc/iscsid.conf); the session's SCSI host takes cmds_max - 15 "
                            "I/Os (ISCSI_MGMT_CMDS_MAX tasks kept for NOP-Out and task "
                            "management, include/scsi/libiscsi.h, Linux 4.19).",
                            UintegerValue(128), MakeUintegerAccessor(&IscsiStack::m_cmdsMax),
                            MakeUintegerChecker<uint32_t>(16, 2048))
              .AddAttribute("QueueDepth",
                            "I/Os outstanding per path (the LUN's queue_depth: open-iscsi "
                            "node.session.queue_depth, default 32, etc/iscsid.conf).",
                            UintegerValue(32), MakeUintegerAccessor(&IscsiStack::m_queueDepth),
                            MakeUintegerChecker<uint32_t>(1, 1024));
    return tid;
}

void
IscsiStack::Prepare(int64_t& stream)
{
    m_net = dynamic_cast<RoceNetwork*>(m_layout->network);
    m_net->EnsureInternet(stream);
}

void
IscsiStack::AddPathQueues(uint32_t, const std::string& label, uint32_t, const AddQueue& add,
                          std::vector<uint32_t>& perQueue, std::vector<uint32_t>& shared)
{
    perQueue.push_back(add(label + ":queue_depth", m_queueDepth));
    shared.push_back(add(label + ":cmds_max", m_cmdsMax - ISCSI_MGMT_TASKS));
}

void
IscsiStack::Build(int64_t&)
{
    // An IscsiTarget (a portal on each port) on every target host, then a session per path,
    // bound to its initiator port on a host with several.
    RoceTopology& t = m_net->topology;
    const lfsim::Graph& g = m_layout->ctx->graph;
    uint16_t port = 0;
    std::vector<Ptr<IscsiTarget>> targets;
    for (uint32_t k = 0; k < m_layout->targets.size(); ++k)
    {
        Ptr<IscsiTarget> target = CreateObject<IscsiTarget>();
        target->SetAttribute("Session", PointerValue(CreateObject<IscsiSession>()));
        target->SetBackend(
            [this, k](bool isWrite, uint64_t, uint32_t bytes, std::function<void()> done)
            { m_host->Backend(k, !isWrite, bytes, std::move(done)); });
        target->Validate();
        t.hosts.Get(m_layout->targets[k])->AddApplication(target);
        UintegerValue v;
        target->GetAttribute("Port", v);
        port = v.Get();
        targets.push_back(target);
    }
    std::map<uint32_t, uint32_t> sessionsOf; // initiator host -> its sessions so far
    for (uint32_t k = 0; k < m_layout->paths.size(); ++k)
    {
        const StoragePath& p = m_layout->paths[k];
        m_pathCore.push_back(sessionsOf[t.hostOf[p.from]]++);
        Ptr<IscsiInitiator> ini = CreateObject<IscsiInitiator>();
        ini->SetAttribute("Session", PointerValue(CreateObject<IscsiSession>()));
        ini->SetAttribute("Remote",
                          AddressValue(InetSocketAddress(t.hostIps[p.to]->GetAddress(), port)));
        ini->SetExternalWorkload(); // the FioJob's I/Os, nothing of its own
        ini->Validate();
        // Both offers are the IscsiSession defaults: a bad combination fails here, before the
        // run, with the key named.
        IscsiNegotiate(ini->GetSession()->GetParams(),
                       targets[p.target]->GetSession()->GetParams());
        const uint32_t host = t.hostOf[p.from];
        if (g.AddressesOf(host).size() > 1)
        {
            ini->SetLocalDevice(t.hostPorts[p.from]);
        }
        ini->TraceConnectWithoutContext(
            "LoginComplete",
            MakeCallback(&StorageHost::PathReady, static_cast<StorageHost*>(m_host)).Bind(k));
        t.hosts.Get(host)->AddApplication(ini);
        m_sessions.push_back(ini);
    }
}

uint32_t
IscsiStack::Submit(const StorageCommand& c, uint64_t token)
{
    return m_sessions[c.path]->Submit(!c.read, c.bytes,
                                      [this, token](Time) { m_host->Completed(token); });
}

void
IscsiStack::TimedOut(const StorageCommand& c, uint64_t token, uint32_t tag)
{
    // The SCSI mid-layer aborts the command (scsi_abort_command -> eh_abort_handler): an ABORT
    // TASK function. The escalation to LUN, target and host reset is not modelled.
    const uint64_t io = m_host->Aborting(token);
    m_sessions[c.path]->Abort(tag, [this, io](bool) { m_host->Aborted(io); });
}

namespace
{
const bool g_stack = RegisterStorageStack(
    {"iscsi",
     "ns3::IscsiStack",
     "SCSI over TCP/IP (RFC 7143) on the roce fabric's IP path, in the class of RoceHostIp.Dscp",
     {"roce"},
     {"ns3::RoceHostIp", "ns3::IscsiSession"}});
} // namespace

} // namespace ns3
