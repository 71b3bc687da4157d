/*
 * lfsim: the run loop every fabric shares — configuration, recorders, metrics, fabric registry.
 */
#ifndef LFSIM_RUN_H
#define LFSIM_RUN_H

#include "lfsim-graph.h"
#include "lfsim-topology.h"
#include "ns3/nstime.h"
#include "ns3/random-variable-stream.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace ns3
{
class Report;
}

namespace lfsim
{

struct WorkloadInstance;

/// What a table column holds. Every value is kept as a double (exact for integers below 2^53:
/// one storage for the hot paths that append rows); the kind says what leaves the core: Real a
/// float64, Int an int64 (counts, bytes, ids, nanoseconds), Bool a bool.
enum class ColumnKind : uint8_t
{
    Real,
    Int,
    Bool,
};

/// A column's name and kind; for an Int column whose values index a list of labels
/// (RunContext::SetLabels), that list's name: Python shows the labels beside the ids.
struct ColumnSpec
{
    ColumnSpec(const char* n)
        : name(n)
    {
    }

    ColumnSpec(std::string n, ColumnKind k = ColumnKind::Real, std::string l = "")
        : name(std::move(n))
        , kind(k)
        , labels(std::move(l))
    {
    }

    std::string name;
    ColumnKind kind = ColumnKind::Real;
    std::string labels;
};

/// An int64 column (a count, a byte count, an id, a time in integer nanoseconds).
inline ColumnSpec
IntColumn(std::string name)
{
    return {std::move(name), ColumnKind::Int};
}

/// A bool column (stored as 0 or 1).
inline ColumnSpec
BoolColumn(std::string name)
{
    return {std::move(name), ColumnKind::Bool};
}

/// An int64 column of indices into the labels named `labels` (e.g. a flow's source host).
inline ColumnSpec
LabelColumn(std::string name, std::string labels)
{
    return {std::move(name), ColumnKind::Int, std::move(labels)};
}

/// Column-oriented table of doubles (all columns have the same length), each column of a kind.
class Table
{
  public:
    Table() = default;
    explicit Table(const std::vector<ColumnSpec>& columns);

    void
    Append(std::initializer_list<double> row)
    {
        size_t i = 0;
        for (double v : row)
        {
            m_data[i++].push_back(v);
        }
        if (m_spillRows && m_data[0].size() >= m_spillRows)
        {
            Spill();
        }
    }
    /// One row of Columns().size() values.
    void AppendRow(const double* row);
    /// Rows in memory (not spilled).
    size_t
    Rows() const
    {
        return m_data.empty() ? 0 : m_data[0].size();
    }
    /// Bounded memory: whenever `rows` rows are in memory they are appended to raw files
    /// `<path>.<column index>.f64` (doubles in the machine's order) and dropped from memory.
    /// Throws std::invalid_argument if a file cannot be opened.
    void SpillTo(const std::string& path, size_t rows);
    /// Rows written to the spill files so far (they come before the rows in memory).
    uint64_t
    Spilled() const
    {
        return m_spilled;
    }
    const std::string&
    SpillPath() const
    {
        return m_spillPath;
    }
    /// Writes the rows in memory too (a spilling table then has all its rows in its files).
    void FlushSpill();
    const std::vector<std::string>&
    Columns() const
    {
        return m_columns;
    }
    /// The kind of each column, in the order of Columns().
    const std::vector<ColumnKind>&
    Kinds() const
    {
        return m_kinds;
    }
    /// For each column, the labels its values index ("" for none), in the order of Columns().
    const std::vector<std::string>&
    LabelRefs() const
    {
        return m_labelRefs;
    }
    /// Says that a column's values index the labels named `labels` (for a table made before
    /// the name of its labels is known, e.g. one prefixed with its workload's name).
    void SetLabelRef(const std::string& column, std::string labels);
    std::vector<double>&
    Column(size_t i)
    {
        return m_data[i];
    }
    const std::vector<double>& Column(const std::string& name) const;
    void Reserve(size_t rows);

    Table(Table&&) = default;
    Table& operator=(Table&&) = default;
    ~Table();

  private:
    void Spill();

