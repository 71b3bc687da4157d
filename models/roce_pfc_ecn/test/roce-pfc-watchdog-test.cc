/*
 * Tests of the switches' PFC watchdog (RoceSwitch.PfcWatchdog*): storm entry exactly
 * DetectionTime after a pause spell began, the Drop action's flush and MMU release, restoration
 * RestorationTime after the last XOFF, no trigger on shorter pauses or in a healthy incast, the
 * Forward action, the watchdog off, and a PFC deadlock on a ring that the watchdog breaks.
 */
#include "ethernet-speed.h"
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "rdma-nic.h"
#include "roce-channel.h"
#include "roce-helper.h"
#include "roce-net-device.h"
#include "roce-switch.h"

#include <cmath>
#include <functional>

using namespace ns3;

namespace
{

constexpr uint8_t RDMA_PRIO = 3; // DSCP 26 >> 3, the lossless class by default

/// The watchdog on, with detection and restoration short enough for a few-ms run.
void
EnableWatchdog(Time detection, Time restoration, const std::string& action)
{
    Config::SetDefault("ns3::PfcWatchdog::PfcWatchdog", BooleanValue(true));
    Config::SetDefault("ns3::PfcWatchdog::PfcWatchdogDetectionTime", TimeValue(detection));
    Config::SetDefault("ns3::PfcWatchdog::PfcWatchdogRestorationTime", TimeValue(restoration));
    Config::SetDefault("ns3::PfcWatchdog::PfcWatchdogAction", StringValue(action));
}

/**
 * A receiver whose NIC pauses its switch port on its own, as a stuck NIC does: two 25GbE hosts
 * on one switch, host 1 writes `bytes` to host 0, and the test makes host 0's port send PFC
 * frames for class 3 at chosen times. Everything the switch port facing host 0 (port 0) does
 * is recorded.
 */
class StuckReceiver
{
  public:
    explicit StuckReceiver(uint32_t bytes)
    {
        RoceHelper h;
        t = h.Leaf(2, EthSpeed::GBE25);
        sw = t.switches[0];
        host0 = t.hostPorts[0];
        toHost0 = sw->GetPort(0);
        fromHost1 = sw->GetPort(1);
        // A PFC frame (60 B + FCS = 64 B) sent by an idle port: preamble + frame, then the cable.
        pfcDelay = EthWireTime(EthSpeed::GBE25, ETH_PREAMBLE_SFD + 64)
                   + toHost0->GetRoceChannel()->GetPropagationDelay();
        toHost0->TraceConnectWithoutContext("PauseRx", MakeCallback(&StuckReceiver::PauseRx, this));
        toHost0->TraceConnectWithoutContext("Sniffer", MakeCallback(&StuckReceiver::Sniff, this));
        sw->GetPfcWatchdog()->TraceConnectWithoutContext("PfcWatchdog",
                                                         MakeCallback(&StuckReceiver::Wd, this));
        auto [a, b] = t.nics[1]->Connect(t.nics[0]);
        requester = a;
        responder = b;
        requester->Post(RdmaOp::WRITE, bytes);
    }

    /// Host 0's port sends a PFC frame for class 3 with `quanta` (0 = XON) at `at`.
    void
    Pfc(Time at, uint16_t quanta)
    {
        Simulator::Schedule(at, &RoceNetDevice::SendPause, host0, uint8_t(1u << RDMA_PRIO), quanta);
    }

    /// Called at each storm entry and restoration, after the watchdog has acted.
    std::function<void(bool)> onWatchdog;

    RoceTopology t;
    Ptr<RoceSwitch> sw;
    Ptr<RoceNetDevice> host0;
    Ptr<RoceNetDevice> toHost0;
    Ptr<RoceNetDevice> fromHost1;
    Ptr<RdmaQueuePair> requester;
    Ptr<RdmaQueuePair> responder;
    Time pfcDelay;
    std::vector<Time> xoffRx;                  ///< XOFFs arriving at port 0
    std::vector<std::pair<Time, bool>> events; ///< watchdog trace of port 0, class 3
    std::vector<Time> dataStarts;              ///< data frames starting on port 0
    uint32_t otherEvents = 0;                  ///< watchdog trace of any other queue

