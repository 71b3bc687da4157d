/*
 * Topology: the shared part that says which hosts and switches exist and how they are cabled,
 * whatever the fabric. A generator is an ns-3 Object (TypeId, attributes) deriving from
 * ns3::Topology, in one file with one registration line:
 *
 *     const bool g_reg = lfsim::RegisterTopology({"FatTree", "ns3::FatTreeTopology", "..."});
 *
 * A scenario selects it with `topology: {generator: FatTree, K: 8, HostSpeed: 25GbE}`; the
 * attributes of ns3::Topology (routing, planes, default speeds, a failed link) apply to every
 * generator.
 */
#ifndef LFSIM_TOPOLOGY_H
#define LFSIM_TOPOLOGY_H

#include "lfsim-graph.h"
#include "lfsim-routing.h"
#include "ns3/object.h"

#include <map>
#include <string>
#include <vector>

namespace lfsim
{

/// Rows of a table handed from a scenario file (e.g. a topology's nodes and links, a flow
/// list): each row maps column names to value strings.
using Rows = std::vector<std::map<std::string, std::string>>;

/// One configured instance of a shared part: which class, its attribute values, and the tables
/// a file gave it (empty for a generator).
struct InstanceConfig
{
    std::string name;   ///< e.g. "topology", or the workload's name
    std::string typeId; ///< e.g. "ns3::LeafSpineTopology"
    std::vector<std::pair<std::string, std::string>> attributes;
    std::map<std::string, Rows> tables;
};

} // namespace lfsim

namespace ns3
{

class Topology : public Object
{
  public:
    static TypeId GetTypeId();

    /// The generator's graph (plane A only; Build duplicates it for Planes 2).
    virtual void Generate(lfsim::Graph& g) = 0;

    /// Nodes and links Generate would make, counted from the attributes alone, so that a
    /// fabric too large for this machine is refused before its graph is made. {0, 0}: the
    /// generator cannot say cheaply (its built graph is checked instead).
    struct Size
    {
        uint64_t nodes = 0;
        uint64_t links = 0;
    };

    virtual Size
    ExpectedSize() const
    {
        return {};
    }
    /// Tables given by a file (nodes, links); a generator that takes none ignores them.
    virtual void
    SetTables(const std::map<std::string, lfsim::Rows>&)
    {
    }

    /// Generate, then duplicate into planes A and B if Planes is 2, mark the failed link, and
    /// check that the graph can be built. Throws std::invalid_argument naming the key.
    lfsim::Graph Build();

    lfsim::Routing
    GetRouting() const
    {
        return lfsim::Routing(m_routing);
    }
    /// Index of the failed link in the built graph (lfsim::NONE if none).
    uint32_t
    GetFailedLink() const
    {
        return m_failed;
    }
    bool
    GetStaleRoutes() const
    {
        return m_staleRoutes;
    }

  protected:
    /// Host-to-switch links' speed ("" = the device's default), and its key for errors.
    std::string m_hostSpeed;
    /// Switch-to-switch links' speed ("" = HostSpeed).
    std::string m_uplinkSpeed;
    /// A host link for generators: h--s at HostSpeed.
    uint32_t HostLink(lfsim::Graph& g, uint32_t host, uint32_t sw) const;
    /// A switch-to-switch link at UplinkSpeed.
    uint32_t Uplink(lfsim::Graph& g, uint32_t a, uint32_t b) const;
    /// Key prefix for errors: "topology".
    static constexpr const char* KEY = "topology";

  private:
    int m_routing = 0;
    uint32_t m_planes = 1;
    std::string m_linkFailure;
    bool m_staleRoutes = false;
    uint32_t m_failed = lfsim::NONE;
};

} // namespace ns3

namespace lfsim
{

struct TopologyInfo
{
    std::string name;   ///< as a scenario names it: "LeafSpine"
    std::string typeId; ///< "ns3::LeafSpineTopology"
    std::string description;
};

/// Used by a generator's static registrar (one line).
bool RegisterTopology(TopologyInfo info);
const std::vector<TopologyInfo>& Topologies();
/// Throws std::invalid_argument naming the accepted generators.
const TopologyInfo& FindTopology(const std::string& name);

/// The configured generator, created with its attributes (per instance, not as defaults).
ns3::Ptr<ns3::Topology> MakeTopology(const InstanceConfig& cfg);

/// Per-instance attributes: an ObjectFactory of `typeId` with `attrs` set, each value checked
/// first (std::invalid_argument "PREFIX.Attr: got 'v'; accepted: ...").
ns3::Ptr<ns3::Object> CreateWithAttributes(
    const std::string& typeId, const std::vector<std::pair<std::string, std::string>>& attrs,
    const std::string& prefix);

/// Parses "a,b*3,c" (a comma list, `x*n` repeating x n times) into numbers; throws
/// std::invalid_argument naming `key` on a malformed list.
std::vector<uint32_t> ParseRunLengths(const std::string& text, const std::string& key);

} // namespace lfsim

#endif
