/*
 * Workload: the shared part that says who sends what to whom, and when, whatever the fabric.
 * A pattern is an ns-3 Object deriving from ns3::Workload, in one file with one registration
 * line; a scenario lists named instances:
 *
 *     workload:
 *       incast: {pattern: Incast, Hosts: h1-h16, Destinations: h0, MessageSize: 262144}
 *       background: {pattern: OpenLoop, SizeCdf: websearch, Load: 0.3}
 *
 * A generic pattern turns into flows (FlowSpec), which every fabric carries with its own
 * transport (RDMA queue pairs, FCP exchanges). A pattern tied to one fabric's applications
 * (an FC frame stream, fio jobs over a storage stack) says so in its registration and is
 * installed by that fabric itself.
 */
#ifndef LFSIM_WORKLOAD_H
#define LFSIM_WORKLOAD_H

#include "lfsim-graph.h"
#include "lfsim-topology.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/random-variable-stream.h"

#include <functional>
#include <string>
#include <vector>

namespace lfsim
{

/// How a flow's data moves: pushed by the sender (Write), pulled by the receiver (Read), or
/// sent into a posted receive (Send). RDMA carries all three; FCP exchanges carry Write.
enum class Operation : int
{
    WRITE = 0,
    READ = 1,
    SEND = 2
};

/// One flow: `messages` messages of `size` bytes from host `src` to host `dst`, at most
/// `depth` outstanding, the first posted at `start`. Open-loop flows are one message each.
struct FlowSpec
{
    uint32_t src = 0; ///< host number
    uint32_t dst = 0; ///< host number
    uint64_t size = 0;
    uint32_t messages = 1; ///< 0: repeated until stop_time
    uint32_t depth = 1;
    double load = 1; ///< the sender paced at load x its line rate (1: unpaced)
    ns3::Time start;
    int32_t priority = -1; ///< traffic class; -1: the transport's default
    Operation op = Operation::WRITE;
    int32_t plane = -1;    ///< dual fabrics: the plane it takes (0 = A, 1 = B); -1: in turn
    uint32_t workload = 0; ///< index of the workload it belongs to
};

/// What a pattern may know of the fabric when it makes its flows.
struct WorkloadEnv
{
    const Graph* graph = nullptr;
    ns3::Time stopTime;
    /// Data rate of a host's (first) port, bit/s: for loads.
    std::function<double(uint32_t host)> hostRate;
    /// Shared draw of start offsets (StartSpread), in flow order across workloads.
    ns3::Ptr<ns3::UniformRandomVariable> start;
    /// First RNG stream this workload may use for its own draws (it has 8).
    int64_t stream = 0;
};

} // namespace lfsim

namespace ns3
{

class Node;

class Workload : public Object
{
  public:
    static TypeId GetTypeId();

    /// The flows of a generic pattern, appended to `out` (each with workload = `index`); a
    /// pattern that installs itself makes none.
    virtual void
    Generate(const lfsim::WorkloadEnv&, uint32_t, std::vector<lfsim::FlowSpec>&)
    {
    }
    /// Tables given by a file (e.g. a flow list); a pattern that takes none ignores them.
    virtual void
    SetTables(const std::map<std::string, lfsim::Rows>&)
    {
    }

    /// The selected hosts (host numbers), with the key named in errors.
    std::vector<uint32_t> Sources(const lfsim::Graph& g) const;
    std::vector<uint32_t> Sinks(const lfsim::Graph& g) const;
    /// The one host Hosts (or Destinations) must select, `role` naming it in the error
    /// ("... selects 3 hosts; accepted: the one sending host, e.g. h0").
    uint32_t OneSource(const lfsim::Graph& g, const std::string& role) const;
    uint32_t OneSink(const lfsim::Graph& g, const std::string& role) const;

    double
    GetLoad() const
    {
        return m_load;
    }
    Time
    GetStart() const
    {
        return m_start;
    }
    int32_t
    GetPlane() const
    {
        return m_plane;
    }
    lfsim::Operation
    GetOperation() const
    {
        return lfsim::Operation(m_operation);
    }
    /// For a pattern that has no use for some shared attributes: throws std::invalid_argument
    /// "KEY.Attr: got 'v'; accepted: DEFAULT with pattern P (why)" for the first of `attrs`
    /// not at its default, so that a setting is refused, never silently ignored.
    void RefuseSet(const std::vector<std::string>& attrs, const std::string& pattern,
                   const std::string& why) const;
    /// Start plus a uniform draw in [0, StartSpread) from `rv` (the shared start stream).
    Time DrawStart(Ptr<UniformRandomVariable> rv) const;
    /// "workload.NAME" for error messages.
    std::string key;

