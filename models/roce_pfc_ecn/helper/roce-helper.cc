#include "roce-helper.h"

#include "lfsim-routing.h"
#include "ns3/config.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <map>

namespace ns3
{

Ptr<RoceNetDevice>
RoceHelper::AddPort(RoceTopology& t, Ptr<Node> node, int32_t sw, EthSpeed speed)
{
    Ptr<RoceNetDevice> d = CreateObject<RoceNetDevice>();
    d->SetAddress(Mac48Address::Allocate());
    d->SetSpeed(speed);
    node->AddDevice(d);
    if (sw < 0)
    {
        t.portLabels.push_back("h" + std::to_string(t.hostPorts.size()));
        t.portIndex.push_back(0);
    }
    else
    {
        uint32_t idx = t.switches[sw]->GetNPorts();
        t.portLabels.push_back(t.switchNames[sw] + "/p" + std::to_string(idx));
        t.portIndex.push_back(idx);
        t.switches[sw]->AddPort(d);
    }
    t.ports.push_back(d);
    t.portSwitch.push_back(sw);
    return d;
}

void
RoceHelper::Link(RoceTopology& t, Ptr<RoceNetDevice> a, Ptr<RoceNetDevice> b)
{
    Ptr<RoceChannel> ch = CreateObject<RoceChannel>();
    a->Attach(ch);
    b->Attach(ch);
    t.channels.push_back(ch);
}

void
RoceHelper::AddHosts(RoceTopology& t, uint32_t n, EthSpeed speed)
{
    t.hosts.Create(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        Ptr<RoceNetDevice> d = AddPort(t, t.hosts.Get(i), -1, speed);
        t.hostPorts.push_back(d);
    }
}

uint32_t
RoceHelper::AddSwitch(RoceTopology& t, const std::string& name)
{
    Ptr<Node> node = CreateObject<Node>();
    t.switchNodes.Add(node);
    Ptr<RoceSwitch> sw = CreateObject<RoceSwitch>();
    node->AggregateObject(sw);
    t.switches.push_back(sw);
    t.switchNames.push_back(name);
    return t.switches.size() - 1;
}

RoceTopology
RoceHelper::PointToPoint(EthSpeed speed)
{
    RoceTopology t;
    AddHosts(t, 2, speed);
    Link(t, t.hostPorts[0], t.hostPorts[1]);
    Finish(t);
    return t;
}

RoceTopology
RoceHelper::Leaf(uint32_t hosts, EthSpeed speed)
{
    RoceTopology t;
    AddHosts(t, hosts, speed);
    uint32_t sw = AddSwitch(t, "leaf0");
    for (uint32_t i = 0; i < hosts; ++i)
    {
        Link(t, t.hostPorts[i], AddPort(t, t.switchNodes.Get(sw), sw, speed));
    }
    Finish(t);
    return t;
}

RoceTopology
RoceHelper::LeafSpine(const std::vector<uint32_t>& leafOf, uint32_t leaves, uint32_t spines,
                      EthSpeed hostSpeed, EthSpeed uplink)
{
    RoceTopology t;
    AddHosts(t, leafOf.size(), hostSpeed);
    for (uint32_t l = 0; l < leaves; ++l)
    {
        AddSwitch(t, "leaf" + std::to_string(l));
    }
    for (uint32_t s = 0; s < spines; ++s)
    {
        AddSwitch(t, "spine" + std::to_string(s));
    }
    for (uint32_t i = 0; i < leafOf.size(); ++i)
    {
        uint32_t l = leafOf[i];
        Link(t, t.hostPorts[i], AddPort(t, t.switchNodes.Get(l), l, hostSpeed));
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t s = 0; s < spines; ++s)
        {
            Ptr<RoceNetDevice> up = AddPort(t, t.switchNodes.Get(l), l, uplink);
            Ptr<RoceNetDevice> down = AddPort(t, t.switchNodes.Get(leaves + s), leaves + s, uplink);
            Link(t, up, down);
        }
    }
    Finish(t);
    return t;
}

RoceTopology
RoceHelper::Ring(uint32_t switches, EthSpeed hostSpeed, EthSpeed ringSpeed)
{
    RoceTopology t;
    AddHosts(t, switches, hostSpeed);
    for (uint32_t s = 0; s < switches; ++s)
    {
        AddSwitch(t, "ring" + std::to_string(s));
    }
    for (uint32_t s = 0; s < switches; ++s)
    {
        Link(t, t.hostPorts[s], AddPort(t, t.switchNodes.Get(s), s, hostSpeed));
    }
    std::vector<Ptr<RoceNetDevice>> cw;
    for (uint32_t s = 0; s < switches; ++s)
    {
        cw.push_back(AddPort(t, t.switchNodes.Get(s), s, ringSpeed));
    }
    for (uint32_t s = 0; s < switches; ++s)
    {
        Link(t, cw[(s + switches - 1) % switches], AddPort(t, t.switchNodes.Get(s), s, ringSpeed));
    }
    Finish(t);
    return t;
}

