/*
 * ns-3 example: one FC sender streaming full frames over a fibre, without lfsim's runner.
 *   ./build/fc-bbcredit-distance --speed=2GFC --credits=8 --length=10000 --stop=5ms
 */
#include "fc-applications.h"
#include "fc-helper.h"
#include "lfsim-attributes.h"
#include "ns3/core-module.h"

#include <iostream>

using namespace ns3;

int
main(int argc, char** argv)
{
    lfsim::EnsureTimeResolution();
    std::string speed = "2GFC";
    uint32_t credits = 8;
    double length = 10000;
    std::string stop = "5ms";
    CommandLine cmd;
    cmd.AddValue("speed", "FcNetDevice::Speed", speed);
    cmd.AddValue("credits", "FcNetDevice::BbCredit", credits);
    cmd.AddValue("length", "FcChannel::Length (m)", length);
    cmd.AddValue("stop", "simulated time", stop);
    cmd.Parse(argc, argv);
    Config::SetDefault("ns3::FcNetDevice::Speed", StringValue(speed));
    Config::SetDefault("ns3::FcNetDevice::BbCredit", UintegerValue(credits));
    Config::SetDefault("ns3::FcChannel::Length", DoubleValue(length));

    FcHelper helper;
    FcTopology t = helper.PointToPoint();
    Ptr<FcSink> sink = helper.InstallStream(t).sink;
    Time end(stop);
    sink->SetWindow(end / 5, end);
    Simulator::Stop(end);
    Simulator::Run();
    std::cout << speed << ", " << credits << " credits, " << length / 1000
              << " km: " << sink->GetWindowBytes() / (end * 4 / 5).GetSeconds() / 1e6
              << " MB/s payload, "
              << "sender stalled for credit "
              << t.hostPorts[1]->GetCreditStallTime().GetMicroSeconds() << " us" << std::endl;
    Simulator::Destroy();
    return 0;
}
