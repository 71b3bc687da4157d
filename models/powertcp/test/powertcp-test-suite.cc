/*
 * PowerTCP: Algorithm 1 of the paper step by step against values computed by hand from INT
 * records, the fixed point of the window update at a steady queue, N flows settling at the
 * paper's equilibrium (a queue of N β, the link full), the window's bounds, and a long-flow
 * incast with the switches stamping INT into the packets.
 */
#include "lfsim-test.h"
#include "ns3/test.h"
#include "powertcp.h"
#include "roce-cc-check.h"

#include <cmath>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// 25 Gb/s and τ = 10.24 us: B τ = 32000 B, a whole number of INT's 128-byte tx units; β = 200
// Mb/s x τ = 256 B, one INT queue unit.
constexpr double B = 25e9 / 8; // bytes/s
constexpr double TAU = 10.24e-6;
constexpr double BDP = 32000;
constexpr double BETA = 256;

PowerWindow::Config
Config25G()
{
    PowerWindow::Config c;
    c.lineRate = 25e9;
    c.minRate = 100e6;
    c.baseRtt = TAU;
    c.gamma = 0.9;
    c.aiRate = 200e6;
    return c;
}

IntHop
Hop(uint64_t ns, uint64_t txBytes, uint64_t qBytes, EthSpeed s = EthSpeed::GBE25)
{
    return IntHop::Make(uint8_t(s), ns, txBytes, qBytes);
}

class PowerTcpEquationsTest : public TestCase
{
  public:
    PowerTcpEquationsTest()
        : TestCase("PowerTCP: normalized power from INT (queue growth plus dequeue rate, times "
                   "queue plus B tau, over B^2 tau), its smoothing over tau, and UPDATE_WINDOW "
                   "with W_old taken once per RTT")
    {
    }

    void
    DoRun() override
    {
        PowerTcpWindow p(Config25G());
        const PowerWindow& w = p.Window();
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Beta(), BETA, 1e-9, "beta = AdditiveIncrease x tau");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), BDP, 1e-9, "W starts at B tau");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Rate(), 25e9, 1e-3, "R = W / tau = line rate");
        IntHop a = Hop(1000, 0, 0);
        NS_TEST_EXPECT_MSG_EQ(p.OnAck(&a, 1, true), false, "the first records only stored");
        NS_TEST_EXPECT_MSG_EQ(w.HasPower(), false, "no power yet");
        // A step in the queue: tau later the port has sent B tau (mu = B) and 2560 B more wait:
        // q' = 2560 / tau, lambda = 1.08 B; Gamma = 1.08 x (2560 + 32000) / 32000 = 1.1664,
        // the first sample taken as it is. A new RTT: W = 0.9 (32000 / 1.1664 + 256) + 0.1 x
        // 32000, and W_old = W.
        IntHop b = Hop(1000 + 10240, 32000, 2560);
        NS_TEST_EXPECT_MSG_EQ(p.OnAck(&b, 1, true), true, "compared with the previous record");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.LastPower(), 1.1664, 1e-12, "Gamma at the step");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), 1.1664, 1e-12, "the first sample as it is");
        double w1 = 0.9 * (32000 / 1.1664 + 256) + 0.1 * 32000;
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), w1, 1e-9, "UPDATE_WINDOW");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.OldWindow(), w1, 1e-9, "W_old taken on a new RTT");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Rate(), w1 * 8 / TAU, 1e-3, "R = W / tau");
        // tau/2 later, the same RTT: the queue steady at 2560 B, the line busy: Gamma = (2560 +
        // 32000) / 32000 = 1.08; smoothed over dt = tau/2: (1.1664 + 1.08) / 2 = 1.1232. W =
        // 0.9 (W_old / 1.1232 + 256) + 0.1 W from the W_old kept.
        IntHop c = Hop(1000 + 15360, 48000, 2560);
        p.OnAck(&c, 1, false);
        NS_TEST_EXPECT_MSG_EQ_TOL(p.LastPower(), 1.08, 1e-12, "Gamma at a steady queue");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), 1.1232, 1e-12, "smoothed over dt / tau = 1/2");
        const double w2 = 0.9 * (w1 / 1.1232 + 256) + 0.1 * w1;
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), w2, 1e-9, "W from W_old inside the RTT");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.OldWindow(), w1, 1e-9, "W_old kept inside the RTT");
        // The queue drains with nothing sent (INT's units): lambda < 0 counts as MIN_CURRENT B,
        // Gamma = 0.5 x (0 + 32000) / 32000.
        IntHop d = Hop(1000 + 16384, 48000, 0);
        p.OnAck(&d, 1, false);
        NS_TEST_EXPECT_MSG_EQ_TOL(p.LastPower(), 0.5, 1e-12, "the current at least B / 2");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Power(), (1.1232 * (10240 - 1024) + 0.5 * 1024) / 10240.0,
                                  1e-12, "smoothed over dt = 1.024 us");
    }
};

