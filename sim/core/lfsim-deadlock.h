/*
 * Run-time deadlock detection shared by every fabric: a wait-for graph between transmit queues
 * and a cycle search (strongly connected components, Boost.Graph).
 *
 * A node is one (device, port, class) transmit queue. A queue is blocked when it may not send
 * (PFC-paused, out of BB_Credit) and waits on the queues downstream whose contents hold the
 * buffers it needs: an edge goes from the blocked queue to every queue of the next switch that
 * holds frames received through the pausing (or credit-withholding) input port. A cycle of
 * blocked queues whose members have all been blocked for PersistenceTime is a deadlock.
 *
 * Cost: the detector looks at the fabric only while some queue is blocked. A fabric calls Arm()
 * from its pause/credit traces; from then on it polls every CheckInterval until nothing is
 * blocked. A run in which no port is ever paused schedules no detector event at all.
 */
#ifndef LFSIM_DEADLOCK_H
#define LFSIM_DEADLOCK_H

#include "lfsim-run.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace lfsim
{

/// What a fabric reports about its queues at one instant (vectors sized to the queue count).
struct WaitForState
{
    std::vector<char> blocked;    ///< may not transmit now
    std::vector<ns3::Time> since; ///< start of the current blocked spell (if blocked)
    std::vector<uint64_t> bytes;  ///< bytes waiting in the queue
    std::vector<std::pair<uint32_t, uint32_t>> edges; ///< (blocked queue, queue it waits on)
    uint64_t framesTx = 0; ///< frames transmitted so far by every port of the fabric
};

/// For every queue, the queues it could ever wait on, each distinct list stored once: every
/// queue feeding a switch may wait on the same queues (that switch's, of its class), so a
/// fabric's lists take memory in proportion to its ports, not ports times switch radix.
struct MayWait
{
    std::vector<uint32_t> groupOf;             ///< per queue: its list in `groups`
    std::vector<std::vector<uint32_t>> groups; ///< the lists

    /// Queue q's list.
    const std::vector<uint32_t>&
    Of(uint32_t q) const
    {
        return groups[groupOf[q]];
    }
    /// One list per queue, as given.
    static MayWait PerQueue(std::vector<std::vector<uint32_t>> lists);
};

/// The fabric's side: fills a WaitForState. Only called while some queue is blocked.
class WaitForSource
{
  public:
    virtual ~WaitForSource() = default;
    /// Sizes are set by the detector; fills blocked, since, bytes and framesTx (cheap).
    virtual void Observe(WaitForState& s) const = 0;
    /// Appends the edges of the blocked, non-empty queues (may scan every queue's frames).
    virtual void Edges(WaitForState& s) const = 0;
    /// For every queue, the queues it could ever wait on (those of the switch at the far end
    /// of its link): a superset of the edges fixed by the topology, so that the detector can
    /// skip Edges() while the blocked queues cannot close a cycle.
    virtual MayWait MayWaitOn() const = 0;
};

} // namespace lfsim

namespace ns3
{

class DeadlockDetector : public Object
{
  public:
    static TypeId GetTypeId();

    /// Start watching `queues` queues, `label` naming each (e.g. "ring1/p2/prio3") when a
    /// result or the "blocked" series needs it; `source` outlives the run. Registers the
    /// "blocked" series when the run records it.
    void Attach(lfsim::RunContext& ctx, uint32_t queues, std::function<std::string(uint32_t)> label,
                const lfsim::WaitForSource* source);
    /// The same with every queue's label given.
    void Attach(lfsim::RunContext& ctx, std::vector<std::string> labels,
                const lfsim::WaitForSource* source);
    /// Something may have become blocked: poll from the next CheckInterval on (cheap if armed).
    void Arm();
    /// Writes the deadlock metrics into the run's summary.
    void Finish(lfsim::RunContext& ctx);

    bool
    IsEnabled() const
    {
        return m_enabled;
    }
    bool
    Detected() const
    {
        return m_detected;
    }
    /// When the last queue of the cycle became blocked.
    ns3::Time
    FormedAt() const
    {
        return m_formed;
    }
    ns3::Time
    DetectedAt() const
    {
        return m_detectedAt;
    }
    /// The cycle in wait-for order (each member waits on the next, the last on the first).
    const std::vector<uint32_t>&
    Cycle() const
    {
        return m_cycle;
    }
    std::string
    Label(uint32_t q) const
    {
        return m_label(q);
    }
    /// Checks run so far (for the benchmark of its cost).
    uint64_t
    Checks() const
    {
        return m_checks;
    }
    /// Checks that looked at the queues' contents (a cycle was possible).
    uint64_t
    EdgeScans() const
    {
        return m_edgeScans;
    }

    typedef void (*DeadlockTracedCallback)(const std::vector<uint32_t>& cycle);

  protected:
    void DoDispose() override;

  private:
    void Check();
    void Record(const lfsim::WaitForState& s);
    /// Members of one strongly connected component, ordered along a simple cycle.
    std::vector<uint32_t> CycleIn(const std::vector<uint32_t>& component,
                                  const std::vector<int>& componentOf, int c) const;

    // Attributes
    bool m_enabled = true;
    ns3::Time m_persistence;
    ns3::Time m_interval;
    ns3::Time m_stallTime;
    ns3::Time m_nextStallScan;
    // The first stall seen: a queue with frames waiting, blocked for StallTime without a break.
    int64_t m_stallQueue = -1;
    ns3::Time m_stallSince;
    ns3::Time m_stallSeen;
    uint64_t m_stallBytes = 0;

    /// True if the blocked queues, joined by MayWaitOn, contain a cycle.
    bool CycleCandidate();
    /// CycleCandidate's answer, worked out: a graph of the blocked queues and its components.
    bool Cyclic() const;

    uint32_t m_queues = 0;
    std::function<std::string(uint32_t)> m_label;
    const lfsim::WaitForSource* m_source = nullptr;
    lfsim::MayWait m_mayWaitOn;
    /// What CycleCandidate last looked at (per queue: 1 blocked, 2 blocked with frames) and said.
    std::vector<uint8_t> m_lastLook;
    bool m_lastCandidate = false;
    lfsim::RunContext* m_ctx = nullptr;
    lfsim::WaitForState m_state;
    bool m_armed = false;
    ns3::EventId m_event;
    uint64_t m_checks = 0;
    uint64_t m_edgeScans = 0;                           ///< checks that needed the exact edges
    std::deque<std::pair<ns3::Time, uint64_t>> m_moved; ///< (check time, framesTx) in window

    lfsim::Table* m_blockedSeries = nullptr;
    std::vector<char> m_recorded; ///< last blocked state written to the series

    bool m_detected = false;
    ns3::Time m_formed;
    ns3::Time m_detectedAt;
    ns3::Time m_cleared = ns3::Time::Max();
    std::vector<uint32_t> m_cycle;
    uint64_t m_frozenBytes = 0;
    uint64_t m_waitingBytes = 0; ///< bytes in every queue that waits, directly or not, on it
    uint32_t m_waitingQueues = 0;
    int64_t m_framesMoved = -1; ///< frames sent fabric-wide in the late persistence window
    ns3::TracedCallback<const std::vector<uint32_t>&> m_deadlockTrace;
};

} // namespace ns3

#endif
