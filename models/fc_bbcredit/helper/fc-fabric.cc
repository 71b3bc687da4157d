#include "fc-fabric.h"

#include "fc-applications.h"
#include "fc-helper.h"
#include "fcp.h"
#include "lfsim-attributes.h"
#include "lfsim-capture.h"
#include "lfsim-deadlock.h"
#include "lfsim-report.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace ns3
{

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

    lfsim::MayWait
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
        return lfsim::MayWait::PerQueue(std::move(may));
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
        const lfsim::Graph& g = ctx.graph;
        const lfsim::RouteTable routes
            = g.Routes(ctx.topology->GetRouting(), ctx.topology->GetFailedLink(),
                       ctx.topology->GetStaleRoutes());
        FcHelper helper;
        m_net.topology = helper.Build(g, routes);
        FcTopology& t = m_net.topology;
        int64_t stream = 1000;
        m_net.deviceStreams = helper.AssignStreams(t, stream);
        stream += m_net.deviceStreams;
        m_net.start = CreateObject<UniformRandomVariable>();
        m_net.start->SetStream(stream++);
        m_net.stream = stream;
        m_net.warmup = ctx.report->GetWarmup();
        m_net.stopTime = ctx.config.stopTime;

        lfsim::WorkloadEnv env;
        env.graph = &g;
        env.stopTime = ctx.config.stopTime;
        env.start = m_net.start;
        env.stream = WORKLOAD_STREAMS;
        env.hostRate = [this, &g](uint32_t h) {
            return 8.0
                   * FcDataBytesPerSecond(
                       m_net.topology.hostPorts[g.AddressesOf(h)[0]]->GetSpeed());
        };
        m_specs = lfsim::GenerateFlows(ctx.workloads, env);
        InstallFlows(ctx);
        m_apps.Install(ctx, m_net);
        m_report.deliveredInWindow = [this](uint32_t f) { return Stats(f).windowBytes; };
        m_report.delivered = [this](uint32_t f) { return Stats(f).deliveredBytes; };
        m_report.ideal = [this](uint32_t f) { return IdealFct(f); };
        m_report.Init(ctx, m_specs, lfsim::WorkloadNames(ctx.workloads));
        // The egress backlog where the first flow's data converges: the switch port facing its
        // destination (the incast's bottleneck).
        if (!m_flows.empty())
        {
            const uint32_t feed = t.peer[m_flows[0].dstAddr];
            if (t.portSwitch[feed] >= 0)
            {
                m_queue.warmup = m_net.warmup;
                m_queuePort = feed;
                t.ports[feed]->TraceConnectWithoutContext(
                    "TxQueueBytes", MakeBoundCallback(&QueueWatch::Change, &m_queue));
            }
        }
        ConnectRecorders(ctx);
        ConnectDetector(ctx);
        OpenCaptures(ctx);
    }

    void
    Finish(RunContext& ctx) override
    {
        FcTopology& t = m_net.topology;
        const Time now = Simulator::Now();
        for (auto& f : m_pcap)
        {
            if (f)
            {
                f->Close();
            }
        }
        // Conservation and losslessness counters, whatever the workload.
        uint64_t framesTx = 0;
        uint64_t overruns = 0;
        uint64_t overflows = 0;
        uint64_t recoveredFrames = 0;
        uint64_t recoveredCredits = 0;
        uint64_t linkResets = 0;
        uint64_t discarded = 0;
        uint64_t peakSwitchBuffers = 0;
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            const auto& c = t.ports[i]->GetCounters();
            framesTx += c.framesTx;
            overruns += c.bufferOverruns;
            overflows += c.creditOverflows;
            recoveredFrames += c.framesRecovered;
            recoveredCredits += c.creditsRecovered;
            linkResets += c.linkResets;
            discarded += c.framesDiscarded;
            if (t.portSwitch[i] >= 0)
            {
                peakSwitchBuffers = std::max<uint64_t>(peakSwitchBuffers, c.maxRxBuffers);
            }
        }
        uint64_t lost = 0;
        uint64_t primLost = 0;
        uint64_t creditsLost = 0;
        for (auto& ch : t.channels)
        {
            lost += ch->GetFramesLost();
            primLost += ch->GetPrimitivesLost();
            creditsLost += ch->GetCreditsLost();
        }
        uint64_t unroutable = 0;
        for (auto& sw : t.switches)
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
        ctx.SetMetric("credits_lost", creditsLost);
        ctx.SetMetric("credits_recovered", recoveredCredits);
        ctx.SetMetric("link_resets", linkResets);
        // Frames a port in the link failure state discarded (its own link down).
        ctx.SetMetric("frames_discarded_link_down", discarded);
        ctx.SetMetric("peak_switch_rx_buffers", peakSwitchBuffers);
        std::vector<double> stall;
        for (auto& p : t.hostPorts)
        {
            stall.push_back(p->GetCreditStallTime().GetSeconds() * 1e6);
        }
        ctx.SetMetric("credit_stall_us", stall);
        m_detector->Finish(ctx);

        m_report.Finish(ctx);
        m_apps.Finish(ctx);
        // FC has no PAUSE: a transmitter is held back by BB_Credit instead. "Paused" time is
        // each port's credit-stall time (frames waiting, line free, no credit) over the run.
        ctx.SetMetric("pause_frames_sent", 0);
        Table& ports = ctx.AddTable(
            "ports", {lfsim::IntColumn("id"), "paused_time_us", lfsim::IntColumn("frames_tx")});
        std::vector<double> paused;
        for (uint32_t i = 0; i < t.ports.size(); ++i)
        {
            const auto& c = t.ports[i]->GetCounters();
            paused.push_back(t.ports[i]->GetCreditStallTime().GetSeconds() * 1e6);
            ports.Append({double(i), paused.back(), double(c.framesTx)});
        }
        ctx.SetLabels("ports", t.portLabels);
        lfsim::ReportLinks(
            ctx, t.portLabels, t.peer,
            [&t, &paused](uint32_t i) -> lfsim::PortStats
            {
                return {double(t.ports[i]->GetCounters().bytesTx),
                        8.0 * FcDataBytesPerSecond(t.ports[i]->GetSpeed()), paused[i], 0.0};
            },
            now.GetSeconds());
        ctx.SetMetric("paused_time_us", paused);
        if (m_queuePort != lfsim::NONE)
        {
            const double window = (now - m_net.warmup).GetSeconds();
            m_queue.Advance(now);
            ctx.SetMetric("peak_queue_KiB", m_queue.peak / 1024.0);
            ctx.SetMetric("mean_queue_KiB", m_queue.byteSeconds / window / 1024.0);
            ctx.SetMetric("bottleneck_port", t.portLabels[m_queuePort]);
        }
    }

  private:
    static constexpr int64_t WORKLOAD_STREAMS = 1000000;
    static constexpr uint32_t FCP_CMND_BYTES = 32; ///< FCP_CMND IU with a 16-byte CDB
    static constexpr uint32_t FCP_RSP_BYTES = 24;  ///< FCP_RSP IU, GOOD, no sense

    /// One generic flow: the sender application of its source N_Port and its index there.
    struct FlowRef
    {
        Ptr<FcMessageSender> app;
        uint32_t flow = 0;
        uint32_t srcAddr = 0;
        uint32_t dstAddr = 0;
    };

    const FcMessageSender::FlowStats&
    Stats(uint32_t f) const
    {
        return m_flows[f].app->GetFlowStats(m_flows[f].flow);
    }

    /// A message sink on every receiving N_Port, then a sender on every sending one (one
    /// FcMessageSender per N_Port carries all its flows, taking turns frame by frame).
    void
    InstallFlows(const RunContext& ctx)
    {
        const lfsim::Graph& g = ctx.graph;
        FcTopology& t = m_net.topology;
        std::map<uint32_t, Ptr<FcMessageSink>> sinks;
        std::map<uint32_t, Ptr<FcMessageSender>> senders;
        std::vector<std::pair<uint32_t, uint32_t>> ends; // (src, dst address) per flow
        for (uint32_t f = 0; f < m_specs.size(); ++f)
        {
            const lfsim::FlowSpec& s = m_specs[f];
            if (s.op != lfsim::Operation::WRITE)
            {
                throw std::invalid_argument(
                    "workload." + ctx.workloads[s.workload].name
                    + ".Operation: got Read or Send; accepted: Write with fabric fc (a flow is "
                      "an FCP WRITE exchange)");
            }
            if (s.priority >= 0)
            {
                // Class 3 frames carry no traffic class in this model: refuse, not ignore.
                throw std::invalid_argument("workload." + ctx.workloads[s.workload].name
                                            + ".Priority: got " + std::to_string(s.priority)
                                            + "; accepted: -1 with fabric fc");
            }
            // Hosts with several N_Ports (dual fabrics): a pair on one plane, in turn.
            ends.push_back(g.FlowEnds(s.src, s.dst, f, s.plane,
                                      "workload." + ctx.workloads[s.workload].name + ".Plane"));
        }
        for (const auto& [src, dst] : ends)
        {
            if (!sinks.count(dst))
            {
                Ptr<FcMessageSink> sink = CreateObject<FcMessageSink>();
                t.hosts.Get(t.hostOf[dst])->AddApplication(sink);
                sink->Setup(t.hostPorts[dst]);
                sinks[dst] = sink;
            }
        }
        for (uint32_t f = 0; f < m_specs.size(); ++f)
        {
            const lfsim::FlowSpec& s = m_specs[f];
            const auto [src, dst] = ends[f];
            auto it = senders.find(src);
            if (it == senders.end())
            {
                Ptr<FcMessageSender> app = CreateObject<FcMessageSender>();
                t.hosts.Get(t.hostOf[src])->AddApplication(app);
                app->Setup(t.hostPorts[src]);
                if (sinks.count(src))
                {
                    app->SetLocalSink(sinks[src]);
                }
                // Pacing is per N_Port: its first flow's load.
                app->SetLoad(s.load);
                app->SetWindow(m_net.warmup, m_net.stopTime);
                app->SetStartTime(s.start);
                app->TraceConnectWithoutContext(
                    "Message", MakeCallback(&FcFabric::OnMessage, this).Bind(PeekPointer(app)));
                it = senders.emplace(src, app).first;
                m_senderFlows[PeekPointer(app)] = {};
            }
            Ptr<FcMessageSender> app = it->second;
            const uint32_t k = app->AddFlow(sinks[dst], s.size, s.messages, s.depth, s.start);
            m_senderFlows[PeekPointer(app)].push_back(f);
            m_flows.push_back({app, k, src, dst});
            if (s.messages > 0)
            {
                ++m_finite;
            }
        }
    }

    void
    OnMessage(FcMessageSender* app, uint32_t k, uint32_t, Time fct)
    {
        const uint32_t f = m_senderFlows[app][k];
        m_report.MessageDone(f, fct);
        const lfsim::FlowSpec& s = m_specs[f];
        if (s.messages && m_report.Completed(f) == s.messages && ++m_flowsDone == m_finite
            && m_finite == m_flows.size())
        {
            lfsim::StopRunNow();
        }
    }

    /// The ports a frame leaves from between two addresses (first of each equal-cost set).
    std::vector<uint32_t>
    Path(uint32_t from, uint32_t to) const
    {
        const FcTopology& t = m_net.topology;
        std::vector<uint32_t> out{from};
        const uint32_t dId = t.hostPorts[to]->GetFcId();
        const uint32_t sId = t.hostPorts[from]->GetFcId();
        uint32_t port = from;
        for (uint32_t hop = 0; hop <= t.switches.size(); ++hop)
        {
            const uint32_t in = t.peer[port];
            const int32_t s = t.portSwitch[in];
            if (s < 0)
            {
                return out;
            }
            const int32_t local = t.switches[s]->Lookup(sId, dId);
            if (local < 0)
            {
                return {};
            }
            Ptr<FcNetDevice> dev = t.switches[s]->GetPort(local);
            port = std::find(t.ports.begin(), t.ports.end(), dev) - t.ports.begin();
            out.push_back(port);
        }
        return {};
    }

    /// A message alone on the empty fabric, as an FCP WRITE exchange: FCP_CMND and the data
    /// frames back to back (MinIdleWords idle words after each frame), then FCP_RSP back. A
    /// frame reaches the far end of a fibre at its EOF; a cut-through switch starts it on the
    /// output once its header is in plus ForwardingLatency, never so early that a faster
    /// output would overtake the input; a store-and-forward one at its EOF plus the latency;
    /// an output sends one frame at a time. The receiver's R_RDY for the last frame goes out
    /// before FCP_RSP when it frees buffers at once. With enough BB_Credit this is exactly a
    /// lone flow's FCT; a long fibre with few credits makes even a lone flow slower.
    Time
    IdealFct(uint32_t f)
    {
        const FcTopology& t = m_net.topology;
        const lfsim::FlowSpec& s = m_specs[f];
        const std::vector<uint32_t> fwd = Path(m_flows[f].srcAddr, m_flows[f].dstAddr);
        const std::vector<uint32_t> back = Path(m_flows[f].dstAddr, m_flows[f].srcAddr);
        if (fwd.empty() || back.empty())
        {
            return Time(0);
        }
        UintegerValue maxPayload;
        m_flows[f].app->GetAttribute("MaxPayload", maxPayload);
        const uint64_t mp = maxPayload.Get();
        const uint64_t n = (s.size + mp - 1) / mp;
        const uint64_t lastPayload = s.size - (n - 1) * mp;
        auto wire = [&](uint32_t port, uint64_t bytes)
        { return FcWireTime(t.ports[port]->GetSpeed(), bytes); };
        auto frame = [&](uint32_t port, uint64_t payload)
        { return wire(port, FcFrameWireBytes(payload)); };
        // How long a port is busy with a frame: the frame and the idle words after it.
        auto period = [&](uint32_t port, uint64_t payload)
        {
            UintegerValue idles;
            t.ports[port]->GetAttribute("MinIdleWords", idles);
            return frame(port, payload) + wire(port, FC_WORD) * int64_t(idles.Get());
        };
        auto prop = [&](uint32_t port)
        { return DynamicCast<FcChannel>(t.ports[port]->GetChannel())->GetPropagationDelay(); };
        // From a frame's SOF leaving path[m] to its being ready at path[m + 1].
        auto delay = [&](const std::vector<uint32_t>& path, size_t m, uint64_t payload)
        {
            const Ptr<FcSwitch> sw = t.switches[t.portSwitch[t.peer[path[m]]]];
            TimeValue latency;
            sw->GetAttribute("ForwardingLatency", latency);
            EnumValue mode;
            sw->GetAttribute("Switching", mode);
            const Time in = frame(path[m], payload);
            if (mode.Get() == FcSwitch::STORE_AND_FORWARD)
            {
                return prop(path[m]) + in + latency.Get();
            }
            return prop(path[m])
                   + std::max(wire(path[m], FC_SOF + FC_HEADER) + latency.Get(),
                              in - frame(path[m + 1], payload));
        };
        const size_t L = fwd.size();
        // SOF of the FCP_CMND on every link.
        std::vector<Time> cmnd(L);
        for (size_t i = 1; i < L; ++i)
        {
            cmnd[i] = cmnd[i - 1] + delay(fwd, i - 1, FCP_CMND_BYTES);
        }
        // The frame before the last one (and how long it holds each port): the CMND, or the
        // last of the n - 1 full frames. Those are identical, so the k-th starts on link i at
        // the latest of: the first one on some link j <= i, k - 1 periods of link j, and the
        // delays from j to i (a tandem of equal frames, in max-plus algebra).
        std::vector<Time> before = cmnd;
        std::vector<Time> held(L);
        for (size_t i = 0; i < L; ++i)
        {
            held[i] = period(fwd[i], FCP_CMND_BYTES);
        }
        if (n > 1)
        {
            std::vector<Time> firstFull(L);
            for (size_t i = 0; i < L; ++i)
            {
                firstFull[i] = cmnd[i] + held[i];
                if (i > 0)
                {
                    firstFull[i] = std::max(firstFull[i], firstFull[i - 1] + delay(fwd, i - 1, mp));
                }
            }
            for (size_t i = 0; i < L; ++i)
            {
                Time latest;
                for (size_t j = 0; j <= i; ++j)
                {
                    Time x = firstFull[j] + period(fwd[j], mp) * int64_t(n - 2);
                    for (size_t m = j; m < i; ++m)
                    {
                        x += delay(fwd, m, mp);
                    }
                    latest = std::max(latest, x);
                }
                before[i] = latest;
                held[i] = period(fwd[i], mp);
            }
        }
        Time last = before[0] + held[0];
        for (size_t i = 1; i < L; ++i)
        {
            last = std::max(last + delay(fwd, i - 1, lastPayload), before[i] + held[i]);
        }
        Time rsp = last + frame(fwd.back(), lastPayload) + prop(fwd.back());
        TimeValue rxDelay;
        t.ports[m_flows[f].dstAddr]->GetAttribute("RxProcessingDelay", rxDelay);
        if (rxDelay.Get().IsZero())
        {
            rsp += wire(back[0], FC_WORD); // the R_RDY for the last data frame goes first
        }
        for (size_t i = 0; i + 1 < back.size(); ++i)
        {
            rsp += delay(back, i, FCP_RSP_BYTES);
        }
        return rsp + frame(back.back(), FCP_RSP_BYTES) + prop(back.back());
    }

    /// A capture file per wanted port: the frames it sends (from their SOF leaving) and receives
    /// (from their SOF arriving), with delimiters and CRC; primitive signals are not frames.
    void
    OpenCaptures(RunContext& ctx)
    {
        FcTopology& t = m_net.topology;
        m_pcap = lfsim::OpenCaptures(ctx, t.portLabels, 225, // LINKTYPE_FC_2_WITH_FRAME_DELIMS
                                     [](lfsim::PortCapture&, Ptr<const Packet> p,
                                        std::vector<uint8_t>& record) { FcWireFrame(p, record); });
        for (uint32_t i = 0; i < m_pcap.size(); ++i)
        {
            for (const char* trace : {"FrameTx", "FrameRx"})
            {
                if (m_pcap[i])
                {
                    t.ports[i]->TraceConnectWithoutContext(
                        trace, MakeCallback(&lfsim::PortCapture::Capture, m_pcap[i]));
                }
            }
        }
    }

    /// One deadlock detector over every port's transmit queue, armed by credit stalls.
    void
    ConnectDetector(RunContext& ctx)
    {
        FcTopology& t = m_net.topology;
        m_detector = CreateObject<DeadlockDetector>();
        if (!m_detector->IsEnabled())
        {
            return;
        }
        m_waitFor.Init(t);
        m_detector->Attach(ctx, t.portLabels, &m_waitFor);
        for (auto& p : t.ports)
        {
            p->TraceConnectWithoutContext("CreditStall",
                                          MakeCallback(&DeadlockDetector::Arm, m_detector));
        }
    }

    void
    ConnectRecorders(RunContext& ctx)
    {
        FcTopology& t = m_net.topology;
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
            Table* tab = &ctx.Series(s.recorder, {lfsim::IntColumn(s.recorder)});
            ctx.SetLabels(s.recorder, t.portLabels);
            for (uint32_t i = 0; i < t.ports.size(); ++i)
            {
                Ptr<FcNetDevice> d = t.ports[i];
                if (sampled)
                {
                    auto get = s.get;
                    ctx.SamplePeriodically(
                        [tab, d, i, get] {
                            tab->Append(
                                {Simulator::Now().GetSeconds(), double(i), double((*d.*get)())});
                        });
                }
                else
                {
                    tab->Append({0.0, double(i), double((*d.*s.get)())});
                    d->TraceConnectWithoutContext(
                        s.trace, MakeBoundCallback(&OnValueChange, tab, double(i)));
                }
            }
        }
        if (ctx.Records("primitives"))
        {
            // kind: FcPrimitive (0 R_RDY, 1 BB_SCs, 2 BB_SCr); dir: 0 sent, 1 received.
            Table* tab
                = &ctx.Series("primitives", {lfsim::IntColumn("kind"), lfsim::IntColumn("dir")});
            ctx.SetLabels("primitives", t.portLabels);
            for (uint32_t i = 0; i < t.ports.size(); ++i)
            {
                t.ports[i]->TraceConnectWithoutContext(
                    "PrimitiveTx", MakeBoundCallback(&OnPrimitive, tab, double(i), 0.0));
                t.ports[i]->TraceConnectWithoutContext(
                    "PrimitiveRx", MakeBoundCallback(&OnPrimitive, tab, double(i), 1.0));
            }
        }
        if (ctx.Records("goodput") && sampled && !m_flows.empty())
        {
            // Payload each message flow delivered to its receiver, per sample interval.
            Table* tab = &ctx.Series("goodput", {"goodput_Gbps"});
            std::vector<std::string> labels;
            for (const auto& s : m_specs)
            {
                labels.push_back(ctx.graph.Nodes()[ctx.graph.Hosts()[s.src]].name + ">"
                                 + ctx.graph.Nodes()[ctx.graph.Hosts()[s.dst]].name);
            }
            ctx.SetLabels("goodput", labels);
            const double dt = ctx.config.sampleInterval.GetSeconds();
            auto last = std::make_shared<std::vector<uint64_t>>(m_flows.size(), 0);
            ctx.SamplePeriodically(
                [this, tab, last, dt]
                {
                    for (uint32_t k = 0; k < m_flows.size(); ++k)
                    {
                        uint64_t b = Stats(k).deliveredBytes;
                        tab->Append({Simulator::Now().GetSeconds(), double(k),
                                     (b - (*last)[k]) * 8.0 / dt / 1e9});
                        (*last)[k] = b;
                    }
                });
        }
        else if (ctx.Records("goodput") && sampled)
        {
            // Frame payload each host N_Port put on its link, as a rate per sample interval.
            Table* tab = &ctx.Series("goodput", {"goodput_MiBps"});
            std::vector<std::string> labels;
            std::vector<Ptr<FcNetDevice>> senders;
            for (uint32_t i = 0; i < t.hostPorts.size(); ++i)
            {
                labels.push_back(t.portLabels[i]);
                senders.push_back(t.hostPorts[i]);
            }
            ctx.SetLabels("goodput", labels);
            double dt = ctx.config.sampleInterval.GetSeconds();
            auto last = std::make_shared<std::vector<uint64_t>>(senders.size(), 0);
            ctx.SamplePeriodically(
                [tab, senders, last, dt]
                {
                    for (uint32_t k = 0; k < senders.size(); ++k)
                    {
                        uint64_t b = senders[k]->GetCounters().payloadTx;
                        tab->Append({Simulator::Now().GetSeconds(), double(k),
                                     (b - (*last)[k]) / dt / (1 << 20)});
                        (*last)[k] = b;
                    }
                });
        }
    }

    FcNetwork m_net;
    std::vector<lfsim::FlowSpec> m_specs;
    std::vector<FlowRef> m_flows;
    std::map<const FcMessageSender*, std::vector<uint32_t>> m_senderFlows; ///< app flow -> flow
    lfsim::FlowReport m_report;
    lfsim::InstalledWorkloads m_apps;
    size_t m_finite = 0;
    size_t m_flowsDone = 0;
    QueueWatch m_queue;
    uint32_t m_queuePort = lfsim::NONE;
    Ptr<DeadlockDetector> m_detector;
    FcWaitFor m_waitFor;
    std::vector<Ptr<lfsim::PortCapture>> m_pcap;
};

const bool g_registered = lfsim::RegisterFabric(
    {"fc",
     "Fibre Channel with BB_Credit flow control (FC-FS), fabric switches and FCP",
     {"ns3::FcNetDevice", "ns3::FcChannel", "ns3::FcSwitch", "ns3::FcStreamSender",
      "ns3::FcPingPong", "ns3::FcpInitiator", "ns3::FcpTarget", "ns3::FcMessageSender",
      "ns3::DeadlockDetector"},
     {{"credits", "BB_Credit available at each port (transmit side)"},
      {"frames_in_flight", "frames sent and not yet answered by R_RDY, at each port"},
      {"rx_buffers", "receive buffers in use at each port"},
      {"tx_queue", "frames waiting at each port"},
      {"primitives", "every R_RDY / BB_SCs / BB_SCr sent and received"},
      {"goodput", "per sample interval: payload delivered per flow, Gbit/s; without flows, "
                  "frame payload sent by each host N_Port, MB/s (needs sample_interval)"},
      {"blocked", "blocked state of every queue, from the deadlock detector (a pause map)"}},
     [] { return std::make_unique<FcFabric>(); }});

} // namespace

} // namespace ns3
