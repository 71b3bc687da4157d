/*
 * HPCC: Algorithm 1 of the paper step by step against values computed by hand from INT records,
 * its bounds, and a long-flow incast held near its target utilization with almost no queue, the
 * switches stamping INT into the packets.
 */
#include "hpcc.h"
#include "lfsim-test.h"
#include "ns3/test.h"
#include "roce-cc-check.h"

#include <cmath>

using namespace ns3;

namespace
{

HpccWindow::Config
Config25G()
{
    HpccWindow::Config c;
    c.lineRate = 25e9;
    c.minRate = 100e6;
    c.baseRtt = 10e-6;
    c.eta = 0.95;
    c.maxStage = 5;
    c.wAi = 50e6 / 8 * 10e-6; // 62.5 B
    return c;
}

IntHop
Hop(uint64_t ns, uint64_t txBytes, uint64_t qBytes)
{
    return IntHop::Make(uint8_t(EthSpeed::GBE25), ns, txBytes, qBytes);
}

class HpccEquationsTest : public TestCase
{
  public:
    HpccEquationsTest()
        : TestCase("HPCC: utilization from INT (queue and tx rate per hop), its EWMA over the "
                   "base RTT, additive and multiplicative window updates, W^c once per RTT")
    {
    }

    void
    DoRun() override
    {
        HpccWindow h(Config25G());
        const double w0 = 25e9 / 8 * 10e-6; // W_init = B T = 31250 B
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Window(), w0, 1e-9, "W_init = B T");
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Rate(), 25e9, 1e-3, "R = W / T = line rate");
        IntHop a = Hop(1000, 0, 0);
        NS_TEST_EXPECT_MSG_EQ(h.OnAck(&a, 1, true), false, "the first records only stored");
        // 10 us later (tau = T: U = u): 31232 B sent (24.9856 Gb/s), 512000 B queued (the min
        // with the previous record's 0 is 0): u = 24.9856/25 = 0.999424 >= eta: W = W^c / (U /
        // eta) + W_AI; a new RTT: W^c = W, incStage 0.
        IntHop b = Hop(11000, 31232, 512000);
        NS_TEST_EXPECT_MSG_EQ(h.OnAck(&b, 1, true), true, "compared with the previous record");
        double u = 0.999424;
        double wc = w0 / (u / 0.95) + 62.5;
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Utilization(), u, 1e-12, "U = u when tau = T");
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Window(), wc, 1e-9, "multiplicative decrease");
        NS_TEST_EXPECT_MSG_EQ(h.IncStage(), 0u, "incStage 0");
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Rate(), wc * 8 / 10e-6, 1e-3, "R = W / T");
        // 1 us later: 1280 B more (10.24 Gb/s: 0.4096), nothing queued (min 0): U = 0.9 U +
        // 0.1 x 0.4096 = 0.9404416 < eta: W = W^c + W_AI; a new RTT: W^c = W, incStage 1.
        IntHop c = Hop(12000, 31232 + 1280, 0);
        h.OnAck(&c, 1, true);
        u = 0.9 * u + 0.1 * 0.4096;
        wc += 62.5;
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Utilization(), u, 1e-12, "U (EWMA, tau = T/10)");
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Window(), wc, 1e-9, "W = W^c + W_AI");
        NS_TEST_EXPECT_MSG_EQ(h.IncStage(), 1u, "incStage 1");
        // The same RTT: again 0.4096: U = 0.9 U + 0.04096, W = W^c + W_AI from the W^c kept;
        // W^c and incStage unchanged.
        IntHop d = Hop(13000, 31232 + 2560, 0);
        h.OnAck(&d, 1, false);
        u = 0.9 * u + 0.1 * 0.4096;
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Utilization(), u, 1e-12, "U (2)");
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Window(), wc + 62.5, 1e-9, "W from W^c");
        NS_TEST_EXPECT_MSG_EQ_TOL(h.ReferenceWindow(), wc, 1e-9, "W^c kept inside the RTT");
        NS_TEST_EXPECT_MSG_EQ(h.IncStage(), 1u, "incStage kept");
        // A queue behind the packet counts at its minimum over the two records: 51200 B then
        // 25600 B: 25600 x 8 / (25e9 x 10e-6) = 0.8192, plus 0 tx in 1 us.
        IntHop e1 = Hop(14000, 31232 + 2560, 51200);
        h.OnAck(&e1, 1, false);
        u = 0.9 * u; // min(51200, 0) = 0 queued, 0 sent
        IntHop e2 = Hop(15000, 31232 + 2560, 25600);
        h.OnAck(&e2, 1, false);
        u = 0.9 * u + 0.1 * 0.8192;
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Utilization(), u, 1e-12, "queue term at its minimum");
        // Two hops: the more loaded decides. Records must first be stored for a 2-hop path.
        IntHop two[2] = {Hop(14000, 40000, 0), Hop(14000, 0, 0)};
        NS_TEST_EXPECT_MSG_EQ(h.OnAck(two, 2, false), false, "a new path: records only stored");
        IntHop next[2] = {Hop(15000, 40000 + 1280, 0), Hop(15000, 3072, 0)};
        h.OnAck(next, 2, false);
        // Hop 0: 1280 B/us = 10.24 Gb/s -> 0.4096; hop 1: 3072 B/us = 24.576 Gb/s -> 0.98304.
        u = 0.9 * u + 0.1 * 0.98304;
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Utilization(), u, 1e-12, "the most loaded hop");
    }
};

