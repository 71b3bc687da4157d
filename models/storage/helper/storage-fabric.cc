#include "storage-fabric.h"

#include "block-target.h"
#include "fc-helper.h"
#include "fcp.h"
#include "fio-job.h"
#include "lfsim-run.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "roce-helper.h"
#include "storage-stack.h"

#include <deque>
#include <numeric>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(StorageScenario);

TypeId
StorageScenario::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::StorageScenario")
              .SetParent<Object>()
              .SetGroupName("Storage")
              .AddConstructor<StorageScenario>()
              .AddAttribute("Stack",
                            "Storage stack: nvmeof_rdma (NVMe-oF over RoCEv2: command capsule "
                            "and completion by SEND, data by RDMA READ/WRITE from the target) or "
                            "fcp (SCSI over Fibre Channel: FCP exchanges with BB_Credit).",
                            EnumValue(NVMEOF_RDMA), MakeEnumAccessor(&StorageScenario::stack),
                            MakeEnumChecker(NVMEOF_RDMA, "nvmeof_rdma", FCP, "fcp"))
              .AddAttribute("Initiators", "Hosts running the FioJob, each with its own links.",
                            UintegerValue(1), MakeUintegerAccessor(&StorageScenario::initiators),
                            MakeUintegerChecker<uint32_t>(1, 1024))
              .AddAttribute("Replicas",
                            "Copies of every write, the target's own included: a write completes "
                            "when all are on their devices (1: no replication).",
                            UintegerValue(1), MakeUintegerAccessor(&StorageScenario::replicas),
                            MakeUintegerChecker<uint32_t>(1, 16))
              .AddAttribute("EthernetSpeed", "Link rate of every host, target and replica (roce).",
                            EnumValue(int(EthSpeed::GBE100)),
                            MakeEnumAccessor(&StorageScenario::ethSpeed), EthSpeedChecker())
              .AddAttribute("NvmeofLayers",
                            "Initiator stack of nvmeof_rdma as name:delay per layer (delay per "
                            "I/O, half on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,nvme:1us,nvmeof:1us,rdma:1us,"
                                        "rnic:1us"),
                            MakeStringAccessor(&StorageScenario::nvmeofLayers), MakeStringChecker())
              .AddAttribute("FcpLayers",
                            "Initiator stack of fcp as name:delay per layer (delay per I/O, half "
                            "on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,scsi:1us,fcp:1us,hba:1us"),
                            MakeStringAccessor(&StorageScenario::fcpLayers), MakeStringChecker())
              .AddAttribute("TargetDelay",
                            "Target software time per command before the device (and again "
                            "before the completion is sent).",
                            TimeValue(MicroSeconds(2)),
                            MakeTimeAccessor(&StorageScenario::targetDelay),
                            MakeTimeChecker(Time(0)));
    return tid;
}

namespace
{

using lfsim::RunContext;
using lfsim::Table;

/// The SENDs of one direction of a queue pair, each carrying an I/O id. RC delivers them
/// whole and in order, so the receiver's n-th receive completion is the sender's n-th SEND.
struct SendChannel
{
    Ptr<RdmaQueuePair> qp;
    std::deque<uint64_t> ids;

    void
    Send(uint64_t id, uint32_t bytes)
    {
        ids.push_back(id);
        qp->Post(RdmaOp::SEND, bytes);
    }

