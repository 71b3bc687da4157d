/*
 * θ-PowerTCP: Algorithm 2 of the paper step by step against values computed by hand from RTT
 * samples, the window updated once per RTT, the base RTT lowered to the smallest RTT seen, the
 * fixed point at a steady RTT, and a long-flow incast on NIC timestamps alone.
 */
#include "lfsim-test.h"
#include "ns3/test.h"
#include "roce-cc-check.h"
#include "theta-powertcp.h"

#include <cmath>
#include <string>

using namespace ns3;

namespace
{

constexpr double TAU = 10e-6;
constexpr double BDP = 25e9 / 8 * TAU; // 31250 B

PowerWindow::Config
Config25G()
{
    PowerWindow::Config c;
    c.lineRate = 25e9;
    c.minRate = 100e6;
    c.baseRtt = TAU;
    c.gamma = 0.9;
    c.aiRate = 200e6; // beta = 250 B
    return c;
}

class ThetaPowerTcpEquationsTest : public TestCase
{
  public:
    ThetaPowerTcpEquationsTest()
        : TestCase("θ-PowerTCP: normalized power (dRTT over dt + 1) RTT over 1.05 tau per ACK, "
                   "the current at least one half, smoothed over tau, the window updated once per "
                   "RTT from it")
    {
    }

    void
    DoRun() override
    {
        ThetaPowerTcpWindow t(Config25G());
        const PowerWindow& w = t.Window();
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), BDP, 1e-9, "W starts at B tau");
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(0, 12e-6, true), false, "the first sample: no gradient");
        // 1 us later the RTT is 14 us: dRTT/dt = 2, Gamma = 3 x 14 / 10.5 = 4, the first power
        // taken as it is. Not a new RTT: the window stays.
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(1e-6, 14e-6, false), false, "inside the RTT: no update");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.LastPower(), 4.0, 1e-12, "Gamma = (2 + 1) x 14 / 10.5");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), 4.0, 1e-12, "the first sample as it is");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), BDP, 1e-9, "W kept inside the RTT");
        // 2 us later, the RTT steady at 14 us: Gamma = 14 / 10.5, smoothed over 2 us of tau =
        // 10 us. A new RTT: W = 0.9 (31250 / Gamma_smooth + 250) + 0.1 x 31250.
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(3e-6, 14e-6, true), true, "a new RTT: the update");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.LastPower(), 14 / 10.5, 1e-12, "Gamma at a steady RTT");
        double g = (4.0 * 8 + 14 / 10.5 * 2) / 10;
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), g, 1e-12, "smoothed over dt / tau = 0.2");
        const double w1 = 0.9 * (BDP / g + 250) + 0.1 * BDP;
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), w1, 1e-9, "UPDATE_WINDOW");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Rate(), w1 * 8 / TAU, 1e-3, "R = W / tau");
        // The RTT falling faster than time passes: dRTT/dt + 1 = -2 counts as 1/2, Gamma = 0.5
        // x 11 / 10.5.
        t.OnRtt(4e-6, 11e-6, false);
        NS_TEST_EXPECT_MSG_EQ_TOL(t.LastPower(), 0.5 * 11 / 10.5, 1e-12, "the current >= 1/2");
        g = 0.9 * g + 0.1 * (0.5 * 11 / 10.5);
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), g, 1e-12, "smoothed over 1 us");
        // Two ACKs at one moment: no gradient from them, the smoothed power kept.
        t.OnRtt(4e-6, 12e-6, false);
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), g, 1e-12, "dt = 0: no sample");
        // The next new RTT: the gradient against the last sample taken (11 us at 4 us): 1,
        // Gamma = 2 x 12 / 10.5; the window from the one of the last update.
        t.OnRtt(5e-6, 12e-6, true);
        g = 0.9 * g + 0.1 * (2 * 12 / 10.5);
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), g, 1e-12, "the gradient against the last sample");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), 0.9 * (w1 / g + 250) + 0.1 * w1, 1e-9, "again");
    }
};

class ThetaPowerTcpBaseRttTest : public TestCase
{
  public:
    ThetaPowerTcpBaseRttTest()
        : TestCase("θ-PowerTCP: an RTT below the QP's base RTT becomes tau (the power, beta and "
                   "the window's bounds follow it)")
    {
    }

