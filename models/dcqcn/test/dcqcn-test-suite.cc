/*
 * DCQCN tests: the reaction point step by step against the paper's formulas (no network), the
 * ns-3 driver's timing (alpha timer, rate-increase timer, monitor period), and flows on a real
 * bottleneck: two flows converge to their fair share, a late flow gets its share.
 */
#include "dcqcn-reaction-point.h"
#include "dcqcn.h"
#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "roce-helper.h"

#include <cmath>
#include <vector>

using namespace ns3;

namespace
{

using DcqcnTestCase = lfsim::ModelTestCase;

// ---------------------------------------------------------------------------------------------

class ReactionPointTest : public TestCase
{
  public:
    ReactionPointTest()
        : TestCase("DCQCN reaction point: cuts, alpha, fast recovery, additive and hyper "
                   "increase step by step")
    {
    }

    void
    DoRun() override
    {
        const double C = 40e9;
        const double g = 1.0 / 16;
        const double ai = 40e6;
        const double hai = 200e6;
        DcqcnConfig c;
        c.maxRate = C;
        c.minRate = 1e6;
        c.aiRate = ai;
        c.haiRate = hai;
        c.threshold = 5;
        c.byteReset = 1000;
        c.g = g;
        c.initialAlpha = 1;
        c.minDecFactor = 0.5;
        DcqcnReactionPoint rp(c);
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.CurrentRate(), C, 1e-3, "starts at the maximum rate");
        NS_TEST_ASSERT_MSG_EQ(rp.SeenCnp(), false, "no CNP yet");

        // First CNP: cut with alpha = 1 (R_C / 2), R_T = old R_C, then alpha = (1-g) + g = 1.
        double rc = C;
        double rt = C;
        double alpha = 1;
        rp.OnCnp();
        rt = rc;
        rc = rc * (1 - alpha / 2);
        alpha = (1 - g) * alpha + g;
        Check(rp, rc, rt, alpha, "first CNP");
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.CurrentRate(), C / 2, 1e-3, "R_C halves");

        // Three alpha periods without a CNP.
        rp.DecayAlpha(3);
        alpha *= std::pow(1 - g, 3);
        Check(rp, rc, rt, alpha, "alpha decay");
        // Second CNP uses the decayed alpha, then raises it.
        rp.OnCnp();
        rt = rc;
        rc = rc * (1 - alpha / 2);
        alpha = (1 - g) * alpha + g;
        Check(rp, rc, rt, alpha, "second CNP");

        // Timer events 1..F: fast recovery, R_C = (R_T + R_C) / 2, R_T unchanged.
        for (int k = 1; k <= 5; ++k)
        {
            NS_TEST_ASSERT_MSG_EQ(rp.OnTimer(), DcqcnReactionPoint::FAST_RECOVERY,
                                  "fast recovery at timer stage " << k);
            rc = (rt + rc) / 2;
            Check(rp, rc, rt, alpha, "fast recovery");
        }
        // Timer stage F+1 with the byte counter still at 0: additive increase.
        NS_TEST_ASSERT_MSG_EQ(rp.OnTimer(), DcqcnReactionPoint::ADDITIVE, "timer stage 6");
        rt += ai;
        rc = (rt + rc) / 2;
        Check(rp, rc, rt, alpha, "additive increase");
        // Byte counter: 999 bytes do nothing, 1 more is one byte stage (stage 1 <= F, but the
        // timer counter is past F: additive).
        NS_TEST_ASSERT_MSG_EQ(rp.OnBytes(999), DcqcnReactionPoint::NONE, "below B");
        NS_TEST_ASSERT_MSG_EQ(rp.OnBytes(1), DcqcnReactionPoint::ADDITIVE, "byte stage 1");
        rt += ai;
        rc = (rt + rc) / 2;
        Check(rp, rc, rt, alpha, "byte-counter additive increase");
        // 5 more byte stages in one call: stages 2..5 additive, stage 6 with timer stage 6:
        // both past F -> hyper increase with i = min(6, 6) - 5 = 1.
        NS_TEST_ASSERT_MSG_EQ(rp.OnBytes(5000), DcqcnReactionPoint::HYPER, "byte stage 6");
        for (int k = 2; k <= 5; ++k)
        {
            rt += ai;
            rc = (rt + rc) / 2;
        }
        rt += 1 * hai;
        rc = (rt + rc) / 2;
        Check(rp, rc, rt, alpha, "hyper increase i=1");
        // Timer stage 7, byte stage 6: i = 6 - 5 = 1 again; byte stage 7: i = 2.
        NS_TEST_ASSERT_MSG_EQ(rp.OnTimer(), DcqcnReactionPoint::HYPER, "timer stage 7");
        rt += 1 * hai;
        rc = (rt + rc) / 2;
        NS_TEST_ASSERT_MSG_EQ(rp.OnBytes(1000), DcqcnReactionPoint::HYPER, "byte stage 7");
        rt += 2 * hai;
        rc = (rt + rc) / 2;
        Check(rp, rc, rt, alpha, "hyper increase i=2");
        NS_TEST_ASSERT_MSG_EQ(rp.TimeStage(), 7u, "timer stages");
        NS_TEST_ASSERT_MSG_EQ(rp.ByteStage(), 7u, "byte stages");

