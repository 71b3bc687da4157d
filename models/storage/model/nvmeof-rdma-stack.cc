#include "nvmeof-rdma-stack.h"

#include "block-target.h"
#include "lfsim-capture.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "nvmeof-capture.h"
#include "roce-fabric.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ns3
{

namespace
{
/// What travels in a SendChannel besides I/O tokens (id << 8 | attempt mod 256).
constexpr uint64_t FABRICS_CONNECT = ~uint64_t(0);
constexpr uint64_t KEEP_ALIVE = ~uint64_t(0) - 1;
/// Entries of the admin queue (Linux's NVME_AQ_DEPTH), for the captures' Connect exchange.
constexpr uint16_t NVME_ADMIN_ENTRIES = 32;

/// Captures only: the command identifier of a token's command (its I/O's number; a Connect or
/// Keep Alive has 0, the only command on its queue when it goes).
uint16_t
Cid(uint64_t token)
{
    return token == FABRICS_CONNECT || token == KEEP_ALIVE ? 0 : uint16_t(token >> 8);
}

/// Captures only: the host buffer of a token's I/O (16 MiB apart), which its command's keyed
/// SGL descriptor names and the target's RDMA READ or WRITE addresses.
uint64_t
HostBuffer(uint64_t token)
{
    return 0x7F0000000000ULL + ((token >> 8) << 24);
}
} // namespace

NS_OBJECT_ENSURE_REGISTERED(NvmeofRdmaStack);

TypeId
NvmeofRdmaStack::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NvmeofRdmaStack")
              .SetParent<NvmeofStack>()
              .SetGroupName("Storage")
              .AddConstructor<NvmeofRdmaStack>()
              .AddAttribute("Layers",
                            "Initiator software of nvmeof_rdma as name:delay per layer (delay per "
                            "I/O, half on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,nvme:1us,nvmeof:1us,rdma:1us,"
                                        "rnic:1us"),
                            MakeStringAccessor(&NvmeofRdmaStack::m_layers), MakeStringChecker())
              .AddAttribute(
                  "SubmitCpu",
                  "CPU of a request's submit path on its thread's core: nvme-core and nvme-rdma "
                  "posting the "
                  "command capsule (an RDMA SEND, a doorbell, as nvme-pci rings one). Half "
                  "of the Linux NVMe stack's 2.8 us per I/O (Intel, AnandTech 7843; no "
                  "published split). "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(1400)), MakeTimeAccessor(&NvmeofRdmaStack::m_submitCpu),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "CompletionCpu",
                  "CPU of a request's completion path on its queue's interrupt core: the RECV "
                  "completion "
                  "interrupt and nvme-core's completion, the other half of the NVMe "
                  "stack's 2.8 us (Intel, AnandTech 7843). Kernel NVMe/RDMA does 1.5x "
                  "the 4 KiB reads per core of kernel NVMe/TCP (BoostX-NTI, Figs. 8-9). "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(1400)), MakeTimeAccessor(&NvmeofRdmaStack::m_completionCpu),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "ReadCpuPerKiB",
                  "CPU per KiB of a read's data: none, the RNIC writes it into the host's buffer. "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(0)), MakeTimeAccessor(&NvmeofRdmaStack::m_readCpuPerKiB),
                  MakeTimeChecker(Time(0)))
              .AddAttribute(
                  "WriteCpuPerKiB",
                  "CPU per KiB of a write's data: none, the RNIC reads it from the host's buffer. "
                  "(HostCpu enabled; validation/cases/host_cpu.py derives it from "
                  "validation/data/host_cpu_sources.csv.)",
                  TimeValue(NanoSeconds(0)), MakeTimeAccessor(&NvmeofRdmaStack::m_writeCpuPerKiB),
                  MakeTimeChecker(Time(0)))
              .AddAttribute("InlineDataSize",
                            "Writes of at most this many bytes travel in the command capsule "
                            "(in-capsule data) instead of being pulled by RDMA READ. 4096 is the "
                            "default in-capsule data size of the Linux nvmet-rdma "
                            "(NVMET_RDMA_DEFAULT_INLINE_DATA_SIZE = PAGE_SIZE) and SPDK "
                            "(SPDK_NVMF_RDMA_DEFAULT_IN_CAPSULE_DATA_SIZE) targets; 0 = always "
                            "RDMA READ.",
                            UintegerValue(4096),
                            MakeUintegerAccessor(&NvmeofRdmaStack::m_inlineData),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("ReplicaHosts",
                            "Hosts (a host selection) that keep a copy of every write besides the "
                            "target's own; a write completes when every copy is on its device. "
                            "Empty: no replication.",
                            StringValue(""),
                            MakeStringAccessor(&NvmeofRdmaStack::m_replicaHostsText),
                            MakeStringChecker())
              .AddAttribute("ReplicaDelay",
                            "Software time on a replica host per forwarded write before its "
                            "device (and again before its answer); 0 = none.",
                            TimeValue(Time(0)), MakeTimeAccessor(&NvmeofRdmaStack::m_replicaDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("TargetHostInterface",
                            "Apply RdmaNic's host-interface (PCIe) limit to the target and "
                            "replica NICs too (false: only to initiators, e.g. when the one "
                            "simulated target stands for several storage nodes).",
                            BooleanValue(true),
                            MakeBooleanAccessor(&NvmeofRdmaStack::m_targetHostInterface),
                            MakeBooleanChecker());
    return tid;
}

NvmeofRdmaStack::NvmeofRdmaStack() = default;
NvmeofRdmaStack::~NvmeofRdmaStack() = default;

void
NvmeofRdmaStack::SendChannel::Send(uint64_t id, uint32_t bytes)
{
    ids.push_back(id);
    qp->Post(RdmaOp::SEND, bytes);
}

uint64_t
NvmeofRdmaStack::SendChannel::Received()
{
    const uint64_t id = ids.front();
    ids.pop_front();
    return id;
}

void
NvmeofRdmaStack::UsePriority(int32_t priority)
{
    m_priority = priority; // the queue pairs' traffic class (-1: RdmaNic's)
}

std::vector<uint32_t>
NvmeofRdmaStack::ReservedHosts()
{
    if (m_replicaHostsText.empty())
    {
        return {};
    }
    const lfsim::Graph& g = m_layout->ctx->graph;
    m_replicaHosts = g.SelectHosts(m_replicaHostsText, Key("ReplicaHosts"));
    std::set<uint32_t> taken(m_layout->targets.begin(), m_layout->targets.end());
    for (uint32_t r : m_replicaHosts)
    {
        if (!taken.insert(r).second)
        {
            throw std::invalid_argument(Key("ReplicaHosts") + ": " + g.Nodes()[g.Hosts()[r]].name
                                        + " is a target too; accepted: hosts that are not in "
                                          "Destinations");
        }
    }
    return m_replicaHosts;
}

void
NvmeofRdmaStack::Build(int64_t& stream)
{
    m_net = dynamic_cast<RoceNetwork*>(m_layout->network);
    const lfsim::Graph& g = m_layout->ctx->graph;
    if (!m_layout->ctx->config.pcapDir.empty())
    {
        // Captures only: what each capsule is, for the frames a capture writes.
        m_capture = std::make_unique<NvmeofCapture>();
        m_net->captureHooks.push_back(
            [c = m_capture.get()](lfsim::PortCapture& file, std::vector<uint8_t>& frame)
            { c->Fill(file, frame); });
    }
    RoceTopology& t = m_net->topology;
    if (!m_targetHostInterface)
    {
        const std::vector<uint32_t>* both[] = {&m_layout->targets, &m_replicaHosts};
        for (const std::vector<uint32_t>* hosts : both)
        {
            for (uint32_t h : *hosts)
            {
                for (uint32_t a : g.AddressesOf(h))
                {
                    t.nics[a]->DisableHostInterface();
                }
            }
        }
    }
    // The replica links of every target, then a queue pair per I/O queue of every path;
    // replica devices on the next streams.
    std::map<uint32_t, Ptr<BlockTarget>> replicaDevice;
    m_targetReplicas.resize(m_layout->targets.size());
    for (uint32_t k = 0; k < m_layout->targets.size(); ++k)
    {
        const uint32_t from = g.AddressesOf(m_layout->targets[k])[0];
        for (uint32_t r : m_replicaHosts)
        {
            ReplicaLink link;
            std::tie(link.toReplica.qp, link.toTarget.qp)
                = m_net->Connect(from, g.AddressesOf(r)[0]);
            SetPriority(link.toReplica.qp, link.toTarget.qp);
            if (!replicaDevice.count(r))
            {
                replicaDevice[r] = CreateObject<BlockTarget>();
                stream += replicaDevice[r]->AssignStreams(stream);
            }
            link.device = replicaDevice[r];
            const uint32_t n = m_replicaLinks.size();
            link.toTarget.qp->SetReceiveCallback(
                MakeCallback(&NvmeofRdmaStack::ReplicaCommand, this).Bind(n));
            link.toReplica.qp->SetReceiveCallback(
                MakeCallback(&NvmeofRdmaStack::ReplicaAck, this).Bind(n));
            m_targetReplicas[k].push_back(n);
            m_replicaLinks.push_back(link);
        }
    }
    const uint32_t paths = m_layout->paths.size();
    m_pathChannels.resize(paths);
    m_admin.assign(paths, lfsim::NONE);
    for (uint32_t k = 0; k < paths; ++k)
    {
        for (uint32_t q = 0; q < IoQueues(); ++q)
        {
            m_pathChannels[k].push_back(m_channels.size());
            m_channels.emplace_back();
            m_channels.back().path = k;
            Open(m_channels.size() - 1);
        }
        StartKeepAlive(k);
    }
}

void
NvmeofRdmaStack::SetPriority(Ptr<RdmaQueuePair> a, Ptr<RdmaQueuePair> b) const
{
    if (m_priority >= 0)
    {
        a->SetPriority(uint8_t(m_priority));
        b->SetPriority(uint8_t(m_priority));
    }
}

void
NvmeofRdmaStack::Open(uint32_t ch)
{
    Channel& c = m_channels[ch];
    const StoragePath& p = m_layout->paths[c.path];
    RoceTopology& t = m_net->topology;
    std::tie(c.host, c.target) = m_net->Connect(p.from, p.to);
    SetPriority(c.host, c.target);
    if (m_capture)
    {
        // NVMe queue IDs: the admin queue is 0, the I/O queues 1, 2, ... of their controller
        // (the path, numbered from 1).
        const auto& io = m_pathChannels[c.path];
        const auto q = std::find(io.begin(), io.end(), ch);
        const bool admin = q == io.end();
        m_capture->Connect(*c.host, *c.target, admin ? 0 : uint16_t(q - io.begin() + 1),
                           uint16_t(c.path + 1),
                           admin ? NVME_ADMIN_ENTRIES : uint16_t(m_queueSize));
    }
    c.toTarget.qp = c.host;
    c.toHost.qp = c.target;
    c.target->SetReceiveCallback(MakeCallback(&NvmeofRdmaStack::TargetCommand, this).Bind(ch));
    c.target->SetCompletionCallback(
        MakeCallback(&NvmeofRdmaStack::TargetTransferDone, this).Bind(ch));
    c.host->SetReceiveCallback(MakeCallback(&NvmeofRdmaStack::HostCompletion, this).Bind(ch));
    c.host->SetErrorCallback(MakeCallback(&NvmeofRdmaStack::HostQpError, this).Bind(ch));
}

void
NvmeofRdmaStack::CloseQueues(uint32_t path)
{
    std::vector<uint32_t> all = m_pathChannels[path];
    if (m_admin[path] != lfsim::NONE)
    {
        all.push_back(m_admin[path]);
    }
    for (uint32_t ch : all)
    {
        Channel& c = m_channels[ch];
        for (const Ptr<RdmaQueuePair>& qp : {c.host, c.target})
        {
            if (qp)
            {
                qp->ToError();
                qp->GetNic()->Retire(qp);
            }
        }
        c = Channel{};
        c.path = path;
    }
}

void
NvmeofRdmaStack::ConnectQueues(uint32_t path)
{
    // nvme_rdma_reconnect_ctrl_work: new queue pairs, a Fabrics Connect command on each.
    for (uint32_t ch : m_pathChannels[path])
    {
        Open(ch);
        if (m_capture)
        {
            NvmeCommand cmd;
            cmd.opcode = NvmeOpcode::FABRICS;
            m_capture->Submit(*m_channels[ch].host, cmd);
        }
        m_channels[ch].toTarget.Send(FABRICS_CONNECT, NVME_SQE_BYTES);
    }
}

void
NvmeofRdmaStack::SendKeepAlive(uint32_t path)
{
    if (m_admin[path] == lfsim::NONE)
    {
        m_admin[path] = m_channels.size();
        m_channels.emplace_back();
        m_channels.back().path = path;
    }
    const uint32_t admin = m_admin[path];
    if (!m_channels[admin].host)
    {
        Open(admin);
    }
    if (m_capture)
    {
        NvmeCommand cmd;
        cmd.opcode = NvmeOpcode::KEEP_ALIVE;
        m_capture->Submit(*m_channels[admin].host, cmd);
    }
    m_channels[admin].toTarget.Send(KEEP_ALIVE, NVME_SQE_BYTES);
}

void
NvmeofRdmaStack::HostQpError(uint32_t ch, Ptr<RdmaQueuePair> qp)
{
    // A host queue pair's retries ran out (IBV_WC_RETRY_EXC_ERR: nvme_rdma_wr_error). A
    // target's are not watched: nvmet-rdma drops that queue, and the host learns of it from its
    // own queue pair, a command timeout or the keep-alive.
    const Channel& c = m_channels[ch];
    if (c.host != qp)
    {
        return;
    }
    QueueFailed(c.path);
}

uint32_t
NvmeofRdmaStack::ChannelOf(const StorageCommand& c) const
{
    const auto& io = m_pathChannels[c.path];
    return io[c.queue % io.size()];
}

bool
NvmeofRdmaStack::Inline(const StorageCommand& c) const
{
    return !c.read && c.bytes <= m_inlineData;
}

uint32_t
NvmeofRdmaStack::TargetOf(const StorageCommand& c) const
{
    return m_layout->paths[c.path].target;
}

uint32_t
NvmeofRdmaStack::Submit(const StorageCommand& c, uint64_t token)
{
    Channel& ch = m_channels[ChannelOf(c)];
    if (m_capture)
    {
        NvmeCommand cmd;
        cmd.opcode = c.read ? NvmeOpcode::READ : NvmeOpcode::WRITE;
        cmd.cid = Cid(token);
        cmd.bytes = c.bytes;
        cmd.inCapsule = Inline(c);
        cmd.address = HostBuffer(token);
        m_capture->Submit(*ch.host, cmd);
    }
    ch.toTarget.Send(token, NVME_SQE_BYTES + (Inline(c) ? c.bytes : 0));
    return 0;
}

void
NvmeofRdmaStack::TargetCommand(uint32_t ch, Ptr<RdmaQueuePair>, uint32_t)
{
    Channel& c = m_channels[ch];
    const uint64_t token = c.toTarget.Received();
    if (token == FABRICS_CONNECT || token == KEEP_ALIVE)
    {
        if (m_capture)
        {
            // A Connect's DW0 is the controller ID (NVMe-oF 1.1 Figure 21).
            m_capture->Complete(*c.target, Cid(token), c.toTarget.ids.size(),
                                token == FABRICS_CONNECT ? c.path + 1 : 0);
        }
        c.toHost.Send(token, NVME_CQE_BYTES);
        return;
    }
    Simulator::Schedule(m_host->TargetDelay(), &NvmeofRdmaStack::TargetExecute, this, token);
}

// The target's steps carry the token: a step of a cancelled attempt (its controller reset, the
// I/O failed over) does nothing, as nvmet frees the commands of a queue it tears down.
void
NvmeofRdmaStack::TargetExecute(uint64_t token)
{
    const StorageCommand* c = m_host->Live(token);
    if (!c)
    {
        return;
    }
    if (c->read)
    {
        m_host->TargetDevice(TargetOf(*c), true, c->bytes,
                             [this, token] { TargetReadDone(token); });
    }
    else if (Inline(*c))
    {
        WriteDataReceived(token); // it came with the command
    }
    else
    {
        // The target pulls the data from the host's buffer.
        Channel& ch = m_channels[ChannelOf(*c)];
        if (m_capture)
        {
            m_capture->Transfer(*ch.target, HostBuffer(token));
        }
        ch.reads[ch.target->Post(RdmaOp::READ, c->bytes)] = token;
    }
}

void
NvmeofRdmaStack::TargetReadDone(uint64_t token)
{
    // Target software handles the device's completion, then posts the data (RDMA WRITE into
    // the host's buffer) and the completion back to back: RC keeps them in order.
    Simulator::Schedule(m_host->TargetDelay(), &NvmeofRdmaStack::SendReadData, this, token);
}

void
NvmeofRdmaStack::SendReadData(uint64_t token)
{
    if (const StorageCommand* c = m_host->Live(token))
    {
        Channel& ch = m_channels[ChannelOf(*c)];
        if (m_capture)
        {
            m_capture->Transfer(*ch.target, HostBuffer(token));
        }
        ch.target->Post(RdmaOp::WRITE, c->bytes);
        SendCompletion(token);
    }
}

void
NvmeofRdmaStack::TargetTransferDone(uint32_t ch, Ptr<RdmaQueuePair>, uint64_t wr, uint32_t, Time)
{
    Channel& c = m_channels[ch];
    auto it = c.reads.find(wr);
    if (it == c.reads.end())
    {
        return; // a WRITE or SEND the target posted: nothing waits for it
    }
    const uint64_t token = it->second;
    c.reads.erase(it);
    WriteDataReceived(token);
}

void
NvmeofRdmaStack::WriteDataReceived(uint64_t token)
{
    // The write's data is in the target's memory: to its device and to the replicas.
    const StorageCommand* c = m_host->Live(token);
    if (!c)
    {
        return;
    }
    const uint32_t target = TargetOf(*c);
    const uint32_t bytes = c->bytes;
    if (!m_targetReplicas[target].empty())
    {
        m_copiesPending[token] = 1 + m_targetReplicas[target].size();
    }
    m_host->TargetDevice(target, false, bytes, [this, token] { WriteCopyDone(token); });
    for (uint32_t k : m_targetReplicas[target])
    {
        m_replicaLinks[k].toReplica.Send(token, NVME_SQE_BYTES + bytes);
    }
}

void
NvmeofRdmaStack::ReplicaCommand(uint32_t k, Ptr<RdmaQueuePair>, uint32_t bytes)
{
    const uint64_t token = m_replicaLinks[k].toReplica.Received();
    const uint32_t data = bytes - NVME_SQE_BYTES;
    // Without ReplicaDelay no extra events.
    if (m_replicaDelay.IsZero())
    {
        ReplicaExecute(k, token, data);
        return;
    }
    Simulator::Schedule(m_replicaDelay, &NvmeofRdmaStack::ReplicaExecute, this, k, token, data);
}

void
NvmeofRdmaStack::ReplicaExecute(uint32_t k, uint64_t token, uint32_t bytes)
{
    m_replicaLinks[k].device->Submit(false, bytes, [this, k, token] { ReplicaWritten(k, token); });
}

void
NvmeofRdmaStack::ReplicaWritten(uint32_t k, uint64_t token)
{
    if (m_replicaDelay.IsZero())
    {
        ReplicaAnswer(k, token);
        return;
    }
    Simulator::Schedule(m_replicaDelay, &NvmeofRdmaStack::ReplicaAnswer, this, k, token);
}

void
NvmeofRdmaStack::ReplicaAnswer(uint32_t k, uint64_t token)
{
    m_replicaLinks[k].toTarget.Send(token, NVME_CQE_BYTES);
}

void
NvmeofRdmaStack::ReplicaAck(uint32_t k, Ptr<RdmaQueuePair>, uint32_t)
{
    WriteCopyDone(m_replicaLinks[k].toTarget.Received());
}

void
NvmeofRdmaStack::WriteCopyDone(uint64_t token)
{
    auto it = m_copiesPending.find(token);
    if (!m_host->Live(token))
    {
        if (it != m_copiesPending.end())
        {
            m_copiesPending.erase(it); // a cancelled attempt's
        }
        return;
    }
    // No entry: a write without replicas, its one copy written.
    if (it == m_copiesPending.end() || --it->second == 0)
    {
        if (it != m_copiesPending.end())
        {
            m_copiesPending.erase(it);
        }
        Simulator::Schedule(m_host->TargetDelay(), &NvmeofRdmaStack::SendCompletion, this, token);
    }
}

void
NvmeofRdmaStack::SendCompletion(uint64_t token)
{
    if (const StorageCommand* c = m_host->Live(token))
    {
        Channel& ch = m_channels[ChannelOf(*c)];
        if (m_capture)
        {
            m_capture->Complete(*ch.target, Cid(token), ch.toTarget.ids.size());
        }
        ch.toHost.Send(token, NVME_CQE_BYTES);
    }
}

void
NvmeofRdmaStack::HostCompletion(uint32_t ch, Ptr<RdmaQueuePair>, uint32_t)
{
    const uint64_t token = m_channels[ch].toHost.Received();
    if (token == FABRICS_CONNECT)
    {
        QueueConnected(m_channels[ch].path);
        return;
    }
    if (token == KEEP_ALIVE)
    {
        KeepAliveAnswered(m_channels[ch].path);
        return;
    }
    m_host->Completed(token);
}

namespace
{
const bool g_stack = RegisterStorageStack(
    {"nvmeof_rdma",
     "ns3::NvmeofRdmaStack",
     "NVMe-oF over RoCEv2 (NVMe-oF 1.1 7.3): command capsule and completion by SEND, data by "
     "RDMA READ/WRITE from the target",
     {"roce"}});
} // namespace

} // namespace ns3
