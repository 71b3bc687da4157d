/*
 * Shortest-path routing shared by every fabric's helper: what a link-state protocol (FSPF in
 * FC, OSPF/BGP-ECMP in IP fabrics) converges to, computed once when the topology is built.
 */
#ifndef LFSIM_ROUTING_H
#define LFSIM_ROUTING_H

#include <cstdint>
#include <utility>
#include <vector>

namespace lfsim
{

/// Per switch: (neighbour switch, local port) for each inter-switch link.
using SwitchGraph = std::vector<std::vector<std::pair<uint32_t, uint32_t>>>;

/// For a destination attached to switch `home`: every switch's ports on a shortest path
/// toward it (all equal-cost ones); empty for `home` itself and for unreachable switches.
std::vector<std::vector<uint32_t>> EqualCostPorts(const SwitchGraph& g, uint32_t home);

} // namespace lfsim

#endif
