#include "fc-helper.h"

#include "lfsim-routing.h"
#include "ns3/abort.h"
#include "ns3/enum.h"

#include <map>

namespace ns3
{

Ptr<FcNetDevice>
FcHelper::AddPort(FcTopology& t, Ptr<Node> node, const std::string& label)
{
    Ptr<FcNetDevice> dev = CreateObject<FcNetDevice>();
    node->AddDevice(dev);
    t.ports.push_back(dev);
    t.portLabels.push_back(label);
    return dev;
}

void
FcHelper::Link(FcTopology& t, Ptr<FcNetDevice> a, Ptr<FcNetDevice> b)
{
    Ptr<FcChannel> ch = CreateObject<FcChannel>();
    a->Attach(ch);
    b->Attach(ch);
    a->Login();
    b->Login();
    t.channels.push_back(ch);
}

void
FcHelper::SetIslSpeed(FcSpeed speed)
{
    m_islSpeedSet = true;
    m_islSpeed = speed;
}

Ptr<FcNetDevice>
FcHelper::EPort(FcTopology& t, uint32_t s, const std::string& suffix)
{
    Ptr<FcNetDevice> e
        = AddPort(t, t.switchNodes.Get(s),
                  t.switchLabels[s] + "/p" + std::to_string(t.switches[s]->GetNPorts()) + suffix);
    t.switches[s]->AddPort(e);
    if (m_islSpeedSet)
    {
        e->SetAttribute("Speed", EnumValue(static_cast<int>(m_islSpeed)));
    }
    return e;
}

void
FcHelper::Isl(FcTopology& t, uint32_t a, uint32_t b, bool peerNames)
{
    Ptr<FcNetDevice> e[2];
    const uint32_t sw[2] = {a, b};
    for (int k = 0; k < 2; ++k)
    {
        e[k] = EPort(t, sw[k], peerNames ? "(" + t.switchLabels[sw[1 - k]] + ")" : "(ISL)");
    }
    Link(t, e[0], e[1]);
}

void
FcHelper::AddHosts(FcTopology& t, uint32_t n)
{
    t.hosts.Create(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        t.hostPorts.push_back(AddPort(t, t.hosts.Get(i), "h" + std::to_string(i)));
    }
}

void
FcHelper::AddSwitch(FcTopology& t, const std::string& label)
{
    Ptr<Node> node = CreateObject<Node>();
    t.switchNodes.Add(node);
    Ptr<FcSwitch> sw = CreateObject<FcSwitch>();
    sw->SetDomain(t.switches.size() + 1);
    node->AggregateObject(sw);
    t.switches.push_back(sw);
    t.switchLabels.push_back(label);
}

void
FcHelper::AttachHost(FcTopology& t, uint32_t h, uint32_t s)
{
    uint32_t portIdx = t.switches[s]->GetNPorts();
    Ptr<FcNetDevice> p
        = AddPort(t, t.switchNodes.Get(s), t.switchLabels[s] + "/p" + std::to_string(portIdx));
    t.switches[s]->AddPort(p);
    t.hostPorts[h]->SetFcId((t.switches[s]->GetDomain() << 16) | (portIdx << 8));
    Link(t, t.hostPorts[h], p);
}

FcTopology
FcHelper::PointToPoint()
{
    FcTopology t;
    AddHosts(t, 2);
    // N_Port to N_Port: no fabric assigns addresses; use two distinct FC_IDs.
    t.hostPorts[0]->SetFcId(0x0000e8);
    t.hostPorts[1]->SetFcId(0x0000ef);
    Link(t, t.hostPorts[0], t.hostPorts[1]);
    return t;
}

FcTopology
FcHelper::Star(uint32_t hosts)
{
    FcTopology t;
    AddHosts(t, hosts);
    AddSwitch(t, "sw0");
    for (uint32_t i = 0; i < hosts; ++i)
    {
        AttachHost(t, i, 0);
    }
    Route(t);
    return t;
}

FcTopology
FcHelper::TwoSwitch(uint32_t hosts)
{
    FcTopology t;
    AddHosts(t, hosts);
    AddSwitch(t, "sw0");
    AddSwitch(t, "sw1");
    for (uint32_t i = 0; i < hosts; ++i)
    {
        AttachHost(t, i, (i == 0) ? 1 : 0);
    }
    Isl(t, 0, 1, false);
    Route(t);
    return t;
}

std::vector<uint32_t>
FcHelper::SpreadHosts(uint32_t hosts, uint32_t leaves)
{
    std::vector<uint32_t> leaf(hosts, 0);
    for (uint32_t i = 1; i < hosts; ++i)
    {
        leaf[i] = 1 + (i - 1) % (leaves - 1);
    }
    return leaf;
}

FcTopology
FcHelper::LeafSpine(const std::vector<uint32_t>& hostLeaf, uint32_t leaves, uint32_t spines)
{
    NS_ABORT_MSG_IF(leaves < 1 || spines < 1, "LeafSpine needs a leaf and a spine");
    FcTopology t;
    AddHosts(t, hostLeaf.size());
    for (uint32_t l = 0; l < leaves; ++l)
    {
        AddSwitch(t, "leaf" + std::to_string(l));
    }
    for (uint32_t s = 0; s < spines; ++s)
    {
        AddSwitch(t, "spine" + std::to_string(s));
    }
    for (uint32_t h = 0; h < hostLeaf.size(); ++h)
    {
        NS_ABORT_MSG_IF(hostLeaf[h] >= leaves, "host " << h << " on a leaf that does not exist");
        AttachHost(t, h, hostLeaf[h]);
    }
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t s = 0; s < spines; ++s)
        {
            Isl(t, l, leaves + s, true);
        }
    }
    Route(t);
    return t;
}

