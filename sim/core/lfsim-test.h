/*
 * What every model's ns-3 test cases share: a test case that leaves no simulator state and no
 * changed attribute default behind, so that the cases of a suite are independent; and a run of
 * a fabric put together part by part (topology, workloads, class attributes), as a scenario file
 * is, with accessors of its metrics.
 */
#ifndef LFSIM_TEST_H
#define LFSIM_TEST_H

#include "lfsim-run.h"
#include "lfsim-topology.h"
#include "lfsim-workload.h"
#include "ns3/config.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lfsim
{

/// Attribute values of one part (the topology, a workload): (name, value).
using Attrs = std::vector<std::pair<std::string, std::string>>;

/// A run of a fabric, its parts named as a scenario names them:
///
///     lfsim::TestRun run("roce", "2ms");
///     run.Topology("Star", {{"Hosts", "9"}})
///         .Workload("incast", "Incast", {{"Destinations", "h0"}})
///         .Class("ns3::Report", "Warmup", "200us");
///     lfsim::RunResult r = run.Run();
class TestRun
{
  public:
    TestRun(const std::string& fabric, const std::string& stop, uint32_t seed = 1)
    {
        config.fabric = fabric;
        config.stopTime = ns3::Time(stop);
        config.seed = seed;
    }

    /// The topology: a registered generator (FatTree, LeafSpine, ...) and its attributes.
    TestRun&
    Topology(const std::string& generator, Attrs attrs = {})
    {
        config.topology = {"topology", FindTopology(generator).typeId, std::move(attrs), {}};
        return *this;
    }

    /// A listed graph (generator Graph): rows of nodes (name, kind) and links (a, b, ...).
    TestRun&
    ListedGraph(Rows nodes, Rows links, Attrs attrs = {})
    {
        Topology("Graph", std::move(attrs));
        config.topology.tables = {{"nodes", std::move(nodes)}, {"links", std::move(links)}};
        return *this;
    }

    /// A workload named `name` of a registered pattern (Incast, OpenLoop, Fcp, ...).
    TestRun&
    Workload(const std::string& name, const std::string& pattern, Attrs attrs = {})
    {
        config.workloads.push_back(
            {name, FindWorkload(pattern, "workload." + name).typeId, std::move(attrs), {}});
        return *this;
    }

    /// One attribute of the topology (part "topology") or of a workload (by its name); a value
    /// given before is replaced.
    TestRun&
    Set(const std::string& part, const std::string& attribute, const std::string& value)
    {
        InstanceConfig* p = part == "topology" ? &config.topology : nullptr;
        for (auto& w : config.workloads)
        {
            p = w.name == part ? &w : p;
        }
        if (!p)
        {
            throw std::invalid_argument("TestRun: no part named '" + part + "'");
        }
        for (auto& [name, v] : p->attributes)
        {
            if (name == attribute)
            {
                v = value;
                return *this;
            }
        }
        p->attributes.emplace_back(attribute, value);
        return *this;
    }

    /// The same attribute of every workload added so far.
    TestRun&
    SetEveryWorkload(const std::string& attribute, const std::string& value)
    {
        for (const auto& w : config.workloads)
        {
            Set(w.name, attribute, value);
        }
        return *this;
    }

    /// A class attribute (ns3::RoceSwitch, ns3::Report, ...), as a scenario's class section
    /// sets it: applied with Config::SetDefault by lfsim::Run, and left set after it.
    TestRun&
    Class(const std::string& typeId, const std::string& attribute, const std::string& value)
    {
        config.attributes.push_back({typeId, attribute, value});
        return *this;
    }

    RunResult
    Run() const
    {
        return lfsim::Run(config);
    }

    RunConfig config;
};

/// A metric of a run that must be there, by its type: a measurement or a count, as a double.
inline double
Metric(const RunResult& r, const std::string& name)
{
    const MetricValue& v = r.metrics.at(name);
    if (const auto* n = std::get_if<int64_t>(&v))
    {
        return double(*n);
    }
    return std::get<double>(v);
}

/// A count (an integer metric) of a run that must be there.
inline int64_t
Count(const RunResult& r, const std::string& name)
{
    return std::get<int64_t>(r.metrics.at(name));
}

inline const std::vector<double>&
Metrics(const RunResult& r, const std::string& name)
{
    return std::get<std::vector<double>>(r.metrics.at(name));
}

inline bool
Flag(const RunResult& r, const std::string& name)
{
    return std::get<bool>(r.metrics.at(name));
}

/// A column of one of the run's tables.
inline const std::vector<double>&
Column(const RunResult& r, const std::string& table, const std::string& column)
{
    return r.tables.at(table).Column(column);
}

/// The k = 4 fat-tree (16 hosts) of `fabric` under web search flows arriving at 70 % of every
/// host's line, to random other hosts, for `stop`.
inline TestRun
LoadedFatTree(const std::string& fabric, const std::string& stop, uint32_t seed)
{
    TestRun run(fabric, stop, seed);
    run.Topology("FatTree", {{"K", "4"}})
        .Workload("web", "OpenLoop", {{"SizeCdf", "websearch"}, {"Load", "0.7"}});
    return run;
}

/// Three congested runs of `fabric`, each named: a 4:1 oversubscribed leaf-spine (every host of
/// leaf0 writes 256 KiB messages to one of leaf1 and back, through one uplink each way), a k = 4
/// fat-tree incast (the hosts of pods 1-3 to h0), and last a dual-plane leaf-spine incast
/// (leaf1's hosts to h0, two messages outstanding, the flows alternating between the planes).
inline std::vector<std::pair<std::string, TestRun>>
CongestedRuns(const std::string& fabric, const std::string& stop)
{
    std::vector<std::pair<std::string, TestRun>> runs;
    TestRun over(fabric, stop);
    over.Topology("LeafSpine", {{"Leaves", "2"}, {"Spines", "1"}, {"HostsPerLeaf", "4"}})
        .Workload("cross", "Permutation", {{"Shift", "4"}, {"MessageSize", "262144"}});
    runs.emplace_back("oversubscribed leaf-spine", over);
    TestRun fat(fabric, stop);
    fat.Topology("FatTree", {{"K", "4"}})
        .Workload("incast", "Incast", {{"Hosts", "pod1,pod2,pod3"}, {"Destinations", "h0"}});
    runs.emplace_back("fat-tree incast", fat);
    TestRun dual(fabric, stop);
    dual.Topology("LeafSpine",
                  {{"Leaves", "2"}, {"Spines", "2"}, {"HostsPerLeaf", "4"}, {"Planes", "2"}})
        .Workload("incast", "Incast",
                  {{"Hosts", "leaf1"}, {"Destinations", "h0"}, {"QueueDepth", "2"}});
    runs.emplace_back("dual planes", dual);
    return runs;
}

class ModelTestCase : public ns3::TestCase
{
  public:
    using ns3::TestCase::TestCase;

  protected:
    void
    DoTeardown() override
    {
        ns3::Simulator::Destroy();
        ns3::Config::Reset(); // undo Config::SetDefault of the case
    }

    /// Flows and bytes at the end of a run of generic flows of one message each, counted from
    /// the start (Report.Warmup 0): the report's counts agree with its flows table; a completed
    /// flow delivered exactly its size, any other no more, one not yet started nothing.
    void ExpectFlowsConserved(const RunResult& r);
    /// Two runs that must be the same: every metric, every table, the event count.
    void ExpectSameRun(const RunResult& a, const RunResult& b);
    /// A lone message's flow (the first row of the flows table) completed, within 1 % of its
    /// ideal FCT and never before it.
    void ExpectIdealMet(const RunResult& r, const std::string& what);
    /// A loaded run of one-message flows, `run(seed)`: every completed flow's slowdown >= 1,
    /// enough completed (and some still in flight) to mean something, flows and bytes
    /// conserved; the same seed gives the same run, another seed another. Returns the run of
    /// seed 1 for the fabric's own checks.
    RunResult ExpectLoadedRun(const std::function<TestRun(uint32_t seed)>& run);
    /// Dual planes: host `host`'s links in plane A and in plane B each carried more than half
    /// a line's worth (both directions together) over the run.
    void ExpectBothPlanesBusy(const RunResult& r, const std::string& host);
};

inline void
ModelTestCase::ExpectFlowsConserved(const RunResult& r)
{
    const auto& start = Column(r, "flows", "start_us");
    const auto& done = Column(r, "flows", "messages");
    const auto& size = Column(r, "flows", "size_bytes");
    const auto& gbps = Column(r, "flows", "goodput_Gbps");
    const double window = Metric(r, "window_s");
    double started = 0;
    double completed = 0;
    for (size_t f = 0; f < start.size(); ++f)
    {
        const double bytes = gbps[f] * 1e9 / 8 * window;
        const bool begun = start[f] <= r.simTimeS * 1e6;
        started += begun;
        completed += done[f] == 1;
        if (done[f] == 1)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(bytes, size[f], 1e-9 * size[f], "flow " << f << ": its size");
        }
        NS_TEST_EXPECT_MSG_LT_OR_EQ(bytes, size[f] * (1 + 1e-9), "flow " << f << ": no more");
        if (!begun)
        {
            NS_TEST_EXPECT_MSG_EQ(bytes, 0.0, "flow " << f << ": not started, nothing");
        }
    }
    NS_TEST_EXPECT_MSG_EQ(Metric(r, "flows"), double(start.size()), "one row per flow");
    NS_TEST_EXPECT_MSG_EQ(Metric(r, "flows_started"), started, "flows started");
    NS_TEST_EXPECT_MSG_EQ(Metric(r, "flows_completed"), completed, "flows completed");
    NS_TEST_EXPECT_MSG_EQ(Metric(r, "flows_started"),
                          Metric(r, "flows_completed") + Metric(r, "flows_in_flight"),
                          "started = completed + in flight");
}

