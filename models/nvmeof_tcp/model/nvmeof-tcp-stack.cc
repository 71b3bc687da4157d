#include "nvmeof-tcp-stack.h"

#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/inet-socket-address.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "nvme-tcp-queue.h"
#include "roce-fabric.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace ns3
{

namespace
{
/// Logical block of the commands' SLBA and NLB.
constexpr uint32_t LBA = 512;
/// NLB is 16 bits, 0's based: one command moves at most 65536 blocks; the block layer splits a
/// larger request (as it splits a bio at max_hw_sectors).
constexpr uint32_t MAX_COMMAND = 65536 * LBA;

const char* const PDU_NAMES[NvmeTcpPduType::COUNT]
    = {"ICReq",       "ICResp",  "H2CTermReq", "C2HTermReq", "CapsuleCmd",
       "CapsuleResp", "H2CData", "C2HData",    "(8)",        "R2T"};
} // namespace

NS_OBJECT_ENSURE_REGISTERED(NvmeofTcpStack);

TypeId
NvmeofTcpStack::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NvmeofTcpStack")
              .SetParent<NvmeofStack>()
              .SetGroupName("Storage")
              .AddConstructor<NvmeofTcpStack>()
              .AddAttribute("Layers",
                            "Initiator software of nvmeof_tcp as name:delay per layer (delay per "
                            "I/O, half on submission, half on completion): the Linux path "
                            "application, block (blk-mq), nvme (nvme-core), nvme_tcp (the "
                            "transport driver), tcp, ip, nic. Uncalibrated default.",
                            StringValue("application:1us,block:1us,nvme:1us,nvme_tcp:1us,tcp:1us,"
                                        "ip:1us,nic:1us"),
                            MakeStringAccessor(&NvmeofTcpStack::m_layers), MakeStringChecker())
              .AddAttribute(
                  "SubmitCpu",
                  "CPU of a request's submit path: nvme-core and nvme-tcp sending the CapsuleCmd "
                  "through "
                  "TCP from the submitting context. Per 4 KiB read kernel NVMe/TCP costs "
                  "1.5x kernel NVMe/RDMA (BoostX-NTI, Figs. 8-9): 5.25 us with libaio, "
                  "4.55 us of it the stack, 3.77 us once the data's receive "
                  "(ReadCpuPerKiB) is out, split as a kernel socket's send to receive, "
                  "1 : 2.5 (3.58 against 8.97 us, Jasny et al., DaMoN '25). "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(1076)), MakeTimeAccessor(&NvmeofTcpStack::m_submitCpu),
                  MakeTimeChecker(Time(0)))
              .AddAttribute("CompletionCpu",
                            "CPU of a request's completion path on its queue's io_cpu: the receive "
                            "interrupt, TCP "
                            "receive processing and nvme-tcp's io_work completing the command "
                            "(2.5 / 3.5 of the 3.77 us, see SubmitCpu). "
                            "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                            "validation/data/host_cpu_sources.csv.)",
                            TimeValue(NanoSeconds(2696)),
                            MakeTimeAccessor(&NvmeofTcpStack::m_completionCpu),
                            MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "ReadCpuPerKiB",
                  "CPU per KiB of a read's data received: TCP receive processing, the copy into "
                  "the "
                  "application's pages over half of it, at ~42 Gbit/s per core at best "
                  "(Cai et al., SIGCOMM '21): 1024 x 8 / 42e9 s. "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(195)), MakeTimeAccessor(&NvmeofTcpStack::m_readCpuPerKiB),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "WriteCpuPerKiB",
                  "CPU per KiB of a write's data sent (sendpage, no copy): a socket's send per "
                  "byte at 1/2.5 "
                  "of its receive (Jasny et al., DaMoN '25) of Cai et al.'s 0.195 us. "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(78)), MakeTimeAccessor(&NvmeofTcpStack::m_writeCpuPerKiB),
                  MakeTimeChecker(Time(0)))
              .AddAttribute("InlineDataSize",
                            "Writes of at most this many bytes travel in the CapsuleCmd "
                            "(in-capsule data) instead of waiting for an R2T: the target's "
                            "in-capsule data size, which the host learns from IOCCSZ. 16384 is "
                            "nvmet-tcp's default (NVMET_TCP_DEF_INLINE_DATA_SIZE = 4 * "
                            "PAGE_SIZE, drivers/nvme/target/tcp.c); 0 = every write by R2T.",
                            UintegerValue(16384),
                            MakeUintegerAccessor(&NvmeofTcpStack::m_inlineData),
                            MakeUintegerChecker<uint32_t>(0, 1u << 20))
              .AddAttribute("MaxH2CData",
                            "MAXH2CDATA the target offers in its ICResp: the most data bytes of "
                            "one H2CData PDU. nvmet-tcp: NVMET_TCP_MAXH2CDATA = 0x400000 "
                            "(drivers/nvme/target/tcp.c); a multiple of 4, at least 4096 "
                            "(NVMe/TCP 1.0a 3.6.2.3).",
                            UintegerValue(0x400000),
                            MakeUintegerAccessor(&NvmeofTcpStack::m_maxH2cData),
                            MakeUintegerChecker<uint32_t>(4096))
              .AddAttribute("HeaderDigest",
                            "CRC32C header digest on every PDU after the ICReq / ICResp (nvme "
                            "connect --hdr-digest; off by default, nvmf_ctrl_options "
                            "hdr_digest).",
                            BooleanValue(false),
                            MakeBooleanAccessor(&NvmeofTcpStack::m_headerDigest),
                            MakeBooleanChecker())
              .AddAttribute("DataDigest",
                            "CRC32C data digest on every PDU that carries data (nvme connect "
                            "--data-digest; off by default, nvmf_ctrl_options data_digest).",
                            BooleanValue(false), MakeBooleanAccessor(&NvmeofTcpStack::m_dataDigest),
                            MakeBooleanChecker());
    return tid;
}