        // A cut restarts both stages: the next event is fast recovery again.
        rp.OnCnp();
        rt = rc;
        rc = rc * (1 - alpha / 2);
        alpha = (1 - g) * alpha + g;
        Check(rp, rc, rt, alpha, "cut after hyper increase");
        NS_TEST_ASSERT_MSG_EQ(rp.TimeStage() + rp.ByteStage(), 0u, "stages restart");
        NS_TEST_ASSERT_MSG_EQ(rp.OnTimer(), DcqcnReactionPoint::FAST_RECOVERY, "stage 1 again");

        // Many cuts: R_C never goes below the minimum rate; recovery never passes the maximum.
        for (int k = 0; k < 200; ++k)
        {
            rp.OnCnp();
        }
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.CurrentRate(), c.minRate, 1e-6, "floor at rpg_min_rate");
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.Alpha(), 1.0, 1e-4, "alpha -> 1 under CNPs");
        for (int k = 0; k < 4000; ++k)
        {
            rp.OnTimer();
            rp.OnBytes(1000);
        }
        NS_TEST_ASSERT_MSG_EQ(rp.AtMaxRate(), true, "recovers to the maximum");
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.CurrentRate(), C, 1e-3, "never above the maximum");
    }

  private:
    void
    Check(const DcqcnReactionPoint& rp, double rc, double rt, double alpha, const char* what)
    {
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.CurrentRate(), rc, rc * 1e-12, what << ": R_C");
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.TargetRate(), rt, rt * 1e-12, what << ": R_T");
        NS_TEST_ASSERT_MSG_EQ_TOL(rp.Alpha(), alpha, 1e-12, what << ": alpha");
    }
};

class ReactionPointOptionsTest : public TestCase
{
  public:
    ReactionPointOptionsTest()
        : TestCase("DCQCN reaction point options: no byte counter, target clamping, first-CNP "
                   "rate, minimum decrease factor")
    {
    }

