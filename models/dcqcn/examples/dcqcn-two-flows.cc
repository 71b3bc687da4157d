/*
 * Two RDMA WRITE flows into one 40GbE receiver with DCQCN: flow 1 joins flow 0 after 5 ms.
 * Prints each flow's goodput, DCQCN rate and alpha every millisecond.
 *
 *   ./build/dcqcn-two-flows [--preset=paper|nic_default] [--stop=40ms]
 */
#include "dcqcn.h"
#include "lfsim-attributes.h"
#include "ns3/boolean.h"
#include "ns3/command-line.h"
#include "ns3/config.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "roce-helper.h"

#include <cstdio>

using namespace ns3;

namespace
{

struct Flow
{
    Ptr<RdmaQueuePair> qp;
    Ptr<RdmaQueuePair> sink;
    uint64_t lastBytes = 0;

    void
    Start()
    {
        qp->SetCompletionCallback(MakeCallback(&Flow::Again, this));
        qp->Post(RdmaOp::WRITE, 1 << 20);
        qp->Post(RdmaOp::WRITE, 1 << 20);
    }

    void
    Again(Ptr<RdmaQueuePair>, uint64_t, uint32_t, Time)
    {
        qp->Post(RdmaOp::WRITE, 1 << 20);
    }
};

void
Report(Flow* flows)
{
    std::printf("%6.1f ms", Simulator::Now().GetSeconds() * 1e3);
    for (int k = 0; k < 2; ++k)
    {
        Flow& f = flows[k];
        const uint64_t b = f.sink->GetBytesReceived();
        // Each sender's NIC runs its own DCQCN instance.
        Ptr<Dcqcn> cc = DynamicCast<Dcqcn>(f.qp->GetNic()->GetCongestionControl());
        const DcqcnReactionPoint& rp = cc->GetReactionPoint(*f.qp);
        std::printf("  flow %d: %6.2f Gb/s goodput, rate %6.2f, alpha %.3f", k,
                    (b - f.lastBytes) * 8.0 / 1e-3 / 1e9, f.qp->GetRate() / 1e9, rp.Alpha());
        f.lastBytes = b;
    }
    std::printf("\n");
    Simulator::Schedule(MilliSeconds(1), &Report, flows);
}

} // namespace

int
main(int argc, char** argv)
{
    lfsim::EnsureTimeResolution();
    std::string preset = "paper";
    Time stop = MilliSeconds(40);
    CommandLine cmd(__FILE__);
    cmd.AddValue("preset", "DCQCN preset: paper or nic_default", preset);
    cmd.AddValue("stop", "simulated time", stop);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::RdmaNic::CongestionControl", TypeIdValue(Dcqcn::GetTypeId()));
    Config::SetDefault("ns3::SwitchMarker::EcnEnabled", BooleanValue(true));
    lfsim::ApplyPreset("ns3::Dcqcn", preset);

    RoceHelper h;
    RoceTopology t = h.Leaf(3, EthSpeed::GBE40);
    h.AssignStreams(t, 1);
    Flow flows[2];
    for (int k = 0; k < 2; ++k)
    {
        auto [a, b] = t.nics[k + 1]->Connect(t.nics[0]);
        flows[k].qp = a;
        flows[k].sink = b;
    }
    Simulator::Schedule(Time(0), &Flow::Start, &flows[0]);
    Simulator::Schedule(MilliSeconds(5), &Flow::Start, &flows[1]);
    Simulator::Schedule(MilliSeconds(1), &Report, flows);
    Simulator::Stop(stop);
    Simulator::Run();
    Simulator::Destroy();
    return 0;
}