/// The same numbers, NaN (e.g. the FCT of a flow that completed nothing) equal to NaN.
inline bool
SameValues(const std::vector<double>& x, const std::vector<double>& y)
{
    bool same = x.size() == y.size();
    for (size_t i = 0; same && i < x.size(); ++i)
    {
        same = x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]));
    }
    return same;
}

inline void
ModelTestCase::ExpectSameRun(const RunResult& a, const RunResult& b)
{
    NS_TEST_EXPECT_MSG_EQ(a.events, b.events, "the same events");
    NS_TEST_EXPECT_MSG_EQ(a.metrics.size(), b.metrics.size(), "the same metrics");
    for (const auto& [name, value] : a.metrics)
    {
        const auto it = b.metrics.find(name);
        bool same = it != b.metrics.end();
        if (same && std::holds_alternative<double>(value))
        {
            same = SameValues({std::get<double>(value)}, {std::get<double>(it->second)});
        }
        else if (same && std::holds_alternative<std::vector<double>>(value))
        {
            same = SameValues(std::get<std::vector<double>>(value),
                              std::get<std::vector<double>>(it->second));
        }
        else if (same)
        {
            same = value == it->second;
        }
        NS_TEST_EXPECT_MSG_EQ(same, true, "metric " << name);
    }
    NS_TEST_EXPECT_MSG_EQ(a.tables.size(), b.tables.size(), "the same tables");
    for (const auto& [name, table] : a.tables)
    {
        const auto it = b.tables.find(name);
        NS_TEST_ASSERT_MSG_EQ((it != b.tables.end()), true, "table " << name);
        for (const auto& column : table.Columns())
        {
            NS_TEST_EXPECT_MSG_EQ(SameValues(table.Column(column), it->second.Column(column)), true,
                                  "table " << name << ", column " << column);
        }
    }
}

