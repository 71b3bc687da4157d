/*
 * FCP exchange abort (FC-FS-4 ABTS, BA_ACC, BA_RJT): the frames' fields and sizes, their exact
 * times on the wire, both ends letting the exchange go, and the originator's ABTS timeout.
 * Times are computed here from the FC-PI baud and 8b/10b code, the frame layout (SOF 4, header
 * 24, payload, CRC 4, EOF 4 bytes), the fibre length and the switch's latency.
 */
#include "fc-channel.h"
#include "fc-frame-header.h"
#include "fc-helper.h"
#include "fc-speed.h"
#include "fcp.h"
#include "lfsim-test.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <vector>

using namespace ns3;

namespace
{

/// Seconds per line byte at 8GFC: 8.5 GBd, 10 line bits per byte.
constexpr double SPB = 10.0 / 8.5e9;
constexpr double TP = 100 * 5e-9; ///< 100 m of fibre at 5 ns/m
constexpr double LATENCY = 500e-9;
constexpr double FRAME_OVERHEAD = 4 + 24 + 4 + 4; ///< SOF, header, CRC, EOF

/// A frame as a port saw its SOF: when, its header and its data field.
struct Seen
{
    Time at;
    FcFrameHeader h;
    std::vector<uint8_t> payload;
};

void
Record(std::vector<Seen>* v, Ptr<const Packet> p)
{
    Seen s;
    s.at = Simulator::Now();
    p->PeekHeader(s.h);
    std::vector<uint8_t> all(p->GetSize());
    p->CopyData(all.data(), all.size());
    s.payload.assign(all.begin() + 24, all.end());
    v->push_back(s);
}

const Seen*
Find(const std::vector<Seen>& v, uint8_t rCtl)
{
    for (const Seen& s : v)
    {
        if (s.h.rCtl == rCtl)
        {
            return &s;
        }
    }
    return nullptr;
}

uint16_t
U16(const std::vector<uint8_t>& b, size_t at)
{
    return uint16_t(b[at] << 8 | b[at + 1]);
}

/// An FCP target on host 0 and an initiator on host 1 of `t`, driven by SubmitIo.
struct Fcp
{
    Ptr<FcpTarget> tgt;
    Ptr<FcpInitiator> ini;

    explicit Fcp(FcTopology& t)
    {
        tgt = CreateObject<FcpTarget>();
        t.hosts.Get(0)->AddApplication(tgt);
        tgt->Setup(t.hostPorts[0]);
        // Not installed on its node: SubmitIo drives it, its own I/O loop never starts.
        ini = CreateObject<FcpInitiator>();
        ini->Setup(t.hostPorts[1], t.hostPorts[0]->GetFcId(), tgt->GetFirstBurstSize());
    }
};

/// What the abort's caller and the I/O's caller saw.
struct Outcome
{
    int ioDone = 0;
    std::vector<std::pair<Time, bool>> abortDone;
    std::vector<Time> traced; ///< AbortComplete's time since the ABTS
};

void
Traced(Outcome* o, uint16_t, bool, Time since)
{
    o->traced.push_back(since);
}

void
StartAbort(Ptr<FcpInitiator> ini, const uint16_t* ox, Outcome* o)
{
    ini->Abort(*ox, [o](bool accepted) { o->abortDone.push_back({Simulator::Now(), accepted}); });
}

} // namespace

