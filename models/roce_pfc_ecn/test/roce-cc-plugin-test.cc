/*
 * The congestion-control plug-in of RdmaNic and what it needs from the wire and the switches:
 * the telemetry fields' bytes and their round trip, INT stamping, the switch's ECN marking
 * point, the notification point's CNP timing, controllers chosen by name (and a bad name), and
 * window gating against the closed form of a one-packet window.
 */
#include "ethernet-speed.h"
#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "rdma-congestion-control.h"
#include "rdma-nic.h"
#include "roce-header.h"
#include "roce-helper.h"
#include "roce-net-device.h"
#include "roce-switch.h"

#include <vector>

using namespace ns3;

namespace
{

using CcTestCase = lfsim::ModelTestCase;

// A controller defined by a test: one class and one registration line, as a module's. It holds
// every QP to a fixed window at line rate.
class FixedWindowCc : public RdmaCongestionControl
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::LfsimTestFixedWindowCc")
                                .SetParent<RdmaCongestionControl>()
                                .AddConstructor<FixedWindowCc>()
                                .AddAttribute("Window", "bytes in flight", UintegerValue(4096),
                                              MakeUintegerAccessor(&FixedWindowCc::m_window),
                                              MakeUintegerChecker<uint64_t>());
        return tid;
    }

    void
    OnConnect(RdmaQueuePair& qp) override
    {
        qp.SetWindow(m_window);
    }

    void
    OnAck(RdmaQueuePair& qp, const RdmaAckSample& s) override
    {
        ++acks;
        bytes += s.bytesAcked;
    }

    uint64_t m_window = 0;
    uint64_t acks = 0;
    uint64_t bytes = 0;
};

NS_OBJECT_ENSURE_REGISTERED(FixedWindowCc);
const bool g_fixed = RegisterCongestionControl(
    {"TestFixedWindow", "ns3::LfsimTestFixedWindowCc", "a test's fixed window"});

// ---------------------------------------------------------------------------------------------

class TelemetryWireTest : public TestCase
{
  public:
    TelemetryWireTest()
        : TestCase("Telemetry: BTH resv6a flags, timestamp and INT bytes after the extension "
                   "header, round trip; none of it without flags")
    {
    }

