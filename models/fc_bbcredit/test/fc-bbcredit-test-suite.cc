/*
 * Unit tests of the FC model: exact timings from baud and transmission code, frame layout,
 * BB_Credit invariants, the closed-form distance law, BB_SC_N recovery, switching latencies,
 * FCP exchange sequences, conservation of frames, the incast workload of the "fc" fabric
 * (leaf-spine routing, line-rate ceiling, fairness, head-of-line blocking of a victim flow), and
 * credit loops on a ring (routing tables, the deadlock detector's cycle, acyclic routing).
 */
#include "fc-applications.h"
#include "fc-frame-header.h"
#include "fc-helper.h"
#include "fcp.h"
#include "lfsim-routing.h"
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

using namespace ns3;

namespace
{

const char* kSpeeds[] = {"1GFC", "2GFC", "4GFC", "8GFC", "16GFC", "32GFC"};

/// Seconds per line byte, computed here from the FC-PI figures (independent of fc-speed.cc).
double
SecondsPerByte(int speed)
{
    const double baud[] = {1.0625e9, 2.125e9, 4.25e9, 8.5e9, 14.025e9, 28.05e9};
    // 32GFC: 256b/257b, then RS(528,514) FEC over 10-bit symbols (FC-PI-6).
    const double lineBitsPerByte[] = {10, 10, 10, 10, 8.0 * 66 / 64, 8.0 * 257 / 256 * 528 / 514};
    return lineBitsPerByte[speed] / baud[speed];
}

class FcTestCase : public lfsim::ModelTestCase
{
  public:
    using lfsim::ModelTestCase::ModelTestCase;

  protected:
    /// After a drained run: every frame sent on a fibre arrived, every credit came home.
    void
    ExpectLinksDrained(const FcTopology& t)
    {
        for (auto& ch : t.channels)
        {
            auto a = DynamicCast<FcNetDevice>(ch->GetDevice(0));
            auto b = DynamicCast<FcNetDevice>(ch->GetDevice(1));
            NS_TEST_EXPECT_MSG_EQ(a->GetCounters().framesTx, b->GetCounters().framesRx, "a->b");
            NS_TEST_EXPECT_MSG_EQ(b->GetCounters().framesTx, a->GetCounters().framesRx, "b->a");
            NS_TEST_EXPECT_MSG_EQ(a->GetCredits(), a->GetLoginCredit(), "credits home");
            NS_TEST_EXPECT_MSG_EQ(b->GetCredits(), b->GetLoginCredit(), "credits home");
        }
    }
};

// ---------------------------------------------------------------------------------------------
class LineRateTest : public FcTestCase
{
  public:
    LineRateTest()
        : FcTestCase("Line rates and serialization times per speed")
    {
    }

    void
    DoRun() override
    {
        // Data rates of the FC-PI tables: 1GFC 106.25 MB/s ... 16GFC 1700 MB/s, 32GFC 3400 MB/s
        // (FC-PI-6: twice 16GFC, once the RS(528,514) FEC parity is paid).
        NS_TEST_EXPECT_MSG_EQ_TOL(FcDataBytesPerSecond(FcSpeed::GFC1), 106.25e6, 1, "1GFC");
        NS_TEST_EXPECT_MSG_EQ_TOL(FcDataBytesPerSecond(FcSpeed::GFC8), 850e6, 1, "8GFC");
        NS_TEST_EXPECT_MSG_EQ_TOL(FcDataBytesPerSecond(FcSpeed::GFC16), 1700e6, 1, "16GFC");
        NS_TEST_EXPECT_MSG_EQ_TOL(FcDataBytesPerSecond(FcSpeed::GFC32), 3400e6, 1, "32GFC");
        // A full frame at 32GFC: 2148 B x 8 x 257/256 x 528/514 / 28.05e9 s = 631.7647 ns
        // (2148 B at exactly 3.4e9 B/s).
        NS_TEST_EXPECT_MSG_EQ(FcWireTime(FcSpeed::GFC32, 2148).GetPicoSeconds(), 631765,
                              "32GFC frame");
        for (int s = 0; s < 6; ++s)
        {
            // A full frame: SOF 4 + header 24 + 2112 + CRC 4 + EOF 4 = 2148 bytes.
            Time t = FcWireTime(static_cast<FcSpeed>(s), 2148);
            double want = 2148 * SecondsPerByte(s);
            NS_TEST_EXPECT_MSG_EQ_TOL(t.GetSeconds(), want, 1e-12, kSpeeds[s]);
        }
        // 1GFC: one word is 40 line bits = 37.647 ns.
        NS_TEST_EXPECT_MSG_EQ(FcWireTime(FcSpeed::GFC1, 4).GetPicoSeconds(), 37647, "word");
        NS_TEST_EXPECT_MSG_EQ(FcFrameWireBytes(0), 36u, "empty frame");
        NS_TEST_EXPECT_MSG_EQ(FcFrameWireBytes(1), 40u, "fill bytes pad to a word");
        NS_TEST_EXPECT_MSG_EQ(FcFrameWireBytes(2112), 2148u, "full frame");
    }
};

// ---------------------------------------------------------------------------------------------
class HeaderTest : public FcTestCase
{
  public:
    HeaderTest()
        : FcTestCase("FC frame header: 24 bytes in FC-FS word order")
    {
    }

    void
    DoRun() override
    {
        FcFrameHeader h;
        h.rCtl = 0x06;
        h.dId = 0x010200;
        h.csCtl = 0;
        h.sId = 0x010300;
        h.type = 0x08;
        h.fCtl = 0x290000;
        h.seqId = 7;
        h.dfCtl = 0;
        h.seqCnt = 0x1234;
        h.oxId = 0xabcd;
        h.rxId = 0xffff;
        h.parameter = 0xdeadbeef;
        Ptr<Packet> p = Create<Packet>();
        p->AddHeader(h);
        NS_TEST_ASSERT_MSG_EQ(p->GetSize(), 24u, "header size");
        uint8_t b[24];
        p->CopyData(b, 24);
        const uint8_t want[24]
            = {0x06, 0x01, 0x02, 0x00, 0x00, 0x01, 0x03, 0x00, 0x08, 0x29, 0x00, 0x00,
               0x07, 0x00, 0x12, 0x34, 0xab, 0xcd, 0xff, 0xff, 0xde, 0xad, 0xbe, 0xef};
        for (int i = 0; i < 24; ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(int(b[i]), int(want[i]), "byte " << i);
        }
        FcFrameHeader back;
        p->RemoveHeader(back);
        NS_TEST_EXPECT_MSG_EQ(back.dId, h.dId, "D_ID");
        NS_TEST_EXPECT_MSG_EQ(back.fCtl, h.fCtl, "F_CTL");
        NS_TEST_EXPECT_MSG_EQ(back.parameter, h.parameter, "parameter");
    }
};

// ---------------------------------------------------------------------------------------------
struct Stamp
{
    std::vector<std::pair<Time, uint32_t>> credits;
    std::vector<Time> rx;
};

void
RecordCredit(Stamp* s, uint32_t, uint32_t v)
{
    s->credits.push_back({Simulator::Now(), v});
}

bool
RecordRx(Stamp* s, Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&)
{
    s->rx.push_back(Simulator::Now());
    return true;
}

/// Two N_Ports at 4GFC over 2 km with 3 us receive processing; `s` records the first one's
/// credits and the second one's deliveries.
FcTopology
StampedPointToPoint(Stamp& s)
{
    Config::SetDefault("ns3::FcNetDevice::Speed", StringValue("4GFC"));
    Config::SetDefault("ns3::FcNetDevice::RxProcessingDelay", StringValue("3us"));
    Config::SetDefault("ns3::FcChannel::Length", DoubleValue(2000));
    FcHelper helper;
    FcTopology t = helper.PointToPoint();
    t.hostPorts[0]->TraceConnectWithoutContext("Credits", MakeBoundCallback(&RecordCredit, &s));
    t.hostPorts[1]->SetReceiveCallback(MakeBoundCallback(&RecordRx, &s));
    return t;
}

/// A 1000-byte frame from the first N_Port to the second at `at`.
void
FrameToPeer(const FcTopology& t, Time at)
{
    FcFrameHeader h;
    h.dId = t.hostPorts[1]->GetFcId();
    Simulator::Schedule(at, &FcNetDevice::Enqueue, t.hostPorts[0], MakeFcFrame(h, 1000), nullptr);
}

class SingleFrameTimingTest : public FcTestCase
{
  public:
    SingleFrameTimingTest()
        : FcTestCase("One frame: delivery at Tf+Tp+d, credit back at Tf+2Tp+Tw+d")
    {
    }

