/*
 * Tests of RNR (Receiver Not Ready, IBTA Vol. 1 9.7.5.2.8): a responder whose receive queue is
 * empty answers a SEND with an RNR NAK carrying its MinRnrTimer; the requester waits that long
 * and sends again from the NAK'd PSN, RnrRetry times (7: forever), then the QP goes to the
 * error state. RDMA WRITE and READ need no receive WQE and are not held.
 *
 * Times are computed here from the wire: two hosts back to back at 25GbE over the default 2 m
 * cable (5 ns/m), no switch, nothing else on the line. A frame is delivered at its last bit:
 * frame + FCS 4 + preamble/SFD 8 bytes after its start, plus 10 ns of cable; the next frame
 * starts 12 bytes (IFG) later. RNR timer values are IBTA Table 45's, written out here. Times
 * are compared in ns to 0.01 ns (the simulator counts picoseconds).
 */
#include "lfsim-test.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "rdma-nic.h"
#include "roce-helper.h"

using namespace ns3;

namespace
{

constexpr double RATE = 25e9;        // bit/s
constexpr double CABLE_NS = 2 * 5.0; // 2 m at 5 ns/m
// Eth 14 + IPv4 20 + UDP 8 + BTH 12, then the payload (a multiple of 4 here: no pad), ICRC 4.
constexpr double HEADERS = 14 + 20 + 8 + 12;
constexpr double ICRC = 4;
constexpr double FCS_PREAMBLE = 4 + 8;
constexpr double IFG = 12;
constexpr double AETH = 4;
constexpr uint32_t MTU = 4096; // RdmaNic.PathMtu default

/// ns from the first bit of `bytes` (frame bytes, FCS excluded) to its last bit at the peer.
double
Deliver(double frameBytes)
{
    return (frameBytes + FCS_PREAMBLE) * 8 / RATE * 1e9 + CABLE_NS;
}

/// ns a frame holds the line (the next frame starts after it).
double
Slot(double frameBytes)
{
    return (frameBytes + FCS_PREAMBLE + IFG) * 8 / RATE * 1e9;
}

const double ACK_NS = Deliver(HEADERS + AETH + ICRC); // an ACK or NAK, sent on an idle line

/// Both ends of one QP over a 25GbE cable, counting what the requester's callbacks see.
struct Pair
{
    RoceTopology t;
    Ptr<RdmaQueuePair> a; ///< requester, on h0
    Ptr<RdmaQueuePair> b; ///< responder, on h1
    std::vector<Time> completions;
    std::vector<uint32_t> received;
    std::vector<Time> errors;

    Pair()
    {
        RoceHelper h;
        t = h.PointToPoint(EthSpeed::GBE25);
        std::tie(a, b) = t.nics[0]->Connect(t.nics[1]);
        a->SetCompletionCallback(MakeCallback(&Pair::Completed, this));
        b->SetReceiveCallback(MakeCallback(&Pair::Received, this));
        a->SetErrorCallback(MakeCallback(&Pair::Failed, this));
    }

    Ptr<RdmaNic>
    Responder() const
    {
        return t.nics[1];
    }

    void
    Completed(Ptr<RdmaQueuePair>, uint64_t, uint32_t, Time)
    {
        completions.push_back(Simulator::Now());
    }

    void
    Received(Ptr<RdmaQueuePair>, uint32_t bytes)
    {
        received.push_back(bytes);
    }

    void
    Failed(Ptr<RdmaQueuePair>)
    {
        errors.push_back(Simulator::Now());
    }

    /// The first of `v`, or -1 ns if none (the count is checked apart; the runner goes on after
    /// a failed check).
    template <typename T>
    static T
    First(const std::vector<T>& v, T none)
    {
        return v.empty() ? none : v[0];
    }

