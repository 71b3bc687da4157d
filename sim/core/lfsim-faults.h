/*
 * Faults in time, one mechanism for every fabric: a scenario's `faults:` list schedules link
 * failures and losses on the links of its graph. A fabric's channel owns a LinkFaults and asks
 * it about every frame and control word it carries (one branch while no fault is active); the
 * run schedules the changes of its state at the listed times.
 *
 *   link_down / link_up   every frame and control word sent on the link is lost while down
 *   link_flap             down for period/2, up for period/2, `count` times from `at`
 *   drop                  every N-th frame per direction (`every`) or each with probability p
 *   ber                   each bit of a frame (and of a control word) in error with probability
 *                         `rate`: a frame with one is dropped by the receiver (CRC/ICRC)
 *   lose_r_rdy            every N-th R_RDY per direction (links that carry R_RDY: FC)
 *   node_down / node_up   every link of a node (a NIC, host, target or switch that fails)
 *   pfc_storm             a fabric's node-level fault, offered by the fabric (RoCE hosts: the
 *                         NIC pauses its port continuously, as one whose receive path stopped)
 *   receiver_not_ready    likewise (RoCE hosts): the host posts no receive WQEs, so arriving
 *                         SENDs are answered with RNR NAKs
 * Each may end at `until`. Frames lost are counted by reason.
 */
#ifndef LFSIM_FAULTS_H
#define LFSIM_FAULTS_H

#include "ns3/nstime.h"
#include "ns3/random-variable-stream.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lfsim
{

class Graph;
class RunContext;

/// What a link does to what it carries; changed over time by the faults timeline.
class LinkFaults
{
    // First: the one field a channel reads per frame (Active), so that it shares a cache line
    // with the channel's object header; then the flags read per frame or control word.
    bool m_active = false;
    bool m_down = false;
    bool m_rrdyOn = false; ///< lose_r_rdy is set

  public:
    /// Set by channels that carry R_RDY, so that lose_r_rdy is refused elsewhere.
    bool carriesRRdy = false;

    LinkFaults() = default;
    LinkFaults(const LinkFaults&) = delete; // counted in s_activeLinks while active
    LinkFaults& operator=(const LinkFaults&) = delete;
    ~LinkFaults();

    enum Reason
    {
        LINK_DOWN,
        DROP_EVERY,
        DROP_RANDOM,
        BIT_ERROR,
        LOST_R_RDY,
        REASONS
    };
    static const char* ReasonName(int r);

    /// Whether a frame (or control word) of `bytes` bytes sent in `direction` (0: from the
    /// link's first port, 1: from its second) is lost; counts it. Cheap while nothing is set.
    bool
    Lose(uint32_t bytes, int direction, bool controlWord = false)
    {
        return Active() && Decide(bytes, direction, controlWord);
    }
    /// Whether any fault is set now (channels test this before computing Lose's arguments).
    /// Why the process-wide count first: in a run without faults a frame then never reads the
    /// channel's own line, which on a large fabric is cold (0.41 misses a hop at 4,096 hosts).
    bool
    Active() const
    {
        return s_activeLinks != 0 && m_active;
    }

    void SetDown(bool down);
    /// Told when the link goes down or comes back (a channel lets its ports know).
    void SetOnDown(std::function<void(bool down)> fn);
    /// Down now (link_down, a flap's down half, node_down): a port on it has no signal.
    bool
    Down() const
    {
        return m_down;
    }
    void SetDropEvery(uint64_t every);
    void SetDropProbability(double p);
    void SetBitErrorRate(double ber);
    void SetRRdyEvery(uint64_t every);

    /// Whether an R_RDY sent in `direction` is lost (every N-th while lose_r_rdy is set), on
    /// top of Lose() for it as a control word.
    bool
    LoseRRdy(int direction)
    {
        if (!m_rrdyOn || ++m_set->rrdy[direction] % m_set->rrdyEvery != 0)
        {
            return false;
        }
        ++m_set->lost[LOST_R_RDY];
        return true;
    }

    uint64_t
    Lost(int reason) const
    {
        return m_set ? m_set->lost[reason] : 0;
    }
    /// A random stream of its own (ns-3 RNG, seeded from the scenario); only for random drops.
    void SetStream(int64_t stream);

  private:
    bool Decide(uint32_t bytes, int direction, bool controlWord);
    void Update();

    /// Links of this process with a fault set now (m_active).
    static uint32_t s_activeLinks;

    /// What a fault, once set, keeps: made by the first setter, so that a link that never has
    /// one (nearly all of a large fabric's) holds 16 bytes.
    struct Settings
    {
        std::function<void(bool down)> onDown;
        uint64_t every = 0;
        double probability = 0;
        double ber = 0;
        uint64_t rrdyEvery = 0;
        std::array<uint64_t, 2> frames{0, 0};
        std::array<uint64_t, 2> rrdy{0, 0};
        std::array<uint64_t, REASONS> lost{};
        ns3::Ptr<ns3::UniformRandomVariable> uniform;
        int64_t stream = -1;
    };

    Settings&
    Set()
    {
        if (!m_set)
        {
            m_set = std::make_unique<Settings>();
        }
        return *m_set;
    }

    std::unique_ptr<Settings> m_set;
};

/// A channel that carries its link's faults.
class FaultableChannel
{
  public:
    virtual ~FaultableChannel() = default;
    LinkFaults&
    Faults()
    {
        return m_faults;
    }

  protected:
    LinkFaults m_faults;
};

/// One entry of the scenario's `faults:` list, as text (checked by ScheduleFaults).
using FaultSpec = std::map<std::string, std::string>;

/// Schedules `faults` on the links of the run's graph (whose fabric has built its channels).
/// Returns what writes the counters after the run (empty when there are no faults). Throws
/// std::invalid_argument naming faults[i].key.
std::function<void(RunContext&)> ScheduleFaults(RunContext& ctx,
                                                const std::vector<FaultSpec>& faults);

} // namespace lfsim

#endif
