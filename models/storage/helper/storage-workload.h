/*
 * The host above a storage stack, shared by the storage workload patterns (Fio, Transactions):
 * initiator threads on the hosts of Hosts, each against the block target (BlockTarget) on every
 * host of Destinations, over a storage stack (Stack: a StorageStack plug-in, storage-stack.h) on
 * any topology the fabric built. A host with several ports sees a target by several paths (each
 * of its ports x each target port it reaches: dual fabrics, several front-end ports); requests go
 * by the path the PathSelector chooses, after a slot in the host queues the stack asks for (see
 * multipath.h).
 *
 * StorageInstalled is the block layer and the multipath device (host selection, paths,
 * queueing, dispatch, command timers, retries and failover), the host's CPU (HostCpu), the
 * target's block device below the stack, and the report of the I/Os. A pattern derives from it
 * and says what its threads do: it issues I/Os (Issue), runs CPU work on a thread's core
 * (RunCpu), and hears of each I/O's end (Done, Failed). What crosses the wire, and how a stack
 * recovers from a lost command or connection, is the stack's.
 */
#ifndef STORAGE_WORKLOAD_H
#define STORAGE_WORKLOAD_H

#include "block-target.h"
#include "host-cpu.h"
#include "lfsim-run.h"
#include "lfsim-workload.h"
#include "multipath.h"
#include "ns3/random-variable-stream.h"
#include "storage-stack.h"

#include <array>
#include <cerrno>
#include <list>
#include <map>
#include <memory>

namespace ns3
{

/// What every storage pattern takes: the stack, the target's software, and the host's block
/// layer and multipath.
class StorageWorkload : public Workload
{
  public:
    static TypeId GetTypeId();

    /// Destinations names the targets, and the shared attributes a storage pattern has no use
    /// for keep their defaults (errors name the key and `pattern`); StartSpread only when
    /// `spread` (a pattern whose threads start at random times).
    void CheckShared(const std::string& pattern, bool spread) const;
    int32_t
    GetPriority() const
    {
        return m_priority;
    }

    TypeId stack;
    Time targetDelay;
    uint32_t maxRequestSize = 0;
    int pathSelector = Multipath::QUEUE_LENGTH;
    Time ioTimeout;
    uint32_t ioRetries = 5;
    Time pathCheckInterval;
};

/// A pattern's thread, as it asks for it: its name under its host, the cores it may run on
/// (fio's cpus_allowed; empty: placed in turn) and how it submits I/O (FioJob::Ioengine).
struct StorageThreadSpec
{
    std::string name;
    std::string cpusAllowed;
    int ioengine = 1; ///< FioJob::LIBAIO
};

/// One thread of one initiator against one target's multipath device.
struct StorageThread
{
    uint32_t spec = 0;   ///< its StorageThreadSpec
    uint32_t device = 0; ///< its initiator's multipath device for its target
    uint32_t queue = 0;  ///< submission queue (NVMe: the I/O queue of its CPU)
    uint32_t host = 0;   ///< its initiator (index in the initiators)
    uint32_t thread = 0; ///< its thread among its host's
    uint32_t core = 0;   ///< the core it runs on (HostCpu::ThreadCore, cpus_allowed)
    int ioengine = 1;
    uint32_t inFlight = 0; ///< its I/Os issued and not yet completed or failed
    bool stopped = false;  ///< it issues no more I/O
};

/// An I/O and its request in flight (read, bytes, path, queue: StorageCommand).
struct StorageIo : StorageCommand
{
    uint32_t thread = 0;
    uint64_t tag = 0;       ///< the pattern's own (what the I/O is for)
    Time submit;            ///< issued by its thread
    uint32_t total = 0;     ///< the I/O's bytes (fio's bs)
    uint32_t remaining = 0; ///< bytes not yet requested
    Time queued;            ///< when the request reached the host queues
    Time wait;              ///< held at the host queues, over its requests
    Time cpuWait;           ///< waiting for a core (and for a coalesced interrupt)
    Time cpu;               ///< CPU time on the host, over its requests
    std::array<Time, size_t(CpuPart::COUNT)> part{}; ///< that CPU time by part
    Time dispatched;       ///< when its request left the host queues for the transport
    Time transport;        ///< from there to its completion at the host, over its requests
    uint32_t attempt = 0;  ///< of the request in flight: a completion of an older one is stale
    uint32_t retries = 0;  ///< after timeouts, of this I/O
    bool out = false;      ///< in the transport (dispatched, not completed, aborted or cancelled)
    uint32_t stackTag = 0; ///< what the stack wants back on a timeout (an OX_ID, an ITT)
    Time deadline;         ///< when out: its command timeout
    std::list<uint64_t>::iterator outAt; ///< when out: its place in the timeout list
};

class StorageInstalled : public lfsim::InstalledWorkload, public StorageHost
{
  public:
    /// The stack (checked against the fabric) and the shared attributes (checked for
    /// `pattern`, StartSpread allowed when `spread`); Build does the rest once the pattern
    /// knows its window and its threads.
    StorageInstalled(lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w,
                     lfsim::FabricNetwork& net, const std::string& pattern, bool spread = false);