    void
    DoRun() override
    {
        ThetaPowerTcpWindow t(Config25G());
        t.OnRtt(0, 10e-6, true);
        t.OnRtt(1e-6, 8e-6, false); // dRTT/dt = -2: the current 1/2, tau now 8 us
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Window().BaseRtt(), 8e-6, 1e-18, "tau = the smallest RTT");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Window().Beta(), 200e6 / 8 * 8e-6, 1e-9, "beta with it");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.LastPower(), 0.5 / 1.05, 1e-12, "against 1.05 x 8 us");
        t.OnRtt(2e-6, 8e-6, true); // steady at tau: Gamma = 1 / 1.05, smoothed over 1 of 8 us
        NS_TEST_EXPECT_MSG_EQ_TOL(t.LastPower(), 1 / 1.05, 1e-12, "RTT = tau: Gamma = 1/1.05");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Window().Power(), (0.5 / 1.05 * 7 + 1 / 1.05) / 8, 1e-12,
                                  "smoothed over tau = 8 us");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Window().Window(), 25e9 / 8 * 8e-6, 1e-9,
                                  "at most B x the new tau");
    }
};

class ThetaPowerTcpNs3DatacenterTest : public TestCase
{
  public:
    ThetaPowerTcpNs3DatacenterTest()
        : TestCase("θ-PowerTCP as ns3-datacenter runs it (WindowUpdate FromLastRtt): the window "
                   "updated at every ACK from W_old in both terms, and a lower tau keeping the "
                   "rate")
    {
    }

    void
    DoRun() override
    {
        PowerWindow::Config c = Config25G();
        c.update = PowerWindow::UPDATE_FROM_LAST_RTT;
        ThetaPowerTcpWindow t(c);
        const PowerWindow& w = t.Window();
        t.OnRtt(0, 12e-6, true);
        // The samples of ThetaPowerTcpEquationsTest: Gamma = 4 inside the RTT, updated now.
        NS_TEST_EXPECT_MSG_EQ(t.OnRtt(1e-6, 14e-6, false), true, "every ACK updates");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), 0.9 * (BDP / 4 + 250) + 0.1 * BDP, 1e-9,
                                  "from W_old = B tau");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.OldWindow(), BDP, 1e-9, "W_old kept inside the RTT");
        t.OnRtt(3e-6, 14e-6, true);
        const double g = (4.0 * 8 + 14 / 10.5 * 2) / 10;
        const double w2 = 0.9 * (BDP / g + 250) + 0.1 * BDP; // (1 - gamma) W_old, W_old = B tau
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), w2, 1e-9, "W_old in both terms");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.OldWindow(), w2, 1e-9, "taken on a new RTT");
        // 8 us: tau lowered, the rate kept (W and W_old x 0.8), then this ACK's update: the
        // current 1/2 (dRTT/dt = -6), Gamma = 0.5 x 8 / 8.4 smoothed over 1 of 8 us, beta =
        // 200 B.
        t.OnRtt(4e-6, 8e-6, false);
        const double g2 = (g * 7 + 0.5 * 8 / 8.4) / 8;
        const double wOld = w2 * 0.8;
        NS_TEST_EXPECT_MSG_EQ_TOL(w.OldWindow(), wOld, 1e-9, "W_old x tau'/tau: its rate kept");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), 0.9 * (wOld / g2 + 200) + 0.1 * wOld, 1e-9,
                                  "updated from it");
    }
};

class ThetaPowerTcpFixedPointTest : public TestCase
{
  public:
    ThetaPowerTcpFixedPointTest()
        : TestCase("θ-PowerTCP: at a steady RTT (tau plus a standing queue's delay) Gamma = RTT "
                   "over 1.05 tau and the window converges to the update's fixed point beta "
                   "Gamma over (Gamma - 1)")
    {
    }