    void
    DoRun() override
    {
        Stamp s;
        FcTopology t = StampedPointToPoint(s);
        FrameToPeer(t, MicroSeconds(1));
        Simulator::Run();
        double spb = SecondsPerByte(2);
        double tf = (36 + 1000) * spb;
        double tp = 2000 * 5e-9;
        double tw = 4 * spb;
        NS_TEST_ASSERT_MSG_EQ(s.rx.size(), 1u, "one delivery");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.rx[0].GetSeconds(), 1e-6 + tf + tp + 3e-6, 2e-12, "delivery");
        NS_TEST_ASSERT_MSG_EQ(s.credits.size(), 2u, "down then up");
        NS_TEST_EXPECT_MSG_EQ(s.credits[0].second, 7u, "one credit spent of 8");
        NS_TEST_EXPECT_MSG_EQ(s.credits[1].second, 8u, "credit returned");
        NS_TEST_EXPECT_MSG_EQ_TOL(s.credits[1].first.GetSeconds(), 1e-6 + tf + 2 * tp + tw + 3e-6,
                                  3e-12, "R_RDY arrival");
    }
};

// ---------------------------------------------------------------------------------------------
class LineDelayAfterAttachTest : public FcTestCase
{
  public:
    LineDelayAfterAttachTest()
        : FcTestCase("Length and PropagationDelayPerMeter set after Attach: exact times")
    {
    }

    void
    DoRun() override
    {
        // The ports carry what they send on lines of their own: a value set on the channel after
        // the ports are attached (and logged in) must reach those lines.
        Stamp s;
        FcTopology t = StampedPointToPoint(s);
        t.channels[0]->SetAttribute("Length", DoubleValue(4000));
        FrameToPeer(t, MicroSeconds(1));
        // During the run, with nothing on the fibre: 4 ns/m instead of 5.
        Simulator::Schedule(MicroSeconds(100),
                            [&t]() {
                                t.channels[0]->SetAttribute("PropagationDelayPerMeter",
                                                            TimeValue(NanoSeconds(4)));
                            });
        FrameToPeer(t, MicroSeconds(200));
        Simulator::Run();
        // 4GFC, 8b/10b: a byte is 10 bits at 4.25 GBd. Frame (36 + 1000 B): 10360 / 4.25e9 s =
        // 2437.647 ns -> 2,437,647 ps; a word (R_RDY, 4 B): 9.412 ns -> 9,412 ps.
        // First frame, 4000 m x 5 ns = 20 us: SOF leaves at 1 us, delivered after its EOF and
        // the 3 us processing delay: 1,000,000 + 2,437,647 + 20,000,000 + 3,000,000 ps; its
        // R_RDY leaves then and arrives a word and 20 us later.
        // Second frame, 4000 m x 4 ns = 16 us, sent at 200 us:
        // 200,000,000 + 2,437,647 + 16,000,000 + 3,000,000 ps, R_RDY a word and 16 us later.
        NS_TEST_ASSERT_MSG_EQ(s.rx.size(), 2u, "two deliveries");
        NS_TEST_EXPECT_MSG_EQ(s.rx[0].GetPicoSeconds(), 26437647, "first delivery: 4000 m");
        NS_TEST_EXPECT_MSG_EQ(s.rx[1].GetPicoSeconds(), 221437647, "second delivery: 4 ns/m");
        NS_TEST_ASSERT_MSG_EQ(s.credits.size(), 4u, "down, up, down, up");
        NS_TEST_EXPECT_MSG_EQ(s.credits[1].second, 8u, "credit returned");
        NS_TEST_EXPECT_MSG_EQ(s.credits[1].first.GetPicoSeconds(), 46447059, "first R_RDY");
        NS_TEST_EXPECT_MSG_EQ(s.credits[3].second, 8u, "credit returned");
        NS_TEST_EXPECT_MSG_EQ(s.credits[3].first.GetPicoSeconds(), 237447059, "second R_RDY");
    }
};

// ---------------------------------------------------------------------------------------------
/// Streams full frames for `stop` and returns payload MB/s counted in [warm, stop).
double
StreamThroughput(int speed, uint32_t credits, double lengthM, Time warm, Time stop)
{
    Config::SetDefault("ns3::FcNetDevice::Speed", StringValue(kSpeeds[speed]));
    Config::SetDefault("ns3::FcNetDevice::BbCredit", UintegerValue(credits));
    Config::SetDefault("ns3::FcChannel::Length", DoubleValue(lengthM));
    FcHelper helper;
    FcTopology t = helper.PointToPoint();
    Ptr<FcSink> sink = helper.InstallStream(t).sink;
    sink->SetWindow(warm, stop);
    Simulator::Stop(stop);
    Simulator::Run();
    return sink->GetWindowBytes() / (stop - warm).GetSeconds() / 1e6;
}

/// The distance law: N frames per round trip, or line rate once N frame slots cover it.
double
ClosedForm(int speed, uint32_t credits, double lengthM)
{
    double spb = SecondsPerByte(speed);
    double slot = (2148 + 6 * 4) * spb;                    // frame + six idle words
    double rt = 2148 * spb + 2 * lengthM * 5e-9 + 4 * spb; // frame, both ways, one R_RDY
    return 2112.0 * credits / std::max(credits * slot, rt) / 1e6;
}

class DistanceLawTest : public FcTestCase
{
  public:
    DistanceLawTest()
        : FcTestCase("Throughput = min(line, N frames per round trip) within 1 %")
    {
    }

    void
    DoRun() override
    {
        const uint32_t creditSet[] = {1, 2, 5, 16, 60};
        const double lengths[] = {10, 1000, 10000, 50000};
        for (int s = 0; s < 6; ++s)
        {
            for (uint32_t n : creditSet)
            {
                for (double l : lengths)
                {
                    double want = ClosedForm(s, n, l);
                    double rt = 2148 * SecondsPerByte(s) + 2 * l * 5e-9;
                    // Long enough for the window edges to be far below 1 %.
                    Time warm = Seconds(2 * rt);
                    Time stop = warm + Seconds(std::max(300 * rt, 3000 * 2172 * SecondsPerByte(s)));
                    double got = StreamThroughput(s, n, l, warm, stop);
                    Simulator::Destroy();
                    NS_TEST_EXPECT_MSG_EQ_TOL(got / want, 1.0, 0.01,
                                              kSpeeds[s] << " N=" << n << " L=" << l << " got "
                                                         << got << " want " << want);
                }
            }
        }
    }
};

class CreditRuleOfThumbTest : public FcTestCase
{
  public:
    CreditRuleOfThumbTest()
        : FcTestCase("About one credit per km at 2GFC with full frames, doubling per speed")
    {
    }

    /// Fewest credits that reach 99 % of the zero-distance throughput.
    uint32_t
    Needed(int speed, double lengthM)
    {
        double top = StreamThroughput(speed, 200, 10, MilliSeconds(1), MilliSeconds(6));
        Simulator::Destroy();
        for (uint32_t n = 1; n < 400; ++n)
        {
            double rt = 2 * lengthM * 5e-9;
            double got = StreamThroughput(speed, n, lengthM, Seconds(2 * rt), Seconds(40 * rt));
            Simulator::Destroy();
            if (got >= 0.99 * top)
            {
                return n;
            }
        }
        return 0;
    }

    void
    DoRun() override
    {
        uint32_t n2 = Needed(1, 20000);
        uint32_t n4 = Needed(2, 20000);
        uint32_t n8 = Needed(3, 20000);
        NS_TEST_EXPECT_MSG_GT_OR_EQ(n2, 18u, "2GFC, 20 km: about 20 credits");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(n2, 23u, "2GFC, 20 km: about 20 credits");
        NS_TEST_EXPECT_MSG_EQ_TOL(double(n4) / n2, 2.0, 0.15, "4GFC needs twice 2GFC");
        NS_TEST_EXPECT_MSG_EQ_TOL(double(n8) / n4, 2.0, 0.15, "8GFC needs twice 4GFC");
    }
};

// ---------------------------------------------------------------------------------------------
class CreditInvariantTest : public FcTestCase
{
  public:
    CreditInvariantTest()
        : FcTestCase("Credits stay in [0, login], buffers never overrun, nothing dropped")
    {
    }