    void
    DoRun() override
    {
        RoceHeader h;
        h.opcode = IbOpcode::RDMA_WRITE_FIRST; // RETH: the telemetry follows it
        h.destQp = 0x000102;
        h.psn = 7;
        h.trailing = 1024 + IB_ICRC;
        const uint32_t bare = h.GetSerializedSize();
        NS_TEST_ASSERT_MSG_EQ(bare, 70u, "no telemetry: the IBTA header only");
        h.tel.flags = TEL_TIMESTAMP | TEL_INT;
        h.tel.ts = 0x0102030405060708ULL;
        h.tel.slots = 3;
        h.tel.nHop = 1;
        h.tel.hops[0] = IntHop::Make(uint8_t(EthSpeed::GBE100), 0xABCDEF, 128 * 5, 256 * 9);
        NS_TEST_ASSERT_MSG_EQ(h.GetSerializedSize(), 70u + 8 + 2 + 3 * 8, "TS 8 + INT 2 + 3x8");
        Ptr<Packet> p = Create<Packet>(h.trailing);
        p->AddHeader(h);
        uint8_t b[104];
        p->CopyData(b, sizeof(b));
        NS_TEST_EXPECT_MSG_EQ((b[16] << 8 | b[17]), 20 + 8 + 12 + 16 + 34 + 1028,
                              "IPv4 total length counts the telemetry");
        NS_TEST_EXPECT_MSG_EQ(b[42 + 4], (TEL_TIMESTAMP | TEL_INT), "resv6a flags");
        uint64_t ts = 0;
        for (int k = 0; k < 8; ++k)
        {
            ts = ts << 8 | b[70 + k];
        }
        NS_TEST_EXPECT_MSG_EQ(ts, h.tel.ts, "timestamp right after RETH, big-endian");
        NS_TEST_EXPECT_MSG_EQ(unsigned(b[78]), 1u, "INT: one record filled");
        NS_TEST_EXPECT_MSG_EQ(unsigned(b[79]), 3u, "INT: three slots");
        // Record 0: speed 4 bits, time 24, tx units 20, qlen units 16.
        NS_TEST_EXPECT_MSG_EQ(unsigned(b[80] >> 4), unsigned(EthSpeed::GBE100), "speed code");
        const uint32_t time = uint32_t(b[80] & 0xF) << 20 | b[81] << 12 | b[82] << 4 | b[83] >> 4;
        NS_TEST_EXPECT_MSG_EQ(time, 0xABCDEFu, "time, ns mod 2^24");
        const uint32_t tx = uint32_t(b[83] & 0xF) << 16 | b[84] << 8 | b[85];
        NS_TEST_EXPECT_MSG_EQ(tx, 5u, "tx bytes / 128");
        NS_TEST_EXPECT_MSG_EQ((b[86] << 8 | b[87]), 9, "queue bytes / 256");
        for (int k = 88; k < 104; ++k)
        {
            NS_TEST_EXPECT_MSG_EQ(unsigned(b[k]), 0u, "unfilled slots are zeros");
        }
        RoceHeader back;
        p->RemoveHeader(back);
        NS_TEST_EXPECT_MSG_EQ(unsigned(back.tel.flags), unsigned(TEL_TIMESTAMP | TEL_INT), "flags");
        NS_TEST_EXPECT_MSG_EQ(back.tel.ts, h.tel.ts, "ts");
        NS_TEST_EXPECT_MSG_EQ(unsigned(back.tel.nHop), 1u, "nHop");
        NS_TEST_EXPECT_MSG_EQ(back.tel.hops[0].word, h.tel.hops[0].word, "record");
        NS_TEST_EXPECT_MSG_EQ(back.trailing, 1028u, "payload + ICRC unchanged");
        NS_TEST_EXPECT_MSG_EQ(back.va, h.va, "RETH still read first");

        // An ACK echoing only a timestamp: AETH then the 8 bytes.
        RoceHeader a;
        a.opcode = IbOpcode::ACKNOWLEDGE;
        a.tel.flags = TEL_TIMESTAMP;
        a.tel.ts = 123456789;
        a.becn = true;
        Ptr<Packet> q = Create<Packet>(IB_ICRC);
        q->AddHeader(a);
        NS_TEST_EXPECT_MSG_EQ(q->GetSize(), 58u + 8 + IB_ICRC, "ACK + timestamp + ICRC");
        RoceHeader ab;
        q->RemoveHeader(ab);
        NS_TEST_EXPECT_MSG_EQ(ab.tel.ts, 123456789u, "echoed timestamp");
        NS_TEST_EXPECT_MSG_EQ(ab.becn, true, "ECN echo in BECN");
        NS_TEST_EXPECT_MSG_EQ(ab.syndrome, AETH_ACK, "AETH read before the timestamp");
    }
};

class IntStampTest : public TestCase
{
  public:
    IntStampTest()
        : TestCase("INT: StampInt fills the next slot of a data frame only; record arithmetic "
                   "across the 24-bit clock and 20-bit byte-counter wraps")
    {
    }

    static Ptr<Packet>
    Frame(uint8_t opcode, uint8_t flags, uint8_t slots)
    {
        RoceHeader h;
        h.opcode = opcode;
        h.tel.flags = flags;
        h.tel.ts = 99;
        h.tel.slots = slots;
        h.trailing = 64 + IB_ICRC;
        Ptr<Packet> p = Create<Packet>(h.trailing);
        p->AddHeader(h);
        return p;
    }