    void
    DoRun() override
    {
        ThetaPowerTcpWindow t(Config25G());
        // 12 us: Gamma = 12 / 10.5 = 8/7, W* = 250 x (8/7) / (1/7) = 2000 B.
        double now = 0;
        for (int k = 0; k < 300; ++k)
        {
            t.OnRtt(now, 12e-6, true);
            now += 12e-6;
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(t.LastPower(), 8.0 / 7, 1e-12, "Gamma = RTT / (1.05 tau)");
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Window().Window(), 2000, 1e-6, "W* = beta Gamma/(Gamma-1)");
        // At 10.5 us (the allowance) and below, Gamma <= 1: the window climbs to B tau.
        for (int k = 0; k < 300; ++k)
        {
            t.OnRtt(now, 10.5e-6, true);
            now += 10.5e-6;
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(t.Window().Window(), BDP, 1e-6, "Gamma = 1: up to B tau");
    }
};

class ThetaPowerTcpIncastTest : public lfsim::ModelTestCase
{
  public:
    ThetaPowerTcpIncastTest()
        : lfsim::ModelTestCase("θ-PowerTCP, 8 long flows into one 25GbE port on NIC timestamps "
                               "alone: the link full, a short queue, no PFC, rates within "
                               "bounds")
    {
    }

    void
    DoRun() override
    {
        // The paper's regime, as ns3-datacenter's PowerTCP examples run it: 1 us links, 1 KB
        // packets (a base RTT of 24 packets; cc_compare's 4 KiB packets on 10 m give 3).
        auto run = CcIncast("ThetaPowerTcp", 8, "10ms", "3ms");
        run.Class("ns3::RoceSwitch", "EcnEnabled", "false")
            .Class("ns3::RoceChannel", "Length", "200")
            .Class("ns3::RdmaNic", "PathMtu", "1024");
        const auto r = run.Run();
        // 1024 B of payload in 1106 + 8 (the timestamp) line bytes.
        const double line = 25.0 * 1024 / 1114;
        NS_TEST_EXPECT_MSG_GT(lfsim::Metric(r, "total_goodput_Gbps"), 0.95 * line, "link full");
        NS_TEST_EXPECT_MSG_LT(lfsim::Metric(r, "mean_queue_KiB"), 20.0, "a short queue");
        NS_TEST_EXPECT_MSG_EQ(lfsim::Metric(r, "pause_frames_sent"), 0.0, "no PFC");
        const auto [lo, hi] = RateRange(r);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(lo, 0.1, "never below MinRate (100 Mb/s)");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(hi, 25.0, "never above the line rate");
        NS_TEST_EXPECT_MSG_LT(lo, 25.0, "and it did act");
    }
};

class ThetaPowerTcpBaseRttAttributeTest : public lfsim::ModelTestCase
{
  public:
    ThetaPowerTcpBaseRttAttributeTest()
        : lfsim::ModelTestCase("θ-PowerTCP: BaseRtt a time takes that tau for every pair "
                               "(W_init = B tau), 0 the pair's path base RTT")
    {
    }

    void
    DoRun() override
    {
        for (const char* tau : {"0s", "20us"})
        {
            auto run = CcIncast("ThetaPowerTcp", 2, "2us", "0s");
            run.Class("ns3::ThetaPowerTcp", "BaseRtt", tau);
            run.config.record = {"cc"};
            run.config.sampleInterval = NanoSeconds(100);
            const auto r = run.Run();
            const double w0 = r.series.at("cc").Column("window_KiB").front() * 1024;
            if (std::string(tau) == "20us")
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(w0, 25e9 / 8 * 20e-6, 1e-6, "B x 20 us");
            }
            else
            {
                NS_TEST_EXPECT_MSG_LT(w0, 25e9 / 8 * 10e-6, "B x the pair's own, shorter");
                NS_TEST_EXPECT_MSG_GT(w0, 25e9 / 8 * 1e-6, "a path's, not nothing");
            }
        }
    }
};

} // namespace

class ThetaPowerTcpTestSuite : public TestSuite
{
  public:
    ThetaPowerTcpTestSuite()
        : TestSuite("theta_powertcp", UNIT)
    {
        AddTestCase(new ThetaPowerTcpEquationsTest, TestCase::QUICK);
        AddTestCase(new ThetaPowerTcpBaseRttTest, TestCase::QUICK);
        AddTestCase(new ThetaPowerTcpNs3DatacenterTest, TestCase::QUICK);
        AddTestCase(new ThetaPowerTcpFixedPointTest, TestCase::QUICK);
        AddTestCase(new ThetaPowerTcpBaseRttAttributeTest, TestCase::QUICK);
        AddTestCase(new ThetaPowerTcpIncastTest, TestCase::QUICK);
    }
};

static ThetaPowerTcpTestSuite g_thetaPowerTcpTestSuite;