class PowerTcpNs3DatacenterTest : public TestCase
{
  public:
    PowerTcpNs3DatacenterTest()
        : TestCase("PowerTCP as ns3-datacenter runs it (TargetUtilization 0.95, WindowUpdate "
                   "FromLastRtt): every ACK W = gamma (W_old eta over Gamma + beta) + (1 - gamma) "
                   "W_old, W_old taken on a new RTT")
    {
    }

    void
    DoRun() override
    {
        PowerWindow::Config c = Config25G();
        c.targetUtil = 0.95;
        c.update = PowerWindow::UPDATE_FROM_LAST_RTT;
        PowerTcpWindow p(c);
        const PowerWindow& w = p.Window();
        IntHop a = Hop(1000, 0, 0);
        p.OnAck(&a, 1, true);
        // The step of PowerTcpEquationsTest: Gamma = 1.1664, the update divides by Gamma / 0.95.
        IntHop b = Hop(1000 + 10240, 32000, 2560);
        p.OnAck(&b, 1, true);
        const double w1 = 0.9 * (32000 * 0.95 / 1.1664 + 256) + 0.1 * 32000;
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), w1, 1e-9, "divided by Gamma / eta");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.OldWindow(), w1, 1e-9, "W_old taken on a new RTT");
        // Two ACKs inside the RTT, the queue steady: Gamma 1.08 over tau/2, then over 1.024 us.
        IntHop c1 = Hop(1000 + 15360, 48000, 2560);
        p.OnAck(&c1, 1, false);
        double g = (1.1664 + 1.08) / 2;
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), 0.9 * (w1 * 0.95 / g + 256) + 0.1 * w1, 1e-9,
                                  "inside the RTT");
        IntHop d = Hop(1000 + 16384, 48000 + 3200, 2560);
        p.OnAck(&d, 1, false);
        g = (g * (10240 - 1024) + 1.08 * 1024) / 10240;
        // The paper's would take 0.1 x the window of the previous ACK; this takes W_old.
        NS_TEST_EXPECT_MSG_EQ_TOL(w.Window(), 0.9 * (w1 * 0.95 / g + 256) + 0.1 * w1, 1e-9,
                                  "(1 - gamma) W_old, not the previous ACK's W");
        NS_TEST_EXPECT_MSG_EQ_TOL(w.OldWindow(), w1, 1e-9, "W_old kept inside the RTT");
        // A lower tau keeps the rate (ns3-datacenter's state is the rate): W and W_old scale.
        PowerWindow v(c);
        v.AddPower(2.0, TAU);
        v.Update(true);
        const double rate = v.Rate();
        NS_TEST_EXPECT_MSG_LT(rate, 25e9, "below the line");
        v.SetBaseRtt(TAU / 2);
        NS_TEST_EXPECT_MSG_EQ_TOL(v.Rate(), rate, 1e-3, "the rate kept");
        NS_TEST_EXPECT_MSG_EQ_TOL(v.Window(), rate / 8 * TAU / 2, 1e-9, "W = R x the new tau");
        NS_TEST_EXPECT_MSG_EQ_TOL(v.OldWindow(), rate / 8 * TAU / 2, 1e-9, "W_old too");
    }
};

