#include "fc-helper.h"

#include <map>
#include <queue>

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
FcHelper::AddHosts(FcTopology& t, uint32_t n)
{
    t.hosts.Create(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        t.hostPorts.push_back(AddPort(t, t.hosts.Get(i), "h" + std::to_string(i)));
    }
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
    t.switchNodes.Create(1);
    Ptr<FcSwitch> sw = CreateObject<FcSwitch>();
    sw->SetDomain(1);
    t.switchNodes.Get(0)->AggregateObject(sw);
    t.switches.push_back(sw);
    for (uint32_t i = 0; i < hosts; ++i)
    {
        Ptr<FcNetDevice> p = AddPort(t, t.switchNodes.Get(0), "sw0/p" + std::to_string(i));
        sw->AddPort(p);
        t.hostPorts[i]->SetFcId((1u << 16) | (i << 8));
        Link(t, t.hostPorts[i], p);
    }
    Route(t);
    return t;
}

FcTopology
FcHelper::TwoSwitch(uint32_t hosts)
{
    FcTopology t;
    AddHosts(t, hosts);
    t.switchNodes.Create(2);
    for (uint32_t s = 0; s < 2; ++s)
    {
        Ptr<FcSwitch> sw = CreateObject<FcSwitch>();
        sw->SetDomain(s + 1);
        t.switchNodes.Get(s)->AggregateObject(sw);
        t.switches.push_back(sw);
    }
    for (uint32_t i = 0; i < hosts; ++i)
    {
        uint32_t s = (i == 0) ? 1 : 0;
        uint32_t portIdx = t.switches[s]->GetNPorts();
        Ptr<FcNetDevice> p = AddPort(t, t.switchNodes.Get(s),
                                     "sw" + std::to_string(s) + "/p" + std::to_string(portIdx));
        t.switches[s]->AddPort(p);
        t.hostPorts[i]->SetFcId(((s + 1) << 16) | (portIdx << 8));
        Link(t, t.hostPorts[i], p);
    }
    // The inter-switch link (E_Port to E_Port).
    Ptr<FcNetDevice> e0 = AddPort(t, t.switchNodes.Get(0),
                                  "sw0/p" + std::to_string(t.switches[0]->GetNPorts()) + "(ISL)");
    t.switches[0]->AddPort(e0);
    Ptr<FcNetDevice> e1 = AddPort(t, t.switchNodes.Get(1),
                                  "sw1/p" + std::to_string(t.switches[1]->GetNPorts()) + "(ISL)");
    t.switches[1]->AddPort(e1);
    Link(t, e0, e1);
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
    // Switch adjacency through ISLs: (neighbour, local port).
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(t.switches.size());
    std::vector<std::pair<uint32_t, uint32_t>> hostAt(t.hostPorts.size());
    for (const auto& ch : t.channels)
    {
        Ptr<FcNetDevice> a = DynamicCast<FcNetDevice>(ch->GetDevice(0));
        Ptr<FcNetDevice> b = DynamicCast<FcNetDevice>(ch->GetDevice(1));
        bool sa = where.count(a);
        bool sb = where.count(b);
        if (sa && sb)
        {
            adj[where[a].first].push_back({where[b].first, where[a].second});
            adj[where[b].first].push_back({where[a].first, where[b].second});
        }
    }
    for (uint32_t h = 0; h < t.hostPorts.size(); ++h)
    {
        Ptr<FcNetDevice> peer = DynamicCast<FcChannel>(t.hostPorts[h]->GetChannel())
                                    ->GetPeer(t.hostPorts[h]);
        uint32_t home = where[peer].first;
        t.switches[home]->AddRoute(t.hostPorts[h]->GetFcId(), where[peer].second);
        // Breadth-first from the host's switch; each switch routes towards its BFS parent.
        std::vector<bool> seen(t.switches.size(), false);
        std::queue<uint32_t> q;
        q.push(home);
        seen[home] = true;
        while (!q.empty())
        {
            uint32_t s = q.front();
            q.pop();
            for (auto [n, port] : adj[s])
            {
                if (seen[n])
                {
                    continue;
                }
                seen[n] = true;
                // n reaches s through its port on the same link.
                for (auto [back, nport] : adj[n])
                {
                    if (back == s)
                    {
                        t.switches[n]->AddRoute(t.hostPorts[h]->GetFcId(), nport);
                        break;
                    }
                }
                q.push(n);
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