  private:
    void
    PauseRx(uint8_t prio, uint16_t quanta)
    {
        if (quanta != 0)
        {
            xoffRx.push_back(Simulator::Now());
        }
    }

    void
    Sniff(Ptr<const Packet> p)
    {
        // Port 0 receives only PFC and ACKs (< 100 B) from host 0; what it sends is data.
        if (p->GetSize() > 100)
        {
            dataStarts.push_back(Simulator::Now());
        }
    }

    void
    Wd(uint32_t port, uint8_t prio, bool storm)
    {
        if (port != 0 || prio != RDMA_PRIO)
        {
            ++otherEvents;
            return;
        }
        events.push_back({Simulator::Now(), storm});
        if (onWatchdog)
        {
            onWatchdog(storm);
        }
    }
};

// ---------------------------------------------------------------------------------------------

class WatchdogDropTest : public lfsim::ModelTestCase
{
  public:
    WatchdogDropTest()
        : lfsim::ModelTestCase(
            "PFC watchdog, Drop: a queue paused by XOFF refreshes enters the storm state "
            "exactly DetectionTime after the pause began, discards every queued frame, frees "
            "their buffer (XON upstream), restores RestorationTime after the last XOFF; go-back-N "
            "then delivers every byte once")
    {
    }

    void
    DoRun() override
    {
        const Time detection = MilliSeconds(1);
        const Time restoration = MilliSeconds(1);
        EnableWatchdog(detection, restoration, "Drop");
        const uint32_t bytes = 8 << 20;
        StuckReceiver s(bytes);
        // XOFFs every 500 us, each holding the class 30000 quanta (614.4 us at 25GbE): one
        // continuous pause from the first until 614.4 us after the last. The first one goes out
        // before any data reaches the switch, so port 0 never sends a frame before the storm and
        // host 0 never sends an ACK that could delay an XOFF.
        const Time first = MicroSeconds(1);
        const uint16_t quanta = 30000;
        const int n = 5;
        for (int k = 0; k < n; ++k)
        {
            s.Pfc(first + MicroSeconds(500) * k, quanta);
        }
        const Time pauseStart = first + s.pfcDelay;
        const Time stormAt = pauseStart + detection;
        const Time lastXoffRx = first + MicroSeconds(500) * (n - 1) + s.pfcDelay;
        const Time restoreAt = lastXoffRx + restoration;

        // Just before the storm: frames held at port 0 are all the switch buffers, host 1 is
        // paused (XOFF sent, no XON yet).
        uint64_t heldBytes = 0;
        uint64_t heldFrames = 0;
        Simulator::Schedule(
            stormAt - NanoSeconds(1),
            [&]()
            {
                heldBytes = s.toHost0->GetQueueBytes(RDMA_PRIO);
                heldFrames = s.fromHost1->GetCounters().framesRx; // host 1 sends only data
                NS_TEST_EXPECT_MSG_EQ(s.toHost0->IsPaused(RDMA_PRIO), true, "held by PFC");
                NS_TEST_EXPECT_MSG_EQ(s.toHost0->GetPauseStart(RDMA_PRIO), pauseStart,
                                      "one pause spell since the first XOFF");
                NS_TEST_EXPECT_MSG_EQ(s.toHost0->GetCounters().framesTx, 0u, "nothing sent");
                NS_TEST_EXPECT_MSG_EQ(s.sw->GetBufferedBytes(), heldBytes,
                                      "all buffered at port 0");
                NS_TEST_EXPECT_MSG_GT(s.fromHost1->GetCounters().pauseTx, 0u, "host 1 paused");
                NS_TEST_EXPECT_MSG_EQ(s.fromHost1->GetCounters().xonTx, 0u, "no XON yet");
                NS_TEST_EXPECT_MSG_EQ(s.sw->GetCounters().wdStorms, 0u, "no storm yet");
            });
        bool checkedStorm = false;
        uint64_t dropsAtRestore = 0;
        s.onWatchdog = [&](bool storm)
        {
            if (!storm)
            {
                dropsAtRestore = s.sw->GetCounters().wdDrops;
                return;
            }
            if (checkedStorm)
            {
                return;
            }
            checkedStorm = true;
            const auto& c = s.sw->GetCounters();
            NS_TEST_EXPECT_MSG_EQ(c.wdDrops, heldFrames, "every queued frame discarded");
            NS_TEST_EXPECT_MSG_EQ(s.toHost0->GetQueueBytes(RDMA_PRIO), 0u, "queue empty");
            NS_TEST_EXPECT_MSG_EQ(s.sw->GetBufferedBytes(), 0u, "their buffer is free");
            NS_TEST_EXPECT_MSG_EQ(s.fromHost1->GetCounters().xonTx, 1u, "XON to host 1");
            NS_TEST_EXPECT_MSG_EQ(s.toHost0->IsPaused(RDMA_PRIO), true, "still paused by peer");
            NS_TEST_EXPECT_MSG_EQ(s.toHost0->IsPfcIgnored(RDMA_PRIO), true, "and ignoring it");
            NS_TEST_EXPECT_MSG_EQ(s.sw->IsPfcStorm(0, RDMA_PRIO), true, "storm state");
        };
        // In the storm, host 1 sends again and port 0 discards on arrival: nothing goes out.
        uint64_t dropsMid = 0;
        Simulator::Schedule(
            (stormAt + restoreAt) / 2,
            [&]()
            {
                dropsMid = s.sw->GetCounters().wdDrops;
                NS_TEST_EXPECT_MSG_GT(dropsMid, heldFrames, "arrivals discarded too");
                NS_TEST_EXPECT_MSG_EQ(s.sw->GetBufferedBytes(), 0u, "at once");
                NS_TEST_EXPECT_MSG_EQ(s.toHost0->GetCounters().framesTx, 0u, "nothing sent");
            });
        Simulator::Run();

        NS_TEST_ASSERT_MSG_EQ(s.events.size(), 2u, "one storm, one restoration");
        NS_TEST_EXPECT_MSG_EQ(s.otherEvents, 0u, "no other queue");
        NS_TEST_EXPECT_MSG_EQ(s.xoffRx.size(), size_t(n), "XOFFs arrived");
        NS_TEST_EXPECT_MSG_EQ(s.xoffRx.back(), lastXoffRx, "last XOFF arrival");
        NS_TEST_EXPECT_MSG_EQ(s.events[0].second, true, "storm first");
        NS_TEST_EXPECT_MSG_EQ(s.events[0].first, stormAt, "storm = pause start + DetectionTime");
        NS_TEST_EXPECT_MSG_EQ(s.events[1].second, false, "then restored");
        NS_TEST_EXPECT_MSG_EQ(s.events[1].first, restoreAt,
                              "restored = last XOFF + RestorationTime");
        NS_TEST_ASSERT_MSG_EQ(s.dataStarts.empty(), false, "port 0 sent after restoration");
        // The queue was emptied, and the last pause ended before: the first frame sent is the
        // first one host 1 delivers after restoration, at most one frame time plus the
        // switch's forwarding latency later.
        const Time middle = EthWireTime(EthSpeed::GBE25, 4178);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(s.dataStarts.front(), restoreAt, "not before restoration");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(s.dataStarts.front(), restoreAt + middle + NanoSeconds(500),
                                    "the first arrival after it");
        const auto& c = s.sw->GetCounters();
        NS_TEST_EXPECT_MSG_EQ(c.wdStorms, 1u, "storms");
        NS_TEST_EXPECT_MSG_EQ(c.wdRestored, 1u, "restorations");
        NS_TEST_EXPECT_MSG_EQ(c.wdDrops, dropsAtRestore, "no discard after restoration");
        NS_TEST_EXPECT_MSG_EQ(s.sw->GetDrops(), c.wdDrops, "the watchdog's are the only drops");
        NS_TEST_EXPECT_MSG_EQ(s.toHost0->IsPfcIgnored(RDMA_PRIO), false, "PFC honoured again");
        // The cost: every discarded copy of a packet is followed by another copy of it, a
        // retransmission (go-back-N from the NAK of the first packet after the gap).
        NS_TEST_EXPECT_MSG_EQ(s.requester->GetCompleted(), 1u, "the write completed");
        NS_TEST_EXPECT_MSG_EQ(s.responder->GetBytesReceived(), uint64_t(bytes), "bytes once");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(s.requester->GetRetransmittedPackets(), c.wdDrops,
                                    "each discarded packet sent again");
        NS_TEST_EXPECT_MSG_EQ(s.sw->GetBufferedBytes(), 0u, "buffers empty at the end");
    }
};

class WatchdogShortPauseTest : public lfsim::ModelTestCase
{
  public:
    WatchdogShortPauseTest()
        : lfsim::ModelTestCase("PFC watchdog: pause spells shorter than DetectionTime never "
                               "trigger it, however long they add up to")
    {
    }

