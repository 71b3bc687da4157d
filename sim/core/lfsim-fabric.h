/*
 * The skeleton of a fabric made of ports, links and switches (fc, roce): what such a fabric
 * does around its devices, written once. A fabric supplies only what differs: which port a
 * switch sends a frame out of (PortMap::Path), what blocks one of its queues and what a queue
 * holds (PortWaitFor), the trace each recorder listens to, and the bytes a capture shows.
 *
 * Everything here runs at build time, at the end of the run, or once per sample or deadlock
 * check; none of it is on a frame's path.
 */
#ifndef LFSIM_FABRIC_H
#define LFSIM_FABRIC_H

#include "lfsim-capture.h"
#include "lfsim-deadlock.h"
#include "lfsim-graph.h"
#include "lfsim-run.h"
#include "lfsim-workload.h"
#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace lfsim
{

/// Streams of the workloads' own draws (random permutations, open-loop arrivals): far from
/// the devices' streams so that adding a switch never shifts them.
constexpr int64_t WORKLOAD_STREAMS = 1000000;

/// The run's routes: the topology's routing, with its failed link and stale routes.
RouteTable FabricRoutes(const RunContext& ctx);

/// The flows of the run's workloads, their start offsets drawn from `start`; `hostRate(h)`:
/// host h's line rate, bit/s (for loads).
std::vector<FlowSpec> FabricFlows(const RunContext& ctx, ns3::Ptr<ns3::UniformRandomVariable> start,
                                  std::function<double(uint32_t host)> hostRate);

/// A fabric's ports as the skeleton sees them: views of the topology's own vectors (every
/// port, host ports first, one per address), which outlive this.
struct PortMap
{
    const std::vector<uint32_t>* peer;      ///< the port at the other end of each port's link
    const std::vector<int32_t>* portSwitch; ///< switch of each port, -1 at a host
    const std::vector<uint32_t>* hostOf;    ///< host number of each address
    uint32_t switches = 0;

    /// The view of a topology with members peer, portSwitch, hostOf and switches.
    template <class Topology>
    static PortMap
    Of(const Topology& t)
    {
        return {&t.peer, &t.portSwitch, &t.hostOf, uint32_t(t.switches.size())};
    }

    uint32_t
    Ports() const
    {
        return peer->size();
    }

    /// The ports a frame leaves from on its way from address `from`: the host's port, then one
    /// port per switch, `next(s, in)` being the port switch s sends it out of after it came in
    /// through port `in` (NONE: no route). Empty when it never reaches a host.
    template <class Next>
    std::vector<uint32_t>
    Path(uint32_t from, Next next) const
    {
        std::vector<uint32_t> out{from};
        uint32_t port = from;
        for (uint32_t hop = 0; hop <= switches; ++hop)
        {
            const uint32_t in = (*peer)[port];
            const int32_t s = (*portSwitch)[in];
            if (s < 0)
            {
                return out;
            }
            port = next(uint32_t(s), in);
            if (port == NONE)
            {
                return {};
            }
            out.push_back(port);
        }
        return {};
    }

    /// The switch port whose link ends at address `a` (NONE if a switch does not feed it).
    uint32_t
    Feeder(uint32_t a) const
    {
        const uint32_t feed = (*peer)[a];
        return (*portSwitch)[feed] >= 0 ? feed : NONE;
    }
};

/// One port's transmit backlog from the warmup on: its time average and peak, reported as the
/// bottleneck's (the switch port where the first flow's data converges, e.g. an incast's).
struct QueueAverage
{
    uint32_t port = NONE; ///< NONE: nothing watched, nothing reported
    ns3::Time from;       ///< the warmup
    ns3::Time last;
    double bytes = 0;
    double peak = 0;
    double integral = 0; ///< byte-seconds since `from`

    /// Watches the switch port feeding address `dst`, from `warmup`: false if no switch feeds
    /// it. The fabric then hooks that port's backlog trace to Set.
    bool
    Watch(const PortMap& ports, uint32_t dst, ns3::Time warmup)
    {
        port = ports.Feeder(dst);
        from = warmup;
        return port != NONE;
    }

    void
    Advance(ns3::Time now)
    {
        if (now > from)
        {
            integral += bytes * (now - std::max(last, from)).GetSeconds();
        }
        last = now;
    }

    /// The backlog is now `b` bytes.
    void
    Set(double b)
    {
        Advance(ns3::Simulator::Now());
        bytes = b;
        peak = std::max(peak, b);
    }

    /// Metrics peak_queue_KiB (of `peakBytes`), mean_queue_KiB and bottleneck_port, if watched.
    void Report(RunContext& ctx, double peakBytes, const std::vector<std::string>& labels);
};

/// Stops the run when every flow has a finite number of messages and has completed them all.
/// A flow is whatever the fabric counts in: a workload's flow, or (iscsi_burst) a pair's writes.
class FlowCompletion
{
  public:
    /// Counts flow `s` in (each flow once).
    void
    Add(const FlowSpec& s)
    {
        Add(s.messages > 0);
    }

    /// Counts a flow in; an endless one (not `finite`) keeps the run going.
    void
    Add(bool finite)
    {
        ++m_flows;
        m_finite += finite;
    }

    /// Flow `s` has completed `completed` messages: when that is all of them, calls `done()`,
    /// then stops the run if that was the last flow.
    template <class Done>
    void
    Completed(const FlowSpec& s, uint32_t completed, Done done)
    {
        if (s.messages && completed == s.messages)
        {
            done();
            Completed();
        }
    }

    /// A finite flow has completed (each once): stops the run if it was the last.
    void
    Completed()
    {
        if (++m_done == m_finite && m_finite == m_flows)
        {
            StopRunNow();
        }
    }

    /// Whether every flow counted in has completed.
    bool
    AllCompleted() const
    {
        return m_done == m_flows;
    }

  private:
    size_t m_flows = 0;
    size_t m_finite = 0;
    size_t m_done = 0;
};

/// Every flow's label: "source>destination" host names.
std::vector<std::string> FlowLabels(const RunContext& ctx, const std::vector<FlowSpec>& flows);

/// Series "goodput": the payload each of `labels.size()` flows delivered per sample interval,
/// Gbit/s, from `delivered(f)` (bytes so far). Needs a sample interval.
void RecordFlowGoodput(RunContext& ctx, std::vector<std::string> labels,
                       std::function<uint64_t(uint32_t f)> delivered);

/// Series `name`: one value of each port in `ports` (its label in `labels`, its id its place
/// there), `get(device)`; sampled when the run samples, else at 0 s and then on every change,
/// `connect(table, id, device)` hooking the device's trace that appends the row.
template <class Device, class Get, class Connect>
void
RecordPortValues(RunContext& ctx, const std::string& name, const ColumnSpec& column,
                 std::vector<std::string> labels, const std::vector<ns3::Ptr<Device>>& ports,
                 Get get, Connect connect)
{
    Table* tab = &ctx.Series(name, {column});
    ctx.SetLabels(name, std::move(labels));
    const bool sampled = ctx.config.sampleInterval.IsStrictlyPositive();
    for (uint32_t i = 0; i < ports.size(); ++i)
    {
        const ns3::Ptr<Device>& d = ports[i];
        if (sampled)
        {
            ctx.SamplePeriodically(
                [tab, d, id = double(i), get] {
                    tab->Append({ns3::Simulator::Now().GetSeconds(), id, double(get(*d))});
                });
        }
        else
        {
            tab->Append({0.0, double(i), double(get(*d))});
            connect(tab, double(i), d);
        }
    }
}

/// A traced value's row: time, port, its new value.
template <class T>
void
AppendTracedValue(Table* t, double port, T, T v)
{
    t->Append({ns3::Simulator::Now().GetSeconds(), port, double(v)});
}

/// A port event's row: time, port, the trace's values, then dir (0 sent, 1 received).
template <class... Values>
void
AppendPortEvent(Table* t, double port, double dir, Values... v)
{
    t->Append({ns3::Simulator::Now().GetSeconds(), port, double(v)..., dir});
}

/// Series `name` of every event each port sends (trace `tx`, dir 0) and receives (`rx`, dir 1),
/// the traces' values (`Values`) in `columns`.
template <class... Values, class Device>
void
RecordPortEvents(RunContext& ctx, const std::string& name, const std::vector<ColumnSpec>& columns,
                 std::vector<std::string> labels, const std::vector<ns3::Ptr<Device>>& ports,
                 const char* tx, const char* rx)
{
    Table* tab = &ctx.Series(name, columns);
    ctx.SetLabels(name, std::move(labels));
    for (uint32_t i = 0; i < ports.size(); ++i)
    {
        ports[i]->TraceConnectWithoutContext(
            tx, ns3::MakeBoundCallback(&AppendPortEvent<Values...>, tab, double(i), 0.0));
        ports[i]->TraceConnectWithoutContext(
            rx, ns3::MakeBoundCallback(&AppendPortEvent<Values...>, tab, double(i), 1.0));
    }
}

/// The run's packet captures: a file per port asked for, fed by the port's frame traces.
class Captures
{
  public:
    /// Opens the files (OpenCaptures) and connects each captured port's `traces`.
    template <class Device>
    void
    Open(RunContext& ctx, const std::vector<std::string>& labels, uint32_t linkType,
         PortCapture::Encoder encode, const std::vector<ns3::Ptr<Device>>& ports,
         std::initializer_list<const char*> traces)
    {
        m_files = OpenCaptures(ctx, labels, linkType, std::move(encode));
        for (uint32_t i = 0; i < m_files.size(); ++i)
        {
            for (const char* trace : traces)
            {
                if (m_files[i])
                {
                    ports[i]->TraceConnectWithoutContext(
                        trace, ns3::MakeCallback(&PortCapture::Capture, m_files[i]));
                }
            }
        }
    }

    void Close();

  private:
    std::vector<ns3::Ptr<PortCapture>> m_files;
};

/// The wait-for graph of a fabric of ports: one queue per (port, class), queue q = port *
/// classes + class. A queue waits on queues of its class at the node at the far end of its
/// link (MayWaitOn). `Fabric` (the subclass) supplies, per port i and class c:
///   uint64_t FramesTx(uint32_t i) const;
///   void Look(uint32_t i, uint8_t c, uint32_t q, WaitForState& s) const; // blocked, since, bytes
/// and overrides Edges(), which says what the queues hold.
template <class Fabric>
class PortWaitFor : public WaitForSource
{
  public:
    /// `classes`: the classes that can block ({0} for a fabric without classes: then a queue's
    /// label is its port's). `waitOnHosts`: whether a queue feeding a host may wait on the
    /// host's queues (its receive buffers are freed only as the host's port sends).
    PortWaitFor(PortMap ports, const std::vector<std::string>& labels, std::vector<uint8_t> classes,
                bool classLabels, bool waitOnHosts)
        : m_map(ports)
        , m_labels(labels)
        , m_classes(std::move(classes))
        , m_classLabels(classLabels)
        , m_waitOnHosts(waitOnHosts)
    {
    }

    uint32_t
    Queues() const
    {
        return m_map.Ports() * m_classes.size();
    }

    /// Queue q's name: its port's label, and class ("leaf0/p2/prio3").
    std::string
    Label(uint32_t q) const
    {
        const uint32_t nc = m_classes.size();
        if (!m_classLabels)
        {
            return m_labels[q / nc];
        }
        return m_labels[q / nc] + "/prio" + std::to_string(m_classes[q % nc]);
    }

    /// Watches these queues with `detector`, this outliving the run.
    void
    Attach(ns3::DeadlockDetector& detector, RunContext& ctx) const
    {
        detector.Attach(
            ctx, Queues(), [this](uint32_t q) { return Label(q); }, this);
    }

    void
    Observe(WaitForState& s) const override
    {
        const Fabric& f = static_cast<const Fabric&>(*this);
        const uint32_t nc = m_classes.size();
        for (uint32_t i = 0; i < m_map.Ports(); ++i)
        {
            s.framesTx += f.FramesTx(i);
            for (uint32_t k = 0; k < nc; ++k)
            {
                f.Look(i, m_classes[k], i * nc + k, s);
            }
        }
    }

    MayWait
    MayWaitOn() const override
    {
        // One list per (node, class): the switches' first, then the hosts' (or one empty list
        // for every queue feeding a host).
        const uint32_t nc = m_classes.size();
        const uint32_t ports = m_map.Ports();
        uint32_t hosts = 0;
        for (uint32_t i = 0; i < ports; ++i)
        {
            if ((*m_map.portSwitch)[i] < 0)
            {
                hosts = std::max(hosts, (*m_map.hostOf)[i] + 1);
            }
        }
        MayWait may;
        may.groups.resize(m_map.switches * nc + (m_waitOnHosts ? hosts * nc : 1));
        auto node = [&](uint32_t port)
        {
            const int32_t s = (*m_map.portSwitch)[port];
            return s >= 0          ? uint32_t(s)
                   : m_waitOnHosts ? m_map.switches + (*m_map.hostOf)[port]
                                   : NONE;
        };
        for (uint32_t i = 0; i < ports; ++i)
        {
            const uint32_t n = node(i);
            for (uint32_t k = 0; n != NONE && k < nc; ++k)
            {
                may.groups[n * nc + k].push_back(i * nc + k);
            }
        }
        const uint32_t none = m_map.switches * nc; // the empty list, without waitOnHosts
        may.groupOf.resize(ports * nc);
        for (uint32_t i = 0; i < ports; ++i)
        {
            const uint32_t n = node((*m_map.peer)[i]);
            for (uint32_t k = 0; k < nc; ++k)
            {
                may.groupOf[i * nc + k] = n != NONE ? n * nc + k : none;
            }
        }
        return may;
    }

  protected:
    PortMap m_map;
    const std::vector<std::string>& m_labels;
    std::vector<uint8_t> m_classes;

  private:
    bool m_classLabels;
    bool m_waitOnHosts;
};

} // namespace lfsim

#endif