    /// h1 posts no receive WQEs in [from, until).
    void
    NotReady(Time from, Time until)
    {
        Simulator::Schedule(from, &RdmaNic::SetReceiverNotReady, Responder(), true);
        Simulator::Schedule(until, &RdmaNic::SetReceiverNotReady, Responder(), false);
    }
};

class RnrWaitTest : public lfsim::ModelTestCase
{
  public:
    RnrWaitTest()
        : lfsim::ModelTestCase("RNR NAK: a SEND to a receiver that is not ready completes exactly "
                               "after the responder's RNR timer(s) and the transfer; the packets "
                               "after the NAK'd one are dropped without a NAK")
    {
    }

    void
    DoRun() override
    {
        struct Case
        {
            uint8_t code;
            double timerUs; // IBTA Table 45
            Time window;    // not ready in [0, window)
            uint32_t size;
            uint32_t naks; // retries that reach the responder inside the window, plus one
        };

        // 1000 B, SEND Only, timer 0.01 ms: a NAK back after 386.08 ns, so the k-th try
        // reaches h1 at 352.4 ns + k x 10.386 us; k = 0..9 fall in 100 us: 10 NAKs, more than
        // 7 (RnrRetry 7 retries forever). 10000 B, 3 packets, timer 0.64 ms: tries reaching h1
        // at 1.3 us, 642.7 us and 1284.1 us are NAK'd, the one at 1925.5 us is not. The default
        // timer, code 0, is the longest: 655.36 ms.
        const std::vector<Case> cases = {{1, 10, MicroSeconds(100), 1000, 10},
                                         {12, 640, MicroSeconds(1500), 10000, 3},
                                         {0, 655360, MilliSeconds(1), 1000, 1}};
        for (const Case& c : cases)
        {
            Pair p;
            p.Responder()->GetTransport().SetAttribute("MinRnrTimer", UintegerValue(c.code));
            p.NotReady(Time(0), c.window);
            p.a->Post(RdmaOp::SEND, c.size);
            Simulator::Run();

            const uint32_t pkts = (c.size + MTU - 1) / MTU;
            const double last = c.size - (pkts - 1) * MTU;
            // A try: the first packet there and the NAK back (the others are still on the
            // line behind it when the NAK is sent).
            const double first = HEADERS + std::min<double>(c.size, MTU) + ICRC;
            const double nakRound = Deliver(first) + ACK_NS;
            // The try that goes through: every packet back to back, the last one's ACK back.
            double transfer = Deliver(HEADERS + last + ICRC) + ACK_NS;
            for (uint32_t k = 0; k + 1 < pkts; ++k)
            {
                transfer += Slot(HEADERS + MTU + ICRC);
            }
            const double expectNs = c.naks * (nakRound + c.timerUs * 1e3) + transfer;
            const std::string what = "timer " + std::to_string(c.code) + ": ";

            NS_TEST_EXPECT_MSG_EQ(p.completions.size(), 1u, what << "the SEND completes");
            NS_TEST_EXPECT_MSG_EQ_TOL(Pair::First(p.completions, Time(-1)).GetPicoSeconds() * 1e-3,
                                      expectNs, 0.01,
                                      what << "completion after the RNR waits and the transfer");
            NS_TEST_EXPECT_MSG_EQ(p.b->GetRnrNaksSent(), c.naks, what << "RNR NAKs sent");
            NS_TEST_EXPECT_MSG_EQ(p.a->GetRnrNaksReceived(), c.naks, what << "RNR NAKs received");
            NS_TEST_EXPECT_MSG_EQ(p.a->GetRnrRetries(), c.naks, what << "one retry per NAK");
            // Each NAK'd try sent the packets that started before its NAK came back (2 of 3
            // for 10000 B: the second starts at 1337 ns, the NAK is back at 1377 ns), all sent
            // again by the next try.
            uint64_t perTry = 0;
            while (perTry < pkts && perTry * Slot(HEADERS + MTU + ICRC) < nakRound)
            {
                ++perTry;
            }
            NS_TEST_EXPECT_MSG_EQ(p.a->GetRetransmittedPackets(), c.naks * perTry,
                                  what << "each retry sends again what the NAK'd try sent");
            NS_TEST_EXPECT_MSG_EQ(p.b->GetNaksSent(), 0u,
                                  what << "no PSN sequence NAK for the packets dropped after it");
            NS_TEST_EXPECT_MSG_EQ(p.a->GetTimeouts(), 0u, what << "the waits are not timeouts");
            NS_TEST_EXPECT_MSG_EQ(p.b->GetBytesReceived(), c.size, what << "delivered once");
            NS_TEST_EXPECT_MSG_EQ(p.received.size(), 1u, what << "one receive completion");
            NS_TEST_EXPECT_MSG_EQ(Pair::First(p.received, 0u), c.size,
                                  what << "of the whole message");
            NS_TEST_EXPECT_MSG_EQ(p.a->InError(), false, what << "no error");
            Simulator::Destroy();
        }
    }
};

class RnrRetryExceededTest : public lfsim::ModelTestCase
{
  public:
    RnrRetryExceededTest()
        : lfsim::ModelTestCase("RNR retries exhausted: after RnrRetry + 1 RNR NAKs the QP is in "
                               "the error state, once, at the last NAK; the local ACK timer "
                               "(shorter than the RNR timer) never fires meanwhile")
    {
    }