// ---------------------------------------------------------------------------------------------
class FcpAbortInFlightTest : public lfsim::ModelTestCase
{
  public:
    FcpAbortInFlightTest()
        : lfsim::ModelTestCase("ABTS for a write in the target's device: ABTS and BA_ACC each "
                               "take their wire time through the switch, both ends free it")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::FcNetDevice::Speed", StringValue("8GFC"));
        Config::SetDefault("ns3::FcSwitch::Switching", StringValue("CutThrough"));
        Config::SetDefault("ns3::FcSwitch::ForwardingLatency", StringValue("500ns"));
        Config::SetDefault("ns3::FcChannel::Length", DoubleValue(100));
        Config::SetDefault("ns3::FcpTarget::ServiceTime", StringValue("1ms"));
        FcHelper helper;
        FcTopology t = helper.Star(2);
        Fcp f(t);
        std::vector<Seen> atTarget;
        std::vector<Seen> atInitiator;
        t.hostPorts[0]->TraceConnectWithoutContext("FrameRx",
                                                   MakeBoundCallback(&Record, &atTarget));
        t.hostPorts[1]->TraceConnectWithoutContext("FrameRx",
                                                   MakeBoundCallback(&Record, &atInitiator));
        Outcome o;
        f.ini->TraceConnectWithoutContext("AbortComplete", MakeBoundCallback(&Traced, &o));
        // 4 KB write: CMND, XFER_RDY, two DATA frames, then 1 ms in the device; the abort
        // comes at 200 us with every line idle and every credit home.
        uint16_t ox = f.ini->SubmitIo(false, 4096, [&o](Time) { ++o.ioDone; });
        const double tAbort = 200e-6;
        Simulator::Schedule(Seconds(tAbort), &StartAbort, f.ini, &ox, &o);
        Simulator::Run(); // past the device's completion of the aborted write at 1 ms

        // Through the switch, cut-through: the header (SOF + 24 bytes) in, the latency, then the
        // whole frame out; a fibre on each side.
        auto through = [](double wire) { return TP + 28 * SPB + LATENCY + wire * SPB + TP; };
        const double abtsWire = FRAME_OVERHEAD;     // no payload
        const double accWire = FRAME_OVERHEAD + 12; // BA_ACC payload for ABTS
        // The ABTS is delivered at its EOF; the target frees its buffer, so its R_RDY (one
        // word) goes out just before the BA_ACC.
        const double abtsIn = tAbort + through(abtsWire);
        const double accIn = abtsIn + 4 * SPB + through(accWire);

        const Seen* abts = Find(atTarget, FcRctl::ABTS);
        const Seen* xferRdy = Find(atInitiator, FcRctl::DATA_DESCRIPTOR);
        NS_TEST_ASSERT_MSG_NE(abts, nullptr, "the ABTS reached the target");
        NS_TEST_ASSERT_MSG_NE(xferRdy, nullptr, "the write was solicited");
        NS_TEST_EXPECT_MSG_EQ_TOL(abts->at.GetSeconds(), abtsIn - abtsWire * SPB, 3e-12,
                                  "ABTS SOF at the target");
        NS_TEST_EXPECT_MSG_EQ(int(abts->h.type), 0x00, "TYPE: Basic Link Services");
        NS_TEST_EXPECT_MSG_EQ(abts->h.oxId, ox, "ABTS names the exchange's OX_ID");
        NS_TEST_EXPECT_MSG_EQ(abts->h.rxId, xferRdy->h.rxId, "and the RX_ID the target gave it");
        NS_TEST_EXPECT_MSG_EQ(abts->h.sId, t.hostPorts[1]->GetFcId(), "S_ID");
        NS_TEST_EXPECT_MSG_EQ(abts->h.dId, t.hostPorts[0]->GetFcId(), "D_ID");
        NS_TEST_EXPECT_MSG_EQ((abts->h.fCtl & FcFctl::EXCHANGE_CONTEXT), 0u, "from the originator");
        const uint32_t ends
            = FcFctl::SEQUENCE_INITIATIVE | FcFctl::END_SEQUENCE | FcFctl::LAST_SEQUENCE;
        NS_TEST_EXPECT_MSG_EQ((abts->h.fCtl & ends), ends, "SI, End and Last_Sequence");
        NS_TEST_EXPECT_MSG_EQ(abts->payload.size(), 0u, "ABTS has no payload");

