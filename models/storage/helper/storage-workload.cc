#include "storage-workload.h"

#include "lfsim-attributes.h"
#include "ns3/enum.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"
#include "nvmeof-rdma-stack.h"

#include <algorithm>
#include <cerrno>
#include <numeric>
#include <set>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(StorageWorkload);

TypeId
StorageWorkload::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::StorageWorkload")
              .SetParent<Workload>()
              .SetGroupName("Storage")
              .AddAttribute("Stack",
                            "Storage stack, a registered stack by name (RegisterStorageStack: "
                            "nvmeof_rdma, fcp, iscsi, nvmeof_tcp, ...), made through an "
                            "ObjectFactory with its class's attributes; each runs on the fabrics "
                            "its registration names.",
                            TypeIdValue(NvmeofRdmaStack::GetTypeId()),
                            MakeTypeIdAccessor(&StorageWorkload::stack), MakeTypeIdChecker())
              .AddAttribute("TargetDelay",
                            "Target software time per command before the device (and again "
                            "before the completion is sent).",
                            TimeValue(MicroSeconds(2)),
                            MakeTimeAccessor(&StorageWorkload::targetDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("MaxRequestSize",
                            "An I/O larger than this many bytes is carried as consecutive "
                            "requests of at most this size, each through the whole initiator "
                            "stack and the transport and started when the previous one "
                            "completes: what the Linux FUSE module does with a direct I/O "
                            "(max_read, FUSE_DEFAULT_MAX_PAGES_PER_REQ = 32 pages = 131072). "
                            "fio still counts one I/O of bs. 0 = no split.",
                            UintegerValue(0),
                            MakeUintegerAccessor(&StorageWorkload::maxRequestSize),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("PathSelector",
                            "How a request chooses among the paths to its target, as Linux "
                            "dm-multipath's path selectors: round-robin (dm-round-robin, one "
                            "request per path in turn) or queue-length (dm-queue-length: the "
                            "path with the fewest requests in flight). multipath-tools' default, "
                            "service-time 0, chooses as queue-length when the I/Os are of one "
                            "size.",
                            EnumValue(Multipath::QUEUE_LENGTH),
                            MakeEnumAccessor(&StorageWorkload::pathSelector),
                            MakeEnumChecker(Multipath::ROUND_ROBIN, "round-robin",
                                            Multipath::QUEUE_LENGTH, "queue-length"))
              .AddAttribute("IoTimeout",
                            "An I/O outstanding longer than this has timed out for the host "
                            "stack (Linux: the SCSI disk's timeout, /sys/block/sdX/device/"
                            "timeout, and nvme_core.io_timeout, both 30 s by default). What "
                            "follows is the stack's timeout handler: the SCSI stacks abort the "
                            "command, which is then retried (IoRetries) or fails; the NVMe-oF "
                            "stacks reset the controller, its commands cancelled and failed "
                            "over.",
                            TimeValue(Seconds(30)), MakeTimeAccessor(&StorageWorkload::ioTimeout),
                            MakeTimeChecker(MicroSeconds(1)))
              .AddAttribute("IoRetries",
                            "Times an aborted command (a stack that aborts on a timeout: fcp, "
                            "iscsi) is retried before the I/O fails (the SCSI disk's "
                            "SD_MAX_RETRIES, 5, drivers/scsi/sd.h).",
                            UintegerValue(5), MakeUintegerAccessor(&StorageWorkload::ioRetries),
                            MakeUintegerChecker<uint32_t>(0, 100))
              .AddAttribute("PathCheckInterval",
                            "With several paths: a path failed by an aborted command (fcp, "
                            "iscsi) is reinstated after this long (multipathd's path checker, "
                            "polling_interval, default 5 s).",
                            TimeValue(Seconds(5)),
                            MakeTimeAccessor(&StorageWorkload::pathCheckInterval),
                            MakeTimeChecker(MicroSeconds(1)));
    return tid;
}

void
StorageWorkload::CheckShared(const std::string& pattern, bool spread) const
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
               "1 for pattern " + pattern + " (its threads are closed loops)");
    }
    if (m_operation != int(lfsim::Operation::WRITE))
    {
        reject("Operation", m_operation == int(lfsim::Operation::READ) ? "Read" : "Send",
               "Write, the default, for pattern " + pattern
                   + " (its threads say what each I/O does)");
    }
    if (!spread && !m_startSpread.IsZero())
    {
        reject("StartSpread", lfsim::TimeText(m_startSpread),
               "0s for pattern " + pattern
                   + " (every thread starts at Start, as fio starts its "
                     "jobs)");
    }
    if (m_plane >= 0)
    {
        reject("Plane", std::to_string(m_plane),
               "-1 for pattern " + pattern
                   + " (its I/Os take every path, as PathSelector "
                     "chooses)");
    }
}