NvmeofTcpStack::NvmeofTcpStack()
    : m_pdusSent(NvmeTcpPduType::COUNT, 0)
    , m_pdusReceived(NvmeTcpPduType::COUNT, 0)
{
}

NvmeofTcpStack::~NvmeofTcpStack() = default;

NvmeTcpTargetParams
NvmeofTcpStack::TargetParams() const
{
    // nvmet-tcp's defaults otherwise: among them one R2T for all of a write (maxR2tLength).
    NvmeTcpTargetParams params;
    params.inCapsuleDataSize = m_inlineData;
    params.maxH2cData = m_maxH2cData;
    return params;
}

std::string
NvmeofTcpStack::SubNqn(uint32_t target) const
{
    const lfsim::Graph& g = m_layout->ctx->graph;
    return "nqn.2023-01.org.lfsim:" + g.Nodes()[g.Hosts()[m_layout->targets[target]]].name;
}

void
NvmeofTcpStack::Prepare(int64_t& stream)
{
    // The target's own checks, before anything is built; what an attribute set wrong is
    // reported under the attribute's name.
    try
    {
        NvmeTcpValidate(TargetParams());
    }
    catch (const std::invalid_argument& e)
    {
        const std::string field = "NvmeTcpTargetParams.maxH2cData";
        const std::string what = e.what();
        if (what.compare(0, field.size(), field) != 0)
        {
            throw;
        }
        throw std::invalid_argument(Key("MaxH2CData") + what.substr(field.size()));
    }
    m_net = dynamic_cast<RoceNetwork*>(m_layout->network);
    m_net->EnsureInternet(stream);
}

void
NvmeofTcpStack::Build(int64_t&)
{
    // An NVMe/TCP target (nvmet-tcp, a port on each of its ports) on every target host, then a
    // controller per path, bound to its initiator port on a host with several.
    RoceTopology& t = m_net->topology;
    NvmeTcpTargetParams params = TargetParams();
    for (uint32_t k = 0; k < m_layout->targets.size(); ++k)
    {
        params.subNqn = SubNqn(k);
        auto target = std::make_unique<NvmeTcpTarget>(t.hosts.Get(m_layout->targets[k]), params);
        target->SetBackend([this, k](bool isWrite, uint32_t bytes, std::function<void()> done)
                           { m_host->Backend(k, !isWrite, bytes, std::move(done)); });
        target->Start();
        m_targets.push_back(std::move(target));
    }
    m_ctrls.resize(m_layout->paths.size());
    for (uint32_t k = 0; k < m_layout->paths.size(); ++k)
    {
        Open(k);
        StartKeepAlive(k);
    }
}

