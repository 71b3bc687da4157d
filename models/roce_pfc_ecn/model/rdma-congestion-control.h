/*
 * The congestion-control plug-in of an RdmaNic (the reaction point), the ns-3 way: as
 * TcpL4Protocol picks a TcpCongestionOps, RdmaNic.CongestionControl is a TypeIdValue and the NIC
 * makes its controller through an ObjectFactory, so the controller's own attributes come from
 * the scenario like any other class's. A controller is one module under models/ with one
 * registration line:
 *
 *     const bool g_cc = RegisterCongestionControl({"Dcqcn", "ns3::Dcqcn", "DCQCN (...)"});
 *
 * which makes its short name a value of RdmaNic.CongestionControl (YAML, --set, Python) and
 * its class configurable in the roce fabric's scenarios. "None" (the base class itself) leaves
 * every QP at line rate and costs nothing per packet.
 *
 * What a controller sees, once per event and without allocation: OnConnect (a QP exists),
 * OnSent (a packet left), OnCnp (a CNP arrived) and OnAck with an RdmaAckSample (bytes newly
 * acknowledged, the RTT from the NIC timestamp the ACK echoes, the ECN echo, and the per-hop INT
 * records the ACK echoes). It acts through RdmaQueuePair::SetRate (pacing) and SetWindow (bytes
 * in flight). What the NIC puts on the wire for it (the timestamp, INT slots) it asks for with
 * Telemetry() and IntHops().
 */
#ifndef RDMA_CONGESTION_CONTROL_H
#define RDMA_CONGESTION_CONTROL_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "roce-header.h"

#include <string>
#include <vector>

namespace ns3
{

class RdmaQueuePair;

/// What one ACK (or READ response) tells the requester.
struct RdmaAckSample
{
    uint64_t bytesAcked = 0; ///< payload newly acknowledged (0 for a duplicate)
    uint64_t ackedPsn = 0;   ///< absolute PSN acknowledged up to (exclusive): snd.una after it
    uint64_t nextPsn = 0;    ///< absolute PSN the QP sends next (snd.nxt) when the ACK arrived
    Time rtt = Time(-1);     ///< now - the NIC timestamp echoed in the ACK; negative: none
    bool ecnEcho = false;    ///< BECN: a packet this ACK acknowledges arrived CE-marked
    uint8_t nHops = 0;       ///< INT records echoed (0: none)
    const IntHop* hops = nullptr;
};

class RdmaCongestionControl : public Object
{
  public:
    static TypeId GetTypeId();

    /// A QP was connected; set its initial rate (and window) here (default: line rate).
    virtual void
    OnConnect(RdmaQueuePair& qp)
    {
    }

    /// A CNP arrived for this QP.
    virtual void
    OnCnp(RdmaQueuePair& qp)
    {
    }

    /// The QP put `lineBytes` (line bytes) of data on the wire.
    virtual void
    OnSent(RdmaQueuePair& qp, uint32_t lineBytes)
    {
    }

    /// An ACK, NAK or READ response arrived for this QP (the requester).
    virtual void
    OnAck(RdmaQueuePair& qp, const RdmaAckSample& sample)
    {
    }

    /// RoceTelemetry flags the QPs' data packets carry for this controller (TEL_TIMESTAMP,
    /// TEL_INT); 0: none, and no byte more on the wire.
    virtual uint8_t
    Telemetry() const
    {
        return 0;
    }

    /// With TEL_INT: the INT record slots each data packet reserves (1..INT_MAX_HOPS).
    virtual uint8_t
    IntHops() const
    {
        return 0;
    }

    /// Names of the per-QP state variables a controller exposes to the `cc` recorder (e.g.
    /// DCQCN's alpha and target rate); GetState fills one value per name for a QP, now.
    virtual std::vector<std::string>
    StateNames() const
    {
        return {};
    }

    virtual void
    GetState(const RdmaQueuePair& qp, double* values) const
    {
    }
};

/// One line per controller module: its short name (the value of RdmaNic.CongestionControl),
/// its TypeId (a subclass of ns3::RdmaCongestionControl) and a one-line description.
struct CongestionControlInfo
{
    std::string name;
    std::string typeId;
    std::string description;
};

/// Registers the name as a value of RdmaNic.CongestionControl and the class as configurable in
/// the roce fabric's scenarios. Returns true (for a static initializer).
bool RegisterCongestionControl(const CongestionControlInfo& info);

} // namespace ns3

#endif
