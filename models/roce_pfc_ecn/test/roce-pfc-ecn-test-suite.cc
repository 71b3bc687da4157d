/*
 * Tests of the lossless Ethernet / RoCEv2 model: wire format, PFC timing, MMU headroom,
 * losslessness under incast, go-back-N recovery, ECN/CNP, closed-form goodput, conservation
 * and determinism.
 */
#include "ethernet-speed.h"
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "rdma-nic.h"
#include "roce-channel.h"
#include "roce-header.h"
#include "roce-helper.h"
#include "roce-net-device.h"
#include "roce-switch.h"

#include <cmath>
#include <numeric>

using namespace ns3;

namespace
{

/// The "roce" fabric's incast: hosts h1..h`senders` on one switch (generator Star, 25GbE, the
/// RoceNetDevice default) each write to h0 on a QP of their own (workload "incast": 64 KB
/// messages back to back until stop_time, one outstanding, unless set otherwise).
lfsim::TestRun
Incast(uint32_t senders, const std::string& stop = "2ms", uint32_t seed = 1)
{
    lfsim::TestRun run("roce", stop, seed);
    run.Topology("Star", {{"Hosts", std::to_string(senders + 1)}})
        .Workload("incast", "Incast",
                  {{"Hosts", "h1-h" + std::to_string(senders)}, {"Destinations", "h0"}});
    return run;
}

/// Every case starts from the attribute defaults (lfsim::Run sets them with Config::SetDefault).
using RoceTestCase = lfsim::ModelTestCase;

// ---------------------------------------------------------------------------------------------

class WireFormatTest : public TestCase
{
  public:
    WireFormatTest()
        : TestCase("RoCEv2 and PFC header bytes, field layout and IPv4 checksum")
    {
    }