class PowerTcpHopsTest : public TestCase
{
  public:
    PowerTcpHopsTest()
        : TestCase("PowerTCP: the hop with the largest normalized power decides, each against "
                   "its own line rate, and its dt weighs the smoothing")
    {
    }

    void
    DoRun() override
    {
        PowerTcpWindow p(Config25G());
        IntHop first[2] = {Hop(0, 0, 0, EthSpeed::GBE100), Hop(0, 0, 0)};
        p.OnAck(first, 2, true);
        // Hop 0, 100GbE (B tau = 128000 B): 2.048 us at the line (25600 B) while 25600 B
        // queue up: lambda = 2 B_0, Gamma = 2 x (25600 + 128000) / 128000 = 2.4. Hop 1,
        // 25GbE: 1.024 us at the line (3200 B) while 5120 B queue up: lambda = 3.125e9 + 5e9
        // B/s = 2.6 B, Gamma = 2.6 x (5120 + 32000) / 32000 = 3.016, the larger.
        IntHop second[2] = {Hop(2048, 25600, 25600, EthSpeed::GBE100), Hop(1024, 3200, 5120)};
        p.OnAck(second, 2, false);
        NS_TEST_EXPECT_MSG_EQ_TOL(p.LastPower(), 3.016, 1e-12, "the loaded 25GbE hop");
        // Then both queues steady, both lines busy: hop 0 over 5.12 us, Gamma = (25600 +
        // 128000) / 128000 = 1.2; hop 1 over 1.024 us, Gamma = (5120 + 32000) / 32000 = 1.16:
        // hop 0 decides, and its 5.12 us (half of tau) weigh the smoothing.
        IntHop third[2] = {Hop(7168, 89600, 25600, EthSpeed::GBE100), Hop(2048, 6400, 5120)};
        p.OnAck(third, 2, false);
        NS_TEST_EXPECT_MSG_EQ_TOL(p.LastPower(), 1.2, 1e-12, "the larger power decides");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.Window().Power(), (3.016 + 1.2) / 2, 1e-12,
                                  "smoothed over that hop's dt");
        // A path with another hop count: records stored, nothing computed.
        IntHop one = Hop(9000, 0, 0);
        NS_TEST_EXPECT_MSG_EQ(p.OnAck(&one, 1, true), false, "a new path");
    }
};

class PowerTcpFixedPointTest : public TestCase
{
  public:
    PowerTcpFixedPointTest()
        : TestCase("PowerTCP: at a steady queue q and a full link, Gamma = (q + B tau) over B tau "
                   "and the window converges to the update's fixed point W = beta Gamma over "
                   "(Gamma - 1)")
    {
    }

    void
    DoRun() override
    {
        PowerTcpWindow p(Config25G());
        // q = 6400 B: Gamma = 1.2, W* = 256 x 1.2 / 0.2 = 1536 B (within [MinRate tau, B tau]).
        uint64_t ns = 0;
        uint64_t tx = 0;
        IntHop h = Hop(ns, tx, 6400);
        p.OnAck(&h, 1, true);
        for (int k = 0; k < 300; ++k) // one ACK per RTT, each RTT a line's worth sent
        {
            ns += 10240;
            tx += 32000;
            h = Hop(ns, tx, 6400);
            p.OnAck(&h, 1, true);
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(p.LastPower(), 1.2, 1e-12, "Gamma at equilibrium");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.Window().Window(), 1536, 1e-6, "W* = beta Gamma/(Gamma-1)");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.Window().Rate(), 1536 * 8 / TAU, 1e-3, "R* = W* / tau");
    }
};