using lfsim::RunContext;
using lfsim::Table;

namespace
{

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

} // namespace

StorageInstalled::StorageInstalled(RunContext& ctx, const lfsim::WorkloadInstance& w,
                                   lfsim::FabricNetwork& net, const std::string& pattern,
                                   bool spread)
    : m_graph(ctx.graph)
    , m_net(net)
    , m_wi(&w)
{
    m_sw = DynamicCast<StorageWorkload>(w.object);
    m_key = m_sw->key;
    m_layout.ctx = &ctx;
    m_layout.network = &net;
    m_layout.key = m_key;
    MakeStack(ctx.config.fabric);
    m_sw->CheckShared(pattern, spread);
    m_stack->UsePriority(m_sw->GetPriority());
    m_layers = m_stack->Layers();
    m_start = m_sw->GetStart();
    if (m_start >= ctx.config.stopTime)
    {
        throw std::invalid_argument(m_key + ".Start: got '" + lfsim::TimeText(m_start)
                                    + "'; accepted: a time before stop_time");
    }
}

void
StorageInstalled::Build(Time start, Time stop, Time from,
                        const std::vector<StorageThreadSpec>& specs, const std::string& cpusKey)
{
    RunContext& ctx = *m_layout.ctx;
    m_start = start;
    m_stop = stop;
    m_from = from;
    m_endsRun = ctx.workloads.size() == 1;
    m_layout.start = m_start;
    m_layout.stop = m_stop;
    SelectHosts(ctx, *m_wi);

    int64_t stream = std::max(m_net.stream, STORAGE_STREAMS + m_net.deviceStreams);
    for (uint32_t host : m_layout.targets)
    {
        Ptr<BlockTarget> device = CreateObject<BlockTarget>();
        stream += device->AssignStreams(stream);
        m_devicesOf.push_back(device);
    }
    m_rng = CreateObject<UniformRandomVariable>();
    m_rng->SetStream(stream++);
    m_stack->Prepare(stream);
    MakePaths(specs);
    m_stack->Build(stream);
    m_net.stream = stream;
    for (uint32_t i : m_initiators)
    {
        // The host's own settings (a graph node's set: HostCpu.Cores ...) over the class's.
        std::vector<std::pair<std::string, std::string>> own;
        for (const auto& [tid, name, value] : m_graph.Nodes()[m_graph.Hosts()[i]].attributes)
        {
            if (tid == HostCpu::GetTypeId().GetName())
            {
                own.emplace_back(name, value);
            }
        }
        Ptr<HostCpu> cpu = HostCpu::Of(m_net.HostNode(i), own, "HostCpu (" + HostName(i) + ")");
        const std::string& owner = cpu->Claim(m_key);
        if (owner != m_key && cpu->IsEnabled())
        {
            // One report per CPU: the utilisation of a core two workloads share is neither's.
            throw std::invalid_argument(m_key + ".Hosts: " + HostName(i) + " is an initiator of "
                                        + owner
                                        + " too; accepted: with HostCpu enabled, each host an "
                                          "initiator of one storage workload");
        }
        cpu->SetWindowStart(m_from);
        m_cpus.push_back(cpu);
    }
    for (uint32_t k = 0; k < m_threads.size(); ++k)
    {
        StorageThread& j = m_threads[k];
        const HostCpu& cpu = *m_cpus[j.host];
        std::vector<uint32_t> allowed;
        try
        {
            allowed = cpu.CoreList(specs[j.spec].cpusAllowed);
        }
        catch (const std::invalid_argument& e)
        {
            throw std::invalid_argument(cpusKey + " (" + m_threadLabels[k] + "): " + e.what());
        }
        j.core = allowed.empty() ? cpu.ThreadCore(j.thread) : allowed[j.thread % allowed.size()];
    }
    m_cpuOn = m_cpus.front()->IsEnabled();
    m_cost = m_stack->Cpu();
    if (m_stack->ReadyAtStart())
    {
        for (uint32_t j = 0; j < m_threads.size(); ++j)
        {
            Simulator::Schedule(m_start, &StorageInstalled::Begin, this, j);
        }
    }
}

uint64_t
StorageInstalled::Issue(uint32_t thread, bool read, uint32_t bytes, uint64_t tag)
{
    ++m_threads[thread].inFlight;
    const uint64_t id = m_nextIo++;
    StorageIo& io = m_io[id];
    io = StorageIo{};
    io.thread = thread;
    io.tag = tag;
    io.read = read;
    io.queue = m_threads[thread].queue;
    io.submit = Simulator::Now();
    io.total = bytes;
    io.remaining = bytes;
    NextRequest(id);
    return id;
}

void
StorageInstalled::RunCpu(uint32_t thread, const CpuWork& work, std::function<void()> done)
{
    const StorageThread& j = m_threads[thread];
    m_cpus[j.host]->Run(j.core, work, std::move(done));
}