    void
    DoRun() override
    {
        Stamp s;
        Config::SetDefault("ns3::FcNetDevice::RxProcessingDelay", StringValue("7us"));
        Config::SetDefault("ns3::FcNetDevice::Speed", StringValue("8GFC"));
        Config::SetDefault("ns3::FcNetDevice::BbCredit", UintegerValue(3));
        FcHelper helper;
        FcTopology t = helper.PointToPoint();
        t.hostPorts[1]->TraceConnectWithoutContext("Credits", MakeBoundCallback(&RecordCredit, &s));
        FcStreamApps apps = helper.InstallStream(t);
        Ptr<FcSink> sink = apps.sink;
        Ptr<FcStreamSender> tx = apps.senders[0];
        tx->SetStopTime(MilliSeconds(2));
        Simulator::Stop(MilliSeconds(3));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_GT(s.credits.size(), 100u, "credits moved");
        bool hitZero = false;
        for (auto& [when, v] : s.credits)
        {
            NS_TEST_ASSERT_MSG_LT_OR_EQ(v, 3u, "credits above login at " << when);
            hitZero |= (v == 0);
        }
        NS_TEST_EXPECT_MSG_EQ(hitZero, true, "the receiver's delay exhausts the credits");
        const auto& tc = t.hostPorts[1]->GetCounters(); // the sender
        const auto& rc = t.hostPorts[0]->GetCounters();
        NS_TEST_EXPECT_MSG_EQ(rc.bufferOverruns, 0u, "no overrun");
        NS_TEST_EXPECT_MSG_EQ(tc.creditOverflows, 0u, "no R_RDY beyond login");
        // Conservation once drained: every frame sent arrived, every credit came back.
        NS_TEST_EXPECT_MSG_EQ(tc.framesTx, rc.framesRx, "frames conserved");
        NS_TEST_EXPECT_MSG_EQ(rc.rrdyTx, tc.rrdyRx, "R_RDYs conserved");
        NS_TEST_EXPECT_MSG_EQ(t.hostPorts[1]->GetCredits(), 3u, "all credits back");
        NS_TEST_EXPECT_MSG_EQ(sink->GetTotalBytes(), tc.framesTx * 2112, "payload delivered");
    }
};

// ---------------------------------------------------------------------------------------------
class RecoveryTest : public FcTestCase
{
  public:
    RecoveryTest()
        : FcTestCase("BB_SC_N: lost frames and lost R_RDYs leak credit unless recovered")
    {
    }

    struct Outcome
    {
        double early; ///< MB/s in the first 2 ms
        double late;  ///< MB/s in the last 5 ms
        uint32_t creditsAtEnd;
        uint64_t recoveredFrames;
        uint64_t recoveredCredits;
        uint64_t lostFrames;
        uint64_t lostPrims;
    };

    Outcome
    Run(uint32_t bbScN, bool loseFrames)
    {
        Config::SetDefault("ns3::FcNetDevice::Speed", StringValue("2GFC"));
        Config::SetDefault("ns3::FcNetDevice::BbCredit", UintegerValue(16));
        Config::SetDefault("ns3::FcNetDevice::BbScN", UintegerValue(bbScN));
        Config::SetDefault("ns3::FcChannel::Length", DoubleValue(10000));
        Config::SetDefault(loseFrames ? "ns3::FcChannel::LoseFrameEvery"
                                      : "ns3::FcChannel::LoseRRdyEvery",
                           UintegerValue(20));
        FcHelper helper;
        FcTopology t = helper.PointToPoint();
        Ptr<FcSink> early = helper.InstallStream(t).sink;
        early->SetWindow(MilliSeconds(0), MilliSeconds(2));
        // A second counting window on the same sink is read from the total.
        Simulator::Stop(MilliSeconds(20));
        uint64_t at15 = 0;
        Simulator::Schedule(MilliSeconds(15), [&] { at15 = early->GetTotalBytes(); });
        Simulator::Run();
        Outcome o;
        o.early = early->GetWindowBytes() / 2e-3 / 1e6;
        o.late = (early->GetTotalBytes() - at15) / 5e-3 / 1e6;
        o.creditsAtEnd = t.hostPorts[1]->GetCredits(); // host 1 sends
        o.recoveredFrames = t.hostPorts[0]->GetCounters().framesRecovered;
        o.recoveredCredits = t.hostPorts[1]->GetCounters().creditsRecovered;
        o.lostFrames = t.channels[0]->GetFramesLost();
        o.lostPrims = t.channels[0]->GetPrimitivesLost();
        Simulator::Destroy();
        Config::Reset();
        return o;
    }

    void
    DoRun() override
    {
        for (bool frames : {true, false})
        {
            std::string what = frames ? "lost frames" : "lost R_RDYs";
            Outcome leak = Run(0, frames);
            // 16 credits at 10 km 2GFC run at line rate (~206 MB/s) until losses eat them.
            NS_TEST_EXPECT_MSG_GT(leak.early, 150.0, what << ": starts near line rate");
            NS_TEST_EXPECT_MSG_EQ(leak.late, 0.0, what << ": collapses to zero");
            NS_TEST_EXPECT_MSG_EQ(leak.creditsAtEnd, 0u, what << ": every credit leaked");
            NS_TEST_EXPECT_MSG_EQ(leak.recoveredFrames + leak.recoveredCredits, 0u, "no recovery");

            Outcome rec = Run(3, frames);
            // With recovery, throughput stays at line rate less the lost frames (1 in 20).
            double line = ClosedForm(1, 16, 10000);
            double expect = frames ? line * 19 / 20 : line;
            NS_TEST_EXPECT_MSG_EQ_TOL(rec.late / expect, 1.0, 0.03, what << ": recovered");
            uint64_t lost = frames ? rec.lostFrames : rec.lostPrims;
            uint64_t back = frames ? rec.recoveredFrames : rec.recoveredCredits;
            NS_TEST_EXPECT_MSG_GT(lost, 80u, what << ": losses happened");
            // Every loss is recovered except those whose BB_SC has not arrived by the end.
            NS_TEST_EXPECT_MSG_LT_OR_EQ(lost - back, 8u, what << ": all but the last recovered");
        }
    }
};

// ---------------------------------------------------------------------------------------------
class SwitchLatencyTest : public FcTestCase
{
  public:
    SwitchLatencyTest()
        : FcTestCase("Switch: cut-through and store-and-forward latencies")
    {
    }

    double
    OneFrame(const char* mode)
    {
        Config::SetDefault("ns3::FcNetDevice::Speed", StringValue("8GFC"));
        Config::SetDefault("ns3::FcSwitch::Switching", StringValue(mode));
        Config::SetDefault("ns3::FcSwitch::ForwardingLatency", StringValue("500ns"));
        Config::SetDefault("ns3::FcChannel::Length", DoubleValue(100));
        FcHelper helper;
        FcTopology t = helper.Star(3);
        Stamp s;
        t.hostPorts[2]->SetReceiveCallback(MakeBoundCallback(&RecordRx, &s));
        FcFrameHeader h;
        h.dId = t.hostPorts[2]->GetFcId();
        t.hostPorts[1]->Enqueue(MakeFcFrame(h, 2112));
        Simulator::Run();
        double r = s.rx.empty() ? -1 : s.rx[0].GetSeconds();
        Simulator::Destroy();
        Config::Reset();
        return r;
    }

    void
    DoRun() override
    {
        double spb = SecondsPerByte(3);
        double tf = 2148 * spb;
        double tp = 100 * 5e-9;
        double ct = OneFrame("CutThrough");
        double sf = OneFrame("StoreAndForward");
        NS_TEST_EXPECT_MSG_EQ_TOL(ct, 28 * spb + 500e-9 + tf + 2 * tp, 2e-12, "cut-through");
        NS_TEST_EXPECT_MSG_EQ_TOL(sf, 2 * tf + 500e-9 + 2 * tp, 2e-12, "store-and-forward");
    }
};

// ---------------------------------------------------------------------------------------------
void
CountRctl(std::map<int, int>* m, Ptr<const Packet> p)
{
    FcFrameHeader h;
    p->PeekHeader(h);
    (*m)[h.rCtl]++;
}

class FcpSequenceTest : public FcTestCase
{
  public:
    FcpSequenceTest()
        : FcTestCase("FCP: CMND, XFER_RDY per burst, DATA frames, RSP")
    {
    }

    std::map<int, int>
    OneIo(const char* dir, uint32_t firstBurst)
    {
        Config::SetDefault("ns3::FcpInitiator::Direction", StringValue(dir));
        Config::SetDefault("ns3::FcpInitiator::IoSize", UintegerValue(65536));
        Config::SetDefault("ns3::FcpInitiator::QueueDepth", UintegerValue(1));
        Config::SetDefault("ns3::FcpTarget::MaxBurstLength", UintegerValue(16384));
        Config::SetDefault("ns3::FcpTarget::FirstBurstSize", UintegerValue(firstBurst));
        FcHelper helper;
        FcTopology t = helper.Star(2);
        Ptr<FcpTarget> tgt = CreateObject<FcpTarget>();
        t.hosts.Get(0)->AddApplication(tgt);
        tgt->Setup(t.hostPorts[0]);
        Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
        t.hosts.Get(1)->AddApplication(ini);
        ini->Setup(t.hostPorts[1], t.hostPorts[0]->GetFcId(), tgt->GetFirstBurstSize());
        ini->SetStopTime(NanoSeconds(1)); // exactly one I/O
        std::map<int, int> m;
        t.hostPorts[0]->TraceConnectWithoutContext("FrameTx", MakeBoundCallback(&CountRctl, &m));
        t.hostPorts[1]->TraceConnectWithoutContext("FrameTx", MakeBoundCallback(&CountRctl, &m));
        Simulator::Run();
        m[-1] = ini->GetCompleted();
        Simulator::Destroy();
        Config::Reset();
        return m;
    }

