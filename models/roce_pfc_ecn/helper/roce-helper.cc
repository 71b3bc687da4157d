#include "roce-helper.h"

#include "lfsim-attributes.h"
#include "lfsim-build.h"
#include "lfsim-topology.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>

namespace ns3
{

EthSpeed
RoceHelper::ParseSpeed(const std::string& name, const std::string& key)
{
    std::string accepted;
    for (int s = int(EthSpeed::GBE10); s <= int(EthSpeed::GBE400); ++s)
    {
        if (name == EthSpeedName(EthSpeed(s)))
        {
            return EthSpeed(s);
        }
        accepted += std::string(accepted.empty() ? "" : ", ") + EthSpeedName(EthSpeed(s));
    }
    throw std::invalid_argument(key + ": got '" + name + "'; accepted: one of " + accepted
                                + " (fabric roce), or empty for RoceNetDevice::Speed");
}

namespace
{

/// What a RoCE fabric's ports, switches and cables add to lfsim's skeleton (lfsim-build.h).
struct RoceParts : lfsim::FabricParts
{
    RoceTopology& t;
    const std::vector<lfsim::GraphPort>& gports;

    Ptr<RoceNetDevice>
    NewPort()
    {
        Ptr<RoceNetDevice> d = CreateObject<RoceNetDevice>();
        d->SetAddress(Mac48Address::Allocate());
        return d;
    }

    void
    PortAdded(uint32_t p, int32_t s, RoceNetDevice& d)
    {
        if (s >= 0)
        {
            // A switch port hands every frame to its switch, never to the node's protocols (it
            // has no IP): free the receive callback Node::AddDevice gave it, 200 bytes a port.
            d.SetReceiveCallback(MakeNullCallback<bool, Ptr<NetDevice>, Ptr<const Packet>, uint16_t,
                                                  const Address&>());
        }
        t.portIndex.push_back(gports[p].number);
    }

    Ptr<RoceSwitch>
    NewSwitch(uint32_t, const std::string& name)
    {
        t.switchNames.push_back(name);
        return CreateObject<RoceSwitch>();
    }

