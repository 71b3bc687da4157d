#include "fc-fabric.h"

#include "fc-applications.h"
#include "fc-helper.h"
#include "fcp.h"
#include "lfsim-attributes.h"
#include "lfsim-deadlock.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FcScenario);

TypeId
FcScenario::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcScenario")
              .SetParent<Object>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcScenario>()
              .AddAttribute("Topology",
                            "PointToPoint (2 hosts), Star or Leaf (all hosts on one switch), "
                            "TwoSwitch (host 0 on switch 1, the others on switch 0, one ISL), "
                            "LeafSpine (Leaves leaves each linked to every one of Spines spines; "
                            "host 0 on leaf 0, hosts 1.. round-robin over leaves 1..Leaves-1) or "
                            "Ring (RingSwitches switches, s linked to s+1 mod n, host i on switch "
                            "i writing messages to the host RingHops switches on; Hosts does not "
                            "apply, Workload must be Stream or Incast).",
                            EnumValue(POINT_TO_POINT), MakeEnumAccessor(&FcScenario::topology),
                            MakeEnumChecker(POINT_TO_POINT, "PointToPoint", STAR, "Star",
                                            TWO_SWITCH, "TwoSwitch", LEAF, "Leaf", LEAF_SPINE,
                                            "LeafSpine", RING, "Ring"))
              .AddAttribute("Workload",
                            "Stream: hosts 1.. stream full frames to host 0. PingPong: host 1 "
                            "ping-pongs messages with host 0. Fcp: hosts 1.. are FCP initiators "
                            "of target host 0. Incast: Senders hosts write MessageSize messages to "
                            "host 0 (FcMessageSender), plus a victim flow if Victim.",
                            EnumValue(STREAM), MakeEnumAccessor(&FcScenario::workload),
                            MakeEnumChecker(STREAM, "Stream", PING_PONG, "PingPong", FCP, "Fcp",
                                            INCAST, "Incast"))
              .AddAttribute("Hosts",
                            "Number of hosts (Star, Leaf, TwoSwitch, LeafSpine); PointToPoint "
                            "always has 2. Incast ignores it (1 + Senders, plus the victim's).",
                            UintegerValue(2), MakeUintegerAccessor(&FcScenario::hosts),
                            MakeUintegerChecker<uint32_t>(2, 4096))
              .AddAttribute("Warmup", "Throughput and latency statistics count from this time on.",
                            TimeValue(Time(0)), MakeTimeAccessor(&FcScenario::warmup),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("StartSpread",
                            "Senders start at uniform random times in [0, StartSpread) drawn from "
                            "the scenario seed (0: all at once).",
                            TimeValue(Time(0)), MakeTimeAccessor(&FcScenario::startSpread),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("Senders", "Incast: hosts 1..Senders each write messages to host 0.",
                            UintegerValue(16), MakeUintegerAccessor(&FcScenario::senders),
                            MakeUintegerChecker<uint32_t>(1, 4095))
              .AddAttribute("Victim",
                            "Incast: add a victim flow that shares an upstream port with the "
                            "incast but not its bottleneck. Leaf: host 1 also writes to an extra "
                            "host (last). LeafSpine: an extra host on leaf 1 writes to an extra "
                            "host on leaf 0.",
                            BooleanValue(false), MakeBooleanAccessor(&FcScenario::victim),
                            MakeBooleanChecker())
              .AddAttribute(
                  "MessageSize",
                  "Incast and Ring: bytes per message (FCP WRITE: FCP_CMND, the data as first "
                  "burst in FcMessageSender MaxPayload frames, FCP_RSP).",
                  UintegerValue(65536), MakeUintegerAccessor(&FcScenario::messageSize),
                  MakeUintegerChecker<uint32_t>(1, 1u << 30))
              .AddAttribute("Messages",
                            "Incast and Ring: messages per flow (0: repeated until stop_time; k: k "
                            "messages, and the run ends when all have completed).",
                            UintegerValue(0), MakeUintegerAccessor(&FcScenario::messages),
                            MakeUintegerChecker<uint32_t>(0, 1000000000))
              .AddAttribute(
                  "QueueDepth",
                  "Incast and Ring: messages outstanding per flow (posted, FCP_RSP not yet "
                  "received).",
                  UintegerValue(1), MakeUintegerAccessor(&FcScenario::queueDepth),
                  MakeUintegerChecker<uint32_t>(1, 4096))
              .AddAttribute("Leaves", "LeafSpine: number of leaf switches.", UintegerValue(2),
                            MakeUintegerAccessor(&FcScenario::leaves),
                            MakeUintegerChecker<uint32_t>(2, 128))
              .AddAttribute("Spines",
                            "LeafSpine: number of spine switches; equal-cost paths are chosen by "
                            "S_ID and D_ID (FcSwitch).",
                            UintegerValue(1), MakeUintegerAccessor(&FcScenario::spines),
                            MakeUintegerChecker<uint32_t>(1, 64))
              .AddAttribute("UplinkSpeed",
                            "Speed of the inter-switch links (TwoSwitch, LeafSpine, Ring); Host: "
                            "FcNetDevice::Speed.",
                            EnumValue(HOST_SPEED), MakeEnumAccessor(&FcScenario::uplinkSpeed),
                            MakeEnumChecker(HOST_SPEED, "Host", static_cast<int>(FcSpeed::GFC1),
                                            "1GFC", static_cast<int>(FcSpeed::GFC2), "2GFC",
                                            static_cast<int>(FcSpeed::GFC4), "4GFC",
                                            static_cast<int>(FcSpeed::GFC8), "8GFC",
                                            static_cast<int>(FcSpeed::GFC16), "16GFC",
                                            static_cast<int>(FcSpeed::GFC32), "32GFC"))
              .AddAttribute("RingSwitches", "Ring: number of switches (and hosts, one each).",
                            UintegerValue(4), MakeUintegerAccessor(&FcScenario::ringSwitches),
                            MakeUintegerChecker<uint32_t>(3, 64))
              .AddAttribute("RingHops",
                            "Ring: host i writes to the host on switch (i + RingHops) mod "
                            "RingSwitches (1..RingSwitches-1).",
                            UintegerValue(2), MakeUintegerAccessor(&FcScenario::ringHops),
                            MakeUintegerChecker<uint32_t>(1, 63))
              .AddAttribute("Routing",
                            "ShortestPath (every equal-cost path, as FSPF), Clockwise (Ring only: "
                            "always toward switch s+1, a cyclic buffer dependency) or UpDown "
                            "(up*/down* from switch 0: no route turns from down to up, so no "
                            "cycle of buffer dependencies).",
                            EnumValue(int(lfsim::SHORTEST_PATH)),
                            MakeEnumAccessor(&FcScenario::routing), lfsim::RoutingChecker())
              .AddAttribute("Load",
                            "Incast and Ring: offered load of every sending N_Port as a fraction "
                            "of its link's data rate, in frame wire bytes: frames are paced at "
                            "Load x line rate (1: as fast as credits allow).",
                            DoubleValue(1), MakeDoubleAccessor(&FcScenario::load),
                            MakeDoubleChecker<double>(1e-6, 1));
    return tid;
}

namespace
{

using lfsim::RunContext;
using lfsim::Table;

void
OnValueChange(Table* t, double id, uint32_t, uint32_t v)
{
    t->Append({Simulator::Now().GetSeconds(), id, double(v)});
}

void
OnPrimitive(Table* t, double id, double dir, uint8_t p)
{
    t->Append({Simulator::Now().GetSeconds(), id, double(p), dir});
}

/// Peak and time-average (from `warmup`) of a port's transmit backlog in bytes.
struct QueueWatch
{
    Time warmup;
    Time last;
    uint32_t value = 0;
    uint32_t peak = 0;
    double byteSeconds = 0; ///< integral of the backlog over [warmup, last]

    void
    Advance(Time now)
    {
        if (now > warmup)
        {
            byteSeconds += value * (now - std::max(last, warmup)).GetSeconds();
        }
        last = now;
    }

    static void
    Change(QueueWatch* q, uint32_t, uint32_t v)
    {
        q->Advance(Simulator::Now());
        q->value = v;
        q->peak = std::max(q->peak, v);
    }
};

/// The FC wait-for graph. A queue is one port's transmit queue (labels: the port labels). It is
/// blocked while credit-stalled, and then waits on the queues of the switch at the far end of
/// its fibre that hold frames in the buffers of the port facing it: those buffers are its
/// credits, and they come back only when those frames leave.
class FcWaitFor : public lfsim::WaitForSource
{
  public:
    void
    Init(const FcTopology& t)
    {
        m_ports.clear();
        std::unordered_map<const FcNetDevice*, uint32_t> index;
        for (uint32_t q = 0; q < t.ports.size(); ++q)
        {
            m_ports.push_back(PeekPointer(t.ports[q]));
            index[m_ports.back()] = q;
        }
        // The queue that sends into each port (peer at the other end of its fibre).
        m_feeder.clear();
        for (const FcNetDevice* d : m_ports)
        {
            Ptr<FcNetDevice> peer = DynamicCast<FcChannel>(d->GetChannel())->GetPeer(d);
            m_feeder[d] = index.at(PeekPointer(peer));
        }
    }

    void
    Observe(lfsim::WaitForState& s) const override
    {
        for (uint32_t q = 0; q < m_ports.size(); ++q)
        {
            const FcNetDevice* d = m_ports[q];
            s.blocked[q] = d->IsCreditStalled();
            if (s.blocked[q])
            {
                s.since[q] = d->GetStallStart();
            }
            s.bytes[q] = d->GetTxQueueBytes();
            s.framesTx += d->GetCounters().framesTx;
        }
    }

    void
    Edges(lfsim::WaitForState& s) const override
    {
        for (uint32_t q = 0; q < m_ports.size(); ++q)
        {
            m_ports[q]->GetQueuedByRelease(m_shares);
            for (const auto& share : m_shares)
            {
                if (!share.release)
                {
                    continue; // the node's own frames: a host's, held in no one's buffer
                }
                const uint32_t a = m_feeder.at(share.release);
                if (s.blocked[a] && s.bytes[a] > 0)
                {
                    s.edges.emplace_back(a, q);
                }
            }
        }
    }

    std::vector<std::vector<uint32_t>>
    MayWaitOn() const override
    {
        // A queue can only wait on the queues of the node at the far end of its fibre.
        std::unordered_map<const Node*, std::vector<uint32_t>> onNode;
        for (uint32_t q = 0; q < m_ports.size(); ++q)
        {
            onNode[PeekPointer(m_ports[q]->GetNode())].push_back(q);
        }
        std::vector<std::vector<uint32_t>> may(m_ports.size());
        for (const auto& [d, feeder] : m_feeder)
        {
            may[feeder] = onNode[PeekPointer(d->GetNode())];
        }
        return may;
    }

  private:
    std::vector<const FcNetDevice*> m_ports;
    std::unordered_map<const FcNetDevice*, uint32_t> m_feeder;
    mutable std::vector<FcNetDevice::ReleaseShare> m_shares;
};

class FcFabric : public lfsim::Fabric
{
  public:
    void
    Build(RunContext& ctx) override
    {
        m_sc = CreateObject<FcScenario>();
        const FcScenario::Topology topo = m_sc->topology;
        const bool incast = m_sc->workload == FcScenario::INCAST;
        if (topo == FcScenario::POINT_TO_POINT && !incast && m_sc->hosts != 2)
        {
            throw std::invalid_argument("FcScenario.Hosts: got " + std::to_string(m_sc->hosts)
                                        + "; accepted: 2 with Topology PointToPoint");
        }
        if (incast && (topo == FcScenario::POINT_TO_POINT || topo == FcScenario::TWO_SWITCH))
        {
            throw std::invalid_argument(
                std::string("FcScenario.Topology: got '")
                + (topo == FcScenario::POINT_TO_POINT ? "PointToPoint" : "TwoSwitch")
                + "'; accepted: Leaf, Star or LeafSpine with Workload Incast");
        }
        lfsim::CheckShorterThan("FcScenario.Warmup", m_sc->warmup, "stop_time",
                                ctx.config.stopTime);
        CheckRing(topo);
        // Incast: host 0 receives, hosts 1..Senders send; the victim's hosts come last.
        uint32_t hosts = m_sc->hosts;
        const char* hostsKey = "FcScenario.Hosts";
        uint32_t keyValue = hosts;
        if (incast)
        {
            hosts = 1 + m_sc->senders;
            if (m_sc->victim)
            {
                hosts += (topo == FcScenario::LEAF_SPINE) ? 2 : 1;
            }
            hostsKey = "FcScenario.Senders";
            keyValue = m_sc->senders;
        }
        FcHelper helper;
        if (m_sc->uplinkSpeed != FcScenario::HOST_SPEED)
        {
            helper.SetIslSpeed(static_cast<FcSpeed>(m_sc->uplinkSpeed));
        }
        helper.SetRouting(lfsim::Routing(m_sc->routing));
        switch (topo)
        {
            case FcScenario::POINT_TO_POINT:
                m_t = helper.PointToPoint();
                break;
            case FcScenario::STAR:
            case FcScenario::LEAF:
                CheckPorts(hostsKey, keyValue, hosts);
                m_t = helper.Star(hosts);
                break;
            case FcScenario::TWO_SWITCH:
                CheckPorts(hostsKey, keyValue, hosts);
                m_t = helper.TwoSwitch(hosts);
                break;
            case FcScenario::LEAF_SPINE:
            {
                std::vector<uint32_t> leafOf = FcHelper::SpreadHosts(hosts, m_sc->leaves);
                if (incast && m_sc->victim)
                {
                    leafOf[m_sc->senders + 1] = 1; // victim sender
                    leafOf[m_sc->senders + 2] = 0; // victim receiver
                }
                std::vector<uint32_t> perLeaf(m_sc->leaves, 0);
                for (uint32_t l : leafOf)
                {
                    ++perLeaf[l];
                }
                CheckPorts(hostsKey, keyValue,
                           *std::max_element(perLeaf.begin(), perLeaf.end()) + m_sc->spines);
                m_t = helper.LeafSpine(leafOf, m_sc->leaves, m_sc->spines);
                break;
            }
            case FcScenario::RING:
                m_t = helper.Ring(m_sc->ringSwitches);
                break;
        }
        int64_t stream = 1000;
        stream += helper.AssignStreams(m_t, stream);
        m_start = CreateObject<UniformRandomVariable>();
        m_start->SetStream(stream++);
        m_stop = ctx.config.stopTime;
        const uint32_t n = m_t.hostPorts.size();
        uint32_t target = m_t.hostPorts[0]->GetFcId();

        switch (topo == FcScenario::RING ? FcScenario::INCAST : m_sc->workload)
        {
            case FcScenario::STREAM:
            {
                FcStreamApps apps = helper.InstallStream(m_t);
                m_sink = apps.sink;
                m_sink->SetWindow(m_sc->warmup, m_stop);
                for (auto& s : apps.senders)
                {
                    s->SetStartTime(lfsim::RandomStart(m_start, m_sc->startSpread));
                }
                break;
            }
            case FcScenario::PING_PONG:
            {
                m_server = CreateObject<FcPingPong>();
                m_t.hosts.Get(0)->AddApplication(m_server);
                m_server->Setup(m_t.hostPorts[0], m_t.hostPorts[1]->GetFcId(), false);
                m_client = CreateObject<FcPingPong>();
                m_t.hosts.Get(1)->AddApplication(m_client);
                m_client->Setup(m_t.hostPorts[1], target, true);
                m_client->SetDoneCallback(MakeCallback(&lfsim::StopRunNow));
                break;
            }
            case FcScenario::INCAST:
                if (topo == FcScenario::RING)
                {
                    BuildRing();
                }
                else
                {
                    BuildIncast();
                }
                break;
            case FcScenario::FCP:
            {
                m_target = CreateObject<FcpTarget>();
                m_t.hosts.Get(0)->AddApplication(m_target);
                m_target->Setup(m_t.hostPorts[0]);
                for (uint32_t i = 1; i < n; ++i)
                {
                    Ptr<FcpInitiator> ini = CreateObject<FcpInitiator>();
                    m_t.hosts.Get(i)->AddApplication(ini);
                    ini->Setup(m_t.hostPorts[i], target, m_target->GetFirstBurstSize());
                    ini->SetWindow(m_sc->warmup, m_stop);
                    ini->SetStartTime(lfsim::RandomStart(m_start, m_sc->startSpread));
                    m_initiators.push_back(ini);
                }
                break;
            }
        }
        ConnectRecorders(ctx);
        ConnectDetector(ctx);
    }

    void
    Finish(RunContext& ctx) override
    {
        Time now = Simulator::Now();
        double window = (now - m_sc->warmup).GetSeconds();
        // Conservation and losslessness counters, whatever the workload.
        double framesTx = 0;
        double overruns = 0;
        double overflows = 0;
        double recoveredFrames = 0;
        double recoveredCredits = 0;
        double peakSwitchBuffers = 0;
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            const auto& c = m_t.ports[i]->GetCounters();
            framesTx += c.framesTx;
            overruns += c.bufferOverruns;
            overflows += c.creditOverflows;
            recoveredFrames += c.framesRecovered;
            recoveredCredits += c.creditsRecovered;
            if (i >= m_t.hostPorts.size())
            {
                peakSwitchBuffers = std::max<double>(peakSwitchBuffers, c.maxRxBuffers);
            }
        }
        double lost = 0;
        double primLost = 0;
        for (auto& ch : m_t.channels)
        {
            lost += ch->GetFramesLost();
            primLost += ch->GetPrimitivesLost();
        }
        double unroutable = 0;
        for (auto& sw : m_t.switches)
        {
            unroutable += sw->GetUnroutable();
        }
        ctx.SetMetric("packet_hops", framesTx);
        ctx.SetMetric("frames_lost", lost);
        ctx.SetMetric("primitives_lost", primLost);
        ctx.SetMetric("buffer_overruns", overruns);
        ctx.SetMetric("credit_overflows", overflows);
        // Frames dropped inside the fabric: a lossless fabric keeps this at zero.
        ctx.SetMetric("drops", overruns + unroutable);
        ctx.SetMetric("frames_recovered", recoveredFrames);
        ctx.SetMetric("credits_recovered", recoveredCredits);
        ctx.SetMetric("peak_switch_rx_buffers", peakSwitchBuffers);
        std::vector<double> stall;
        for (auto& p : m_t.hostPorts)
        {
            stall.push_back(p->GetCreditStallTime().GetSeconds() * 1e6);
        }
        ctx.SetMetric("credit_stall_us", stall);
        m_detector->Finish(ctx);

        switch (m_sc->topology == FcScenario::RING ? FcScenario::INCAST : m_sc->workload)
        {
            case FcScenario::STREAM:
                ctx.SetMetric("throughput_MBps", m_sink->GetWindowBytes() / window / 1e6);
                ctx.SetMetric("payload_bytes", double(m_sink->GetTotalBytes()));
                break;
            case FcScenario::PING_PONG:
                FinishPingPong(ctx);
                break;
            case FcScenario::FCP:
                FinishFcp(ctx, window);
                break;
            case FcScenario::INCAST:
                FinishIncast(ctx, window);
                break;
        }
    }

  private:
    /// FC_IDs have an 8-bit area: a switch has at most 256 ports.
    static void
    CheckPorts(const char* key, uint32_t value, uint32_t portsOnBusiestSwitch)
    {
        if (portsOnBusiestSwitch > 256)
        {
            throw std::invalid_argument(std::string(key) + ": got " + std::to_string(value)
                                        + "; accepted: at most 256 ports on any switch (this "
                                          "needs "
                                        + std::to_string(portsOnBusiestSwitch) + ")");
        }
    }

    void
    BuildIncast()
    {
        const uint32_t n = m_sc->senders;
        m_rx = CreateObject<FcMessageSink>();
        m_t.hosts.Get(0)->AddApplication(m_rx);
        m_rx->Setup(m_t.hostPorts[0]);
        for (uint32_t i = 1; i <= n; ++i)
        {
            Ptr<FcMessageSender> app = CreateObject<FcMessageSender>();
            m_t.hosts.Get(i)->AddApplication(app);
            app->Setup(m_t.hostPorts[i]);
            m_flows.push_back(
                {app, app->AddFlow(m_rx, m_sc->messageSize, m_sc->messages, m_sc->queueDepth)});
            m_flowLabels.push_back(m_t.portLabels[i]);
            m_apps.push_back(app);
        }
        if (m_sc->victim)
        {
            // The victim receiver is the last host; its port carries nothing else.
            uint32_t vr = m_t.hostPorts.size() - 1;
            m_victimRx = CreateObject<FcMessageSink>();
            m_t.hosts.Get(vr)->AddApplication(m_victimRx);
            m_victimRx->Setup(m_t.hostPorts[vr]);
            Ptr<FcMessageSender> vs = m_apps[0]; // Leaf: host 1's N_Port, shared with its incast
            if (m_sc->topology == FcScenario::LEAF_SPINE)
            {
                // Its own host on leaf 1, sharing the leaf's uplinks with the incast.
                vs = CreateObject<FcMessageSender>();
                m_t.hosts.Get(n + 1)->AddApplication(vs);
                vs->Setup(m_t.hostPorts[n + 1]);
                m_apps.push_back(vs);
            }
            m_victim = {
                vs, vs->AddFlow(m_victimRx, m_sc->messageSize, m_sc->messages, m_sc->queueDepth)};
        }
        StartSenders();
        // The egress backlog towards the receiver: the switch port facing host 0.
        Ptr<FcNetDevice> toRx
            = DynamicCast<FcChannel>(m_t.hostPorts[0]->GetChannel())->GetPeer(m_t.hostPorts[0]);
        m_queue.warmup = m_sc->warmup;
        m_queuePort = std::find(m_t.ports.begin(), m_t.ports.end(), toRx) - m_t.ports.begin();
        toRx->TraceConnectWithoutContext("TxQueueBytes",
                                         MakeBoundCallback(&QueueWatch::Change, &m_queue));
    }

    /// Ring: host i writes to the host RingHops switches on, through the same message flows
    /// as the incast; every host both sends and receives on its one N_Port.
    void
    BuildRing()
    {
        const uint32_t n = m_sc->ringSwitches;
        std::vector<Ptr<FcMessageSink>> sinks;
        for (uint32_t i = 0; i < n; ++i)
        {
            sinks.push_back(CreateObject<FcMessageSink>());
            m_t.hosts.Get(i)->AddApplication(sinks.back());
            sinks.back()->Setup(m_t.hostPorts[i]);
        }
        for (uint32_t i = 0; i < n; ++i)
        {
            Ptr<FcMessageSender> app = CreateObject<FcMessageSender>();
            m_t.hosts.Get(i)->AddApplication(app);
            app->Setup(m_t.hostPorts[i]);
            app->SetLocalSink(sinks[i]);
            m_flows.push_back({app, app->AddFlow(sinks[(i + m_sc->ringHops) % n], m_sc->messageSize,
                                                 m_sc->messages, m_sc->queueDepth)});
            m_flowLabels.push_back(m_t.portLabels[i]);
            m_apps.push_back(app);
        }
        StartSenders();
    }

    void
    StartSenders()
    {
        m_pendingApps = m_apps.size();
        for (auto& app : m_apps)
        {
            app->SetLoad(m_sc->load);
            app->SetWindow(m_sc->warmup, m_stop);
            app->SetStartTime(lfsim::RandomStart(m_start, m_sc->startSpread));
            if (m_sc->messages > 0)
            {
                app->SetDoneCallback(MakeCallback(&FcFabric::AppDone, this));
            }
        }
    }

    /// The ring's keys, and keys that only make sense with it.
    void
    CheckRing(FcScenario::Topology topo) const
    {
        const bool ring = topo == FcScenario::RING;
        // The same messages as the roce fabric's for the same keys.
        if (m_sc->routing == lfsim::CLOCKWISE && !ring)
        {
            throw std::invalid_argument("FcScenario.Routing: Clockwise needs a ring; accepted: "
                                        "ShortestPath or UpDown, or Topology Ring");
        }
        if (m_sc->load < 1 && !ring && m_sc->workload != FcScenario::INCAST)
        {
            std::ostringstream got;
            got << m_sc->load;
            throw std::invalid_argument("FcScenario.Load: got " + got.str()
                                        + "; accepted: 1 unless Workload Incast or Topology Ring "
                                          "(it paces message flows)");
        }
        if (!ring)
        {
            return;
        }
        if (m_sc->ringHops >= m_sc->ringSwitches)
        {
            throw std::invalid_argument("FcScenario.RingHops: got " + std::to_string(m_sc->ringHops)
                                        + "; accepted: 1.." + std::to_string(m_sc->ringSwitches - 1)
                                        + " (less than RingSwitches)");
        }
        if (m_sc->workload == FcScenario::PING_PONG || m_sc->workload == FcScenario::FCP)
        {
            throw std::invalid_argument(
                std::string("FcScenario.Workload: got '")
                + (m_sc->workload == FcScenario::FCP ? "Fcp" : "PingPong")
                + "'; accepted: Stream or Incast with Topology Ring (it runs its own message "
                  "flows)");
        }
    }

    /// One deadlock detector over every port's transmit queue, armed by credit stalls.
    void
    ConnectDetector(RunContext& ctx)
    {
        m_detector = CreateObject<DeadlockDetector>();
        if (!m_detector->IsEnabled())
        {
            return;
        }
        m_waitFor.Init(m_t);
        m_detector->Attach(ctx, m_t.portLabels, &m_waitFor);
        for (auto& p : m_t.ports)
        {
            p->TraceConnectWithoutContext("CreditStall",
                                          MakeCallback(&DeadlockDetector::Arm, m_detector));
        }
    }

    void
    AppDone()
    {
        if (--m_pendingApps == 0)
        {
            lfsim::StopRunNow();
        }
    }

    void
    ConnectRecorders(RunContext& ctx)
    {
        const bool sampled = ctx.config.sampleInterval.IsStrictlyPositive();
        struct Spec
        {
            const char* recorder;
            const char* trace;
            uint32_t (FcNetDevice::*get)() const;
        };
        const Spec specs[]
            = {{"credits", "Credits", &FcNetDevice::GetCredits},
               {"frames_in_flight", "FramesInFlight", &FcNetDevice::GetFramesInFlight},
               {"rx_buffers", "RxBuffers", &FcNetDevice::GetRxBuffersInUse},
               {"tx_queue", "TxQueue", &FcNetDevice::GetTxQueueLength}};
        for (const Spec& s : specs)
        {
            if (!ctx.Records(s.recorder))
            {
                continue;
            }
            Table* t = &ctx.Series(s.recorder, {s.recorder});
            ctx.SetLabels(s.recorder, m_t.portLabels);
            for (uint32_t i = 0; i < m_t.ports.size(); ++i)
            {
                Ptr<FcNetDevice> d = m_t.ports[i];
                if (sampled)
                {
                    auto get = s.get;
                    ctx.SamplePeriodically(
                        [t, d, i, get] {
                            t->Append(
                                {Simulator::Now().GetSeconds(), double(i), double((*d.*get)())});
                        });
                }
                else
                {
                    t->Append({0.0, double(i), double((*d.*s.get)())});
                    d->TraceConnectWithoutContext(s.trace,
                                                  MakeBoundCallback(&OnValueChange, t, double(i)));
                }
            }
        }
        if (ctx.Records("primitives"))
        {
            // kind: FcPrimitive (0 R_RDY, 1 BB_SCs, 2 BB_SCr); dir: 0 sent, 1 received.
            Table* t = &ctx.Series("primitives", {"kind", "dir"});
            ctx.SetLabels("primitives", m_t.portLabels);
            for (uint32_t i = 0; i < m_t.ports.size(); ++i)
            {
                m_t.ports[i]->TraceConnectWithoutContext(
                    "PrimitiveTx", MakeBoundCallback(&OnPrimitive, t, double(i), 0.0));
                m_t.ports[i]->TraceConnectWithoutContext(
                    "PrimitiveRx", MakeBoundCallback(&OnPrimitive, t, double(i), 1.0));
            }
        }
        if (ctx.Records("goodput") && sampled && !m_flows.empty())
        {
            // Payload each message flow delivered to its receiver, per sample interval.
            Table* t = &ctx.Series("goodput", {"goodput_Gbps"});
            std::vector<FlowRef> flows = m_flows;
            std::vector<std::string> labels = m_flowLabels;
            if (m_victim.app)
            {
                flows.push_back(m_victim);
                labels.push_back("victim");
            }
            ctx.SetLabels("goodput", labels);
            double dt = ctx.config.sampleInterval.GetSeconds();
            auto last = std::make_shared<std::vector<uint64_t>>(flows.size(), 0);
            ctx.SamplePeriodically(
                [t, flows, last, dt]
                {
                    for (uint32_t k = 0; k < flows.size(); ++k)
                    {
                        uint64_t b = flows[k].Stats().deliveredBytes;
                        t->Append({Simulator::Now().GetSeconds(), double(k),
                                   (b - (*last)[k]) * 8.0 / dt / 1e9});
                        (*last)[k] = b;
                    }
                });
        }
        else if (ctx.Records("goodput") && sampled)
        {
            // Frame payload each sending host put on its link, as a rate per sample interval.
            Table* t = &ctx.Series("goodput", {"goodput_MBps"});
            std::vector<std::string> labels;
            std::vector<Ptr<FcNetDevice>> senders;
            for (uint32_t i = 1; i < m_t.hostPorts.size(); ++i)
            {
                labels.push_back(m_t.portLabels[i]);
                senders.push_back(m_t.hostPorts[i]);
            }
            ctx.SetLabels("goodput", labels);
            double dt = ctx.config.sampleInterval.GetSeconds();
            auto last = std::make_shared<std::vector<uint64_t>>(senders.size(), 0);
            ctx.SamplePeriodically(
                [t, senders, last, dt]
                {
                    for (uint32_t k = 0; k < senders.size(); ++k)
                    {
                        uint64_t b = senders[k]->GetCounters().payloadTx;
                        t->Append({Simulator::Now().GetSeconds(), double(k),
                                   (b - (*last)[k]) / dt / 1e6});
                        (*last)[k] = b;
                    }
                });
        }
    }

    void
    FinishPingPong(RunContext& ctx)
    {
        const auto& res = m_client->GetResults();
        Table& t = ctx.AddTable("pingpong", {"size_B", "size_KB", "latency_us", "throughput_MBps"});
        std::vector<double> x;
        std::vector<double> y;
        double sustained = 0;
        int nSustained = 0;
        for (const auto& p : res)
        {
            double lat = p.roundTrip.GetSeconds() / 2;
            double thr = p.size / lat / 1e6;
            t.Append({double(p.size), p.size / 1024.0, lat * 1e6, thr});
            x.push_back(p.size / 1024.0);
            y.push_back(lat * 1e6);
            if (p.size >= 200 * 1024)
            {
                sustained += thr;
                ++nSustained;
            }
        }
        ctx.SetMetric("sizes_measured", double(res.size()));
        if (res.empty())
        {
            return;
        }
        const auto& thr = t.Column("throughput_MBps");
        double top = *std::max_element(thr.begin(), thr.end());
        ctx.SetMetric("max_throughput_MBps", top);
        if (nSustained)
        {
            ctx.SetMetric("sustained_MBps", sustained / nSustained);
        }
        // Knee: the smallest size reaching 90 % of the largest size's throughput.
        double knee = x.back();
        for (size_t i = 0; i < thr.size(); ++i)
        {
            if (thr[i] >= 0.9 * thr.back())
            {
                knee = x[i];
                break;
            }
        }
        ctx.SetMetric("knee_KB", knee);
        // Least-squares line latency = a + b * size.
        double n = x.size();
        double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
        double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
        double sxy = 0;
        double sxx = 0;
        double syy = 0;
        for (size_t i = 0; i < x.size(); ++i)
        {
            sxy += (x[i] - mx) * (y[i] - my);
            sxx += (x[i] - mx) * (x[i] - mx);
            syy += (y[i] - my) * (y[i] - my);
        }
        if (sxx > 0 && syy > 0)
        {
            ctx.SetMetric("latency_slope_us_per_KB", sxy / sxx);
            ctx.SetMetric("latency_intercept_us", my - sxy / sxx * mx);
            ctx.SetMetric("latency_r2", sxy * sxy / (sxx * syy));
        }
    }

    void
    FinishIncast(RunContext& ctx, double window)
    {
        // Payload delivered to the receiving application in [warmup, end], and the flow
        // completion times of the messages completed in that window.
        auto gbps = [window](uint64_t bytes) { return bytes * 8.0 / window / 1e9; };
        Table& t
            = ctx.AddTable("flows", {"id", "goodput_Gbps", "fct_p50_us", "fct_p99_us", "messages"});
        std::vector<std::string> labels = m_flowLabels;
        std::vector<double> rates;
        std::vector<double> fct;
        uint64_t bytes = 0;
        for (uint32_t k = 0; k < m_flows.size(); ++k)
        {
            const auto& st = m_flows[k].Stats();
            rates.push_back(gbps(st.windowBytes));
            bytes += st.windowBytes;
            fct.insert(fct.end(), st.windowFctUs.begin(), st.windowFctUs.end());
            t.Append({double(k), rates.back(), lfsim::Percentile(st.windowFctUs, 0.5),
                      lfsim::Percentile(st.windowFctUs, 0.99), double(st.windowFctUs.size())});
        }
        if (m_victim.app)
        {
            const auto& st = m_victim.Stats();
            ctx.SetMetric("victim_goodput_Gbps", gbps(st.windowBytes));
            ctx.SetMetric("victim_fct_p50_us", lfsim::Percentile(st.windowFctUs, 0.5));
            t.Append({double(m_flows.size()), gbps(st.windowBytes),
                      lfsim::Percentile(st.windowFctUs, 0.5),
                      lfsim::Percentile(st.windowFctUs, 0.99), double(st.windowFctUs.size())});
            labels.push_back("victim");
        }
        ctx.SetLabels("flows", labels);
        ctx.SetMetric("total_goodput_Gbps", gbps(bytes));
        ctx.SetMetric("per_flow_goodput_Gbps", rates);
        ctx.SetMetric("jain_fairness", lfsim::JainFairness(rates));
        ctx.SetMetric("fct_p50_us", lfsim::Percentile(fct, 0.5));
        ctx.SetMetric("fct_p99_us", lfsim::Percentile(fct, 0.99));
        ctx.SetMetric("fct_mean_us",
                      fct.empty() ? 0.0
                                  : std::accumulate(fct.begin(), fct.end(), 0.0) / fct.size());
        ctx.SetMetric("messages_completed", double(fct.size()));
        ctx.SetMetric("window_s", window);
        // FC has no PAUSE: a transmitter is held back by BB_Credit instead. "Paused" time is
        // each port's credit-stall time (frames waiting, line free, no credit) over the run.
        ctx.SetMetric("pause_frames_sent", 0.0);
        Table& ports = ctx.AddTable("ports", {"id", "paused_time_us", "frames_tx"});
        std::vector<double> paused;
        for (uint32_t i = 0; i < m_t.ports.size(); ++i)
        {
            paused.push_back(m_t.ports[i]->GetCreditStallTime().GetSeconds() * 1e6);
            ports.Append({double(i), paused.back(), double(m_t.ports[i]->GetCounters().framesTx)});
        }
        ctx.SetLabels("ports", m_t.portLabels);
        // Every fibre once (port indices as in "ports"), to draw the topology.
        Table& links = ctx.AddTable("links", {"a", "b"});
        for (const auto& ch : m_t.channels)
        {
            auto index = [this](Ptr<NetDevice> d) {
                return double(std::find(m_t.ports.begin(), m_t.ports.end(), d) - m_t.ports.begin());
            };
            links.Append({index(ch->GetDevice(0)), index(ch->GetDevice(1))});
        }
        ctx.SetLabels("links", m_t.portLabels);
        ctx.SetMetric("paused_time_us", paused);
        if (m_sc->topology == FcScenario::RING)
        {
            return; // no single bottleneck port
        }
        m_queue.Advance(Simulator::Now());
        ctx.SetMetric("peak_queue_KB", m_queue.peak / 1024.0);
        ctx.SetMetric("mean_queue_KB", m_queue.byteSeconds / window / 1024.0);
        ctx.SetMetric("bottleneck_port", m_t.portLabels[m_queuePort]);
    }

    void
    FinishFcp(RunContext& ctx, double window)
    {
        Table& t = ctx.AddTable("flows", {"id", "goodput_MBps", "iops", "mean_latency_us",
                                          "p99_latency_us", "credit_stall_us"});
        std::vector<std::string> labels;
        std::vector<double> rates;
        std::vector<double> all;
        double bytes = 0;
        double ios = 0;
        for (uint32_t k = 0; k < m_initiators.size(); ++k)
        {
            const auto& lat = m_initiators[k]->GetWindowLatenciesUs();
            double b = m_initiators[k]->GetWindowBytes();
            double mean
                = lat.empty() ? 0 : std::accumulate(lat.begin(), lat.end(), 0.0) / lat.size();
            rates.push_back(b / window / 1e6);
            t.Append({double(k), rates.back(), lat.size() / window, mean,
                      lfsim::Percentile(lat, 0.99),
                      m_t.hostPorts[k + 1]->GetCreditStallTime().GetSeconds() * 1e6});
            labels.push_back(m_t.portLabels[k + 1]);
            all.insert(all.end(), lat.begin(), lat.end());
            bytes += b;
            ios += lat.size();
        }
        ctx.SetLabels("flows", labels);
        ctx.SetMetric("total_MBps", bytes / window / 1e6);
        ctx.SetMetric("per_flow_MBps", rates);
        ctx.SetMetric("jain_fairness", lfsim::JainFairness(rates));
        ctx.SetMetric("iops", ios / window);
        ctx.SetMetric("mean_latency_us",
                      all.empty() ? 0.0
                                  : std::accumulate(all.begin(), all.end(), 0.0) / all.size());
        ctx.SetMetric("p50_latency_us", lfsim::Percentile(all, 0.5));
        ctx.SetMetric("p99_latency_us", lfsim::Percentile(all, 0.99));
        // The target's port: where incast congestion shows as buffers held and credits spent.
        Ptr<FcNetDevice> toTarget
            = DynamicCast<FcChannel>(m_t.hostPorts[0]->GetChannel())->GetPeer(m_t.hostPorts[0]);
        ctx.SetMetric("target_port_min_credits", double(toTarget->GetCounters().minCredits));
    }

    Ptr<FcScenario> m_sc;
    FcTopology m_t;
    Time m_stop;
    Ptr<UniformRandomVariable> m_start;
    Ptr<FcSink> m_sink;
    Ptr<FcPingPong> m_client;
    Ptr<FcPingPong> m_server;
    Ptr<FcpTarget> m_target;
    std::vector<Ptr<FcpInitiator>> m_initiators;

    /// One message flow: its sender application and the flow's index there.
    struct FlowRef
    {
        Ptr<FcMessageSender> app;
        uint32_t flow = 0;

        const FcMessageSender::FlowStats&
        Stats() const
        {
            return app->GetFlowStats(flow);
        }
    };

    Ptr<FcMessageSink> m_rx;
    Ptr<FcMessageSink> m_victimRx;
    std::vector<Ptr<FcMessageSender>> m_apps;
    std::vector<FlowRef> m_flows; ///< the incast flows, sender host order
    std::vector<std::string> m_flowLabels;
    FlowRef m_victim;
    uint32_t m_pendingApps = 0;
    QueueWatch m_queue;
    uint32_t m_queuePort = 0; ///< index (in m_t.ports) of the switch port facing host 0
    Ptr<DeadlockDetector> m_detector;
    FcWaitFor m_waitFor;
};

const bool g_registered = lfsim::RegisterFabric(
    {"fc",
     "Fibre Channel with BB_Credit flow control (FC-FS), fabric switches and FCP",
     {"ns3::FcScenario", "ns3::FcNetDevice", "ns3::FcChannel", "ns3::FcSwitch",
      "ns3::FcStreamSender", "ns3::FcPingPong", "ns3::FcpInitiator", "ns3::FcpTarget",
      "ns3::FcMessageSender", "ns3::DeadlockDetector"},
     {{"credits", "BB_Credit available at each port (transmit side)"},
      {"frames_in_flight", "frames sent and not yet answered by R_RDY, at each port"},
      {"rx_buffers", "receive buffers in use at each port"},
      {"tx_queue", "frames waiting at each port"},
      {"primitives", "every R_RDY / BB_SCs / BB_SCr sent and received"},
      {"goodput", "per sample interval: frame payload sent by each host, MB/s; Incast: payload "
                  "delivered per flow, Gbit/s (needs sample_interval)"},
      {"blocked", "blocked state of every queue, from the deadlock detector (a pause map)"}},
     [] { return std::make_unique<FcFabric>(); }});

} // namespace

} // namespace ns3