  protected:
    std::string m_hosts;
    std::string m_destinations;
    double m_load = 1;
    Time m_start;
    int32_t m_priority = -1;
    int m_operation = 0; ///< lfsim::Operation
    Time m_startSpread;
    int32_t m_plane = -1;
};

/// Closed-loop message flows: each flow keeps QueueDepth messages of MessageSize outstanding,
/// Messages of them (0: until stop_time).
class MessageWorkload : public Workload
{
  public:
    static TypeId GetTypeId();

  protected:
    /// A flow src -> dst with this workload's message options and a start offset drawn from
    /// the shared stream (StartSpread).
    lfsim::FlowSpec Flow(const lfsim::WorkloadEnv& env, uint32_t index, uint32_t src,
                         uint32_t dst) const;
    uint64_t m_messageSize = 65536;
    uint32_t m_messages = 0;
    uint32_t m_queueDepth = 1;
};

} // namespace ns3

namespace lfsim
{

class RunContext;
struct WorkloadInstance;

/// What a fabric built (each fabric derives its own: devices, NICs, the next RNG stream), for
/// the patterns that install themselves on it.
class FabricNetwork
{
  public:
    virtual ~FabricNetwork() = default;
    /// The ns-3 node of host number `host` (what a pattern aggregates to a host: its CPU).
    virtual ns3::Ptr<ns3::Node> HostNode(uint32_t host) const = 0;
    int64_t stream = 0; ///< next free RNG stream; an installer takes what it uses
    /// Streams the devices took (switches' ECN marking, fibres' errors), from their base.
    int64_t deviceStreams = 0;
};

/// A pattern installed by itself (applications on the fabric's hosts); Finish adds its tables
/// and metrics after the run, their names prefixed with `prefix` ("" for the first workload,
/// else its name and "_", as the generic flows' metrics are).
class InstalledWorkload
{
  public:
    virtual ~InstalledWorkload() = default;
    virtual void Finish(RunContext& ctx, const std::string& prefix) = 0;
};

/// Installs a pattern on a fabric's network (it casts the network to the fabric's type);
/// throws std::invalid_argument naming the key on a configuration it cannot build.
using Installer = std::function<std::unique_ptr<InstalledWorkload>(
    RunContext& ctx, const WorkloadInstance& w, FabricNetwork& network)>;

struct WorkloadInfo
{
    std::string name;   ///< as a scenario names it: "Incast"
    std::string typeId; ///< "ns3::IncastWorkload"
    std::string description;
    /// The fabrics it runs on when it installs itself (empty: a generic pattern, turned into
    /// FlowSpecs that every fabric carries).
    std::vector<std::string> fabrics;
    Installer install;
    /// Classes a scenario using this pattern may also configure, as sections (e.g. fio's
    /// FioJob and BlockTarget): offered only when a workload of the pattern is present.
    std::vector<std::string> classes = {};
};

/// Used by a pattern's static registrar (one line).
bool RegisterWorkload(WorkloadInfo info);
const std::vector<WorkloadInfo>& Workloads();
/// Throws std::invalid_argument naming the accepted patterns.
const WorkloadInfo& FindWorkload(const std::string& name, const std::string& key);

/// One configured workload, created with its attributes.
struct WorkloadInstance
{
    std::string name;
    const WorkloadInfo* info = nullptr;
    ns3::Ptr<ns3::Workload> object;
};

/// Creates the configured workloads; throws std::invalid_argument naming the key.
std::vector<WorkloadInstance> MakeWorkloads(const std::vector<InstanceConfig>& cfgs,
                                            const std::string& fabric);

/// The patterns of a run that install themselves, installed on a fabric's network in workload
/// order, and finished after the run with their prefixes ("" for the first workload).
class InstalledWorkloads
{
  public:
    void Install(RunContext& ctx, FabricNetwork& network);
    void Finish(RunContext& ctx);

  private:
    std::vector<std::pair<uint32_t, std::unique_ptr<InstalledWorkload>>> m_apps;
};

/// The workloads' names, in order (the report's labels).
std::vector<std::string> WorkloadNames(const std::vector<WorkloadInstance>& workloads);

/// The flows of every generic workload, in workload order.
std::vector<FlowSpec> GenerateFlows(const std::vector<WorkloadInstance>& workloads,
                                    const WorkloadEnv& env);

} // namespace lfsim

#endif