class PowerTcpEquilibriumTest : public TestCase
{
  public:
    PowerTcpEquilibriumTest()
        : TestCase("PowerTCP: N flows through one bottleneck settle at the paper's equilibrium, "
                   "a queue of N beta with the link full (N = 2, 4, 16); one flow at B tau, the "
                   "link full and no queue")
    {
    }

    void
    DoRun() override
    {
        for (uint32_t n : {1u, 2u, 4u, 16u})
        {
            // The bottleneck once the flows' windows have settled (quasi-static: q steady
            // between samples): their sum fills B tau and queues the rest, q = max(0, sum - B
            // tau), arrivals at B when it is full, else sum / tau. Each RTT every flow takes
            // the same normalized power and updates its window.
            std::vector<PowerWindow> flows(n, PowerWindow(Config25G()));
            double sum = 0;
            double q = 0;
            for (int k = 0; k <= 400; ++k)
            {
                sum = 0;
                for (const auto& f : flows)
                {
                    sum += f.Window();
                }
                q = std::max(0.0, sum - BDP);
                const double lambda = std::min(sum / TAU, B);
                const double gamma = lambda * (q + B * TAU) / (B * B * TAU);
                for (auto& f : flows)
                {
                    f.AddPower(gamma, std::max(TAU, sum / B));
                    f.Update(true);
                }
            }
            if (n == 1)
            {
                NS_TEST_EXPECT_MSG_EQ_TOL(sum, BDP, 1e-6, "one flow: W = B tau, no queue");
                continue;
            }
            NS_TEST_EXPECT_MSG_EQ_TOL(q, n * BETA, 1e-6, "q_e = N beta, N = " << n);
            NS_TEST_EXPECT_MSG_EQ_TOL(sum, BDP + n * BETA, 1e-6, "windows fill B tau + q_e");
            NS_TEST_EXPECT_MSG_EQ_TOL(flows[0].Window(), BDP / n + BETA, 1e-6,
                                      "each flow B tau / N + beta");
        }
    }
};

class PowerTcpBoundsTest : public TestCase
{
  public:
    PowerTcpBoundsTest()
        : TestCase("PowerTCP: the window shrinks no lower than MinRate x tau and grows no "
                   "higher than B tau, at most about doubling per update on an idle path")
    {
    }

    void
    DoRun() override
    {
        // beta = 10 Mb/s x tau = 12.8 B: at a 4-MB queue the fixed point beta Gamma / (Gamma -
        // 1) is below MinRate x tau = 128 B.
        PowerWindow::Config c = Config25G();
        c.aiRate = 10e6;
        PowerTcpWindow p(c);
        uint64_t ns = 0;
        uint64_t tx = 0;
        IntHop first = Hop(ns, tx, 0);
        p.OnAck(&first, 1, true);
        for (int k = 0; k < 50; ++k) // a full line and a 4-MB queue: Gamma about 132
        {
            ns += 10240;
            tx += 32000;
            IntHop x = Hop(ns, tx, 4 << 20);
            p.OnAck(&x, 1, true);
            NS_TEST_ASSERT_MSG_GT_OR_EQ(p.Window().Rate(), 100e6, "never below MinRate");
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(p.Window().Window(), 100e6 / 8 * TAU, 1e-9, "W at MinRate tau");
        // The queue gone and a port at a tenth of its line: the current counts as B / 2, Gamma
        // = 0.5: one update takes W = 0.9 (128 / 0.5 + 12.8) + 0.1 x 128, about double.
        ns += 10240;
        tx += 3200;
        IntHop idle = Hop(ns, tx, 0);
        p.OnAck(&idle, 1, true);
        NS_TEST_EXPECT_MSG_EQ_TOL(p.Window().Power(), 0.5, 1e-12, "Gamma = 1/2");
        NS_TEST_EXPECT_MSG_EQ_TOL(p.Window().Window(), 0.9 * (128 / 0.5 + 12.8) + 12.8, 1e-9,
                                  "at most about double per update");
        for (int k = 0; k < 200; ++k)
        {
            ns += 10240;
            tx += 3200;
            IntHop x = Hop(ns, tx, 0);
            p.OnAck(&x, 1, true);
            NS_TEST_ASSERT_MSG_LT_OR_EQ(p.Window().Window(), BDP, "never above B tau");
        }
        NS_TEST_EXPECT_MSG_EQ_TOL(p.Window().Rate(), 25e9, 1e-3, "back at the line rate");
    }
};

class PowerTcpIncastTest : public lfsim::ModelTestCase
{
  public:
    PowerTcpIncastTest()
        : lfsim::ModelTestCase("PowerTCP, 8 long flows into one 25GbE port: the link full, a "
                               "near-empty queue, no PFC, no ECN needed, rates within bounds")
    {
    }

