/*
 * Fio (fabric roce: stacks nvmeof_rdma and iscsi; fabric fc: stack fcp): fio-like jobs (FioJob
 * and the job sections of Jobs) on every host of Hosts, each job against the block target
 * (BlockTarget) on every host of Destinations, over any topology the fabric built. A host with
 * several ports sees a target by several paths (each of its ports x each target port it
 * reaches: dual fabrics, several front-end ports); requests go by the path the PathSelector
 * chooses, after a slot in the host queues of the stack (see multipath.h).
 *
 * nvmeof_rdma (NVMe over Fabrics, RDMA transport, over the roce model): per path a controller
 * with NvmeofIoQueues I/O queues, each an RC queue pair; per I/O a 64-byte command capsule by
 * SEND; the target moves the data itself (RDMA WRITE to the host for a read, RDMA READ from the
 * host for a write, or in-capsule data) and answers with a 16-byte completion by SEND. With
 * ReplicaHosts the target forwards a write (command + data by SEND) to each and completes only
 * when each has written it and answered.
 *
 * fcp (SCSI over Fibre Channel, the fc model's FCP exchanges): one FcpInitiator per initiator
 * N_Port, logged in to every target N_Port it reaches; one FcpTarget per target N_Port.
 *
 * iscsi (SCSI over TCP, the iscsi model): per path one session (one TCP connection) from the
 * initiator's port to the target's portal on that port, over the roce model's Ethernet in the
 * class of RoceHostIp.Dscp. A job starts once every session of its initiator and target has
 * logged in.
 */
#include "block-target.h"
#include "fc-fabric.h"
#include "fcp.h"
#include "fio-job.h"
#include "iscsi-initiator.h"
#include "iscsi-target.h"
#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "multipath.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/inet-socket-address.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "nvmeof-capture.h"
#include "roce-fabric.h"
#include "storage-stack.h"

#include <algorithm>
#include <cerrno>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>

namespace ns3
{

class FioWorkload : public Workload
{
  public:
    static TypeId GetTypeId();

    enum Stack
    {
        NVMEOF_RDMA,
        FCP,
        ISCSI
    };

    /// Destinations names the targets, and the shared attributes fio has no use for keep
    /// their defaults (errors name the key); returns the traffic class of RDMA queue pairs (-1:
    /// RdmaNic's).
    int32_t CheckShared(int stack) const;