    void
    DoRun() override
    {
        // Eth 14 + IPv4 20 + UDP 8 + BTH 12 (+ RETH 16 | AETH 4 | CNP 16), VLAN +4.
        NS_TEST_EXPECT_MSG_EQ(RoceHeaderBytes(IbOpcode::RDMA_WRITE_FIRST, false), 70u, "RETH");
        NS_TEST_EXPECT_MSG_EQ(RoceHeaderBytes(IbOpcode::RDMA_WRITE_MIDDLE, false), 54u, "mid");
        NS_TEST_EXPECT_MSG_EQ(RoceHeaderBytes(IbOpcode::RDMA_READ_RESPONSE_FIRST, false), 58u,
                              "AETH");
        NS_TEST_EXPECT_MSG_EQ(RoceHeaderBytes(IbOpcode::RDMA_READ_RESPONSE_MIDDLE, true), 58u,
                              "VLAN");
        NS_TEST_EXPECT_MSG_EQ(RoceHeaderBytes(IbOpcode::ACKNOWLEDGE, false), 58u, "ACK");
        NS_TEST_EXPECT_MSG_EQ(RoceHeaderBytes(IbOpcode::CNP, false), 70u, "CNP");

        RoceHeader h;
        h.src = Mac48Address("02:00:00:00:00:01");
        h.dst = Mac48Address("02:00:00:00:00:02");
        h.vlan = true;
        h.pcp = 3;
        h.vid = 100;
        h.ipSrc = Ipv4Address("10.0.0.1");
        h.ipDst = Ipv4Address("10.0.0.2");
        h.dscp = 26;
        h.ecn = 2;
        h.udpSrc = 0xC123;
        h.opcode = IbOpcode::RDMA_WRITE_FIRST;
        h.destQp = 0xABCDEF;
        h.psn = 0x123456;
        h.ackReq = true;
        h.va = 0x1122334455667788ULL;
        h.rkey = 0xCAFE;
        h.dmaLength = 65536;
        h.trailing = 1024 + IB_ICRC;
        Ptr<Packet> p = Create<Packet>(h.trailing);
        p->AddHeader(h);
        NS_TEST_ASSERT_MSG_EQ(p->GetSize(), 74u + 1028u, "frame size");
        uint8_t b[74];
        p->CopyData(b, 74);
        // Addresses in wire order: destination MAC first, then source; IPv4 source, then
        // destination, most significant byte first (10.0.0.1 = 0a 00 00 01).
        NS_TEST_EXPECT_MSG_EQ(unsigned(b[5]), 0x02u, "destination MAC, last byte");
        NS_TEST_EXPECT_MSG_EQ(unsigned(b[6]), 0x02u, "source MAC, first byte");
        NS_TEST_EXPECT_MSG_EQ(unsigned(b[11]), 0x01u, "source MAC, last byte");
        NS_TEST_EXPECT_MSG_EQ((b[30] << 24 | b[31] << 16 | b[32] << 8 | b[33]), 0x0A000001,
                              "IPv4 source");
        NS_TEST_EXPECT_MSG_EQ((b[34] << 24 | b[35] << 16 | b[36] << 8 | b[37]), 0x0A000002,
                              "IPv4 destination");
        NS_TEST_EXPECT_MSG_EQ((b[12] << 8 | b[13]), 0x8100, "TPID");
        NS_TEST_EXPECT_MSG_EQ((b[14] >> 5), 3, "PCP");
        NS_TEST_EXPECT_MSG_EQ((b[16] << 8 | b[17]), 0x0800, "IPv4 ethertype");
        NS_TEST_EXPECT_MSG_EQ(b[19], (26 << 2 | 2), "DSCP/ECN byte");
        NS_TEST_EXPECT_MSG_EQ((b[20] << 8 | b[21]), 20 + 8 + 12 + 16 + 1028, "IPv4 total length");
        uint32_t sum = 0;
        for (int i = 18; i < 38; i += 2)
        {
            sum += b[i] << 8 | b[i + 1];
        }
        while (sum >> 16)
        {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        NS_TEST_EXPECT_MSG_EQ(sum, 0xFFFFu, "IPv4 header checksum verifies");
        NS_TEST_EXPECT_MSG_EQ((b[40] << 8 | b[41]), 4791, "UDP dport");
        NS_TEST_EXPECT_MSG_EQ(b[46], IbOpcode::RDMA_WRITE_FIRST, "BTH opcode");
        NS_TEST_EXPECT_MSG_EQ((b[51] << 16 | b[52] << 8 | b[53]), 0xABCDEF, "dest QP");
        NS_TEST_EXPECT_MSG_EQ(b[54], 0x80, "AckReq bit");
        NS_TEST_EXPECT_MSG_EQ((b[55] << 16 | b[56] << 8 | b[57]), 0x123456, "PSN");
        NS_TEST_EXPECT_MSG_EQ((b[70] << 24 | b[71] << 16 | b[72] << 8 | b[73]), 65536, "DMA len");

        MarkCe(p);
        RoceHeader back;
        p->RemoveHeader(back);
        NS_TEST_EXPECT_MSG_EQ(unsigned(back.ecn), 3u, "CE after marking");
        NS_TEST_EXPECT_MSG_EQ(back.psn, 0x123456u, "PSN round trip");
        NS_TEST_EXPECT_MSG_EQ(Mac48Address(back.dst), Mac48Address("02:00:00:00:00:02"),
                              "destination MAC round trip");
        NS_TEST_EXPECT_MSG_EQ(Mac48Address(back.src), Mac48Address("02:00:00:00:00:01"),
                              "source MAC round trip");
        NS_TEST_EXPECT_MSG_EQ(Ipv4Address(back.ipSrc), Ipv4Address("10.0.0.1"),
                              "IPv4 source round trip");
        NS_TEST_EXPECT_MSG_EQ(Ipv4Address(back.ipDst), Ipv4Address("10.0.0.2"),
                              "IPv4 destination round trip");
        NS_TEST_EXPECT_MSG_EQ(back.va, 0x1122334455667788ULL, "VA round trip");
        NS_TEST_EXPECT_MSG_EQ(back.trailing, 1028u, "payload + ICRC");
        uint8_t ip[20];
        Ptr<Packet> q = Create<Packet>(4);
        back.vlan = false;
        q->AddHeader(back);
        q->CopyData(b, 34);
        std::copy(b + 14, b + 34, ip);
        sum = 0;
        for (int i = 0; i < 20; i += 2)
        {
            sum += ip[i] << 8 | ip[i + 1];
        }
        while (sum >> 16)
        {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        NS_TEST_EXPECT_MSG_EQ(sum, 0xFFFFu, "checksum still verifies after CE");

        PfcHeader pfc;
        pfc.classEnable = 0x08;
        pfc.quanta[3] = 0xFFFF;
        Ptr<Packet> f = Create<Packet>();
        f->AddHeader(pfc);
        NS_TEST_EXPECT_MSG_EQ(f->GetSize(), 60u, "PFC frame padded to the minimum");
        uint8_t c[26];
        f->CopyData(c, 26);
        NS_TEST_EXPECT_MSG_EQ((c[0] << 8 | c[1]), 0x0180, "01-80-C2 multicast");
        NS_TEST_EXPECT_MSG_EQ((c[12] << 8 | c[13]), 0x8808, "MAC Control");
        NS_TEST_EXPECT_MSG_EQ((c[14] << 8 | c[15]), 0x0101, "PFC opcode");
        NS_TEST_EXPECT_MSG_EQ((c[16] << 8 | c[17]), 0x0008, "class-enable vector");
        NS_TEST_EXPECT_MSG_EQ((c[18 + 6] << 8 | c[19 + 6]), 0xFFFF, "timer of class 3");
    }
};

class LineTimingTest : public TestCase
{
  public:
    LineTimingTest()
        : TestCase("Serialization and PFC quanta are exact per link speed")
    {
    }

    void
    DoRun() override
    {
        // 512 bit times: 51.2 ns at 10G, 20.48 ns at 25G, 5.12 ns at 100G, 1.28 ns at 400G.
        NS_TEST_EXPECT_MSG_EQ(PfcQuantum(EthSpeed::GBE10), PicoSeconds(51200), "10G");
        NS_TEST_EXPECT_MSG_EQ(PfcQuantum(EthSpeed::GBE25), PicoSeconds(20480), "25G");
        NS_TEST_EXPECT_MSG_EQ(PfcQuantum(EthSpeed::GBE40), PicoSeconds(12800), "40G");
        NS_TEST_EXPECT_MSG_EQ(PfcQuantum(EthSpeed::GBE100), PicoSeconds(5120), "100G");
        NS_TEST_EXPECT_MSG_EQ(PfcQuantum(EthSpeed::GBE400), PicoSeconds(1280), "400G");
        for (EthSpeed s : {EthSpeed::GBE10, EthSpeed::GBE25, EthSpeed::GBE100, EthSpeed::GBE400})
        {
            // A 1538-byte line slot (1500 B MTU) at the bit rate, computed independently.
            double ps = 1538 * 8 / double(EthBitRate(s)) * 1e12;
            NS_TEST_EXPECT_MSG_EQ(EthWireTime(s, 1538).GetPicoSeconds(), int64_t(std::llround(ps)),
                                  EthSpeedName(s));
        }
        NS_TEST_EXPECT_MSG_EQ(EthLineBytes(46), 84u, "short frame padded to 64 + 20");
        NS_TEST_EXPECT_MSG_EQ(EthLineBytes(1514), 1538u, "full frame");
    }
};

/// Two ports on two nodes joined by a 100 m cable.
struct BackToBack
{
    Ptr<RoceNetDevice> a;
    Ptr<RoceNetDevice> b;
    Ptr<RoceChannel> ch;
};

BackToBack
MakeBackToBack(EthSpeed speed)
{
    BackToBack p{CreateObject<RoceNetDevice>(), CreateObject<RoceNetDevice>(),
                 CreateObject<RoceChannel>()};
    for (const Ptr<RoceNetDevice>& d : {p.a, p.b})
    {
        d->SetAddress(Mac48Address::Allocate());
        d->SetSpeed(speed);
        CreateObject<Node>()->AddDevice(d);
    }
    p.ch->SetAttribute("Length", DoubleValue(100));
    p.a->Attach(p.ch);
    p.b->Attach(p.ch);
    return p;
}

/// The line out of a port takes its delay from the cable, also when the cable's length is set
/// after the ports were attached: a frame arrives its wire time plus the new delay after it
/// starts, in each direction.
class CableLengthTest : public TestCase, public RoceNetDevice::User
{
  public:
    CableLengthTest()
        : TestCase("A cable's length set after its ports are attached: frames arrive with its "
                   "delay")
    {
    }

    void
    Receive(RoceNetDevice* port, const RoceFrame& frame, const FrameBytes&) override
    {
        m_arrivals.emplace_back(port, Simulator::Now());
    }

  private:
    void
    DoRun() override
    {
        const auto [a, b, ch] = MakeBackToBack(EthSpeed::GBE100); // 100 m: 500 ns
        a->SetUser(this);
        b->SetUser(this);
        ch->SetAttribute("Length", DoubleValue(300)); // 1500 ns, after both attached
        a->Enqueue(Create<Packet>(1000), 3);
        b->Enqueue(Create<Packet>(200), 3);
        Simulator::Run();
        // 1000 B + FCS with preamble and SFD at 100 Gb/s: 1012 B = 80.96 ns; 200 B: 16.96 ns.
        NS_TEST_ASSERT_MSG_EQ(m_arrivals.size(), 2u, "both frames arrive");
        for (const auto& [port, at] : m_arrivals)
        {
            const bool atB = port == PeekPointer(b);
            const Time expect = PicoSeconds(atB ? 80960 : 16960) + NanoSeconds(1500);
            NS_TEST_EXPECT_MSG_EQ(at, expect, (atB ? "a -> b" : "b -> a"));
        }
        Simulator::Destroy();
    }

    std::vector<std::pair<RoceNetDevice*, Time>> m_arrivals;
};

/// Two ports back to back; port A streams frames of class 3, port B pauses it.
class PfcTimingTest : public TestCase, public RoceNetDevice::User
{
  public:
    PfcTimingTest(EthSpeed speed, uint16_t quanta, bool xon)
        : TestCase(std::string("PFC: a pause of ") + std::to_string(quanta) + " quanta at "
                   + EthSpeedName(speed) + (xon ? " released early by XON" : " holds the class")
                   + " exactly")
        , m_speed(speed)
        , m_quanta(quanta)
        , m_xon(xon)
    {
    }

    void
    DoRun() override
    {
        const auto [a, b, ch] = MakeBackToBack(m_speed);
        a->SetUser(this);
        b->SetUser(this);
        a->TraceConnectWithoutContext("Sniffer", MakeCallback(&PfcTimingTest::Sniff, this));
        for (int i = 0; i < 200; ++i)
        {
            a->Enqueue(Create<Packet>(1000), 3);
        }
        // A frame of another class is not held by a pause of class 3.
        const Time pauseAt = MicroSeconds(2);
        Simulator::Schedule(pauseAt, &RoceNetDevice::SendPause, b, uint8_t(0x08), m_quanta);
        Simulator::Schedule(pauseAt, [a = a] { a->Enqueue(Create<Packet>(900), 1); });
        const Time xonAt = pauseAt + NanoSeconds(700);
        if (m_xon)
        {
            Simulator::Schedule(xonAt, &RoceNetDevice::SendPause, b, uint8_t(0x08), uint16_t(0));
        }
        Simulator::Run();

        const Time frame = EthWireTime(m_speed, 1000 + 4 + 8 + 12);
        const Time pauseLine = EthWireTime(m_speed, ETH_PREAMBLE_SFD + 64);
        const Time prop = ch->GetPropagationDelay();
        // B is idle (it only receives), so its PAUSE starts at once.
        const Time arrive = pauseAt + pauseLine + prop;
        const Time expectResume
            = m_xon ? xonAt + pauseLine + prop : arrive + PfcQuantum(m_speed) * int64_t(m_quanta);
        // Find the gap in class-3 transmissions.
        Time lastBefore;
        Time firstAfter;
        bool other = false;
        for (auto [t, size] : m_starts)
        {
            if (size == 900)
            {
                other = true;
                NS_TEST_EXPECT_MSG_LT(t, expectResume, "class 1 is not paused");
                continue;
            }
            if (t <= arrive)
            {
                lastBefore = t;
            }
            else if (firstAfter.IsZero())
            {
                firstAfter = t;
            }
        }
        NS_TEST_EXPECT_MSG_EQ(other, true, "class 1 frame sent");
        // The frame in progress when the PAUSE arrived completes; the next class-3 frame waits.
        NS_TEST_EXPECT_MSG_GT(lastBefore + frame, arrive, "a frame was in progress");
        NS_TEST_EXPECT_MSG_EQ(firstAfter, std::max(expectResume, lastBefore + frame),
                              "class 3 resumes exactly when the timer expires / XON arrives");
        NS_TEST_EXPECT_MSG_EQ(a->GetCounters().pauseRx + a->GetCounters().xonRx, m_xon ? 2u : 1u,
                              "PFC frames received");
        NS_TEST_EXPECT_MSG_EQ(m_rx, 201u, "every data frame arrives, none lost");
        Simulator::Destroy();
    }

  private:
    void
    Receive(RoceNetDevice*, const RoceFrame&, const FrameBytes&) override
    {
        ++m_rx;
    }

    void
    Sniff(Ptr<const Packet> p)
    {
        if (p->GetSize() >= 900)
        {
            m_starts.push_back({Simulator::Now(), p->GetSize()});
        }
    }

    EthSpeed m_speed;
    uint16_t m_quanta;
    bool m_xon;
    uint32_t m_rx = 0;
    std::vector<std::pair<Time, uint32_t>> m_starts;
};

/// One port with three DWRR classes backlogged (frames of 1000, 4000 and 64 bytes, quantum
/// 9216): the order of frames on the wire, round by round, worked out by hand from the DWRR
/// rule (Shreedhar and Varghese): a class gets a quantum at its turn, sends while its deficit
/// covers its head frame, and forgets the deficit when its queue empties.
class DwrrOrderTest : public TestCase, public RoceNetDevice::User
{
  public:
    DwrrOrderTest()
        : TestCase("DWRR: three backlogged classes send in the order worked out by hand")
    {
    }

    void
    DoRun() override
    {
        const auto [a, b, ch] = MakeBackToBack(EthSpeed::GBE100);
        b->SetUser(this);
        // The first class-1 frame leaves at once (class 0, first in turn, has nothing); the
        // rest queue behind it. Classes 6 and 7 are strict by default, 0-5 DWRR.
        for (int i = 0; i < 100; ++i)
        {
            a->Enqueue(Create<Packet>(1000), 1);
        }
        for (int i = 0; i < 9; ++i)
        {
            a->Enqueue(Create<Packet>(4000), 2);
        }
        for (int i = 0; i < 1000; ++i)
        {
            a->Enqueue(Create<Packet>(64), 5);
        }
        Simulator::Run();
        // Deficits after each turn: class 1 216, 432, 648, 864, then 10080 sends 10 (80);
        // class 2 1216, 2432, 3648, then 12864 sends 3 and its queue is empty; class 5 sends
        // 9216 / 64 = 144 every turn.
        const std::vector<std::pair<uint32_t, int>> expected{
            {1000, 9}, {4000, 2}, {64, 144}, {1000, 9}, {4000, 2}, {64, 144},  {1000, 9},
            {4000, 2}, {64, 144}, {1000, 9}, {4000, 3}, {64, 144}, {1000, 10}, {64, 144},
        };
        NS_TEST_ASSERT_MSG_GT_OR_EQ(m_runs.size(), expected.size(), "turns");
        for (std::size_t i = 0; i < expected.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(m_runs[i].first, expected[i].first, "frame size, turn " << i);
            NS_TEST_EXPECT_MSG_EQ(m_runs[i].second, expected[i].second, "frames, turn " << i);
        }
        NS_TEST_EXPECT_MSG_EQ(m_rx, 1109u, "every frame arrives");
        Simulator::Destroy();
    }

  private:
    void
    Receive(RoceNetDevice*, const RoceFrame& p, const FrameBytes&) override
    {
        ++m_rx;
        if (m_runs.empty() || m_runs.back().first != p.GetSize())
        {
            m_runs.push_back({p.GetSize(), 0});
        }
        ++m_runs.back().second;
    }

    uint32_t m_rx = 0;
    std::vector<std::pair<uint32_t, int>> m_runs; ///< (frame size, frames in a row)
};

class HeadroomFormulaTest : public RoceTestCase
{
  public:
    HeadroomFormulaTest()
        : RoceTestCase(
            "MMU: headroom formula from cable, speed and MTU; shared pool is what is left")
    {
    }

    void
    DoRun() override
    {
        Config::SetDefault("ns3::RoceChannel::Length", DoubleValue(100));
        RoceHelper h;
        RoceTopology t = h.Leaf(4, EthSpeed::GBE25);
        Ptr<RoceSwitch> sw = t.switches[0];
        // 2 x 500 ns x 25 Gb/s = 3125 B on the cable; three 4218 B frames (+VLAN) with FCS,
        // preamble and gap = 3 x 4242 B (the one crossing the threshold, the one leaving this
        // port when XOFF is decided, the one the peer has started); one PFC frame = 84 B.
        const uint32_t expect = 3125 + 3 * 4242 + 84;
        NS_TEST_EXPECT_MSG_EQ(sw->HeadroomFormula(0), expect, "headroom of a 100 m 25G port");
        NS_TEST_EXPECT_MSG_EQ(sw->GetHeadroom(3), expect, "applied to every port");
        const uint64_t buffer = 12 * 1024 * 1024;
        NS_TEST_EXPECT_MSG_EQ(sw->GetSharedPoolBytes(),
                              buffer - 4 * 8 * 3072 - 4 * uint64_t(expect),
                              "shared = buffer - reserved - lossless headroom");
    }
};

class LosslessIncastTest : public RoceTestCase
{
  public:
    LosslessIncastTest()
        : RoceTestCase("PFC: zero drops for incast degrees 2..64 with formula headroom; too little "
                       "headroom drops and counts it")
    {
    }

    void
    DoRun() override
    {
        for (uint32_t n : {2u, 8u, 16u, 32u, 64u})
        {
            auto r = Incast(n, "1ms")
                         .Set("incast", "MessageSize", "262144")
                         .Set("incast", "QueueDepth", "2")
                         .Class("ns3::RoceSwitch", "BufferSize", "4000000")
                         .Class("ns3::RoceChannel", "Length", "300")
                         .Run();
            NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "lossless at degree " << n);
            if (n >= 8)
            {
                NS_TEST_EXPECT_MSG_GT(Metric(r, "pause_frames_sent"), 0.0, "PFC engaged " << n);
            }
            // The receiver's line is the bottleneck: PFC keeps it busy.
            NS_TEST_EXPECT_MSG_GT(Metric(r, "total_goodput_Gbps"), 24.0, "line kept busy " << n);
        }
        auto r = Incast(16, "1ms")
                     .Set("incast", "MessageSize", "262144")
                     .Class("ns3::RoceSwitch", "BufferSize", "2000000")
                     .Class("ns3::RoceSwitch", "Headroom", "4500")
                     .Class("ns3::RoceChannel", "Length", "300")
                     .Run();
        NS_TEST_EXPECT_MSG_GT(Metric(r, "drops_headroom"), 0.0, "too little headroom drops");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), Metric(r, "drops_headroom"), "reason counted");
    }
};