void
StorageInstalled::Finished(uint32_t thread)
{
    if (++m_threadsDone == m_threads.size())
    {
        m_end = Simulator::Now();
        if (m_endsRun)
        {
            lfsim::StopRunNow();
        }
    }
}

std::string
StorageInstalled::HostName(uint32_t h) const
{
    return m_graph.Nodes()[m_graph.Hosts()[h]].name;
}

void
StorageInstalled::Finish(RunContext& ctx, const std::string& prefix)
{
    ctx.AddTable(prefix + "ios", std::move(m_ios));
    if (m_failed)
    {
        ctx.AddTable(prefix + "io_errors", std::move(m_errors));
        ctx.SetLabels(prefix + "io_errors", m_threadLabels);
    }
    const Table& ios = ctx.tables.at(prefix + "ios");
    ctx.SetLabels(prefix + "ios", m_threadLabels);
    const double from = m_from.GetSeconds();
    const Time end = m_threadsDone == m_threads.size() ? m_end : Simulator::Now();
    const double window = end.GetSeconds() - from;
    ctx.SetMetric(prefix + "stack_depth", m_layers.size());
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
            continue; // ramp_time or warm-up: not counted, as fio and sysbench do
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
        ctx.SetMetric(n + "_device_us",
                      m_deviceIos[r] ? m_deviceTime[r].GetSeconds() * 1e6 / double(m_deviceIos[r])
                                     : 0.0);
        const double count = lat[r].size();
        ctx.SetMetric(n + "_ios", lat[r].size());
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
    ctx.SetMetric(prefix + "ios_submitted", m_nextIo);
    ctx.SetMetric(prefix + "ios_completed", ios.Rows());
    ctx.SetMetric(prefix + "ios_in_flight", m_io.size());
    // Nothing silent: I/Os still out are not in the latency statistics; say how old the
    // oldest is and how many have passed the stack's I/O timeout.
    Time oldest(0);
    uint32_t hung = 0;
    for (const auto& [id, io] : m_io)
    {
        const Time age = Simulator::Now() - io.submit;
        oldest = std::max(oldest, age);
        hung += age > m_sw->ioTimeout ? 1 : 0;
    }
    ctx.SetMetric(prefix + "oldest_in_flight_us", oldest.GetSeconds() * 1e6);
    ctx.SetMetric(prefix + "ios_hung_at_end", hung);
    ctx.SetMetric(prefix + "ios_timed_out", m_timedOut);
    ctx.SetMetric(prefix + "ios_aborted", m_aborted);
    ctx.SetMetric(prefix + "ios_retried", m_retried);
    ctx.SetMetric(prefix + "ios_failed", m_failed);
    ctx.SetMetric(prefix + "path_failures", m_pathFailures);
    ctx.SetMetric(prefix + "stale_completions", m_staleCompletions);
    m_stack->Finish(ctx, prefix);
    // What the latency statistics leave out: I/Os completed during ramp_time, failed, or
    // still in flight.
    ctx.SetMetric(prefix + "lat_excluded_ios",
                  int64_t(m_nextIo) - int64_t(lat[0].size() + lat[1].size()));
    double slowest = 0;
    for (size_t k = 0; k < ios.Rows(); ++k)
    {
        slowest = std::max(slowest, (done[k] - sub[k]) / 1e3);
    }
    ctx.SetMetric(prefix + "slowest_completed_us", slowest);
    ReportPaths(ctx, prefix);
    if (m_cpuOn)
    {
        ReportCpu(ctx, prefix, end, counted);
    }
    Report(ctx, prefix);
}

const StorageCommand*
StorageInstalled::Live(uint64_t token) const
{
    auto it = m_io.find(token >> 8);
    return it != m_io.end() && it->second.out && (it->second.attempt & 0xff) == (token & 0xff)
               ? &it->second
               : nullptr;
}

void
StorageInstalled::Completed(uint64_t token)
{
    if (!Live(token))
    {
        ++m_staleCompletions; // an aborted or cancelled attempt's late completion
        return;
    }
    TransportDone(token >> 8);
}

uint64_t
StorageInstalled::Aborting(uint64_t token)
{
    const uint64_t id = token >> 8;
    StorageIo& io = m_io.at(id);
    In(io);
    ++m_aborted;
    ++io.attempt; // whatever the old attempt still delivers is stale
    return id;
}