    uint64_t
    Received()
    {
        const uint64_t id = ids.front();
        ids.pop_front();
        return id;
    }
};

/// One job clone on one initiator, with its own queue pair to the target.
struct Job
{
    uint32_t index = 0;
    Ptr<RdmaQueuePair> host;            ///< initiator side
    Ptr<RdmaQueuePair> target;          ///< target side
    SendChannel toTarget;               ///< command capsules
    SendChannel toHost;                 ///< completions
    std::map<uint64_t, uint64_t> reads; ///< target's RDMA READ work request -> I/O id
    uint32_t initiator = 0;             ///< fcp: the host whose FcpInitiator carries the job
    uint32_t inFlight = 0;
    uint64_t bytesIssued = 0;
    bool stopped = false;
};

struct Io
{
    uint32_t job;
    bool read;
    Time submit;
    uint32_t replicasPending = 0;
};

/// A replica node and the target's queue pair to it.
struct Replica
{
    SendChannel toReplica; ///< target side: command and data
    SendChannel toTarget;  ///< replica side: the answer
    Ptr<BlockTarget> device;
};

constexpr uint32_t NVME_COMMAND_CAPSULE = 64;
constexpr uint32_t NVME_COMPLETION = 16;

class StorageFabric : public lfsim::Fabric
{
  public:
    void
    Build(RunContext& ctx) override
    {
        m_sc = CreateObject<StorageScenario>();
        m_job = CreateObject<FioJob>();
        const bool fcp = m_sc->stack == StorageScenario::FCP;
        m_layers = fcp ? ParseLayers("StorageScenario.FcpLayers", m_sc->fcpLayers)
                       : ParseLayers("StorageScenario.NvmeofLayers", m_sc->nvmeofLayers);
        m_half = LayersDelay(m_layers) / 2;
        m_stop = m_job->runtime.IsStrictlyPositive() ? m_job->runtime : ctx.config.stopTime;
        if (m_job->rampTime >= m_stop)
        {
            throw std::invalid_argument("FioJob.ramp_time: must be shorter than runtime (or "
                                        "stop_time); accepted: a shorter time");
        }

        if (fcp)
        {
            BuildFcp();
            m_ios = &ctx.AddTable("ios", {"id", "read", "bytes", "submit_ns", "complete_ns"});
            return;
        }
        // Hosts: initiators, then the target, then the replicas, all on one switch.
        const uint32_t ni = m_sc->initiators;
        const uint32_t nr = m_sc->replicas - 1;
        RoceHelper helper;
        m_t = helper.Leaf(ni + 1 + nr, EthSpeed(m_sc->ethSpeed));
        int64_t stream = 3000;
        stream += helper.AssignStreams(m_t, stream);
        m_device = CreateObject<BlockTarget>();
        stream += m_device->AssignStreams(stream);
        m_mix = CreateObject<UniformRandomVariable>();
        m_mix->SetStream(stream++);
        Ptr<RdmaNic> target = m_t.nics[ni];
        for (uint32_t r = 0; r < nr; ++r)
        {
            Replica rep;
            std::tie(rep.toReplica.qp, rep.toTarget.qp) = target->Connect(m_t.nics[ni + 1 + r]);
            rep.device = CreateObject<BlockTarget>();
            stream += rep.device->AssignStreams(stream);
            const uint32_t k = m_replicas.size();
            rep.toTarget.qp->SetReceiveCallback(
                MakeCallback(&StorageFabric::ReplicaCommand, this).Bind(k));
            rep.toReplica.qp->SetReceiveCallback(
                MakeCallback(&StorageFabric::ReplicaAck, this).Bind(k));
            m_replicas.push_back(rep);
        }
        for (uint32_t i = 0; i < ni; ++i)
        {
            for (uint32_t c = 0; c < m_job->numjobs; ++c)
            {
                Job j;
                j.index = m_jobs.size();
                std::tie(j.host, j.target) = m_t.nics[i]->Connect(target);
                j.toTarget.qp = j.host;
                j.toHost.qp = j.target;
                j.target->SetReceiveCallback(
                    MakeCallback(&StorageFabric::TargetCommand, this).Bind(j.index));
                j.target->SetCompletionCallback(
                    MakeCallback(&StorageFabric::TargetTransferDone, this).Bind(j.index));
                j.host->SetReceiveCallback(
                    MakeCallback(&StorageFabric::HostCompletion, this).Bind(j.index));
                m_jobs.push_back(j);
                m_jobLabels.push_back("h" + std::to_string(i) + "/job" + std::to_string(c));
            }
        }
        m_ios = &ctx.AddTable("ios", {"id", "read", "bytes", "submit_ns", "complete_ns"});
        for (auto& j : m_jobs)
        {
            Simulator::ScheduleNow(&StorageFabric::Fill, this, j.index);
        }
    }

    void
    Finish(RunContext& ctx) override
    {
        ctx.SetLabels("ios", m_jobLabels);
        const double from = m_job->rampTime.GetSeconds();
        const double window = Simulator::Now().GetSeconds() - from;
        // Losslessness, as each fabric counts it: frames the RoCE switches dropped (and the
        // XOFFs that prevented it), frames an FC port received with every buffer in use.
        double drops = 0, xoff = 0;
        for (const auto& sw : m_t.switches)
        {
            drops += sw->GetDrops();
            xoff += sw->GetCounters().xoffSent;
        }
        for (const auto& port : m_fc.ports)
        {
            drops += port->GetCounters().bufferOverruns;
        }
        ctx.SetMetric("drops", drops);
        ctx.SetMetric("pfc_xoff_sent", xoff);
        ctx.SetMetric("stack_depth", double(m_layers.size()));
        ctx.SetMetric("stack_delay_us", LayersDelay(m_layers).GetSeconds() * 1e6);
        std::vector<double> lat[2];
        double bytes[2] = {0, 0};
        const auto& read = m_ios->Column("read");
        const auto& b = m_ios->Column("bytes");
        const auto& sub = m_ios->Column("submit_ns");
        const auto& done = m_ios->Column("complete_ns");
        for (size_t k = 0; k < m_ios->Rows(); ++k)
        {
            if (done[k] * 1e-9 < from)
            {
                continue; // ramp_time: not counted, as fio does
            }
            const int r = read[k] > 0 ? 1 : 0;
            lat[r].push_back((done[k] - sub[k]) / 1e3);
            bytes[r] += b[k];
        }
        const char* names[2] = {"write", "read"};
        for (int r = 0; r < 2; ++r)
        {
            const std::string n = names[r];
            const double count = lat[r].size();
            ctx.SetMetric(n + "_ios", count);
            ctx.SetMetric(n + "_iops", window > 0 ? count / window : 0.0);
            ctx.SetMetric(n + "_bw_MiBps", window > 0 ? bytes[r] / window / (1 << 20) : 0.0);
            ctx.SetMetric(n + "_lat_mean_us",
                          count ? std::accumulate(lat[r].begin(), lat[r].end(), 0.0) / count : 0.0);
            ctx.SetMetric(n + "_lat_p50_us", lfsim::Percentile(lat[r], 0.5));
            ctx.SetMetric(n + "_lat_p99_us", lfsim::Percentile(lat[r], 0.99));
        }
    }

