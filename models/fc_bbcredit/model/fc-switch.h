/*
 * A Fibre Channel fabric switch: N ports whose receive buffers equal the BB_Credit they
 * advertise, a crossbar with a forwarding latency, cut-through or store-and-forward, and static
 * routing by destination FC_ID. Several equal-cost ports towards one D_ID are chosen between by
 * S_ID and D_ID (device-based routing): every frame of a source/destination pair takes one path,
 * so frames stay in order. A frame holds its input buffer until its EOF leaves the output
 * port, so a congested output backs up into R_RDYs withheld upstream — never into drops.
 */
#ifndef FC_SWITCH_H
#define FC_SWITCH_H

#include "fc-net-device.h"
#include "ns3/event-impl.h"
#include "ns3/object.h"

#include <unordered_map>
#include <vector>

namespace ns3
{

class FcSwitch : public Object
{
  public:
    static TypeId GetTypeId();

    enum Switching
    {
        CUT_THROUGH = 0,
        STORE_AND_FORWARD = 1
    };

    /// Adds a port: it advertises PortBbCredit and hands received frames to the crossbar.
    uint32_t AddPort(Ptr<FcNetDevice> port);
    Ptr<FcNetDevice>
    GetPort(uint32_t i) const
    {
        return m_ports[i];
    }
    uint32_t
    GetNPorts() const
    {
        return m_ports.size();
    }
    /// Adds `port` to the equal-cost output ports towards `dId` (once).
    void AddRoute(uint32_t dId, uint32_t port);
    /// The output port a frame from `sId` to `dId` takes, or -1 if `dId` is unroutable. With n
    /// equal-cost ports: the ((S_ID >> 8) + (D_ID >> 8)) mod n-th, in the order they were added.
    int32_t Lookup(uint32_t sId, uint32_t dId) const;
    uint32_t
    GetDomain() const
    {
        return m_domain;
    }
    void
    SetDomain(uint32_t d)
    {
        m_domain = d;
    }
    uint64_t
    GetUnroutable() const
    {
        return m_unroutable;
    }

    /// A port's received frame, its SOF arriving now (`sofArrival`), its EOF at
    /// `eofArrival`: routed and handed to the output port through the crossbar.
    void Forward(FcNetDevice* in, Ptr<Packet> frame, Time sofArrival, Time eofArrival);

  protected:
    void DoDispose() override;

  private:
    /// One frame in the crossbar, from the routing decision to the output port (or to its
    /// discard).
    class Crossing : public EventImpl
    {
      public:
        FcSwitch* sw = nullptr;
        FcNetDevice* out = nullptr;
        FcNetDevice* in = nullptr;
        Ptr<Packet> frame;

      protected:
        void Notify() override;
    };

    /// A frame crosses the crossbar: `out` gets it at `when` (nullptr: discarded, the buffer
    /// of `in` freed).
    void Cross(Time when, FcNetDevice* out, Ptr<Packet> frame, FcNetDevice* in);
    /// A crossing has happened: its event goes back to m_idle.
    void Crossed(Crossing* c);

    /// Crossing events not scheduled, reused: nothing allocated per frame.
    std::vector<Ptr<Crossing>> m_idle;

    std::vector<Ptr<FcNetDevice>> m_ports;
    std::unordered_map<uint32_t, std::vector<uint32_t>> m_routes; ///< D_ID -> ports
    Time m_latency;
    Switching m_switching = CUT_THROUGH;
    uint32_t m_portBbCredit;
    uint32_t m_domain = 1;
    uint64_t m_unroutable = 0;
};

} // namespace ns3

#endif