    void
    Speed(const lfsim::Graph& g, const lfsim::GraphLink& l, RoceNetDevice& a, RoceNetDevice& b)
    {
        if (!g.Speed(l).empty())
        {
            const EthSpeed s = RoceHelper::ParseSpeed(g.Speed(l), g.SpeedKey(l));
            a.SetSpeed(s);
            b.SetSpeed(s);
        }
        else if (a.GetSpeed() != b.GetSpeed())
        {
            throw std::invalid_argument(g.Where(l)
                                        + ": its two ports have different Speeds; "
                                          "accepted: one speed per cable");
        }
    }
};

} // namespace

RoceTopology
RoceHelper::Build(const lfsim::Graph& g, const lfsim::RouteTable& routes)
{
    RoceTopology t;
    t.portIndex.reserve(g.Ports().size());
    t.switchNames.reserve(g.Switches().size());
    RoceParts parts{{}, t, g.Ports()};
    const std::vector<uint32_t> index = lfsim::MakePorts(g, t, parts);
    lfsim::MakeCables<RoceChannel>(g, t, index, parts);
    t.nics.reserve(t.hostPorts.size());
    for (uint32_t s = 0; s < t.switches.size(); ++s)
    {
        const lfsim::SwitchRoutes& r = routes.m_switch[s];
        t.switches[s]->SetRoutes(r.sets, r.start, r.set, routes.Addresses(), HOST_IP_BASE);
        t.switches[s]->Setup(s);
    }
    for (uint32_t a = 0; a < t.hostPorts.size(); ++a)
    {
        Ptr<RdmaNic> nic = CreateObject<RdmaNic>();
        Ptr<Node> node = t.hosts.Get(t.hostOf[a]);
        if (!node->GetObject<RdmaNic>())
        {
            node->AggregateObject(nic); // a node aggregates one object of a type: its first NIC
        }
        nic->Setup(t.hostPorts[a], Ipv4Address(HOST_IP_BASE + a));
        t.nics.push_back(nic);
    }
    // INT is stamped by the switches when the NICs' congestion control asks for it (HPCC).
    if (std::any_of(t.nics.begin(), t.nics.end(),
                    [](const Ptr<RdmaNic>& n) { return n->GetTelemetry() & TEL_INT; }))
    {
        for (auto& sw : t.switches)
        {
            sw->EnableInt();
        }
    }
    return t;
}

RoceTopology
RoceHelper::FromGenerator(const std::string& typeId,
                          const std::vector<std::pair<std::string, std::string>>& attrs)
{
    lfsim::InstanceConfig cfg;
    cfg.typeId = typeId;
    cfg.attributes = attrs;
    cfg.attributes.push_back({"Routing", m_routing == lfsim::CLOCKWISE ? "Clockwise"
                                         : m_routing == lfsim::UP_DOWN ? "UpDown"
                                                                       : "ShortestPath"});
    Ptr<Topology> topo = lfsim::MakeTopology(cfg);
    const lfsim::Graph g = topo->Build();
    return Build(g, g.Routes(topo->GetRouting()));
}

RoceTopology
RoceHelper::PointToPoint(EthSpeed speed)
{
    return FromGenerator("ns3::PointToPointTopology", {{"HostSpeed", EthSpeedName(speed)}});
}

RoceTopology
RoceHelper::Leaf(uint32_t hosts, EthSpeed speed)
{
    return FromGenerator("ns3::StarTopology",
                         {{"Hosts", std::to_string(hosts)}, {"HostSpeed", EthSpeedName(speed)}});
}

RoceTopology
RoceHelper::LeafSpine(const std::vector<uint32_t>& leafOf, uint32_t leaves, uint32_t spines,
                      EthSpeed hostSpeed, EthSpeed uplink)
{
    std::string placement;
    for (uint32_t l : leafOf)
    {
        placement += (placement.empty() ? "" : ",") + std::to_string(l);
    }
    return FromGenerator("ns3::LeafSpineTopology", {{"Leaves", std::to_string(leaves)},
                                                    {"Spines", std::to_string(spines)},
                                                    {"HostLeaves", placement},
                                                    {"HostSpeed", EthSpeedName(hostSpeed)},
                                                    {"UplinkSpeed", EthSpeedName(uplink)}});
}

RoceTopology
RoceHelper::Ring(uint32_t switches, EthSpeed hostSpeed, EthSpeed ringSpeed)
{
    return FromGenerator("ns3::RingTopology", {{"Switches", std::to_string(switches)},
                                               {"HostSpeed", EthSpeedName(hostSpeed)},
                                               {"UplinkSpeed", EthSpeedName(ringSpeed)}});
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
    for (uint32_t a = 0; a < t.hostPorts.size(); ++a)
    {
        t.hostIps.push_back(m_hostIp.Create<RoceHostIp>());
    }
    if (nh)
    {
        // Through lfsim::SetDefault: the next run of the process starts from ns-3's default.
        lfsim::SetDefault("ns3::TcpSocket", "SegmentSize",
                          std::to_string(t.hostIps[0]->GetTcpSegmentSize()));
    }
    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.Install(t.hosts);
    for (uint32_t a = 0; a < t.hostPorts.size(); ++a)
    {
        const Ipv4Address address(HOST_IP_BASE + a);
        Ptr<Node> node = t.hosts.Get(t.hostOf[a]);
        if (!node->GetObject<RoceHostIp>())
        {
            node->AggregateObject(t.hostIps[a]); // a node aggregates one: its first port's
        }
        t.hostIps[a]->Setup(t.hostPorts[a], t.nics[a], address);
        // By hand rather than Ipv4AddressHelper, which would put a queue disc in front of the
        // port's traffic classes. Every port is in 10.0.0.0/8: on a host with several, a
        // socket bound to a port (BindToNetDevice) leaves by it.
        Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
        const int32_t ifc = ipv4->AddInterface(t.hostPorts[a]);
        ipv4->AddAddress(ifc, Ipv4InterfaceAddress(address, Ipv4Mask("255.0.0.0")));
        ipv4->SetMetric(ifc, 1);
        ipv4->SetUp(ifc);
    }
    return stack.AssignStreams(t.hosts, stream);
}

} // namespace ns3