        const Seen* acc = Find(atInitiator, FcRctl::BA_ACC);
        NS_TEST_ASSERT_MSG_NE(acc, nullptr, "the BA_ACC came back");
        NS_TEST_EXPECT_MSG_EQ_TOL(acc->at.GetSeconds(), accIn - accWire * SPB, 4e-12,
                                  "BA_ACC SOF at the initiator");
        NS_TEST_EXPECT_MSG_EQ(int(acc->h.type), 0x00, "TYPE: Basic Link Services");
        NS_TEST_EXPECT_MSG_NE((acc->h.fCtl & FcFctl::EXCHANGE_CONTEXT), 0u, "from the responder");
        NS_TEST_EXPECT_MSG_NE((acc->h.fCtl & FcFctl::LAST_SEQUENCE), 0u, "ends the exchange");
        NS_TEST_ASSERT_MSG_EQ(acc->payload.size(), 12u, "BA_ACC payload");
        NS_TEST_EXPECT_MSG_EQ(int(acc->payload[0]), 0x00, "SEQ_ID invalid: the whole exchange");
        NS_TEST_EXPECT_MSG_EQ(U16(acc->payload, 4), ox, "payload OX_ID");
        NS_TEST_EXPECT_MSG_EQ(U16(acc->payload, 6), xferRdy->h.rxId, "payload RX_ID");
        NS_TEST_EXPECT_MSG_EQ(U16(acc->payload, 8), 0u, "low SEQ_CNT");
        NS_TEST_EXPECT_MSG_EQ(U16(acc->payload, 10), 0xffffu, "high SEQ_CNT");

        NS_TEST_ASSERT_MSG_EQ(o.abortDone.size(), 1u, "the abort's done ran once");
        NS_TEST_EXPECT_MSG_EQ(o.abortDone[0].second, true, "accepted");
        NS_TEST_EXPECT_MSG_EQ_TOL(o.abortDone[0].first.GetSeconds(), accIn, 4e-12,
                                  "done at the BA_ACC's EOF");
        NS_TEST_ASSERT_MSG_EQ(o.traced.size(), 1u, "AbortComplete fired once");
        NS_TEST_EXPECT_MSG_EQ_TOL(o.traced[0].GetSeconds(), accIn - tAbort, 4e-12,
                                  "time since the ABTS");
        NS_TEST_EXPECT_MSG_EQ(o.ioDone, 0, "the aborted write's done never runs");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetExchanges(), 0u, "initiator freed the exchange");
        NS_TEST_EXPECT_MSG_EQ(f.tgt->GetExchanges(), 0u, "target freed the exchange");
        // The device finished the write at ~1 ms: no FCP_RSP may follow. Target: XFER_RDY and
        // BA_ACC; initiator: CMND, two DATA, ABTS.
        NS_TEST_EXPECT_MSG_EQ(t.hostPorts[0]->GetCounters().framesTx, 2u, "target frames");
        NS_TEST_EXPECT_MSG_EQ(Find(atInitiator, FcRctl::COMMAND_STATUS), nullptr, "no FCP_RSP");
        NS_TEST_EXPECT_MSG_EQ(t.hostPorts[1]->GetCounters().framesTx, 4u, "initiator frames");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetAbortsSent(), 1u, "aborts sent");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetBaAccReceived(), 1u, "BA_ACCs");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetBaRjtReceived(), 0u, "BA_RJTs");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetAbortTimeouts(), 0u, "the ABTS timer was stopped");
        NS_TEST_EXPECT_MSG_EQ(f.tgt->GetAbtsReceived(), 1u, "ABTS received");

        // Aborting it again: nothing is outstanding, nothing goes out, done(false) at once.
        const double again = Simulator::Now().GetSeconds();
        StartAbort(f.ini, &ox, &o);
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(o.abortDone.size(), 2u, "second abort answered");
        NS_TEST_EXPECT_MSG_EQ(o.abortDone[1].second, false, "nothing to abort");
        NS_TEST_EXPECT_MSG_EQ_TOL(o.abortDone[1].first.GetSeconds(), again, 1e-15, "at once");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetAbortsSent(), 1u, "no second ABTS");
        NS_TEST_EXPECT_MSG_EQ(t.hostPorts[1]->GetCounters().framesTx, 4u, "nothing sent");
    }
};

