/*
 * TIMELY: Algorithm 1 of the paper step by step against values computed by hand, its bounds,
 * and an incast whose RTT it holds between T_low and T_high with the link busy.
 */
#include "lfsim-test.h"
#include "ns3/test.h"
#include "roce-cc-check.h"
#include "timely.h"

#include <algorithm>
#include <cmath>

using namespace ns3;

namespace
{

TimelyRate::Config
PaperConfig()
{
    TimelyRate::Config c; // the paper's values
    c.lineRate = 25e9;
    c.minRate = 100e6;
    c.delta = 10e6;
    c.tLow = 50e-6;
    c.tHigh = 500e-6;
    c.minRtt = 20e-6;
    c.ewmaAlpha = 0.875;
    c.beta = 0.8;
    c.haiThreshold = 5;
    c.haiN = 5;
    return c;
}

class TimelyEquationsTest : public TestCase
{
  public:
    TimelyEquationsTest()
        : TestCase("TIMELY: EWMA of the RTT difference, the gradient's increase and decrease, "
                   "T_low and T_high, hyperactive increase after five, step by step")
    {
    }

    void
    DoRun() override
    {
        TimelyRate t(PaperConfig());
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(30e-6), TimelyRate::NONE, "the first sample only");
        NS_TEST_EXPECT_MSG_EQ(t.Rate(), 25e9, "line rate");
        // 600 us > T_high: new_rtt_diff 570 us, rtt_diff = 0.875 x 570 = 498.75 us;
        // R x (1 - 0.8 (1 - 500/600)) = 25e9 x (1 - 0.8/6).
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(600e-6), TimelyRate::ABOVE_THIGH, "above T_high");
        double rate = 25e9 * (1 - 0.8 / 6);
        double diff = 0.875 * 570e-6;
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Rate(), rate, 1, "R after T_high");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.RttDiff(), diff, 1e-15, "rtt_diff");
        // 100 us: new_rtt_diff -500 us, rtt_diff = 0.125 x 498.75 - 0.875 x 500 = -375.15625
        // us: gradient < 0, the first in a row: R + delta.
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(100e-6), TimelyRate::GRADIENT_UP, "negative gradient");
        diff = 0.125 * diff + 0.875 * -500e-6;
        rate += 10e6;
        NS_TEST_EXPECT_MSG_EQ_TOL(t.RttDiff(), diff, 1e-15, "rtt_diff");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Rate(), rate, 1, "R + delta");
        // 110 us: new_rtt_diff +10 us, rtt_diff = 0.125 x (-375.15625) + 8.75 = -38.14453125 us
        // still <= 0: second in a row, R + delta.
        t.OnRtt(110e-6);
        diff = 0.125 * diff + 0.875 * 10e-6;
        rate += 10e6;
        NS_TEST_EXPECT_MSG_EQ_TOL(t.RttDiff(), diff, 1e-15, "rtt_diff");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Rate(), rate, 1, "R + delta (2)");
        // 130 us: +20 us: rtt_diff = 0.125 x (-38.14453125) + 17.5 = 12.73193359375 us, gradient
        // = 12.73/20 = 0.6366: R x (1 - 0.8 x 0.6366).
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(130e-6), TimelyRate::GRADIENT_DOWN, "positive gradient");
        diff = 0.125 * diff + 0.875 * 20e-6;
        rate *= 1 - 0.8 * diff / 20e-6;
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Gradient(), diff / 20e-6, 1e-12, "gradient");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Rate(), rate, 1, "R (1 - beta gradient)");
        // A falling RTT, 10 us per completion: five increases in a row, the fifth by 5 delta.
        double rtt = 130e-6;
        for (int k = 1; k <= 6; ++k)
        {
            rtt -= 10e-6;
            t.OnRtt(rtt);
            diff = 0.125 * diff + 0.875 * -10e-6;
            const bool up = diff <= 0;
            NS_TEST_ASSERT_MSG_EQ(up, true, "falling RTT: gradient <= 0 from the first step");
            rate += (k >= 5 ? 5 : 1) * 10e6;
            NS_TEST_EXPECT_MSG_EQ_TOL(t.Rate(), rate, 1, "step " << k << " (HAI from 5)");
        }
        NS_TEST_EXPECT_MSG_EQ(t.NegativeRun(), 6u, "six in a row");
        // Below T_low: R + delta whatever the gradient, and the run of negatives ends.
        t.OnRtt(40e-6);
        rate += 10e6;
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Rate(), rate, 1, "below T_low");
        NS_TEST_EXPECT_MSG_EQ(t.NegativeRun(), 0u, "HAI restarts");
    }
};