    void
    DoRun() override
    {
        DcqcnConfig c;
        c.maxRate = 100e9;
        c.minRate = 0;
        c.aiRate = 5e6;
        c.haiRate = 50e6;
        c.threshold = 1;
        c.byteReset = 0;
        c.g = 5.0 / 1024;
        c.initialAlpha = 1023.0 / 1024;
        c.minDecFactor = 0.5;

        // Byte counter disabled: the timer alone goes fast recovery (stage 1 = F) then hyper
        // increase with i = stage - F.
        DcqcnReactionPoint a(c);
        a.OnCnp();
        NS_TEST_ASSERT_MSG_EQ(a.OnBytes(1u << 30), DcqcnReactionPoint::NONE, "no byte counter");
        NS_TEST_ASSERT_MSG_EQ(a.OnTimer(), DcqcnReactionPoint::FAST_RECOVERY, "stage 1");
        const double rt = a.TargetRate();
        NS_TEST_ASSERT_MSG_EQ(a.OnTimer(), DcqcnReactionPoint::HYPER, "stage 2");
        NS_TEST_ASSERT_MSG_EQ_TOL(a.TargetRate(), std::min(rt + 50e6, 100e9), 1e-3, "i = 1");

        // Without clamp_tgt_rate and no timer increase since the last cut, R_T stays where it
        // was: a train of cuts keeps the old target; after a timer increase the cut clamps.
        c.clampTgtRate = false;
        c.clampTgtRateAfterTimeInc = true;
        DcqcnReactionPoint b(c);
        b.OnCnp();
        b.OnCnp();
        b.OnCnp();
        NS_TEST_ASSERT_MSG_EQ_TOL(b.TargetRate(), 100e9, 1e-3, "target not clamped");
        NS_TEST_ASSERT_MSG_LT(b.CurrentRate(), 20e9, "three cuts");
        b.OnTimer();
        const double before = b.CurrentRate();
        b.OnCnp();
        NS_TEST_ASSERT_MSG_EQ_TOL(b.TargetRate(), before, 1e-3, "clamped after a timer increase");
        c.clampTgtRateAfterTimeInc = false;
        DcqcnReactionPoint b2(c);
        b2.OnCnp();
        b2.OnTimer();
        b2.OnCnp();
        NS_TEST_ASSERT_MSG_EQ_TOL(b2.TargetRate(), 100e9, 1e-3, "never clamped");

        // rate_to_set_on_first_cnp: the first CNP sets R_C = R_T = that rate, then cuts.
        c.firstCnpRate = 10e9;
        DcqcnReactionPoint d(c);
        d.OnCnp();
        NS_TEST_ASSERT_MSG_EQ_TOL(d.CurrentRate(), 10e9 * (1 - c.initialAlpha / 2), 1e-3,
                                  "first-CNP rate then the cut");

        // rpg_min_dec_fac 80 %: a cut with alpha ~ 1 keeps 80 % instead of 50 %.
        c.firstCnpRate = 0;
        c.minDecFactor = 0.8;
        DcqcnReactionPoint e(c);
        e.OnCnp();
        NS_TEST_ASSERT_MSG_EQ_TOL(e.CurrentRate(), 80e9, 1e-3, "at most a 20 % cut");

        // Alpha per window: a CNP leaves alpha alone; each window's end moves it once.
        DcqcnReactionPoint w(c);
        w.OnCnp(true, false);
        NS_TEST_ASSERT_MSG_EQ_TOL(w.Alpha(), c.initialAlpha, 1e-15, "first CNP: initial alpha");
        w.OnCnp(true, false);
        NS_TEST_ASSERT_MSG_EQ_TOL(w.Alpha(), c.initialAlpha, 1e-15, "no per-CNP update");
        w.AlphaWindow(true);
        const double up = (1 - c.g) * c.initialAlpha + c.g;
        NS_TEST_ASSERT_MSG_EQ_TOL(w.Alpha(), up, 1e-15, "a window with a CNP");
        w.AlphaWindow(false);
        NS_TEST_ASSERT_MSG_EQ_TOL(w.Alpha(), (1 - c.g) * up, 1e-15, "a window without");
    }
};

// ---------------------------------------------------------------------------------------------

class DriverTimingTest : public DcqcnTestCase
{
  public:
    DriverTimingTest()
        : DcqcnTestCase("DCQCN driver: alpha timer (dce_tcp_rtt), rate-increase timer "
                        "(rpg_time_reset) and rate_reduce_monitor_period at their exact times")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::RdmaNic::CongestionControl", TypeIdValue(Dcqcn::GetTypeId()));
        Config::SetDefault("ns3::Dcqcn::dce_tcp_g", UintegerValue(960)); // g = 1/16
        Config::SetDefault("ns3::Dcqcn::dce_tcp_rtt", TimeValue(MicroSeconds(10)));
        Config::SetDefault("ns3::Dcqcn::rpg_time_reset", TimeValue(MicroSeconds(100)));
        Config::SetDefault("ns3::Dcqcn::rpg_byte_reset", UintegerValue(0));
        Config::SetDefault("ns3::Dcqcn::rate_reduce_monitor_period", TimeValue(MicroSeconds(20)));
        RoceHelper h;
        RoceTopology t = h.PointToPoint(EthSpeed::GBE25);
        m_qp = t.nics[0]->Connect(t.nics[1]).first;
        m_cc = DynamicCast<Dcqcn>(t.nics[0]->GetCongestionControl());
        NS_TEST_ASSERT_MSG_NE(m_cc, nullptr, "RdmaNic.CongestionControl Dcqcn makes a Dcqcn");