void
RoceHelper::Finish(RoceTopology& t)
{
    const uint32_t nh = t.hosts.GetN();
    const uint32_t ns = t.switches.size();
    // Inter-switch links, and the (switch, port) each host is attached to.
    lfsim::SwitchGraph adj(ns);
    std::vector<std::pair<int32_t, uint32_t>> attach(nh, {-1, 0});
    std::map<Ptr<RoceNetDevice>, uint32_t> portOf;
    for (uint32_t p = 0; p < t.ports.size(); ++p)
    {
        portOf[t.ports[p]] = p;
    }
    for (uint32_t p = 0; p < t.ports.size(); ++p)
    {
        const int32_t sw = t.portSwitch[p];
        const uint32_t q = portOf[t.ports[p]->GetRoceChannel()->GetPeer(t.ports[p])];
        if (sw >= 0 && t.portSwitch[q] >= 0)
        {
            adj[sw].push_back({uint32_t(t.portSwitch[q]), t.portIndex[p]});
        }
        else if (sw >= 0)
        {
            attach[q] = {sw, t.portIndex[p]}; // hosts come first: port q is host q
        }
    }
    // Tables after a link failure: without the link at its ends (and everywhere unless stale).
    lfsim::SwitchGraph failed = adj;
    if (m_failed)
    {
        auto drop = [&failed](uint32_t a, uint32_t b)
        {
            auto& v = failed[a];
            v.erase(std::remove_if(v.begin(), v.end(), [b](auto e) { return e.first == b; }),
                    v.end());
        };
        drop(m_fail.first, m_fail.second);
        drop(m_fail.second, m_fail.first);
    }
    auto tablesOf = [&](uint32_t s) -> const lfsim::SwitchGraph&
    {
        const bool end = s == m_fail.first || s == m_fail.second;
        return m_failed && (end || !m_stale) ? failed : adj;
    };
    std::vector<std::vector<std::vector<uint32_t>>> routes(ns,
                                                           std::vector<std::vector<uint32_t>>(nh));
    for (uint32_t dst = 0; dst < nh; ++dst)
    {
        auto [home, hostPort] = attach[dst];
        if (home < 0)
        {
            continue; // back to back, no switch
        }
        routes[home][dst] = {hostPort};
        auto portsIn
            = [&](const lfsim::SwitchGraph& g) { return lfsim::RoutePorts(m_routing, g, home); };
        const auto ports = portsIn(adj);
        const auto after = m_failed ? portsIn(failed) : ports;
        for (uint32_t s = 0; s < ns; ++s)
        {
            if (s != uint32_t(home))
            {
                routes[s][dst] = &tablesOf(s) == &failed ? after[s] : ports[s];
            }
        }
    }
    for (uint32_t s = 0; s < ns; ++s)
    {
        t.switches[s]->SetRoutes(routes[s], HOST_IP_BASE);
        t.switches[s]->Setup(s);
    }
    for (uint32_t i = 0; i < nh; ++i)
    {
        Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
        t.hosts.Get(i)->AggregateObject(nic);
        nic->Setup(t.hostPorts[i], Ipv4Address(HOST_IP_BASE + i));
        t.nics.push_back(nic);
    }
}

int64_t
RoceHelper::AssignStreams(RoceTopology& t, int64_t stream)
{
    int64_t used = 0;
    for (auto& sw : t.switches)
    {
        used += sw->AssignStreams(stream + used);
    }
    return used;
}

void
RoceHelper::SetHostIpAttribute(const std::string& name, const AttributeValue& value)
{
    m_hostIp.Set(name, value);
}

int64_t
RoceHelper::InstallInternet(RoceTopology& t, int64_t stream)
{
    const uint32_t nh = t.hosts.GetN();
    t.hostIps.clear();
    for (uint32_t i = 0; i < nh; ++i)
    {
        t.hostIps.push_back(m_hostIp.Create<RoceHostIp>());
    }
    if (nh)
    {
        Config::SetDefault("ns3::TcpSocket::SegmentSize",
                           UintegerValue(t.hostIps[0]->GetTcpSegmentSize()));
    }
    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.Install(t.hosts);
    for (uint32_t i = 0; i < nh; ++i)
    {
        const Ipv4Address address(HOST_IP_BASE + i);
        Ptr<Node> node = t.hosts.Get(i);
        node->AggregateObject(t.hostIps[i]);
        t.hostIps[i]->Setup(t.hostPorts[i], t.nics[i], address);
        // By hand rather than Ipv4AddressHelper, which would put a queue disc in front of the
        // port's traffic classes.
        Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
        const int32_t ifc = ipv4->AddInterface(t.hostPorts[i]);
        ipv4->AddAddress(ifc, Ipv4InterfaceAddress(address, Ipv4Mask("255.0.0.0")));
        ipv4->SetMetric(ifc, 1);
        ipv4->SetUp(ifc);
    }
    return stack.AssignStreams(t.hosts, stream);
}

} // namespace ns3
