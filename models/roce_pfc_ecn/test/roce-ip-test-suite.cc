/*
 * IPv4 hosts on the lossless Ethernet model: ns-3 TCP over RoceNetDevice host ports through a
 * RoceSwitch (RoceHelper::InstallInternet). Closed-form TCP goodput, incast in a PFC class
 * (no drop, PAUSE sent) and in a lossy class (drops, retransmissions, the transfer completes),
 * and RoCE and TCP sharing one class of one link.
 */
#include "ethernet-speed.h"
#include "lfsim-test.h"
#include "ns3/boolean.h"
#include "ns3/bulk-send-application.h"
#include "ns3/bulk-send-helper.h"
#include "ns3/config.h"
#include "ns3/inet-socket-address.h"
#include "ns3/packet-sink-helper.h"
#include "ns3/packet-sink.h"
#include "ns3/simulator.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"
#include "rdma-nic.h"
#include "roce-helper.h"
#include "roce-switch.h"

#include <algorithm>
#include <map>

using namespace ns3;

namespace
{

constexpr uint16_t PORT = 5001;
constexpr double LINE_25G = 25e9;
/// TCP payload per segment at the default RoceHostIp.Mtu 1500: 1500 - IPv4 20 - TCP 20 -
/// timestamp option 12.
constexpr uint32_t MSS = 1448;
/// Line bytes of a full segment: MSS + TCP 32 + IPv4 20 + Ethernet 14 + FCS 4 + preamble 8 +
/// inter-frame gap 12.
constexpr uint32_t SEGMENT_LINE = MSS + 32 + 20 + 14 + 4 + 8 + 12;

/// `senders` hosts stream `bytes` each (0: without end) to the last host of a 25GbE leaf.
struct TcpLeaf
{
    RoceTopology t;
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<Ptr<BulkSendApplication>> apps;
    std::map<const TcpSocketBase*, uint32_t> highest; ///< per socket: highest sequence sent
    uint64_t retransmitted = 0;

    TcpLeaf(uint32_t senders, uint64_t bytes)
    {
        RoceHelper h;
        t = h.Leaf(senders + 1, EthSpeed::GBE25);
        h.AssignStreams(t, 100);
        h.InstallInternet(t, 200);
        const uint32_t rx = senders;
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), PORT));
        sinks.push_back(DynamicCast<PacketSink>(sink.Install(t.hosts.Get(rx)).Get(0)));
        for (uint32_t i = 0; i < senders; ++i)
        {
            BulkSendHelper bulk("ns3::TcpSocketFactory",
                                InetSocketAddress(t.hostIps[rx]->GetAddress(), PORT));
            bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
            // Writes of one segment: the socket buffer refills in whole segments as ACKs free
            // it, so every segment is full (the closed form below counts full segments).
            bulk.SetAttribute("SendSize", UintegerValue(MSS));
            apps.push_back(DynamicCast<BulkSendApplication>(bulk.Install(t.hosts.Get(i)).Get(0)));
        }
        // The sockets exist once the applications have started.
        Simulator::Schedule(NanoSeconds(1), &TcpLeaf::HookSenders, this);
    }

    void
    HookSenders()
    {
        for (auto& a : apps)
        {
            a->GetSocket()->TraceConnectWithoutContext("Tx", MakeCallback(&TcpLeaf::Tx, this));
        }
    }

    /// A data segment that starts below the highest sequence already sent is a retransmission.
    void
    Tx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
    {
        if (p->GetSize() == 0)
        {
            return;
        }
        uint32_t& high = highest[PeekPointer(s)];
        const uint32_t seq = h.GetSequenceNumber().GetValue();
        if (high != 0 && seq < high)
        {
            ++retransmitted;
        }
        high = std::max(high, seq + p->GetSize());
    }

    uint64_t
    Received() const
    {
        return sinks[0]->GetTotalRx();
    }
};

class TcpGoodputTest : public lfsim::ModelTestCase
{
  public:
    TcpGoodputTest()
        : lfsim::ModelTestCase("TCP bulk transfer between two hosts of a 25GbE leaf: goodput = "
                               "line rate x 1448 over 1538 (payload over the line bytes of a "
                               "segment), within 0.5 %")
    {
    }

    void
    DoRun() override
    {
        TcpLeaf x(1, 0);
        uint64_t at1 = 0;
        const Time t1 = MilliSeconds(1);
        const Time t2 = MilliSeconds(4);
        Simulator::Schedule(t1, [&] { at1 = x.Received(); });
        Simulator::Stop(t2);
        Simulator::Run();
        const double goodput = (x.Received() - at1) * 8.0 / (t2 - t1).GetSeconds();
        // Every segment is full; the ACKs go the other way and do not take from this line.
        const double bound = LINE_25G * MSS / SEGMENT_LINE; // 23.537 Gbit/s
        // The window's edges may cut one segment: 1448 B over 3 ms is 1.6e-4 of the bound.
        const double edge = MSS * 8.0 / (t2 - t1).GetSeconds();
        NS_TEST_EXPECT_MSG_LT_OR_EQ(goodput, bound + edge, "never above the line");
        NS_TEST_EXPECT_MSG_GT(goodput, bound * 0.995, "TCP fills the line (window >> BDP)");
        NS_TEST_EXPECT_MSG_EQ(x.retransmitted, 0u, "no loss, no retransmission");
        NS_TEST_EXPECT_MSG_EQ(x.t.switches[0]->GetDrops(), 0u, "no drop");
    }
};

