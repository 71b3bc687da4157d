#include "lfsim-deadlock.h"

#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <queue>

namespace lfsim
{

MayWait
MayWait::PerQueue(std::vector<std::vector<uint32_t>> lists)
{
    MayWait m;
    m.groupOf.resize(lists.size());
    for (uint32_t q = 0; q < lists.size(); ++q)
    {
        m.groupOf[q] = q;
    }
    m.groups = std::move(lists);
    return m;
}

} // namespace lfsim

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(DeadlockDetector);

TypeId
DeadlockDetector::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::DeadlockDetector")
              .SetParent<Object>()
              .SetGroupName("Lfsim")
              .AddConstructor<DeadlockDetector>()
              .AddAttribute("Enabled",
                            "Watch the wait-for graph of the fabric's queues for cycles.",
                            BooleanValue(true), MakeBooleanAccessor(&DeadlockDetector::m_enabled),
                            MakeBooleanChecker())
              .AddAttribute("StallTime",
                            "A queue that may not send (paused, out of credit) for this long "
                            "without a break is reported as a stall, "
                            "whatever the cause: a lost credit, a PFC storm, a deadlock. The run "
                            "ends with a warning naming the queue. 0s: off.",
                            TimeValue(MilliSeconds(1)),
                            MakeTimeAccessor(&DeadlockDetector::m_stallTime),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("PersistenceTime",
                            "A cycle of blocked queues is a deadlock once every member has been "
                            "blocked this long without a break.",
                            TimeValue(MicroSeconds(200)),
                            MakeTimeAccessor(&DeadlockDetector::m_persistence),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("CheckInterval",
                            "How often the wait-for graph is examined while some queue is "
                            "blocked (nothing is examined while none is). Also the resolution "
                            "of the 'blocked' recorder.",
                            TimeValue(MicroSeconds(10)),
                            MakeTimeAccessor(&DeadlockDetector::m_interval),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddTraceSource("Deadlock",
                              "A deadlock was detected: the queues of the cycle, in wait-for "
                              "order.",
                              MakeTraceSourceAccessor(&DeadlockDetector::m_deadlockTrace),
                              "ns3::DeadlockDetector::DeadlockTracedCallback");
    return tid;
}

void
DeadlockDetector::DoDispose()
{
    m_event.Cancel();
    m_source = nullptr;
    m_ctx = nullptr;
    Object::DoDispose();
}

void
DeadlockDetector::Attach(lfsim::RunContext& ctx, std::vector<std::string> labels,
                         const lfsim::WaitForSource* source)
{
    const uint32_t n = labels.size();
    Attach(
        ctx, n, [labels = std::move(labels)](uint32_t q) { return labels[q]; }, source);
}

void
DeadlockDetector::Attach(lfsim::RunContext& ctx, uint32_t queues,
                         std::function<std::string(uint32_t)> label,
                         const lfsim::WaitForSource* source)
{
    m_ctx = &ctx;
    m_queues = queues;
    m_label = std::move(label);
    m_source = source;
    const size_t n = m_queues;
    if (ctx.Records("blocked"))
    {
        // One row per change: blocked 1 from the start of the spell, 0 when first seen free.
        m_blockedSeries
            = &ctx.Series("blocked", {lfsim::BoolColumn("blocked"), lfsim::IntColumn("bytes")});
        std::vector<std::string> labels(n);
        for (uint32_t q = 0; q < n; ++q)
        {
            labels[q] = m_label(q);
        }
        ctx.SetLabels("blocked", std::move(labels));
    }
}

void
DeadlockDetector::Arm()
{
    if (!m_enabled || m_armed || !m_source)
    {
        return;
    }
    m_armed = true;
    if (m_recorded.size() != m_queues)
    {
        // The first pause of the run: what the checks use is made now (a run that never pauses
        // never holds it; 10 bytes a queue and the lists of MayWaitOn).
        m_mayWaitOn = m_source->MayWaitOn();
        m_state.blocked.assign(m_queues, 0);
        m_state.since.assign(m_queues, Time(0));
        m_state.bytes.assign(m_queues, 0);
        m_recorded.assign(m_queues, 0);
    }
    m_event = Simulator::Schedule(m_interval, &DeadlockDetector::Check, this);
}

void
DeadlockDetector::Record(const lfsim::WaitForState& s)
{
    const double now = Simulator::Now().GetSeconds();
    for (size_t q = 0; q < s.blocked.size(); ++q)
    {
        if (s.blocked[q] != m_recorded[q])
        {
            m_recorded[q] = s.blocked[q];
            m_blockedSeries->Append({s.blocked[q] ? s.since[q].GetSeconds() : now, double(q),
                                     double(s.blocked[q]), double(s.bytes[q])});
        }
    }
}

std::vector<uint32_t>
DeadlockDetector::CycleIn(const std::vector<uint32_t>& component,
                          const std::vector<int>& componentOf, int c) const
{
    // Shortest cycle through the component's first member (BFS inside the component).
    const uint32_t start = component.front();
    std::vector<std::vector<uint32_t>> out(m_queues);
    for (auto [a, b] : m_state.edges)
    {
        if (componentOf[a] == c && componentOf[b] == c)
        {
            out[a].push_back(b);
        }
    }
    std::vector<int64_t> parent(m_queues, -1);
    std::queue<uint32_t> bfs;
    bfs.push(start);
    while (!bfs.empty())
    {
        uint32_t v = bfs.front();
        bfs.pop();
        for (uint32_t w : out[v])
        {
            if (w == start)
            {
                std::vector<uint32_t> cycle{v};
                while (cycle.back() != start)
                {
                    cycle.push_back(uint32_t(parent[cycle.back()]));
                }
                std::reverse(cycle.begin(), cycle.end());
                return cycle;
            }
            if (parent[w] < 0)
            {
                parent[w] = v;
                bfs.push(w);
            }
        }
    }
    return component;
}

bool
DeadlockDetector::CycleCandidate()
{
    const lfsim::WaitForState& s = m_state;
    // The answer depends only on which queues are blocked and which of those hold frames, and
    // that often stays the same from one check to the next (the graph cost 4 % of fc_incast).
    const std::size_t n = m_queues;
    bool same = m_lastLook.size() == n;
    m_lastLook.resize(n);
    for (std::size_t q = 0; q < n; ++q)
    {
        const uint8_t look = s.blocked[q] ? (s.bytes[q] != 0 ? 2 : 1) : 0;
        same = same && m_lastLook[q] == look;
        m_lastLook[q] = look;
    }
    if (same)
    {
        return m_lastCandidate;
    }
    m_lastCandidate = Cyclic();
    return m_lastCandidate;
}

bool
DeadlockDetector::Cyclic() const
{
    using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
    const lfsim::WaitForState& s = m_state;
    Graph g(m_queues);
    bool any = false;
    for (uint32_t a = 0; a < m_queues; ++a)
    {
        if (!s.blocked[a] || s.bytes[a] == 0)
        {
            continue;
        }
        for (uint32_t b : m_mayWaitOn.Of(a))
        {
            if (s.blocked[b])
            {
                boost::add_edge(a, b, g);
                any = true;
            }
        }
    }
    if (!any)
    {
        return false;
    }
    std::vector<int> comp(m_queues);
    const int ncomp = boost::strong_components(g, comp.data());
    std::vector<uint32_t> size(ncomp, 0);
    for (int c : comp)
    {
        if (++size[c] > 1)
        {
            return true;
        }
    }
    return false;
}

void
DeadlockDetector::Check()
{
    ++m_checks;
    const Time now = lfsim::Now();
    lfsim::WaitForState& s = m_state;
    std::fill(s.blocked.begin(), s.blocked.end(), 0);
    std::fill(s.bytes.begin(), s.bytes.end(), 0);
    s.edges.clear();
    s.framesTx = 0;
    m_source->Observe(s);
    if (m_blockedSeries)
    {
        Record(s);
    }
    if (m_detected && m_cleared == Time::Max())
    {
        for (uint32_t q : m_cycle)
        {
            if (!s.blocked[q] || s.since[q] > m_formed)
            {
                m_cleared = now;
                break;
            }
        }
    }
    if (std::find(s.blocked.begin(), s.blocked.end(), 1) == s.blocked.end())
    {
        m_armed = false; // nothing blocked: sleep until the fabric arms us again
        m_moved.clear();
        return;
    }
    // Stalls are looked for every StallTime/8, not at every check: a pass over all queues
    // each CheckInterval cost 2-3 % of a PFC incast.
    if (m_stallQueue < 0 && m_stallTime.IsStrictlyPositive() && now >= m_nextStallScan)
    {
        m_nextStallScan = now + m_stallTime / 8;
        for (uint32_t q = 0; q < s.blocked.size(); ++q)
        {
            // Frames waiting or not: a port out of credit (or paused) that long is starved
            // (a lost credit, a slow-draining receiver, a PFC storm), even if its sender
            // holds the data itself.
            if (s.blocked[q] && now - s.since[q] >= m_stallTime)
            {
                m_stallQueue = q;
                m_stallSince = s.since[q];
                m_stallSeen = now;
                m_stallBytes = s.bytes[q];
                break;
            }
        }
    }
    m_moved.emplace_back(now, s.framesTx);
    while (m_moved.size() > 1 && m_moved.front().first < now - m_persistence - 2 * m_interval)
    {
        m_moved.pop_front();
    }
    // Scanning every queue's frames for the exact edges costs; do it only when the blocked
    // queues could close a cycle at all (a tree of pauses, as in an incast, cannot).
    if (!m_detected && CycleCandidate())
    {
        ++m_edgeScans;
        m_source->Edges(s);
    }
    if (!m_detected && !s.edges.empty())
    {
        using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
        const size_t n = m_queues;
        Graph g(n);
        bool selfLoop = false;
        for (auto [a, b] : s.edges)
        {
            boost::add_edge(a, b, g);
            selfLoop = selfLoop || a == b;
        }
        std::vector<int> comp(n);
        const int ncomp = boost::strong_components(g, comp.data());
        std::vector<std::vector<uint32_t>> members(ncomp);
        for (uint32_t q = 0; q < n; ++q)
        {
            members[comp[q]].push_back(q);
        }
        int best = -1;
        Time bestFormed = Time::Max();
        for (int c = 0; c < ncomp; ++c)
        {
            const auto& m = members[c];
            bool cyclic = m.size() > 1;
            if (!cyclic && selfLoop)
            {
                cyclic = std::find(s.edges.begin(), s.edges.end(), std::make_pair(m[0], m[0]))
                         != s.edges.end();
            }
            if (!cyclic)
            {
                continue;
            }
            Time formed(0);
            for (uint32_t q : m)
            {
                formed = std::max(formed, s.since[q]);
            }
            if (now - formed >= m_persistence && formed < bestFormed)
            {
                best = c;
                bestFormed = formed;
            }
        }
        if (best >= 0)
        {
            m_detected = true;
            m_formed = bestFormed;
            m_detectedAt = now;
            m_cycle = CycleIn(members[best], comp, best);
            for (uint32_t q : members[best])
            {
                m_frozenBytes += s.bytes[q];
            }
            // Everything that waits on the cycle, directly or through other queues.
            std::vector<std::vector<uint32_t>> in(n);
            for (auto [a, b] : s.edges)
            {
                in[b].push_back(a);
            }
            std::vector<char> seen(n, 0);
            std::queue<uint32_t> bfs;
            for (uint32_t q : members[best])
            {
                seen[q] = 1;
                bfs.push(q);
            }
            while (!bfs.empty())
            {
                uint32_t v = bfs.front();
                bfs.pop();
                m_waitingBytes += s.bytes[v];
                ++m_waitingQueues;
                for (uint32_t w : in[v])
                {
                    if (!seen[w])
                    {
                        seen[w] = 1;
                        bfs.push(w);
                    }
                }
            }
            // Frames sent over the second half of the persistence window: what the frames
            // already on their last hop at formation did is not "still moving".
            for (const auto& [t, frames] : m_moved)
            {
                if (t >= now - m_persistence / 2)
                {
                    m_framesMoved = int64_t(s.framesTx - frames);
                    break;
                }
            }
            m_deadlockTrace(m_cycle);
            if (m_ctx && m_ctx->config.stopOnDeadlock)
            {
                lfsim::StopRunNow();
            }
        }
    }
    m_event = lfsim::Schedule(m_interval, &DeadlockDetector::Check, this);
}

void
DeadlockDetector::Finish(lfsim::RunContext& ctx)
{
    if (!m_enabled)
    {
        return;
    }
    ctx.SetMetric("deadlock", m_detected);
    std::vector<std::string> cycle;
    for (uint32_t q : m_cycle)
    {
        cycle.push_back(m_label(q));
    }
    ctx.SetMetric("deadlock_cycle", cycle);
    ctx.SetMetric("deadlock_frozen_bytes", m_frozenBytes);
    ctx.SetMetric("deadlock_checks", m_checks);
    ctx.SetMetric("deadlock_edge_scans", m_edgeScans);
    ctx.SetMetric("stall", m_stallQueue >= 0);
    if (m_stallQueue >= 0)
    {
        ctx.SetMetric("stall_queue", m_label(m_stallQueue));
        ctx.SetMetric("stall_since_us", m_stallSince.GetSeconds() * 1e6);
        ctx.SetMetric("stall_detected_us", m_stallSeen.GetSeconds() * 1e6);
        ctx.SetMetric("stall_waiting_bytes", m_stallBytes);
    }
    if (!m_detected)
    {
        return;
    }
    ctx.SetMetric("deadlock_time_us", m_formed.GetSeconds() * 1e6);
    ctx.SetMetric("deadlock_detected_us", m_detectedAt.GetSeconds() * 1e6);
    ctx.SetMetric("deadlock_waiting_queues", m_waitingQueues);
    ctx.SetMetric("deadlock_waiting_bytes", m_waitingBytes);
    if (m_framesMoved >= 0)
    {
        // Frames sent anywhere in the fabric over the last half of the persistence time before
        // detection: traffic that does not depend on the cycle still flows (true), or the
        // whole fabric has frozen (false).
        ctx.SetMetric("deadlock_frames_moved", m_framesMoved);
        ctx.SetMetric("deadlock_traffic_moving", m_framesMoved > 0);
    }
    if (m_cleared != Time::Max())
    {
        ctx.SetMetric("deadlock_cleared_us", m_cleared.GetSeconds() * 1e6);
    }
}

} // namespace ns3
