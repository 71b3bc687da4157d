/*
 * iSCSI writes over ns-3 TCP on one 1 Gbit/s link: the response time of writes of each size,
 * with the RFC 7143 keys given on the command line, and the NOP-Out round trip.
 *
 *   iscsi-burst --MaxBurstLength=524288 --MaxOutstandingR2T=1 --sizes=65536,262144,524288
 */
#include "iscsi-helper.h"
#include "lfsim-attributes.h"
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <iostream>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{
std::vector<Time> g_latencies;
Time g_rtt;

void
OnIo(uint32_t, Time latency, bool)
{
    g_latencies.push_back(latency);
}

void
OnRtt(Time rtt)
{
    g_rtt = rtt;
}
} // namespace

int
main(int argc, char** argv)
{
    lfsim::EnsureTimeResolution();
    std::string sizes = "65536,262144,524288,1048576";
    uint32_t count = 10;
    uint32_t mbl = 262144;
    uint32_t fbl = 65536;
    uint32_t mor = 1;
    bool initialR2t = true;
    bool immediateData = true;
    std::string delay = "50us";
    CommandLine cmd;
    cmd.AddValue("sizes", "Comma-separated write sizes (bytes, multiples of 512)", sizes);
    cmd.AddValue("count", "Writes per size (queue depth 1); the last one is reported", count);
    cmd.AddValue("MaxBurstLength", "Offered by both sides", mbl);
    cmd.AddValue("FirstBurstLength", "Offered by both sides", fbl);
    cmd.AddValue("MaxOutstandingR2T", "Offered by both sides", mor);
    cmd.AddValue("InitialR2T", "Offered by both sides", initialR2t);
    cmd.AddValue("ImmediateData", "Offered by both sides", immediateData);
    cmd.AddValue("delay", "One-way link delay", delay);
    cmd.Parse(argc, argv);

    std::cout << "size_bytes,latency_us,nop_rtt_us\n";
    std::stringstream ss(sizes);
    for (std::string s; std::getline(ss, s, ',');)
    {
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
        NodeContainer nodes;
        nodes.Create(2);
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
        p2p.SetChannelAttribute("Delay", StringValue(delay));
        NetDeviceContainer devs = p2p.Install(nodes);
        InternetStackHelper stack;
        stack.Install(nodes);
        Ipv4AddressHelper addr("10.1.1.0", "255.255.255.0");
        Ipv4InterfaceContainer ifs = addr.Assign(devs);

        IscsiHelper h;
        h.SetInitiatorAttribute("IoSize", UintegerValue(std::stoul(s)));
        h.SetInitiatorAttribute("IoCount", UintegerValue(count));
        h.SetSessionAttribute("MaxBurstLength", UintegerValue(mbl));
        h.SetSessionAttribute("FirstBurstLength", UintegerValue(fbl));
        h.SetSessionAttribute("MaxOutstandingR2T", UintegerValue(mor));
        h.SetSessionAttribute("InitialR2T", BooleanValue(initialR2t));
        h.SetSessionAttribute("ImmediateData", BooleanValue(immediateData));
        IscsiHelper::Pair p;
        try
        {
            p = h.Install(nodes.Get(0), nodes.Get(1), ifs.GetAddress(1));
        }
        catch (const std::invalid_argument& e)
        {
            std::cerr << e.what() << "\n";
            return 2;
        }
        g_latencies.clear();
        p.initiator->TraceConnectWithoutContext("IoComplete", MakeCallback(&OnIo));
        p.initiator->TraceConnectWithoutContext("NopRtt", MakeCallback(&OnRtt));
        // The ping runs once the writes are over, on an idle connection.
        Simulator::Schedule(Seconds(5), &IscsiInitiator::Ping, p.initiator);
        Simulator::Stop(Seconds(6));
        Simulator::Run();
        Simulator::Destroy();
        std::cout << s << "," << (g_latencies.empty() ? 0 : g_latencies.back().GetMicroSeconds())
                  << "," << g_rtt.GetMicroSeconds() << "\n";
    }
    return 0;
}
