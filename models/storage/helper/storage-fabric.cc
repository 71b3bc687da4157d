#include "storage-fabric.h"

#include "block-target.h"
#include "fc-helper.h"
#include "fcp.h"
#include "fio-job.h"
#include "iscsi-initiator.h"
#include "iscsi-target.h"
#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/inet-socket-address.h"
#include "ns3/pointer.h"
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
                            "and completion by SEND, data by RDMA READ/WRITE from the target), "
                            "fcp (SCSI over Fibre Channel: FCP exchanges with BB_Credit) or iscsi "
                            "(SCSI over TCP/IP on the Ethernet fabric, in the class of "
                            "RoceHostIp.Dscp).",
                            EnumValue(NVMEOF_RDMA), MakeEnumAccessor(&StorageScenario::stack),
                            MakeEnumChecker(NVMEOF_RDMA, "nvmeof_rdma", FCP, "fcp", ISCSI, "iscsi"))
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
              .AddAttribute("IscsiLayers",
                            "Initiator stack of iscsi as name:delay per layer (delay per I/O, "
                            "half on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,scsi:1us,iscsi:1us,tcp:1us,"
                                        "ip:1us,nic:1us"),
                            MakeStringAccessor(&StorageScenario::iscsiLayers), MakeStringChecker())
              .AddAttribute("TargetDelay",
                            "Target software time per command before the device (and again "
                            "before the completion is sent).",
                            TimeValue(MicroSeconds(2)),
                            MakeTimeAccessor(&StorageScenario::targetDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("Jobs",
                            "Job sections run by every initiator, as in a fio job file: "
                            "'name: option=value ...; name: ...' with options rw, bs, iodepth, "
                            "numjobs, rwmixread, size overriding FioJob's (global) values. Empty: "
                            "one job, named job, with FioJob's values.",
                            StringValue(""), MakeStringAccessor(&StorageScenario::jobs),
                            MakeStringChecker())
              .AddAttribute("NvmeofInlineData",
                            "nvmeof_rdma: writes of at most this many bytes travel in the command "
                            "capsule (in-capsule data) instead of being pulled by RDMA READ. "
                            "4096 is the default in-capsule data size of the Linux nvmet-rdma "
                            "(NVMET_RDMA_DEFAULT_INLINE_DATA_SIZE = PAGE_SIZE) and SPDK "
                            "(SPDK_NVMF_RDMA_DEFAULT_IN_CAPSULE_DATA_SIZE) targets; 0 = always "
                            "RDMA READ.",
                            UintegerValue(4096),
                            MakeUintegerAccessor(&StorageScenario::nvmeofInlineData),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("MaxRequestSize",
                            "An I/O larger than this many bytes is carried as consecutive "
                            "requests of at most this size, each through the whole initiator "
                            "stack and the transport and started when the previous one "
                            "completes: what the Linux FUSE module does with a direct I/O "
                            "(max_read, FUSE_DEFAULT_MAX_PAGES_PER_REQ = 32 pages = 131072). "
                            "fio still counts one I/O of bs. 0 = no split.",
                            UintegerValue(0),
                            MakeUintegerAccessor(&StorageScenario::maxRequestSize),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("ReplicaDelay",
                            "Software time on a replica node per forwarded write before its "
                            "device (and again before its answer); 0 = none.",
                            TimeValue(Time(0)), MakeTimeAccessor(&StorageScenario::replicaDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("TargetHostInterface",
                            "Apply RdmaNic's host-interface (PCIe) limit to the target and "
                            "replica NICs too (false: only to initiators, e.g. when the one "
                            "simulated target stands for several storage nodes).",
                            BooleanValue(true),
                            MakeBooleanAccessor(&StorageScenario::targetHostInterface),
                            MakeBooleanChecker());
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
    Ptr<FioJob> spec;                   ///< its job section's options
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
    uint32_t bytes; ///< of the request in flight (the whole I/O unless MaxRequestSize splits it)
    Time submit;
    uint32_t total = 0;     ///< fio's I/O: bs
    uint32_t remaining = 0; ///< bytes not yet requested
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
        m_sections = ParseJobSections("StorageScenario.Jobs", m_sc->jobs);
        const bool fcp = m_sc->stack == StorageScenario::FCP;
        const bool iscsi = m_sc->stack == StorageScenario::ISCSI;
        m_layers = fcp     ? ParseLayers("StorageScenario.FcpLayers", m_sc->fcpLayers)
                   : iscsi ? ParseLayers("StorageScenario.IscsiLayers", m_sc->iscsiLayers)
                           : ParseLayers("StorageScenario.NvmeofLayers", m_sc->nvmeofLayers);
        m_stop = m_job->runtime.IsStrictlyPositive() ? m_job->runtime : ctx.config.stopTime;
        lfsim::CheckShorterThan("FioJob.ramp_time", m_job->rampTime,
                                m_job->runtime.IsStrictlyPositive() ? "runtime" : "stop_time",
                                m_stop);

        if (fcp)
        {
            BuildFcp();
            m_ios = &ctx.AddTable("ios", {"id", "read", "bytes", "submit_ns", "complete_ns"});
            return;
        }
        if (iscsi)
        {
            BuildIscsi();
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
        MakeDevice(stream);
        Ptr<RdmaNic> target = m_t.nics[ni];
        if (!m_sc->targetHostInterface)
        {
            for (uint32_t k = ni; k < m_t.nics.size(); ++k)
            {
                m_t.nics[k]->DisableHostInterface();
            }
        }
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
            for (const auto& [section, c] : Clones())
            {
                Job j = NewJob(i, section, c);
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
        ctx.SetLabels("job_options", m_jobOptions);
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
        double nicDrops = 0; // host interface (RdmaNic.PcieGeneration): receive buffer full
        double nicPauses = 0;
        for (const auto& nic : m_t.nics)
        {
            nicDrops += nic->GetHostCounters().rxBufferDrops;
            nicPauses += nic->GetHostCounters().xoffSent;
        }
        ctx.SetMetric("nic_buffer_drops", nicDrops);
        ctx.SetMetric("nic_pause_frames_sent", nicPauses);
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
            ctx.SetMetric(n + "_device_us", m_deviceIos[r] ? m_deviceTime[r].GetSeconds() * 1e6
                                                                 / double(m_deviceIos[r])
                                                           : 0.0);
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
    /// Half the initiator stack's time for an I/O of `bytes` (charged on each way).
    Time
    Half(uint32_t bytes) const
    {
        return LayersDelay(m_layers, bytes) / 2;
    }

    /// The target's own device, timed (queue + service) for the latency breakdown.
    void
    DeviceSubmit(bool read, uint32_t bytes, std::function<void()> done)
    {
        const Time start = Simulator::Now();
        m_device->Submit(read, bytes,
                         [this, read, start, done = std::move(done)]
                         {
                             if (Simulator::Now() >= m_job->rampTime)
                             {
                                 m_deviceTime[read] += Simulator::Now() - start;
                                 ++m_deviceIos[read];
                             }
                             done();
                         });
    }

    /// (section, clone) pairs in the order jobs are created on each initiator.
    std::vector<std::pair<uint32_t, uint32_t>>
    Clones() const
    {
        std::vector<std::pair<uint32_t, uint32_t>> out;
        for (uint32_t s = 0; s < m_sections.size(); ++s)
        {
            for (uint32_t c = 0; c < m_sections[s].job->numjobs; ++c)
            {
                out.emplace_back(s, c);
            }
        }
        return out;
    }

    /// Clone c of job section s on initiator i, labelled as fio names it (section name and
    /// clone number) under its host.
    Job
    NewJob(uint32_t i, uint32_t s, uint32_t c)
    {
        Job j;
        j.index = m_jobs.size();
        j.initiator = i;
        j.spec = m_sections[s].job;
        m_jobLabels.push_back("h" + std::to_string(i) + "/" + m_sections[s].name
                              + std::to_string(c));
        m_jobOptions.push_back(m_sections[s].options);
        return j;
    }

    void
    RequireNoReplicas(const std::string& stack) const
    {
        if (m_sc->replicas > 1)
        {
            throw std::invalid_argument("StorageScenario.Replicas: got "
                                        + std::to_string(m_sc->replicas)
                                        + "; accepted: 1 with Stack " + stack
                                        + " (replication is modelled for nvmeof_rdma)");
        }
    }

    /// The target's device and the draw of read/write mixes, on the next streams.
    void
    MakeDevice(int64_t& stream)
    {
        m_device = CreateObject<BlockTarget>();
        stream += m_device->AssignStreams(stream);
        m_mix = CreateObject<UniformRandomVariable>();
        m_mix->SetStream(stream++);
    }

    /// fcp and iscsi targets: software before the device and again before the response.
    void
    TargetBackend(bool read, uint32_t bytes, std::function<void()> done)
    {
        Simulator::Schedule(m_sc->targetDelay,
                            [this, read, bytes, done = std::move(done)] {
                                DeviceSubmit(read, bytes,
                                             [this, done]
                                             { Simulator::Schedule(m_sc->targetDelay, done); });
                            });
    }

    /// fcp: initiators and the target on one FC switch; one FcpInitiator per host carries the
    /// I/Os of all its job clones (one receive path per N_Port).
    void
    BuildFcp()
    {
        RequireNoReplicas("fcp");
        const uint32_t ni = m_sc->initiators;
        FcHelper helper;
        m_fc = helper.Star(ni + 1);
        int64_t stream = 3000;
        stream += helper.AssignStreams(m_fc, stream);
        MakeDevice(stream);
        m_fcpTarget = CreateObject<FcpTarget>();
        m_fcpTarget->Setup(m_fc.hostPorts[ni]);
        m_fcpTarget->SetBackend([this](bool read, uint32_t bytes, std::function<void()> done)
                                { TargetBackend(read, bytes, std::move(done)); });
        for (uint32_t i = 0; i < ni; ++i)
        {
            Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
            ini->Setup(m_fc.hostPorts[i], m_fc.hostPorts[ni]->GetFcId(),
                       m_fcpTarget->GetFirstBurstSize());
            m_initiators.push_back(ini);
            for (const auto& [section, c] : Clones())
            {
                m_jobs.push_back(NewJob(i, section, c));
            }
        }
        for (auto& j : m_jobs)
        {
            Simulator::ScheduleNow(&StorageFabric::Fill, this, j.index);
        }
    }

    /// iscsi: initiators and the target on one Ethernet leaf, TCP/IP on every host; one
    /// IscsiInitiator (one session, one TCP connection) per host carries the I/Os of all its
    /// job clones. The jobs start when every session has logged in.
    void
    BuildIscsi()
    {
        RequireNoReplicas("iscsi");
        const uint32_t ni = m_sc->initiators;
        RoceHelper helper;
        m_t = helper.Leaf(ni + 1, EthSpeed(m_sc->ethSpeed));
        int64_t stream = 3000;
        stream += helper.AssignStreams(m_t, stream);
        MakeDevice(stream);
        stream += helper.InstallInternet(m_t, stream);
        Ptr<Node> targetNode = m_t.hosts.Get(ni);
        m_iscsiTarget = CreateObject<IscsiTarget>();
        m_iscsiTarget->SetAttribute("Session", PointerValue(CreateObject<IscsiSession>()));
        m_iscsiTarget->SetBackend(
            [this](bool isWrite, uint64_t, uint32_t bytes, std::function<void()> done)
            { TargetBackend(!isWrite, bytes, std::move(done)); });
        m_iscsiTarget->Validate();
        targetNode->AddApplication(m_iscsiTarget);
        UintegerValue port;
        m_iscsiTarget->GetAttribute("Port", port);
        const InetSocketAddress portal(m_t.hostIps[ni]->GetAddress(), port.Get());
        for (uint32_t i = 0; i < ni; ++i)
        {
            Ptr<IscsiInitiator> ini = CreateObject<IscsiInitiator>();
            ini->SetAttribute("Session", PointerValue(CreateObject<IscsiSession>()));
            ini->SetAttribute("Remote", AddressValue(portal));
            ini->SetExternalWorkload(); // the FioJob's I/Os, nothing of its own
            ini->Validate();
            // Both offers are the IscsiSession defaults: a bad combination fails here, before
            // the run, with the key named.
            IscsiNegotiate(ini->GetSession()->GetParams(),
                           m_iscsiTarget->GetSession()->GetParams());
            ini->TraceConnectWithoutContext(
                "LoginComplete", MakeCallback(&StorageFabric::IscsiLoggedIn, this).Bind(i));
            m_t.hosts.Get(i)->AddApplication(ini);
            m_iscsi.push_back(ini);
            for (const auto& [section, c] : Clones())
            {
                m_jobs.push_back(NewJob(i, section, c));
            }
        }
    }

    /// An initiator's session reached the full feature phase: its job clones start.
    void
    IscsiLoggedIn(uint32_t initiator)
    {
        for (auto& j : m_jobs)
        {
            if (j.initiator == initiator)
            {
                Fill(j.index);
            }
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
        if (m_sc->stack == StorageScenario::ISCSI)
        {
            m_iscsi[m_jobs[io.job].initiator]->Submit(
                !io.read, io.bytes,
                [this, id](Time)
                { Simulator::Schedule(Half(m_io[id].bytes), &StorageFabric::Complete, this, id); });
            return;
        }
        m_initiators[m_jobs[io.job].initiator]->SubmitIo(
            io.read, io.bytes,
            [this, id](Time)
            { Simulator::Schedule(Half(m_io[id].bytes), &StorageFabric::Complete, this, id); });
    }

    /// Keep iodepth I/Os in flight while the job runs.
    void
    Fill(uint32_t ji)
    {
        Job& j = m_jobs[ji];
        const FioJob& spec = *j.spec;
        while (!j.stopped && j.inFlight < spec.iodepth)
        {
            if (Simulator::Now() >= m_stop || (spec.size && j.bytesIssued + spec.bs > spec.size))
            {
                j.stopped = true;
                break;
            }
            ++j.inFlight;
            j.bytesIssued += spec.bs;
            const uint64_t id = m_nextIo++;
            Io& io = m_io[id];
            io = {ji, spec.NextIsRead(m_mix), 0, Simulator::Now(), spec.bs, spec.bs};
            NextRequest(id);
        }
        if (j.stopped && j.inFlight == 0 && ++m_jobsDone == m_jobs.size())
        {
            lfsim::StopRunNow();
        }
    }

    /// The I/O's next request goes down the initiator's stack, then into the transport.
    void
    NextRequest(uint64_t id)
    {
        Io& io = m_io[id];
        const uint32_t max = m_sc->maxRequestSize;
        io.bytes = max ? std::min(max, io.remaining) : io.remaining;
        io.remaining -= io.bytes;
        Simulator::Schedule(Half(io.bytes), &StorageFabric::Dispatch, this, id);
    }

    void
    SendCommand(uint64_t id)
    {
        const Io& io = m_io[id];
        m_jobs[io.job].toTarget.Send(id, NVME_COMMAND_CAPSULE + (Inline(io) ? io.bytes : 0));
    }

    /// A write small enough to travel in the command capsule (in-capsule data).
    bool
    Inline(const Io& io) const
    {
        return !io.read && io.bytes <= m_sc->nvmeofInlineData;
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
            DeviceSubmit(true, io.bytes, [this, id] { TargetReadDone(id); });
        }
        else if (Inline(io))
        {
            WriteDataReceived(id); // it came with the command
        }
        else
        {
            // The target pulls the data from the host's buffer.
            j.reads[j.target->Post(RdmaOp::READ, io.bytes)] = id;
        }
    }

    void
    TargetReadDone(uint64_t id)
    {
        // Target software handles the device's completion, then posts the data (RDMA WRITE
        // into the host's buffer) and the completion back to back: RC keeps them in order.
        Simulator::Schedule(m_sc->targetDelay, &StorageFabric::SendReadData, this, id);
    }

    void
    SendReadData(uint64_t id)
    {
        m_jobs[m_io[id].job].target->Post(RdmaOp::WRITE, m_io[id].bytes);
        SendCompletion(id);
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
        WriteDataReceived(id);
    }

    /// The write's data is in the target's memory: to its device and to the replicas.
    void
    WriteDataReceived(uint64_t id)
    {
        Io& io = m_io[id];
        io.replicasPending = 1 + m_replicas.size();
        DeviceSubmit(false, io.bytes, [this, id] { WriteCopyDone(id); });
        for (auto& rep : m_replicas)
        {
            rep.toReplica.Send(id, NVME_COMMAND_CAPSULE + io.bytes);
        }
    }

    void
    ReplicaCommand(uint32_t k, Ptr<RdmaQueuePair>, uint32_t)
    {
        const uint64_t id = m_replicas[k].toReplica.Received();
        // Without ReplicaDelay no extra events: such runs stay identical to before it existed.
        if (m_sc->replicaDelay.IsZero())
        {
            ReplicaExecute(k, id);
            return;
        }
        Simulator::Schedule(m_sc->replicaDelay, &StorageFabric::ReplicaExecute, this, k, id);
    }

    void
    ReplicaExecute(uint32_t k, uint64_t id)
    {
        m_replicas[k].device->Submit(false, m_io[id].bytes,
                                     [this, k, id] { ReplicaWritten(k, id); });
    }

    void
    ReplicaWritten(uint32_t k, uint64_t id)
    {
        if (m_sc->replicaDelay.IsZero())
        {
            ReplicaAnswer(k, id);
            return;
        }
        Simulator::Schedule(m_sc->replicaDelay, &StorageFabric::ReplicaAnswer, this, k, id);
    }

    void
    ReplicaAnswer(uint32_t k, uint64_t id)
    {
        m_replicas[k].toTarget.Send(id, NVME_COMPLETION);
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
        Simulator::Schedule(Half(m_io[id].bytes), &StorageFabric::Complete, this, id);
    }

    void
    Complete(uint64_t id)
    {
        auto it = m_io.find(id);
        if (it->second.remaining > 0)
        {
            NextRequest(id);
            return;
        }
        const Io io = it->second;
        m_io.erase(it);
        m_ios->Append({double(io.job), io.read ? 1.0 : 0.0, double(io.total),
                       double(io.submit.GetNanoSeconds()),
                       double(Simulator::Now().GetNanoSeconds())});
        --m_jobs[io.job].inFlight;
        Fill(io.job);
    }

    Ptr<StorageScenario> m_sc;
    Ptr<FioJob> m_job; ///< global options (runtime, ramp_time)
    std::vector<FioJobSection> m_sections;
    std::vector<std::string> m_jobOptions;
    std::vector<StorageLayer> m_layers;
    Time m_stop;
    RoceTopology m_t;
    FcTopology m_fc;
    Ptr<FcpTarget> m_fcpTarget;
    std::vector<Ptr<FcpInitiator>> m_initiators;
    Ptr<IscsiTarget> m_iscsiTarget;
    std::vector<Ptr<IscsiInitiator>> m_iscsi;
    Ptr<BlockTarget> m_device;
    Ptr<UniformRandomVariable> m_mix;
    std::vector<Job> m_jobs;
    std::vector<std::string> m_jobLabels;
    std::vector<Replica> m_replicas;
    std::map<uint64_t, Io> m_io;
    uint64_t m_nextIo = 0;
    Time m_deviceTime[2]; ///< [write, read]: the target device's time, after ramp_time
    uint64_t m_deviceIos[2] = {0, 0};
    size_t m_jobsDone = 0;
    Table* m_ios = nullptr;
};

const bool g_registered = lfsim::RegisterFabric(
    {"storage",
     "fio-like storage jobs against a block target over a storage stack (nvmeof_rdma over "
     "RoCEv2, fcp over Fibre Channel, iscsi over TCP/IP on Ethernet)",
     {"ns3::StorageScenario", "ns3::FioJob", "ns3::BlockTarget", "ns3::RoceNetDevice",
      "ns3::RoceChannel", "ns3::RoceSwitch", "ns3::RdmaNic", "ns3::FcNetDevice", "ns3::FcChannel",
      "ns3::FcSwitch", "ns3::FcpTarget", "ns3::RoceHostIp", "ns3::IscsiSession"},
     {},
     [] { return std::make_unique<StorageFabric>(); },
     false});

} // namespace

} // namespace ns3
