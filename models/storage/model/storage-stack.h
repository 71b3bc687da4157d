/*
 * A host storage stack as a plug-in of the Fio workload, the ns-3 way: as TcpL4Protocol picks a
 * TcpCongestionOps and RdmaNic.CongestionControl a controller, StorageWorkload.Stack is a
 * TypeIdValue and the workload makes its stack through an ObjectFactory, so the stack's own
 * attributes come from the scenario like any other class's. A stack is one class in its own
 * files plus one registration line:
 *
 *     const bool g_stack = RegisterStorageStack({"iscsi", "ns3::IscsiStack",
 *         "SCSI over TCP/IP (RFC 7143)", {"roce"}, {"ns3::RoceHostIp", "ns3::IscsiSession"}});
 *
 * which makes its short name a value of StorageWorkload.Stack (YAML, --set, Python) and its class,
 * the classes it derives from, and the classes it lists configurable in a scenario whose Fio
 * workload chooses it (and only then).
 *
 * Who does what, as in Linux:
 *  - the Fio workload (StorageHost): fio's jobs, the block layer and the multipath device
 *    (dm-multipath, NVMe multipath): host selection, host queues and paths, the command timer
 *    (blk-mq's request timeout), retries and failover, the target's block device, the report;
 *  - the stack (StorageStack): the transport driver at the initiator and the target driver at
 *    the target. It connects each path, carries a command to the target and its completion
 *    back, handles a command timeout (the driver's timeout handler: abort, or controller reset),
 *    and reports its own protocol's events.
 *
 * The workload calls, in this order: Attach; ReservedHosts; Prepare; SubmissionQueues;
 * AddPathQueues for each path; Build; then Submit and TimedOut while the run lasts; Finish
 * after it. The stack calls back through StorageHost.
 *
 * A stack's Layers attribute is its initiator's software as an ordered list of layers, each
 * with its processing delay per I/O: "application:2us,block:1us,nvme:1us,...", optionally plus
 * a time per KiB of data for layers that touch the payload (a copy, a CRC):
 * "tcp:3us+0.25us/KiB". The depth D of seed 000's T = k * D + C is the number of layers; each
 * layer's delay is charged half on the way down (submission) and half on the way up
 * (completion), by the workload.
 */
#ifndef STORAGE_STACK_H
#define STORAGE_STACK_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <functional>
#include <string>
#include <vector>

namespace lfsim
{
class RunContext;
class FabricNetwork;
} // namespace lfsim

namespace ns3
{

struct StorageLayer
{
    std::string name;
    Time delay;
    Time perKiB; ///< added per 1024 bytes of the I/O's data
};

/// Parses "name:time[+time/KiB],..."; throws std::invalid_argument naming `key` on bad input.
std::vector<StorageLayer> ParseLayers(const std::string& key, const std::string& text);
/// Sum of the layers' delays for an I/O of `bytes` bytes of data.
Time LayersDelay(const std::vector<StorageLayer>& layers, uint64_t bytes = 0);

/// An initiator port x target port that see each other: one path of a multipath device.
struct StoragePath
{
    uint32_t device = 0; ///< its multipath device (one initiator x one target)
    uint32_t target = 0; ///< the device's target, an index in StorageLayout::targets
    uint32_t from = 0;   ///< initiator address (an index in lfsim::Graph::HostPorts())
    uint32_t to = 0;     ///< target address
};

/// What a stack runs on: owned by the workload, filled as it builds (Attach gives a pointer).
struct StorageLayout
{
    lfsim::RunContext* ctx = nullptr;
    lfsim::FabricNetwork* network = nullptr;
    std::string key;                ///< "workload.NAME", for errors
    std::vector<uint32_t> targets;  ///< the target hosts (host numbers), by target index
    std::vector<StoragePath> paths; ///< every path, by path index
    Time start;                     ///< the jobs start
    Time stop;                      ///< the jobs issue no I/O from then on
};

/// A request in flight as the workload hands it to a stack.
struct StorageCommand
{
    bool read = false;
    uint32_t bytes = 0; ///< of this request
    uint32_t path = 0;  ///< the path it went down
    uint32_t queue = 0; ///< its submission queue (NVMe: the I/O queue of its job's CPU; SCSI: 0)
};

/// What a stack may ask of, and tell, the workload above it (and the target's block device).
class StorageHost
{
  public:
    virtual ~StorageHost() = default;

