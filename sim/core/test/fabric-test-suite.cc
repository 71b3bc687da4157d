/*
 * The fabric skeleton (lfsim-fabric.h) on a hand-made chain h0 - sw0 - sw1 - h1, so that the
 * test depends on no model: the path walk, the port feeding a host, the wait-for graph's
 * queues (numbering, labels, Observe, MayWaitOn) and the stop after the last finite flow.
 *
 * Ports: 0 h0, 1 h1 (the addresses), 2 sw0 facing h0, 3 sw0 facing sw1, 4 sw1 facing sw0,
 * 5 sw1 facing h1.
 */
#include "lfsim-fabric.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <string>
#include <vector>

using namespace ns3;

namespace
{

struct Chain
{
    std::vector<uint32_t> peer{2, 5, 0, 4, 3, 1};
    std::vector<int32_t> portSwitch{-1, -1, 0, 0, 1, 1};
    std::vector<uint32_t> hostOf{0, 1};
    std::vector<int> switches{0, 0}; ///< only its size matters
    std::vector<std::string> portLabels{"h0", "h1", "sw0/p0", "sw0/p1", "sw1/p0", "sw1/p1"};
};

/// Every queue's bytes are 10 x its number; port i has sent i + 1 frames.
class ChainWaitFor : public lfsim::PortWaitFor<ChainWaitFor>
{
  public:
    ChainWaitFor(const Chain& c, bool waitOnHosts)
        : PortWaitFor(lfsim::PortMap::Of(c), c.portLabels, {3, 5}, true, waitOnHosts)
    {
    }

    uint64_t
    FramesTx(uint32_t i) const
    {
        return i + 1;
    }

    void
    Look(uint32_t, uint8_t c, uint32_t q, lfsim::WaitForState& s) const
    {
        s.blocked[q] = c == 5;
        s.bytes[q] = 10 * q;
    }

    void
    Edges(lfsim::WaitForState&) const override
    {
    }
};

class FabricSkeletonTest : public TestCase
{
  public:
    FabricSkeletonTest()
        : TestCase("the fabric skeleton's paths, queues and wait-for lists on a chain")
    {
    }