    std::vector<std::string> m_columns;
    std::vector<ColumnKind> m_kinds;
    std::vector<std::string> m_labelRefs;
    std::vector<std::vector<double>> m_data;
    size_t m_spillRows = 0;
    std::string m_spillPath;
    std::vector<std::FILE*> m_files;
    uint64_t m_spilled = 0;
};

/// A metric: a measurement (double), a count (int64_t), a flag (bool), a label (string), or a
/// vector of one of them.
using MetricValue = std::variant<double, std::vector<double>, std::string, bool,
                                 std::vector<std::string>, int64_t, std::vector<int64_t>>;

/// The fastest of ns-3's schedulers on lfsim's loads (docs/bench.md).
constexpr const char* DEFAULT_SCHEDULER = "ns3::LfsimScheduler";

/// The TypeIds of the event schedulers a run may use (every ns3::Scheduler with a constructor).
std::vector<std::string> SchedulerTypes();

struct RunConfig
{
    std::string fabric;
    uint32_t seed = 1;
    ns3::Time stopTime;
    ns3::Time sampleInterval; ///< zero: recorders sample on change only
    std::vector<std::string> record;
    /// (TypeId name, attribute name, value string), applied with Config::SetDefault.
    std::vector<std::array<std::string, 3>> attributes;
    /// Packet captures: directory the fabric writes one .pcap per port into (empty: none).
    std::string pcapDir;
    /// Port labels to capture, or the single entry "all".
    std::vector<std::string> pcapPorts;
    /// End the run as soon as the fabric's DeadlockDetector reports a deadlock.
    bool stopOnDeadlock = false;
    /// The event list's implementation (ns-3's GlobalValue of that name): an ns3::Scheduler.
    /// Every scheduler runs events in the same order (time, then scheduling order), so results
    /// do not depend on it; speed does.
    std::string schedulerType = DEFAULT_SCHEDULER;
    /// Bounded memory for time series: a directory where each series spills its rows once
    /// `spillRows` are in memory (empty: series stay in memory).
    std::string spillDir;
    size_t spillRows = size_t(1) << 20;
    /// The topology generator and its attributes (and tables, for a listed graph).
    InstanceConfig topology;
    /// The workloads, in order (the first one's metrics are the run's headline metrics).
    std::vector<InstanceConfig> workloads;
    /// The faults timeline (lfsim-faults.h): one key -> value map per entry.
    std::vector<std::map<std::string, std::string>> faults;
};

/// What a fabric sees while it builds and after the run.
class RunContext
{
  public:
    explicit RunContext(const RunConfig& cfg);
    ~RunContext();

    const RunConfig& config;

    /// The shared parts, made by Run() before the fabric builds (for a fabric that uses them):
    /// the topology's graph, its generator (routing, failed link), the workloads, the report.
    Graph graph;
    ns3::Ptr<ns3::Topology> topology;
    std::vector<WorkloadInstance> workloads;
    ns3::Ptr<ns3::Report> report;
    /// Node-level faults a fabric offers to the faults timeline: for a node and a kind of
    /// fault (e.g. "h1", "pfc_storm"; "sw0", "buffer"), what to call with true and the
    /// (checked) entry when the fault starts, false when it ends; an empty function if the node
    /// has no such fault. Asked only for the faults a scenario lists: nothing is kept per node.
    using NodeFault = std::function<void(bool on, const std::map<std::string, std::string>&)>;
    std::function<NodeFault(const std::string& node, const std::string& what)> nodeFault;

    bool Records(const std::string& recorder) const;
    /// A time series (long form: time_s, id, values...; id indexes the labels of the same
    /// name). The reference stays valid.
    Table& Series(const std::string& name, const std::vector<ColumnSpec>& valueColumns);
    Table& AddTable(const std::string& name, const std::vector<ColumnSpec>& columns);
    /// A table filled during the run (its columns' kinds come with it).
    Table& AddTable(const std::string& name, Table&& table);
    void SetLabels(const std::string& name, std::vector<std::string> labels);
    /// The C++ type says the metric's kind: an integer type makes a count (int64_t), bool a
    /// flag, a floating-point type a measurement; strings and vectors as they are.
    template <typename T>
    void
    SetMetric(const std::string& name, T v)
    {
        if constexpr (std::is_same_v<T, bool>)
        {
            metrics[name] = v;
        }
        else if constexpr (std::is_integral_v<T>)
        {
            metrics[name] = int64_t(v);
        }
        else if constexpr (std::is_floating_point_v<T>)
        {
            metrics[name] = double(v);
        }
        else if constexpr (std::is_convertible_v<T, std::string>)
        {
            metrics[name] = std::string(v);
        }
        else
        {
            metrics[name] = MetricValue(std::move(v));
        }
    }
    /// Calls fn every sample interval (if one is configured) until the stop time.
    void SamplePeriodically(std::function<void()> fn);