    void
    DoRun() override
    {
        const IntHop a = IntHop::Make(uint8_t(EthSpeed::GBE25), 1000, 4096, 1024);
        const IntHop b = IntHop::Make(uint8_t(EthSpeed::GBE100), 2000, 8192, 512);
        Ptr<Packet> p = Frame(IbOpcode::RDMA_WRITE_MIDDLE, TEL_TIMESTAMP | TEL_INT, 2);
        const uint32_t size = p->GetSize();
        NS_TEST_EXPECT_MSG_EQ(StampInt(p, a), true, "first slot");
        NS_TEST_EXPECT_MSG_EQ(StampInt(p, b), true, "second slot");
        NS_TEST_EXPECT_MSG_EQ(StampInt(p, b), false, "no third slot");
        NS_TEST_EXPECT_MSG_EQ(p->GetSize(), size, "stamping never changes the frame's size");
        RoceHeader h;
        p->RemoveHeader(h);
        NS_TEST_EXPECT_MSG_EQ(unsigned(h.tel.nHop), 2u, "two records");
        NS_TEST_EXPECT_MSG_EQ(h.tel.ts, 99u, "the timestamp before INT is untouched");
        NS_TEST_EXPECT_MSG_EQ(h.tel.hops[0].word, a.word, "record 0");
        NS_TEST_EXPECT_MSG_EQ(h.tel.hops[1].word, b.word, "record 1");
        NS_TEST_EXPECT_MSG_EQ(h.tel.hops[1].LineRate(), 100e9, "100GbE");
        NS_TEST_EXPECT_MSG_EQ(h.tel.hops[0].QueueBytes(), 1024u, "queue bytes");

        Ptr<Packet> ack = Frame(IbOpcode::ACKNOWLEDGE, TEL_INT, 2);
        NS_TEST_EXPECT_MSG_EQ(StampInt(ack, a), false, "an ACK's records are an echo");
        Ptr<Packet> plain = Frame(IbOpcode::RDMA_WRITE_MIDDLE, TEL_TIMESTAMP, 0);
        NS_TEST_EXPECT_MSG_EQ(StampInt(plain, a), false, "no INT, nothing to stamp");

        // Wraps: 2^24 ns and 2^20 x 128 bytes.
        const IntHop before = IntHop::Make(0, (1u << 24) - 100, (uint64_t(1) << 27) - 256, 0);
        const IntHop after = IntHop::Make(0, 50, 384, 0);
        NS_TEST_EXPECT_MSG_EQ(after.NsSince(before), 150u, "ns across the clock's wrap");
        NS_TEST_EXPECT_MSG_EQ(after.TxBytesSince(before), 640u, "bytes across the counter's wrap");
        NS_TEST_EXPECT_MSG_EQ(IntHop::Make(0, 0, 0, uint64_t(1) << 30).QueueBytes(),
                              uint64_t(0xFFFF) * 256, "queue saturates at 16 MiB");
    }
};

// ---------------------------------------------------------------------------------------------

/// Two senders write to h0 through one 25GbE switch with step marking at K = 100 KB (Kmin =
/// Kmax, Pmax 1); returns (first mark at the switch, first CNP the receiver sends).
std::pair<Time, Time>
FirstMarkAndCnp(const std::string& point)
{
    Config::SetDefault("ns3::SwitchMarker::EcnEnabled", BooleanValue(true));
    Config::SetDefault("ns3::SwitchMarker::Kmin", UintegerValue(100000));
    Config::SetDefault("ns3::SwitchMarker::Kmax", UintegerValue(100000));
    Config::SetDefault("ns3::SwitchMarker::EcnMarkingPoint", StringValue(point));
    RoceHelper h;
    RoceTopology t = h.Leaf(3, EthSpeed::GBE25);
    h.AssignStreams(t, 1);
    Time mark = Time::Max();
    Time cnp = Time::Max();
    t.switches[0]->GetMarker()->TraceConnectWithoutContext(
        "EcnMark",
        MakeBoundCallback(
            +[](Time* at, uint32_t, uint8_t) { *at = std::min(*at, Simulator::Now()); }, &mark));
    t.nics[0]->GetTransport().TraceConnectWithoutContext(
        "CnpSent", MakeBoundCallback(
                       +[](Time* at, uint32_t) { *at = std::min(*at, Simulator::Now()); }, &cnp));
    for (uint32_t s = 1; s <= 2; ++s)
    {
        t.nics[s]->Connect(t.nics[0]).first->Post(RdmaOp::WRITE, 4 << 20);
    }
    Simulator::Stop(MicroSeconds(400));
    Simulator::Run();
    return {mark, cnp};
}

class EcnMarkingPointTest : public CcTestCase
{
  public:
    EcnMarkingPointTest()
        : CcTestCase("RoceSwitch.EcnMarkingPoint: a mark at enqueue reaches the receiver after "
                     "the queue ahead of it drains; a mark at dequeue leaves at once")
    {
    }