        const double g = 1.0 / 16;
        const double C = 25e9;
        // t = 0: first CNP, alpha = 1: R_C = C / 2, R_T = C; alpha stays 1.
        double rc = C / 2;
        double rt = C;
        double alpha = 1;
        At(0, true, rc, rt, alpha, "first CNP");
        // t = 35 us: three alpha periods have passed (10, 20, 30 us); the cut uses that alpha.
        alpha = std::pow(1 - g, 3);
        rt = rc;
        rc *= 1 - alpha / 2;
        alpha = (1 - g) * alpha + g;
        At(35, true, rc, rt, alpha, "CNP after 3 alpha periods");
        // t = 40 us: inside the 20-us monitor period of the 35-us cut: alpha rises now, the cut
        // waits for 55 us.
        alpha = (1 - g) * alpha + g;
        At(40, true, rc, rt, alpha, "CNP inside the monitor period: no cut yet");
        // One alpha period after the 40-us CNP (the timer restarts at every CNP): 50 us.
        alpha *= 1 - g;
        At(54.9, false, rc, rt, alpha, "still no cut");
        // 55 us: the deferred cut, with that alpha.
        rt = rc;
        rc *= 1 - alpha / 2;
        At(55.1, false, rc, rt, alpha, "deferred cut at 55 us");
        // The rate-increase timer restarted at the 55-us cut: first expiry at 155 us.
        At(154.9, false, rc, rt, alpha * std::pow(1 - g, 10), "no increase before T");
        rc = (rt + rc) / 2;
        At(155.1, false, rc, rt, alpha * std::pow(1 - g, 10), "fast recovery at 155 us");
        rc = (rt + rc) / 2;
        At(255.1, false, rc, rt, alpha * std::pow(1 - g, 20), "fast recovery at 255 us");
        Simulator::Stop(MicroSeconds(300));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(m_checks, 8u, "every check ran");
    }

  private:
    void
    At(double us, bool cnp, double rc, double rt, double alpha, std::string what)
    {
        Simulator::Schedule(NanoSeconds(int64_t(us * 1000)), &DriverTimingTest::Check, this, cnp,
                            rc, rt, alpha, what);
    }

    void
    Check(bool cnp, double rc, double rt, double alpha, std::string what)
    {
        if (cnp)
        {
            m_cc->OnCnp(*m_qp);
        }
        const DcqcnReactionPoint& rp = m_cc->GetReactionPoint(*m_qp);
        NS_TEST_EXPECT_MSG_EQ_TOL(rp.CurrentRate(), rc, rc * 1e-12, what << ": R_C");
        NS_TEST_EXPECT_MSG_EQ_TOL(rp.TargetRate(), rt, rt * 1e-12, what << ": R_T");
        NS_TEST_EXPECT_MSG_EQ_TOL(rp.Alpha(), alpha, 1e-12, what << ": alpha");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_qp->GetRate(), rc, rc * 1e-12, what << ": QP pacing rate");
        ++m_checks;
    }

    Ptr<RdmaQueuePair> m_qp;
    Ptr<Dcqcn> m_cc;
    uint32_t m_checks = 0;
};

class AlphaPerWindowTest : public DcqcnTestCase
{
  public:
    AlphaPerWindowTest()
        : DcqcnTestCase("DCQCN AlphaUpdate PerWindow (NIC firmware): alpha moves once per "
                        "dce_tcp_rtt window from the first CNP, up if a CNP came in it")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::RdmaNic::CongestionControl", TypeIdValue(Dcqcn::GetTypeId()));
        Config::SetDefault("ns3::Dcqcn::AlphaUpdate", StringValue("PerWindow"));
        Config::SetDefault("ns3::Dcqcn::dce_tcp_g", UintegerValue(960)); // g = 1/16
        Config::SetDefault("ns3::Dcqcn::dce_tcp_rtt", TimeValue(MicroSeconds(10)));
        Config::SetDefault("ns3::Dcqcn::rpg_time_reset", TimeValue(MilliSeconds(1)));
        Config::SetDefault("ns3::Dcqcn::rpg_byte_reset", UintegerValue(0));
        RoceHelper h;
        RoceTopology t = h.PointToPoint(EthSpeed::GBE25);
        Ptr<RdmaQueuePair> qp = t.nics[0]->Connect(t.nics[1]).first;
        Ptr<Dcqcn> cc = DynamicCast<Dcqcn>(t.nics[0]->GetCongestionControl());
        const double g = 1.0 / 16;
        std::vector<double> alpha;
        std::vector<double> rate;
        auto cnp = [&]() { cc->OnCnp(*qp); };
        auto read = [&]()
        {
            alpha.push_back(cc->GetReactionPoint(*qp).Alpha());
            rate.push_back(qp->GetRate());
        };
        Simulator::Schedule(Time(0), cnp);
        Simulator::Schedule(Time(0), read);
        Simulator::Schedule(MicroSeconds(15), cnp);
        Simulator::Schedule(MicroSeconds(15), read);
        Simulator::Schedule(MicroSeconds(25), read);
        Simulator::Schedule(MicroSeconds(47), read);
        Simulator::Stop(MicroSeconds(50));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(alpha.size(), 4u, "every read ran");
        // t = 0: the first CNP: alpha = 1 (initial), the cut halves; no window has ended.
        double a = 1;
        double rc = 25e9 / 2;
        NS_TEST_EXPECT_MSG_EQ_TOL(alpha[0], a, 1e-15, "alpha at the first CNP");
        NS_TEST_EXPECT_MSG_EQ_TOL(rate[0], rc, 1, "first cut");
        // t = 15: window [0, 10) ended without a CNP after the first: alpha (1 - g); the cut
        // uses it. The CNP counts in window [10, 20).
        a *= 1 - g;
        rc *= 1 - a / 2;
        NS_TEST_EXPECT_MSG_EQ_TOL(alpha[1], a, 1e-15, "alpha at 15 us: one window down");
        NS_TEST_EXPECT_MSG_EQ_TOL(rate[1], rc, 1, "cut with that alpha");
        // t = 25: window [10, 20) had the CNP: alpha (1 - g) + g.
        a = (1 - g) * a + g;
        NS_TEST_EXPECT_MSG_EQ_TOL(alpha[2], a, 1e-15, "alpha up after a window with a CNP");
        // t = 47: windows [20, 30) and [30, 40) without: (1 - g)^2.
        a *= (1 - g) * (1 - g);
        NS_TEST_EXPECT_MSG_EQ_TOL(alpha[3], a, 1e-15, "alpha down twice");
    }
};

