/*
 * A Fibre Channel port (N_Port of an HBA, or F_Port/E_Port of a switch) with buffer-to-buffer
 * flow control: BB_Credit, R_RDY and BB_SC_N credit recovery (FC-FS-3 clause 18).
 */
#ifndef FC_NET_DEVICE_H
#define FC_NET_DEVICE_H

#include "fc-primitive.h"
#include "fc-speed.h"
#include "lfsim-clock.h"
#include "lfsim-fifo.h"
#include "lfsim-in-flight.h"
#include "lfsim-wired-port.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/traced-callback.h"
#include "ns3/traced-value.h"

#include <vector>

namespace ns3
{

class FcChannel;
class FcSwitch;

/// Schedules a reusable event `delay` from now in the current context: what
/// Simulator::Schedule does (same time, context and place among equal times), without building
/// the EventId it returns. The simulator drops one reference of `event` after it runs.
inline void
FcScheduleReused(const Time& delay, EventImpl* event)
{
    event->Ref();
    lfsim::ScheduleHere(delay, event);
}

class FcNetDevice : public lfsim::WiredPort
{
  public:
    static TypeId GetTypeId();
    FcNetDevice();

    void Attach(Ptr<FcChannel> channel);
    /// Fabric/port login: take the peer's advertised BB_Credit and BB_SC_N (done once both
    /// ends are attached, as FLOGI/PLOGI would).
    void Login();
    /// A switch port hands received frames to its switch's crossbar (FcSwitch::Forward)
    /// instead of delivering them up.
    void
    SetSwitch(FcSwitch* sw)
    {
        m_switch = sw;
    }
    void
    SetTxDequeueCallback(Callback<void> cb)
    {
        m_dequeueCb = cb;
    }

    /// Queue a frame (FcFrameHeader + payload). `release`: the input port whose buffer holds
    /// the frame (switches), freed when the frame's EOF has left this port.
    void Enqueue(Ptr<Packet> frame, Ptr<FcNetDevice> release = nullptr);
    /// Free one receive buffer: an R_RDY goes back to the sender.
    void ReleaseBuffer();

    /// The propagation delay of this port's line (FcChannel gives it at Attach and when its
    /// Length or PropagationDelayPerMeter changes; it applies to what is sent from then on).
    void
    SetLineDelay(Time delay)
    {
        m_line.delay = delay;
    }

    FcSpeed
    GetSpeed() const
    {
        return m_speed;
    }
    Time
    GetWordTime() const
    {
        return m_wordTime;
    }
    /// Time on this port's line of `bytes` of transmission words (FcWireTime, the last size
    /// asked kept: most frames of a flow have one size).
    Time
    GetWireTime(uint32_t bytes)
    {
        if (bytes != m_lastWireBytes)
        {
            m_lastWireBytes = bytes;
            m_lastWireTime = FcWireTime(m_speed, bytes);
        }
        return m_lastWireTime;
    }
    /// Time on this port's line of a frame's SOF and header.
    Time
    GetHeaderTime() const
    {
        return m_headerTime;
    }
    uint32_t
    GetBbCredit() const
    {
        return m_bbCredit;
    }
    uint32_t
    GetLoginCredit() const
    {
        return m_loginCredit;
    }
    uint32_t
    GetCredits() const
    {
        return m_credits;
    }
    uint32_t
    GetFramesInFlight() const
    {
        return m_inFlight;
    }
    uint32_t
    GetRxBuffersInUse() const
    {
        return m_rxBuffers;
    }
    uint32_t
    GetTxQueueLength() const
    {
        return m_txq.size();
    }
    /// Wire bytes (SOF to EOF) of the frames waiting to be transmitted.
    uint32_t
    GetTxQueueBytes() const
    {
        return m_txQueueBytes;
    }
    uint32_t
    GetBbScN() const
    {
        return m_bbScNUsed;
    }
    void SetFcId(uint32_t id);
    uint32_t
    GetFcId() const
    {
        return m_fcId;
    }