    void
    DoRun() override
    {
        const auto [enqMark, enqCnp] = FirstMarkAndCnp("Enqueue");
        Simulator::Destroy();
        const auto [deqMark, deqCnp] = FirstMarkAndCnp("Dequeue");
        NS_TEST_ASSERT_MSG_NE(enqMark, Time::Max(), "marked at enqueue");
        NS_TEST_ASSERT_MSG_NE(deqMark, Time::Max(), "marked at dequeue");
        // The queue is K = 100 KB when the marked frame joins it: it leaves K / 25 Gb/s = 32 us
        // later (a little more: line overhead per frame), then crosses the 25GbE link.
        const Time drain = NanoSeconds(int64_t(100000 * 8 / 25.0));
        NS_TEST_EXPECT_MSG_GT_OR_EQ(enqCnp - enqMark, drain, "enqueue: behind the queue");
        // At dequeue the marked frame is on the line now: its serialization (4 KiB at 25 Gb/s
        // = 1.3 us) and the cable before the receiver answers.
        NS_TEST_EXPECT_MSG_LT(deqCnp - deqMark, MicroSeconds(2), "dequeue: at once");
    }
};

// ---------------------------------------------------------------------------------------------

/// CE-marked, in-order RDMA WRITE packets delivered to h1's port at the given times (us): the
/// times h1's NIC sends CNPs, with RdmaNic.CnpMode `mode` and CnpInterval 50 us.
std::vector<double>
CnpTimes(const std::string& mode, const std::vector<double>& marksUs)
{
    Config::SetDefault("ns3::RdmaTransport::CnpMode", StringValue(mode));
    Config::SetDefault("ns3::RdmaTransport::CnpInterval", TimeValue(MicroSeconds(50)));
    RoceHelper h;
    RoceTopology t = h.PointToPoint(EthSpeed::GBE25);
    auto [a, b] = t.nics[0]->Connect(t.nics[1]);
    std::vector<double> sent;
    t.nics[1]->GetTransport().TraceConnectWithoutContext(
        "CnpSent", MakeBoundCallback(
                       +[](std::vector<double>* v, uint32_t)
                       { v->push_back(Simulator::Now().GetMicroSeconds()); },
                       &sent));
    Ptr<RoceNetDevice> port = t.hostPorts[1];
    for (size_t k = 0; k < marksUs.size(); ++k)
    {
        RoceHeader hd;
        hd.dst = port->GetMac();
        hd.ipSrc = t.nics[0]->GetIp();
        hd.ipDst = t.nics[1]->GetIp();
        hd.ecn = 3;
        hd.dscp = 26;
        hd.opcode = IbOpcode::RDMA_WRITE_ONLY;
        hd.destQp = b->GetQpn();
        hd.psn = uint32_t(k);
        hd.dmaLength = 64;
        hd.trailing = 64 + IB_ICRC;
        Simulator::Schedule(NanoSeconds(int64_t(marksUs[k] * 1000)),
                            [port, hd]()
                            {
                                RoceHeader c = hd;
                                Ptr<Packet> p = Create<Packet>(c.trailing);
                                p->AddHeader(c);
                                port->Receive(RoceFrame::FromPacket(p));
                            });
    }
    Simulator::Stop(MicroSeconds(400));
    Simulator::Run();
    return sent;
}

class CnpModeTest : public CcTestCase
{
  public:
    CnpModeTest()
        : CcTestCase("Notification point: PerInterval answers marks inside CnpInterval with one "
                     "CNP at its end (Zhu et al. 2015, section 3.1); RateLimited drops them")
    {
    }

    void
    DoRun() override
    {
        const std::vector<double> marks = {0, 10, 20, 120, 130, 140, 300};
        // Paper: 0 (first mark, none for 50 us before), 50 (10 and 20 in [0, 50)), 120 (none
        // in [50, 100), so the next mark goes at once), 170 (130, 140 in [120, 170)), 300.
        const std::vector<double> paper = {0, 50, 120, 170, 300};
        const std::vector<double> limited = {0, 120, 300};
        const auto p = CnpTimes("PerInterval", marks);
        Simulator::Destroy();
        const auto l = CnpTimes("RateLimited", marks);
        NS_TEST_ASSERT_MSG_EQ(p.size(), paper.size(), "PerInterval: CNP count");
        for (size_t k = 0; k < paper.size(); ++k)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(p[k], paper[k], 1e-6, "PerInterval CNP " << k);
        }
        NS_TEST_ASSERT_MSG_EQ(l.size(), limited.size(), "RateLimited: CNP count");
        for (size_t k = 0; k < limited.size(); ++k)
        {
            NS_TEST_EXPECT_MSG_EQ_TOL(l[k], limited[k], 1e-6, "RateLimited CNP " << k);
        }
    }
};

// ---------------------------------------------------------------------------------------------