    void
    DoRun() override
    {
        auto w = OneIo("Write", 0);
        NS_TEST_EXPECT_MSG_EQ(w[-1], 1, "write completes");
        NS_TEST_EXPECT_MSG_EQ(w[FcRctl::UNSOLICITED_CMD], 1, "one FCP_CMND");
        NS_TEST_EXPECT_MSG_EQ(w[FcRctl::DATA_DESCRIPTOR], 4, "64 KB in 16 KB bursts");
        NS_TEST_EXPECT_MSG_EQ(w[FcRctl::SOLICITED_DATA], 32, "64 KB in 2 KB frames");
        NS_TEST_EXPECT_MSG_EQ(w[FcRctl::COMMAND_STATUS], 1, "one FCP_RSP");
        auto fb = OneIo("Write", 16384);
        NS_TEST_EXPECT_MSG_EQ(fb[FcRctl::DATA_DESCRIPTOR], 3, "first burst needs no XFER_RDY");
        NS_TEST_EXPECT_MSG_EQ(fb[FcRctl::SOLICITED_DATA], 32, "same data");
        auto r = OneIo("Read", 0);
        NS_TEST_EXPECT_MSG_EQ(r[-1], 1, "read completes");
        NS_TEST_EXPECT_MSG_EQ(r[FcRctl::DATA_DESCRIPTOR], 0, "reads have no XFER_RDY");
        NS_TEST_EXPECT_MSG_EQ(r[FcRctl::SOLICITED_DATA], 32, "read data");
        NS_TEST_EXPECT_MSG_EQ(r[FcRctl::COMMAND_STATUS], 1, "one FCP_RSP");
    }
};

// ---------------------------------------------------------------------------------------------
class IncastConservationTest : public FcTestCase
{
  public:
    IncastConservationTest()
        : FcTestCase("Incast through one switch: lossless, frames and credits conserved")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::FcSwitch::PortBbCredit", UintegerValue(4));
        Config::SetDefault("ns3::FcpTarget::ServiceTime", StringValue("1us"));
        FcHelper helper;
        FcTopology t = helper.TwoSwitch(9);
        Ptr<FcpTarget> tgt = CreateObject<FcpTarget>();
        t.hosts.Get(0)->AddApplication(tgt);
        tgt->Setup(t.hostPorts[0]);
        std::vector<Ptr<FcpInitiator>> inis;
        for (uint32_t i = 1; i < 9; ++i)
        {
            Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
            t.hosts.Get(i)->AddApplication(ini);
            ini->Setup(t.hostPorts[i], t.hostPorts[0]->GetFcId(), 0);
            ini->SetStopTime(MilliSeconds(2));
            inis.push_back(ini);
        }
        Simulator::Run(); // runs until every exchange has drained
        uint64_t done = 0;
        for (auto& i : inis)
        {
            done += i->GetCompleted();
        }
        NS_TEST_EXPECT_MSG_GT(done, 40u,
                              "I/Os completed (about 1.6 MB in 2 ms at 8GFC, plus 32 draining)");
        ExpectLinksDrained(t);
        uint64_t minCredits = UINT64_MAX;
        for (auto& p : t.ports)
        {
            NS_TEST_EXPECT_MSG_EQ(p->GetCounters().bufferOverruns, 0u, "no overrun");
            NS_TEST_EXPECT_MSG_EQ(p->GetRxBuffersInUse(), 0u, "buffers freed");
            minCredits = std::min(minCredits, p->GetCounters().minCredits);
        }
        NS_TEST_EXPECT_MSG_EQ(minCredits, 0u, "the incast did exhaust credits somewhere");
        for (auto& sw : t.switches)
        {
            uint64_t in = 0;
            uint64_t out = 0;
            for (uint32_t p = 0; p < sw->GetNPorts(); ++p)
            {
                in += sw->GetPort(p)->GetCounters().framesRx;
                out += sw->GetPort(p)->GetCounters().framesTx;
            }
            NS_TEST_EXPECT_MSG_EQ(in, out, "a switch forwards every frame it receives");
        }
    }
};

// ---------------------------------------------------------------------------------------------
// Incast workload (FcMessageSender / FcMessageSink, Workload Incast of the "fc" fabric).

/// Payload ceiling of one line carrying 64 KB FCP WRITEs back to back: per message an FCP_CMND
/// frame (32 B IU) and 32 FCP_DATA frames of 2048 B, each frame its wire bytes (36 + data) plus
/// six idle words.
double
CeilingGbps(int speed)
{
    double perMessage = ((36 + 32 + 24) + 32 * (36 + 2048 + 24)) * SecondsPerByte(speed);
    return 65536 * 8 / perMessage / 1e9;
}

/// The "fc" fabric's incast: hosts h1..h`senders` on one switch (generator Star) write 64 KB
/// messages (the MessageWorkload defaults: back to back until stop_time, one outstanding) to
/// h0, every port at 8GFC, statistics from `warmup`. With `victim`, h1 also writes to an idle
/// extra host, the last one (workload "victim"): the two flows take turns on h1's N_Port.
lfsim::TestRun
Incast(uint32_t senders, bool victim, const std::string& stop, const std::string& warmup = "200us")
{
    Config::Reset();
    lfsim::TestRun run("fc", stop);
    run.Topology("Star", {{"Hosts", std::to_string(senders + 1 + (victim ? 1 : 0))}})
        .Workload("incast", "Incast",
                  {{"Hosts", "h1-h" + std::to_string(senders)}, {"Destinations", "h0"}})
        .Class("ns3::Report", "Warmup", warmup)
        .Class("ns3::FcNetDevice", "Speed", "8GFC");
    if (victim)
    {
        run.Workload("victim", "Incast",
                     {{"Hosts", "h1"}, {"Destinations", "h" + std::to_string(senders + 1)}});
    }
    return run;
}

/// The same incast on a leaf-spine: h0 on leaf0; h1..h`senders` and the victim's sender on
/// leaf1; the victim's idle receiver on leaf0; one spine, 32GFC uplinks.
lfsim::TestRun
LeafSpineIncast(uint32_t senders, const std::string& stop)
{
    const std::string victimSrc = "h" + std::to_string(senders + 1);
    const std::string victimDst = "h" + std::to_string(senders + 2);
    Config::Reset();
    lfsim::TestRun run("fc", stop);
    run.Topology("LeafSpine", {{"Leaves", "2"},
                               {"Spines", "1"},
                               {"HostLeaves", "0,1*" + std::to_string(senders + 1) + ",0"},
                               {"UplinkSpeed", "32GFC"}})
        .Workload("incast", "Incast",
                  {{"Hosts", "h1-h" + std::to_string(senders)}, {"Destinations", "h0"}})
        .Workload("victim", "Incast", {{"Hosts", victimSrc}, {"Destinations", victimDst}})
        .Class("ns3::Report", "Warmup", "200us")
        .Class("ns3::FcNetDevice", "Speed", "8GFC");
    return run;
}

class LeafSpineRoutingTest : public FcTestCase
{
  public:
    LeafSpineRoutingTest()
        : FcTestCase("LeafSpine: every frame reaches its host, both spines carry half, lossless")
    {
    }

