/*
 * What the tests of the shared parts (graph, generators, routing, host selections, workloads)
 * share: a generator's graph built as a run builds it, the flows of workloads on a graph, and
 * the message of a rejected input.
 */
#ifndef LFSIM_SIMCORE_TEST_H
#define LFSIM_SIMCORE_TEST_H

#include "lfsim-graph.h"
#include "lfsim-test.h"
#include "lfsim-topology.h"
#include "lfsim-workload.h"
#include "ns3/random-variable-stream.h"
#include "ns3/rng-seed-manager.h"

#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace simtest
{

/// The built topology of a registered generator with these attributes (ns3::Topology::Build:
/// planes, the failed link, the graph's checks), as lfsim::Run makes it.
inline ns3::Ptr<ns3::Topology>
MakeTopology(const std::string& generator, const lfsim::Attrs& attrs)
{
    return lfsim::MakeTopology({"topology", lfsim::FindTopology(generator).typeId, attrs, {}});
}

inline lfsim::Graph
Build(const std::string& generator, const lfsim::Attrs& attrs)
{
    return MakeTopology(generator, attrs)->Build();
}

/// The message of the std::invalid_argument that `fn` throws ("" if it throws none).
inline std::string
Error(const std::function<void()>& fn)
{
    try
    {
        fn();
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
    return "";
}

/// Whether `text` starts with `prefix`.
inline bool
StartsWith(const std::string& text, const std::string& prefix)
{
    return text.compare(0, prefix.size(), prefix) == 0;
}

/// Line rate every host gets in the workload tests, bit/s.
constexpr double HOST_RATE = 25e9;

/// The flows of the generic workloads `cfgs` (name, pattern, attributes) on `g`, from `seed`,
/// with the environment a fabric gives: every host at HOST_RATE, the workloads' own streams
/// from 1000000 as the fabrics use.
inline std::vector<lfsim::FlowSpec>
FlowsOf(const lfsim::Graph& g,
        const std::vector<std::tuple<std::string, std::string, lfsim::Attrs>>& cfgs,
        const std::string& stop = "1ms", uint32_t seed = 1, const std::string& fabric = "roce")
{
    ns3::RngSeedManager::SetSeed(seed);
    ns3::RngSeedManager::SetRun(1);
    std::vector<lfsim::InstanceConfig> instances;
    for (const auto& [name, pattern, attrs] : cfgs)
    {
        instances.push_back(
            {name, lfsim::FindWorkload(pattern, "workload." + name).typeId, attrs, {}});
    }
    const std::vector<lfsim::WorkloadInstance> workloads = lfsim::MakeWorkloads(instances, fabric);
    lfsim::WorkloadEnv env;
    env.graph = &g;
    env.stopTime = ns3::Time(stop);
    env.hostRate = [](uint32_t) { return HOST_RATE; };
    env.start = ns3::CreateObject<ns3::UniformRandomVariable>();
    env.start->SetStream(2000);
    env.stream = 1000000;
    return lfsim::GenerateFlows(workloads, env);
}

/// The flows of one workload.
inline std::vector<lfsim::FlowSpec>
Flows(const lfsim::Graph& g, const std::string& pattern, const lfsim::Attrs& attrs,
      const std::string& stop = "1ms", uint32_t seed = 1)
{
    return FlowsOf(g, {{"w", pattern, attrs}}, stop, seed);
}

/// The peer node of a node's port number `k`.
inline uint32_t
PeerNode(const lfsim::Graph& g, uint32_t node, uint32_t k)
{
    return g.Ports()[g.Peer(g.Nodes()[node].ports[k])].node;
}

inline const std::string&
Name(const lfsim::Graph& g, uint32_t node)
{
    return g.Nodes()[node].name;
}

} // namespace simtest

#endif
