/*
 * Report: the shared part that turns what a run did into tables and metrics, whatever the
 * fabric. The fabric tells it when each message of each flow completed and what its transport
 * delivered; the report computes flow completion times against each flow's ideal (its FCT alone
 * on an empty fabric, from the fabric's closed form), slowdowns overall and per size bucket,
 * goodput and fairness per workload, and the per-link and per-switch tables.
 */
#ifndef LFSIM_REPORT_H
#define LFSIM_REPORT_H

#include "lfsim-run.h"
#include "lfsim-workload.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/simulator.h"

#include <functional>
#include <string>
#include <vector>

namespace ns3
{

class Report : public Object
{
  public:
    static TypeId GetTypeId();

    Time
    GetWarmup() const
    {
        return m_warmup;
    }
    /// Upper bounds (bytes) of the flow-size buckets of the slowdown table.
    std::vector<uint64_t> Buckets() const;
    bool
    WritesFlowTable() const
    {
        return m_flowTable;
    }
    bool
    WritesMessageTable() const
    {
        return m_messageTable;
    }

  private:
    Time m_warmup;
    std::string m_buckets;
    bool m_flowTable = true;
    bool m_messageTable = false;
};

} // namespace ns3

namespace lfsim
{

class FlowReport
{
  public:
    /// `labels`: one per flow (e.g. "h1>h0"); `names`: the workloads' names.
    void Init(const RunContext& ctx, const std::vector<FlowSpec>& flows,
              std::vector<std::string> workloadNames);
    /// A message of flow `f` completed after `fct` (from its posting).
    void
    MessageDone(uint32_t f, ns3::Time fct)
    {
        FlowState& s = m_state[f];
        if (m_messageTable)
        {
            m_messages.push_back({f, s.completed, ns3::Simulator::Now() - fct, fct});
        }
        ++s.completed;
        if (ns3::Simulator::Now() >= m_warmup)
        {
            s.fctUs.push_back(fct.GetSeconds() * 1e6);
        }
    }
    /// Transport bytes delivered in order to flow f's receiver so far.
    std::function<uint64_t(uint32_t f)> delivered;
    /// Or, from a transport that counts them itself, the bytes delivered since the warmup
    /// (then no snapshot is taken at the warmup). Set before Init.
    std::function<uint64_t(uint32_t f)> deliveredInWindow;
    /// Flow f's FCT alone on the empty fabric (per message of its size).
    std::function<ns3::Time(uint32_t f)> ideal;
    /// Extra per-flow columns a fabric adds to the flows table (e.g. retransmitted).
    std::vector<std::pair<ColumnSpec, std::function<double(uint32_t f)>>> extraColumns;

    /// Snapshot of the delivered bytes at the warmup (scheduled by Init).
    void SnapshotWarmup();
    /// Tables "flows" and "slowdown_by_size", the metrics of the first workload unprefixed
    /// and of the others as NAME_goodput_Gbps, NAME_fct_p50_us, ...
    void Finish(RunContext& ctx);

    const std::vector<FlowSpec>&
    Flows() const
    {
        return *m_flows;
    }
    /// Messages completed by flow f so far.
    uint32_t
    Completed(uint32_t f) const
    {
        return m_state[f].completed;
    }

  private:
    struct FlowState
    {
        uint32_t completed = 0;
        std::vector<double> fctUs; ///< of messages completed from the warmup on
        uint64_t atWarmup = 0;
    };

    struct MessageRow
    {
        uint32_t flow;
        uint32_t index; ///< the flow's messages in completion order: 0, 1, ...
        ns3::Time posted;
        ns3::Time fct;
    };

    const std::vector<FlowSpec>* m_flows = nullptr;
    std::vector<FlowState> m_state;
    bool m_messageTable = false;
    std::vector<MessageRow> m_messages; ///< every message completed, with Report.MessageTable
    std::vector<std::string> m_names;
    ns3::Time m_warmup;
    std::vector<uint64_t> m_buckets;
    bool m_table = true;
};

/// Per port of a fabric, what the link and switch tables are computed from.
struct PortStats
{
    double txBytes = 0; ///< line bytes sent (frames with their overheads)
    double rateBps = 0; ///< line rate
    double pausedUs = 0;
    double peakQueueBytes = 0;
};

/// Table "links" (a, b: port indices into `portLabels`, util_ab and util_ba: fraction of the
/// line rate each direction carried over the run) and metric max_link_util; `peer[i]` is the
/// port at the other end of port i's cable, each cable listed once from its lower index.
/// `port(i)` gives port i's figures (asked for each port once or twice: nothing is kept per
/// port beside the table).
void ReportLinks(RunContext& ctx, const std::vector<std::string>& portLabels,
                 const std::vector<uint32_t>& peer, const std::function<PortStats(uint32_t)>& port,
                 double runSeconds);

} // namespace lfsim

#endif