// The abort of a timed-out command ended. dm-mpath fails the path and the request is
// retried up to IoRetries times down the path the selector picks, or fails with EIO.
void
StorageInstalled::Aborted(uint64_t id)
{
    StorageIo& io = m_io.at(id);
    const PathState& p = m_paths[io.path];
    Multipath& mp = *m_devices[Layout(io.path).device].mp;
    mp.Release(p.local, io.queue);
    if (mp.Paths() > 1 && !mp.Failed(p.local))
    {
        // multipathd's checker reinstates it at its next look (a path still broken fails
        // again on its next timeout).
        mp.SetFailed(p.local, true);
        ++m_pathFailures;
        Simulator::Schedule(m_sw->pathCheckInterval, &StorageInstalled::Reinstate, this, io.path);
    }
    Drain(io.path);
    if (io.retries < m_sw->ioRetries)
    {
        ++io.retries;
        ++m_retried;
        Queue(id);
        return;
    }
    Fail(id);
}

// A path is ready; with its device's last one the device's threads begin (at Start).
void
StorageInstalled::PathReady(uint32_t path)
{
    PathState& p = m_paths[path];
    if (p.ready)
    {
        return;
    }
    p.ready = true;
    Device& d = m_devices[Layout(path).device];
    if (++d.ready < d.paths.size())
    {
        return;
    }
    for (uint32_t j : d.threads)
    {
        if (Simulator::Now() >= m_start)
        {
            Begin(j);
        }
        else
        {
            Simulator::Schedule(m_start - Simulator::Now(), &StorageInstalled::Begin, this, j);
        }
    }
}

// The path fails, its requests are cancelled (a path error) and failed over: back to the
// multipath head, which sends them down a live path or holds them until one is.
void
StorageInstalled::PathDown(uint32_t path)
{
    const PathState& p = m_paths[path];
    Multipath& mp = *m_devices[Layout(path).device].mp;
    mp.SetFailed(p.local, true);
    ++m_pathFailures;
    std::vector<uint64_t> cancelled;
    for (auto& [id, io] : m_io)
    {
        if (io.out && io.path == path)
        {
            cancelled.push_back(id);
            In(io);
            mp.Release(p.local, io.queue);
            ++io.attempt;
        }
    }
    m_aborted += cancelled.size();
    m_retried += cancelled.size();
    for (uint64_t id : cancelled)
    {
        Queue(id);
    }
    Drain(path);
}

void
StorageInstalled::PathUp(uint32_t path)
{
    Reinstate(path);
}

void
StorageInstalled::PathGone(uint32_t path)
{
    m_paths[path].gone = true;
    Device& d = m_devices[Layout(path).device];
    for (uint32_t k : d.paths)
    {
        if (!m_paths[k].gone)
        {
            return;
        }
    }
    // No path left: what waits for one fails (nvme multipath: no available path).
    d.dead = true;
    for (uint64_t id : d.mp->TakeWaiting())
    {
        Fail(id);
    }
}

// The request failed with a path error: dm-multipath fails the path and sends it down another
// (multipath_end_io: blk_path_error), or holds it until a path is up; a lone path's I/O fails.
void
StorageInstalled::PathError(uint64_t token)
{
    if (!Live(token))
    {
        return;
    }
    const uint64_t id = token >> 8;
    StorageIo& io = m_io.at(id);
    In(io);
    ++io.attempt;
    const PathState& p = m_paths[io.path];
    Multipath& mp = *m_devices[Layout(io.path).device].mp;
    mp.Release(p.local, io.queue);
    if (mp.Paths() == 1)
    {
        // No dm-multipath device: the SCSI disk's request fails (BLK_STS_TRANSPORT).
        Drain(io.path);
        Fail(id, ENOLINK);
        return;
    }
    if (!mp.Failed(p.local))
    {
        // Until the stack says the path is up again (PathUp) or gone (PathGone).
        mp.SetFailed(p.local, true);
        ++m_pathFailures;
    }
    ++m_retried;
    Queue(id);
    Drain(io.path);
}

void
StorageInstalled::Requeue(uint64_t token)
{
    const uint64_t id = token >> 8;
    StorageIo& io = m_io.at(id);
    In(io);
    ++io.attempt;
    Out(id, io);
    io.stackTag = m_stack->Submit(io, Token(id, io));
}

void
StorageInstalled::ResetTimer(uint64_t token)
{
    const uint64_t id = token >> 8;
    StorageIo& io = m_io.at(id);
    In(io);
    Out(id, io);
    --m_timedOut; // TimedOut counted it; the transport only asked for more time
}

void
StorageInstalled::Backend(uint32_t target, bool read, uint32_t bytes, std::function<void()> done)
{
    Simulator::Schedule(m_sw->targetDelay,
                        [this, target, read, bytes, done = std::move(done)]
                        {
                            TargetDevice(target, read, bytes,
                                         [this, done]
                                         { Simulator::Schedule(m_sw->targetDelay, done); });
                        });
}