    void
    DoRun() override
    {
        const Time detection = MilliSeconds(1);
        EnableWatchdog(detection, MilliSeconds(1), "Drop");
        const uint32_t bytes = 8 << 20;
        StuckReceiver s(bytes);
        // Two spells of 899 us (XOFF refreshed after 500 us, then XON), 300 us apart: together
        // 1.8 ms paused, never DetectionTime at once.
        for (Time t0 : {MicroSeconds(1), MicroSeconds(1201)})
        {
            s.Pfc(t0, 30000);
            s.Pfc(t0 + MicroSeconds(500), 30000);
            s.Pfc(t0 + MicroSeconds(899), 0);
        }
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(s.events.size(), 0u, "no storm");
        NS_TEST_EXPECT_MSG_EQ(s.otherEvents, 0u, "on no queue");
        const auto& c = s.sw->GetCounters();
        NS_TEST_EXPECT_MSG_EQ(c.wdStorms + c.wdRestored + c.wdDrops, 0u, "counters stay 0");
        NS_TEST_EXPECT_MSG_GT(s.toHost0->GetPausedTime(RDMA_PRIO), detection,
                              "paused longer than DetectionTime in total");
        NS_TEST_EXPECT_MSG_EQ(s.sw->GetDrops(), 0u, "lossless");
        NS_TEST_EXPECT_MSG_EQ(s.responder->GetBytesReceived(), uint64_t(bytes), "all delivered");
        NS_TEST_EXPECT_MSG_EQ(s.requester->GetRetransmittedPackets(), 0u, "nothing resent");
    }
};

class WatchdogForwardTest : public lfsim::ModelTestCase
{
  public:
    WatchdogForwardTest()
        : lfsim::ModelTestCase(
            "PFC watchdog, Forward: from the storm entry on, port 0 sends at line rate while "
            "its peer keeps pausing it; nothing is dropped")
    {
    }