class ChoiceTest : public CcTestCase
{
  public:
    ChoiceTest()
        : CcTestCase("RdmaNic.CongestionControl: a TypeIdValue chosen by a registered name (or "
                     "its TypeId); another name is refused, naming the registered ones")
    {
    }

    void
    DoRun() override
    {
        const std::string nic = "ns3::RdmaNic";
        NS_TEST_EXPECT_MSG_EQ(lfsim::CheckValue(nic, "CongestionControl", "None"), "", "None");
        NS_TEST_EXPECT_MSG_EQ(lfsim::CheckValue(nic, "CongestionControl", "TestFixedWindow"), "",
                              "a registered name");
        NS_TEST_EXPECT_MSG_EQ(
            lfsim::CheckValue(nic, "CongestionControl", "ns3::LfsimTestFixedWindowCc"), "",
            "its TypeId");
        const std::string why = lfsim::CheckValue(nic, "CongestionControl", "Cubic");
        NS_TEST_EXPECT_MSG_NE(why.find("one of "), std::string::npos, why);
        NS_TEST_EXPECT_MSG_NE(why.find("None"), std::string::npos, why);
        NS_TEST_EXPECT_MSG_NE(why.find("TestFixedWindow"), std::string::npos, why);
        bool defaultShown = false;
        for (const auto& a : lfsim::Attributes(nic))
        {
            defaultShown |= a.name == "CongestionControl" && a.defaultValue == "None";
        }
        NS_TEST_EXPECT_MSG_EQ(defaultShown, true, "the default reads as its name, None");

        lfsim::TestRun run("roce", "100us");
        run.Topology("PointToPoint").Workload("w", "Incast", {{"Destinations", "h1"}});
        run.Class(nic, "CongestionControl", "Cubic");
        bool threw = false;
        try
        {
            run.Run();
        }
        catch (const std::invalid_argument& e)
        {
            threw = std::string(e.what()).find("CongestionControl") != std::string::npos;
        }
        NS_TEST_EXPECT_MSG_EQ(threw, true, "a run with an unknown controller does not start");
    }
};

class WindowGatingTest : public CcTestCase
{
  public:
    WindowGatingTest()
        : CcTestCase("Window gating: a one-packet window sends one packet per round trip, the "
                     "closed form of h0 -> h1 on one 25GbE cable")
    {
    }

    void
    DoRun() override
    {
        lfsim::TestRun run("roce", "2ms");
        run.Topology("PointToPoint")
            .Workload("w", "Incast",
                      {{"Hosts", "h0"},
                       {"Destinations", "h1"},
                       {"MessageSize", "4096"},
                       {"Messages", "0"},
                       {"QueueDepth", "4"}})
            .Class("ns3::RdmaNic", "CongestionControl", "TestFixedWindow")
            .Class("ns3::LfsimTestFixedWindowCc", "Window", "4096")
            .Class("ns3::RoceChannel", "Length", "10")
            .Class("ns3::Report", "Warmup", "200us");
        const auto r = run.Run();
        // One RDMA WRITE Only of 4096 B (frame 70 + 4096 + ICRC 4 = 4170 B) arrives after 8 +
        // 4170 + FCS 4 byte times and the 50-ns cable; its ACK (58 + ICRC 4 B) after 8 + 62 +
        // FCS 4 byte times and the cable: then the next packet may go. 320 ps per byte at
        // 25GbE.
        const double rttNs = (8 + 4170 + 4) * 0.32 + 50 + (8 + 62 + 4) * 0.32 + 50;
        const double expected = 4096 * 8 / rttNs; // Gb/s
        NS_TEST_EXPECT_MSG_EQ_TOL(lfsim::Metric(r, "total_goodput_Gbps"), expected,
                                  0.005 * expected, "one packet per round trip");
    }
};

} // namespace

class RoceCcPluginTestSuite : public TestSuite
{
  public:
    RoceCcPluginTestSuite()
        : TestSuite("roce-cc-plugin", UNIT)
    {
        AddTestCase(new TelemetryWireTest, TestCase::QUICK);
        AddTestCase(new IntStampTest, TestCase::QUICK);
        AddTestCase(new EcnMarkingPointTest, TestCase::QUICK);
        AddTestCase(new CnpModeTest, TestCase::QUICK);
        AddTestCase(new ChoiceTest, TestCase::QUICK);
        AddTestCase(new WindowGatingTest, TestCase::QUICK);
    }
};

static RoceCcPluginTestSuite g_roceCcPluginTestSuite;
