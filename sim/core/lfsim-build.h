/*
 * A fabric of ports, switches and cables made from a graph (fc, roce): the nodes, the ports in
 * graph order and one cable per link, written once. A fabric supplies only what differs, as
 * the members of a `Parts` class (FabricParts gives the ones it has nothing to add to):
 *
 *   Ptr<Device> NewPort();                   // a port, before its node has it (its MAC, ...)
 *   void PortAdded(uint32_t gp, int32_t s, Device& d); // on its node; s: switch, -1 at a host
 *   Ptr<Switch> NewSwitch(uint32_t s, const std::string& name); // switch number s, graph name
 *   void Speed(const Graph& g, const GraphLink& l, Device& a, Device& b); // before Attach
 *   void Attached(Device& a, Device& b);     // after both ends are on the channel
 *
 * The order every object is made in (nodes, devices, MAC addresses, switches, channels) is
 * part of a run's results: it numbers nodes and devices and draws addresses. Set-up only,
 * time and memory linear in links.
 */
#ifndef LFSIM_BUILD_H
#define LFSIM_BUILD_H

#include "lfsim-graph.h"
#include "ns3/node.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lfsim
{

/// The hooks of a fabric that has nothing to add there.
struct FabricParts
{
    template <class Device>
    void
    PortAdded(uint32_t, int32_t, Device&)
    {
    }

    template <class Device>
    void
    Attached(Device&, Device&)
    {
    }
};

/// Host nodes and their ports (one per address, HostPorts() order), then the switch nodes and
/// their switches, then the switches' ports in graph order (each switch's by port number),
/// filling the topology's hosts, hostPorts, hostOf, switchNodes, switches, ports, portLabels
/// and portSwitch. Returns each graph port's index in t.ports, for MakeCables.
template <class Topology, class Parts>
std::vector<uint32_t>
MakePorts(const Graph& g, Topology& t, Parts& parts)
{
    const auto& nodes = g.Nodes();
    const auto& gports = g.Ports();
    std::vector<uint32_t> index(gports.size(), NONE);
    const std::vector<uint32_t> hostPorts = g.HostPorts();
    t.ports.reserve(gports.size());
    t.portLabels.reserve(gports.size());
    t.portSwitch.reserve(gports.size());
    t.hostPorts.reserve(hostPorts.size());
    t.hostOf.reserve(hostPorts.size());
    t.switches.reserve(g.Switches().size());
    t.hosts.Create(g.Hosts().size());
    for (uint32_t p : hostPorts)
    {
        auto d = parts.NewPort();
        const uint32_t host = g.Rank(gports[p].node);
        t.hosts.Get(host)->AddDevice(d);
        parts.PortAdded(p, -1, *d);
        index[p] = t.ports.size();
        t.ports.push_back(d);
        t.portLabels.push_back(g.PortLabel(p));
        t.portSwitch.push_back(-1);
        t.hostPorts.push_back(d);
        t.hostOf.push_back(host);
    }
    for (uint32_t s : g.Switches())
    {
        ns3::Ptr<ns3::Node> node = ns3::CreateObject<ns3::Node>();
        t.switchNodes.Add(node);
        auto sw = parts.NewSwitch(t.switches.size(), nodes[s].name);
        node->AggregateObject(sw);
        t.switches.push_back(sw);
    }
    for (uint32_t p = 0; p < gports.size(); ++p)
    {
        if (nodes[gports[p].node].host)
        {
            continue;
        }
        const uint32_t s = g.Rank(gports[p].node);
        auto d = parts.NewPort();
        t.switchNodes.Get(s)->AddDevice(d);
        parts.PortAdded(p, int32_t(s), *d);
        index[p] = t.ports.size();
        t.ports.push_back(d);
        t.portLabels.push_back(g.PortLabel(p));
        t.portSwitch.push_back(s);
        t.switches[s]->AddPort(d);
    }
    return index;
}

/// One channel per link of `g`, in link order, between the ports `index` (from MakePorts)
/// gives its ends: the cable's attributes and length (ConfigureCable), then its speed
/// (Parts::Speed), then both ends attached. Fills t.peer and t.channels.
template <class Channel, class Topology, class Parts>
void
MakeCables(const Graph& g, Topology& t, const std::vector<uint32_t>& index, Parts& parts)
{
    t.peer.assign(t.ports.size(), NONE);
    t.channels.reserve(g.Links().size());
    for (const GraphLink& l : g.Links())
    {
        const auto& a = t.ports[index[l.a]];
        const auto& b = t.ports[index[l.b]];
        t.peer[index[l.a]] = index[l.b];
        t.peer[index[l.b]] = index[l.a];
        ns3::Ptr<Channel> ch = ns3::CreateObject<Channel>();
        ConfigureCable(g, l, ch, a, b);
        parts.Speed(g, l, *a, *b);
        a->Attach(ch);
        b->Attach(ch);
        parts.Attached(*a, *b);
        t.channels.push_back(ch);
    }
}

} // namespace lfsim

#endif