    int stack = NVMEOF_RDMA;
    std::string replicaHosts;
    std::string nvmeofLayers;
    std::string fcpLayers;
    std::string iscsiLayers;
    Time targetDelay;
    std::string jobs;
    Time replicaDelay;
    uint32_t nvmeofInlineData = 4096;
    uint32_t maxRequestSize = 0;
    bool targetHostInterface = true;
    int pathSelector = Multipath::QUEUE_LENGTH;
    uint32_t nvmeofIoQueues = 0;
    uint32_t nvmeofQueueSize = 128;
    uint32_t fcpLunQueueDepth = 64;
    uint32_t fcpCanQueue = 4086;
    uint32_t iscsiCmdsMax = 128;
    uint32_t iscsiQueueDepth = 32;
    Time ioTimeout;
    uint32_t ioRetries = 5;
    Time pathCheckInterval;
    Time nvmeofKeepAlive;
    Time nvmeofReconnectDelay;
    Time nvmeofCtrlLoss;
};

NS_OBJECT_ENSURE_REGISTERED(FioWorkload);

TypeId
FioWorkload::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FioWorkload")
              .SetParent<Workload>()
              .SetGroupName("Storage")
              .AddConstructor<FioWorkload>()
              .AddAttribute("Stack",
                            "Storage stack: nvmeof_rdma (NVMe-oF over RoCEv2, fabric roce: "
                            "command capsule and completion by SEND, data by RDMA READ/WRITE from "
                            "the target), fcp (SCSI over Fibre Channel, fabric fc: FCP exchanges "
                            "with BB_Credit) or iscsi (SCSI over TCP/IP, fabric roce, in the class "
                            "of RoceHostIp.Dscp).",
                            EnumValue(NVMEOF_RDMA), MakeEnumAccessor(&FioWorkload::stack),
                            MakeEnumChecker(NVMEOF_RDMA, "nvmeof_rdma", FCP, "fcp", ISCSI, "iscsi"))
              .AddAttribute("ReplicaHosts",
                            "nvmeof_rdma: hosts (a host selection) that keep a copy of every "
                            "write besides the target's own; a write completes when every copy is "
                            "on its device. Empty: no replication.",
                            StringValue(""), MakeStringAccessor(&FioWorkload::replicaHosts),
                            MakeStringChecker())
              .AddAttribute("NvmeofLayers",
                            "Initiator stack of nvmeof_rdma as name:delay per layer (delay per "
                            "I/O, half on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,nvme:1us,nvmeof:1us,rdma:1us,"
                                        "rnic:1us"),
                            MakeStringAccessor(&FioWorkload::nvmeofLayers), MakeStringChecker())
              .AddAttribute("FcpLayers",
                            "Initiator stack of fcp as name:delay per layer (delay per I/O, half "
                            "on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,scsi:1us,fcp:1us,hba:1us"),
                            MakeStringAccessor(&FioWorkload::fcpLayers), MakeStringChecker())
              .AddAttribute("IscsiLayers",
                            "Initiator stack of iscsi as name:delay per layer (delay per I/O, "
                            "half on submission, half on completion). Uncalibrated default.",
                            StringValue("application:1us,block:1us,scsi:1us,iscsi:1us,tcp:1us,"
                                        "ip:1us,nic:1us"),
                            MakeStringAccessor(&FioWorkload::iscsiLayers), MakeStringChecker())
              .AddAttribute("TargetDelay",
                            "Target software time per command before the device (and again "
                            "before the completion is sent).",
                            TimeValue(MicroSeconds(2)), MakeTimeAccessor(&FioWorkload::targetDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("Jobs",
                            "Job sections run by every initiator against every target, as in a "
                            "fio job file: 'name: option=value ...; name: ...' with options rw, "
                            "bs, iodepth, numjobs, rwmixread, size, continue_on_error overriding "
                            "FioJob's (global) values. Empty: one job, named job, with FioJob's "
                            "values.",
                            StringValue(""), MakeStringAccessor(&FioWorkload::jobs),
                            MakeStringChecker())
              .AddAttribute("NvmeofInlineData",
                            "nvmeof_rdma: writes of at most this many bytes travel in the command "
                            "capsule (in-capsule data) instead of being pulled by RDMA READ. "
                            "4096 is the default in-capsule data size of the Linux nvmet-rdma "
                            "(NVMET_RDMA_DEFAULT_INLINE_DATA_SIZE = PAGE_SIZE) and SPDK "
                            "(SPDK_NVMF_RDMA_DEFAULT_IN_CAPSULE_DATA_SIZE) targets; 0 = always "
                            "RDMA READ.",
                            UintegerValue(4096),
                            MakeUintegerAccessor(&FioWorkload::nvmeofInlineData),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("MaxRequestSize",
                            "An I/O larger than this many bytes is carried as consecutive "
                            "requests of at most this size, each through the whole initiator "
                            "stack and the transport and started when the previous one "
                            "completes: what the Linux FUSE module does with a direct I/O "
                            "(max_read, FUSE_DEFAULT_MAX_PAGES_PER_REQ = 32 pages = 131072). "
                            "fio still counts one I/O of bs. 0 = no split.",
                            UintegerValue(0), MakeUintegerAccessor(&FioWorkload::maxRequestSize),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("ReplicaDelay",
                            "Software time on a replica host per forwarded write before its "
                            "device (and again before its answer); 0 = none.",
                            TimeValue(Time(0)), MakeTimeAccessor(&FioWorkload::replicaDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("TargetHostInterface",
                            "Apply RdmaNic's host-interface (PCIe) limit to the target and "
                            "replica NICs too (false: only to initiators, e.g. when the one "
                            "simulated target stands for several storage nodes).",
                            BooleanValue(true),
                            MakeBooleanAccessor(&FioWorkload::targetHostInterface),
                            MakeBooleanChecker())
              .AddAttribute("PathSelector",
                            "How a request chooses among the paths to its target, as Linux "
                            "dm-multipath's path selectors: round-robin (dm-round-robin, one "
                            "request per path in turn) or queue-length (dm-queue-length: the "
                            "path with the fewest requests in flight). multipath-tools' default, "
                            "service-time 0, chooses as queue-length when the I/Os are of one "
                            "size.",
                            EnumValue(Multipath::QUEUE_LENGTH),
                            MakeEnumAccessor(&FioWorkload::pathSelector),
                            MakeEnumChecker(Multipath::ROUND_ROBIN, "round-robin",
                                            Multipath::QUEUE_LENGTH, "queue-length"))
              .AddAttribute("NvmeofIoQueues",
                            "nvmeof_rdma: I/O queues (queue pairs) per controller, i.e. per "
                            "path (nvme connect's nr_io_queues; Linux default num_online_cpus(), "
                            "drivers/nvme/host/fabrics.c). A host's k-th job uses queue k mod "
                            "this, as fio jobs on distinct CPUs do. 0: one per job of the host.",
                            UintegerValue(0), MakeUintegerAccessor(&FioWorkload::nvmeofIoQueues),
                            MakeUintegerChecker<uint32_t>(0, 1024))
              .AddAttribute("NvmeofQueueSize",
                            "nvmeof_rdma: entries of each I/O queue (nvme connect's queue_size; "
                            "default NVMF_DEF_QUEUE_SIZE = 128, drivers/nvme/host/fabrics.h). "
                            "Its tag set has queue_size tags, one reserved for the Fabrics "
                            "Connect command (reserved_tags = 1, drivers/nvme/host/rdma.c): "
                            "queue_size - 1 I/Os outstanding per queue.",
                            UintegerValue(128), MakeUintegerAccessor(&FioWorkload::nvmeofQueueSize),
                            MakeUintegerChecker<uint32_t>(16, 1024))
              .AddAttribute("FcpLunQueueDepth",
                            "fcp: I/Os outstanding per path (the SCSI device's queue_depth, set "
                            "by the HBA driver: qla2xxx ql2xmaxqdepth, default 64, "
                            "drivers/scsi/qla2xxx/qla_os.c; lpfc lun_queue_depth, default 30, "
                            "drivers/scsi/lpfc/lpfc_attr.c).",
                            UintegerValue(64), MakeUintegerAccessor(&FioWorkload::fcpLunQueueDepth),
                            MakeUintegerChecker<uint32_t>(1, 65535))
              .AddAttribute("FcpCanQueue",
                            "fcp: I/Os outstanding per initiator N_Port over all its paths (the "
                            "SCSI host's can_queue; qla2xxx: num_outstanding_cmds - 10 = 4086 "
                            "with DEFAULT_OUTSTANDING_COMMANDS 4096, qla_os.c and qla_def.h, "
                            "when the firmware offers that many exchanges).",
                            UintegerValue(4086), MakeUintegerAccessor(&FioWorkload::fcpCanQueue),
                            MakeUintegerChecker<uint32_t>(1, 65535))
              .AddAttribute("IscsiCmdsMax",
                            "iscsi: commands per session (open-iscsi node.session.cmds_max, "
                            "default 128, etc/iscsid.conf); the session's SCSI host takes "
                            "cmds_max - 15 I/Os (ISCSI_MGMT_CMDS_MAX tasks kept for NOP-Out and "
                            "task management, include/scsi/libiscsi.h, Linux 4.19).",
                            UintegerValue(128), MakeUintegerAccessor(&FioWorkload::iscsiCmdsMax),
                            MakeUintegerChecker<uint32_t>(16, 2048))
              .AddAttribute("IoTimeout",
                            "An I/O outstanding longer than this has timed out for the host "
                            "stack (Linux: the SCSI disk's timeout, /sys/block/sdX/device/"
                            "timeout, and nvme_core.io_timeout, both 30 s by default). fcp and "
                            "iscsi: the command is then aborted and retried (IoRetries) or "
                            "fails; nvmeof_rdma: the controller is reset (nvme_rdma_timeout "
                            "starts error recovery), its commands cancelled and failed over.",
                            TimeValue(Seconds(30)), MakeTimeAccessor(&FioWorkload::ioTimeout),
                            MakeTimeChecker(MicroSeconds(1)))
              .AddAttribute("IoRetries",
                            "fcp and iscsi: times a timed-out command is retried before the I/O "
                            "fails (the SCSI disk's SD_MAX_RETRIES, 5, drivers/scsi/sd.h).",
                            UintegerValue(5), MakeUintegerAccessor(&FioWorkload::ioRetries),
                            MakeUintegerChecker<uint32_t>(0, 100))
              .AddAttribute("PathCheckInterval",
                            "fcp and iscsi with several paths: a path failed by a command "
                            "timeout is reinstated after this long (multipathd's path checker, "
                            "polling_interval, default 5 s).",
                            TimeValue(Seconds(5)),
                            MakeTimeAccessor(&FioWorkload::pathCheckInterval),
                            MakeTimeChecker(MicroSeconds(1)))
              .AddAttribute("NvmeofKeepAliveTimeout",
                            "nvmeof_rdma: the controller's Keep Alive Timeout (KATO; nvme "
                            "connect's keep_alive_tmo, NVME_DEFAULT_KATO 5 s). The host sends a "
                            "Keep Alive command every KATO/2 on the controller's admin queue "
                            "(nvme_keep_alive_work_period); one unanswered after KATO (its "
                            "request timeout) resets the controller. 0: no keep-alive.",
                            TimeValue(Seconds(5)), MakeTimeAccessor(&FioWorkload::nvmeofKeepAlive),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("NvmeofReconnectDelay",
                            "nvmeof_rdma: after a controller reset (a queue pair in error, an "
                            "I/O or keep-alive timeout) the host tries to reconnect it this long "
                            "after, and again after each failed try (nvme connect's "
                            "reconnect_delay, NVMF_DEF_RECONNECT_DELAY 10 s).",
                            TimeValue(Seconds(10)),
                            MakeTimeAccessor(&FioWorkload::nvmeofReconnectDelay),
                            MakeTimeChecker(MicroSeconds(1)))
              .AddAttribute("NvmeofCtrlLossTimeout",
                            "nvmeof_rdma: a controller not reconnected within this long of its "
                            "loss is deleted (nvme connect's ctrl_loss_tmo, NVMF_DEF_CTRL_LOSS_TMO "
                            "600 s); when a device has no controller left its I/Os fail (EIO).",
                            TimeValue(Seconds(600)), MakeTimeAccessor(&FioWorkload::nvmeofCtrlLoss),
                            MakeTimeChecker(MicroSeconds(1)))
              .AddAttribute("IscsiQueueDepth",
                            "iscsi: I/Os outstanding per path (the LUN's queue_depth: open-iscsi "
                            "node.session.queue_depth, default 32, etc/iscsid.conf).",
                            UintegerValue(32), MakeUintegerAccessor(&FioWorkload::iscsiQueueDepth),
                            MakeUintegerChecker<uint32_t>(1, 1024));
    return tid;
}

int32_t
FioWorkload::CheckShared(int s) const
{
    auto reject = [this](const std::string& attr, const std::string& got, const std::string& why)
    { throw std::invalid_argument(key + "." + attr + ": got " + got + "; accepted: " + why); };
    if (m_destinations.empty())
    {
        throw std::invalid_argument(key
                                    + ".Destinations: empty; accepted: the target hosts, "
                                      "e.g. h0");
    }
    if (m_load != 1.0)
    {
        reject("Load", std::to_string(m_load),
               "1 for pattern Fio (its jobs are closed loops of iodepth I/Os)");
    }
    if (m_operation != int(lfsim::Operation::WRITE))
    {
        reject("Operation", m_operation == int(lfsim::Operation::READ) ? "Read" : "Send",
               "Write, the default, for pattern Fio (FioJob.rw says what each I/O does)");
    }
    if (!m_startSpread.IsZero())
    {
        reject("StartSpread", lfsim::TimeText(m_startSpread),
               "0s for pattern Fio (every job starts at Start, as fio starts its jobs)");
    }
    if (m_plane >= 0)
    {
        reject("Plane", std::to_string(m_plane),
               "-1 for pattern Fio (its I/Os take every path, as PathSelector chooses)");
    }
    if (m_priority >= 0 && s != NVMEOF_RDMA)
    {
        reject("Priority", std::to_string(m_priority),
               "-1 with Stack fcp or iscsi (iscsi's class is RoceHostIp.Dscp)");
    }
    return m_priority;
}

namespace
{

using lfsim::NONE;
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

/// nvmeof_rdma: one I/O queue of one controller (path), its queue pair at both ends.
struct Channel
{
    Ptr<RdmaQueuePair> host;
    Ptr<RdmaQueuePair> target;
    SendChannel toTarget;               ///< command capsules
    SendChannel toHost;                 ///< completions
    std::map<uint64_t, uint64_t> reads; ///< target's RDMA READ work request -> I/O token
    uint32_t path = 0;                  ///< the controller (path) it belongs to
};

/// A target host: its device and, for nvmeof_rdma, its links to the replica hosts.
struct Target
{
    uint32_t host = 0;
    Ptr<BlockTarget> device;
    std::vector<uint32_t> replicaLinks;
};

/// A target's queue pair to a replica host.
struct ReplicaLink
{
    SendChannel toReplica; ///< target side: command and data
    SendChannel toTarget;  ///< replica side: the answer
    Ptr<BlockTarget> device;
};

/// An initiator port x target port that see each other.
struct Path
{
    uint32_t device = 0;            ///< its multipath device
    uint32_t local = 0;             ///< its index in that device
    uint32_t from = 0;              ///< initiator address
    uint32_t to = 0;                ///< target address
    std::vector<uint32_t> channels; ///< nvmeof_rdma: one per I/O queue
    Ptr<IscsiInitiator> session;    ///< iscsi
    uint64_t requests = 0;
    uint64_t bytes = 0;
    uint32_t peak = 0;
    // nvmeof_rdma: the path's controller (nvme_ctrl states LIVE, CONNECTING, DELETED).
    enum State
    {
        LIVE,
        CONNECTING,
        DELETED
    } state = LIVE;
    Time lostAt;             ///< when it left LIVE
    uint32_t connecting = 0; ///< Fabrics Connect commands not yet answered
    uint32_t admin = NONE;   ///< its admin queue's channel (keep-alive), made when first used
    EventId keepAliveTimer;  ///< the outstanding Keep Alive command's timeout
    uint32_t resets = 0;
    int64_t reconnects = 0; ///< tries since it was lost
};

/// One initiator's multipath device for one target.
struct Device
{
    uint32_t target = 0; ///< index in the targets
    std::unique_ptr<Multipath> mp;
    std::vector<uint32_t> paths; ///< local path -> Path index
    std::vector<uint32_t> jobs;
    uint32_t loggedIn = 0; ///< iscsi sessions in the full feature phase
    bool dead = false;     ///< nvmeof_rdma: every controller deleted
};

/// One job clone of one initiator against one target.
struct Job
{
    Ptr<FioJob> spec; ///< its job section's options
    uint32_t device = 0;
    uint32_t queue = 0; ///< submission queue (NVMe: the I/O queue of its CPU)
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
    uint32_t path = NONE;
    uint32_t channel = 0;
    Time queued;          ///< when the request reached the host queues
    Time wait;            ///< held at the host queues, over its requests
    uint32_t attempt = 0; ///< of the request in flight: a completion of an older one is stale
    uint32_t retries = 0; ///< after timeouts, of this I/O
    bool out = false;     ///< in the transport (dispatched, not completed, aborted or cancelled)
    uint32_t task = 0;    ///< SCSI stacks: its exchange's OX_ID (fcp) or its task's ITT (iscsi)
    Time deadline;        ///< when out: its command timeout
    std::list<uint64_t>::iterator outAt; ///< when out: its place in the timeout list
};

constexpr uint32_t NVME_COMMAND_CAPSULE = 64;
/// What travels in a SendChannel besides I/O tokens (id << 8 | attempt mod 256).
constexpr uint64_t FABRICS_CONNECT = ~uint64_t(0);
constexpr uint64_t KEEP_ALIVE = ~uint64_t(0) - 1;
constexpr uint32_t NVME_COMPLETION = 16;
/// Entries of the admin queue (Linux's NVME_AQ_DEPTH), for the captures' Connect exchange.
constexpr uint16_t NVME_ADMIN_ENTRIES = 32;
/// Tasks libiscsi keeps per session for NOP-Outs and task management (ISCSI_MGMT_CMDS_MAX).
constexpr uint32_t ISCSI_MGMT_TASKS = 15;
/// Where the storage fabric numbered its streams before the open fabric (runs stay the same).
constexpr int64_t STORAGE_STREAMS = 3000;

/// For every address, the plane it is on: the connected switches its cable leads to (dual
/// fabrics: A or B), or, cabled straight to another host, that cable. Two host ports see each
/// other when their planes are equal.
std::vector<uint32_t>
AddressPlanes(const lfsim::Graph& g)
{
    const auto& nodes = g.Nodes();
    const auto& ports = g.Ports();
    std::vector<uint32_t> root(nodes.size());
    std::iota(root.begin(), root.end(), 0);
    std::function<uint32_t(uint32_t)> find
        = [&](uint32_t n) { return root[n] == n ? n : root[n] = find(root[n]); };
    for (const lfsim::GraphLink& l : g.Links())
    {
        const uint32_t a = ports[l.a].node;
        const uint32_t b = ports[l.b].node;
        if (!nodes[a].host && !nodes[b].host)
        {
            root[find(a)] = find(b);
        }
    }
    std::vector<uint32_t> plane;
    for (uint32_t p : g.HostPorts())
    {
        const uint32_t peer = ports[g.Peer(p)].node;
        plane.push_back(nodes[peer].host ? uint32_t(nodes.size()) + ports[p].link : find(peer));
    }
    return plane;
}

class FioInstalled : public lfsim::InstalledWorkload
{
  public:
    FioInstalled(RunContext& ctx, const lfsim::WorkloadInstance& w, lfsim::FabricNetwork& net)
        : m_graph(ctx.graph)
    {
        m_w = DynamicCast<FioWorkload>(w.object);
        m_key = m_w->key;
        m_roce = dynamic_cast<RoceNetwork*>(&net);
        m_fcNet = dynamic_cast<FcNetwork*>(&net);
        const bool fc = m_fcNet != nullptr;
        if ((m_w->stack == FioWorkload::FCP) != fc)
        {
            throw std::invalid_argument(m_key + ".Stack: got " + StackName() + " with fabric "
                                        + (fc ? "fc" : "roce")
                                        + "; accepted: nvmeof_rdma or iscsi with fabric roce, "
                                          "fcp with fabric fc");
        }
        m_priority = m_w->CheckShared(m_w->stack);
        m_job = CreateObject<FioJob>();
        m_sections = ParseJobSections(m_key + ".Jobs", m_w->jobs);
        m_layers = ParseLayers(m_key + "." + LayersAttribute(),
                               m_w->stack == FioWorkload::FCP     ? m_w->fcpLayers
                               : m_w->stack == FioWorkload::ISCSI ? m_w->iscsiLayers
                                                                  : m_w->nvmeofLayers);
        m_start = m_w->GetStart();
        if (m_start >= ctx.config.stopTime)
        {
            throw std::invalid_argument(m_key + ".Start: got '" + lfsim::TimeText(m_start)
                                        + "'; accepted: a time before stop_time");
        }
        const bool runtime = m_job->runtime.IsStrictlyPositive();
        m_stop = runtime ? m_start + m_job->runtime : ctx.config.stopTime;
        lfsim::CheckShorterThan("FioJob.ramp_time", m_job->rampTime,
                                runtime ? "runtime" : "stop_time", m_stop - m_start);
        m_from = m_start + m_job->rampTime;
        m_endsRun = ctx.workloads.size() == 1;
        SelectHosts(ctx, w);

        int64_t stream
            = std::max(fc ? m_fcNet->stream : m_roce->stream,
                       STORAGE_STREAMS + (fc ? m_fcNet->deviceStreams : m_roce->deviceStreams));
        for (uint32_t host : m_targetHosts)
        {
            Target t;
            t.host = host;
            t.device = CreateObject<BlockTarget>();
            stream += t.device->AssignStreams(stream);
            m_targets.push_back(t);
        }
        m_mix = CreateObject<UniformRandomVariable>();
        m_mix->SetStream(stream++);
        if (m_w->stack == FioWorkload::ISCSI && m_roce->topology.hostIps.empty())
        {
            RoceHelper helper;
            stream += helper.InstallInternet(m_roce->topology, stream);
        }
        MakePaths();
        if (m_w->stack == FioWorkload::NVMEOF_RDMA)
        {
            if (!ctx.config.pcapDir.empty())
            {
                // Captures only: what each capsule is, for the frames a capture writes.
                m_capture = std::make_unique<NvmeofCapture>();
                m_roce->captureHooks.push_back(
                    [c = m_capture.get()](lfsim::PortCapture& file, std::vector<uint8_t>& frame)
                    { c->Fill(file, frame); });
            }
            BuildNvmeof(stream);
        }
        else if (fc)
        {
            BuildFcp();
        }
        else
        {
            BuildIscsi();
        }
        (fc ? m_fcNet->stream : m_roce->stream) = stream;
        if (m_w->stack != FioWorkload::ISCSI)
        {
            for (uint32_t j = 0; j < m_jobs.size(); ++j)
            {
                Simulator::Schedule(m_start, &FioInstalled::Fill, this, j);
            }
        }
    }

    void
    Finish(RunContext& ctx, const std::string& prefix) override
    {
        ctx.AddTable(prefix + "ios", m_ios.Columns()) = std::move(m_ios);
        if (m_failed)
        {
            ctx.AddTable(prefix + "io_errors", m_errors.Columns()) = std::move(m_errors);
            ctx.SetLabels(prefix + "io_errors", m_jobLabels);
        }
        const Table& ios = ctx.tables.at(prefix + "ios");
        ctx.SetLabels(prefix + "ios", m_jobLabels);
        ctx.SetLabels(prefix + "job_options", m_jobOptions);
        const double from = m_from.GetSeconds();
        const Time end = m_jobsDone == m_jobs.size() ? m_end : Simulator::Now();
        const double window = end.GetSeconds() - from;
        ctx.SetMetric(prefix + "stack_depth", double(m_layers.size()));
        ctx.SetMetric(prefix + "stack_delay_us", LayersDelay(m_layers).GetSeconds() * 1e6);
        std::vector<double> lat[2];
        double bytes[2] = {0, 0};
        double wait = 0;
        const auto& read = ios.Column("read");
        const auto& b = ios.Column("bytes");
        const auto& sub = ios.Column("submit_ns");
        const auto& done = ios.Column("complete_ns");
        const auto& held = ios.Column("wait_ns");
        for (size_t k = 0; k < ios.Rows(); ++k)
        {
            if (done[k] * 1e-9 < from)
            {
                continue; // ramp_time: not counted, as fio does
            }
            const int r = read[k] > 0 ? 1 : 0;
            lat[r].push_back((done[k] - sub[k]) / 1e3);
            bytes[r] += b[k];
            wait += held[k] / 1e3;
        }
        const char* names[2] = {"write", "read"};
        for (int r = 0; r < 2; ++r)
        {
            const std::string n = prefix + names[r];
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
        const double counted = lat[0].size() + lat[1].size();
        ctx.SetMetric(prefix + "host_wait_us", counted ? wait / counted : 0.0);
        // Conservation: every I/O submitted has completed, failed or is still in flight.
        ctx.SetMetric(prefix + "ios_submitted", double(m_nextIo));
        ctx.SetMetric(prefix + "ios_completed", double(ios.Rows()));
        ctx.SetMetric(prefix + "ios_in_flight", double(m_io.size()));
        // Nothing silent: I/Os still out are not in the latency statistics; say how old the
        // oldest is and how many have passed the stack's I/O timeout.
        Time oldest(0);
        uint32_t hung = 0;
        for (const auto& [id, io] : m_io)
        {
            const Time age = Simulator::Now() - io.submit;
            oldest = std::max(oldest, age);
            hung += age > m_w->ioTimeout ? 1 : 0;
        }
        ctx.SetMetric(prefix + "oldest_in_flight_us", oldest.GetSeconds() * 1e6);
        ctx.SetMetric(prefix + "ios_hung_at_end", double(hung));
        ctx.SetMetric(prefix + "ios_timed_out", double(m_timedOut));
        ctx.SetMetric(prefix + "ios_aborted", double(m_aborted));
        ctx.SetMetric(prefix + "ios_retried", double(m_retried));
        ctx.SetMetric(prefix + "ios_failed", double(m_failed));
        ctx.SetMetric(prefix + "path_failures", double(m_pathFailures));
        ctx.SetMetric(prefix + "stale_completions", double(m_staleCompletions));
        if (m_w->stack == FioWorkload::NVMEOF_RDMA)
        {
            ctx.SetMetric(prefix + "controller_resets", double(m_ctrlResets));
            ctx.SetMetric(prefix + "controller_reset_first_us",
                          m_ctrlResets ? m_firstReset.GetSeconds() * 1e6 : 0.0);
            ctx.SetMetric(prefix + "reconnect_tries", double(m_ctrlReconnectTries));
            ctx.SetMetric(prefix + "controllers_reconnected", double(m_ctrlReconnected));
            ctx.SetMetric(prefix + "controllers_deleted", double(m_ctrlDeleted));
            ctx.SetMetric(prefix + "keep_alive_timeouts", double(m_keepAliveTimeouts));
        }
        // What the latency statistics leave out: I/Os completed during ramp_time, failed, or
        // still in flight.
        ctx.SetMetric(prefix + "lat_excluded_ios",
                      double(m_nextIo) - (lat[0].size() + lat[1].size()));
        double slowest = 0;
        for (size_t k = 0; k < ios.Rows(); ++k)
        {
            slowest = std::max(slowest, (done[k] - sub[k]) / 1e3);
        }
        ctx.SetMetric(prefix + "slowest_completed_us", slowest);
        ReportPaths(ctx, prefix);
    }

  private:
    std::string
    StackName() const
    {
        const char* names[] = {"nvmeof_rdma", "fcp", "iscsi"};
        return names[m_w->stack];
    }

    std::string
    LayersAttribute() const
    {
        const char* names[] = {"NvmeofLayers", "FcpLayers", "IscsiLayers"};
        return names[m_w->stack];
    }

    std::string
    HostName(uint32_t h) const
    {
        return m_graph.Nodes()[m_graph.Hosts()[h]].name;
    }

    std::string
    AddressLabel(uint32_t a) const
    {
        return m_graph.PortLabel(m_graph.HostPorts()[a]);
    }

    /// Targets, replica hosts and initiators (Hosts without the other two), each checked.
    void
    SelectHosts(const RunContext& ctx, const lfsim::WorkloadInstance& w)
    {
        m_targetHosts = w.object->Sinks(m_graph);
        if (!m_w->replicaHosts.empty())
        {
            if (m_w->stack != FioWorkload::NVMEOF_RDMA)
            {
                throw std::invalid_argument(m_key + ".ReplicaHosts: got '" + m_w->replicaHosts
                                            + "'; accepted: empty with Stack " + StackName()
                                            + " (replication is modelled for nvmeof_rdma)");
            }
            m_replicaHosts = m_graph.SelectHosts(m_w->replicaHosts, m_key + ".ReplicaHosts");
        }
        std::set<uint32_t> taken(m_targetHosts.begin(), m_targetHosts.end());
        for (uint32_t r : m_replicaHosts)
        {
            if (!taken.insert(r).second)
            {
                throw std::invalid_argument(m_key + ".ReplicaHosts: " + HostName(r)
                                            + " is a target too; accepted: hosts that are not "
                                              "in Destinations");
            }
        }
        for (uint32_t h : w.object->Sources(m_graph))
        {
            if (!taken.count(h))
            {
                m_initiators.push_back(h);
            }
        }
        if (m_initiators.empty())
        {
            throw std::invalid_argument(m_key
                                        + ".Hosts: selects no host besides the targets "
                                          "and replicas; accepted: initiator hosts, e.g. "
                                          "h1-h4");
        }
        // A target's device, portals and queue pairs belong to one workload.
        for (const auto& other : ctx.workloads)
        {
            if (&other == &w)
            {
                break;
            }
            Ptr<FioWorkload> o = DynamicCast<FioWorkload>(other.object);
            if (!o)
            {
                continue;
            }
            for (uint32_t h : o->Sinks(m_graph))
            {
                if (taken.count(h))
                {
                    throw std::invalid_argument(
                        m_key + ".Destinations: " + HostName(h) + " is a target of workload "
                        + other.name
                        + "; accepted: targets and replica hosts of no other Fio "
                          "workload (list every initiator in one workload)");
                }
            }
        }
    }

    /// The multipath devices (initiator x target), their paths and host queues, the jobs.
    void
    MakePaths()
    {
        const std::vector<uint32_t> plane = AddressPlanes(m_graph);
        std::vector<std::pair<uint32_t, uint32_t>> clones; // (section, clone)
        for (uint32_t s = 0; s < m_sections.size(); ++s)
        {
            for (uint32_t c = 0; c < m_sections[s].job->numjobs; ++c)
            {
                clones.emplace_back(s, c);
            }
        }
        const bool nvme = m_w->stack == FioWorkload::NVMEOF_RDMA;
        const bool iscsi = m_w->stack == FioWorkload::ISCSI;
        m_ioQueues = !nvme ? 1 : m_w->nvmeofIoQueues ? m_w->nvmeofIoQueues : clones.size();
        std::map<uint32_t, uint32_t> canQueue; // fcp: initiator address -> its host queue
        for (uint32_t i : m_initiators)
        {
            for (uint32_t t = 0; t < m_targets.size(); ++t)
            {
                Device d;
                d.target = t;
                d.mp = std::make_unique<Multipath>(Multipath::Selector(m_w->pathSelector),
                                                   &m_queues, m_ioQueues);
                for (uint32_t a : m_graph.AddressesOf(i))
                {
                    for (uint32_t b : m_graph.AddressesOf(m_targets[t].host))
                    {
                        if (plane[a] != plane[b])
                        {
                            continue;
                        }
                        Path p;
                        p.device = m_devices.size();
                        p.from = a;
                        p.to = b;
                        const std::string label = AddressLabel(a) + ">" + AddressLabel(b);
                        std::vector<uint32_t> own;
                        std::vector<uint32_t> shared;
                        if (nvme)
                        {
                            for (uint32_t q = 0; q < m_ioQueues; ++q)
                            {
                                own.push_back(AddQueue(label + ":q" + std::to_string(q),
                                                       m_w->nvmeofQueueSize - 1));
                            }
                        }
                        else if (iscsi)
                        {
                            own.push_back(AddQueue(label + ":queue_depth", m_w->iscsiQueueDepth));
                            shared.push_back(AddQueue(label + ":cmds_max",
                                                      m_w->iscsiCmdsMax - ISCSI_MGMT_TASKS));
                        }
                        else
                        {
                            own.push_back(AddQueue(label + ":queue_depth", m_w->fcpLunQueueDepth));
                            if (!canQueue.count(a))
                            {
                                canQueue[a]
                                    = AddQueue(AddressLabel(a) + ":can_queue", m_w->fcpCanQueue);
                            }
                            shared.push_back(canQueue[a]);
                        }
                        p.local = d.mp->AddPath(own, shared);
                        d.paths.push_back(m_paths.size());
                        m_pathLabels.push_back(label);
                        m_paths.push_back(p);
                    }
                }
                if (d.paths.empty())
                {
                    throw std::invalid_argument(m_key + ": " + HostName(i) + " and "
                                                + HostName(m_targets[t].host)
                                                + " have no path (no port of one reaches a port "
                                                  "of the other); accepted: initiators and "
                                                  "targets on a common plane");
                }
                for (uint32_t k = 0; k < clones.size(); ++k)
                {
                    const auto [s, c] = clones[k];
                    Job j;
                    j.spec = m_sections[s].job;
                    j.device = m_devices.size();
                    j.queue = k % m_ioQueues;
                    d.jobs.push_back(m_jobs.size());
                    // As fio names its clones (section name and number), under their host.
                    m_jobLabels.push_back(
                        HostName(i) + "/" + m_sections[s].name + std::to_string(c)
                        + (m_targets.size() > 1 ? ">" + HostName(m_targets[t].host) : ""));
                    m_jobOptions.push_back(m_sections[s].options);
                    m_jobs.push_back(j);
                }
                m_devices.push_back(std::move(d));
            }
            // Devices are made initiator by initiator: this host's are the last ones.
            m_hostDevices.emplace_back();
            for (size_t k = m_devices.size() - m_targets.size(); k < m_devices.size(); ++k)
            {
                m_hostDevices.back().push_back(m_devices[k].mp.get());
            }
        }
    }

    uint32_t
    AddQueue(const std::string& label, uint32_t capacity)
    {
        m_queues.push_back({capacity, 0, 0});
        m_queueLabels.push_back(label);
        return m_queues.size() - 1;
    }

    /// Half the initiator stack's time for an I/O of `bytes` (charged on each way).
    Time
    Half(uint32_t bytes) const
    {
        return LayersDelay(m_layers, bytes) / 2;
    }

    /// A target's own device, timed (queue + service) for the latency breakdown.
    void
    DeviceSubmit(uint32_t target, bool read, uint32_t bytes, std::function<void()> done)
    {
        const Time start = Simulator::Now();
        m_targets[target].device->Submit(read, bytes,
                                         [this, read, start, done = std::move(done)]
                                         {
                                             if (Simulator::Now() >= m_from)
                                             {
                                                 m_deviceTime[read] += Simulator::Now() - start;
                                                 ++m_deviceIos[read];
                                             }
                                             done();
                                         });
    }

    /// fcp and iscsi targets: software before the device and again before the response.
    void
    TargetBackend(uint32_t target, bool read, uint32_t bytes, std::function<void()> done)
    {
        Simulator::Schedule(m_w->targetDelay,
                            [this, target, read, bytes, done = std::move(done)]
                            {
                                DeviceSubmit(target, read, bytes,
                                             [this, done]
                                             { Simulator::Schedule(m_w->targetDelay, done); });
                            });
    }

    /// nvmeof_rdma: the replica links of every target, then a queue pair per I/O queue of
    /// every path; replica devices on the next streams.
    void
    BuildNvmeof(int64_t& stream)
    {
        RoceTopology& t = m_roce->topology;
        if (!m_w->targetHostInterface)
        {
            for (const auto* hosts : {&m_targetHosts, &m_replicaHosts})
            {
                for (uint32_t h : *hosts)
                {
                    for (uint32_t a : m_graph.AddressesOf(h))
                    {
                        t.nics[a]->DisableHostInterface();
                    }
                }
            }
        }
        std::map<uint32_t, Ptr<BlockTarget>> replicaDevice;
        for (Target& target : m_targets)
        {
            const uint32_t from = m_graph.AddressesOf(target.host)[0];
            for (uint32_t r : m_replicaHosts)
            {
                ReplicaLink link;
                std::tie(link.toReplica.qp, link.toTarget.qp)
                    = t.nics[from]->Connect(t.nics[m_graph.AddressesOf(r)[0]]);
                SetPriority(link.toReplica.qp, link.toTarget.qp);
                if (!replicaDevice.count(r))
                {
                    replicaDevice[r] = CreateObject<BlockTarget>();
                    stream += replicaDevice[r]->AssignStreams(stream);
                }
                link.device = replicaDevice[r];
                const uint32_t k = m_replicaLinks.size();
                link.toTarget.qp->SetReceiveCallback(
                    MakeCallback(&FioInstalled::ReplicaCommand, this).Bind(k));
                link.toReplica.qp->SetReceiveCallback(
                    MakeCallback(&FioInstalled::ReplicaAck, this).Bind(k));
                target.replicaLinks.push_back(k);
                m_replicaLinks.push_back(link);
            }
        }
        for (uint32_t k = 0; k < m_paths.size(); ++k)
        {
            for (uint32_t q = 0; q < m_ioQueues; ++q)
            {
                m_paths[k].channels.push_back(m_channels.size());
                m_channels.emplace_back();
                m_channels.back().path = k;
                Open(m_channels.size() - 1);
            }
            // Keep-alive from the controller's connect; runs too short to send one have no
            // event for it.
            const Time first = m_start + m_w->nvmeofKeepAlive / 2;
            if (m_w->nvmeofKeepAlive.IsStrictlyPositive() && first < m_stop)
            {
                Simulator::Schedule(first, &FioInstalled::KeepAlive, this, k);
            }
        }
    }

    void
    SetPriority(Ptr<RdmaQueuePair> a, Ptr<RdmaQueuePair> b) const
    {
        if (m_priority >= 0)
        {
            a->SetPriority(uint8_t(m_priority));
            b->SetPriority(uint8_t(m_priority));
        }
    }

    /// fcp: an FcpTarget on every target N_Port, then an FcpInitiator on every initiator
    /// N_Port with a path (one receive path per N_Port carries all its I/Os).
    void
    BuildFcp()
    {
        FcTopology& t = m_fcNet->topology;
        uint32_t firstBurst = 0;
        for (uint32_t k = 0; k < m_targets.size(); ++k)
        {
            for (uint32_t a : m_graph.AddressesOf(m_targets[k].host))
            {
                Ptr<FcpTarget> target = CreateObject<FcpTarget>();
                target->Setup(t.hostPorts[a]);
                target->SetBackend([this, k](bool read, uint32_t bytes, std::function<void()> done)
                                   { TargetBackend(k, read, bytes, std::move(done)); });
                firstBurst = target->GetFirstBurstSize();
                m_fcpTargets.push_back(target);
            }
        }
        for (const Path& p : m_paths)
        {
            if (!m_fcp.count(p.from))
            {
                Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
                ini->Setup(t.hostPorts[p.from], t.hostPorts[p.to]->GetFcId(), firstBurst);
                m_fcp[p.from] = ini;
            }
        }
    }

    /// iscsi: an IscsiTarget (a portal on each port) on every target host, then a session per
    /// path, bound to its initiator port on a host with several.
    void
    BuildIscsi()
    {
        RoceTopology& t = m_roce->topology;
        uint16_t port = 0;
        std::vector<Ptr<IscsiTarget>> targets;
        for (uint32_t k = 0; k < m_targets.size(); ++k)
        {
            Ptr<IscsiTarget> target = CreateObject<IscsiTarget>();
            target->SetAttribute("Session", PointerValue(CreateObject<IscsiSession>()));
            target->SetBackend(
                [this, k](bool isWrite, uint64_t, uint32_t bytes, std::function<void()> done)
                { TargetBackend(k, !isWrite, bytes, std::move(done)); });
            target->Validate();
            t.hosts.Get(m_targets[k].host)->AddApplication(target);
            UintegerValue v;
            target->GetAttribute("Port", v);
            port = v.Get();
            targets.push_back(target);
        }
        for (uint32_t k = 0; k < m_paths.size(); ++k)
        {
            Path& p = m_paths[k];
            Ptr<IscsiInitiator> ini = CreateObject<IscsiInitiator>();
            ini->SetAttribute("Session", PointerValue(CreateObject<IscsiSession>()));
            ini->SetAttribute("Remote",
                              AddressValue(InetSocketAddress(t.hostIps[p.to]->GetAddress(), port)));
            ini->SetExternalWorkload(); // the FioJob's I/Os, nothing of its own
            ini->Validate();
            // Both offers are the IscsiSession defaults: a bad combination fails here, before
            // the run, with the key named.
            IscsiNegotiate(ini->GetSession()->GetParams(),
                           targets[m_devices[p.device].target]->GetSession()->GetParams());
            const uint32_t host = t.hostOf[p.from];
            if (m_graph.AddressesOf(host).size() > 1)
            {
                ini->SetLocalDevice(t.hostPorts[p.from]);
            }
            ini->TraceConnectWithoutContext(
                "LoginComplete", MakeCallback(&FioInstalled::IscsiLoggedIn, this).Bind(k));
            t.hosts.Get(host)->AddApplication(ini);
            p.session = ini;
        }
    }

    /// A session reached the full feature phase; with its device's last one the device's jobs
    /// start (at Start).
    void
    IscsiLoggedIn(uint32_t path)
    {
        Device& d = m_devices[m_paths[path].device];
        if (++d.loggedIn < d.paths.size())
        {
            return;
        }
        for (uint32_t j : d.jobs)
        {
            if (Simulator::Now() >= m_start)
            {
                Fill(j);
            }
            else
            {
                Simulator::Schedule(m_start - Simulator::Now(), &FioInstalled::Fill, this, j);
            }
        }
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
            m_end = Simulator::Now();
            if (m_endsRun)
            {
                lfsim::StopRunNow();
            }
        }
    }

    /// The I/O's next request goes down the initiator's stack, then to the host queues.
    void
    NextRequest(uint64_t id)
    {
        Io& io = m_io[id];
        const uint32_t max = m_w->maxRequestSize;
        io.bytes = max ? std::min(max, io.remaining) : io.remaining;
        io.remaining -= io.bytes;
        Simulator::Schedule(Half(io.bytes), &FioInstalled::Queue, this, id);
    }

    /// The request asks its multipath device for a path with a free slot.
    void
    Queue(uint64_t id)
    {
        Io& io = m_io.at(id);
        io.queued = Simulator::Now();
        const Job& j = m_jobs[io.job];
        if (m_devices[j.device].dead)
        {
            Fail(id);
            return;
        }
        m_devices[j.device].mp->Submit(id, j.queue, m_requests++, m_dispatch);
    }

    /// The request leaves the host by path `local` of its device, into the transport.
    void
    Dispatch(uint64_t id, uint32_t local)
    {
        Io& io = m_io.at(id);
        const Job& j = m_jobs[io.job];
        io.path = m_devices[j.device].paths[local];
        io.wait += Simulator::Now() - io.queued;
        Path& p = m_paths[io.path];
        ++p.requests;
        p.bytes += io.bytes;
        p.peak = std::max(p.peak, m_devices[j.device].mp->InFlight(local));
        Out(id, io);
        if (m_w->stack == FioWorkload::NVMEOF_RDMA)
        {
            io.channel = p.channels[j.queue % p.channels.size()];
            Channel& c = m_channels[io.channel];
            if (m_capture)
            {
                NvmeCommand cmd;
                cmd.opcode = io.read ? NvmeOpcode::READ : NvmeOpcode::WRITE;
                cmd.cid = Cid(Token(id, io));
                cmd.bytes = io.bytes;
                cmd.inCapsule = Inline(io);
                cmd.address = Buffer(Token(id, io));
                m_capture->Submit(*c.host, cmd);
            }
            c.toTarget.Send(Token(id, io), NVME_COMMAND_CAPSULE + (Inline(io) ? io.bytes : 0));
            return;
        }
        auto done = [this, token = Token(id, io)](Time)
        {
            if (!Live(token))
            {
                ++m_staleCompletions; // an aborted attempt's late completion
                return;
            }
            TransportDone(token >> 8);
        };
        if (m_w->stack == FioWorkload::ISCSI)
        {
            io.task = p.session->Submit(!io.read, io.bytes, done);
            return;
        }
        io.task = m_fcp[p.from]->SubmitIo(io.read, io.bytes, done,
                                          m_fcNet->topology.hostPorts[p.to]->GetFcId());
    }

    /// What a transport carries for a request: its I/O and attempt (mod 256), so that an
    /// answer to an aborted or cancelled attempt is known as stale.
    static uint64_t
    Token(uint64_t id, const Io& io)
    {
        return id << 8 | (io.attempt & 0xff);
    }

    /// Captures only: the command identifier of a token's command (its I/O's number; a
    /// Connect or Keep Alive has 0, the only command on its queue when it goes).
    static uint16_t
    Cid(uint64_t token)
    {
        return token == FABRICS_CONNECT || token == KEEP_ALIVE ? 0 : uint16_t(token >> 8);
    }

    /// Captures only: the host buffer of a token's I/O (16 MiB apart), which its command's
    /// keyed SGL descriptor names and the target's RDMA READ or WRITE addresses.
    static uint64_t
    Buffer(uint64_t token)
    {
        return 0x7F0000000000ULL + ((token >> 8) << 24);
    }

    /// The I/O of a token if that attempt is still the one in the transport.
    Io*
    Live(uint64_t token)
    {
        auto it = m_io.find(token >> 8);
        return it != m_io.end() && it->second.out && (it->second.attempt & 0xff) == (token & 0xff)
                   ? &it->second
                   : nullptr;
    }

    /// Into the transport: its command timer runs (blk-mq's request timeout). Every request
    /// has the same timeout, so the list is in deadline order and one event serves it.
    void
    Out(uint64_t id, Io& io)
    {
        io.out = true;
        io.deadline = Simulator::Now() + m_w->ioTimeout;
        io.outAt = m_out.insert(m_out.end(), id);
        if (!m_timeouts.IsRunning())
        {
            m_timeouts = Simulator::Schedule(m_w->ioTimeout, &FioInstalled::CheckTimeouts, this);
        }
    }

    /// Out of the transport (completed, aborted or cancelled): its timer stops.
    void
    In(Io& io)
    {
        if (io.out)
        {
            m_out.erase(io.outAt);
            io.out = false;
        }
    }

    void
    CheckTimeouts()
    {
        while (!m_out.empty())
        {
            const uint64_t id = m_out.front();
            const Time due = m_io.at(id).deadline;
            if (due > Simulator::Now())
            {
                m_timeouts = Simulator::Schedule(due - Simulator::Now(),
                                                 &FioInstalled::CheckTimeouts, this);
                return;
            }
            TimedOut(id);
        }
    }

    /// The request's completion reached the host: its slots free (waiting requests of the
    /// initiator go), and it goes up the stack.
    void
    TransportDone(uint64_t id)
    {
        Io& io = m_io.at(id);
        In(io);
        const Path& p = m_paths[io.path];
        Device& d = m_devices[p.device];
        d.mp->Release(p.local, m_jobs[io.job].queue);
        // A slot of a queue shared by the host's devices (can_queue) may let any of them go.
        Multipath::Drain(m_hostDevices[p.device / m_targets.size()], m_dispatch);
        Simulator::Schedule(Half(io.bytes), &FioInstalled::Complete, this, id);
    }

    /// The command timer fired. nvmeof_rdma: the controller is reset (nvme_rdma_timeout starts
    /// error recovery; Linux sends no NVMe Abort over fabrics). SCSI: the mid-layer aborts the
    /// command (scsi_abort_command -> eh_abort_handler): an ABTS for its exchange (fcp) or an
    /// ABORT TASK function (iscsi) on the wire; when that is answered (or its own timeout
    /// passes) the command's slots free and it is retried, or fails.
    void
    TimedOut(uint64_t id)
    {
        ++m_timedOut;
        Io& io = m_io.at(id);
        if (m_w->stack == FioWorkload::NVMEOF_RDMA)
        {
            ResetController(io.path); // cancels it with the controller's other commands
            In(io);
            return;
        }
        In(io);
        ++m_aborted;
        ++io.attempt; // whatever the old attempt still delivers is stale
        auto aborted = [this, id](bool) { Aborted(id); };
        const Path& p = m_paths[io.path];
        if (m_w->stack == FioWorkload::ISCSI)
        {
            p.session->Abort(io.task, aborted);
            return;
        }
        m_fcp[p.from]->Abort(uint16_t(io.task), aborted);
    }

    /// The abort of a timed-out SCSI command ended (accepted, rejected or timed out: the
    /// escalation to LUN, target and host reset is not modelled). dm-mpath fails the path and
    /// the request is retried up to IoRetries times down the path the selector picks, or
    /// fails with EIO.
    void
    Aborted(uint64_t id)
    {
        Io& io = m_io.at(id);
        const Path& p = m_paths[io.path];
        Multipath& mp = *m_devices[p.device].mp;
        mp.Release(p.local, m_jobs[io.job].queue);
        if (mp.Paths() > 1 && !mp.Failed(p.local))
        {
            // multipathd's checker reinstates it at its next look (a path still broken fails
            // again on its next timeout).
            mp.SetFailed(p.local, true);
            ++m_pathFailures;
            Simulator::Schedule(m_w->pathCheckInterval, &FioInstalled::Reinstate, this, io.path);
        }
        Multipath::Drain(m_hostDevices[p.device / m_targets.size()], m_dispatch);
        if (io.retries < m_w->ioRetries)
        {
            ++io.retries;
            ++m_retried;
            Queue(id);
            return;
        }
        Fail(id);
    }

    /// The I/O fails with EIO; unless its job's continue_on_error covers it (fio's default,
    /// none, does not) the job then issues no more I/O.
    void
    Fail(uint64_t id)
    {
        auto it = m_io.find(id);
        ++m_failed;
        const uint32_t job = it->second.job;
        const bool read = it->second.read;
        m_errors.Append({double(job), double(Simulator::Now().GetNanoSeconds()), double(EIO)});
        m_io.erase(it);
        Job& j = m_jobs[job];
        --j.inFlight;
        j.stopped = j.stopped || !j.spec->ContinuesAfterError(read);
        Fill(job);
    }

    void
    Reinstate(uint32_t path)
    {
        const Path& p = m_paths[path];
        m_devices[p.device].mp->SetFailed(p.local, false);
        Multipath::Drain(m_hostDevices[p.device / m_targets.size()], m_dispatch);
    }

    /// nvmeof_rdma error recovery (nvme_rdma_error_recovery): a queue pair of the controller
    /// in error, or a command or keep-alive timed out. Its queues are torn down, the path
    /// fails, its commands are cancelled (NVME_SC_HOST_ABORTED_CMD, a path error) and failed
    /// over: back to the multipath head, which sends them down a live path or holds them until
    /// one is. A reconnect follows after NvmeofReconnectDelay.
    void
    ResetController(uint32_t path)
    {
        Path& p = m_paths[path];
        if (p.state != Path::LIVE)
        {
            return;
        }
        p.state = Path::CONNECTING;
        p.lostAt = Simulator::Now();
        p.reconnects = 0;
        ++p.resets;
        if (m_ctrlResets++ == 0)
        {
            m_firstReset = Simulator::Now();
        }
        p.keepAliveTimer.Cancel();
        TearDown(p);
        Multipath& mp = *m_devices[p.device].mp;
        mp.SetFailed(p.local, true);
        ++m_pathFailures;
        std::vector<uint64_t> cancelled;
        for (auto& [id, io] : m_io)
        {
            if (io.out && io.path == path)
            {
                cancelled.push_back(id);
                In(io);
                mp.Release(p.local, m_jobs[io.job].queue);
                ++io.attempt;
            }
        }
        m_aborted += cancelled.size();
        m_retried += cancelled.size();
        for (uint64_t id : cancelled)
        {
            Queue(id);
        }
        Multipath::Drain(m_hostDevices[p.device / m_targets.size()], m_dispatch);
        Simulator::Schedule(m_w->nvmeofReconnectDelay, &FioInstalled::Reconnect, this, path);
    }

    /// The controller's queues (and admin queue) disconnected at both ends.
    void
    TearDown(Path& p)
    {
        std::vector<uint32_t> all = p.channels;
        if (p.admin != NONE)
        {
            all.push_back(p.admin);
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
            c.path = &p - m_paths.data();
        }
    }

    /// A reconnect try (nvme_rdma_reconnect_ctrl_work): new queue pairs, a Fabrics Connect
    /// command on each; the controller is live again when every one is answered.
    void
    Reconnect(uint32_t path)
    {
        Path& p = m_paths[path];
        ++p.reconnects;
        ++m_ctrlReconnectTries;
        p.connecting = p.channels.size();
        for (uint32_t ch : p.channels)
        {
            Open(ch);
            if (m_capture)
            {
                NvmeCommand cmd;
                cmd.opcode = NvmeOpcode::FABRICS;
                m_capture->Submit(*m_channels[ch].host, cmd);
            }
            m_channels[ch].toTarget.Send(FABRICS_CONNECT, NVME_COMMAND_CAPSULE);
        }
    }

    /// A reconnect try failed (a new queue pair in error): another after the delay, or, after
    /// ctrl_loss_tmo's worth of tries (max_reconnects = DIV_ROUND_UP(ctrl_loss_tmo,
    /// reconnect_delay)), the controller is deleted.
    void
    ReconnectFailed(uint32_t path)
    {
        Path& p = m_paths[path];
        TearDown(p);
        p.connecting = 0;
        const int64_t delay = m_w->nvmeofReconnectDelay.GetTimeStep();
        const int64_t tries = (m_w->nvmeofCtrlLoss.GetTimeStep() + delay - 1) / delay;
        if (p.reconnects < tries)
        {
            Simulator::Schedule(m_w->nvmeofReconnectDelay, &FioInstalled::Reconnect, this, path);
            return;
        }
        p.state = Path::DELETED;
        ++m_ctrlDeleted;
        Device& d = m_devices[p.device];
        for (uint32_t k : d.paths)
        {
            if (m_paths[k].state != Path::DELETED)
            {
                return;
            }
        }
        // No controller left: what waits for a path fails (nvme multipath: no available path).
        d.dead = true;
        for (uint64_t id : d.mp->TakeWaiting())
        {
            Fail(id);
        }
    }

    /// The channel's queue pair at both ends (rdma_connect), with its callbacks.
    void
    Open(uint32_t ch)
    {
        Channel& c = m_channels[ch];
        const Path& p = m_paths[c.path];
        RoceTopology& t = m_roce->topology;
        std::tie(c.host, c.target) = t.nics[p.from]->Connect(t.nics[p.to]);
        SetPriority(c.host, c.target);
        if (m_capture)
        {
            // NVMe queue IDs: the admin queue is 0, the I/O queues 1, 2, ... of their
            // controller (the path, numbered from 1).
            const auto q = std::find(p.channels.begin(), p.channels.end(), ch);
            const bool admin = q == p.channels.end();
            m_capture->Connect(*c.host, *c.target, admin ? 0 : uint16_t(q - p.channels.begin() + 1),
                               uint16_t(c.path + 1),
                               admin ? NVME_ADMIN_ENTRIES : uint16_t(m_w->nvmeofQueueSize));
        }
        c.toTarget.qp = c.host;
        c.toHost.qp = c.target;
        c.target->SetReceiveCallback(MakeCallback(&FioInstalled::TargetCommand, this).Bind(ch));
        c.target->SetCompletionCallback(
            MakeCallback(&FioInstalled::TargetTransferDone, this).Bind(ch));
        c.host->SetReceiveCallback(MakeCallback(&FioInstalled::HostCompletion, this).Bind(ch));
        c.host->SetErrorCallback(MakeCallback(&FioInstalled::HostQpError, this).Bind(ch));
    }

    /// A host queue pair's retries ran out (IBV_WC_RETRY_EXC_ERR: nvme_rdma_wr_error). A
    /// target's are not watched: nvmet-rdma drops that queue, and the host learns of it from
    /// its own queue pair, a command timeout or the keep-alive.
    void
    HostQpError(uint32_t ch, Ptr<RdmaQueuePair> qp)
    {
        const Channel& c = m_channels[ch];
        if (c.host != qp)
        {
            return;
        }
        const Path& p = m_paths[c.path];
        if (p.state == Path::LIVE)
        {
            ResetController(c.path);
        }
        else if (p.state == Path::CONNECTING && p.connecting > 0)
        {
            ReconnectFailed(c.path);
        }
    }

    /// Every KATO/2 a Keep Alive command on the admin queue, one at a time; unanswered
    /// after KATO, the controller is reset (nvme_keep_alive_work; its request timeout is KATO).
    void
    KeepAlive(uint32_t path)
    {
        Path& p = m_paths[path];
        if (p.state == Path::DELETED)
        {
            return;
        }
        Simulator::Schedule(m_w->nvmeofKeepAlive / 2, &FioInstalled::KeepAlive, this, path);
        if (p.state != Path::LIVE || p.keepAliveTimer.IsRunning())
        {
            return;
        }
        if (p.admin == NONE)
        {
            p.admin = m_channels.size();
            m_channels.emplace_back();
            m_channels.back().path = path;
        }
        if (!m_channels[p.admin].host)
        {
            Open(p.admin);
        }
        if (m_capture)
        {
            NvmeCommand cmd;
            cmd.opcode = NvmeOpcode::KEEP_ALIVE;
            m_capture->Submit(*m_channels[p.admin].host, cmd);
        }
        m_channels[p.admin].toTarget.Send(KEEP_ALIVE, NVME_COMMAND_CAPSULE);
        p.keepAliveTimer = Simulator::Schedule(m_w->nvmeofKeepAlive,
                                               &FioInstalled::KeepAliveExpired, this, path);
    }

    void
    KeepAliveExpired(uint32_t path)
    {
        ++m_keepAliveTimeouts;
        ResetController(path);
    }

    /// A Fabrics Connect answered: with the controller's last one it is live again.
    void
    Connected(uint32_t path)
    {
        Path& p = m_paths[path];
        if (p.state != Path::CONNECTING || p.connecting == 0 || --p.connecting > 0)
        {
            return;
        }
        p.state = Path::LIVE;
        ++m_ctrlReconnected;
        Reinstate(path);
    }

    /// A write small enough to travel in the command capsule (in-capsule data).
    bool
    Inline(const Io& io) const
    {
        return !io.read && io.bytes <= m_w->nvmeofInlineData;
    }

    uint32_t
    TargetOf(const Io& io) const
    {
        return m_devices[m_paths[io.path].device].target;
    }

    void
    TargetCommand(uint32_t ch, Ptr<RdmaQueuePair>, uint32_t)
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
            c.toHost.Send(token, NVME_COMPLETION);
            return;
        }
        Simulator::Schedule(m_w->targetDelay, &FioInstalled::TargetExecute, this, token);
    }

    // The target's steps carry the token: a step of a cancelled attempt (its controller
    // reset, the I/O failed over) does nothing, as nvmet frees the commands of a queue it
    // tears down.
    void
    TargetExecute(uint64_t token)
    {
        Io* io = Live(token);
        if (!io)
        {
            return;
        }
        if (io->read)
        {
            DeviceSubmit(TargetOf(*io), true, io->bytes, [this, token] { TargetReadDone(token); });
        }
        else if (Inline(*io))
        {
            WriteDataReceived(token); // it came with the command
        }
        else
        {
            // The target pulls the data from the host's buffer.
            Channel& c = m_channels[io->channel];
            if (m_capture)
            {
                m_capture->Transfer(*c.target, Buffer(token));
            }
            c.reads[c.target->Post(RdmaOp::READ, io->bytes)] = token;
        }
    }

    void
    TargetReadDone(uint64_t token)
    {
        // Target software handles the device's completion, then posts the data (RDMA WRITE
        // into the host's buffer) and the completion back to back: RC keeps them in order.
        Simulator::Schedule(m_w->targetDelay, &FioInstalled::SendReadData, this, token);
    }

    void
    SendReadData(uint64_t token)
    {
        if (Io* io = Live(token))
        {
            if (m_capture)
            {
                m_capture->Transfer(*m_channels[io->channel].target, Buffer(token));
            }
            m_channels[io->channel].target->Post(RdmaOp::WRITE, io->bytes);
            SendCompletion(token);
        }
    }

    void
    TargetTransferDone(uint32_t ch, Ptr<RdmaQueuePair>, uint64_t wr, uint32_t, Time)
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

    /// The write's data is in the target's memory: to its device and to the replicas.
    void
    WriteDataReceived(uint64_t token)
    {
        Io* io = Live(token);
        if (!io)
        {
            return;
        }
        const Target& target = m_targets[TargetOf(*io)];
        io->replicasPending = 1 + target.replicaLinks.size();
        DeviceSubmit(TargetOf(*io), false, io->bytes, [this, token] { WriteCopyDone(token); });
        for (uint32_t k : target.replicaLinks)
        {
            m_replicaLinks[k].toReplica.Send(token, NVME_COMMAND_CAPSULE + io->bytes);
        }
    }

    void
    ReplicaCommand(uint32_t k, Ptr<RdmaQueuePair>, uint32_t bytes)
    {
        const uint64_t token = m_replicaLinks[k].toReplica.Received();
        const uint32_t data = bytes - NVME_COMMAND_CAPSULE;
        // Without ReplicaDelay no extra events: such runs stay identical to before it existed.
        if (m_w->replicaDelay.IsZero())
        {
            ReplicaExecute(k, token, data);
            return;
        }
        Simulator::Schedule(m_w->replicaDelay, &FioInstalled::ReplicaExecute, this, k, token, data);
    }

    void
    ReplicaExecute(uint32_t k, uint64_t token, uint32_t bytes)
    {
        m_replicaLinks[k].device->Submit(false, bytes,
                                         [this, k, token] { ReplicaWritten(k, token); });
    }

    void
    ReplicaWritten(uint32_t k, uint64_t token)
    {
        if (m_w->replicaDelay.IsZero())
        {
            ReplicaAnswer(k, token);
            return;
        }
        Simulator::Schedule(m_w->replicaDelay, &FioInstalled::ReplicaAnswer, this, k, token);
    }

    void
    ReplicaAnswer(uint32_t k, uint64_t token)
    {
        m_replicaLinks[k].toTarget.Send(token, NVME_COMPLETION);
    }

    void
    ReplicaAck(uint32_t k, Ptr<RdmaQueuePair>, uint32_t)
    {
        WriteCopyDone(m_replicaLinks[k].toTarget.Received());
    }

    void
    WriteCopyDone(uint64_t token)
    {
        Io* io = Live(token);
        if (io && --io->replicasPending == 0)
        {
            Simulator::Schedule(m_w->targetDelay, &FioInstalled::SendCompletion, this, token);
        }
    }

    void
    SendCompletion(uint64_t token)
    {
        if (Io* io = Live(token))
        {
            Channel& c = m_channels[io->channel];
            if (m_capture)
            {
                m_capture->Complete(*c.target, Cid(token), c.toTarget.ids.size());
            }
            c.toHost.Send(token, NVME_COMPLETION);
        }
    }

    void
    HostCompletion(uint32_t ch, Ptr<RdmaQueuePair>, uint32_t)
    {
        const uint64_t token = m_channels[ch].toHost.Received();
        if (token == FABRICS_CONNECT)
        {
            Connected(m_channels[ch].path);
            return;
        }
        if (token == KEEP_ALIVE)
        {
            m_paths[m_channels[ch].path].keepAliveTimer.Cancel();
            return;
        }
        if (!Live(token))
        {
            ++m_staleCompletions;
            return;
        }
        TransportDone(token >> 8);
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
        m_ios.Append({double(io.job), io.read ? 1.0 : 0.0, double(io.total),
                      double(io.submit.GetNanoSeconds()), double(Simulator::Now().GetNanoSeconds()),
                      double(io.wait.GetNanoSeconds())});
        --m_jobs[io.job].inFlight;
        Fill(io.job);
    }

    /// Tables paths (requests each path carried), host_queues (capacity and peak use) and
    /// targets (requests each target's device served).
    void
    ReportPaths(RunContext& ctx, const std::string& prefix)
    {
        Table& paths
            = ctx.AddTable(prefix + "paths", {"id", "requests", "bytes", "peak_in_flight"});
        for (uint32_t k = 0; k < m_paths.size(); ++k)
        {
            const Path& p = m_paths[k];
            paths.Append({double(k), double(p.requests), double(p.bytes), double(p.peak)});
        }
        ctx.SetLabels(prefix + "paths", m_pathLabels);
        Table& queues = ctx.AddTable(prefix + "host_queues", {"id", "capacity", "peak"});
        for (uint32_t k = 0; k < m_queues.size(); ++k)
        {
            queues.Append({double(k), double(m_queues[k].capacity), double(m_queues[k].peak)});
        }
        ctx.SetLabels(prefix + "host_queues", m_queueLabels);
        Table& targets = ctx.AddTable(prefix + "targets", {"id", "requests"});
        std::vector<std::string> names;
        for (uint32_t k = 0; k < m_targets.size(); ++k)
        {
            targets.Append({double(k), double(m_targets[k].device->GetServed())});
            names.push_back(HostName(m_targets[k].host));
        }
        ctx.SetLabels(prefix + "targets", names);
    }

    const lfsim::Graph& m_graph;
    Ptr<FioWorkload> m_w;
    std::string m_key;
    RoceNetwork* m_roce = nullptr;
    FcNetwork* m_fcNet = nullptr;
    int32_t m_priority = -1;
    Ptr<FioJob> m_job; ///< global options (runtime, ramp_time)
    std::vector<FioJobSection> m_sections;
    std::vector<StorageLayer> m_layers;
    Time m_start; ///< the workload's Start: its jobs start, ramp_time and runtime count from it
    Time m_stop;  ///< jobs issue no I/O from then on
    Time m_from;  ///< I/Os completing before are not counted (ramp_time)
    Time m_end;   ///< the last job finished
    bool m_endsRun = false;
    std::vector<uint32_t> m_targetHosts;
    std::vector<uint32_t> m_replicaHosts;
    std::vector<uint32_t> m_initiators;
    std::vector<Target> m_targets;
    std::vector<ReplicaLink> m_replicaLinks;
    std::vector<HostQueue> m_queues;
    std::vector<std::string> m_queueLabels;
    std::vector<Path> m_paths;
    std::vector<std::string> m_pathLabels;
    std::vector<Device> m_devices;
    std::vector<std::vector<Multipath*>> m_hostDevices; ///< per initiator, its devices
    uint32_t m_ioQueues = 1;
    std::vector<Channel> m_channels;
    std::unique_ptr<NvmeofCapture> m_capture;    ///< nvmeof_rdma, when the run captures
    std::map<uint32_t, Ptr<FcpInitiator>> m_fcp; ///< by initiator address
    std::vector<Ptr<FcpTarget>> m_fcpTargets;
    Ptr<UniformRandomVariable> m_mix;
    std::vector<Job> m_jobs;
    std::vector<std::string> m_jobLabels;
    std::vector<std::string> m_jobOptions;
    std::map<uint64_t, Io> m_io;
    uint64_t m_nextIo = 0;
    uint64_t m_timedOut = 0;
    uint64_t m_retried = 0;
    uint64_t m_failed = 0;
    uint64_t m_staleCompletions = 0;
    uint64_t m_pathFailures = 0;
    uint64_t m_aborted = 0;
    uint64_t m_ctrlResets = 0;
    Time m_firstReset;
    uint64_t m_ctrlReconnectTries = 0;
    uint64_t m_ctrlReconnected = 0;
    uint64_t m_ctrlDeleted = 0;
    uint64_t m_keepAliveTimeouts = 0;
    std::list<uint64_t> m_out; ///< I/Os in the transport, in deadline order
    EventId m_timeouts;        ///< at the first deadline of m_out
    Table m_errors{std::vector<std::string>{"id", "time_ns", "errno"}}; ///< I/Os that failed
    uint64_t m_requests = 0; ///< requests that reached the host queues, in order
    Multipath::Dispatch m_dispatch = [this](uint64_t id, uint32_t local) { Dispatch(id, local); };
    Time m_deviceTime[2]; ///< [write, read]: the targets' devices' time, after ramp_time
    uint64_t m_deviceIos[2] = {0, 0};
    size_t m_jobsDone = 0;
    Table m_ios{
        std::vector<std::string>{"id", "read", "bytes", "submit_ns", "complete_ns", "wait_ns"}};
};

const bool g_registered = lfsim::RegisterWorkload(
    {"Fio",
     "ns3::FioWorkload",
     "fio-like jobs (FioJob) on the hosts of Hosts against a block target (BlockTarget) on each "
     "host of Destinations, over a storage stack (nvmeof_rdma or iscsi on roce, fcp on fc) and "
     "every path between them",
     {"roce", "fc"},
     [](RunContext& ctx, const lfsim::WorkloadInstance& w,
        lfsim::FabricNetwork& net) -> std::unique_ptr<lfsim::InstalledWorkload>
     { return std::make_unique<FioInstalled>(ctx, w, net); },
     {"ns3::FioJob", "ns3::BlockTarget"}});

// The classes of the roce fabric's IP hosts and iSCSI sessions, for the iscsi stack. FioJob and
// BlockTarget belong to the workload (its registration above).
const bool g_roceClasses = lfsim::ExtendFabric("roce", "ns3::RoceHostIp")
                           && lfsim::ExtendFabric("roce", "ns3::IscsiSession");

} // namespace

} // namespace ns3