  private:
    /// fcp: initiators and the target on one FC switch; one FcpInitiator per host carries the
    /// I/Os of all its job clones (one receive path per N_Port).
    void
    BuildFcp()
    {
        if (m_sc->replicas > 1)
        {
            throw std::invalid_argument("StorageScenario.Replicas: got "
                                        + std::to_string(m_sc->replicas)
                                        + "; accepted: 1 with Stack fcp (replication is modelled "
                                          "for nvmeof_rdma)");
        }
        const uint32_t ni = m_sc->initiators;
        FcHelper helper;
        m_fc = helper.Star(ni + 1);
        int64_t stream = 3000;
        stream += helper.AssignStreams(m_fc, stream);
        m_device = CreateObject<BlockTarget>();
        stream += m_device->AssignStreams(stream);
        m_mix = CreateObject<UniformRandomVariable>();
        m_mix->SetStream(stream++);
        m_fcpTarget = CreateObject<FcpTarget>();
        m_fcpTarget->Setup(m_fc.hostPorts[ni]);
        m_fcpTarget->SetBackend(
            [this](bool read, uint32_t bytes, std::function<void()> done)
            {
                // Target software before the device and again before the response.
                Simulator::Schedule(m_sc->targetDelay,
                                    [this, read, bytes, done] {
                                        m_device->Submit(
                                            read, bytes,
                                            [this, done]
                                            { Simulator::Schedule(m_sc->targetDelay, done); });
                                    });
            });
        for (uint32_t i = 0; i < ni; ++i)
        {
            Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
            ini->Setup(m_fc.hostPorts[i], m_fc.hostPorts[ni]->GetFcId(),
                       m_fcpTarget->GetFirstBurstSize());
            m_initiators.push_back(ini);
            for (uint32_t c = 0; c < m_job->numjobs; ++c)
            {
                Job j;
                j.index = m_jobs.size();
                j.initiator = i;
                m_jobs.push_back(j);
                m_jobLabels.push_back("h" + std::to_string(i) + "/job" + std::to_string(c));
            }
        }
        for (auto& j : m_jobs)
        {
            Simulator::ScheduleNow(&StorageFabric::Fill, this, j.index);
        }
    }

    /// The I/O leaves the initiator's stack into the transport.
    void
    Dispatch(uint64_t id)
    {
        if (m_sc->stack == StorageScenario::NVMEOF_RDMA)
        {
            SendCommand(id);
            return;
        }
        const Io& io = m_io[id];
        m_initiators[m_jobs[io.job].initiator]->SubmitIo(
            io.read, m_job->bs,
            [this, id](Time) { Simulator::Schedule(m_half, &StorageFabric::Complete, this, id); });
    }

    /// Keep iodepth I/Os in flight while the job runs.
    void
    Fill(uint32_t ji)
    {
        Job& j = m_jobs[ji];
        while (!j.stopped && j.inFlight < m_job->iodepth)
        {
            if (Simulator::Now() >= m_stop
                || (m_job->size && j.bytesIssued + m_job->bs > m_job->size))
            {
                j.stopped = true;
                break;
            }
            ++j.inFlight;
            j.bytesIssued += m_job->bs;
            const uint64_t id = m_nextIo++;
            m_io[id] = {ji, m_job->NextIsRead(m_mix), Simulator::Now()};
            // Down the initiator's stack, then into the transport.
            Simulator::Schedule(m_half, &StorageFabric::Dispatch, this, id);
        }
        if (j.stopped && j.inFlight == 0 && ++m_jobsDone == m_jobs.size())
        {
            lfsim::StopRunNow();
        }
    }

    void
    SendCommand(uint64_t id)
    {
        m_jobs[m_io[id].job].toTarget.Send(id, NVME_COMMAND_CAPSULE);
    }