FcTopology
FcHelper::Ring(uint32_t switches)
{
    NS_ABORT_MSG_IF(switches < 3, "a ring has at least 3 switches");
    FcTopology t;
    AddHosts(t, switches);
    for (uint32_t s = 0; s < switches; ++s)
    {
        AddSwitch(t, "ring" + std::to_string(s));
    }
    for (uint32_t s = 0; s < switches; ++s)
    {
        AttachHost(t, s, s);
    }
    // Ports first (p1 clockwise, p2 back on every switch), then the fibres between them. Labels
    // "ring1/p2" as the roce fabric's ring (without the peer: p1 and p2 say it).
    std::vector<Ptr<FcNetDevice>> cw;
    std::vector<Ptr<FcNetDevice>> ccw;
    for (uint32_t s = 0; s < switches; ++s)
    {
        cw.push_back(EPort(t, s, ""));
    }
    for (uint32_t s = 0; s < switches; ++s)
    {
        ccw.push_back(EPort(t, s, ""));
    }
    for (uint32_t s = 0; s < switches; ++s)
    {
        Link(t, cw[s], ccw[(s + 1) % switches]);
    }
    Route(t);
    return t;
}

void
FcHelper::Route(FcTopology& t)
{
    // Which switch and port each device sits on.
    std::map<Ptr<FcNetDevice>, std::pair<uint32_t, uint32_t>> where;
    for (uint32_t s = 0; s < t.switches.size(); ++s)
    {
        for (uint32_t p = 0; p < t.switches[s]->GetNPorts(); ++p)
        {
            where[t.switches[s]->GetPort(p)] = {s, p};
        }
    }
    // Switch adjacency through ISLs: (neighbour, local port), one entry per link.
    lfsim::SwitchGraph adj(t.switches.size());
    for (const auto& ch : t.channels)
    {
        Ptr<FcNetDevice> a = DynamicCast<FcNetDevice>(ch->GetDevice(0));
        Ptr<FcNetDevice> b = DynamicCast<FcNetDevice>(ch->GetDevice(1));
        if (where.count(a) && where.count(b))
        {
            adj[where[a].first].push_back({where[b].first, where[a].second});
            adj[where[b].first].push_back({where[a].first, where[b].second});
        }
    }
    for (uint32_t h = 0; h < t.hostPorts.size(); ++h)
    {
        Ptr<FcNetDevice> peer
            = DynamicCast<FcChannel>(t.hostPorts[h]->GetChannel())->GetPeer(t.hostPorts[h]);
        uint32_t home = where[peer].first;
        uint32_t id = t.hostPorts[h]->GetFcId();
        t.switches[home]->AddRoute(id, where[peer].second);
        // Shortest path: every switch routes over all its links to a neighbour one hop
        // closer (the equal-cost paths FSPF would keep).
        const std::vector<std::vector<uint32_t>> ports = lfsim::RoutePorts(m_routing, adj, home);
        for (uint32_t s = 0; s < ports.size(); ++s)
        {
            for (uint32_t port : ports[s])
            {
                t.switches[s]->AddRoute(id, port);
            }
        }
    }
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