// ---------------------------------------------------------------------------------------------
class FcpAbortRejectTest : public lfsim::ModelTestCase
{
  public:
    FcpAbortRejectTest()
        : lfsim::ModelTestCase("ABTS after a lost FCP_RSP: the target no longer has the "
                               "exchange and answers BA_RJT (unable to perform, invalid "
                               "OX_ID-RX_ID)")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::FcNetDevice::Speed", StringValue("8GFC"));
        Config::SetDefault("ns3::FcChannel::Length", DoubleValue(100));
        FcHelper helper;
        FcTopology t = helper.PointToPoint();
        // Each direction loses its 3rd frame: the target's DATA, DATA, FCP_RSP of a 4 KB read
        // (the initiator's CMND and ABTS are its 1st and 2nd).
        t.channels[0]->SetAttribute("LoseFrameEvery", UintegerValue(3));
        Fcp f(t);
        std::vector<Seen> atInitiator;
        t.hostPorts[1]->TraceConnectWithoutContext("FrameRx",
                                                   MakeBoundCallback(&Record, &atInitiator));
        Outcome o;
        f.ini->TraceConnectWithoutContext("AbortComplete", MakeBoundCallback(&Traced, &o));
        uint16_t ox = f.ini->SubmitIo(true, 4096, [&o](Time) { ++o.ioDone; });
        const double tAbort = 1e-3;
        Simulator::Schedule(Seconds(tAbort), &StartAbort, f.ini, &ox, &o);
        Simulator::Run();

        NS_TEST_EXPECT_MSG_EQ(t.channels[0]->GetFramesLost(), 1u, "the FCP_RSP was lost");
        NS_TEST_EXPECT_MSG_EQ(f.tgt->GetAbtsReceived(), 1u, "the ABTS arrived");
        const Seen* rjt = Find(atInitiator, FcRctl::BA_RJT);
        NS_TEST_ASSERT_MSG_NE(rjt, nullptr, "BA_RJT came back");
        NS_TEST_EXPECT_MSG_EQ(Find(atInitiator, FcRctl::BA_ACC), nullptr, "no BA_ACC");
        NS_TEST_EXPECT_MSG_EQ(int(rjt->h.type), 0x00, "TYPE: Basic Link Services");
        NS_TEST_EXPECT_MSG_EQ(rjt->h.oxId, ox, "OX_ID");
        NS_TEST_ASSERT_MSG_EQ(rjt->payload.size(), 4u, "BA_RJT payload");
        NS_TEST_EXPECT_MSG_EQ(int(rjt->payload[1]), 0x09, "reason: unable to perform");
        NS_TEST_EXPECT_MSG_EQ(int(rjt->payload[2]), 0x03, "explanation: invalid OX_ID-RX_ID");
        // Back to back: the ABTS, the target's R_RDY for it, the BA_RJT (36 + 4 bytes).
        const double rjtIn
            = tAbort + FRAME_OVERHEAD * SPB + TP + 4 * SPB + (FRAME_OVERHEAD + 4) * SPB + TP;
        NS_TEST_ASSERT_MSG_EQ(o.abortDone.size(), 1u, "the abort's done ran once");
        NS_TEST_EXPECT_MSG_EQ(o.abortDone[0].second, false, "rejected");
        NS_TEST_EXPECT_MSG_EQ_TOL(o.abortDone[0].first.GetSeconds(), rjtIn, 3e-12,
                                  "done at the BA_RJT's EOF");
        NS_TEST_EXPECT_MSG_EQ(o.ioDone, 0, "the read's done never runs");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetBaRjtReceived(), 1u, "BA_RJTs");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetBaAccReceived(), 0u, "BA_ACCs");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetExchanges(), 0u, "initiator freed the exchange");
        NS_TEST_EXPECT_MSG_EQ(f.tgt->GetExchanges(), 0u, "target had freed it at its FCP_RSP");
    }
};