    /// The I/Os' tables and metrics (ios, paths, host_queues, targets, cpu), then Report's.
    void Finish(lfsim::RunContext& ctx, const std::string& prefix) override;

    // StorageHost: what the stack calls.
    const StorageCommand* Live(uint64_t token) const override;
    void Completed(uint64_t token) override;
    uint64_t Aborting(uint64_t token) override;
    /// The abort of a timed-out command ended. dm-mpath fails the path and the request is
    /// retried up to IoRetries times down the path the selector picks, or fails with EIO.
    void Aborted(uint64_t id) override;
    /// A path is ready; with its device's last one the device's threads begin (at Start).
    void PathReady(uint32_t path) override;
    /// The path fails, its requests are cancelled (a path error) and failed over: back to the
    /// multipath head, which sends them down a live path or holds them until one is.
    void PathDown(uint32_t path) override;
    void PathUp(uint32_t path) override;
    void PathGone(uint32_t path) override;
    void PathError(uint64_t token) override;
    void Requeue(uint64_t token) override;
    void ResetTimer(uint64_t token) override;
    void Backend(uint32_t target, bool read, uint32_t bytes, std::function<void()> done) override;
    /// A target's own device, timed (queue + service) for the latency breakdown.
    void TargetDevice(uint32_t target, bool read, uint32_t bytes,
                      std::function<void()> done) override;
    Time TargetDelay() const override;

  protected:
    /// The window (threads begin at `start`, issue nothing from `stop`, I/Os completing before
    /// `from` are not counted), the hosts, the targets' devices, one stream for the pattern's
    /// draws (Rng), the paths and host queues, and for every initiator x target one thread per
    /// spec, in that order. `cpusKey` names the cpus_allowed attribute in errors.
    void Build(Time start, Time stop, Time from, const std::vector<StorageThreadSpec>& specs,
               const std::string& cpusKey);

    /// The thread's device is ready: it may issue I/Os (at Start, or when its paths are up).
    virtual void Begin(uint32_t thread) = 0;
    /// An I/O of the thread completed (it is in the ios table).
    virtual void Done(uint32_t thread, const StorageIo& io) = 0;
    /// An I/O of the thread failed with EIO.
    virtual void Failed(uint32_t thread, const StorageIo& io) = 0;
    /// The pattern's own metrics and tables, after the I/Os'.
    virtual void
    Report(lfsim::RunContext& ctx, const std::string& prefix)
    {
    }

    /// A new I/O of `bytes` from the thread (its CPU first with HostCpu); `tag` is the
    /// pattern's, given back with it. Returns its id.
    uint64_t Issue(uint32_t thread, bool read, uint32_t bytes, uint64_t tag = 0);
    /// Work on the thread's core (at once when HostCpu is disabled), then `done`.
    void RunCpu(uint32_t thread, const CpuWork& work, std::function<void()> done);
    /// The thread stopped and has nothing in flight: with the last one the window ends (and the
    /// run, when this is the only workload).
    void Finished(uint32_t thread);

    std::string HostName(uint32_t h) const;

    Ptr<StorageWorkload> m_sw;
    std::string m_key;
    Time m_start; ///< the threads begin
    Time m_stop;  ///< threads issue no I/O from then on
    Time m_from;  ///< I/Os completing before are not counted (a ramp or warm-up)
    Ptr<UniformRandomVariable> m_rng; ///< the pattern's draws (fio: the read/write mix)
    std::vector<StorageThread> m_threads;
    std::vector<std::string> m_threadLabels;
    std::vector<Ptr<HostCpu>> m_cpus; ///< by initiator
    bool m_cpuOn = false;             ///< HostCpu enabled: the I/Os' CPU work runs on cores

  private:
    /// The workload's side of a path (its StoragePath is in the layout).
    struct PathState
    {
        uint32_t local = 0; ///< its index in its device
        uint64_t requests = 0;
        uint64_t bytes = 0;
        uint32_t peak = 0;
        bool ready = false; ///< the stack said it can carry requests (PathReady)
        bool gone = false;  ///< the stack said it is gone for good (PathGone)
    };

    /// One initiator's multipath device for one target.
    struct Device
    {
        uint32_t target = 0; ///< index in the targets
        std::unique_ptr<Multipath> mp;
        std::vector<uint32_t> paths; ///< local path -> Path index
        std::vector<uint32_t> threads;
        uint32_t ready = 0; ///< paths ready
        bool dead = false;  ///< every path gone: its I/Os fail
    };