// A target's own device, timed (queue + service) for the latency breakdown.
void
StorageInstalled::TargetDevice(uint32_t target, bool read, uint32_t bytes,
                               std::function<void()> done)
{
    const Time start = Simulator::Now();
    m_devicesOf[target]->Submit(read, bytes,
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

Time
StorageInstalled::TargetDelay() const
{
    return m_sw->targetDelay;
}

// The stack StorageWorkload.Stack names, if it runs on this fabric.
void
StorageInstalled::MakeStack(const std::string& fabric)
{
    const TypeId tid = m_sw->stack;
    std::string name = tid.GetName();
    std::string accepted;
    std::vector<std::string> fabrics;
    std::map<std::string, std::vector<std::string>> byFabric;
    for (const auto& c : lfsim::Choices("ns3::StorageWorkload", "Stack"))
    {
        for (const auto& f : c.fabrics)
        {
            byFabric[f].push_back(c.name);
        }
        if (c.value == tid.GetName())
        {
            name = c.name;
            fabrics = c.fabrics;
        }
    }
    if (std::find(fabrics.begin(), fabrics.end(), fabric) == fabrics.end())
    {
        for (const auto& [f, names] : byFabric)
        {
            std::string list;
            for (size_t k = 0; k < names.size(); ++k)
            {
                list += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + names[k];
            }
            accepted += (accepted.empty() ? "" : ", ") + list + " with fabric " + f;
        }
        throw std::invalid_argument(m_key + ".Stack: got " + name + " with fabric " + fabric
                                    + "; accepted: " + accepted);
    }
    ObjectFactory factory;
    factory.SetTypeId(tid);
    m_stack = factory.Create<StorageStack>();
    m_stack->Attach(this, &m_layout);
}

std::string
StorageInstalled::AddressLabel(uint32_t a) const
{
    return m_graph.PortLabel(m_graph.HostPorts()[a]);
}

const StoragePath&
StorageInstalled::Layout(uint32_t path) const
{
    return m_layout.paths[path];
}

// Targets, the stack's own hosts (replicas) and initiators (Hosts without the other two),
// each checked.
void
StorageInstalled::SelectHosts(const RunContext& ctx, const lfsim::WorkloadInstance& w)
{
    m_layout.targets = w.object->Sinks(m_graph);
    std::set<uint32_t> taken(m_layout.targets.begin(), m_layout.targets.end());
    for (uint32_t h : m_stack->ReservedHosts())
    {
        taken.insert(h);
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
        Ptr<StorageWorkload> o = DynamicCast<StorageWorkload>(other.object);
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
                    + "; accepted: targets and replica hosts of no other storage "
                      "workload (list every initiator in one workload)");
            }
        }
    }
}

// The multipath devices (initiator x target), their paths and host queues, the threads.
void
StorageInstalled::MakePaths(const std::vector<StorageThreadSpec>& specs)
{
    const std::vector<uint32_t> plane = AddressPlanes(m_graph);
    const uint32_t queues = m_stack->SubmissionQueues(specs.size());
    const StorageStack::AddQueue add
        = [this](const std::string& label, uint32_t capacity) { return AddQueue(label, capacity); };
    const auto& targets = m_layout.targets;
    for (uint32_t ii = 0; ii < m_initiators.size(); ++ii)
    {
        const uint32_t i = m_initiators[ii];
        uint32_t threads = 0; // the host's threads so far
        for (uint32_t t = 0; t < targets.size(); ++t)
        {
            Device d;
            d.target = t;
            d.mp = std::make_unique<Multipath>(Multipath::Selector(m_sw->pathSelector), &m_queues,
                                               queues);
            for (uint32_t a : m_graph.AddressesOf(i))
            {
                for (uint32_t b : m_graph.AddressesOf(targets[t]))
                {
                    if (plane[a] != plane[b])
                    {
                        continue;
                    }
                    StoragePath p;
                    p.device = m_devices.size();
                    p.target = t;
                    p.from = a;
                    p.to = b;
                    const uint32_t k = m_layout.paths.size();
                    m_layout.paths.push_back(p);
                    const std::string label = AddressLabel(a) + ">" + AddressLabel(b);
                    std::vector<uint32_t> own;
                    std::vector<uint32_t> shared;
                    m_stack->AddPathQueues(k, label, queues, add, own, shared);
                    PathState s;
                    s.local = d.mp->AddPath(own, shared);
                    d.paths.push_back(k);
                    m_pathLabels.push_back(label);
                    m_paths.push_back(s);
                }
            }
            if (d.paths.empty())
            {
                throw std::invalid_argument(m_key + ": " + HostName(i) + " and "
                                            + HostName(targets[t])
                                            + " have no path (no port of one reaches a port "
                                              "of the other); accepted: initiators and "
                                              "targets on a common plane");
            }
            for (uint32_t k = 0; k < specs.size(); ++k)
            {
                StorageThread j;
                j.spec = k;
                j.device = m_devices.size();
                j.queue = k % queues;
                j.host = ii;
                j.thread = threads++;
                j.ioengine = specs[k].ioengine;
                d.threads.push_back(m_threads.size());
                // Under their host (fio names its clones: section name and number).
                m_threadLabels.push_back(HostName(i) + "/" + specs[k].name
                                         + (targets.size() > 1 ? ">" + HostName(targets[t]) : ""));
                m_threads.push_back(j);
            }
            m_devices.push_back(std::move(d));
        }
        // Devices are made initiator by initiator: this host's are the last ones.
        m_hostDevices.emplace_back();
        for (size_t k = m_devices.size() - targets.size(); k < m_devices.size(); ++k)
        {
            m_hostDevices.back().push_back(m_devices[k].mp.get());
        }
    }
}