class GoBackNTest : public RoceTestCase
{
  public:
    GoBackNTest()
        : RoceTestCase("Lossy incast: tail drops are recovered by NAK and go-back-N; every message "
                       "completes and every byte is delivered once")
    {
    }

    void
    DoRun() override
    {
        const uint32_t msgs = 4;
        const uint32_t size = 131072;
        for (const char* op : {"Write", "Read", "Send"})
        {
            auto r = Incast(8, "100ms")
                         .Set("incast", "Operation", op)
                         .Set("incast", "MessageSize", std::to_string(size))
                         .Set("incast", "Messages", std::to_string(msgs))
                         .Set("incast", "QueueDepth", "2")
                         .Class("ns3::RoceSwitch", "PfcEnabled", "false")
                         .Class("ns3::RoceSwitch", "BufferSize", "300000")
                         // Short enough that lost message tails recover within the run.
                         .Class("ns3::RdmaNic", "LocalAckTimeout", "6") // 262 us
                         .Run();
            NS_TEST_EXPECT_MSG_GT(Metric(r, "drops_buffer"), 0.0, op << ": the fabric dropped");
            NS_TEST_EXPECT_MSG_GT(Metric(r, "retransmitted_packets"), 0.0, op << ": resent");
            NS_TEST_EXPECT_MSG_EQ(Metric(r, "messages_completed"), 8.0 * msgs, op << ": all done");
            // Goodput x window = bytes delivered in order: exactly the messages, no duplicate.
            double bytes = Metric(r, "total_goodput_Gbps") * 1e9 / 8 * Metric(r, "window_s");
            NS_TEST_EXPECT_MSG_EQ_TOL(bytes, 8.0 * msgs * size, 1.0, op << ": bytes once");
        }
    }
};