    struct Counters
    {
        uint64_t framesTx = 0;
        uint64_t framesRx = 0;
        uint64_t bytesTx = 0;   ///< wire bytes of frames (delimiters included)
        uint64_t payloadTx = 0; ///< data field bytes of frames
        uint64_t rrdyTx = 0;
        uint64_t rrdyRx = 0;
        uint64_t bbScsTx = 0;
        uint64_t bbScrTx = 0;
        uint64_t framesRecovered = 0;  ///< R_RDYs returned for frames lost (BB_SCs)
        uint64_t creditsRecovered = 0; ///< credits restored for R_RDYs lost (BB_SCr)
        uint64_t creditOverflows = 0;  ///< R_RDY with credits already at the login value
        uint64_t bufferOverruns = 0;   ///< frame received with every buffer in use
        uint64_t linkResets = 0;       ///< Link Reset protocols this port started (LR/LRR)
        uint64_t framesDiscarded = 0;  ///< frames to send discarded while its link was down
        uint64_t minCredits = UINT64_MAX;
        uint64_t maxRxBuffers = 0;
        Time creditStall; ///< time with frames waiting, the line free and no credit
    };

    const Counters&
    GetCounters() const
    {
        return m_c;
    }
    /// Time with frames waiting, the line free and no credit, up to now.
    Time GetCreditStallTime() const;
    /// Frames are waiting and no BB_Credit is left: the port may not transmit.
    bool
    IsCreditStalled() const
    {
        return m_stalled && m_credits == 0;
    }
    /// Start of the current credit stall (meaningful while IsCreditStalled()).
    Time
    GetStallStart() const
    {
        return m_stallStart;
    }

    /// Waiting frames that hold one input port's receive buffers (Enqueue's `release`).
    struct ReleaseShare
    {
        const FcNetDevice* release; ///< nullptr: frames of this port's own node
        uint32_t frames;
        uint64_t bytes; ///< wire bytes
    };

    /// Replaces `out` with the waiting frames grouped by the input port whose buffer they
    /// hold. Walks the whole queue: for the deadlock detector, never per frame.
    void GetQueuedByRelease(std::vector<ReleaseShare>& out) const;

    typedef void (*RecoveryCallback)(uint8_t primitive, uint32_t restored);
    typedef void (*CreditStallCallback)();
    /// (up): false when the port loses signal, true when its link is initialized again.
    typedef void (*LinkCallback)(bool up);

    // NetDevice
    Ptr<Channel> GetChannel() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t
    GetMtu() const override
    {
        return m_mtu;
    }
    /// Attached, and its link not down by a fault (the port would see loss of signal).
    bool IsLinkUp() const override;
    /// Its link went down (loss of signal: the port discards the frames it holds and those
    /// given to it, as a port in the link failure state) or came back (link initialization:
    /// after a round trip both ends start from the login BB_Credit, as after LR/LRR).
    void SetLinkUp(bool up);
    bool
    IsBroadcast() const override
    {
        return false;
    }
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;

  protected:
    void DoDispose() override;

  private:
    struct TxItem
    {
        Ptr<Packet> frame;
        FcNetDevice* release; ///< ports live as long as the fabric: no reference per frame
        uint32_t wire;        ///< bytes on the line, delimiters included
    };

    void TryTransmit();
    /// Onto this port's line: a frame whose first bit leaves now and takes `tx` (its `wire`
    /// bytes), or one primitive signal; unless the fault model loses it, it reaches the peer the
    /// propagation delay later (`tx` and a word later for their ends).
    void SendFrame(Ptr<Packet> frame, uint32_t wire, Time tx);
    void SendPrimitive(FcPrimitive p);
    /// A bit error in `bytes` on this port's line (BitErrorRate > 0): one draw.
    bool Corrupted(uint32_t bytes);
    /// The line's delivery events and the peer they deliver to (at the first send: the peer's
    /// node is its context, and nodes stay).
    void ConnectLine();
    /// The SOF of the frame, or the primitive, at the head of the line reaches the peer.
    void FrameArrives();
    void PrimitiveArrives();
    /// The peer's line delivers (called by the peer port, from FrameArrives/PrimitiveArrives).
    void StartReceive(Ptr<Packet> frame, Time txTime);
    void ReceivePrimitive(FcPrimitive p);
    void TransmitDone();
    /// The minimum idle words after a frame have passed.
    void GapEnd();
    /// The frame at the head of m_delivering is in and processed: hand it up.
    void Deliver();
    /// Each pending stall's LinkResetTimeout is checked by one event at a time.
    void LinkResetCheck();
    void QueuePrimitive(FcPrimitive p);
    void SetCredits(uint32_t c);
    void SetSpeedIndex(int s);
    int
    GetSpeedIndex() const
    {
        return static_cast<int>(m_speed);
    }