uint32_t
StorageInstalled::AddQueue(const std::string& label, uint32_t capacity)
{
    m_queues.push_back({capacity, 0, 0});
    m_queueLabels.push_back(label);
    return m_queues.size() - 1;
}

// Half the initiator stack's time for an I/O of `bytes` (charged on each way).
Time
StorageInstalled::Half(uint32_t bytes) const
{
    return LayersDelay(m_layers, bytes) / 2;
}

// The waiting requests of the host of `path`'s devices (they share host queues) go while
// paths have room.
void
StorageInstalled::Drain(uint32_t path)
{
    Multipath::Drain(m_hostDevices[Layout(path).device / m_layout.targets.size()], m_dispatch);
}

// The I/O's next request goes down the initiator's stack, then to the host queues.
void
StorageInstalled::NextRequest(uint64_t id)
{
    StorageIo& io = m_io[id];
    const uint32_t max = m_sw->maxRequestSize;
    io.bytes = max ? std::min(max, io.remaining) : io.remaining;
    io.remaining -= io.bytes;
    if (!m_cpuOn)
    {
        Simulator::Schedule(Half(io.bytes), &StorageInstalled::Queue, this, id);
        return;
    }
    // On the thread's CPU: the ioengine's system call, the stack's submit path, and (a write)
    // its data copied or checksummed in software; then the stack's fixed delays.
    const StorageThread& j = m_threads[io.thread];
    HostCpu& cpu = *m_cpus[j.host];
    const CpuWork work{{CpuPart::APP_SUBMIT, cpu.EngineSubmit(j.ioengine)},
                       {CpuPart::STACK_SUBMIT, m_cost.submit},
                       {CpuPart::COPY, io.read ? Time(0) : PerKiB(m_cost.writePerKiB, io.bytes)}};
    Charge(io, work);
    cpu.Run(
        j.core, work,
        [this, id]
        { Simulator::Schedule(Half(m_io.at(id).bytes), &StorageInstalled::Queue, this, id); },
        &io.cpuWait);
}

void
StorageInstalled::Charge(StorageIo& io, const CpuWork& work)
{
    for (uint8_t k = 0; k < work.n; ++k)
    {
        io.part[size_t(work.parts[k].first)] += work.parts[k].second;
    }
    io.cpu += work.Total();
}

Time
StorageInstalled::PerKiB(Time t, uint32_t bytes)
{
    return t * double(bytes) / 1024.0;
}

// The request asks its multipath device for a path with a free slot.
void
StorageInstalled::Queue(uint64_t id)
{
    StorageIo& io = m_io.at(id);
    io.queued = Simulator::Now();
    const StorageThread& j = m_threads[io.thread];
    if (m_devices[j.device].dead)
    {
        Fail(id);
        return;
    }
    m_devices[j.device].mp->Submit(id, j.queue, m_requests++, m_dispatch);
}

// The request leaves the host by path `local` of its device, into the transport.
void
StorageInstalled::Dispatch(uint64_t id, uint32_t local)
{
    StorageIo& io = m_io.at(id);
    const StorageThread& j = m_threads[io.thread];
    io.path = m_devices[j.device].paths[local];
    io.wait += Simulator::Now() - io.queued;
    io.dispatched = Simulator::Now();
    PathState& p = m_paths[io.path];
    ++p.requests;
    p.bytes += io.bytes;
    p.peak = std::max(p.peak, m_devices[j.device].mp->InFlight(local));
    Out(id, io);
    io.stackTag = m_stack->Submit(io, Token(id, io));
}

// What a transport carries for a request: its I/O and attempt (mod 256), so that an
// answer to an aborted or cancelled attempt is known as stale.
uint64_t
StorageInstalled::Token(uint64_t id, const StorageIo& io)
{
    return id << 8 | (io.attempt & 0xff);
}