    void
    DoRun() override
    {
        const Time detection = MilliSeconds(1);
        const Time restoration = MilliSeconds(1);
        EnableWatchdog(detection, restoration, "Forward");
        const uint32_t bytes = 8 << 20;
        StuckReceiver s(bytes);
        const Time first = MicroSeconds(1);
        const int n = 5;
        for (int k = 0; k < n; ++k)
        {
            s.Pfc(first + MicroSeconds(500) * k, 30000);
        }
        const Time stormAt = first + s.pfcDelay + detection;
        bool ignoredMid = false;
        bool pausedMid = false;
        Simulator::Schedule(stormAt + MicroSeconds(500),
                            [&]()
                            {
                                pausedMid = s.toHost0->IsPaused(RDMA_PRIO);
                                ignoredMid = s.toHost0->IsPfcIgnored(RDMA_PRIO);
                            });
        Simulator::Run();

        NS_TEST_ASSERT_MSG_EQ(s.events.size(), 2u, "one storm, one restoration");
        NS_TEST_EXPECT_MSG_EQ(s.events[0].first, stormAt, "storm = pause start + DetectionTime");
        // Host 0 now sends ACKs, which may delay an XOFF by a frame: take the arrival seen.
        NS_TEST_EXPECT_MSG_EQ(s.events[1].first, s.xoffRx.back() + restoration,
                              "restored = last XOFF + RestorationTime");
        NS_TEST_EXPECT_MSG_EQ(pausedMid, true, "the peer still pauses mid-storm");
        NS_TEST_EXPECT_MSG_EQ(ignoredMid, true, "and the port ignores it");
        NS_TEST_ASSERT_MSG_EQ(s.dataStarts.empty(), false, "frames sent");
        NS_TEST_EXPECT_MSG_EQ(s.dataStarts.front(), stormAt, "the first at the storm entry");
        // Back to back while the pause lasts: the first frame is the write's First packet
        // (4096 B payload + 70 B headers + ICRC 4 = 4170 B, 4194 B of line time), the others
        // Middle ones (4154 B, 4178 B of line time).
        const Time end = s.xoffRx.back();
        uint32_t sent = 0;
        for (Time t : s.dataStarts)
        {
            sent += t < end ? 1 : 0;
        }
        const Time firstFrame = EthWireTime(EthSpeed::GBE25, 4194);
        const Time middle = EthWireTime(EthSpeed::GBE25, 4178);
        const uint32_t expect
            = 1
              + uint32_t(std::ceil((end - stormAt - firstFrame).GetDouble() / middle.GetDouble()));
        NS_TEST_EXPECT_MSG_EQ(sent, expect, "line rate through the pause");
        NS_TEST_EXPECT_MSG_EQ(s.sw->GetCounters().wdDrops, 0u, "Forward discards nothing");
        NS_TEST_EXPECT_MSG_EQ(s.sw->GetDrops(), 0u, "no drop at all");
        NS_TEST_EXPECT_MSG_EQ(s.responder->GetBytesReceived(), uint64_t(bytes), "bytes once");
        NS_TEST_EXPECT_MSG_EQ(s.requester->GetRetransmittedPackets(), 0u, "nothing resent");
    }
};

class WatchdogOffTest : public lfsim::ModelTestCase
{
  public:
    WatchdogOffTest()
        : lfsim::ModelTestCase("PFC watchdog off (default): the stuck receiver's pause holds "
                               "every frame until its last timer runs out; nothing is dropped")
    {
    }

