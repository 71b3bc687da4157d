/*
 * Shortest-path routing shared by every fabric's helper: what a link-state protocol (FSPF in
 * FC, OSPF/BGP-ECMP in IP fabrics) converges to, computed once when the topology is built.
 */
#ifndef LFSIM_ROUTING_H
#define LFSIM_ROUTING_H

#include "ns3/attribute.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace lfsim
{

/// How a fabric's helper fills the switches' tables (the value of a scenario's Routing).
enum Routing : int
{
    SHORTEST_PATH, ///< every equal-cost shortest path (EqualCostPorts)
    CLOCKWISE,     ///< ring only: switch s forwards to s + 1 mod n (ClockwisePorts)
    UP_DOWN        ///< up*/down* from switch 0 (UpDownPorts)
};

/// Checker of a Routing enum attribute: ShortestPath, Clockwise, UpDown.
ns3::Ptr<const ns3::AttributeChecker> RoutingChecker();

/// Per switch: (neighbour switch, local port) for each inter-switch link.
using SwitchGraph = std::vector<std::vector<std::pair<uint32_t, uint32_t>>>;

/// For a destination attached to switch `home`: every switch's ports on a shortest path
/// toward it (all equal-cost ones); empty for `home` itself and for unreachable switches.
std::vector<std::vector<uint32_t>> EqualCostPorts(const SwitchGraph& g, uint32_t home);

/// Up*/down* routing (Autonet, Schroeder et al. 1991): switches are ordered by (BFS level from
/// `root`, index); a hop toward a smaller key is "up". A legal route is zero or more up hops
/// followed by zero or more down hops, so no cycle of buffer dependencies can form. Per switch:
/// the ports of the shortest legal routes toward `home` (down-only if one exists, else up),
/// consistent hop by hop so destination-based tables reproduce them.
std::vector<std::vector<uint32_t>> UpDownPorts(const SwitchGraph& g, uint32_t home,
                                               uint32_t root = 0);

/// Ring routing in one direction: switch s always forwards toward switch (s + 1) mod n (its
/// "clockwise" neighbour), whatever the distance the other way round.
std::vector<std::vector<uint32_t>> ClockwisePorts(const SwitchGraph& g, uint32_t home);

/// The ports of `routing` toward `home` (one of the three above); `root`: UpDown's root.
std::vector<std::vector<uint32_t>> RoutePorts(Routing routing, const SwitchGraph& g, uint32_t home,
                                              uint32_t root = 0);

} // namespace lfsim

#endif