    void
    TargetCommand(uint32_t ji, Ptr<RdmaQueuePair>, uint32_t)
    {
        const uint64_t id = m_jobs[ji].toTarget.Received();
        Simulator::Schedule(m_sc->targetDelay, &StorageFabric::TargetExecute, this, id);
    }

    void
    TargetExecute(uint64_t id)
    {
        Io& io = m_io[id];
        Job& j = m_jobs[io.job];
        if (io.read)
        {
            m_device->Submit(true, m_job->bs, [this, id] { TargetReadDone(id); });
        }
        else
        {
            // The target pulls the data from the host's buffer.
            j.reads[j.target->Post(RdmaOp::READ, m_job->bs)] = id;
        }
    }

    void
    TargetReadDone(uint64_t id)
    {
        Job& j = m_jobs[m_io[id].job];
        j.target->Post(RdmaOp::WRITE, m_job->bs); // the data into the host's buffer
        Simulator::Schedule(m_sc->targetDelay, &StorageFabric::SendCompletion, this, id);
    }

    void
    TargetTransferDone(uint32_t ji, Ptr<RdmaQueuePair>, uint64_t wr, uint32_t, Time)
    {
        Job& j = m_jobs[ji];
        auto it = j.reads.find(wr);
        if (it == j.reads.end())
        {
            return; // a WRITE or SEND the target posted: nothing waits for it
        }
        const uint64_t id = it->second;
        j.reads.erase(it);
        Io& io = m_io[id];
        io.replicasPending = 1 + m_replicas.size();
        m_device->Submit(false, m_job->bs, [this, id] { WriteCopyDone(id); });
        for (auto& rep : m_replicas)
        {
            rep.toReplica.Send(id, NVME_COMMAND_CAPSULE + m_job->bs);
        }
    }

    void
    ReplicaCommand(uint32_t k, Ptr<RdmaQueuePair>, uint32_t)
    {
        Replica& rep = m_replicas[k];
        const uint64_t id = rep.toReplica.Received();
        rep.device->Submit(false, m_job->bs,
                           [this, k, id] { m_replicas[k].toTarget.Send(id, NVME_COMPLETION); });
    }

    void
    ReplicaAck(uint32_t k, Ptr<RdmaQueuePair>, uint32_t)
    {
        WriteCopyDone(m_replicas[k].toTarget.Received());
    }

    void
    WriteCopyDone(uint64_t id)
    {
        if (--m_io[id].replicasPending == 0)
        {
            Simulator::Schedule(m_sc->targetDelay, &StorageFabric::SendCompletion, this, id);
        }
    }

    void
    SendCompletion(uint64_t id)
    {
        m_jobs[m_io[id].job].toHost.Send(id, NVME_COMPLETION);
    }

    void
    HostCompletion(uint32_t ji, Ptr<RdmaQueuePair>, uint32_t)
    {
        const uint64_t id = m_jobs[ji].toHost.Received();
        // Up the initiator's stack to the application.
        Simulator::Schedule(m_half, &StorageFabric::Complete, this, id);
    }

    void
    Complete(uint64_t id)
    {
        auto it = m_io.find(id);
        const Io io = it->second;
        m_io.erase(it);
        m_ios->Append({double(io.job), io.read ? 1.0 : 0.0, double(m_job->bs),
                       double(io.submit.GetNanoSeconds()),
                       double(Simulator::Now().GetNanoSeconds())});
        --m_jobs[io.job].inFlight;
        Fill(io.job);
    }

    Ptr<StorageScenario> m_sc;
    Ptr<FioJob> m_job;
    std::vector<StorageLayer> m_layers;
    Time m_half;
    Time m_stop;
    RoceTopology m_t;
    FcTopology m_fc;
    Ptr<FcpTarget> m_fcpTarget;
    std::vector<Ptr<FcpInitiator>> m_initiators;
    Ptr<BlockTarget> m_device;
    Ptr<UniformRandomVariable> m_mix;
    std::vector<Job> m_jobs;
    std::vector<std::string> m_jobLabels;
    std::vector<Replica> m_replicas;
    std::map<uint64_t, Io> m_io;
    uint64_t m_nextIo = 0;
    size_t m_jobsDone = 0;
    Table* m_ios = nullptr;
};

const bool g_registered = lfsim::RegisterFabric(
    {"storage",
     "fio-like storage jobs against a block target over a storage stack (nvmeof_rdma over "
     "RoCEv2, fcp over Fibre Channel)",
     {"ns3::StorageScenario", "ns3::FioJob", "ns3::BlockTarget", "ns3::RoceNetDevice",
      "ns3::RoceChannel", "ns3::RoceSwitch", "ns3::RdmaNic", "ns3::FcNetDevice", "ns3::FcChannel",
      "ns3::FcSwitch", "ns3::FcpTarget"},
     {},
     [] { return std::make_unique<StorageFabric>(); }});

} // namespace

} // namespace ns3