    void
    DoRun() override
    {
        const uint32_t bytes = 8 << 20;
        StuckReceiver s(bytes);
        const Time first = MicroSeconds(1);
        const uint16_t quanta = 30000;
        const int n = 5;
        for (int k = 0; k < n; ++k)
        {
            s.Pfc(first + MicroSeconds(500) * k, quanta);
        }
        const Time lastXoffRx = first + MicroSeconds(500) * (n - 1) + s.pfcDelay;
        const Time pauseEnd = lastXoffRx + PfcQuantum(EthSpeed::GBE25) * int64_t(quanta);
        uint64_t heldBytes = 0;
        Simulator::Schedule(
            pauseEnd - NanoSeconds(1),
            [&]()
            {
                heldBytes = s.toHost0->GetQueueBytes(RDMA_PRIO);
                NS_TEST_EXPECT_MSG_EQ(s.sw->GetBufferedBytes(), heldBytes, "all held at port 0");
                NS_TEST_EXPECT_MSG_EQ(s.toHost0->IsPfcIgnored(RDMA_PRIO), false, "PFC honoured");
            });
        Simulator::Run();
        NS_TEST_EXPECT_MSG_GT(heldBytes, 0u, "frames held through the pause");
        NS_TEST_EXPECT_MSG_EQ(s.events.size() + s.otherEvents, 0u, "no watchdog event");
        const auto& c = s.sw->GetCounters();
        NS_TEST_EXPECT_MSG_EQ(c.wdStorms + c.wdRestored + c.wdDrops, 0u, "counters stay 0");
        NS_TEST_ASSERT_MSG_EQ(s.dataStarts.empty(), false, "frames sent");
        NS_TEST_EXPECT_MSG_EQ(s.dataStarts.front(), pauseEnd, "first when the last timer ends");
        NS_TEST_EXPECT_MSG_EQ(s.sw->GetDrops(), 0u, "lossless");
        NS_TEST_EXPECT_MSG_EQ(s.responder->GetBytesReceived(), uint64_t(bytes), "bytes once");
        NS_TEST_EXPECT_MSG_EQ(s.requester->GetRetransmittedPackets(), 0u, "nothing resent");
    }
};

// ---------------------------------------------------------------------------------------------

/// A leaf-spine incast (PFC active on every tier); returns per-port frames sent and each
/// flow's completion times.
struct IncastOutcome
{
    std::vector<uint64_t> framesTx;
    std::vector<Time> completions;
    uint64_t switchPauseRx = 0;
    RoceSwitch::Counters wd; ///< summed watchdog counters
};

IncastOutcome
RunIncast()
{
    Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(1000000));
    RoceHelper h;
    std::vector<uint32_t> leafOf{0};
    for (int i = 0; i < 16; ++i)
    {
        leafOf.push_back(1 + i % 2);
    }
    RoceTopology t = h.LeafSpine(leafOf, 3, 2, EthSpeed::GBE25, EthSpeed::GBE25);
    IncastOutcome o;
    for (uint32_t i = 1; i < leafOf.size(); ++i)
    {
        auto [a, b] = t.nics[i]->Connect(t.nics[0]);
        a->SetCompletionCallback(
            MakeCallback(+[](IncastOutcome* o, Ptr<RdmaQueuePair>, uint64_t, uint32_t, Time) {
                o->completions.push_back(Simulator::Now());
            }).Bind(&o));
        for (int m = 0; m < 4; ++m)
        {
            a->Post(RdmaOp::WRITE, 262144);
        }
    }
    Simulator::Run();
    for (uint32_t i = 0; i < t.ports.size(); ++i)
    {
        o.framesTx.push_back(t.ports[i]->GetCounters().framesTx);
        if (t.portSwitch[i] >= 0)
        {
            o.switchPauseRx += t.ports[i]->GetCounters().pauseRx;
        }
    }
    for (auto& sw : t.switches)
    {
        o.wd.wdStorms += sw->GetCounters().wdStorms;
        o.wd.wdRestored += sw->GetCounters().wdRestored;
        o.wd.wdDrops += sw->GetCounters().wdDrops;
    }
    Simulator::Destroy();
    return o;
}