    /// The stack StorageWorkload.Stack names, if it runs on this fabric.
    void MakeStack(const std::string& fabric);
    std::string AddressLabel(uint32_t a) const;
    const StoragePath& Layout(uint32_t path) const;
    /// Targets, the stack's own hosts (replicas) and initiators (Hosts without the other two),
    /// each checked.
    void SelectHosts(const lfsim::RunContext& ctx, const lfsim::WorkloadInstance& w);
    /// The multipath devices (initiator x target), their paths and host queues, the threads.
    void MakePaths(const std::vector<StorageThreadSpec>& specs);
    uint32_t AddQueue(const std::string& label, uint32_t capacity);
    /// Half the initiator stack's time for an I/O of `bytes` (charged on each way).
    Time Half(uint32_t bytes) const;
    /// The waiting requests of the host of `path`'s devices (they share host queues) go while
    /// paths have room.
    void Drain(uint32_t path);
    /// The I/O's next request goes down the initiator's stack, then to the host queues.
    void NextRequest(uint64_t id);
    static void Charge(StorageIo& io, const CpuWork& work);
    static Time PerKiB(Time t, uint32_t bytes);
    /// The request asks its multipath device for a path with a free slot.
    void Queue(uint64_t id);
    /// The request leaves the host by path `local` of its device, into the transport.
    void Dispatch(uint64_t id, uint32_t local);
    /// What a transport carries for a request: its I/O and attempt (mod 256), so that an
    /// answer to an aborted or cancelled attempt is known as stale.
    static uint64_t Token(uint64_t id, const StorageIo& io);
    /// Into the transport: its command timer runs (blk-mq's request timeout). Every request
    /// has the same timeout, so the list is in deadline order and one event serves it.
    void Out(uint64_t id, StorageIo& io);
    /// Out of the transport (completed, aborted or cancelled): its timer stops.
    void In(StorageIo& io);
    void CheckTimeouts();
    /// The request's completion reached the host: its slots free (waiting requests of the
    /// initiator go), and it goes up the stack.
    void TransportDone(uint64_t id);
    /// The command timer fired: the stack's timeout handler decides (abort, reset).
    void TimedOut(uint64_t id);
    /// The I/O fails with `error` (the pattern hears of it: Failed).
    void Fail(uint64_t id, int error = EIO);
    void Reinstate(uint32_t path);
    void Complete(uint64_t id);
    /// Table cpu (each initiator core's busy time and utilisation over the measurement window)
    /// and the CPU metrics: utilisation, CPU per I/O in all and by part, IOPS per core.
    void ReportCpu(lfsim::RunContext& ctx, const std::string& prefix, Time end, double ios);
    /// Tables paths (requests each path carried), host_queues (capacity and peak use) and
    /// targets (requests each target's device served).
    void ReportPaths(lfsim::RunContext& ctx, const std::string& prefix);

    const lfsim::Graph& m_graph;
    lfsim::FabricNetwork& m_net;
    const lfsim::WorkloadInstance* m_wi; ///< its instance (name, hosts)
    StorageLayout m_layout;
    Ptr<StorageStack> m_stack;
    std::vector<StorageLayer> m_layers;
    Time m_end; ///< the last thread finished
    bool m_endsRun = false;
    std::vector<uint32_t> m_initiators;
    std::vector<Ptr<BlockTarget>> m_devicesOf; ///< by target: its device
    std::vector<HostQueue> m_queues;
    std::vector<std::string> m_queueLabels;
    std::vector<PathState> m_paths;
    std::vector<std::string> m_pathLabels;
    std::vector<Device> m_devices;
    std::vector<std::vector<Multipath*>> m_hostDevices;    ///< per initiator, its devices
    std::array<Time, size_t(CpuPart::COUNT)> m_cpuParts{}; ///< of the counted I/Os, by part
    StorageStack::CpuCost m_cost; ///< what a request costs the stack on the host's CPU
    std::map<uint64_t, StorageIo> m_io;
    uint64_t m_nextIo = 0;
    uint64_t m_timedOut = 0;
    uint64_t m_retried = 0;
    uint64_t m_failed = 0;
    uint64_t m_staleCompletions = 0;
    uint64_t m_pathFailures = 0;
    uint64_t m_aborted = 0;
    std::list<uint64_t> m_out; ///< I/Os in the transport, in deadline order
    EventId m_timeouts;        ///< at the first deadline of m_out
    /// I/Os failed
    lfsim::Table m_errors{
        {lfsim::IntColumn("id"), lfsim::IntColumn("time_ns"), lfsim::IntColumn("errno")}};
    uint64_t m_requests = 0; ///< requests that reached the host queues, in order
    Multipath::Dispatch m_dispatch = [this](uint64_t id, uint32_t local) { Dispatch(id, local); };
    Time m_deviceTime[2]; ///< [write, read]: the targets' devices' time, after the ramp
    uint64_t m_deviceIos[2] = {0, 0};
    size_t m_threadsDone = 0;
    lfsim::Table m_ios{{lfsim::IntColumn("id"), lfsim::BoolColumn("read"),
                        lfsim::IntColumn("bytes"), lfsim::IntColumn("submit_ns"),
                        lfsim::IntColumn("complete_ns"), lfsim::IntColumn("wait_ns"),
                        lfsim::IntColumn("cpu_wait_ns"), lfsim::IntColumn("cpu_ns"),
                        lfsim::IntColumn("transport_ns")}};
};

} // namespace ns3

#endif