inline void
ModelTestCase::ExpectIdealMet(const RunResult& r, const std::string& what)
{
    NS_TEST_ASSERT_MSG_EQ(Column(r, "flows", "messages")[0], 1.0, what << ": completed");
    const double fct = Column(r, "flows", "fct_us")[0];
    const double ideal = Column(r, "flows", "ideal_fct_us")[0];
    NS_TEST_EXPECT_MSG_GT_OR_EQ(fct, ideal, what << ": never faster than the ideal");
    NS_TEST_EXPECT_MSG_LT_OR_EQ(fct, 1.01 * ideal, what << ": within 1 % of it");
    NS_TEST_EXPECT_MSG_EQ(Metric(r, "fct_slowdown_p50"), fct / ideal, what << ": the slowdown");
}

inline RunResult
ModelTestCase::ExpectLoadedRun(const std::function<TestRun(uint32_t seed)>& run)
{
    RunResult r = run(1).Run();
    const auto& done = Column(r, "flows", "messages");
    const auto& slowdown = Column(r, "flows", "slowdown");
    uint32_t completed = 0;
    for (size_t f = 0; f < done.size(); ++f)
    {
        if (done[f] == 1)
        {
            ++completed;
            NS_TEST_EXPECT_MSG_GT_OR_EQ(slowdown[f], 1.0, "flow " << f << " beat its ideal");
        }
    }
    NS_TEST_EXPECT_MSG_GT(completed, 50u, "enough flows completed to mean something");
    NS_TEST_EXPECT_MSG_LT(completed, done.size(), "and some were still in flight");
    NS_TEST_EXPECT_MSG_GT_OR_EQ(Metric(r, "fct_slowdown_p50"), 1.0, "the median slowdown");
    ExpectFlowsConserved(r);
    ExpectSameRun(r, run(1).Run());
    NS_TEST_EXPECT_MSG_NE(r.events, run(2).Run().events, "another seed, other arrivals");
    return r;
}

inline void
ModelTestCase::ExpectBothPlanesBusy(const RunResult& r, const std::string& host)
{
    const auto& labels = r.labels.at("links");
    const auto& a = Column(r, "links", "a");
    const auto& ab = Column(r, "links", "util_ab");
    const auto& ba = Column(r, "links", "util_ba");
    double plane[2] = {0, 0};
    for (size_t i = 0; i < a.size(); ++i)
    {
        const std::string& label = labels[size_t(a[i])];
        if (label == host + "/A" || label == host + "/B")
        {
            plane[label == host + "/B"] = ab[i] + ba[i];
        }
    }
    NS_TEST_EXPECT_MSG_GT(plane[0], 0.5, host << "'s plane A link busy");
    NS_TEST_EXPECT_MSG_GT(plane[1], 0.5, host << "'s plane B link busy");
}

} // namespace lfsim

#endif
