/*
 * A full-duplex fibre between two FC ports: propagation delay from length, and the faults that
 * make BB_Credit leak (lost frames: SOF not recognised; lost R_RDYs).
 */
#ifndef FC_CHANNEL_H
#define FC_CHANNEL_H

#include "fc-primitive.h"
#include "lfsim-faults.h"
#include "lfsim-fifo.h"
#include "ns3/channel.h"
#include "ns3/event-impl.h"
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

    Time
    GetPropagationDelay() const
    {
        return m_delay;
    }

    /// A frame whose first bit leaves `src` now and takes `txTime` on the line.
    void TransmitFrame(const FcNetDevice* src, Ptr<Packet> frame, Time txTime);
    /// One primitive signal (one transmission word) leaving `src` now.
    void TransmitPrimitive(const FcNetDevice* src, FcPrimitive p, Time wordTime);

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
    bool Corrupted(const FcNetDevice* src, uint32_t bytes);
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
    /// The SOF of the frame at the head of the line toward m_dev[side] arrives.
    void DeliverFrame(uint8_t side);
    /// The primitive at the head of the line toward m_dev[side] arrives.
    void DeliverPrimitive(uint8_t side);
    /// The node id of m_dev[side] (the context its events run in), read once.
    uint32_t Context(uint8_t side);

    Ptr<FcNetDevice> m_dev[2];
    double m_length = 10.0;
    Time m_delayPerMeter;
    Time m_delay; ///< propagation delay of the whole length
    struct InFlight
    {
        Ptr<Packet> frame;
        Time txTime;
    };
    /// Frames and primitives on the line toward each side, in sending order. They arrive in
    /// that order (one delay, one sender), so one reusable event per side and kind hands over
    /// the head: nothing allocated per frame. Scheduled when the original per-frame events
    /// were, so events at equal times keep their order.
    lfsim::Fifo<InFlight> m_frames[2];
    lfsim::Fifo<FcPrimitive> m_primitives[2];
    Ptr<EventImpl> m_frameEvent[2];
    Ptr<EventImpl> m_primitiveEvent[2];
    static constexpr uint32_t NO_CONTEXT = 0xFFFFFFFF;
    uint32_t m_context[2] = {NO_CONTEXT, NO_CONTEXT};
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