    void
    DoRun() override
    {
        for (uint32_t retries : {0u, 3u})
        {
            Pair p;
            p.Responder()->GetTransport().SetAttribute("MinRnrTimer",
                                                       UintegerValue(12)); // 0.64 ms
            p.t.nics[0]->GetTransport().SetAttribute("RnrRetry", UintegerValue(retries));
            p.t.nics[0]->GetTransport().SetAttribute("LocalAckTimeout",
                                                     UintegerValue(5)); // 131 us
            p.NotReady(Time(0), Seconds(10));
            p.a->Post(RdmaOp::SEND, 1000);
            Simulator::Run();

            const double nakRound = Deliver(HEADERS + 1000 + ICRC) + ACK_NS;
            const double expectNs = (retries + 1) * nakRound + retries * 640e3;
            const std::string what = "RnrRetry " + std::to_string(retries) + ": ";
            NS_TEST_EXPECT_MSG_EQ(p.errors.size(), 1u, what << "error callback called once");
            NS_TEST_EXPECT_MSG_EQ_TOL(Pair::First(p.errors, Time(-1)).GetPicoSeconds() * 1e-3,
                                      expectNs, 0.01, what << "at the NAK after the last retry");
            NS_TEST_EXPECT_MSG_EQ(p.a->InError(), true, what << "in the error state");
            NS_TEST_EXPECT_MSG_EQ(p.a->RnrRetryExceeded(), true,
                                  what << "IBV_WC_RNR_RETRY_EXC_ERR, not RETRY_EXC_ERR");
            NS_TEST_EXPECT_MSG_EQ(p.a->GetErrorTime(), Pair::First(p.errors, Time(-1)),
                                  what << "error time");
            NS_TEST_EXPECT_MSG_EQ(p.b->GetRnrNaksSent(), retries + 1, what << "NAKs sent");
            NS_TEST_EXPECT_MSG_EQ(p.a->GetRnrNaksReceived(), retries + 1, what << "received");
            NS_TEST_EXPECT_MSG_EQ(p.a->GetRnrRetries(), retries, what << "retries");
            NS_TEST_EXPECT_MSG_EQ(p.a->GetTimeouts(), 0u, what << "no local ACK timeout");
            NS_TEST_EXPECT_MSG_EQ(p.completions.size(), 0u, what << "nothing completes");
            NS_TEST_EXPECT_MSG_EQ(p.b->GetBytesReceived(), 0u, what << "nothing delivered");
            Simulator::Destroy();
        }
    }
};

class RnrProgressResetsTest : public lfsim::ModelTestCase
{
  public:
    RnrProgressResetsTest()
        : lfsim::ModelTestCase("RNR retries are counted without progress: with RnrRetry 1, two "
                               "SENDs each NAK'd once both complete")
    {
    }