class ClosedFormGoodputTest : public RoceTestCase
{
  public:
    ClosedFormGoodputTest()
        : RoceTestCase(
            "One QP streaming RDMA WRITE: goodput = line rate x payload over line bytes at "
            "MTU 1024, 2048, 4096 on 25 and 100 GbE (0.5 %)")
    {
    }

    void
    DoRun() override
    {
        const uint32_t size = 1 << 20;
        for (const char* speed : {"25GbE", "100GbE"})
        {
            for (uint32_t mtu : {1024u, 2048u, 4096u})
            {
                lfsim::TestRun run("roce", "2ms");
                run.Topology("PointToPoint", {{"HostSpeed", speed}})
                    .Workload("write", "Incast",
                              {{"Destinations", "h0"},
                               {"MessageSize", std::to_string(size)},
                               {"QueueDepth", "4"}})
                    .Class("ns3::Report", "Warmup", "200us")
                    .Class("ns3::RdmaNic", "PathMtu", std::to_string(mtu));
                auto r = run.Run();
                // Per message: n packets of mtu payload, each with Eth 14 + IPv4 20 + UDP 8 +
                // BTH 12 + ICRC 4 + FCS 4 + preamble 8 + IFG 12; the first adds RETH 16.
                const double n = size / mtu;
                const double line = n * (mtu + 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12) + 16;
                const double rate = std::string(speed) == "25GbE" ? 25e9 : 100e9;
                const double expect = rate * size / line / 1e9;
                NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r, "total_goodput_Gbps"), expect, expect * 0.005,
                                          speed << " MTU " << mtu);
            }
        }
    }
};

