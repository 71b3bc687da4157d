#include "dcqcn.h"

#include "lfsim-attributes.h"
#include "lfsim-clock.h"
#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(Dcqcn);

TypeId
Dcqcn::GetTypeId()
{
    // Defaults: the SIGCOMM'15 paper's values (the `paper` preset); see doc/dcqcn.md for the
    // source of each and for the firmware defaults (`nic_default`).
    static TypeId tid
        = TypeId("ns3::Dcqcn")
              .SetParent<RdmaCongestionControl>()
              .SetGroupName("Dcqcn")
              .AddConstructor<Dcqcn>()
              .AddAttribute("rpg_time_reset",
                            "T: rate-increase timer; every T without a rate cut is one timer "
                            "stage and one rate increase.",
                            TimeValue(MicroSeconds(55)), MakeTimeAccessor(&Dcqcn::m_timeReset),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("rpg_byte_reset",
                            "B: byte counter; every B bytes sent without a rate cut is one byte "
                            "stage and one rate increase (0 disables it).",
                            UintegerValue(10000000), MakeUintegerAccessor(&Dcqcn::m_byteReset),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("rpg_threshold",
                            "F: increase events per counter spent in fast recovery before "
                            "additive increase (one counter past F) or hyper increase (both).",
                            UintegerValue(5), MakeUintegerAccessor(&Dcqcn::m_threshold),
                            MakeUintegerChecker<uint32_t>(1, 31))
              .AddAttribute("rpg_ai_rate", "R_AI: additive increase step of the target rate.",
                            DataRateValue(DataRate("40Mbps")),
                            MakeDataRateAccessor(&Dcqcn::m_aiRate), MakeDataRateChecker())
              .AddAttribute("rpg_hai_rate",
                            "R_HAI: hyper increase step; the target rate rises by i x R_HAI, i "
                            "the number of stages both counters are past F.",
                            DataRateValue(DataRate("50Mbps")),
                            MakeDataRateAccessor(&Dcqcn::m_haiRate), MakeDataRateChecker())
              .AddAttribute("rpg_min_rate", "Lowest rate a cut may set.",
                            DataRateValue(DataRate("1Mbps")),
                            MakeDataRateAccessor(&Dcqcn::m_minRate), MakeDataRateChecker())
              .AddAttribute("rpg_max_rate",
                            "Highest rate of the reaction point (0: the port's line rate).",
                            DataRateValue(DataRate("0bps")),
                            MakeDataRateAccessor(&Dcqcn::m_maxRate), MakeDataRateChecker())
              .AddAttribute("rpg_min_dec_fac",
                            "A cut keeps at least this percentage of the current rate (50: at "
                            "most halves it, which alpha <= 1 never exceeds).",
                            UintegerValue(50), MakeUintegerAccessor(&Dcqcn::m_minDecFac),
                            MakeUintegerChecker<uint32_t>(1, 100))
              .AddAttribute("rate_to_set_on_first_cnp",
                            "Current and target rate set at a QP's first CNP, before its cut "
                            "(0: keep the rate it has).",
                            DataRateValue(DataRate("0bps")),
                            MakeDataRateAccessor(&Dcqcn::m_firstCnpRate), MakeDataRateChecker())
              .AddAttribute("dce_tcp_g",
                            "Alpha gain in 1/1024: g = 1 - dce_tcp_g/1024 (1020: g = 1/256; "
                            "960: g = 1/16).",
                            UintegerValue(1020), MakeUintegerAccessor(&Dcqcn::m_dceTcpG),
                            MakeUintegerChecker<uint32_t>(0, 1023))
              .AddAttribute("dce_tcp_rtt",
                            "Alpha timer: every period without a CNP, alpha <- (1 - g) alpha.",
                            TimeValue(MicroSeconds(55)), MakeTimeAccessor(&Dcqcn::m_dceTcpRtt),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("initial_alpha_value", "Alpha at a QP's first CNP, in 1/1024.",
                            UintegerValue(1024), MakeUintegerAccessor(&Dcqcn::m_initialAlpha),
                            MakeUintegerChecker<uint32_t>(0, 1024))
              .AddAttribute("rate_reduce_monitor_period",
                            "At most one rate cut per period; a CNP inside it is served at its "
                            "end (0: every CNP cuts at once).",
                            TimeValue(Time(0)), MakeTimeAccessor(&Dcqcn::m_reduceMonitorPeriod),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("clamp_tgt_rate",
                            "Every cut sets the target rate to the current rate (R_T <- R_C).",
                            BooleanValue(true), MakeBooleanAccessor(&Dcqcn::m_clampTgtRate),
                            MakeBooleanChecker())
              .AddAttribute("clamp_tgt_rate_after_time_inc",
                            "Without clamp_tgt_rate: set R_T <- R_C at a cut only if the timer "
                            "has raised the rate since the previous cut.",
                            BooleanValue(true), MakeBooleanAccessor(&Dcqcn::m_clampAfterTimeInc),
                            MakeBooleanChecker())
              .AddAttribute("AlphaUpdate",
                            "When alpha moves: PerCnp (the paper: alpha <- (1-g) alpha + g at "
                            "every CNP, alpha <- (1-g) alpha every dce_tcp_rtt without one) or "
                            "PerWindow (NIC firmware: once every dce_tcp_rtt from the first CNP, "
                            "up if a CNP arrived in that window, else down).",
                            EnumValue(ALPHA_PER_CNP), MakeEnumAccessor(&Dcqcn::m_alphaUpdate),
                            MakeEnumChecker(ALPHA_PER_CNP, "PerCnp", ALPHA_PER_WINDOW, "PerWindow"))
              .AddTraceSource("RateCut",
                              "A rate cut: QP number, alpha after this CNP's update, target and "
                              "current rate after.",
                              MakeTraceSourceAccessor(&Dcqcn::m_cutTrace),
                              "ns3::Dcqcn::CutTracedCallback")
              .AddTraceSource("RateIncrease",
                              "A rate increase event: QP number, kind (1 fast recovery, 2 "
                              "additive, 3 hyper), target and current rate after.",
                              MakeTraceSourceAccessor(&Dcqcn::m_increaseTrace),
                              "ns3::Dcqcn::IncreaseTracedCallback");
    return tid;
}

DcqcnConfig
Dcqcn::MakeConfig(double lineRate) const
{
    DcqcnConfig c;
    const double max = double(m_maxRate.GetBitRate());
    c.maxRate = max > 0 ? std::min(max, lineRate) : lineRate;
    c.minRate = std::min(double(m_minRate.GetBitRate()), c.maxRate);
    c.aiRate = double(m_aiRate.GetBitRate());
    c.haiRate = double(m_haiRate.GetBitRate());
    c.threshold = m_threshold;
    c.byteReset = m_byteReset;
    c.g = 1.0 - m_dceTcpG / 1024.0;
    c.initialAlpha = m_initialAlpha / 1024.0;
    c.minDecFactor = m_minDecFac / 100.0;
    c.firstCnpRate = double(m_firstCnpRate.GetBitRate());
    c.clampTgtRate = m_clampTgtRate;
    c.clampTgtRateAfterTimeInc = m_clampAfterTimeInc;
    return c;
}

void
Dcqcn::OnConnect(RdmaQueuePair& qp)
{
    const uint32_t i = qp.GetIndex();
    if (m_flows.size() <= i)
    {
        m_flows.resize(i + 1);
    }
    Flow& f = m_flows[i];
    f.qp = Ptr<RdmaQueuePair>(&qp);
    f.rp = DcqcnReactionPoint(MakeConfig(qp.GetLineRate()));
    qp.SetRate(f.rp.CurrentRate());
}

void
Dcqcn::UpdateAlpha(const Flow& f) const
{
    // The alpha timer's expiries are applied when alpha is read: the same value as scheduling
    // them, without the events. Per CNP it restarts at every CNP; per window it runs from the
    // first CNP on.
    if (!f.rp.SeenCnp())
    {
        return;
    }
    const Time now = lfsim::Now();
    const int64_t periods = (now - f.alphaFrom).GetTimeStep() / m_dceTcpRtt.GetTimeStep();
    if (periods > 0)
    {
        if (m_alphaUpdate == ALPHA_PER_WINDOW)
        {
            f.rp.AlphaWindow(f.cnpInWindow); // the window that just ended
            f.rp.DecayAlpha(periods - 1);    // the ones without a CNP after it
            f.cnpInWindow = false;
        }
        else
        {
            f.rp.DecayAlpha(periods);
        }
        f.alphaFrom += m_dceTcpRtt * periods;
    }
}

void
Dcqcn::OnCnp(RdmaQueuePair& qp)
{
    const uint32_t i = qp.GetIndex();
    Flow& f = m_flows[i];
    const Time now = lfsim::Now();
    const bool first = !f.rp.SeenCnp();
    UpdateAlpha(f);
    const bool cut = f.lastCut.IsStrictlyNegative() || now - f.lastCut >= m_reduceMonitorPeriod;
    const bool perCnp = m_alphaUpdate == ALPHA_PER_CNP;
    f.rp.OnCnp(cut, perCnp);
    if (perCnp || first)
    {
        f.alphaFrom
            = now; // the paper's alpha timer restarts at every CNP; the window's at the first
    }
    // The first CNP sets alpha to its initial value; a window counts the CNPs after it.
    f.cnpInWindow = !perCnp && !first;
    if (cut)
    {
        AfterCut(i);
    }
    else if (!f.pendingCut.IsRunning())
    {
        f.pendingCut = lfsim::Schedule(f.lastCut + m_reduceMonitorPeriod - now, &Dcqcn::DeferredCut,
                                       this, i);
    }
}

void
Dcqcn::DeferredCut(uint32_t i)
{
    Flow& f = m_flows[i];
    UpdateAlpha(f);
    f.rp.Cut();
    AfterCut(i);
}

void
Dcqcn::AfterCut(uint32_t i)
{
    Flow& f = m_flows[i];
    f.lastCut = lfsim::Now();
    f.qp->SetRate(f.rp.CurrentRate());
    m_cutTrace(f.qp->GetQpn(), f.rp.Alpha(), f.rp.TargetRate(), f.rp.CurrentRate());
    f.timer.Cancel();
    f.timer = lfsim::Schedule(m_timeReset, &Dcqcn::OnTimer, this, i);
}

void
Dcqcn::OnTimer(uint32_t i)
{
    Flow& f = m_flows[i];
    Apply(f, f.rp.OnTimer());
    if (!f.rp.AtMaxRate())
    {
        f.timer = lfsim::Schedule(m_timeReset, &Dcqcn::OnTimer, this, i);
    }
}

void
Dcqcn::OnSent(RdmaQueuePair& qp, uint32_t bytes)
{
    Flow& f = m_flows[qp.GetIndex()];
    if (!f.rp.SeenCnp() || f.rp.AtMaxRate())
    {
        return;
    }
    const auto kind = f.rp.OnBytes(bytes);
    if (kind != DcqcnReactionPoint::NONE)
    {
        Apply(f, kind);
    }
}

void
Dcqcn::Apply(Flow& f, DcqcnReactionPoint::Increase kind)
{
    f.qp->SetRate(f.rp.CurrentRate());
    m_increaseTrace(f.qp->GetQpn(), int(kind), f.rp.TargetRate(), f.rp.CurrentRate());
}

const DcqcnReactionPoint&
Dcqcn::GetReactionPoint(const RdmaQueuePair& qp) const
{
    const Flow& f = m_flows[qp.GetIndex()];
    UpdateAlpha(f);
    return f.rp;
}

std::vector<std::string>
Dcqcn::StateNames() const
{
    return {"alpha", "target_Gbps", "current_Gbps"};
}

void
Dcqcn::GetState(const RdmaQueuePair& qp, double* values) const
{
    const DcqcnReactionPoint& rp = GetReactionPoint(qp);
    values[0] = rp.Alpha();
    values[1] = rp.TargetRate() / 1e9;
    values[2] = rp.CurrentRate() / 1e9;
}

void
Dcqcn::DoDispose()
{
    for (auto& f : m_flows)
    {
        f.timer.Cancel();
        f.pendingCut.Cancel();
        f.qp = nullptr;
    }
    m_flows.clear();
    RdmaCongestionControl::DoDispose();
}

namespace
{
// The firmware defaults of NVIDIA ConnectX NICs (mlxconfig); sources in doc/dcqcn.md.
const std::vector<std::array<std::string, 3>> kNicDefault = {
    {"ns3::Dcqcn", "rpg_time_reset", "300us"},
    {"ns3::Dcqcn", "rpg_byte_reset", "32767"},
    {"ns3::Dcqcn", "rpg_threshold", "1"},
    {"ns3::Dcqcn", "rpg_ai_rate", "5Mbps"},
    {"ns3::Dcqcn", "rpg_hai_rate", "50Mbps"},
    {"ns3::Dcqcn", "rpg_min_rate", "1Mbps"},
    {"ns3::Dcqcn", "rpg_max_rate", "0bps"},
    {"ns3::Dcqcn", "rpg_min_dec_fac", "50"},
    {"ns3::Dcqcn", "rate_to_set_on_first_cnp", "0bps"},
    {"ns3::Dcqcn", "dce_tcp_g", "1019"},
    {"ns3::Dcqcn", "dce_tcp_rtt", "1us"},
    {"ns3::Dcqcn", "initial_alpha_value", "1023"},
    {"ns3::Dcqcn", "rate_reduce_monitor_period", "4us"},
    {"ns3::Dcqcn", "clamp_tgt_rate", "false"},
    {"ns3::Dcqcn", "clamp_tgt_rate_after_time_inc", "true"},
    {"ns3::Dcqcn", "AlphaUpdate", "PerWindow"},
    {"ns3::RdmaNic", "CnpInterval", "2us"},
};

// SIGCOMM'15 values; where the paper gives none, the firmware default (doc/dcqcn.md).
const std::vector<std::array<std::string, 3>> kPaper = {
    {"ns3::Dcqcn", "rpg_time_reset", "55us"},
    {"ns3::Dcqcn", "rpg_byte_reset", "10000000"},
    {"ns3::Dcqcn", "rpg_threshold", "5"},
    {"ns3::Dcqcn", "rpg_ai_rate", "40Mbps"},
    {"ns3::Dcqcn", "rpg_hai_rate", "50Mbps"},
    {"ns3::Dcqcn", "rpg_min_rate", "1Mbps"},
    {"ns3::Dcqcn", "rpg_max_rate", "0bps"},
    {"ns3::Dcqcn", "rpg_min_dec_fac", "50"},
    {"ns3::Dcqcn", "rate_to_set_on_first_cnp", "0bps"},
    {"ns3::Dcqcn", "dce_tcp_g", "1020"},
    {"ns3::Dcqcn", "dce_tcp_rtt", "55us"},
    {"ns3::Dcqcn", "initial_alpha_value", "1024"},
    {"ns3::Dcqcn", "rate_reduce_monitor_period", "0s"},
    {"ns3::Dcqcn", "clamp_tgt_rate", "true"},
    {"ns3::Dcqcn", "clamp_tgt_rate_after_time_inc", "true"},
    {"ns3::Dcqcn", "AlphaUpdate", "PerCnp"},
    {"ns3::RdmaNic", "CnpInterval", "50us"},
};

// One line each: the controller (its name, its class in the roce fabric's scenarios), its
// presets.
const bool g_cc = RegisterCongestionControl(
    {"Dcqcn", "ns3::Dcqcn", "DCQCN (Zhu et al., SIGCOMM 2015): rate control from CNPs"});
const bool g_paper = lfsim::RegisterPreset(
    {"ns3::Dcqcn", "paper", "Zhu et al., SIGCOMM 2015 (the attribute defaults)", kPaper});
const bool g_nic = lfsim::RegisterPreset(
    {"ns3::Dcqcn", "nic_default", "NVIDIA ConnectX firmware defaults (mlxconfig)", kNicDefault});
} // namespace

} // namespace ns3