    /// Packet captures. A fabric that writes captures calls CheckPcapPorts once with the
    /// labels of all its ports after building its topology, then opens PcapPath(label) (with
    /// lfsim::PortCapture, lfsim-capture.h) for every port where PcapWanted(label). Run()
    /// rejects a capture request when the fabric never called CheckPcapPorts (it writes no
    /// captures).
    /// True if captures are on and the port is listed (or "all" is).
    bool PcapWanted(const std::string& portLabel) const;
    /// pcapDir + "/" + label with '/' replaced by '_' + ".pcap".
    std::string PcapPath(const std::string& portLabel) const;
    /// Throws std::invalid_argument naming the first requested label that is not in allLabels.
    void CheckPcapPorts(const std::vector<std::string>& allLabels) const;
    /// Whether CheckPcapPorts has been called (used by Run()).
    bool
    PcapPortsChecked() const
    {
        return m_pcapChecked;
    }

    std::map<std::string, MetricValue> metrics;
    std::map<std::string, Table> series;
    std::map<std::string, Table> tables;
    std::map<std::string, std::vector<std::string>> labels;

  private:
    void Sample();
    std::vector<std::function<void()>> m_samplers;
    mutable bool m_pcapChecked = false;
};

class Fabric
{
  public:
    virtual ~Fabric() = default;
    /// Build topology and applications and connect recorders. Throws std::invalid_argument.
    virtual void Build(RunContext& ctx) = 0;
    /// Called after the simulation ends: compute metrics and tables.
    virtual void Finish(RunContext& ctx) = 0;
};

struct FabricInfo
{
    std::string name;
    std::string description;
    std::vector<std::string> typeIds;                           ///< configurable classes
    std::vector<std::pair<std::string, std::string>> recorders; ///< name, description
    std::function<std::unique_ptr<Fabric>()> factory;
    /// Builds on the shared topology, workload and report (false: an experiment with its own
    /// network, e.g. iscsi_burst).
    bool openFabric = true;
};

/// Used by a model's static registrar (one line per fabric).
bool RegisterFabric(FabricInfo info);
/// A module that plugs into another's fabric (e.g. a congestion control into "roce") adds its
/// configurable class with one line; works whatever the order of static registration.
bool ExtendFabric(const std::string& fabric, const std::string& typeId);
const std::vector<FabricInfo>& Fabrics();
const FabricInfo& FindFabric(const std::string& name); ///< throws std::invalid_argument

struct RunResult
{
    double simTimeS = 0;
    uint64_t events = 0;
    /// Wall seconds spent building the fabric and in the event loop (not in reporting).
    double buildWallS = 0;
    double eventsWallS = 0;
    std::map<std::string, MetricValue> metrics;
    std::map<std::string, Table> series;
    std::map<std::string, Table> tables;
    std::map<std::string, std::vector<std::string>> labels;
};

using ProgressFn = std::function<void(double simS, double stopS)>;
RunResult Run(const RunConfig& cfg, const ProgressFn& progress = nullptr);

/// Ends the current run early (e.g. a workload that has finished).
void StopRunNow();

/// Jain's fairness index of a set of rates.
double JainFairness(const std::vector<double>& x);

/// A start time drawn uniformly in [0, spread) at picosecond grain (0 if spread is 0): how
/// every fabric's StartSpread staggers its senders from the scenario seed.
ns3::Time RandomStart(ns3::Ptr<ns3::UniformRandomVariable> rv, ns3::Time spread);

/// Quantile q in [0, 1] with linear interpolation between order statistics (0 if empty).
double Percentile(std::vector<double> v, double q);

} // namespace lfsim

#endif
