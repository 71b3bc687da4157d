/*
 * The DCQCN reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015, section 3.1) as a pure state machine: no clock, no network. The ns-3 driver
 * (Dcqcn) turns CNP arrivals, timer expiries and transmitted bytes into the calls below, so the
 * arithmetic can be tested step by step against the paper's formulas.
 *
 * Symbols: R_C current rate, R_T target rate, alpha the congestion estimate, g its gain, F the
 * fast-recovery threshold, R_AI / R_HAI the additive / hyper increase steps, B the byte counter.
 */
#ifndef DCQCN_REACTION_POINT_H
#define DCQCN_REACTION_POINT_H

#include <cstdint>

namespace ns3
{

struct DcqcnConfig
{
    double maxRate = 0;       ///< bit/s: the rate the RP never exceeds (line rate or rpg_max_rate)
    double minRate = 0;       ///< bit/s: rpg_min_rate
    double aiRate = 0;        ///< bit/s: R_AI (rpg_ai_rate)
    double haiRate = 0;       ///< bit/s: R_HAI (rpg_hai_rate)
    uint32_t threshold = 5;   ///< F (rpg_threshold)
    uint64_t byteReset = 0;   ///< B in bytes (rpg_byte_reset); 0 disables the byte counter
    double g = 1.0 / 256;     ///< alpha gain (1 - dce_tcp_g / 1024)
    double initialAlpha = 1;  ///< alpha at the first CNP (initial_alpha_value / 1024)
    double minDecFactor = 0;  ///< a cut keeps at least this fraction of R_C (rpg_min_dec_fac %)
    double firstCnpRate = 0;  ///< bit/s set at the first CNP before its cut; 0: keep R_C
    bool clampTgtRate = true; ///< every cut sets R_T = R_C (the paper)
    bool clampTgtRateAfterTimeInc = true; ///< ... or only when the timer raised the rate since
};

class DcqcnReactionPoint
{
  public:
    enum Increase
    {
        NONE,
        FAST_RECOVERY,
        ADDITIVE,
        HYPER
    };

    DcqcnReactionPoint() = default;
    /// Starts at the maximum rate, as a QP does before its first CNP.
    explicit DcqcnReactionPoint(const DcqcnConfig& c);

    /// A CNP arrived. On the first one alpha takes its initial value (and R_C, R_T the
    /// first-CNP rate if one is set). Then, if `cut`, the rate cut (Cut()) with the alpha it
    /// found, and alpha <- (1 - g) alpha + g (the paper's order). With cut false (the cut waits
    /// for rate_reduce_monitor_period) call Cut() later.
    /// With `updateAlpha` false (alpha moves once per window instead, AlphaWindow) the CNP
    /// leaves alpha as it is, except for the first CNP's initial value.
    void OnCnp(bool cut = true, bool updateAlpha = true);
    /// The rate cut: R_T <- R_C (if clamping), R_C <- max(R_min, R_C (1 - alpha / 2)); the
    /// increase stages and the byte counter restart.
    void Cut();
    /// `periods` expiries of the alpha timer without a CNP: alpha <- (1 - g)^periods alpha.
    void DecayAlpha(uint64_t periods = 1);
    /// The end of one alpha window (NIC firmware): alpha <- (1 - g) alpha + g if a CNP arrived
    /// in it, else alpha <- (1 - g) alpha.
    void AlphaWindow(bool cnp);
    /// The rate-increase timer expired (T without a cut): one timer stage, one increase.
    Increase OnTimer();
    /// `bytes` were sent: every B bytes is one byte-counter stage and one increase. Returns the
    /// kind of the last increase (NONE if the counter did not expire).
    Increase OnBytes(uint64_t bytes);

    double
    CurrentRate() const
    {
        return m_rc;
    }
    double
    TargetRate() const
    {
        return m_rt;
    }
    double
    Alpha() const
    {
        return m_alpha;
    }
    uint32_t
    TimeStage() const
    {
        return m_timeStage;
    }
    uint32_t
    ByteStage() const
    {
        return m_byteStage;
    }
    bool
    SeenCnp() const
    {
        return m_seenCnp;
    }
    /// R_C and R_T are both at the maximum: nothing left to recover.
    bool
    AtMaxRate() const
    {
        return m_rc >= m_c.maxRate && m_rt >= m_c.maxRate;
    }

  private:
    Increase RaiseRate();

    DcqcnConfig m_c;
    double m_rc = 0;
    double m_rt = 0;
    double m_alpha = 1;
    uint32_t m_timeStage = 0;
    uint32_t m_byteStage = 0;
    uint64_t m_bytes = 0;
    bool m_seenCnp = false;
};

} // namespace ns3

#endif
