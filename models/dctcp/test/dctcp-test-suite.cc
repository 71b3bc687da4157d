/*
 * DCTCP-style rate control for RDMA: its equations step by step against values computed by hand
 * from the definition (doc/dctcp.md), its bounds, and an incast whose queue DCTCP holds at the
 * marking threshold K.
 */
#include "dctcp.h"
#include "lfsim-test.h"
#include "ns3/test.h"
#include "roce-cc-check.h"

#include <cmath>

using namespace ns3;

namespace
{

DctcpRate::Config
Config25G()
{
    DctcpRate::Config c;
    c.lineRate = 25e9;
    c.minRate = 100e6;
    c.rateAi = 1e9;
    c.g = 1.0 / 16;
    c.initialAlpha = 1;
    return c;
}

class DctcpEquationsTest : public TestCase
{
  public:
    DctcpEquationsTest()
        : TestCase("DCTCP for RDMA: alpha once per window from the marked fraction of bytes, "
                   "one cut R (1 - alpha x 0.5) per window, R_AI per window outside CWR")
    {
    }

    void
    DoRun() override
    {
        DctcpRate d(Config25G());
        const double mss = 4096;
        // ACK of PSN 0 (snd.una 1), snd.nxt 10: the first window starts, ends past PSN 10.
        d.OnAck(mss, false, 1, 10);
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 25e9, "line rate");
        NS_TEST_EXPECT_MSG_EQ(d.Alpha(), 1.0, "alpha 1");
        // An ECN echo: cut with alpha = 1: R = 25e9 (1 - 1/2); CWR until PSN 11 is acked.
        d.OnAck(mss, true, 2, 11);
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 12.5e9, "cut by alpha / 2");
        NS_TEST_EXPECT_MSG_EQ(d.InCwr(), true, "CWR");
        // More echoes inside CWR: no cut.
        d.OnAck(mss, true, 3, 12);
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 12.5e9, "one cut per window");
        for (uint64_t una = 4; una <= 10; ++una)
        {
            d.OnAck(mss, false, una, 12);
        }
        // snd.una 11 > 10: the window ends. It acknowledged 10 x 4096 B, 2 of them echoed:
        // F = 0.2, alpha = (15/16) 1 + (1/16) 0.2. snd.una 11 is not past CWR's end (11): no
        // increase.
        d.OnAck(mss, false, 11, 20);
        double alpha = 15.0 / 16 + 0.2 / 16;
        NS_TEST_EXPECT_MSG_EQ_TOL(d.Alpha(), alpha, 1e-15, "alpha from F = 0.2");
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 12.5e9, "still CWR at the window's end");
        // snd.una 12: CWR ends (past 11). No window end (20): nothing else.
        d.OnAck(mss, false, 12, 21);
        NS_TEST_EXPECT_MSG_EQ(d.InCwr(), false, "CWR over");
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 12.5e9, "no increase inside a window");
        for (uint64_t una = 13; una <= 20; ++una)
        {
            d.OnAck(mss, false, una, 25);
        }
        // snd.una 21 > 20: a clean window (F = 0): alpha x 15/16, and R + R_AI.
        d.OnAck(mss, false, 21, 30);
        alpha *= 15.0 / 16;
        NS_TEST_EXPECT_MSG_EQ_TOL(d.Alpha(), alpha, 1e-15, "alpha decays in a clean window");
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 13.5e9, "additive increase R_AI");
        // An echo that ends a window: alpha first (10 ACKs in the window, this one echoed:
        // F = 0.1), then the cut with that alpha.
        for (uint64_t una = 22; una <= 30; ++una)
        {
            d.OnAck(mss, false, una, 31);
        }
        d.OnAck(mss, true, 31, 40);
        alpha = (15.0 / 16) * alpha + 0.1 / 16;
        NS_TEST_EXPECT_MSG_EQ_TOL(d.Alpha(), alpha, 1e-15, "alpha with F = 0.1");
        NS_TEST_EXPECT_MSG_EQ_TOL(d.Rate(), 13.5e9 * (1 - alpha / 2), 1e-3, "cut with new alpha");
    }
};

class DctcpBoundsTest : public TestCase
{
  public:
    DctcpBoundsTest()
        : TestCase("DCTCP for RDMA: cuts stop at MinRate, increases at the line rate")
    {
    }

    void
    DoRun() override
    {
        DctcpRate d(Config25G());
        uint64_t psn = 1;
        // Every ACK echoed, every window: alpha -> 1, a cut per window.
        for (int w = 0; w < 200; ++w, psn += 2)
        {
            d.OnAck(4096, true, psn, psn + 1);
            d.OnAck(4096, true, psn + 1, psn + 2);
            NS_TEST_ASSERT_MSG_GT_OR_EQ(d.Rate(), 100e6, "never below MinRate");
        }
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 100e6, "held at MinRate");
        for (int w = 0; w < 200; ++w, ++psn)
        {
            d.OnAck(4096, false, psn, psn + 1);
            NS_TEST_ASSERT_MSG_LT_OR_EQ(d.Rate(), 25e9, "never above the line rate");
        }
        NS_TEST_EXPECT_MSG_EQ(d.Rate(), 25e9, "back at the line rate");
    }
};

class DctcpIncastTest : public lfsim::ModelTestCase
{
  public:
    DctcpIncastTest()
        : lfsim::ModelTestCase("DCTCP for RDMA, 8 long flows into one 25GbE port with step "
                               "marking at K = 100 KB: the queue stays around K, the link full, "
                               "no PFC, every rate within [MinRate, line]")
    {
    }

    void
    DoRun() override
    {
        auto run = CcIncast("Dctcp", 8, "20ms", "5ms")
                       .Class("ns3::RoceSwitch", "Kmin", "100000")
                       .Class("ns3::RoceSwitch", "Kmax", "100000");
        const auto r = run.Run();
        const double q = lfsim::Metric(r, "mean_queue_KiB") * 1024;
        NS_TEST_EXPECT_MSG_GT(q, 0.5 * 100000, "the queue is held near K ...");
        NS_TEST_EXPECT_MSG_LT(q, 1.5 * 100000, "... not far above it");
        // Payload of a full 25GbE line with 4 KiB packets (4096 of 4178 line bytes).
        const double line = 25.0 * 4096 / 4178;
        NS_TEST_EXPECT_MSG_GT(lfsim::Metric(r, "total_goodput_Gbps"), 0.95 * line, "link full");
        NS_TEST_EXPECT_MSG_EQ(lfsim::Metric(r, "pause_frames_sent"), 0.0, "no PFC needed");
        const auto [lo, hi] = RateRange(r);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(lo, 0.1, "never below MinRate (100 Mb/s)");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(hi, 25.0, "never above the line rate");
        NS_TEST_EXPECT_MSG_LT(lo, 25.0, "and it did act");
    }
};

} // namespace

class DctcpTestSuite : public TestSuite
{
  public:
    DctcpTestSuite()
        : TestSuite("dctcp", UNIT)
    {
        AddTestCase(new DctcpEquationsTest, TestCase::QUICK);
        AddTestCase(new DctcpBoundsTest, TestCase::QUICK);
        AddTestCase(new DctcpIncastTest, TestCase::QUICK);
    }
};

static DctcpTestSuite g_dctcpTestSuite;