  private:
    void
    DoRun() override
    {
        const Chain c;
        const lfsim::PortMap map = lfsim::PortMap::Of(c);
        // Paths: each switch forwards toward h1 (sw0 by port 3, sw1 by port 5).
        auto toH1 = [](uint32_t s, uint32_t) { return s == 0 ? 3u : 5u; };
        NS_TEST_EXPECT_MSG_EQ((map.Path(0, toH1) == std::vector<uint32_t>{0, 3, 5}), true,
                              "h0's port, then one port per switch");
        auto noRoute = [](uint32_t s, uint32_t) { return s == 0 ? 3u : lfsim::NONE; };
        NS_TEST_EXPECT_MSG_EQ(map.Path(0, noRoute).empty(), true, "no route at sw1: no path");
        auto loop = [](uint32_t s, uint32_t) { return s == 0 ? 3u : 4u; };
        NS_TEST_EXPECT_MSG_EQ(map.Path(0, loop).empty(), true, "a routing loop ends: no path");
        NS_TEST_EXPECT_MSG_EQ(map.Feeder(1), 5u, "sw1/p1 feeds h1");
        Chain direct; // h0 cabled to h1
        direct.peer = {1, 0};
        direct.portSwitch = {-1, -1};
        NS_TEST_EXPECT_MSG_EQ(lfsim::PortMap::Of(direct).Feeder(1), lfsim::NONE, "no switch");

        // Queues: (port, class) with classes {3, 5}: queue q = port * 2 + class index.
        const ChainWaitFor w(c, false);
        NS_TEST_EXPECT_MSG_EQ(w.Queues(), 12u, "6 ports x 2 classes");
        NS_TEST_EXPECT_MSG_EQ(w.Label(7), "sw0/p1/prio5", "port 3, second class");
        lfsim::WaitForState s;
        s.blocked.assign(12, 0);
        s.since.assign(12, Time(0));
        s.bytes.assign(12, 0);
        w.Observe(s);
        NS_TEST_EXPECT_MSG_EQ(s.framesTx, 21u, "1 + 2 + ... + 6 frames");
        NS_TEST_EXPECT_MSG_EQ(s.bytes[11], 110u, "Look called for the last queue");
        NS_TEST_EXPECT_MSG_EQ(bool(s.blocked[7]) && !s.blocked[6], true, "class 5 of port 3");

        // May wait on: the queues of the far-end switch of the same class.
        const lfsim::MayWait may = w.MayWaitOn();
        NS_TEST_EXPECT_MSG_EQ((may.Of(0) == std::vector<uint32_t>{4, 6}), true,
                              "h0, class 3: sw0's ports 2 and 3, class 3");
        NS_TEST_EXPECT_MSG_EQ((may.Of(7) == std::vector<uint32_t>{9, 11}), true,
                              "sw0/p1, class 5: sw1's ports 4 and 5, class 5");
        NS_TEST_EXPECT_MSG_EQ(may.Of(10).empty(), true, "feeding a host: nothing");
        const ChainWaitFor h(c, true);
        NS_TEST_EXPECT_MSG_EQ((h.MayWaitOn().Of(10) == std::vector<uint32_t>{2}), true,
                              "waitOnHosts: h1's own queue of the class");

        // The bottleneck's average: bytes x time from the warmup on.
        lfsim::QueueAverage a;
        NS_TEST_EXPECT_MSG_EQ(a.Watch(map, 1, Seconds(1)), true, "a switch feeds h1");
        a.bytes = 100;
        a.Advance(Seconds(3));
        NS_TEST_EXPECT_MSG_EQ_TOL(a.integral, 200.0, 1e-9, "100 B over [1 s, 3 s]");

        // The flow's last message calls `done`; an endless flow keeps the run going.
        lfsim::FlowSpec finite;
        finite.messages = 2;
        lfsim::FlowSpec endless;
        endless.messages = 0;
        lfsim::FlowCompletion done;
        done.Add(finite);
        done.Add(endless);
        int calls = 0;
        done.Completed(finite, 1, [&] { ++calls; });
        NS_TEST_EXPECT_MSG_EQ(calls, 0, "one message of two");
        done.Completed(finite, 2, [&] { ++calls; });
        NS_TEST_EXPECT_MSG_EQ(calls, 1, "the last message");
        done.Completed(endless, 5, [&] { ++calls; });
        NS_TEST_EXPECT_MSG_EQ(calls, 1, "an endless flow never completes");
        NS_TEST_EXPECT_MSG_EQ(done.AllCompleted(), false, "the endless flow is still running");

        // Flows counted in by hand (iscsi_burst's pairs): the run stops at the last one, not
        // before, and not at a later event.
        lfsim::FlowCompletion pairs;
        pairs.Add(true);
        pairs.Add(true);
        bool later = false;
        Simulator::Schedule(Seconds(1), [&] { pairs.Completed(); });
        Simulator::Schedule(Seconds(2),
                            [&]
                            {
                                NS_TEST_EXPECT_MSG_EQ(pairs.AllCompleted(), false,
                                                      "one pair of two");
                                pairs.Completed();
                            });
        Simulator::Schedule(Seconds(3), [&] { later = true; });
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(pairs.AllCompleted(), true, "both pairs");
        NS_TEST_EXPECT_MSG_EQ(Simulator::Now(), Seconds(2), "stopped at the last pair");
        NS_TEST_EXPECT_MSG_EQ(later, false, "no event after the last pair ran");
        Simulator::Destroy();
    }
};

class FabricSkeletonTestSuite : public TestSuite
{
  public:
    FabricSkeletonTestSuite()
        : TestSuite("lfsim-fabric", UNIT)
    {
        AddTestCase(new FabricSkeletonTest, TestCase::QUICK);
    }
};

static FabricSkeletonTestSuite g_fabricSkeletonTestSuite;

} // namespace