// ---------------------------------------------------------------------------------------------
class FcpAbortTimeoutTest : public lfsim::ModelTestCase
{
  public:
    FcpAbortTimeoutTest()
        : lfsim::ModelTestCase("ABTS lost: done(false) exactly AbortTimeout later; the "
                               "exchange's XFER_RDY meanwhile is discarded")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::FcpInitiator::AbortTimeout", StringValue("3s"));
        FcHelper helper;
        FcTopology t = helper.PointToPoint();
        // The initiator's 2nd frame, the ABTS right behind the FCP_CMND, is lost.
        t.channels[0]->SetAttribute("LoseFrameEvery", UintegerValue(2));
        Fcp f(t);
        Outcome o;
        f.ini->TraceConnectWithoutContext("AbortComplete", MakeBoundCallback(&Traced, &o));
        const double t0 = 10e-6;
        uint16_t ox = 0;
        Simulator::Schedule(Seconds(t0),
                            [&]()
                            {
                                ox = f.ini->SubmitIo(false, 4096, [&o](Time) { ++o.ioDone; });
                                StartAbort(f.ini, &ox, &o);
                            });
        Simulator::Run();

        NS_TEST_EXPECT_MSG_EQ(t.channels[0]->GetFramesLost(), 1u, "the ABTS was lost");
        NS_TEST_EXPECT_MSG_EQ(f.tgt->GetAbtsReceived(), 0u, "the target never saw it");
        NS_TEST_ASSERT_MSG_EQ(o.abortDone.size(), 1u, "the abort's done ran once");
        NS_TEST_EXPECT_MSG_EQ(o.abortDone[0].second, false, "failed");
        NS_TEST_EXPECT_MSG_EQ_TOL(o.abortDone[0].first.GetSeconds(), t0 + 3.0, 1e-15,
                                  "exactly AbortTimeout after the ABTS");
        NS_TEST_ASSERT_MSG_EQ(o.traced.size(), 1u, "AbortComplete fired");
        NS_TEST_EXPECT_MSG_EQ_TOL(o.traced[0].GetSeconds(), 3.0, 1e-15, "time since the ABTS");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetAbortTimeouts(), 1u, "counted");
        NS_TEST_EXPECT_MSG_EQ(o.ioDone, 0, "the write's done never runs");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetExchanges(), 0u, "initiator freed it locally");
        // The XFER_RDY reached an aborting exchange: no FCP_DATA answered it (CMND, ABTS only),
        // and the target, which never saw the ABTS, still waits for the data.
        NS_TEST_EXPECT_MSG_EQ(t.hostPorts[0]->GetCounters().framesTx, 1u, "target: XFER_RDY");
        NS_TEST_EXPECT_MSG_EQ(t.hostPorts[1]->GetCounters().framesTx, 2u, "initiator: no data");
        NS_TEST_EXPECT_MSG_EQ(f.tgt->GetExchanges(), 1u, "the target still holds it");
    }
};