// Into the transport: its command timer runs (blk-mq's request timeout). Every request
// has the same timeout, so the list is in deadline order and one event serves it.
void
StorageInstalled::Out(uint64_t id, StorageIo& io)
{
    io.out = true;
    io.deadline = Simulator::Now() + m_sw->ioTimeout;
    io.outAt = m_out.insert(m_out.end(), id);
    if (!m_timeouts.IsRunning())
    {
        m_timeouts = Simulator::Schedule(m_sw->ioTimeout, &StorageInstalled::CheckTimeouts, this);
    }
}

// Out of the transport (completed, aborted or cancelled): its timer stops.
void
StorageInstalled::In(StorageIo& io)
{
    if (io.out)
    {
        m_out.erase(io.outAt);
        io.out = false;
    }
}

void
StorageInstalled::CheckTimeouts()
{
    while (!m_out.empty())
    {
        const uint64_t id = m_out.front();
        const Time due = m_io.at(id).deadline;
        if (due > Simulator::Now())
        {
            m_timeouts = Simulator::Schedule(due - Simulator::Now(),
                                             &StorageInstalled::CheckTimeouts, this);
            return;
        }
        TimedOut(id);
    }
}

// The request's completion reached the host: its slots free (waiting requests of the
// initiator go), and it goes up the stack.
void
StorageInstalled::TransportDone(uint64_t id)
{
    StorageIo& io = m_io.at(id);
    In(io);
    io.transport += Simulator::Now() - io.dispatched;
    m_devices[Layout(io.path).device].mp->Release(m_paths[io.path].local, io.queue);
    // A slot of a queue shared by the host's devices (can_queue) may let any of them go.
    Drain(io.path);
    if (!m_cpuOn)
    {
        Simulator::Schedule(Half(io.bytes), &StorageInstalled::Complete, this, id);
        return;
    }
    // The interrupt and the stack's completion path (and a read's data copied or
    // checksummed) on its vector's core, then the application reaps it on its own.
    const StorageThread& j = m_threads[io.thread];
    HostCpu& cpu = *m_cpus[j.host];
    const uint32_t core = j.core;
    const CpuWork work{{CpuPart::COMPLETION, m_cost.completion},
                       {CpuPart::COPY, io.read ? PerKiB(m_cost.readPerKiB, io.bytes) : Time(0)}};
    const Time reap = cpu.EngineReap(j.ioengine);
    Charge(io, work);
    Charge(io, {{CpuPart::APP_REAP, reap}});
    const StorageStack::CompletionQueue q = m_stack->Completion(io, core);
    cpu.Interrupt(
        q.queue, q.core, work,
        [this, id, core, reap, &cpu]
        {
            cpu.Run(
                core, {{CpuPart::APP_REAP, reap}},
                [this, id] {
                    Simulator::Schedule(Half(m_io.at(id).bytes), &StorageInstalled::Complete, this,
                                        id);
                },
                &m_io.at(id).cpuWait);
        },
        &io.cpuWait);
}

// The command timer fired: the stack's timeout handler decides (abort, reset).
void
StorageInstalled::TimedOut(uint64_t id)
{
    ++m_timedOut;
    StorageIo& io = m_io.at(id);
    m_stack->TimedOut(io, Token(id, io), io.stackTag);
}

// The I/O fails with EIO (the pattern decides what its thread does next).
void
StorageInstalled::Fail(uint64_t id, int error)
{
    auto it = m_io.find(id);
    ++m_failed;
    const StorageIo io = it->second;
    m_errors.Append({double(io.thread), double(Simulator::Now().GetNanoSeconds()), double(error)});
    m_io.erase(it);
    --m_threads[io.thread].inFlight;
    Failed(io.thread, io);
}

void
StorageInstalled::Reinstate(uint32_t path)
{
    m_devices[Layout(path).device].mp->SetFailed(m_paths[path].local, false);
    Drain(path);
}

void
StorageInstalled::Complete(uint64_t id)
{
    auto it = m_io.find(id);
    if (it->second.remaining > 0)
    {
        NextRequest(id);
        return;
    }
    const StorageIo io = it->second;
    m_io.erase(it);
    if (Simulator::Now() >= m_from)
    {
        for (size_t k = 0; k < io.part.size(); ++k)
        {
            m_cpuParts[k] += io.part[k]; // of the I/Os the statistics count
        }
    }
    m_ios.Append({double(io.thread), io.read ? 1.0 : 0.0, double(io.total),
                  double(io.submit.GetNanoSeconds()), double(Simulator::Now().GetNanoSeconds()),
                  double(io.wait.GetNanoSeconds()), double(io.cpuWait.GetNanoSeconds()),
                  double(io.cpu.GetNanoSeconds()), double(io.transport.GetNanoSeconds())});
    --m_threads[io.thread].inFlight;
    Done(io.thread, io);
}

