/*
 * ns-3 example: N RDMA WRITE senders into one receiver through one PFC switch, without lfsim's
 * runner — what PFC does to the senders and the switch.
 *   ./build/roce-pfc-incast --senders=8 --message=1048576 --buffer=2000000 --stop=2ms
 */
#include "lfsim-attributes.h"
#include "ns3/core-module.h"
#include "rdma-nic.h"
#include "roce-helper.h"

#include <iostream>

using namespace ns3;

int
main(int argc, char** argv)
{
    lfsim::EnsureTimeResolution();
    uint32_t senders = 8;
    uint32_t message = 1 << 20;
    uint64_t buffer = 2000000;
    bool pfc = true;
    std::string stop = "2ms";
    CommandLine cmd;
    cmd.AddValue("senders", "incast degree", senders);
    cmd.AddValue("message", "bytes per RDMA WRITE", message);
    cmd.AddValue("buffer", "switch buffer, bytes (SwitchMmu::BufferSize)", buffer);
    cmd.AddValue("pfc", "PFC on (SwitchMmu::PfcEnabled)", pfc);
    cmd.AddValue("stop", "simulated time", stop);
    cmd.Parse(argc, argv);
    Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(buffer));
    Config::SetDefault("ns3::SwitchMmu::PfcEnabled", BooleanValue(pfc));

    RoceHelper helper;
    RoceTopology t = helper.Leaf(senders + 1, EthSpeed::GBE25);
    std::vector<Ptr<RdmaQueuePair>> sinks;
    for (uint32_t i = 1; i <= senders; ++i)
    {
        auto [qp, sink] = t.nics[i]->Connect(t.nics[0]);
        // Keep two writes outstanding per QP so the senders never idle.
        qp->SetCompletionCallback(
            MakeCallback(+[](uint32_t size, Ptr<RdmaQueuePair> q, uint64_t, uint32_t, Time) {
                q->Post(RdmaOp::WRITE, size);
            }).Bind(message));
        qp->Post(RdmaOp::WRITE, message);
        qp->Post(RdmaOp::WRITE, message);
        sinks.push_back(sink);
    }
    Time end(stop);
    Simulator::Stop(end);
    Simulator::Run();
    uint64_t bytes = 0;
    uint64_t pauses = 0;
    for (auto& s : sinks)
    {
        bytes += s->GetBytesReceived();
    }
    for (auto& p : t.ports)
    {
        pauses += p->GetCounters().pauseTx;
    }
    const auto& sw = t.switches[0]->GetCounters();
    std::cout << senders << " senders, PFC " << (pfc ? "on" : "off") << ": "
              << bytes * 8.0 / end.GetSeconds() / 1e9 << " Gb/s delivered, " << pauses
              << " PAUSE frames, " << sw.dropsBuffer + sw.dropsHeadroom << " drops, peak buffer "
              << sw.peakBufferBytes / 1024 << " KB, sender 1 paused "
              << t.hostPorts[1]->GetPausedTime().GetMicroSeconds() << " us" << std::endl;
    Simulator::Destroy();
    return 0;
}