class WatchdogHealthyIncastTest : public lfsim::ModelTestCase
{
  public:
    WatchdogHealthyIncastTest()
        : lfsim::ModelTestCase(
            "PFC watchdog in a healthy leaf-spine incast (switch ports paused by switches): "
            "with DetectionTime 200 us, 1000x below the default, it never fires and the run is "
            "frame for frame the one without it")
    {
    }

    void
    DoRun() override
    {
        IncastOutcome off = RunIncast();
        EnableWatchdog(MicroSeconds(200), MicroSeconds(200), "Drop");
        IncastOutcome on = RunIncast();
        NS_TEST_EXPECT_MSG_GT(on.switchPauseRx, 0u, "switch ports were paused: it had work");
        NS_TEST_EXPECT_MSG_EQ(on.wd.wdStorms + on.wd.wdRestored + on.wd.wdDrops, 0u, "never fired");
        NS_TEST_EXPECT_MSG_EQ(on.completions.size(), 16u * 4, "every message completed");
        NS_TEST_EXPECT_MSG_EQ((on.framesTx == off.framesTx), true, "same frames on every port");
        NS_TEST_EXPECT_MSG_EQ((on.completions == off.completions), true, "same completion times");
    }
};

// ---------------------------------------------------------------------------------------------

/**
 * Three switches in a ring, one 25GbE host on each; every switch routes every other host
 * clockwise (port 1 to the next switch; port 2 comes from the previous one) and host i writes
 * to host i + 2, two hops on, from time i x `stagger`. Each inter-switch link carries two flows
 * and each switch's ingress from the ring holds frames for its clockwise egress: a cyclic
 * buffer dependency, which PFC turns into a deadlock once every clockwise egress is paused.
 */
struct Ring
{
    static constexpr uint32_t N = 3;
    std::vector<Ptr<RoceSwitch>> switches;
    std::vector<Ptr<RoceNetDevice>> hostPorts;
    std::vector<Ptr<RdmaNic>> nics;
    std::vector<Ptr<RdmaQueuePair>> requesters;
    std::vector<Ptr<RdmaQueuePair>> responders;