class EcnCnpTest : public RoceTestCase
{
  public:
    EcnCnpTest()
        : RoceTestCase("ECN: marks only above Kmin; receiver sends at most one CNP per QP per "
                       "CnpInterval")
    {
    }

    void
    DoRun() override
    {
        auto off = Incast(8, "1ms").Set("incast", "MessageSize", "1048576").Run();
        NS_TEST_EXPECT_MSG_EQ(Metric(off, "ecn_marked"), 0.0, "marking off by default");
        auto r = Incast(8, "1ms")
                     .Set("incast", "MessageSize", "1048576")
                     .Class("ns3::RoceSwitch", "EcnEnabled", "true")
                     .Class("ns3::RoceSwitch", "Kmin", "20000")
                     .Class("ns3::RoceSwitch", "Kmax", "100000")
                     .Class("ns3::RoceSwitch", "Pmax", "0.2")
                     .Run();
        NS_TEST_EXPECT_MSG_GT(Metric(r, "ecn_marked"), 0.0, "queue above Kmax marks");
        NS_TEST_EXPECT_MSG_GT(Metric(r, "cnps_sent"), 0.0, "CNPs generated");
        // 1 ms / 50 us = 20 intervals: at most 21 CNPs per QP, 8 QPs.
        NS_TEST_EXPECT_MSG_LT_OR_EQ(Metric(r, "cnps_sent"), 8.0 * 21, "CNP rate limit");
        const auto& tx = Column(r, "ports", "cnp_tx");
        const auto& rx = Column(r, "ports", "cnp_rx");
        NS_TEST_EXPECT_MSG_EQ(
            std::accumulate(tx.begin(), tx.end(), 0.0), std::accumulate(rx.begin(), rx.end(), 0.0),
            "every CNP reaches its sender (class 6 is strict priority and never overflows here)");
    }
};

