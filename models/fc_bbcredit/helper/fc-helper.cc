#include "fc-helper.h"

#include "lfsim-build.h"
#include "lfsim-topology.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/string.h"

#include <stdexcept>

namespace ns3
{

FcSpeed
FcHelper::ParseSpeed(const std::string& name, const std::string& key)
{
    std::string accepted;
    for (int s = int(FcSpeed::GFC1); s <= int(FcSpeed::GFC32); ++s)
    {
        const char* n = GetFcLineCoding(FcSpeed(s)).name;
        if (name == n)
        {
            return FcSpeed(s);
        }
        accepted += std::string(accepted.empty() ? "" : ", ") + n;
    }
    throw std::invalid_argument(key + ": got '" + name + "'; accepted: one of " + accepted
                                + " (fabric fc), or empty for FcNetDevice::Speed");
}

namespace
{

/// What an FC fabric's ports, switches and fibres add to lfsim's skeleton (lfsim-build.h).
struct FcParts : lfsim::FabricParts
{
    FcTopology& t;

    Ptr<FcNetDevice>
    NewPort()
    {
        return CreateObject<FcNetDevice>();
    }

    /// Switch s is FC-SW domain s + 1.
    Ptr<FcSwitch>
    NewSwitch(uint32_t s, const std::string& name)
    {
        Ptr<FcSwitch> sw = CreateObject<FcSwitch>();
        sw->SetDomain(s + 1);
        t.switchLabels.push_back(name);
        return sw;
    }

    void
    Speed(const lfsim::Graph& g, const lfsim::GraphLink& l, FcNetDevice& a, FcNetDevice& b)
    {
        if (!g.Speed(l).empty())
        {
            const EnumValue s(int(FcHelper::ParseSpeed(g.Speed(l), g.SpeedKey(l))));
            a.SetAttribute("Speed", s);
            b.SetAttribute("Speed", s);
        }
    }

    void
    Attached(FcNetDevice& a, FcNetDevice& b)
    {
        a.Login();
        b.Login();
    }
};

} // namespace

FcTopology
FcHelper::Build(const lfsim::Graph& g, const lfsim::RouteTable& routes)
{
    FcTopology t;
    const auto& nodes = g.Nodes();
    const auto& gports = g.Ports();
    // FC-SW: domains 1..239; the area byte numbers a switch's ports.
    if (g.Switches().size() > 239)
    {
        throw std::invalid_argument("topology: " + std::to_string(g.Switches().size())
                                    + " switches; accepted: at most 239 in an FC fabric (one "
                                      "Domain_ID each, FC-SW)");
    }
    for (uint32_t s : g.Switches())
    {
        if (nodes[s].ports.size() > 256)
        {
            throw std::invalid_argument(
                "topology: switch " + nodes[s].name + " has "
                + std::to_string(nodes[s].ports.size())
                + " ports; accepted: at most 256 ports on any switch (FC_ID area byte)");
        }
    }
    FcParts parts{{}, t};
    const std::vector<uint32_t> index = lfsim::MakePorts(g, t, parts);
    // N_Port addresses: from the fabric (domain, area), or fixed when two N_Ports face each other.
    const std::vector<uint32_t> addresses = g.HostPorts();
    for (uint32_t a = 0; a < addresses.size(); ++a)
    {
        const uint32_t peer = g.Peer(addresses[a]);
        const lfsim::GraphPort& pp = gports[peer];
        if (nodes[pp.node].host)
        {
            t.hostPorts[a]->SetFcId(a % 2 ? 0x0000ef : 0x0000e8);
            continue;
        }
        const uint32_t s = g.Rank(pp.node);
        t.hostPorts[a]->SetFcId((t.switches[s]->GetDomain() << 16) | (pp.number << 8));
    }
    lfsim::MakeCables<FcChannel>(g, t, index, parts);
    for (uint32_t s = 0; s < t.switches.size(); ++s)
    {
        for (uint32_t a = 0; a < addresses.size(); ++a)
        {
            for (uint32_t port : routes.Ports(s, a))
            {
                t.switches[s]->AddRoute(t.hostPorts[a]->GetFcId(), port);
            }
        }
    }
    return t;
}

FcTopology
FcHelper::Routed(const lfsim::Graph& g)
{
    return Build(g, g.Routes(m_routing));
}

FcTopology
FcHelper::FromGenerator(const std::string& typeId,
                        const std::vector<std::pair<std::string, std::string>>& attrs)
{
    lfsim::InstanceConfig cfg;
    cfg.typeId = typeId;
    cfg.attributes = attrs;
    Ptr<Topology> topo = lfsim::MakeTopology(cfg);
    return Routed(topo->Build());
}

FcTopology
FcHelper::PointToPoint()
{
    return FromGenerator("ns3::PointToPointTopology", {});
}

FcTopology
FcHelper::Star(uint32_t hosts)
{
    return FromGenerator("ns3::StarTopology", {{"Hosts", std::to_string(hosts)}});
}

FcTopology
FcHelper::TwoSwitch(uint32_t hosts)
{
    // By hand through the graph API: sw0 with hosts 1.., sw1 with host 0, one ISL.
    lfsim::Graph g;
    for (uint32_t i = 0; i < hosts; ++i)
    {
        g.AddNode("h" + std::to_string(i), true);
    }
    const uint32_t sw0 = g.AddNode("sw0", false);
    const uint32_t sw1 = g.AddNode("sw1", false);
    for (uint32_t i = 0; i < hosts; ++i)
    {
        g.Connect(g.Hosts()[i], i == 0 ? sw1 : sw0);
    }
    g.Connect(sw0, sw1);
    g.Check("topology");
    return Routed(g);
}

FcTopology
FcHelper::LeafSpine(const std::vector<uint32_t>& hostLeaf, uint32_t leaves, uint32_t spines)
{
    std::string placement;
    for (uint32_t l : hostLeaf)
    {
        placement += (placement.empty() ? "" : ",") + std::to_string(l);
    }
    return FromGenerator("ns3::LeafSpineTopology", {{"Leaves", std::to_string(leaves)},
                                                    {"Spines", std::to_string(spines)},
                                                    {"HostLeaves", placement}});
}

FcTopology
FcHelper::Ring(uint32_t switches)
{
    return FromGenerator("ns3::RingTopology", {{"Switches", std::to_string(switches)}});
}

FcStreamApps
FcHelper::InstallStream(FcTopology& t)
{
    FcStreamApps apps;
    apps.sink = CreateObject<FcSink>();
    t.hosts.Get(0)->AddApplication(apps.sink);
    apps.sink->Setup(t.hostPorts[0]);
    for (uint32_t i = 1; i < t.hostPorts.size(); ++i)
    {
        Ptr<FcStreamSender> s = CreateObject<FcStreamSender>();
        t.hosts.Get(i)->AddApplication(s);
        s->Setup(t.hostPorts[i], t.hostPorts[0]->GetFcId());
        apps.senders.push_back(s);
    }
    return apps;
}

int64_t
FcHelper::AssignStreams(FcTopology& t, int64_t stream)
{
    int64_t used = 0;
    for (auto& ch : t.channels)
    {
        used += ch->AssignStreams(stream + used);
    }
    return used;
}

} // namespace ns3