    /// This port's direction of the cable: what it sent that has not reached the peer yet, in
    /// sending order. Items arrive in that order (one delay, one sender), so one reusable event
    /// per kind delivers the head (lfsim::InFlight: in the event order where an event scheduled
    /// per item would run, nothing allocated per frame).
    struct LineFrame
    {
        Ptr<Packet> frame;
        Time txTime; ///< SOF to EOF on the line
    };
    struct Line
    {
        lfsim::InFlight<LineFrame> frames;
        lfsim::InFlight<FcPrimitive> primitives;
        Time delay;                  ///< the channel's propagation delay
        FcNetDevice* peer = nullptr; ///< set with the delivery events (ConnectLine)
        uint64_t framesSent = 0;     ///< for the channel's LoseFrameEvery
        uint64_t rrdysSent = 0;      ///< for the channel's LoseRRdyEvery
        uint8_t side = 0;            ///< this port's side on the channel (the fault direction)
    };
    Line m_line;
    Ptr<FcChannel> m_channel;
    uint16_t m_mtu = FC_MAX_PAYLOAD;
    uint32_t m_fcId = 0;

    // Attributes
    FcSpeed m_speed = FcSpeed::GFC8;
    uint32_t m_bbCredit;
    uint32_t m_bbScN;
    uint32_t m_minIdleWords;
    Time m_rxProcessingDelay;

    // Derived timings
    Time m_wordTime;
    Time m_gapTime;
    Time m_headerTime; ///< SOF and frame header on the line
    uint32_t m_lastWireBytes = 0;
    Time m_lastWireTime;

    // Transmitter state
    lfsim::Fifo<TxItem> m_txq;
    lfsim::Fifo<FcPrimitive> m_primq;
    bool m_busy = false;
    bool m_busyWithFrame = false;
    /// Busy with a primitive that had nothing behind it: no TransmitDone is scheduled; the
    /// line is free from m_busyUntil (TryTransmit schedules TransmitDone if work comes first).
    bool m_quietEnd = false;
    Time m_busyUntil;
    FcNetDevice* m_releaseOnDone = nullptr;
    Time m_gapEnd;
    bool m_gapPending = false;
    bool m_stalled = false;
    Time m_stallStart;
    Time m_linkResetTimeout;
    /// A LinkResetCheck is scheduled. Rather than one event per stall, cancelled when the
    /// credit comes back (a cancelled event stays in the event list until its time, E_D_TOV
    /// later), one check runs at the oldest stall's deadline and moves to the current one's.
    bool m_linkResetPending = false;
    // Reusable events (scheduled again and again: nothing allocated per frame).
    Ptr<EventImpl> m_txDoneEvent;
    Ptr<EventImpl> m_gapEvent;
    Ptr<EventImpl> m_deliverEvent;
    /// End port: frames received, waiting for their EOF and processing delay. Frames arrive one
    /// after another on the line, so they are handed up in this order.
    lfsim::Fifo<Ptr<Packet>> m_delivering;
    /// After LR/LRR or link initialization: the login BB_Credit, BB_SC counts cleared.
    void Reinitialize();
    bool m_linkDown = false;
    uint32_t m_loginCredit = 0;
    uint32_t m_bbScNUsed = 0;
    uint32_t m_scMask = 0; ///< 2^BB_SC_N - 1
    uint32_t m_framesSinceBbScs = 0;
    uint32_t m_rrdySinceBbScr = 0;
    uint32_t m_bbRrdyCnt = 0; ///< R_RDYs received since the last BB_SCr, mod 2^N

    // Receiver state
    uint32_t m_bbRcCnt = 0; ///< frames received since the last BB_SCs, mod 2^N

    // Set() and Get(): an assignment or arithmetic operator builds a temporary TracedValue.
    TracedValue<uint32_t> m_credits;
    TracedValue<uint32_t> m_inFlight; ///< frames sent whose R_RDY has not come back
    TracedValue<uint32_t> m_rxBuffers;
    TracedValue<uint32_t> m_txQueueLen;
    TracedValue<uint32_t> m_txQueueBytes;
    TracedCallback<Ptr<const Packet>> m_frameTxTrace;
    TracedCallback<Ptr<const Packet>> m_frameRxTrace;
    TracedCallback<uint8_t> m_primitiveTxTrace;
    TracedCallback<uint8_t> m_primitiveRxTrace;
    TracedCallback<uint8_t, uint32_t> m_recoveryTrace;
    TracedCallback<> m_creditStallTrace;
    TracedCallback<bool> m_linkTrace;

    Counters m_c;
    FcSwitch* m_switch = nullptr; ///< owns the port (switches outlive their ports' frames)
    Callback<void> m_dequeueCb;
};

} // namespace ns3

#endif