class ConservationTest : public RoceTestCase
{
  public:
    ConservationTest()
        : RoceTestCase("Conservation: after the fabric drains, frames sent = frames received + "
                       "frames dropped, with or without PFC")
    {
    }

    void
    DoRun() override
    {
        for (bool pfc : {true, false})
        {
            Config::SetDefault("ns3::SwitchMmu::PfcEnabled", BooleanValue(pfc));
            Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(400000));
            RoceHelper h;
            std::vector<uint32_t> leafOf{0, 1, 1, 1, 1, 1, 1};
            RoceTopology t = h.LeafSpine(leafOf, 2, 2, EthSpeed::GBE25, EthSpeed::GBE25);
            for (uint32_t i = 1; i < leafOf.size(); ++i)
            {
                auto [a, b] = t.nics[i]->Connect(t.nics[0]);
                for (int m = 0; m < 3; ++m)
                {
                    a->Post(RdmaOp::WRITE, 200000);
                }
            }
            Simulator::Run(); // until no event is left: everything delivered or dropped
            uint64_t tx = 0;
            uint64_t rx = 0;
            uint64_t drops = 0;
            for (auto& p : t.ports)
            {
                tx += p->GetCounters().framesTx;
                rx += p->GetCounters().framesRx;
            }
            NS_TEST_EXPECT_MSG_EQ(tx, rx, "cables lose nothing");
            for (uint32_t s = 0; s < t.switches.size(); ++s)
            {
                // Data frames in = data frames out + drops (PFC frames end at the port).
                uint64_t in = 0;
                uint64_t out = 0;
                for (uint32_t i = 0; i < t.ports.size(); ++i)
                {
                    if (t.portSwitch[i] != int32_t(s))
                    {
                        continue;
                    }
                    const auto& c = t.ports[i]->GetCounters();
                    in += c.framesRx - c.pauseRx - c.xonRx;
                    out += c.framesTx - c.pauseTx - c.xonTx;
                }
                drops += t.switches[s]->GetDrops();
                NS_TEST_EXPECT_MSG_EQ(in, out + t.switches[s]->GetDrops(),
                                      "switch " << s << " conserves frames, PFC " << pfc);
                NS_TEST_EXPECT_MSG_EQ(t.switches[s]->GetBufferedBytes(), 0u, "buffers empty");
            }
            if (pfc)
            {
                NS_TEST_EXPECT_MSG_EQ(drops, 0u, "no drop with PFC");
            }
            for (uint32_t i = 1; i < leafOf.size(); ++i)
            {
                auto qp = t.nics[i]->GetQueuePairs()[0];
                NS_TEST_EXPECT_MSG_EQ(qp->GetCompleted(), 3u, "every write completed");
                NS_TEST_EXPECT_MSG_EQ(t.nics[0]->GetQueuePairs()[i - 1]->GetBytesReceived(),
                                      600000u, "bytes delivered once");
            }
            Simulator::Destroy();
        }
    }
};

class DeterminismTest : public RoceTestCase
{
  public:
    DeterminismTest()
        : RoceTestCase("Same seed, same metrics; another seed changes the random start times")
    {
    }