class TcpIncastTest : public lfsim::ModelTestCase
{
  public:
    TcpIncastTest(bool lossless)
        : lfsim::ModelTestCase(
            lossless ? "TCP 2-to-1 incast in the PFC class (DSCP 26, class 3), small buffer: "
                       "zero drops, PAUSE frames sent, every byte delivered"
                     : "TCP 2-to-1 incast in a lossy class (DSCP 0, class 0), small buffer: "
                       "drops and retransmissions, yet every byte is delivered")
        , m_lossless(lossless)
    {
    }

    void
    DoRun() override
    {
        // 160 kB - 3 ports x 8 classes x 3072 reserved - 3 x 12873 headroom (class 3) leaves
        // 47.6 kB of shared pool, of which one ingress may hold Alpha = 1/8 of the free part:
        // the two windows (up to 128 KiB of socket buffer each) do not fit.
        Config::SetDefault("ns3::SwitchMmu::BufferSize", UintegerValue(160000));
        Config::SetDefault("ns3::RoceHostIp::Dscp", UintegerValue(m_lossless ? 26 : 0));
        // Linux's timers (TCP_RTO_MIN 200 ms, delayed ACK at most 40 ms) instead of ns-3's 1 s
        // and 200 ms: a lost tail costs less simulated time; the RTO stays above the delayed
        // ACK, or a lone segment after a timeout would time out again and again.
        Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
        Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
        const uint64_t bytes = 2000000;
        TcpLeaf x(2, bytes);
        Simulator::Stop(Seconds(10));
        Simulator::Run();
        const auto& c = x.t.switches[0]->GetCounters();
        NS_TEST_EXPECT_MSG_EQ(x.Received(), 2 * bytes, "both transfers complete, bytes once");
        if (m_lossless)
        {
            NS_TEST_EXPECT_MSG_EQ(x.t.switches[0]->GetDrops(), 0u, "lossless: no drop");
            NS_TEST_EXPECT_MSG_GT(c.xoffSent, 0u, "PFC paused the senders");
            NS_TEST_EXPECT_MSG_GT(x.t.hostPorts[0]->GetCounters().pauseRx, 0u,
                                  "a sender's port received PAUSE");
            NS_TEST_EXPECT_MSG_EQ(x.retransmitted, 0u, "nothing to retransmit");
        }
        else
        {
            NS_TEST_EXPECT_MSG_GT(c.dropsBuffer, 0u, "lossy: the buffer overflowed");
            NS_TEST_EXPECT_MSG_EQ(c.xoffSent, 0u, "no PFC in a lossy class");
            NS_TEST_EXPECT_MSG_GT(x.retransmitted, 0u, "TCP resent what was dropped");
        }
    }

  private:
    bool m_lossless;
};

class RdmaTcpShareTest : public lfsim::ModelTestCase
{
  public:
    RdmaTcpShareTest()
        : lfsim::ModelTestCase("RDMA WRITE and TCP from one host to another in the same class: "
                               "the host port takes them alternately by bytes, each gets half "
                               "the line (within 2 %)")
    {
    }

    void
    DoRun() override
    {
        TcpLeaf x(1, 0);
        auto [qp, peer] = x.t.nics[0]->Connect(x.t.nics[1]);
        // Keep the QP busy: 4 writes of 1 MiB outstanding all the time.
        qp->SetCompletionCallback(MakeCallback(&RdmaTcpShareTest::Repost));
        for (int i = 0; i < 4; ++i)
        {
            qp->Post(RdmaOp::WRITE, 1 << 20);
        }
        uint64_t tcp1 = 0;
        uint64_t rdma1 = 0;
        const Time t1 = MilliSeconds(1);
        const Time t2 = MilliSeconds(3);
        Simulator::Schedule(t1,
                            [&]
                            {
                                tcp1 = x.Received();
                                rdma1 = peer->GetBytesReceived();
                            });
        Simulator::Stop(t2);
        Simulator::Run();
        const double span = (t2 - t1).GetSeconds();
        const double tcp = (x.Received() - tcp1) * 8.0 / span;
        const double rdma = (peer->GetBytesReceived() - rdma1) * 8.0 / span;
        // Half the line each in line bytes: TCP 1448 of 1538, RDMA WRITE 4096 of 4096 + 14 +
        // 20 + 8 + 12 + 4 (ICRC) + 4 + 8 + 12 = 4178 (RETH once per MiB, negligible).
        const double tcpShare = LINE_25G / 2 * MSS / SEGMENT_LINE;
        const double rdmaShare = LINE_25G / 2 * 4096 / 4178;
        NS_TEST_EXPECT_MSG_EQ_TOL(tcp, tcpShare, tcpShare * 0.02, "TCP gets half the line");
        NS_TEST_EXPECT_MSG_EQ_TOL(rdma, rdmaShare, rdmaShare * 0.02, "RDMA gets half the line");
        NS_TEST_EXPECT_MSG_EQ(x.t.switches[0]->GetDrops(), 0u, "no drop");
    }

  private:
    static void
    Repost(Ptr<RdmaQueuePair> qp, uint64_t, uint32_t bytes, Time)
    {
        qp->Post(RdmaOp::WRITE, bytes);
    }
};

class RoceIpTestSuite : public TestSuite
{
  public:
    RoceIpTestSuite()
        : TestSuite("roce-ip", UNIT)
    {
        AddTestCase(new TcpGoodputTest, TestCase::QUICK);
        AddTestCase(new TcpIncastTest(true), TestCase::QUICK);
        AddTestCase(new TcpIncastTest(false), TestCase::QUICK);
        AddTestCase(new RdmaTcpShareTest, TestCase::QUICK);
    }
};

RoceIpTestSuite g_roceIpTestSuite;

} // namespace