std::unique_ptr<NvmeTcpHostQueue>
NvmeofTcpStack::MakeQueue(uint32_t path, uint16_t qid, uint16_t cntlid)
{
    const StoragePath& p = m_layout->paths[path];
    RoceTopology& t = m_net->topology;
    const uint32_t host = t.hostOf[p.from];
    NvmeTcpHostParams params;
    params.headerDigest = m_headerDigest;
    params.dataDigest = m_dataDigest;
    params.queueSize = uint16_t(m_queueSize);
    params.inCapsuleDataSize = m_inlineData;
    params.kato = uint32_t(m_kato.GetMilliSeconds());
    params.lbaSize = LBA;
    const lfsim::Graph& g = m_layout->ctx->graph;
    params.subNqn = SubNqn(p.target);
    // Each host its own NQN and host ID (nvme-cli takes them from /etc/nvme).
    params.hostNqn = "nqn.2014-08.org.nvmexpress:uuid:6c667369-6d00-4000-8000-"
                     + std::string(12 - std::min<size_t>(12, std::to_string(host + 1).size()), '0')
                     + std::to_string(host + 1);
    params.hostId[14] = uint8_t((host + 1) >> 8);
    params.hostId[15] = uint8_t(host + 1);
    auto q = std::make_unique<NvmeTcpHostQueue>(t.hosts.Get(host), qid, cntlid, params);
    if (g.AddressesOf(host).size() > 1)
    {
        q->SetLocalDevice(t.hostPorts[p.from]);
    }
    return q;
}

void
NvmeofTcpStack::Open(uint32_t path)
{
    Controller& c = m_ctrls[path];
    const uint32_t generation = ++c.generation;
    c.live = 0;
    const StoragePath& p = m_layout->paths[path];
    const Address to(InetSocketAddress(m_net->topology.hostIps[p.to]->GetAddress(), NVME_TCP_PORT));
    c.admin = MakeQueue(path, 0, NVME_CNTLID_DYNAMIC);
    c.admin->Connect(
        to,
        [this, path, generation](uint16_t, uint16_t cntlid)
        { AdminLive(path, generation, cntlid); },
        [this, path, generation](NvmeTcpError) { Failed(path, generation); });
}

void
NvmeofTcpStack::AdminLive(uint32_t path, uint32_t generation, uint16_t cntlid)
{
    Controller& c = m_ctrls[path];
    if (generation != c.generation)
    {
        return;
    }
    // nvme_tcp_setup_ctrl: with the admin queue live, the I/O queues, QID 1, 2, ...
    const StoragePath& p = m_layout->paths[path];
    const Address to(InetSocketAddress(m_net->topology.hostIps[p.to]->GetAddress(), NVME_TCP_PORT));
    for (uint32_t q = 0; q < IoQueues(); ++q)
    {
        c.io.push_back(MakeQueue(path, uint16_t(q + 1), cntlid));
        c.io.back()->Connect(
            to, [this, path, generation](uint16_t, uint16_t) { IoLive(path, generation); },
            [this, path, generation](NvmeTcpError) { Failed(path, generation); });
    }
}

void
NvmeofTcpStack::IoLive(uint32_t path, uint32_t generation)
{
    Controller& c = m_ctrls[path];
    if (generation != c.generation)
    {
        return;
    }
    ++c.live;
    if (StateOf(path) == CONNECTING)
    {
        QueueConnected(path); // a reconnect's Connect answered
    }
    if (c.live == IoQueues() && !c.ready)
    {
        c.ready = true;
        m_host->PathReady(path);
    }
}

void
NvmeofTcpStack::Failed(uint32_t path, uint32_t generation)
{
    if (generation == m_ctrls[path].generation)
    {
        QueueFailed(path);
    }
}

void
NvmeofTcpStack::CloseQueues(uint32_t path)
{
    Controller& c = m_ctrls[path];
    ++c.generation; // what the closed queues still report is stale
    c.live = 0;
    if (c.admin)
    {
        c.admin->Close();
        m_closed.push_back(std::move(c.admin));
    }
    for (auto& q : c.io)
    {
        q->Close();
        m_closed.push_back(std::move(q));
    }
    c.io.clear();
}