    void
    DoRun() override
    {
        // Eight senders to h0 and a victim flow from h1 to an idle h9, each flow starting at a
        // random time within 20 us.
        auto run = [](uint32_t seed)
        {
            return Incast(8, "500us", seed)
                .Workload("victim", "Incast", {{"Hosts", "h1"}, {"Destinations", "h9"}})
                .Set("topology", "Hosts", "10")
                .SetEveryWorkload("StartSpread", "20us")
                .Class("ns3::RoceSwitch", "EcnEnabled", "true")
                .Run();
        };
        auto r1 = run(7);
        auto r2 = run(7);
        auto r3 = run(8);
        for (const auto& [k, v] : r1.metrics)
        {
            NS_TEST_EXPECT_MSG_EQ((v == r2.metrics.at(k)), true, "metric " << k);
        }
        NS_TEST_EXPECT_MSG_EQ(r1.events, r2.events, "same event count");
        NS_TEST_EXPECT_MSG_NE(r1.events, r3.events, "another seed, another run");
    }
};

class ReadThenWriteTest : public TestCase
{
  public:
    ReadThenWriteTest()
        : TestCase("One QP, a READ then a WRITE: the WRITE's ACK does not overtake the read "
                   "responses, both complete with all their bytes")
    {
    }

    void
    DoRun() override
    {
        RoceHelper h;
        RoceTopology t = h.PointToPoint(EthSpeed::GBE25);
        auto [a, b] = t.nics[0]->Connect(t.nics[1]);
        std::vector<uint32_t> done;
        a->SetCompletionCallback(MakeCallback(+[](std::vector<uint32_t>* d, Ptr<RdmaQueuePair>,
                                                  uint64_t, uint32_t bytes, Time) {
                                     d->push_back(bytes);
                                 }).Bind(&done));
        a->Post(RdmaOp::READ, 1 << 20);
        a->Post(RdmaOp::WRITE, 4096);
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(done.size(), 2u, "both complete");
        NS_TEST_EXPECT_MSG_EQ(a->GetBytesReceived(), uint64_t(1 << 20), "all read data arrived");
        NS_TEST_EXPECT_MSG_EQ(b->GetBytesReceived(), 4096u, "write data arrived");
        NS_TEST_EXPECT_MSG_EQ(a->GetRetransmittedPackets(), 0u, "no retransmission needed");
        Simulator::Destroy();
    }
};

// Host interface (PCIe). Constants from the PCIe base spec as public sources document them
// (see the module doc), written here independently of the model's code: 8 GT/s (gen 3) and
// 16 GT/s (gen 4) per lane, 128b/130b coding; per TLP a 4-DW memory-write header (16 B) plus
// 8 B of framing, sequence number and LCRC; Max_Payload_Size 256.
double
PcieRawBytesPerS(double gtps, double lanes)
{
    return gtps * lanes * 128.0 / 130.0 / 8.0;
}

constexpr double TLP_OVERHEAD_MWR64 = 16 + 8; // header + STP/sequence/LCRC
constexpr double TLP_OVERHEAD_CPLD = 12 + 8;

class PcieRateTest : public RoceTestCase
{
  public:
    PcieRateTest()
        : RoceTestCase("Host interface: effective payload rates of gen3 x8 and gen4 x16 with "
                       "MPS 256 from the spec constants; bad widths are rejected")
    {
    }

    void
    DoRun() override
    {
        struct Point
        {
            uint32_t gen;
            uint32_t lanes;
            double gtps;
        };

        for (const Point& p : {Point{3, 8, 8e9}, Point{4, 16, 16e9}})
        {
            Config::SetDefault("ns3::RdmaHostInterface::PcieGeneration", UintegerValue(p.gen));
            Config::SetDefault("ns3::RdmaHostInterface::PcieLanes", UintegerValue(p.lanes));
            RoceHelper h;
            RoceTopology t = h.PointToPoint(EthSpeed::GBE100);
            const double raw = PcieRawBytesPerS(p.gtps, p.lanes);
            const double rx = raw * 256 / (256 + TLP_OVERHEAD_MWR64);
            const double tx = raw * 256 / (256 + TLP_OVERHEAD_CPLD);
            NS_TEST_EXPECT_MSG_EQ_TOL(t.nics[0]->GetHostRxPayloadRate(), rx, rx * 1e-12,
                                      "gen" << p.gen << " x" << p.lanes << " host writes");
            NS_TEST_EXPECT_MSG_EQ_TOL(t.nics[0]->GetHostTxPayloadRate(), tx, tx * 1e-12,
                                      "gen" << p.gen << " x" << p.lanes << " read completions");
            Simulator::Destroy();
        }
        // gen3 x8: 7.8769 GB/s after coding, 7.2017 GB/s of payload in 256-B memory writes.
        NS_TEST_EXPECT_MSG_EQ_TOL(PcieRawBytesPerS(8e9, 8) * 256 / 280 / 1e9, 7.2017, 1e-4,
                                  "the number quoted in the docs");
        Config::SetDefault("ns3::RdmaHostInterface::PcieGeneration", UintegerValue(3));
        Config::SetDefault("ns3::RdmaHostInterface::PcieLanes", UintegerValue(3));
        bool threw = false;
        try
        {
            RoceHelper h;
            h.PointToPoint(EthSpeed::GBE100);
        }
        catch (const std::invalid_argument& e)
        {
            threw = std::string(e.what()).find("RdmaNic.PcieLanes") == 0;
        }
        NS_TEST_EXPECT_MSG_EQ(threw, true, "x3 is not a PCIe link width");
    }
};

class PcieBoundWriteTest : public RoceTestCase
{
  public:
    PcieBoundWriteTest()
        : RoceTestCase("Host interface: RDMA WRITE streams at 100GbE into a gen3 x8 host run "
                       "at the PCIe bound with PFC from the host and no drop; gen4 x16 is "
                       "Ethernet-bound; disabled is the model without it")
    {
    }

