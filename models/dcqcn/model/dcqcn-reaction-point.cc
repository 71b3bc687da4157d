#include "dcqcn-reaction-point.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

DcqcnReactionPoint::DcqcnReactionPoint(const DcqcnConfig& c)
    : m_c(c)
    , m_rc(c.maxRate)
    , m_rt(c.maxRate)
    , m_alpha(c.initialAlpha)
{
}

void
DcqcnReactionPoint::OnCnp(bool cut, bool updateAlpha)
{
    if (!m_seenCnp)
    {
        m_seenCnp = true;
        m_alpha = m_c.initialAlpha;
        if (m_c.firstCnpRate > 0)
        {
            m_rc = m_rt = std::min(m_c.firstCnpRate, m_c.maxRate);
        }
    }
    if (cut)
    {
        Cut();
    }
    if (updateAlpha)
    {
        m_alpha = (1 - m_c.g) * m_alpha + m_c.g;
    }
}

void
DcqcnReactionPoint::AlphaWindow(bool cnp)
{
    m_alpha = (1 - m_c.g) * m_alpha + (cnp ? m_c.g : 0.0);
}

void
DcqcnReactionPoint::Cut()
{
    // Without clamping, R_T keeps the rate the flow was recovering towards unless the timer
    // (not only the byte counter) has raised the rate since the last cut (NIC firmware).
    if (m_c.clampTgtRate || (m_c.clampTgtRateAfterTimeInc && m_timeStage > 0))
    {
        m_rt = m_rc;
    }
    const double cut = m_rc * std::max(1 - m_alpha / 2, m_c.minDecFactor);
    m_rc = std::max(m_c.minRate, cut);
    m_rt = std::max(m_rt, m_rc);
    m_timeStage = 0;
    m_byteStage = 0;
    m_bytes = 0;
}

void
DcqcnReactionPoint::DecayAlpha(uint64_t periods)
{
    m_alpha *= std::pow(1 - m_c.g, double(periods));
}

DcqcnReactionPoint::Increase
DcqcnReactionPoint::OnTimer()
{
    ++m_timeStage;
    return RaiseRate();
}

DcqcnReactionPoint::Increase
DcqcnReactionPoint::OnBytes(uint64_t bytes)
{
    if (m_c.byteReset == 0)
    {
        return NONE;
    }
    m_bytes += bytes;
    Increase last = NONE;
    while (m_bytes >= m_c.byteReset)
    {
        m_bytes -= m_c.byteReset;
        ++m_byteStage;
        last = RaiseRate();
    }
    return last;
}

DcqcnReactionPoint::Increase
DcqcnReactionPoint::RaiseRate()
{
    // A disabled byte counter counts as keeping pace with the timer.
    const uint32_t bytes = m_c.byteReset ? m_byteStage : m_timeStage;
    const uint32_t lo = std::min(m_timeStage, bytes);
    const uint32_t hi = std::max(m_timeStage, bytes);
    const uint32_t f = m_c.threshold;
    Increase kind;
    if (hi <= f)
    {
        kind = FAST_RECOVERY; // the first F increase events only halve the gap to R_T
    }
    else if (lo > f)
    {
        kind = HYPER;
        m_rt += (lo - f) * m_c.haiRate;
    }
    else
    {
        kind = ADDITIVE;
        m_rt += m_c.aiRate;
    }
    m_rt = std::min(m_rt, m_c.maxRate);
    m_rc = std::min((m_rt + m_rc) / 2, m_c.maxRate);
    if (m_rt - m_rc <= 1e-9 * m_rt)
    {
        m_rc = m_rt; // halving never closes the gap exactly; a bit/s in 10^9 is "recovered"
    }
    return kind;
}

} // namespace ns3