    Ring(uint32_t messages, uint32_t size, Time stagger)
    {
        std::vector<Ptr<Node>> hosts;
        std::vector<Ptr<Node>> swNodes;
        auto port = [](Ptr<Node> node)
        {
            Ptr<RoceNetDevice> d = CreateObject<RoceNetDevice>();
            d->SetAddress(Mac48Address::Allocate());
            d->SetSpeed(EthSpeed::GBE25);
            node->AddDevice(d);
            return d;
        };
        auto link = [](Ptr<RoceNetDevice> a, Ptr<RoceNetDevice> b)
        {
            Ptr<RoceChannel> ch = CreateObject<RoceChannel>();
            a->Attach(ch);
            b->Attach(ch);
        };
        for (uint32_t i = 0; i < N; ++i)
        {
            hosts.push_back(CreateObject<Node>());
            hostPorts.push_back(port(hosts[i]));
            swNodes.push_back(CreateObject<Node>());
            switches.push_back(CreateObject<RoceSwitch>());
            swNodes[i]->AggregateObject(switches[i]);
            for (int p = 0; p < 3; ++p)
            {
                switches[i]->AddPort(port(swNodes[i]));
            }
            link(hostPorts[i], switches[i]->GetPort(0));
        }
        for (uint32_t i = 0; i < N; ++i)
        {
            link(switches[i]->GetPort(1), switches[(i + 1) % N]->GetPort(2));
        }
        for (uint32_t s = 0; s < N; ++s)
        {
            // Port sets {0} (the host) and {1} (clockwise): host s is local, the others
            // clockwise (intervals of addresses: [0, s), s, (s, N)).
            std::vector<uint32_t> start;
            std::vector<uint32_t> setOf;
            for (uint32_t from : {0u, s, s + 1})
            {
                if (from < N && (start.empty() || start.back() != from))
                {
                    start.push_back(from);
                    setOf.push_back(from == s ? 0u : 1u);
                }
            }
            switches[s]->SetRoutes({{0u}, {1u}}, start, setOf, N, RoceHelper::HOST_IP_BASE);
            switches[s]->Setup(s);
        }
        for (uint32_t i = 0; i < N; ++i)
        {
            nics.push_back(CreateObject<RdmaNic>());
            hosts[i]->AggregateObject(nics[i]);
            nics[i]->Setup(hostPorts[i], Ipv4Address(RoceHelper::HOST_IP_BASE + i));
        }
        for (uint32_t i = 0; i < N; ++i)
        {
            auto [a, b] = nics[i]->Connect(nics[(i + 2) % N]);
            requesters.push_back(a);
            responders.push_back(b);
            for (uint32_t m = 0; m < messages; ++m)
            {
                Simulator::Schedule(stagger * i, &RdmaQueuePair::Post, a, RdmaOp::WRITE, size);
            }
        }
    }

    /// Frames other than PFC sent clockwise between the switches so far.
    uint64_t
    RingDataFrames() const
    {
        uint64_t n = 0;
        for (auto& sw : switches)
        {
            const auto& c = sw->GetPort(1)->GetCounters();
            n += c.framesTx - c.pauseTx - c.xonTx;
        }
        return n;
    }

    uint64_t
    Completed() const
    {
        uint64_t n = 0;
        for (auto& qp : requesters)
        {
            n += qp->GetCompleted();
        }
        return n;
    }
};

class WatchdogDeadlockTest : public lfsim::ModelTestCase
{
  public:
    WatchdogDeadlockTest()
        : lfsim::ModelTestCase(
            "PFC deadlock on a 3-switch ring: without the watchdog nothing moves any more and "
            "the writes never complete; with it (Drop or Forward) the deadlock breaks, at the "
            "price of drops and go-back-N retransmissions, and every byte arrives once")
    {
    }