class TimelyBoundsTest : public TestCase
{
  public:
    TimelyBoundsTest()
        : TestCase("TIMELY: decreases stop at MinRate (a gradient above 1 over beta cuts to 0), "
                   "increases at the line rate")
    {
    }

    void
    DoRun() override
    {
        TimelyRate t(PaperConfig());
        t.OnRtt(60e-6);
        // +100 us per completion inside [T_low, T_high]: a gradient far above 1.25.
        double rtt = 60e-6;
        for (int k = 0; k < 4; ++k)
        {
            rtt += 100e-6;
            t.OnRtt(rtt);
            NS_TEST_ASSERT_MSG_GT_OR_EQ(t.Rate(), 100e6, "never below MinRate");
        }
        NS_TEST_EXPECT_MSG_EQ(t.Rate(), 100e6, "held at MinRate");
        for (int k = 0; k < 3000; ++k) // 3000 x delta = 30 Gb/s: reaches the cap
        {
            t.OnRtt(10e-6);
            NS_TEST_ASSERT_MSG_LT_OR_EQ(t.Rate(), 25e9, "never above the line rate");
        }
        NS_TEST_EXPECT_MSG_EQ(t.Rate(), 25e9, "back at the line rate");
    }
};

class TimelyIncastTest : public lfsim::ModelTestCase
{
  public:
    TimelyIncastTest()
        : lfsim::ModelTestCase("TIMELY, 4 long flows into one 25GbE port, after the start-up "
                               "transient: every RTT sample below T_high, the link busy, the "
                               "flows fair, rates within bounds")
    {
    }

    void
    DoRun() override
    {
        // The start at line rate overflows the queue (RTT far above T_high: every flow falls to
        // MinRate) and the rates climb back by delta per completion: 40 ms.
        auto run = CcIncast("Timely", 4, "80ms", "40ms");
        run.config.record.push_back("cc");
        run.config.sampleInterval = MicroSeconds(10);
        const auto r = run.Run();
        const auto& t = r.series.at("cc").Column("time_s");
        const auto& rtt = r.series.at("cc").Column("rtt_us");
        double maxRtt = 0;
        for (size_t k = 0; k < t.size(); ++k)
        {
            maxRtt = t[k] >= 0.04 ? std::max(maxRtt, rtt[k]) : maxRtt;
        }
        NS_TEST_EXPECT_MSG_GT(maxRtt, 0.0, "RTT samples recorded");
        NS_TEST_EXPECT_MSG_LT(maxRtt, 500.0, "below T_high");
        // 4096 B of payload in 4178 + 8 (the timestamp) line bytes.
        const double line = 25.0 * 4096 / 4186;
        NS_TEST_EXPECT_MSG_GT(lfsim::Metric(r, "total_goodput_Gbps"), 0.9 * line, "link busy");
        NS_TEST_EXPECT_MSG_GT(lfsim::Metric(r, "jain_fairness"), 0.95, "fair");
        const auto [lo, hi] = RateRange(r);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(lo, 0.1, "never below MinRate (100 Mb/s)");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(hi, 25.0, "never above the line rate");
        NS_TEST_EXPECT_MSG_LT(lo, 25.0, "and it did act");
    }
};

} // namespace

class TimelyTestSuite : public TestSuite
{
  public:
    TimelyTestSuite()
        : TestSuite("timely", UNIT)
    {
        AddTestCase(new TimelyEquationsTest, TestCase::QUICK);
        AddTestCase(new TimelyBoundsTest, TestCase::QUICK);
        AddTestCase(new TimelyIncastTest, TestCase::QUICK);
    }
};

static TimelyTestSuite g_timelyTestSuite;