    void
    DoRun() override
    {
        Pair p;
        p.Responder()->GetTransport().SetAttribute("MinRnrTimer", UintegerValue(1)); // 0.01 ms
        p.t.nics[0]->GetTransport().SetAttribute("RnrRetry", UintegerValue(1));
        // Each SEND's first try is NAK'd, its retry 10.39 us later is not.
        p.NotReady(Time(0), MicroSeconds(5));
        p.NotReady(MicroSeconds(20), MicroSeconds(25));
        p.a->Post(RdmaOp::SEND, 1000);
        Simulator::Schedule(MicroSeconds(20), [&p] { p.a->Post(RdmaOp::SEND, 1000); });
        Simulator::Run();

        const double round = Deliver(HEADERS + 1000 + ICRC) + ACK_NS;
        NS_TEST_EXPECT_MSG_EQ(p.completions.size(), 2u, "both complete");
        NS_TEST_EXPECT_MSG_EQ_TOL(
            (p.completions.size() > 1 ? p.completions[1] : Time(-1)).GetPicoSeconds() * 1e-3,
            20e3 + 2 * round + 10e3, 0.01, "the second after one wait");
        NS_TEST_EXPECT_MSG_EQ(p.a->GetRnrNaksReceived(), 2u, "two NAKs in all");
        NS_TEST_EXPECT_MSG_EQ(p.a->InError(), false, "the first SEND's ACK reset the count");
        Simulator::Destroy();
    }
};

class RnrWriteReadTest : public lfsim::ModelTestCase
{
  public:
    RnrWriteReadTest()
        : lfsim::ModelTestCase("Receiver not ready: an RDMA WRITE and an RDMA READ need no "
                               "receive WQE and complete as if it were ready")
    {
    }

    void
    DoRun() override
    {
        for (RdmaOp op : {RdmaOp::WRITE, RdmaOp::READ})
        {
            Time at[2];
            for (bool notReady : {false, true})
            {
                Pair p;
                if (notReady)
                {
                    p.NotReady(Time(0), Seconds(10));
                }
                p.a->Post(op, 10000);
                Simulator::Run();
                NS_TEST_EXPECT_MSG_EQ(p.completions.size(), 1u, "completes");
                at[notReady] = Pair::First(p.completions, Time(-1));
                NS_TEST_EXPECT_MSG_EQ(p.b->GetRnrNaksSent() + p.a->GetRnrNaksSent(), 0u,
                                      "no RNR NAK");
                NS_TEST_EXPECT_MSG_EQ(p.a->GetRetransmittedPackets(), 0u, "nothing resent");
                Simulator::Destroy();
            }
            NS_TEST_EXPECT_MSG_EQ(at[1], at[0], "the same completion time");
        }
        // The WRITE's time, from the wire: 3 packets (RETH on the first), the last one's ACK.
        Pair p;
        p.NotReady(Time(0), Seconds(10));
        p.a->Post(RdmaOp::WRITE, 10000);
        Simulator::Run();
        const double ns = Slot(HEADERS + 16 + MTU + ICRC) + Slot(HEADERS + MTU + ICRC)
                          + Deliver(HEADERS + (10000 - 2 * MTU) + ICRC) + ACK_NS;
        NS_TEST_EXPECT_MSG_EQ(p.completions.size(), 1u, "the WRITE completes");
        NS_TEST_EXPECT_MSG_EQ_TOL(Pair::First(p.completions, Time(-1)).GetPicoSeconds() * 1e-3, ns,
                                  0.01, "at line rate");
        Simulator::Destroy();
    }
};

class RocePfcEcnRnrTestSuite : public TestSuite
{
  public:
    RocePfcEcnRnrTestSuite()
        : TestSuite("roce-rnr", UNIT)
    {
        AddTestCase(new RnrWaitTest, TestCase::QUICK);
        AddTestCase(new RnrRetryExceededTest, TestCase::QUICK);
        AddTestCase(new RnrProgressResetsTest, TestCase::QUICK);
        AddTestCase(new RnrWriteReadTest, TestCase::QUICK);
    }
};

RocePfcEcnRnrTestSuite g_rnrSuite;

} // namespace