    /// The request of `token` if that attempt is still the one in the transport, else null (an
    /// aborted or cancelled attempt's late step).
    virtual const StorageCommand* Live(uint64_t token) const = 0;
    /// The completion of `token` reached the initiator.
    virtual void Completed(uint64_t token) = 0;
    /// The stack aborts the timed-out request of `token`: it leaves the transport, whatever its
    /// old attempt still delivers is stale. Returns the I/O, for Aborted.
    virtual uint64_t Aborting(uint64_t token) = 0;
    /// The abort of I/O `io` ended (accepted, rejected or timed out): its slots free, the path
    /// is failed until the path checker reinstates it, and the request is retried or fails.
    virtual void Aborted(uint64_t io) = 0;
    /// The path can carry requests for the first time (a session logged in, a controller
    /// connected): a job starts once every path of its device is ready.
    virtual void PathReady(uint32_t path) = 0;
    /// The path is down (a controller reset): no request goes down it, and every request on it
    /// is cancelled and sent again down the device's other paths (or waits for one).
    virtual void PathDown(uint32_t path) = 0;
    /// The path carries requests again (a controller reconnected).
    virtual void PathUp(uint32_t path) = 0;
    /// The path is gone for good (a controller deleted); a device without paths fails its I/Os.
    virtual void PathGone(uint32_t path) = 0;
    /// The request of `token` failed in the transport with a path error (SCSI
    /// DID_TRANSPORT_FAILFAST or DID_NO_CONNECT, BLK_STS_TRANSPORT): it leaves the transport. On
    /// a device of several paths dm-multipath fails the path (fail_path) and sends the request
    /// down another (or holds it until one is up); on a device of one path the I/O fails
    /// (ENOLINK).
    virtual void PathError(uint64_t token) = 0;
    /// The stack hands the request of `token` back to be sent again down the same path (the
    /// SCSI mid-layer's retry of a command returned with DID_TRANSPORT_DISRUPTED): a new
    /// attempt, its command timer restarted, Submit called again.
    virtual void Requeue(uint64_t token) = 0;
    /// From TimedOut, instead of handling it: the request's command timer starts again (blk-mq's
    /// BLK_EH_RESET_TIMER, as scsi_transport_fc's fc_eh_timed_out answers for a blocked remote
    /// port); not counted as a timeout.
    virtual void ResetTimer(uint64_t token) = 0;

    /// Target side: the block target's back end for a command whose data is there (a write's)
    /// or wanted (a read's): target software, the device, target software again, then `done`.
    virtual void Backend(uint32_t target, bool read, uint32_t bytes, std::function<void()> done)
        = 0;
    /// Target side: the device alone (timed for the report).
    virtual void TargetDevice(uint32_t target, bool read, uint32_t bytes,
                              std::function<void()> done)
        = 0;
    /// Target software time per command, before the device and again before the completion.
    virtual Time TargetDelay() const = 0;
};

class StorageStack : public Object
{
  public:
    static TypeId GetTypeId();

    /// What the stack runs on and whom it calls back; before any other call.
    void Attach(StorageHost* host, const StorageLayout* layout);
    /// The initiator's software layers (its Layers attribute), checked.
    std::vector<StorageLayer> Layers() const;