    void
    DoRun() override
    {
        // 3 leaves, 2 spines; receiver and victim receiver on leaf 0, 8 senders on leaves 1-2,
        // the victim sender on leaf 1. Every flow sends 4 messages of 64 KB, then drains.
        const uint32_t senders = 8;
        const uint32_t k = 4;
        const uint32_t size = 65536;
        // Host 0 on leaf 0, hosts 1.. round-robin over leaves 1 and 2.
        std::vector<uint32_t> leafOf{0};
        for (uint32_t i = 1; i <= senders; ++i)
        {
            leafOf.push_back(1 + (i - 1) % 2);
        }
        leafOf.push_back(1);
        leafOf.push_back(0);
        FcHelper helper;
        FcTopology t = helper.LeafSpine(leafOf, 3, 2);
        NS_TEST_ASSERT_MSG_EQ(t.switches.size(), 5u, "3 leaves + 2 spines");
        NS_TEST_ASSERT_MSG_EQ(t.channels.size(), senders + 3 + 6, "host links + 6 ISLs");
        Ptr<FcMessageSink> rx = CreateObject<FcMessageSink>();
        t.hosts.Get(0)->AddApplication(rx);
        rx->Setup(t.hostPorts[0]);
        Ptr<FcMessageSink> vrx = CreateObject<FcMessageSink>();
        t.hosts.Get(senders + 2)->AddApplication(vrx);
        vrx->Setup(t.hostPorts[senders + 2]);
        std::vector<Ptr<FcMessageSender>> apps;
        for (uint32_t i = 1; i <= senders + 1; ++i)
        {
            Ptr<FcMessageSender> app = CreateObject<FcMessageSender>();
            t.hosts.Get(i)->AddApplication(app);
            app->Setup(t.hostPorts[i]);
            app->AddFlow(i <= senders ? rx : vrx, size, k);
            apps.push_back(app);
        }
        Simulator::Run(); // runs until every message has drained

        const uint64_t framesPerFlow = k * (1 + size / 2048); // FCP_CMND + FCP_DATA
        uint64_t sent = 0;
        for (uint32_t i = 0; i < apps.size(); ++i)
        {
            const auto& st = apps[i]->GetFlowStats(0);
            NS_TEST_EXPECT_MSG_EQ(st.completed, k, "flow " << i << ": every message completed");
            NS_TEST_EXPECT_MSG_EQ(st.deliveredBytes, uint64_t(k) * size, "flow " << i);
            sent += t.hostPorts[i + 1]->GetCounters().framesTx;
        }
        uint64_t received = t.hostPorts[0]->GetCounters().framesRx
                            + t.hostPorts[senders + 2]->GetCounters().framesRx;
        NS_TEST_EXPECT_MSG_EQ(sent, framesPerFlow * apps.size(), "frames sent");
        NS_TEST_EXPECT_MSG_EQ(received, sent, "frames sent by senders = frames at receivers");
        // And one FCP_RSP back per message.
        uint64_t rsp = t.hostPorts[0]->GetCounters().framesTx
                       + t.hostPorts[senders + 2]->GetCounters().framesTx;
        uint64_t rspIn = 0;
        for (uint32_t i = 1; i <= senders + 1; ++i)
        {
            rspIn += t.hostPorts[i]->GetCounters().framesRx;
        }
        NS_TEST_EXPECT_MSG_EQ(rsp, uint64_t(k) * apps.size(), "one FCP_RSP per message");
        NS_TEST_EXPECT_MSG_EQ(rspIn, rsp, "every FCP_RSP delivered");
        NS_TEST_EXPECT_MSG_EQ(rx->GetUnknownFrames() + vrx->GetUnknownFrames(), 0u,
                              "no frame reached the wrong host");
        ExpectLinksDrained(t);
        for (auto& p : t.ports)
        {
            NS_TEST_EXPECT_MSG_EQ(p->GetCounters().bufferOverruns, 0u, "no overrun");
        }
        uint64_t viaSpine[2] = {0, 0};
        for (uint32_t s = 0; s < t.switches.size(); ++s)
        {
            uint64_t in = 0;
            uint64_t out = 0;
            for (uint32_t p = 0; p < t.switches[s]->GetNPorts(); ++p)
            {
                in += t.switches[s]->GetPort(p)->GetCounters().framesRx;
                out += t.switches[s]->GetPort(p)->GetCounters().framesTx;
            }
            NS_TEST_EXPECT_MSG_EQ(t.switches[s]->GetUnroutable(), 0u, "every D_ID routed");
            NS_TEST_EXPECT_MSG_EQ(in, out, t.switchLabels[s] << " forwards every frame");
            if (s >= 3)
            {
                viaSpine[s - 3] = out;
            }
        }
        // Every frame crosses exactly one spine (senders are never on leaf 0), and the
        // equal-cost choice by S_ID/D_ID splits the eight senders' N_Ports evenly.
        NS_TEST_EXPECT_MSG_EQ(viaSpine[0] + viaSpine[1], sent + rsp, "one spine per frame");
        NS_TEST_EXPECT_MSG_GT(viaSpine[0], (sent + rsp) * 2 / 5, "spine 0 carries its share");
        NS_TEST_EXPECT_MSG_GT(viaSpine[1], (sent + rsp) * 2 / 5, "spine 1 carries its share");
    }
};

class IncastLineRateTest : public FcTestCase
{
  public:
    IncastLineRateTest()
        : FcTestCase("Incast on one switch: the receiver's line is full, shared fairly, and the "
                     "backlog is bounded by the credits")
    {
    }

    void
    DoRun() override
    {
        // 4 senders at 8GFC into one receiver: 4x oversubscribed, nothing dropped. Two messages
        // outstanding per flow keep every sender backlogged through its FCP_RSP round trips.
        lfsim::RunResult r = Incast(4, false, "2ms")
                                 .Set("incast", "QueueDepth", "2")
                                 .Class("ns3::FcSwitch", "PortBbCredit", "16")
                                 .Run();
        double c = CeilingGbps(3);
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r, "total_goodput_Gbps") / c, 1.0, 0.01,
                                  "the receiver's line carries its payload ceiling");
        auto flows = Metrics(r, "per_flow_goodput_Gbps");
        NS_TEST_ASSERT_MSG_EQ(flows.size(), 4u, "one rate per sender");
        for (double f : flows)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(f / (c / 4), 1.0, 0.03, "a quarter each");
        }
        NS_TEST_EXPECT_MSG_GT(Metric(r, "jain_fairness"), 0.99, "fair");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "lossless");
        NS_TEST_EXPECT_MSG_GT(Metric(r, "messages_completed"), 0.0, "messages complete");
        // A frame holds its input buffer until it has left: the output towards the receiver can
        // hold at most the 4 inputs' 16 buffers of 2084-byte frames, and at steady state it
        // holds nearly all of them.
        double bound = 4 * 16 * 2084 / 1024.0;
        NS_TEST_EXPECT_MSG_LT_OR_EQ(Metric(r, "peak_queue_KiB"), bound, "backlog <= credits");
        NS_TEST_EXPECT_MSG_GT(Metric(r, "mean_queue_KiB"), 0.8 * bound, "input buffers full");
        NS_TEST_EXPECT_MSG_EQ(r.labels.at("ports").size(), Metrics(r, "paused_time_us").size(),
                              "one paused time per port");
        // The senders are held back by credit (the FC form of "paused") most of the run.
        auto paused = Metrics(r, "paused_time_us");
        NS_TEST_EXPECT_MSG_GT(paused[1], 0.5 * 2000, "sender 1 credit-stalled most of 2 ms");
    }
};

class IncastVictimTest : public FcTestCase
{
  public:
    IncastVictimTest()
        : FcTestCase("Victim flow: head-of-line blocked behind the incast, full rate without it")
    {
    }

    void
    DoRun() override
    {
        double c = CeilingGbps(3);
        // Two messages outstanding per flow: a flow alone keeps its port busy.
        // One switch: the victim shares host 1's N_Port with host 1's incast flow; the two take
        // turns frame by frame. Without congestion (1 sender) they split the port.
        auto alone = Incast(1, true, "2ms").SetEveryWorkload("QueueDepth", "2").Run();
        double v1 = Metric(alone, "victim_goodput_Gbps");
        double h1 = Metrics(alone, "per_flow_goodput_Gbps")[0];
        NS_TEST_EXPECT_MSG_EQ_TOL((v1 + h1) / c, 1.0, 0.01, "host 1's port is full");
        NS_TEST_EXPECT_MSG_GT(v1, 0.45 * c, "the victim gets its half of the port");
        // 4 senders: host 1's port still has 3/4 of its line left and the victim's receiver is
        // idle, but the victim's frames wait behind host 1's credit-stalled incast frames.
        auto inc = Incast(4, true, "2ms").SetEveryWorkload("QueueDepth", "2").Run();
        double v4 = Metric(inc, "victim_goodput_Gbps");
        double h1of4 = Metrics(inc, "per_flow_goodput_Gbps")[0];
        NS_TEST_EXPECT_MSG_LT_OR_EQ(v4 + h1of4, 1.01 * c, "bounded by host 1's port");
        NS_TEST_EXPECT_MSG_LT(v4, 0.5 * (c - h1of4), "far below what host 1's port has left");
        NS_TEST_EXPECT_MSG_LT(v4, 0.5 * c, "far below its idle receiver's line");
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(inc, "total_goodput_Gbps") / c, 1.0, 0.01,
                                  "the incast still fills the receiver");

        // LeafSpine with 32GFC uplinks: the victim has its own 8GFC N_Port on leaf 1 and its
        // own idle receiver on leaf 0; the uplinks have room for it and one incast sender.
        auto r1 = LeafSpineIncast(1, "2ms").SetEveryWorkload("QueueDepth", "2").Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r1, "victim_goodput_Gbps") / c, 1.0, 0.01,
                                  "no incast: the victim runs at line rate");
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r1, "total_goodput_Gbps") / c, 1.0, 0.01,
                                  "and so does the one sender");
        // 8 senders: leaf 0's input from the spine fills with frames waiting for the receiver,
        // and the victim's frames queue behind them although their output is idle.
        auto r8 = LeafSpineIncast(8, "2ms").SetEveryWorkload("QueueDepth", "2").Run();
        NS_TEST_EXPECT_MSG_LT(Metric(r8, "victim_goodput_Gbps"), 0.25 * c,
                              "credit back-pressure spreads to the victim");
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r8, "total_goodput_Gbps") / c, 1.0, 0.01,
                                  "the receiver's line stays full");
        NS_TEST_EXPECT_MSG_EQ(Metric(r8, "drops"), 0.0, "lossless");
    }
};