// Table cpu (each initiator core's busy time and utilisation over the measurement window)
// and the CPU metrics: utilisation, CPU per I/O in all and by part, IOPS per core.
void
StorageInstalled::ReportCpu(RunContext& ctx, const std::string& prefix, Time end, double ios)
{
    const double window = (end - m_from).GetSeconds();
    Table& t = ctx.AddTable(prefix + "cpu", {lfsim::IntColumn("id"), "busy_us", "util"});
    std::vector<std::string> labels;
    double busy = 0;
    double peak = 0;
    uint32_t cores = 0;
    Time think(0);
    for (uint32_t h = 0; h < m_cpus.size(); ++h)
    {
        const HostCpu& cpu = *m_cpus[h];
        for (uint32_t c = 0; c < cpu.GetCores(); ++c)
        {
            const double b = cpu.BusyIn(c, end).GetSeconds();
            const double u = window > 0 ? b / window : 0.0;
            t.Append({double(labels.size()), b * 1e6, u});
            labels.push_back(HostName(m_initiators[h]) + "/cpu" + std::to_string(c));
            busy += b;
            peak = std::max(peak, u);
            ++cores;
        }
        think += cpu.GetPartTime(CpuPart::APP_THINK);
    }
    ctx.SetLabels(prefix + "cpu", labels);
    ctx.SetMetric(prefix + "cpu_util", window > 0 && cores ? busy / window / cores : 0.0);
    ctx.SetMetric(prefix + "cpu_util_max_core", peak);
    // CPU per I/O: what the counted I/Os cost, each part of their path.
    const auto perIo = [ios](Time t) { return ios > 0 ? t.GetSeconds() * 1e6 / ios : 0.0; };
    const auto at = [this](CpuPart p) { return m_cpuParts[size_t(p)]; };
    const Time all = std::accumulate(m_cpuParts.begin(), m_cpuParts.end(), Time(0));
    ctx.SetMetric(prefix + "cpu_us_per_io", perIo(all));
    ctx.SetMetric(prefix + "cpu_app_us_per_io",
                  perIo(at(CpuPart::APP_SUBMIT) + at(CpuPart::APP_REAP)));
    ctx.SetMetric(prefix + "cpu_submit_us_per_io", perIo(at(CpuPart::STACK_SUBMIT)));
    ctx.SetMetric(prefix + "cpu_completion_us_per_io", perIo(at(CpuPart::COMPLETION)));
    ctx.SetMetric(prefix + "cpu_copy_us_per_io", perIo(at(CpuPart::COPY)));
    // fio's thinktime_spin, over the window's I/Os (it belongs to no I/O).
    ctx.SetMetric(prefix + "cpu_think_us_per_io", perIo(think));
    // What one core kept busy delivers: 1 over the I/Os' own CPU each (the window's IOPS over
    // its busy time would count work that straddles the window's ends).
    ctx.SetMetric(prefix + "iops_per_core",
                  ios > 0 && all.IsStrictlyPositive() ? ios / all.GetSeconds() : 0.0);
    uint64_t interrupts = 0;
    for (const auto& cpu : m_cpus)
    {
        interrupts += cpu->GetInterrupts();
    }
    ctx.SetMetric(prefix + "interrupts", interrupts);
}

// Tables paths (requests each path carried), host_queues (capacity and peak use) and
// targets (requests each target's device served).
void
StorageInstalled::ReportPaths(RunContext& ctx, const std::string& prefix)
{
    Table& paths = ctx.AddTable(prefix + "paths",
                                {lfsim::IntColumn("id"), lfsim::IntColumn("requests"),
                                 lfsim::IntColumn("bytes"), lfsim::IntColumn("peak_in_flight")});
    for (uint32_t k = 0; k < m_paths.size(); ++k)
    {
        const PathState& p = m_paths[k];
        paths.Append({double(k), double(p.requests), double(p.bytes), double(p.peak)});
    }
    ctx.SetLabels(prefix + "paths", m_pathLabels);
    Table& queues = ctx.AddTable(
        prefix + "host_queues",
        {lfsim::IntColumn("id"), lfsim::IntColumn("capacity"), lfsim::IntColumn("peak")});
    for (uint32_t k = 0; k < m_queues.size(); ++k)
    {
        queues.Append({double(k), double(m_queues[k].capacity), double(m_queues[k].peak)});
    }
    ctx.SetLabels(prefix + "host_queues", m_queueLabels);
    Table& targets
        = ctx.AddTable(prefix + "targets", {lfsim::IntColumn("id"), lfsim::IntColumn("requests")});
    std::vector<std::string> names;
    for (uint32_t k = 0; k < m_layout.targets.size(); ++k)
    {
        targets.Append({double(k), double(m_devicesOf[k]->GetServed())});
        names.push_back(HostName(m_layout.targets[k]));
    }
    ctx.SetLabels(prefix + "targets", names);
}

} // namespace ns3
