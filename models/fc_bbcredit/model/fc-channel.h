/*
 * A full-duplex fibre between two FC ports: propagation delay from length, and the faults that
 * make BB_Credit leak (lost frames: SOF not recognised; lost R_RDYs).
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

    void Attach(Ptr<FcNetDevice> device);
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;
    Ptr<FcNetDevice> GetPeer(Ptr<const FcNetDevice> self) const;

    Time GetPropagationDelay() const;

    /// A frame whose first bit leaves `src` now and takes `txTime` on the line.
    void TransmitFrame(Ptr<FcNetDevice> src, Ptr<Packet> frame, Time txTime);
    /// One primitive signal (one transmission word) leaving `src` now.
    void TransmitPrimitive(Ptr<FcNetDevice> src, FcPrimitive p, Time wordTime);

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

  private:
    bool Corrupted(Ptr<const FcNetDevice> src, uint32_t bytes);
    Ptr<FcNetDevice> m_dev[2];
    double m_length;
    Time m_delayPerMeter;
    double m_ber;
    uint32_t m_loseFrameEvery;
    uint32_t m_loseRRdyEvery;
    uint64_t m_frameCount[2] = {0, 0};
    uint64_t m_rrdyCount[2] = {0, 0};
    uint64_t m_framesLost = 0;
    uint64_t m_primitivesLost = 0;
    uint64_t m_creditsLost = 0;
    Ptr<UniformRandomVariable> m_uniform;
    TracedCallback<Ptr<const Packet>> m_frameLostTrace;
    TracedCallback<uint8_t> m_primitiveLostTrace;
};

} // namespace ns3

#endif