void
NvmeofTcpStack::ConnectQueues(uint32_t path)
{
    Open(path);
}

void
NvmeofTcpStack::SendKeepAlive(uint32_t path)
{
    Controller& c = m_ctrls[path];
    const uint32_t generation = c.generation;
    c.admin->KeepAlive(
        [this, path, generation](uint16_t status, Time)
        {
            if (status == NvmeStatus::SUCCESS && generation == m_ctrls[path].generation)
            {
                KeepAliveAnswered(path);
            }
        });
}

uint32_t
NvmeofTcpStack::Submit(const StorageCommand& cmd, uint64_t token)
{
    Controller& c = m_ctrls[cmd.path];
    NvmeTcpHostQueue& q = *c.io[cmd.queue % c.io.size()];
    // Whole blocks: a request of a size that is no multiple of 512 moves its last block whole.
    uint32_t left = (cmd.bytes + LBA - 1) / LBA * LBA;
    const uint32_t commands = (left + MAX_COMMAND - 1) / MAX_COMMAND;
    // A cancelled command completes with HOST_ABORTED_CMD when its queue closes: the reset
    // that closed it has already failed it over.
    if (commands == 1)
    {
        q.Submit(!cmd.read, left, c.nextLba,
                 [this, token](uint16_t status, Time)
                 {
                     if (status == NvmeStatus::SUCCESS)
                     {
                         m_host->Completed(token);
                     }
                 });
        c.nextLba += left / LBA;
        return 0;
    }
    auto pending = std::make_shared<uint32_t>(commands);
    while (left > 0)
    {
        const uint32_t n = std::min(left, MAX_COMMAND);
        q.Submit(!cmd.read, n, c.nextLba,
                 [this, token, pending](uint16_t status, Time)
                 {
                     if (status == NvmeStatus::SUCCESS && --*pending == 0)
                     {
                         m_host->Completed(token);
                     }
                 });
        c.nextLba += n / LBA;
        left -= n;
    }
    return 0;
}

void
NvmeofTcpStack::Count(const NvmeTcpCounters& c)
{
    for (uint32_t k = 0; k < NvmeTcpPduType::COUNT; ++k)
    {
        m_pdusSent[k] += c.pdusSent[k];
        m_pdusReceived[k] += c.pdusReceived[k];
    }
    m_digestErrors += c.headerDigestErrors + c.dataDigestErrors;
}

void
NvmeofTcpStack::Finish(lfsim::RunContext& ctx, const std::string& prefix)
{
    NvmeofStack::Finish(ctx, prefix);
    for (const auto& q : m_closed)
    {
        Count(q->GetCounters());
    }
    for (const Controller& c : m_ctrls)
    {
        if (c.admin)
        {
            Count(c.admin->GetCounters());
        }
        for (const auto& q : c.io)
        {
            Count(q->GetCounters());
        }
    }
    // The PDUs of every host queue, by type: what a capture of the hosts' ports shows.
    lfsim::Table& t = ctx.AddTable(
        prefix + "nvme_tcp_pdus",
        {lfsim::IntColumn("id"), lfsim::IntColumn("host_sent"), lfsim::IntColumn("host_received")});
    std::vector<std::string> names;
    for (uint32_t k = 0; k < NvmeTcpPduType::COUNT; ++k)
    {
        if (k == 8)
        {
            continue; // no PDU type 8
        }
        t.Append({double(names.size()), double(m_pdusSent[k]), double(m_pdusReceived[k])});
        names.push_back(PDU_NAMES[k]);
    }
    ctx.SetLabels(prefix + "nvme_tcp_pdus", names);
    ctx.SetMetric(prefix + "nvme_tcp_digest_errors", m_digestErrors);
}

namespace
{
const bool g_stack = RegisterStorageStack(
    {"nvmeof_tcp",
     "ns3::NvmeofTcpStack",
     "NVMe-oF over TCP (the NVMe/TCP transport binding) on the roce fabric's IP path, in the class "
     "of RoceHostIp.Dscp: CapsuleCmd, C2HData / R2T + H2CData, CapsuleResp",
     {"roce"},
     {"ns3::RoceHostIp"}});
} // namespace

} // namespace ns3