class IncastCompletionTest : public FcTestCase
{
  public:
    IncastCompletionTest()
        : FcTestCase("FCP WRITE messages: FCT in closed form, one FCT per message at queue depth "
                     "1, N x k messages finish at the bottleneck's pace")
    {
    }

    void
    DoRun() override
    {
        const double spb = SecondsPerByte(3);
        const double slot = (2084 + 24) * spb; // FCP_DATA frame + six idle words
        const double cmnd = (68 + 24) * spb;   // FCP_CMND frame + six idle words
        const double tp = 10 * 5e-9;           // 10 m of fibre
        const double cut = 28 * spb + 700e-9;  // SOF + header in, then forwarding latency
        // A 64 KB WRITE alone through one cut-through switch: FCP_CMND and 31 data frame slots,
        // the last data frame to the receiver; the receiver's R_RDY for it (one word) and then
        // FCP_RSP (60 wire bytes) back through the switch.
        const double lastIn = cmnd + 31 * slot + tp + cut + 2084 * spb + tp;
        const double fct = lastIn + 4 * spb + tp + cut + 60 * spb + tp;
        auto one = [](const std::string& stop, const std::string& warmup)
        {
            return Incast(1, false, stop, warmup)
                .Class("ns3::FcSwitch", "ForwardingLatency", "700ns")
                .Class("ns3::FcChannel", "Length", "10");
        };
        auto r = one("1ms", "0s").Set("incast", "Messages", "1").Run();
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "messages_completed"), 1.0, "one message");
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r, "fct_mean_us"), fct * 1e6, 1e-4, "FCT (ps rounding)");
        NS_TEST_EXPECT_MSG_EQ_TOL(r.simTimeS, fct, 1e-10, "the run ends at its FCP_RSP");

        // Repeated at queue depth 1: each message is posted when the previous one's FCP_RSP
        // arrives; the sender's line first returns the R_RDY for that FCP_RSP (one word), then
        // starts the FCP_CMND. Every FCT is the same and the flow's goodput is 64 KB per FCT.
        const double steady = fct + 4 * spb;
        auto rep = one("2ms", "200us").Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(rep, "fct_p50_us"), steady * 1e6, 1e-4, "steady FCT");
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(rep, "fct_p99_us"), steady * 1e6, 1e-4, "every FCT");
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(rep, "total_goodput_Gbps") / (65536 * 8 / steady / 1e9),
                                  1.0, 0.01, "64 KB per FCT");

        // 4 senders x 20 messages: the run ends when the last has completed, and the lossless
        // fabric kept the receiver's line busy all along.
        auto all = Incast(4, false, "100ms", "0s").Set("incast", "Messages", "20").Run();
        NS_TEST_EXPECT_MSG_EQ(Metric(all, "messages_completed"), 80.0, "every message");
        double busy = 80 * (cmnd + 32 * slot);
        NS_TEST_EXPECT_MSG_GT(all.simTimeS, busy, "no faster than the receiver's line");
        NS_TEST_EXPECT_MSG_EQ_TOL(all.simTimeS / busy, 1.0, 0.01, "work-conserving");
    }
};

// ---------------------------------------------------------------------------------------------
// Credit loops: a ring of switches whose routes form a cycle of buffer dependencies.

/// A ring of n switches as FcHelper::Ring wires it: port 1 to s+1, port 2 to s-1 (port 0: host).
lfsim::SwitchGraph
RingGraph(uint32_t n)
{
    lfsim::SwitchGraph g(n);
    for (uint32_t s = 0; s < n; ++s)
    {
        g[s].push_back({(s + 1) % n, 1});
        g[s].push_back({(s + n - 1) % n, 2});
    }
    return g;
}

/// Leaves 0..L-1 and spines L..L+S-1; leaf ports 1..S face the spines, spine port l leaf l.
lfsim::SwitchGraph
LeafSpineGraph(uint32_t leaves, uint32_t spines)
{
    lfsim::SwitchGraph g(leaves + spines);
    for (uint32_t l = 0; l < leaves; ++l)
    {
        for (uint32_t k = 0; k < spines; ++k)
        {
            g[l].push_back({leaves + k, 1 + k});
            g[leaves + k].push_back({l, l});
        }
    }
    return g;
}

/// Every route the tables allow from every switch to every home, as lists of switches.
std::vector<std::vector<uint32_t>>
AllRoutes(const lfsim::SwitchGraph& g,
          const std::function<std::vector<std::vector<uint32_t>>(uint32_t)>& tables)
{
    std::vector<std::vector<uint32_t>> routes;
    const uint32_t n = g.size();
    for (uint32_t home = 0; home < n; ++home)
    {
        const auto ports = tables(home);
        std::function<void(std::vector<uint32_t>)> walk = [&](std::vector<uint32_t> path)
        {
            const uint32_t s = path.back();
            if (s == home || path.size() > n)
            {
                routes.push_back(path); // arrived, or looping (the caller checks which)
                return;
            }
            for (uint32_t port : ports[s])
            {
                for (auto [nb, p] : g[s])
                {
                    if (p == port)
                    {
                        auto next = path;
                        next.push_back(nb);
                        walk(next);
                    }
                }
            }
            if (ports[s].empty())
            {
                routes.push_back(path); // dead end
            }
        };
        for (uint32_t src = 0; src < n; ++src)
        {
            walk({src});
        }
    }
    return routes;
}

/// Whether the channel dependency graph of `routes` (directed link -> next directed link of
/// some route) has a cycle: the condition for a credit loop.
bool
DependenciesCyclic(const std::vector<std::vector<uint32_t>>& routes)
{
    std::map<std::pair<uint32_t, uint32_t>, std::set<std::pair<uint32_t, uint32_t>>> dep;
    for (const auto& r : routes)
    {
        for (size_t i = 0; i + 2 < r.size(); ++i)
        {
            dep[{r[i], r[i + 1]}].insert({r[i + 1], r[i + 2]});
        }
    }
    std::map<std::pair<uint32_t, uint32_t>, int> state; // 1 on the DFS stack, 2 done
    std::function<bool(std::pair<uint32_t, uint32_t>)> cyclic = [&](auto v)
    {
        state[v] = 1;
        for (const auto& w : dep[v])
        {
            if (state[w] == 1 || (state[w] == 0 && cyclic(w)))
            {
                return true;
            }
        }
        state[v] = 2;
        return false;
    };
    for (const auto& [v, ws] : dep)
    {
        if (state[v] == 0 && cyclic(v))
        {
            return true;
        }
    }
    return false;
}

class RingRoutingTest : public FcTestCase
{
  public:
    RingRoutingTest()
        : FcTestCase("Routing on a ring and a leaf-spine: clockwise and up-down tables; up-down "
                     "routes never turn from down to up and their buffer dependencies are "
                     "acyclic, clockwise ones are cyclic")
    {
    }