    void
    DoRun() override
    {
        const uint32_t messages = 4;
        const uint32_t size = 1 << 20;
        // Staggered starts: with all three at once, Drop empties the ring, the three requesters
        // time out together, go back to the same PSNs and re-form the same deadlock after every
        // restoration (a livelock the doc describes); real flows are not in lockstep.
        const Time stagger = MicroSeconds(100);
        const Time stop = MilliSeconds(100);
        {
            Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(400000));
            Ring r(messages, size, stagger);
            uint64_t movedBy50 = 0;
            Simulator::Schedule(MilliSeconds(50), [&]() { movedBy50 = r.RingDataFrames(); });
            Simulator::Stop(stop);
            Simulator::Run();
            // Between 50 and 100 ms only PFC refreshes cross the ring: every clockwise egress
            // is paused, holds frames, and waits on the next one.
            for (auto& sw : r.switches)
            {
                NS_TEST_EXPECT_MSG_EQ(sw->GetPort(1)->IsPaused(RDMA_PRIO), true, "paused");
                NS_TEST_EXPECT_MSG_GT(sw->GetPort(1)->GetQueueBytes(RDMA_PRIO), 0u, "holds");
            }
            NS_TEST_EXPECT_MSG_EQ(r.RingDataFrames(), movedBy50,
                                  "deadlocked: no data crosses the ring");
            NS_TEST_EXPECT_MSG_LT(r.Completed(), uint64_t(Ring::N) * messages, "writes stuck");
            Simulator::Destroy();
        }
        for (const char* action : {"Drop", "Forward"})
        {
            Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(400000));
            EnableWatchdog(MilliSeconds(1), MilliSeconds(1), action);
            const bool drop = std::string(action) == "Drop";
            Ring r(messages, size, stagger);
            Simulator::Stop(stop);
            Simulator::Run();
            RoceSwitch::Counters sum;
            uint64_t resent = 0;
            for (uint32_t i = 0; i < Ring::N; ++i)
            {
                const auto& c = r.switches[i]->GetCounters();
                sum.wdStorms += c.wdStorms;
                sum.wdRestored += c.wdRestored;
                sum.wdDrops += c.wdDrops;
                sum.dropsHeadroom += c.dropsHeadroom;
                resent += r.requesters[i]->GetRetransmittedPackets();
                NS_TEST_EXPECT_MSG_EQ(r.responders[i]->GetBytesReceived(),
                                      uint64_t(messages) * size, action << ": bytes once " << i);
                NS_TEST_EXPECT_MSG_EQ(r.switches[i]->GetBufferedBytes(), 0u, action << ": empty");
            }
            NS_TEST_EXPECT_MSG_GT(sum.wdStorms, 0u, action << ": storms");
            NS_TEST_EXPECT_MSG_EQ(sum.wdRestored, sum.wdStorms, action << ": all restored");
            NS_TEST_EXPECT_MSG_EQ(r.Completed(), uint64_t(Ring::N) * messages,
                                  action << ": every write completed");
            // The price. Drop discards at the stormed queues; Forward sends into a switch whose
            // ingress is over its XOFF threshold and loses frames to its exhausted headroom.
            NS_TEST_EXPECT_MSG_GT(drop ? sum.wdDrops : sum.dropsHeadroom, 0u,
                                  action << ": frames lost");
            NS_TEST_EXPECT_MSG_EQ(drop ? sum.dropsHeadroom : sum.wdDrops, 0u,
                                  action << ": and only there");
            NS_TEST_EXPECT_MSG_GT(resent, 0u, action << ": go-back-N resent them");
            Simulator::Destroy();
            Config::Reset();
        }
    }
};

class RocePfcWatchdogTestSuite : public TestSuite
{
  public:
    RocePfcWatchdogTestSuite()
        : TestSuite("roce-pfc-watchdog", UNIT)
    {
        AddTestCase(new WatchdogDropTest, TestCase::QUICK);
        AddTestCase(new WatchdogShortPauseTest, TestCase::QUICK);
        AddTestCase(new WatchdogForwardTest, TestCase::QUICK);
        AddTestCase(new WatchdogOffTest, TestCase::QUICK);
        AddTestCase(new WatchdogHealthyIncastTest, TestCase::QUICK);
        AddTestCase(new WatchdogDeadlockTest, TestCase::QUICK);
    }
};

RocePfcWatchdogTestSuite g_suite;

} // namespace
