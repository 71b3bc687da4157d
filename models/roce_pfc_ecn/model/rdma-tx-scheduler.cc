#include "rdma-tx-scheduler.h"

#include "lfsim-clock.h"
#include "ns3/trace-source-accessor.h"
#include "rdma-congestion-control.h"
#include "rdma-host-interface.h"
#include "rdma-queue-pair.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaTxScheduler);

TypeId
RdmaTxScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaTxScheduler")
                            .SetParent<ObjectBase>()
                            .SetGroupName("RocePfcEcn")
                            .AddTraceSource("QpRate", "A QP's sending rate changed (qpn, bit/s).",
                                            MakeTraceSourceAccessor(&RdmaTxScheduler::m_rateTrace),
                                            "ns3::RdmaTxScheduler::RateTracedCallback");
    return tid;
}

RdmaTxScheduler::RdmaTxScheduler()
{
    ConstructSelf(AttributeConstructionList());
}

void
RdmaTxScheduler::Setup(RoceNetDevice* port, RdmaHostInterface* host, RdmaCongestionControl* cc,
                       const std::vector<Ptr<RdmaQueuePair>>* qps)
{
    m_port = port;
    m_host = host;
    m_cc = cc;
    m_qps = qps;
}

void
RdmaTxScheduler::JoinRound(RdmaQueuePair& qp)
{
    if (qp.m_round == RdmaQueuePair::Round::NOT_YET)
    {
        JoinRoundFirst(qp);
    }
}

void
RdmaTxScheduler::JoinRoundFirst(RdmaQueuePair& qp)
{
    // Open-loop workloads connect every flow's QPs at set-up: a NIC's round held all of them,
    // future flows and receivers included, and each Pull read every one (a cold line each on a
    // large fabric).
    qp.m_round = RdmaQueuePair::Round::IN;
    const uint32_t index = qp.GetIndex();
    m_live.insert(std::lower_bound(m_live.begin(), m_live.end(), index), index);
}

void
RdmaTxScheduler::Retire(RdmaQueuePair& qp)
{
    if (qp.m_round == RdmaQueuePair::Round::IN)
    {
        m_live.erase(std::lower_bound(m_live.begin(), m_live.end(), qp.GetIndex()));
    }
    qp.m_round = RdmaQueuePair::Round::RETIRED;
}

void
RdmaTxScheduler::Wake(uint8_t prio)
{
    m_port->SetSourceReady(prio, true);
    m_port->Kick();
}

RdmaQueuePair*
RdmaTxScheduler::Pick(uint8_t prio)
{
    const Time now = lfsim::Now();
    if (const Time txFree = m_host->GetTxFree(); txFree > now)
    {
        // The host-read serializer is still fetching earlier payload: nothing new until then.
        m_wake[prio].Cancel();
        m_wake[prio] = lfsim::Schedule(txFree - now, &RdmaTxScheduler::Wake, this, prio);
        return nullptr;
    }
    const std::vector<Ptr<RdmaQueuePair>>& qps = *m_qps;
    const size_t n = qps.size();
    const size_t live = m_live.size();
    // The live QPs from m_rr on, wrapping: a scan of every QP from m_rr in the same order.
    const size_t first = std::lower_bound(m_live.begin(), m_live.end(), m_rr) - m_live.begin();
    Time earliest = Time::Max();
    for (size_t k = 0; k < live; ++k)
    {
        const size_t i = m_live[(first + k) % live];
        RdmaQueuePair& qp = *qps[i];
        if (qp.m_prio != prio || !qp.HasData())
        {
            continue;
        }
        if (qp.m_nextAvail > now)
        {
            earliest = std::min(earliest, qp.m_nextAvail);
            continue;
        }
        if (qp.m_window && qp.m_reads.empty() && qp.GetInFlightBytes() >= qp.m_window)
        {
            continue; // the window is full: an ACK wakes the port (RdmaQueuePair::AckSample)
        }
        m_rr = (i + 1) % n;
        return &qp;
    }
    if (earliest != Time::Max())
    {
        m_wake[prio].Cancel();
        m_wake[prio] = lfsim::Schedule(earliest - now, &RdmaTxScheduler::Wake, this, prio);
    }
    return nullptr;
}

void
RdmaTxScheduler::Sent(RdmaQueuePair& qp, uint32_t frameBytes)
{
    const Time now = lfsim::Now();
    const uint32_t line = EthLineBytes(frameBytes);
    const double lineRate = double(EthBitRate(m_port->GetSpeed()));
    qp.m_lastTx = now;
    qp.m_lastLine = line;
    if (qp.m_rate < lineRate)
    {
        qp.m_nextAvail = now + PicoSeconds(int64_t(line * 8.0 / qp.m_rate * 1e12));
    }
    if (m_cc)
    {
        m_cc->OnSent(qp, line);
    }
}

void
RdmaTxScheduler::SetRate(RdmaQueuePair& qp, double bps)
{
    const double line = double(EthBitRate(m_port->GetSpeed()));
    const double rate = std::min(bps, line);
    if (rate == qp.m_rate)
    {
        return;
    }
    qp.m_rate = rate;
    m_rateTrace(qp.m_qpn, rate);
    const Time now = lfsim::Now();
    if (qp.m_nextAvail <= now)
    {
        return;
    }
    // The gap after the last packet at the new rate: a QP slowed to a low rate is not held back
    // after its rate rises again.
    const Time was = qp.m_nextAvail;
    qp.m_nextAvail = std::max(
        now, rate < line ? qp.m_lastTx + PicoSeconds(int64_t(qp.m_lastLine * 8.0 / rate * 1e12))
                         : qp.m_lastTx);
    // Sooner than the wake-up for this class: move it (never call into the port from here, this
    // may run inside its pull).
    EventId& wake = m_wake[qp.m_prio];
    if (qp.m_nextAvail < was && qp.HasData()
        && (!wake.IsRunning() || TimeStep(wake.GetTs()) > qp.m_nextAvail))
    {
        wake.Cancel();
        wake = lfsim::Schedule(qp.m_nextAvail - now, &RdmaTxScheduler::Wake, this, qp.m_prio);
    }
}

void
RdmaTxScheduler::Dispose()
{
    for (auto& e : m_wake)
    {
        e.Cancel();
    }
    m_live.clear();
    m_qps = nullptr;
    m_host = nullptr;
    m_cc = nullptr;
    m_port = nullptr;
}

} // namespace ns3