    void
    DoRun() override
    {
        const lfsim::SwitchGraph ring = RingGraph(4);
        for (uint32_t home = 0; home < 4; ++home)
        {
            auto cw = lfsim::ClockwisePorts(ring, home);
            for (uint32_t s = 0; s < 4; ++s)
            {
                std::vector<uint32_t> want;
                if (s != home)
                {
                    want = {1};
                }
                NS_TEST_EXPECT_MSG_EQ((cw[s] == want), true,
                                      "clockwise: switch " << s << " to " << home);
            }
        }
        // Up*/down* from root 0: BFS levels 0 | 1, 3 | 2, so the up hops are 1->0, 3->0, 2->1
        // and 2->3. Worked out by hand: {switch: ports} per home (port 1 clockwise, 2 back).
        const std::map<uint32_t, std::map<uint32_t, std::set<uint32_t>>> want
            = {{0, {{1, {2}}, {2, {1, 2}}, {3, {1}}}}, // 1 and 3 up to 0; 2 up either way
               {1, {{0, {1}}, {2, {2}}, {3, {1}}}},    // 3 -> 2 -> 1 would turn down then up
               {2, {{0, {1, 2}}, {1, {1}}, {3, {2}}}}, // all down
               {3, {{0, {2}}, {1, {2}}, {2, {1}}}}};   // 1 -> 2 -> 3 would turn down then up
        for (uint32_t home = 0; home < 4; ++home)
        {
            auto ud = lfsim::UpDownPorts(ring, home, 0);
            NS_TEST_EXPECT_MSG_EQ(ud[home].empty(), true, "nothing to route at home");
            for (const auto& [s, ports] : want.at(home))
            {
                std::set<uint32_t> got(ud[s].begin(), ud[s].end());
                NS_TEST_EXPECT_MSG_EQ((got == ports), true,
                                      "up*/down*: switch " << s << " to " << home);
            }
        }
        // The FC helper installs these tables: clockwise, every switch sends every remote D_ID
        // out of port 1 (its clockwise E_Port).
        {
            FcHelper helper;
            helper.SetRouting(lfsim::CLOCKWISE);
            FcTopology t = helper.Ring(4);
            for (uint32_t s = 0; s < 4; ++s)
            {
                for (uint32_t h = 0; h < 4; ++h)
                {
                    int32_t port = t.switches[s]->Lookup(t.hostPorts[(h + 1) % 4]->GetFcId(),
                                                         t.hostPorts[h]->GetFcId());
                    NS_TEST_EXPECT_MSG_EQ(port, (s == h ? 0 : 1), "ring" << s << " to h" << h);
                }
            }
            Simulator::Destroy();
        }

        // Properties, on rings of 3..7 and leaf-spines: every up*/down* route arrives, is never
        // longer than n - 1 hops, and has no down hop followed by an up hop (levels from a BFS
        // here, not the routing code's); the dependencies are acyclic. Clockwise on a ring:
        // cyclic, which is what the credit loop needs.
        std::vector<std::pair<std::string, lfsim::SwitchGraph>> graphs;
        for (uint32_t n = 3; n <= 7; ++n)
        {
            graphs.push_back({"ring" + std::to_string(n), RingGraph(n)});
        }
        graphs.push_back({"leafspine 3x2", LeafSpineGraph(3, 2)});
        graphs.push_back({"leafspine 4x3", LeafSpineGraph(4, 3)});
        for (const auto& [name, g] : graphs)
        {
            const uint32_t n = g.size();
            std::vector<uint32_t> level(n, UINT32_MAX);
            std::vector<uint32_t> bfs{0};
            level[0] = 0;
            for (size_t i = 0; i < bfs.size(); ++i)
            {
                for (auto [nb, p] : g[bfs[i]])
                {
                    if (level[nb] == UINT32_MAX)
                    {
                        level[nb] = level[bfs[i]] + 1;
                        bfs.push_back(nb);
                    }
                }
            }
            auto up = [&](uint32_t a, uint32_t b)
            { return std::make_pair(level[b], b) < std::make_pair(level[a], a); };
            auto routes = AllRoutes(g, [&](uint32_t home) { return lfsim::UpDownPorts(g, home); });
            NS_TEST_EXPECT_MSG_GT_OR_EQ(routes.size(), size_t(n * n), name << ": routes");
            for (const auto& r : routes)
            {
                const uint32_t home = r.back();
                NS_TEST_EXPECT_MSG_EQ((r.size() <= n), true, name << ": route longer than n-1");
                bool arrived = true;
                for (size_t i = 0; i + 1 < r.size(); ++i)
                {
                    arrived = arrived && r[i] != home;
                }
                NS_TEST_EXPECT_MSG_EQ(arrived, true, name << ": passes its home");
                bool wentDown = false;
                for (size_t i = 0; i + 1 < r.size(); ++i)
                {
                    const bool isUp = up(r[i], r[i + 1]);
                    NS_TEST_EXPECT_MSG_EQ((wentDown && isUp), false,
                                          name << ": down then up from " << r.front() << " to "
                                               << home);
                    wentDown = wentDown || !isUp;
                }
            }
            NS_TEST_EXPECT_MSG_EQ(DependenciesCyclic(routes), false, name << ": up*/down*");
            if (name.rfind("ring", 0) == 0)
            {
                auto cw
                    = AllRoutes(g, [&](uint32_t home) { return lfsim::ClockwisePorts(g, home); });
                NS_TEST_EXPECT_MSG_EQ(DependenciesCyclic(cw), true, name << ": clockwise");
            }
        }
    }
};

/// The "fc" fabric's ring: 4 switches at 32GFC, PortBbCredit 16, host i writing 64 KB messages
/// to host i + 2 (two switches on) at QueueDepth 4, routed by `routing`, every sender paced at
/// `load` (workload "ring").
lfsim::TestRun
Ring(const std::string& routing, const std::string& load, const std::string& stop)
{
    Config::Reset();
    lfsim::TestRun run("fc", stop);
    run.Topology("Ring", {{"Switches", "4"}, {"Routing", routing}})
        .Workload("ring", "Permutation",
                  {{"Shift", "2"}, {"MessageSize", "65536"}, {"QueueDepth", "4"}, {"Load", load}})
        .Class("ns3::FcNetDevice", "Speed", "32GFC")
        .Class("ns3::FcSwitch", "PortBbCredit", "16");
    return run;
}

/// Wire bytes of one 64 KB message (FCP_CMND + 32 FCP_DATA frames of 2048 B).
const double kMessageWire = (36 + 32) + 32 * (36 + 2048);

/// The load above which each clockwise ISL is oversubscribed: it carries two flows' messages
/// (one on its first hop, one on its second) and two flows' FCP_RSPs (60 B), each frame plus
/// six idle words, in the time each flow's pacing spends on one message's wire bytes.
const double kIslSaturation = kMessageWire / (2 * (kMessageWire + 33 * 24) + 2 * (60 + 24));

class CreditLoopTest : public FcTestCase
{
  public:
    CreditLoopTest()
        : FcTestCase("Ring, clockwise routing, load above ISL saturation: a credit loop of the "
                     "four clockwise E_Ports, detected PersistenceTime after it formed, credits "
                     "never return")
    {
    }

    void
    DoRun() override
    {
        lfsim::TestRun loop = Ring("Clockwise", "1", "1ms");
        loop.config.record = {"credits", "blocked"};
        auto r = loop.Run();
        NS_TEST_ASSERT_MSG_EQ(std::get<bool>(r.metrics.at("deadlock")), true, "deadlock");
        const auto cycle = std::get<std::vector<std::string>>(r.metrics.at("deadlock_cycle"));
        const std::vector<std::string> clockwise = {"ring0/p1", "ring1/p1", "ring2/p1", "ring3/p1"};
        NS_TEST_ASSERT_MSG_EQ(cycle.size(), 4u, "four queues in the cycle");
        // In wait-for order: each clockwise port waits on the next switch's.
        auto first = std::find(clockwise.begin(), clockwise.end(), cycle[0]);
        NS_TEST_ASSERT_MSG_EQ((first != clockwise.end()), true, cycle[0] << " is clockwise");
        for (uint32_t k = 0; k < 4; ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(cycle[k], clockwise[(first - clockwise.begin() + k) % 4],
                                  "member " << k);
        }
        const double formed = Metric(r, "deadlock_time_us");
        const double detected = Metric(r, "deadlock_detected_us");
        NS_TEST_EXPECT_MSG_GT(formed, 0.0, "formed after the start");
        NS_TEST_EXPECT_MSG_GT_OR_EQ(detected - formed, 200.0, "persisted PersistenceTime");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(detected - formed, 200.0 + 10.0,
                                    "found within one CheckInterval after that");
        NS_TEST_EXPECT_MSG_EQ(r.metrics.count("deadlock_cleared_us"), 0u, "never clears");
        NS_TEST_EXPECT_MSG_EQ(std::get<bool>(r.metrics.at("deadlock_traffic_moving")), false,
                              "no frame leaves any port once the loop has formed");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "a deadlock, not a loss");
        // Credits of the cycle's ports: 0 at the end, and unchanged since the loop formed.
        const auto& credits = r.series.at("credits");
        const auto& labels = r.labels.at("credits");
        for (const auto& port : clockwise)
        {
            const double id = std::find(labels.begin(), labels.end(), port) - labels.begin();
            double last = -1;
            double lastChange = 0;
            for (size_t i = 0; i < credits.Rows(); ++i)
            {
                if (credits.Column("id")[i] == id)
                {
                    last = credits.Column("credits")[i];
                    lastChange = credits.Column("time_s")[i];
                }
            }
            NS_TEST_EXPECT_MSG_EQ(last, 0.0, port << ": no credit");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(lastChange * 1e6, formed + 1e-6,
                                        port << ": no credit came back after the loop formed");
            // The pause map: the last row of the port is its blocked spell, from the formation
            // at the latest (the spell starts when its stall began).
            const auto& blocked = r.series.at("blocked");
            const auto& bl = r.labels.at("blocked");
            const double bid = std::find(bl.begin(), bl.end(), port) - bl.begin();
            double state = -1;
            double since = 0;
            for (size_t i = 0; i < blocked.Rows(); ++i)
            {
                if (blocked.Column("id")[i] == bid)
                {
                    state = blocked.Column("blocked")[i];
                    since = blocked.Column("time_s")[i];
                }
            }
            NS_TEST_EXPECT_MSG_EQ(state, 1.0, port << ": blocked at the end");
            NS_TEST_EXPECT_MSG_LT_OR_EQ(since * 1e6, formed + 1e-6, port << ": since formation");
        }

