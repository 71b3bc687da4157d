#include "roce-helper.h"

#include <deque>
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

void
RoceHelper::Finish(RoceTopology& t)
{
    // Graph over nodes (hosts, then switches); BFS from every host gives each switch all its
    // shortest-path next hops toward that host.
    const uint32_t nh = t.hosts.GetN();
    const uint32_t ns = t.switches.size();
    std::map<uint32_t, uint32_t> vertexOfNode;
    for (uint32_t i = 0; i < nh; ++i)
    {
        vertexOfNode[t.hosts.Get(i)->GetId()] = i;
    }
    for (uint32_t s = 0; s < ns; ++s)
    {
        vertexOfNode[t.switchNodes.Get(s)->GetId()] = nh + s;
    }
    // adjacency: vertex -> (neighbour vertex, local port number on a switch)
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj(nh + ns);
    for (uint32_t p = 0; p < t.ports.size(); ++p)
    {
        Ptr<RoceNetDevice> d = t.ports[p];
        Ptr<RoceNetDevice> peer = d->GetRoceChannel()->GetPeer(d);
        uint32_t v = vertexOfNode[d->GetNode()->GetId()];
        uint32_t w = vertexOfNode[peer->GetNode()->GetId()];
        adj[v].push_back({w, t.portIndex[p]});
    }
    std::vector<std::vector<std::vector<uint32_t>>> routes(ns,
                                                           std::vector<std::vector<uint32_t>>(nh));
    for (uint32_t dst = 0; dst < nh; ++dst)
    {
        std::vector<int> dist(nh + ns, -1);
        std::deque<uint32_t> q{dst};
        dist[dst] = 0;
        while (!q.empty())
        {
            uint32_t v = q.front();
            q.pop_front();
            if (v != dst && v < nh)
            {
                continue; // hosts do not forward
            }
            for (auto [w, port] : adj[v])
            {
                if (dist[w] < 0)
                {
                    dist[w] = dist[v] + 1;
                    q.push_back(w);
                }
            }
        }
        for (uint32_t s = 0; s < ns; ++s)
        {
            for (auto [w, port] : adj[nh + s])
            {
                if (dist[nh + s] > 0 && dist[w] == dist[nh + s] - 1)
                {
                    routes[s][dst].push_back(port);
                }
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

} // namespace ns3
