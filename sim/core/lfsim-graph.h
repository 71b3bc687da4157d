/*
 * The network as a graph, whatever the link technology: hosts and switches, their ports, and
 * the cables between ports. Topology generators and files produce one; each fabric turns it
 * into devices and channels of its technology (FC N_Ports and E_Ports, Ethernet ports), and
 * the routing every fabric's switches use is computed on it.
 */
#ifndef LFSIM_GRAPH_H
#define LFSIM_GRAPH_H

#include "lfsim-routing.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace lfsim
{

class LinkFaults;

constexpr uint32_t NONE = std::numeric_limits<uint32_t>::max();

struct GraphNode
{
    std::string name;
    bool host = false;
    std::vector<uint32_t> ports; ///< its ports, by port number
    /// Attributes set on this node's own per-node objects only (a host's HostCpu): (TypeId,
    /// name, value).
    std::vector<std::array<std::string, 3>> attributes;
};

/// Attributes set on one cable's channel and its two devices only: (TypeId, name, value).
using LinkAttributes = std::vector<std::array<std::string, 3>>;

/// 16 bytes: its name is in the graph (Graph::PortName), as the few texts of cables are.
struct GraphPort
{
    uint32_t node = NONE;
    uint32_t number = 0;  ///< on its node: 0, 1, ...
    uint32_t name = 0;    ///< Graph::PortName: optional, for a host port (e.g. the plane "A")
    uint32_t link = NONE; ///< the cable it is on
};

/// One cable between two ports. Its texts are kept once in the graph (a fabric has a few
/// speeds and keys): Graph::Speed, SpeedKey, Where and Attributes read them.
struct GraphLink
{
    uint32_t a = NONE; ///< port
    uint32_t b = NONE; ///< port
    /// Graph::Speed: the line rate by the fabric's name for it ("25GbE", "32GFC"); "": the
    /// device's default.
    uint32_t speed = 0;
    /// Graph::SpeedKey: where the speed was given (e.g. "topology.HostSpeed"), for errors.
    uint32_t speedKey = 0;
    /// Graph::Where: e.g. "links[3]" or "topology.txt line 12", for errors; 0: "link A-B".
    uint32_t where = 0;
    /// Graph::Attributes: its own attributes (NONE: none).
    uint32_t attributes = NONE;
    double length = -1;  ///< metres; < 0: the channel's default Length
    ns3::Time delay{-1}; ///< >= 0: propagation delay instead of a length
    /// The faults of the channel the fabric built for this cable (set by ConfigureCable when
    /// the channel is a FaultableChannel), for the run's faults timeline.
    mutable LinkFaults* faults = nullptr;
};

/// One switch's forwarding table: the ports toward each destination address, as intervals of
/// consecutive addresses that use the same port set. A leaf of a leaf-spine needs a dozen
/// intervals whatever the fabric's size (its own hosts, then "up" before and after them), so a
/// table costs memory in proportion to the switch, not to the number of hosts, and a lookup
/// reads one or two cache lines.
struct SwitchRoutes
{
    std::vector<uint32_t> start; ///< first address of each interval, ascending; start[0] == 0
    std::vector<uint32_t> set;   ///< per interval: its index in `sets`
    /// The distinct port sets, each once; sets[0] is empty (no route).
    std::vector<std::vector<uint32_t>> sets{{}};

    /// Ports toward address `a` (empty: no route).
    const std::vector<uint32_t>&
    Ports(uint32_t a) const
    {
        const auto it = std::upper_bound(start.begin(), start.end(), a);
        return sets[set[it - start.begin() - 1]];
    }
};

/// A route: the switch ports toward one destination address at every switch.
class RouteTable
{
  public:
    /// Ports of switch `s` toward address `a` (empty: no route).
    const std::vector<uint32_t>&
    Ports(uint32_t s, uint32_t a) const
    {
        return m_switch[s].Ports(a);
    }
    uint32_t
    Switches() const
    {
        return m_switch.size();
    }
    uint32_t
    Addresses() const
    {
        return m_addresses;
    }
    std::vector<SwitchRoutes> m_switch;
    uint32_t m_addresses = 0;
};

class Graph
{
  public:
    /// Throws std::invalid_argument if the name is taken or empty.
    uint32_t AddNode(const std::string& name, bool host);
    /// A new port on `node`, numbered after its others.
    uint32_t AddPort(uint32_t node, const std::string& name = "");
    /// A cable between two free ports.
    uint32_t AddLink(uint32_t portA, uint32_t portB, const std::string& speed = "",
                     const std::string& speedKey = "");
    /// Room for `nodes` nodes and `links` cables (and their ports), so that a large graph is
    /// built without regrowing its arrays (a generator knows its size: ExpectedSize).
    void Reserve(uint64_t nodes, uint64_t links);
    /// A new port on each node and a cable between them; returns the link.
    uint32_t Connect(uint32_t nodeA, uint32_t nodeB, const std::string& speed = "",
                     const std::string& speedKey = "");
    /// Adds `node` to a named group (e.g. "leaf0", "pod1"): host selections may use its name.
    void AddToGroup(const std::string& group, uint32_t node);

    const std::vector<GraphNode>&
    Nodes() const
    {
        return m_nodes;
    }
    /// Sets an attribute of node `node`'s own per-node objects (GraphNode::attributes).
    void
    SetNodeAttribute(uint32_t node, const std::string& typeId, const std::string& name,
                     const std::string& value)
    {
        m_nodes[node].attributes.push_back({typeId, name, value});
    }
    const std::vector<GraphPort>&
    Ports() const
    {
        return m_ports;
    }
    std::vector<GraphLink>&
    Links()
    {
        return m_links;
    }
    /// A cable's line rate by the fabric's name for it; "": the device's default.
    const std::string&
    Speed(const GraphLink& l) const
    {
        return m_texts[l.speed];
    }
    /// Where a cable's speed was given (e.g. "topology.HostSpeed", "links[3].speed").
    const std::string&
    SpeedKey(const GraphLink& l) const
    {
        return m_texts[l.speedKey];
    }
    /// Where a cable was given, for errors: "links[3]", or "link h0-leaf0" from its ends.
    std::string Where(const GraphLink& l) const;
    void
    SetWhere(uint32_t link, const std::string& where)
    {
        m_links[link].where = Text(where);
    }
    /// A cable's own attributes.
    const LinkAttributes& Attributes(const GraphLink& l) const;
    void SetAttributes(uint32_t link, LinkAttributes attributes);
    /// A port's name ("" if none), e.g. the plane "A" of a host's port.
    const std::string&
    PortName(uint32_t port) const
    {
        return m_texts[m_ports[port].name];
    }
    const std::vector<GraphLink>&
    Links() const
    {
        return m_links;
    }
    const std::map<std::string, std::vector<uint32_t>>&
    Groups() const
    {
        return m_groups;
    }
    /// Node by name, or NONE.
    uint32_t FindNode(const std::string& name) const;

    /// Node index of every host, in host order (the order they were added).
    const std::vector<uint32_t>&
    Hosts() const
    {
        return m_hosts;
    }
    /// Node index of every switch, in switch order.
    const std::vector<uint32_t>&
    Switches() const
    {
        return m_switches;
    }
    /// Host number (0..) of a host node, switch number of a switch node.
    uint32_t
    Rank(uint32_t node) const
    {
        return m_rank[node];
    }
    /// The port at the other end of a port's cable (NONE if it has none).
    uint32_t Peer(uint32_t port) const;

    /// Host ports in address order: host by host, each host's ports by number. A fabric
    /// numbers its addresses (FC N_Ports, IP addresses) in this order.
    std::vector<uint32_t> HostPorts() const;
    /// Address (index in HostPorts()) of each host port; NONE for switch ports.
    std::vector<uint32_t> AddressOfPort() const;
    /// The addresses of host `h` (host number), by port number.
    std::vector<uint32_t> AddressesOf(uint32_t h) const;

    /// The (source, destination) addresses of a flow from host `src` to host `dst`: a pair of
    /// their ports on the same plane (switch component; planes numbered by their first switch:
    /// A = 0, B = 1), the flow's `index` taking the possible pairs in turn; `plane` >= 0 keeps
    /// to that plane. Throws std::invalid_argument naming `key` when no pair is on that plane.
    std::pair<uint32_t, uint32_t> FlowEnds(uint32_t src, uint32_t dst, uint32_t index,
                                           int32_t plane, const std::string& key) const;

    /// A port's label: a one-port host's name ("h3"); "h3/A" or "h3/p1" for a host with
    /// several ports (its port's name, else its number); "leaf0/p2" for a switch port.
    std::string PortLabel(uint32_t port) const;

    /// Hosts (host numbers) selected by `expr`: comma-separated items, each `all`, a node
    /// name, a name range `h1-h16` (same prefix, numeric suffixes), an index range `0-15`
    /// (host numbers), or a group name; an item starting with `!` removes what it selects.
    /// Order: as the items list them (each group in host order), repeats dropped. Throws
    /// std::invalid_argument "KEY: got 'EXPR'; accepted: ..." when an item selects nothing.
    std::vector<uint32_t> SelectHosts(const std::string& expr, const std::string& key) const;

    /// Throws std::invalid_argument when the graph cannot be built: a port without a cable, a
    /// host with no port, a cable between two ports of one node, switches that are not all
    /// reachable from every host.
    void Check(const std::string& key) const;

    /// The inter-switch links as routing sees them: per switch number, (neighbour switch,
    /// local port number) per cable, by port number. `without`: a link to leave out (NONE:
    /// none).
    SwitchGraph Adjacency(uint32_t without = NONE) const;

    /// Every switch's ports toward every address (HostPorts() order), as `routing` fills the
    /// tables. With `failed` (a link index), the switches at its ends route around it, and so
    /// does every other switch unless `stale` (their tables still from before the failure).
    RouteTable Routes(Routing routing, uint32_t failed = NONE, bool stale = false) const;

  private:
    /// The index of `text` in m_texts, added if new.
    uint32_t Text(const std::string& text);

    std::vector<GraphNode> m_nodes;
    std::vector<GraphPort> m_ports;
    std::vector<GraphLink> m_links;
    std::vector<uint32_t> m_hosts;
    std::vector<uint32_t> m_switches;
    std::vector<uint32_t> m_rank;
    std::unordered_map<std::string, uint32_t> m_byName;
    std::map<std::string, std::vector<uint32_t>> m_groups;
    mutable std::vector<uint32_t> m_plane; ///< plane of each switch, computed on first use
    std::vector<std::string> m_texts{""};  ///< ports' and cables' texts, each once; [0] ""
    std::unordered_map<std::string, uint32_t> m_textIndex{{"", 0}};
    std::vector<LinkAttributes> m_linkAttributes; ///< GraphLink::attributes indexes it
};

/// What every fabric does with a cable of the graph: its per-link attributes on the channel and
/// the two devices (those of their TypeId), then its length, or its delay turned into a length
/// by the channel's PropagationDelayPerMeter, into the channel's Length. Speeds are the
/// fabric's own. Throws std::invalid_argument naming the link's key.
void ConfigureCable(const Graph& g, const GraphLink& l, ns3::Ptr<ns3::Object> channel,
                    ns3::Ptr<ns3::Object> a, ns3::Ptr<ns3::Object> b);

} // namespace lfsim

#endif