    /// The workload's Priority (its traffic class; -1: the transport's own). Default: refused
    /// unless -1, naming the key and PriorityClass().
    virtual void UsePriority(int32_t priority);
    /// Where a stack that refuses Priority takes its traffic class from, for the error.
    virtual std::string
    PriorityClass() const
    {
        return "its transport sets its own class";
    }
    /// Hosts the stack takes for itself besides the targets (e.g. replicas): no initiator.
    /// Called once the targets are known.
    virtual std::vector<uint32_t>
    ReservedHosts()
    {
        return {};
    }
    /// Before the paths are made: what the stack needs of the fabric first (an IP stack).
    virtual void
    Prepare(int64_t& stream)
    {
    }
    /// Submission queues a host's device has when `jobs` jobs of the host use it (NVMe: its
    /// I/O queues; SCSI: 1). A host's k-th job uses queue k mod this.
    virtual uint32_t
    SubmissionQueues(uint32_t jobs) const
    {
        return 1;
    }
    /// Makes a host queue with `label` and `capacity` slots; returns its number.
    using AddQueue = std::function<uint32_t(const std::string& label, uint32_t capacity)>;
    /// The host queues a request of path `path` (its label "from>to") takes a slot in:
    /// `perQueue` one per submission queue (the request takes its queue's), `shared` all.
    virtual void AddPathQueues(uint32_t path, const std::string& label, uint32_t queues,
                               const AddQueue& add, std::vector<uint32_t>& perQueue,
                               std::vector<uint32_t>& shared)
        = 0;
    /// Builds the initiators and targets of every path; RNG streams from `stream` on.
    virtual void Build(int64_t& stream) = 0;
    /// Whether the paths carry requests from the start (else each says PathReady).
    virtual bool
    ReadyAtStart() const
    {
        return true;
    }

    /// Sends a request down its path; `token` names it in everything the stack says of it.
    /// Returns a tag the stack wants back with TimedOut (its exchange, its task).
    virtual uint32_t Submit(const StorageCommand& c, uint64_t token) = 0;
    /// The request's command timer fired (the driver's timeout handler).
    virtual void TimedOut(const StorageCommand& c, uint64_t token, uint32_t tag) = 0;

    /// What a request costs the initiator's CPU (HostCpu enabled; each stack declares the
    /// attributes with its own defaults and sources): its submit path, its completion path
    /// (the interrupt handler included), and per KiB of data the host copies or checksums in
    /// software: of a read's data when it arrives, of a write's when it leaves.
    struct CpuCost
    {
        Time submit;
        Time completion;
        Time readPerKiB;
        Time writePerKiB;
    };
    CpuCost
    Cpu() const
    {
        return {m_submitCpu, m_completionCpu, m_readCpuPerKiB, m_writeCpuPerKiB};
    }
    /// Where a request's completion is handled on its host, whose thread submitting it runs on
    /// `threadCore`: the completion `queue` that raises the interrupt (a key naming one adapter
    /// queue: interrupt moderation batches per queue) and the `core` its vector is bound to.
    struct CompletionQueue
    {
        uint64_t queue;
        uint32_t core;
    };
    /// Default, NVMe's: each controller's (path's) I/O queue of the submitting CPU, its vector
    /// bound to that CPU (the kernel's managed affinity).
    virtual CompletionQueue
    Completion(const StorageCommand& c, uint32_t threadCore) const
    {
        return {uint64_t(c.path) << 32 | c.queue, threadCore};
    }

    /// The stack's own metrics, names prefixed with `prefix`.
    virtual void
    Finish(lfsim::RunContext& ctx, const std::string& prefix)
    {
    }

  protected:
    /// "Class.Attribute" for errors about this stack's attribute.
    std::string Key(const std::string& attribute) const;
    /// The label of a host address ("h3", "h3/A").
    std::string AddressLabel(uint32_t address) const;
    /// The stack's registered name (nvmeof_rdma, ...), for errors.
    std::string Name() const;

    StorageHost* m_host = nullptr;
    const StorageLayout* m_layout = nullptr;
    std::string m_layers; ///< each stack declares Layers, with its own default
    // Each stack declares SubmitCpu, CompletionCpu, ReadCpuPerKiB and WriteCpuPerKiB too.
    Time m_submitCpu;
    Time m_completionCpu;
    Time m_readCpuPerKiB;
    Time m_writeCpuPerKiB;
};

/// One line per stack: its name (a value of StorageWorkload.Stack), its TypeId (a subclass of
/// ns3::StorageStack), a one-line description, the fabrics it runs on and the classes besides
/// its own (and its parents') that a scenario using it may configure.
struct StorageStackInfo
{
    std::string name;
    std::string typeId;
    std::string description;
    std::vector<std::string> fabrics;
    std::vector<std::string> classes = {};
};

/// Registers the stack as a value of StorageWorkload.Stack. Returns true (for a static
/// initializer).
bool RegisterStorageStack(const StorageStackInfo& info);

} // namespace ns3

#endif