// ---------------------------------------------------------------------------------------------
class FcpLossOfSignalTest : public lfsim::ModelTestCase
{
  public:
    FcpLossOfSignalTest()
        : lfsim::ModelTestCase("loss of signal: the initiator port's Link trace says so at "
                               "once; EndExchanges ends its open exchanges locally, oldest first, "
                               "an aborting one as an abort without answer, none completing "
                               "later; the link back is traced after link initialization's "
                               "round trip")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::FcNetDevice::Speed", StringValue("8GFC"));
        Config::SetDefault("ns3::FcChannel::Length", DoubleValue(100));
        Config::SetDefault("ns3::FcpTarget::ServiceTime", StringValue("1ms"));
        FcHelper helper;
        FcTopology t = helper.PointToPoint();
        Fcp f(t);
        std::vector<std::pair<Time, bool>> link;
        std::vector<std::pair<uint32_t, uint64_t>> ended;
        Outcome o;
        uint16_t aborted = 0;
        // Three reads the device holds for 1 ms; at 100 us the second is being aborted (its
        // ABTS queued) when the fibre goes dark, back at 300 us.
        const Time down = MicroSeconds(100);
        const Time back = MicroSeconds(300);
        t.hostPorts[1]->TraceConnectWithoutContext("Link",
                                                   Callback<void, bool>(
                                                       [&](bool up)
                                                       {
                                                           link.emplace_back(Simulator::Now(), up);
                                                           if (!up)
                                                           {
                                                               ended = f.ini->EndExchanges();
                                                           }
                                                       }));
        f.ini->SubmitIo(
            true, 4096, [&o](Time) { ++o.ioDone; }, 0, 11);
        aborted = f.ini->SubmitIo(
            true, 4096, [&o](Time) { ++o.ioDone; }, 0, 22);
        f.ini->SubmitIo(
            true, 4096, [&o](Time) { ++o.ioDone; }, 0, 33);
        Simulator::Schedule(down, &StartAbort, f.ini, &aborted, &o);
        Simulator::Schedule(down, [&t]() { t.channels[0]->Faults().SetDown(true); });
        Simulator::Schedule(back, [&t]() { t.channels[0]->Faults().SetDown(false); });
        Simulator::Run(); // past the device's answers at 1 ms, which find nothing

        const uint32_t target = t.hostPorts[0]->GetFcId();
        NS_TEST_ASSERT_MSG_EQ(ended.size(), 2u, "the two exchanges not being aborted");
        NS_TEST_EXPECT_MSG_EQ(ended[0].first, target, "their D_ID");
        NS_TEST_EXPECT_MSG_EQ(ended[0].second, 11u, "oldest first");
        NS_TEST_EXPECT_MSG_EQ(ended[1].second, 33u, "then the third");
        NS_TEST_ASSERT_MSG_EQ(o.abortDone.size(), 1u, "the abort ended");
        NS_TEST_EXPECT_MSG_EQ(o.abortDone[0].first, down, "at loss of signal");
        NS_TEST_EXPECT_MSG_EQ(o.abortDone[0].second, false, "without an answer");
        NS_TEST_EXPECT_MSG_EQ(f.ini->GetExchanges(), 0u, "nothing open");
        NS_TEST_EXPECT_MSG_EQ(o.ioDone, 0, "no done ever runs");
        NS_TEST_ASSERT_MSG_EQ(link.size(), 2u, "down, then up");
        NS_TEST_EXPECT_MSG_EQ(link[0].first, down, "loss of signal at once");
        NS_TEST_EXPECT_MSG_EQ(link[0].second, false, "down");
        // Link initialization: a round trip of the fibre plus a transmission word.
        const Time init = 2 * (NanoSeconds(500) + FcWireTime(FcSpeed::GFC8, FC_WORD));
        NS_TEST_EXPECT_MSG_EQ(link[1].first, back + init, "up after link initialization");
        NS_TEST_EXPECT_MSG_EQ(link[1].second, true, "up");
    }
};

// ---------------------------------------------------------------------------------------------
class FcpAbortTestSuite : public TestSuite
{
  public:
    FcpAbortTestSuite()
        : TestSuite("fcp-abort", UNIT)
    {
        AddTestCase(new FcpAbortInFlightTest, TestCase::QUICK);
        AddTestCase(new FcpAbortRejectTest, TestCase::QUICK);
        AddTestCase(new FcpAbortTimeoutTest, TestCase::QUICK);
        AddTestCase(new FcpLossOfSignalTest, TestCase::QUICK);
    }
};

static FcpAbortTestSuite g_fcpAbortTestSuite;