        // stop_on_deadlock ends the run at the detection, with the same cycle.
        lfsim::TestRun stopping = Ring("Clockwise", "1", "1ms");
        stopping.config.stopOnDeadlock = true;
        auto s = stopping.Run();
        NS_TEST_EXPECT_MSG_EQ_TOL(s.simTimeS * 1e6, detected, 1e-6, "ends at detection");
        NS_TEST_EXPECT_MSG_EQ(
            (std::get<std::vector<std::string>>(s.metrics.at("deadlock_cycle")) == cycle), true,
            "same cycle");

        // Just above the ISLs' saturation the buffers fill more slowly, but the loop forms.
        std::ostringstream above;
        above << 1.1 * kIslSaturation;
        lfsim::TestRun slower = Ring("Clockwise", above.str(), "2ms");
        slower.config.stopOnDeadlock = true;
        auto a = slower.Run();
        NS_TEST_EXPECT_MSG_EQ(std::get<bool>(a.metrics.at("deadlock")), true,
                              "deadlock at 1.1 x saturation");
        NS_TEST_EXPECT_MSG_GT(Metric(a, "deadlock_time_us"), formed, "forms later than at load 1");
    }
};

class NoCreditLoopTest : public FcTestCase
{
  public:
    NoCreditLoopTest()
        : FcTestCase("Ring without a credit loop: up-down routing at full load, or clockwise "
                     "below ISL saturation; every flow completes its messages")
    {
    }

    void
    ExpectCompleted(const lfsim::RunResult& r, const std::string& what, uint32_t messages)
    {
        NS_TEST_EXPECT_MSG_EQ(std::get<bool>(r.metrics.at("deadlock")), false, what);
        const auto& done = r.tables.at("flows").Column("messages");
        NS_TEST_EXPECT_MSG_EQ(done.size(), 4u, what << ": four flows");
        for (size_t k = 0; k < done.size(); ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(done[k], double(messages), what << ": flow " << k);
        }
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, what << ": lossless");
    }

    void
    DoRun() override
    {
        const uint32_t k = 20;
        auto u = Ring("UpDown", "1", "20ms").Set("ring", "Messages", std::to_string(k)).Run();
        ExpectCompleted(u, "up*/down* at load 1", k);
        NS_TEST_EXPECT_MSG_LT(u.simTimeS, 0.02, "ended by completion, not stop_time");
        // Ports did run out of credit, so the detector looked at the graph and found no cycle.
        NS_TEST_EXPECT_MSG_GT(Metric(u, "deadlock_checks"), 0.0, "credit stalls were examined");

        // Clockwise at 0.9 x saturation: the ISLs are busy but keep up. Paced, each flow's
        // last frame leaves no earlier than its wire bytes at the load allow.
        const double load = 0.9 * kIslSaturation;
        std::ostringstream l;
        l << load;
        auto c
            = Ring("Clockwise", l.str(), "20ms").Set("ring", "Messages", std::to_string(k)).Run();
        ExpectCompleted(c, "clockwise below saturation", k);
        const double rate = 3400e6; // 32GFC data bytes per second (FC-PI-6, FEC paid)
        const double paced = (k * kMessageWire - 2084) / (load * rate);
        NS_TEST_EXPECT_MSG_GT(c.simTimeS, paced, "no faster than the load");
        NS_TEST_EXPECT_MSG_LT(c.simTimeS, 1.02 * paced, "and at the load");
    }
};

class DetectorIdleTest : public FcTestCase
{
  public:
    DetectorIdleTest()
        : FcTestCase("A run in which no port ever waits for credit runs no deadlock check")
    {
    }

    void
    DoRun() override
    {
        auto r = Ring("Clockwise", "0.2", "5ms").Set("ring", "Messages", "5").Run();
        for (double us : Metrics(r, "paused_time_us"))
        {
            NS_TEST_ASSERT_MSG_EQ(us, 0.0, "no port waited for credit");
        }
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "messages_completed"), 20.0, "the flows ran");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "deadlock_checks"), 0.0, "no check");
        NS_TEST_EXPECT_MSG_EQ(std::get<bool>(r.metrics.at("deadlock")), false, "no deadlock");
    }
};

class LoadAndRingInputTest : public FcTestCase
{
  public:
    LoadAndRingInputTest()
        : FcTestCase("Load paces incast senders to its fraction of the line; keys that do not "
                     "fit the topology or the pattern give one-line errors naming the key")
    {
    }

    void
    DoRun() override
    {
        // Two senders at a quarter of 8GFC each into one receiver: half its line, no queue, so
        // the delivered payload is the paced wire rate x payload / wire bytes of a message.
        auto r = Incast(2, false, "2ms")
                     .Set("incast", "QueueDepth", "2")
                     .Set("incast", "Load", "0.25")
                     .Run();
        const double want = 2 * 0.25 * 850e6 * 65536 / kMessageWire * 8 / 1e9;
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r, "total_goodput_Gbps") / want, 1.0, 0.01,
                                  "paced at the load");
        for (double us : Metrics(r, "paused_time_us"))
        {
            NS_TEST_EXPECT_MSG_EQ(us, 0.0, "no port waited for credit");
        }

        // Keys that do not fit the topology or the pattern.
        auto star = [](const std::string& hosts)
        {
            lfsim::TestRun run("fc", "1ms");
            run.Topology("Star", {{"Hosts", hosts}});
            return run;
        };
        lfsim::TestRun clockwise = star("5");
        clockwise.Set("topology", "Routing", "Clockwise")
            .Workload("incast", "Incast", {{"Destinations", "h0"}});
        lfsim::TestRun fullCircle = Ring("ShortestPath", "1", "1ms").Set("ring", "Shift", "4");
        lfsim::TestRun pacedStream = star("2");
        pacedStream.Workload("stream", "FcStream", {{"Destinations", "h0"}, {"Load", "0.5"}});
        lfsim::TestRun twoTargets = star("4");
        twoTargets.Workload("fcp", "Fcp", {{"Hosts", "h1"}, {"Destinations", "h2,h3"}});
        const std::vector<std::pair<lfsim::TestRun, std::string>> bad = {
            {clockwise, "topology.Routing: Clockwise needs a ring (switch s linked to s+1 mod n); "
                        "accepted: ShortestPath or UpDown, or generator Ring"},
            {fullCircle, "workload.ring.Shift: host 0 would send to itself; accepted: a shift "
                         "that moves every host"},
            {pacedStream, "workload.stream.Load: got '0.5'; accepted: 1 with pattern FcStream "
                          "(its applications send as fast as BB_Credit allows, FCP or raw "
                          "frames, one N_Port per host)"},
            {twoTargets, "workload.fcp.Destinations: selects 2 hosts; accepted: the one target "
                         "host, e.g. h0"}};
        for (const auto& [run, message] : bad)
        {
            Config::Reset();
            std::string got;
            try
            {
                run.Run();
            }
            catch (const std::invalid_argument& e)
            {
                got = e.what();
            }
            NS_TEST_EXPECT_MSG_EQ(got, message, "one line naming the key");
        }
    }
};

class FcBbCreditTestSuite : public TestSuite
{
  public:
    FcBbCreditTestSuite()
        : TestSuite("fc-bbcredit", UNIT)
    {
        AddTestCase(new LineRateTest, TestCase::QUICK);
        AddTestCase(new HeaderTest, TestCase::QUICK);
        AddTestCase(new SingleFrameTimingTest, TestCase::QUICK);
        AddTestCase(new LineDelayAfterAttachTest, TestCase::QUICK);
        AddTestCase(new CreditInvariantTest, TestCase::QUICK);
        AddTestCase(new SwitchLatencyTest, TestCase::QUICK);
        AddTestCase(new FcpSequenceTest, TestCase::QUICK);
        AddTestCase(new IncastConservationTest, TestCase::QUICK);
        AddTestCase(new LeafSpineRoutingTest, TestCase::QUICK);
        AddTestCase(new IncastLineRateTest, TestCase::QUICK);
        AddTestCase(new IncastVictimTest, TestCase::QUICK);
        AddTestCase(new IncastCompletionTest, TestCase::QUICK);
        AddTestCase(new RecoveryTest, TestCase::QUICK);
        AddTestCase(new DistanceLawTest, TestCase::QUICK);
        AddTestCase(new CreditRuleOfThumbTest, TestCase::QUICK);
        AddTestCase(new RingRoutingTest, TestCase::QUICK);
        AddTestCase(new CreditLoopTest, TestCase::QUICK);
        AddTestCase(new NoCreditLoopTest, TestCase::QUICK);
        AddTestCase(new DetectorIdleTest, TestCase::QUICK);
        AddTestCase(new LoadAndRingInputTest, TestCase::QUICK);
    }
};

static FcBbCreditTestSuite g_fcBbCreditTestSuite;

} // namespace
