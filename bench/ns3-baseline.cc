/*
 * Stock ns-3 baseline of the fc_incast shape for `make bench`: N UDP senders -> one IPv4 router
 * -> one receiver over PointToPoint links, packets of the same payload as FCP data frames.
 * Prints one JSON line: packet hops (transmissions on any link), events, wall time.
 */
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <chrono>
#include <iostream>

using namespace ns3;

static uint64_t g_hops = 0;

static void
CountHop(Ptr<const Packet>)
{
    ++g_hops;
}

int
main(int argc, char** argv)
{
    uint32_t senders = 8;
    std::string rate = "8Gbps";
    uint32_t payload = 2048;
    double stop = 1.0;
    CommandLine cmd;
    cmd.AddValue("senders", "number of UDP senders", senders);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("payload", "UDP payload bytes", payload);
    cmd.AddValue("stop", "simulated seconds", stop);
    cmd.Parse(argc, argv);

    NodeContainer hosts;
    hosts.Create(senders + 1);
    Ptr<Node> router = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(router);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue("50ns"));
    Ipv4AddressHelper addr;
    Ipv4Address sinkAddr;
    NetDeviceContainer all;
    for (uint32_t i = 0; i <= senders; ++i)
    {
        NetDeviceContainer d = p2p.Install(hosts.Get(i), router);
        all.Add(d);
        std::string net = "10." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ".0";
        addr.SetBase(net.c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifs = addr.Assign(d);
        if (i == 0)
        {
            sinkAddr = ifs.GetAddress(0);
        }
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    for (uint32_t i = 0; i < all.GetN(); ++i)
    {
        all.Get(i)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&CountHop));
    }
    PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    sink.Install(hosts.Get(0)).Start(Seconds(0));
    // Each sender offers its share of the bottleneck, as the FC incast initiators do.
    DataRate share(DataRate(rate).GetBitRate() / senders);
    OnOffHelper onoff("ns3::UdpSocketFactory", InetSocketAddress(sinkAddr, 9));
    onoff.SetConstantRate(share, payload);
    for (uint32_t i = 1; i <= senders; ++i)
    {
        onoff.Install(hosts.Get(i)).Start(Seconds(0));
    }
    Simulator::Stop(Seconds(stop));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();
    std::cout << "{\"packet_hops\": " << g_hops << ", \"events\": " << events
              << ", \"wall_time_s\": " << wall << ", \"sim_time_s\": " << stop << "}" << std::endl;
    return 0;
}