    void
    DoRun() override
    {
        // The paper's regime, as ns3-datacenter's PowerTCP examples run it: 1 us links, 1 KB
        // packets (a base RTT of 24 packets; cc_compare's 4 KiB packets on 10 m give 3).
        auto run = CcIncast("PowerTcp", 8, "10ms", "3ms");
        run.Class("ns3::RoceSwitch", "EcnEnabled", "false")
            .Class("ns3::RoceChannel", "Length", "200")
            .Class("ns3::RdmaNic", "PathMtu", "1024");
        const auto r = run.Run();
        // 1024 B of payload per 1106 + 42 (INT: 2 + 5 x 8) line bytes.
        const double line = 25.0 * 1024 / 1148;
        const double g = lfsim::Metric(r, "total_goodput_Gbps");
        NS_TEST_EXPECT_MSG_GT(g, 0.95 * line, "the link full");
        NS_TEST_EXPECT_MSG_LT(lfsim::Metric(r, "mean_queue_KiB"), 10.0, "near-zero queue");
        NS_TEST_EXPECT_MSG_EQ(lfsim::Metric(r, "pause_frames_sent"), 0.0, "no PFC");
        const auto [lo, hi] = RateRange(r);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(lo, 0.1, "never below MinRate (100 Mb/s)");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(hi, 25.0, "never above the line rate");
        NS_TEST_EXPECT_MSG_LT(lo, 25.0, "and it did act");
    }
};

class PowerTcpBaseRttTest : public lfsim::ModelTestCase
{
  public:
    PowerTcpBaseRttTest()
        : lfsim::ModelTestCase("PowerTCP: BaseRtt 0 takes each queue pair's path base RTT for "
                               "tau, a time takes that tau for every pair (W_init = B tau)")
    {
    }

    void
    DoRun() override
    {
        for (const char* tau : {"0s", "20us"})
        {
            auto run = CcIncast("PowerTcp", 2, "2us", "0s");
            run.Class("ns3::PowerTcp", "BaseRtt", tau);
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
                // A Star of 1 m cables: a path base RTT of a few us, far from 20.
                NS_TEST_EXPECT_MSG_LT(w0, 25e9 / 8 * 10e-6, "B x the pair's own, shorter");
                NS_TEST_EXPECT_MSG_GT(w0, 25e9 / 8 * 1e-6, "a path's, not nothing");
            }
        }
    }
};

} // namespace

class PowerTcpTestSuite : public TestSuite
{
  public:
    PowerTcpTestSuite()
        : TestSuite("powertcp", UNIT)
    {
        AddTestCase(new PowerTcpEquationsTest, TestCase::QUICK);
        AddTestCase(new PowerTcpNs3DatacenterTest, TestCase::QUICK);
        AddTestCase(new PowerTcpHopsTest, TestCase::QUICK);
        AddTestCase(new PowerTcpFixedPointTest, TestCase::QUICK);
        AddTestCase(new PowerTcpEquilibriumTest, TestCase::QUICK);
        AddTestCase(new PowerTcpBoundsTest, TestCase::QUICK);
        AddTestCase(new PowerTcpBaseRttTest, TestCase::QUICK);
        AddTestCase(new PowerTcpIncastTest, TestCase::QUICK);
    }
};

static PowerTcpTestSuite g_powerTcpTestSuite;
