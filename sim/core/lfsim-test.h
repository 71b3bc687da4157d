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

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lfsim
{

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
};

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

/// A metric of a run that must be there, by its type.
inline double
Metric(const RunResult& r, const std::string& name)
{
    return std::get<double>(r.metrics.at(name));
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

} // namespace lfsim

#endif