class HpccBoundsTest : public TestCase
{
  public:
    HpccBoundsTest()
        : TestCase("HPCC: the window shrinks no lower than MinRate x T, the rate stays within "
                   "[MinRate, line rate] however far U is from eta")
    {
    }

    void
    DoRun() override
    {
        HpccWindow h(Config25G());
        uint64_t ns = 0;
        uint64_t tx = 0;
        IntHop first = Hop(ns, tx, 0);
        h.OnAck(&first, 1, true);
        for (int k = 0; k < 50; ++k) // a full line and a 4-MB queue: U about 14
        {
            ns += 10000;
            tx += 31232;
            IntHop x = Hop(ns, tx, 4 << 20);
            h.OnAck(&x, 1, true);
            NS_TEST_ASSERT_MSG_GT_OR_EQ(h.Rate(), 100e6, "never below MinRate");
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Window(), 100e6 / 8 * 10e-6, 1e-9, "W at MinRate x T");
        for (int k = 0; k < 5000; ++k) // an idle path: U -> 0, additive then multiplicative up
        {
            ns += 10000;
            IntHop x = Hop(ns, tx, 0);
            h.OnAck(&x, 1, true);
            NS_TEST_ASSERT_MSG_LT_OR_EQ(h.Rate(), 25e9, "never above the line rate");
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(h.Rate(), 25e9, 1e-3, "back at the line rate");
    }
};

class HpccIncastTest : public lfsim::ModelTestCase
{
  public:
    HpccIncastTest()
        : lfsim::ModelTestCase("HPCC, 8 long flows into one 25GbE port: a near-empty queue, "
                               "the link near eta = 95 %, no PFC, no ECN needed, rates within "
                               "bounds")
    {
    }

    void
    DoRun() override
    {
        // The paper's regime: 1 KB packets, 1 us links (a pair's base RTT 5.66 us, its BDP 17
        // packets). With 4 KiB packets on 10 ns cables the BDP is under 3 packets and one
        // queued packet counts 0.36 of U: HPCC holds the link nearer 83 % (doc/hpcc.md).
        auto run = CcIncast("Hpcc", 8, "10ms", "3ms");
        run.Class("ns3::RoceSwitch", "EcnEnabled", "false")
            .Class("ns3::RdmaNic", "PathMtu", "1024")
            .Class("ns3::RoceChannel", "Length", "200");
        const auto r = run.Run();
        // 1024 B of payload per 1106 + 42 (INT: 2 + 5 x 8) line bytes.
        const double line = 25.0 * 1024 / 1148;
        const double g = lfsim::Metric(r, "total_goodput_Gbps");
        NS_TEST_EXPECT_MSG_GT(g, 0.9 * 0.95 * line, "near eta");
        NS_TEST_EXPECT_MSG_LT(g, 0.99 * line, "below the line: HPCC leaves 1 - eta");
        NS_TEST_EXPECT_MSG_LT(lfsim::Metric(r, "mean_queue_KiB"), 10.0, "near-zero queue");
        NS_TEST_EXPECT_MSG_EQ(lfsim::Metric(r, "pause_frames_sent"), 0.0, "no PFC");
        const auto [lo, hi] = RateRange(r);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(lo, 0.1, "never below MinRate (100 Mb/s)");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(hi, 25.0, "never above the line rate");
        NS_TEST_EXPECT_MSG_LT(lo, 25.0, "and it did act");
    }
};

} // namespace

class HpccTestSuite : public TestSuite
{
  public:
    HpccTestSuite()
        : TestSuite("hpcc", UNIT)
    {
        AddTestCase(new HpccEquationsTest, TestCase::QUICK);
        AddTestCase(new HpccBoundsTest, TestCase::QUICK);
        AddTestCase(new HpccIncastTest, TestCase::QUICK);
    }
};

static HpccTestSuite g_hpccTestSuite;