class PresetRunTest : public DcqcnTestCase
{
  public:
    PresetRunTest()
        : DcqcnTestCase("lfsim::Run expands a Preset pseudo-attribute first; explicit values "
                        "win; an unknown preset names the accepted ones")
    {
    }

    void
    DoRun() override
    {
        lfsim::TestRun run("roce", "100us");
        run.Topology("Star", {{"Hosts", "2"}})
            .Workload("incast", "Incast", {{"Destinations", "h0"}})
            // The explicit value comes first: order must not matter.
            .Class("ns3::Dcqcn", "rpg_ai_rate", "7Mbps")
            .Class("ns3::Dcqcn", "Preset", "nic_default");
        run.Run();
        NS_TEST_ASSERT_MSG_EQ(Default("ns3::Dcqcn", "rpg_ai_rate"), "7000000bps", "explicit");
        NS_TEST_ASSERT_MSG_EQ(Default("ns3::Dcqcn", "rpg_time_reset"), "+3e+08ps", "preset");
        NS_TEST_ASSERT_MSG_EQ(Default("ns3::RdmaNic", "CnpInterval"), "+2e+06ps",
                              "the preset reaches the notification point");
        run.config.attributes = {{"ns3::Dcqcn", "Preset", "fast"}};
        std::string what;
        try
        {
            run.Run();
        }
        catch (const std::invalid_argument& e)
        {
            what = e.what();
        }
        NS_TEST_ASSERT_MSG_EQ(what, "ns3::Dcqcn::Preset: got 'fast'; accepted: paper, nic_default",
                              "one-line error");
    }

  private:
    static std::string
    Default(const std::string& type, const std::string& attr)
    {
        // A part's attribute (RdmaNic.CnpInterval is RdmaTransport's): the part's default.
        TypeId::AttributeInformation info;
        TypeId::LookupByName(lfsim::AttributeClass(type, attr)).LookupAttributeByName(attr, &info);
        return info.initialValue->SerializeToString(info.checker);
    }
};

// ---------------------------------------------------------------------------------------------
// Flows on a real bottleneck: hosts on one switch, long flows of back-to-back RDMA WRITEs.

struct Bulk
{
    Ptr<RdmaQueuePair> qp;
    Ptr<RdmaQueuePair> sink;
    uint32_t size = 1 << 20;

    void
    Start(uint32_t depth)
    {
        qp->SetCompletionCallback(MakeCallback(&Bulk::Done, this));
        for (uint32_t i = 0; i < depth; ++i)
        {
            qp->Post(RdmaOp::WRITE, size);
        }
    }

    void
    Done(Ptr<RdmaQueuePair>, uint64_t, uint32_t, Time)
    {
        qp->Post(RdmaOp::WRITE, size);
    }
};

/// Goodput of every flow in consecutive windows.
struct Meter
{
    std::vector<Bulk>* flows;
    Time window;
    std::vector<uint64_t> last;
    std::vector<std::vector<double>> gbps; ///< [window][flow]