    static lfsim::RunResult
    Run(const std::string& gen, const std::string& lanes)
    {
        // Two senders: each one's own host interface (read completions, 58.4 Gb/s at gen3 x8)
        // is only 1.4 % faster than the receiver's, so one alone would fill the receive buffer
        // too slowly to show PFC within the run.
        return Stream()
            .Class("ns3::RdmaNic", "PcieGeneration", gen)
            .Class("ns3::RdmaNic", "PcieLanes", lanes)
            .Run();
    }

    /// h1 and h2 writing 1 MiB messages, four outstanding, to h0 at 100GbE.
    static lfsim::TestRun
    Stream()
    {
        return Incast(2, "2ms")
            .Set("topology", "HostSpeed", "100GbE")
            .Set("incast", "MessageSize", "1048576")
            .Set("incast", "QueueDepth", "4")
            .Class("ns3::Report", "Warmup", "300us");
    }

    static double
    HostPauses(const lfsim::RunResult& r, const char* label)
    {
        const auto& labels = r.labels.at("ports");
        const auto& pause = Column(r, "ports", "pause_tx");
        for (size_t i = 0; i < labels.size(); ++i)
        {
            if (labels[i] == label)
            {
                return pause[i];
            }
        }
        return -1;
    }

    void
    DoRun() override
    {
        // 1 MiB messages in 4096-B packets. Into host memory each packet is 16 memory writes of
        // 256 B, each with 24 B of TLP overhead: the receiver's host interface carries
        // 4096 x 280/256 bytes per packet at 8 GT/s x 8 x 128/130. The sender's reads
        // (completions, 20 B overhead) are faster, so the receiver's side bounds the stream.
        const double gen3x8 = PcieRawBytesPerS(8e9, 8) * 256 / (256 + TLP_OVERHEAD_MWR64);
        auto r = Run("3", "8");
        const double gbps = gen3x8 * 8 / 1e9; // 57.61 Gb/s
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r, "total_goodput_Gbps"), gbps, gbps * 0.005,
                                  "PCIe-bound goodput");
        NS_TEST_EXPECT_MSG_EQ(Metric(r, "drops"), 0.0, "lossless");
        NS_TEST_EXPECT_MSG_GT(HostPauses(r, "h0"), 0.0, "the receiving host sent PAUSE");
        NS_TEST_EXPECT_MSG_GT(HostPauses(r, "sw0/p1"), 0.0, "and the switch paused a sender");

        // gen4 x16 carries 28.8 GB/s: the 100GbE line bounds the stream (closed form as in
        // ClosedFormGoodputTest), and the host never pauses.
        auto r4 = Run("4", "16");
        const double n = 1048576.0 / 4096;
        const double line = n * (4096 + 14 + 20 + 8 + 12 + 4 + 4 + 8 + 12) + 16;
        const double eth = 100e9 * 1048576 / line / 1e9;
        NS_TEST_EXPECT_MSG_EQ_TOL(Metric(r4, "total_goodput_Gbps"), eth, eth * 0.005,
                                  "Ethernet-bound goodput");
        NS_TEST_EXPECT_MSG_EQ(HostPauses(r4, "h0"), 0.0, "no PAUSE from the host");
        NS_TEST_EXPECT_MSG_EQ(Metric(r4, "drops"), 0.0, "lossless");

        // Disabled: the same run as without the attributes, event for event.
        auto off = Run("0", "8");
        auto def = Stream().Run();
        NS_TEST_EXPECT_MSG_EQ(off.events, def.events, "PcieGeneration 0 changes nothing");
        NS_TEST_EXPECT_MSG_EQ(Metric(off, "total_goodput_Gbps"), Metric(def, "total_goodput_Gbps"),
                              "same goodput");
    }
};

class RocePfcEcnTestSuite : public TestSuite
{
  public:
    RocePfcEcnTestSuite()
        : TestSuite("roce-pfc-ecn", UNIT)
    {
        AddTestCase(new WireFormatTest, TestCase::QUICK);
        AddTestCase(new LineTimingTest, TestCase::QUICK);
        AddTestCase(new CableLengthTest, TestCase::QUICK);
        AddTestCase(new PfcTimingTest(EthSpeed::GBE25, 100, false), TestCase::QUICK);
        AddTestCase(new PfcTimingTest(EthSpeed::GBE100, 1000, false), TestCase::QUICK);
        AddTestCase(new PfcTimingTest(EthSpeed::GBE25, 0xFFFF, true), TestCase::QUICK);
        AddTestCase(new DwrrOrderTest, TestCase::QUICK);
        AddTestCase(new HeadroomFormulaTest, TestCase::QUICK);
        AddTestCase(new LosslessIncastTest, TestCase::QUICK);
        AddTestCase(new GoBackNTest, TestCase::QUICK);
        AddTestCase(new ClosedFormGoodputTest, TestCase::QUICK);
        AddTestCase(new EcnCnpTest, TestCase::QUICK);
        AddTestCase(new ConservationTest, TestCase::QUICK);
        AddTestCase(new DeterminismTest, TestCase::QUICK);
        AddTestCase(new ReadThenWriteTest, TestCase::QUICK);
        AddTestCase(new PcieRateTest, TestCase::QUICK);
        AddTestCase(new PcieBoundWriteTest, TestCase::QUICK);
    }
};

RocePfcEcnTestSuite g_suite;

} // namespace
