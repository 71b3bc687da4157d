/*
 * DCQCN (Zhu et al., SIGCOMM 2015) as the rate control of an RdmaNic: RdmaNic.CongestionControl
 * "Dcqcn". One instance per NIC runs the reaction point of each of its QPs. The notification
 * point is the NIC's CNP generator (RdmaNic.CnpInterval, firmware min_time_between_cnps) and the
 * congestion point the switch's RED/ECN marking (RoceSwitch.Kmin/Kmax/Pmax).
 *
 * Attribute names are those of NVIDIA/Mellanox NIC firmware (mlxconfig / sysfs roce_rp), in its
 * units where they are fixed point (dce_tcp_g, initial_alpha_value: 1/1024) and as ns-3 Time /
 * DataRate values where the firmware counts microseconds or Mbit/s.
 */
#ifndef DCQCN_H
#define DCQCN_H

#include "dcqcn-reaction-point.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/traced-callback.h"
#include "rdma-nic.h"

#include <vector>

namespace ns3
{

class Dcqcn : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();

    /// When alpha moves (attribute AlphaUpdate).
    enum AlphaUpdateMode
    {
        ALPHA_PER_CNP = 0,    ///< the paper: at every CNP, and down every dce_tcp_rtt without one
        ALPHA_PER_WINDOW = 1, ///< NIC firmware: once every dce_tcp_rtt, up if a CNP came in it
    };

    void OnConnect(RdmaQueuePair& qp) override;
    void OnCnp(RdmaQueuePair& qp) override;
    void OnSent(RdmaQueuePair& qp, uint32_t bytes) override;
    std::vector<std::string> StateNames() const override;
    void GetState(const RdmaQueuePair& qp, double* values) const override;

    /// The reaction point of a QP of this NIC, alpha decayed to now.
    const DcqcnReactionPoint& GetReactionPoint(const RdmaQueuePair& qp) const;
    /// The configuration the attributes give for a port of this line rate (bit/s).
    DcqcnConfig MakeConfig(double lineRate) const;

    typedef void (*CutTracedCallback)(uint32_t qpn, double alpha, double targetBps,
                                      double currentBps);
    typedef void (*IncreaseTracedCallback)(uint32_t qpn, int kind, double targetBps,
                                           double currentBps);

  protected:
    void DoDispose() override;

  private:
    struct Flow
    {
        Ptr<RdmaQueuePair> qp;
        mutable DcqcnReactionPoint rp;
        mutable Time alphaFrom;           ///< alpha timer periods count from here (last CNP, or the
                                          ///< start of the current window)
        mutable bool cnpInWindow = false; ///< ALPHA_PER_WINDOW: a CNP came in this window
        Time lastCut = Time(-1);
        EventId timer;
        EventId pendingCut;
    };

    void UpdateAlpha(const Flow& f) const;
    void AfterCut(uint32_t i);
    void DeferredCut(uint32_t i);
    void OnTimer(uint32_t i);
    void Apply(Flow& f, DcqcnReactionPoint::Increase kind);

    std::vector<Flow> m_flows; ///< by QP index in the NIC

    // Attributes (firmware names).
    Time m_timeReset;
    uint32_t m_byteReset;
    uint32_t m_threshold;
    DataRate m_aiRate;
    DataRate m_haiRate;
    DataRate m_minRate;
    DataRate m_maxRate;
    uint32_t m_minDecFac;
    DataRate m_firstCnpRate;
    uint32_t m_dceTcpG;
    Time m_dceTcpRtt;
    uint32_t m_initialAlpha;
    Time m_reduceMonitorPeriod;
    bool m_clampTgtRate;
    bool m_clampAfterTimeInc;
    AlphaUpdateMode m_alphaUpdate;

    TracedCallback<uint32_t, double, double, double> m_cutTrace;
    TracedCallback<uint32_t, int, double, double> m_increaseTrace;
};

} // namespace ns3

#endif