    void
    Sample()
    {
        std::vector<double> row;
        for (size_t k = 0; k < flows->size(); ++k)
        {
            const uint64_t b = (*flows)[k].sink->GetBytesReceived();
            row.push_back((b - last[k]) * 8.0 / window.GetSeconds() / 1e9);
            last[k] = b;
        }
        gbps.push_back(row);
        Simulator::Schedule(window, &Meter::Sample, this);
    }
};

void
UseDcqcn(const std::string& preset)
{
    Config::SetDefault("ns3::RdmaNic::CongestionControl", TypeIdValue(Dcqcn::GetTypeId()));
    Config::SetDefault("ns3::SwitchMarker::EcnEnabled", BooleanValue(true));
    lfsim::ApplyPreset("ns3::Dcqcn", preset);
}

class ConvergenceTest : public DcqcnTestCase
{
  public:
    ConvergenceTest()
        : DcqcnTestCase("DCQCN (paper): two flows on a 40GbE bottleneck reach their fair share "
                        "within 10 %; a late flow gets its share; no PFC pause, no drop")
    {
    }

    void
    DoRun() override
    {
        UseDcqcn("paper");
        RoceHelper h;
        RoceTopology t = h.Leaf(3, EthSpeed::GBE40);
        h.AssignStreams(t, 1);
        std::vector<Bulk> flows(2);
        for (uint32_t i = 0; i < 2; ++i)
        {
            auto [a, b] = t.nics[i + 1]->Connect(t.nics[0]);
            flows[i].qp = a;
            flows[i].sink = b;
        }
        // Flow 0 alone for 5 ms, then flow 1 joins.
        Simulator::Schedule(Time(0), &Bulk::Start, &flows[0], 2);
        Simulator::Schedule(MilliSeconds(5), &Bulk::Start, &flows[1], 2);
        Meter m{&flows, MilliSeconds(1), {0, 0}, {}};
        Simulator::Schedule(m.window, &Meter::Sample, &m);
        Simulator::Stop(MilliSeconds(5) + Converge() + MilliSeconds(10) + NanoSeconds(1));
        Simulator::Run();

        const double line = 40.0 * 4096 / 4178; // goodput of a full 40GbE line at MTU 4096

        NS_TEST_ASSERT_MSG_GT(m.gbps[3][0], 0.97 * line, "flow 0 alone runs at line rate");
        // From Converge() after the join on, every 1-ms window is within 10 % of fair share.
        const size_t from = 5 + Converge().GetMilliSeconds();
        for (size_t w = from; w < m.gbps.size(); ++w)
        {
            for (size_t k = 0; k < 2; ++k)
            {
                NS_TEST_ASSERT_MSG_EQ_TOL(m.gbps[w][k], line / 2, 0.1 * line / 2,
                                          "window " << w << " ms, flow " << k);
            }
        }
        for (auto& p : t.ports)
        {
            NS_TEST_ASSERT_MSG_EQ(p->GetCounters().pauseTx, 0u, "no PFC pause needed");
        }
        for (auto& sw : t.switches)
        {
            const auto& c = sw->GetCounters();
            NS_TEST_ASSERT_MSG_EQ(c.dropsHeadroom + c.dropsBuffer, 0u, "no drop");
            NS_TEST_ASSERT_MSG_GT(c.ecnMarked, 0u, "DCQCN acted on ECN marks");
        }
    }

    /// Documented in doc/dcqcn.md: time from the join to every 1-ms window within 10 %. The
    /// join cuts both flows to about 5 Gb/s; they climb back by additive increase, R_AI per T
    /// (40 Mb/s per 55 us = 0.73 Gb/s per ms), which takes about 20 ms.
    static Time
    Converge()
    {
        return MilliSeconds(25);
    }
};

} // namespace

class DcqcnTestSuite : public TestSuite
{
  public:
    DcqcnTestSuite()
        : TestSuite("dcqcn", UNIT)
    {
        AddTestCase(new ReactionPointTest, TestCase::QUICK);
        AddTestCase(new ReactionPointOptionsTest, TestCase::QUICK);
        AddTestCase(new DriverTimingTest, TestCase::QUICK);
        AddTestCase(new AlphaPerWindowTest, TestCase::QUICK);
        AddTestCase(new PresetRunTest, TestCase::QUICK);
        AddTestCase(new ConvergenceTest, TestCase::QUICK);
    }
};

static DcqcnTestSuite g_dcqcnTestSuite;
