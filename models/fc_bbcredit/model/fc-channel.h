/*
 * A full-duplex fibre between two FC ports: propagation delay from length, and the faults that
 * make BB_Credit leak (lost frames: SOF not recognised; lost R_RDYs). What is in flight on each
 * direction is the sending port's (FcNetDevice's line): the port reads the delay and the fault
 * state here, and nothing per frame passes through this class.
 */
#ifndef FC_CHANNEL_H
#define FC_CHANNEL_H

#include "fc-primitive.h"
#include "lfsim-faults.h"
#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

namespace ns3
{

class FcNetDevice;

class FcChannel : public Channel, public lfsim::FaultableChannel
{
  public:
    static TypeId GetTypeId();
    FcChannel();

    /// Joins \p device to the fibre; returns its side (0 or 1), the direction the fault model
    /// names for what it sends.
    uint8_t Attach(Ptr<FcNetDevice> device);
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;
    Ptr<FcNetDevice> GetPeer(Ptr<const FcNetDevice> self) const;

    Time
    GetPropagationDelay() const
    {
        return m_delay;
    }

    int64_t AssignStreams(int64_t stream);

    uint64_t
    GetFramesLost() const
    {
        return m_framesLost;
    }
    uint64_t
    GetPrimitivesLost() const
    {
        return m_primitivesLost;
    }
    /// Credits the senders lost (FC-FS-4 18.5.11): each lost frame (its receiver returns no
    /// R_RDY) and each lost R_RDY, until BB_SC or a Link Reset gives them back.
    uint64_t
    GetCreditsLost() const
    {
        return m_creditsLost;
    }

  protected:
    void DoDispose() override;

  private:
    // The port decides a loss on its line from this fault state (the attributes and m_faults,
    // read at each frame, so a change made during a run applies) and counts it here.
    friend class FcNetDevice;
    void FrameLost(Ptr<const Packet> frame);
    void PrimitiveLost(FcPrimitive p);

    void SetLength(double m);
    double
    GetLength() const
    {
        return m_length;
    }
    void SetDelayPerMeter(Time t);
    Time
    GetDelayPerMeter() const
    {
        return m_delayPerMeter;
    }
    /// m_delay from the length, given to the attached ports (their lines keep a copy).
    void Update();

    Ptr<FcNetDevice> m_dev[2];
    double m_length = 10.0;
    Time m_delayPerMeter;
    Time m_delay; ///< propagation delay of the whole length
    double m_ber;
    uint32_t m_loseFrameEvery;
    uint32_t m_loseRRdyEvery;
    uint64_t m_framesLost = 0;
    uint64_t m_primitivesLost = 0;
    uint64_t m_creditsLost = 0;
    Ptr<UniformRandomVariable> m_uniform;
    TracedCallback<Ptr<const Packet>> m_frameLostTrace;
    TracedCallback<uint8_t> m_primitiveLostTrace;
};

} // namespace ns3

#endif
