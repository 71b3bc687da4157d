#include "fc-net-device.h"

#include "fc-channel.h"
#include "fc-frame-header.h"
#include "fc-switch.h"
#include "lfsim-clock.h"
#include "ns3/abort.h"
#include "ns3/enum.h"
#include "ns3/make-event.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FcNetDevice);

TypeId
FcNetDevice::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcNetDevice")
              .SetParent<NetDevice>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcNetDevice>()
              .AddAttribute(
                  "Speed",
                  "Line rate: 1/2/4/8GFC (8b/10b), 16GFC (64b/66b), 32GFC (256b/257b and "
                  "RS(528,514) FEC: 3400 MB/s).",
                  EnumValue(static_cast<int>(FcSpeed::GFC8)),
                  MakeEnumAccessor(&FcNetDevice::SetSpeedIndex, &FcNetDevice::GetSpeedIndex),
                  MakeEnumChecker(
                      static_cast<int>(FcSpeed::GFC1), "1GFC", static_cast<int>(FcSpeed::GFC2),
                      "2GFC", static_cast<int>(FcSpeed::GFC4), "4GFC",
                      static_cast<int>(FcSpeed::GFC8), "8GFC", static_cast<int>(FcSpeed::GFC16),
                      "16GFC", static_cast<int>(FcSpeed::GFC32), "32GFC"))
              .AddAttribute("BbCredit",
                            "Receive buffers of this port, advertised to the peer at login as its "
                            "BB_Credit (FLOGI/PLOGI common service parameters).",
                            UintegerValue(8), MakeUintegerAccessor(&FcNetDevice::m_bbCredit),
                            MakeUintegerChecker<uint32_t>(1, 32767))
              .AddAttribute("BbScN",
                            "BB_SC_N: credit recovery with BB_SCs every 2^N frames and BB_SCr "
                            "every 2^N R_RDYs (0: off). Used when both ports set it (the larger).",
                            UintegerValue(0), MakeUintegerAccessor(&FcNetDevice::m_bbScN),
                            MakeUintegerChecker<uint32_t>(0, 15))
              .AddAttribute("LinkResetTimeout",
                            "A port out of credit with frames to send that receives no R_RDY for "
                            "this long performs the Link Reset protocol (FC-FS: LR answered by "
                            "LRR, one round trip), after which both ends start again from the "
                            "login BB_Credit: E_D_TOV, 2 s by default. 0s: never.",
                            TimeValue(Seconds(2)),
                            MakeTimeAccessor(&FcNetDevice::m_linkResetTimeout),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("MinIdleWords",
                            "Primitive signals (IDLE, R_RDY, ...) between frames (FC-FS: six).",
                            UintegerValue(6), MakeUintegerAccessor(&FcNetDevice::m_minIdleWords),
                            MakeUintegerChecker<uint32_t>(2, 1000))
              .AddAttribute("RxProcessingDelay",
                            "End port: time from a frame's EOF to its buffer being freed (and its "
                            "R_RDY sent), i.e. the receiver's processing delay.",
                            TimeValue(Time(0)), MakeTimeAccessor(&FcNetDevice::m_rxProcessingDelay),
                            MakeTimeChecker(Time(0)))
              .AddTraceSource(
                  "Credits",
                  "BB_Credit available to transmit (login value minus frames in flight).",
                  MakeTraceSourceAccessor(&FcNetDevice::m_credits),
                  "ns3::TracedValueCallback::Uint32")
              .AddTraceSource("FramesInFlight",
                              "Frames sent whose credit has not returned (login value - Credits).",
                              MakeTraceSourceAccessor(&FcNetDevice::m_inFlight),
                              "ns3::TracedValueCallback::Uint32")
              .AddTraceSource("RxBuffers", "Receive buffers in use.",
                              MakeTraceSourceAccessor(&FcNetDevice::m_rxBuffers),
                              "ns3::TracedValueCallback::Uint32")
              .AddTraceSource("TxQueue", "Frames waiting to be transmitted.",
                              MakeTraceSourceAccessor(&FcNetDevice::m_txQueueLen),
                              "ns3::TracedValueCallback::Uint32")
              .AddTraceSource("TxQueueBytes",
                              "Wire bytes (SOF to EOF) of the frames waiting to be transmitted.",
                              MakeTraceSourceAccessor(&FcNetDevice::m_txQueueBytes),
                              "ns3::TracedValueCallback::Uint32")
              .AddTraceSource("FrameTx", "A frame starts transmission.",
                              MakeTraceSourceAccessor(&FcNetDevice::m_frameTxTrace),
                              "ns3::Packet::TracedCallback")
              .AddTraceSource("FrameRx", "A frame's SOF arrives.",
                              MakeTraceSourceAccessor(&FcNetDevice::m_frameRxTrace),
                              "ns3::Packet::TracedCallback")
              .AddTraceSource("PrimitiveTx", "R_RDY / BB_SCs / BB_SCr sent (FcPrimitive value).",
                              MakeTraceSourceAccessor(&FcNetDevice::m_primitiveTxTrace),
                              "ns3::TracedValueCallback::Uint8")
              .AddTraceSource("PrimitiveRx",
                              "R_RDY / BB_SCs / BB_SCr received (FcPrimitive value).",
                              MakeTraceSourceAccessor(&FcNetDevice::m_primitiveRxTrace),
                              "ns3::TracedValueCallback::Uint8")
              .AddTraceSource("Recovery",
                              "BB_SC_N recovery: (FcPrimitive BB_SCS or BB_SCR, count restored).",
                              MakeTraceSourceAccessor(&FcNetDevice::m_recoveryTrace),
                              "ns3::FcNetDevice::RecoveryCallback")
              .AddTraceSource("CreditStall",
                              "The port starts waiting for BB_Credit with frames queued (the "
                              "deadlock detector is armed by it).",
                              MakeTraceSourceAccessor(&FcNetDevice::m_creditStallTrace),
                              "ns3::FcNetDevice::CreditStallCallback")
              .AddTraceSource("Link",
                              "The port lost signal (false: its link went down; FC-FS-3's loss "
                              "of signal, at once) or its link is back (true: after link "
                              "initialization, a round trip, restored the login BB_Credit). An "
                              "N_Port's FCP driver blocks its remote ports on it.",
                              MakeTraceSourceAccessor(&FcNetDevice::m_linkTrace),
                              "ns3::FcNetDevice::LinkCallback");
    return tid;
}

FcNetDevice::FcNetDevice()
    // The simulator holds each scheduled instance by one reference; these hold one more.
    : m_txDoneEvent(MakeEvent(&FcNetDevice::TransmitDone, this), false)
    , m_gapEvent(MakeEvent(&FcNetDevice::GapEnd, this), false)
    , m_deliverEvent(MakeEvent(&FcNetDevice::Deliver, this), false)
{
    SetSpeedIndex(static_cast<int>(FcSpeed::GFC8));
}

void
FcNetDevice::SetSpeedIndex(int s)
{
    m_speed = static_cast<FcSpeed>(s);
    m_wordTime = FcWireTime(m_speed, FC_WORD);
    m_headerTime = FcWireTime(m_speed, FC_SOF + FC_HEADER);
    m_lastWireBytes = FC_WORD;
    m_lastWireTime = m_wordTime;
}

void
FcNetDevice::DoDispose()
{
    DisposePort();
    m_line.frames.Clear();
    m_line.primitives.Clear();
    m_line.peer = nullptr;
    m_channel = nullptr;
    m_txq.clear();
    m_delivering.clear();
    m_releaseOnDone = nullptr;
    m_txDoneEvent = nullptr;
    m_gapEvent = nullptr;
    m_deliverEvent = nullptr;
    m_switch = nullptr;
    m_dequeueCb = Callback<void>();
    NetDevice::DoDispose();
}

void
FcNetDevice::Attach(Ptr<FcChannel> channel)
{
    m_channel = channel;
    m_line.side = channel->Attach(this);
}

void
FcNetDevice::Login()
{
    Ptr<FcNetDevice> peer = m_channel->GetPeer(this);
    NS_ABORT_MSG_IF(!peer, "login needs both ends attached");
    NS_ABORT_MSG_IF(peer->m_speed != m_speed, "both ends of a link must run at one speed");
    m_loginCredit = peer->m_bbCredit;
    SetCredits(m_loginCredit);
    m_bbScNUsed = (m_bbScN && peer->m_bbScN) ? std::max(m_bbScN, peer->m_bbScN) : 0;
    m_scMask = m_bbScNUsed ? (1u << m_bbScNUsed) - 1 : 0;
    m_gapTime = m_wordTime * int64_t(m_minIdleWords);
    m_gapEnd = Time(0);
}

void
FcNetDevice::SetFcId(uint32_t id)
{
    m_fcId = id & 0xffffff;
    uint8_t b[6] = {0x02, 0x00, 0x00, uint8_t(m_fcId >> 16), uint8_t(m_fcId >> 8), uint8_t(m_fcId)};
    m_address.CopyFrom(b);
}

Ptr<Channel>
FcNetDevice::GetChannel() const
{
    return m_channel;
}

bool
FcNetDevice::SetMtu(const uint16_t mtu)
{
    if (mtu > FC_MAX_PAYLOAD)
    {
        return false;
    }
    m_mtu = mtu;
    return true;
}

bool
FcNetDevice::Send(Ptr<Packet> packet, const Address&, uint16_t)
{
    Enqueue(packet);
    return true;
}

void
FcNetDevice::Enqueue(Ptr<Packet> frame, Ptr<FcNetDevice> release)
{
    if (m_linkDown)
    {
        ++m_c.framesDiscarded;
        if (release)
        {
            release->ReleaseBuffer();
        }
        return;
    }
    uint32_t wire = FcFrameWireBytes(frame->GetSize() - FC_HEADER);
    m_txq.push_back({std::move(frame), PeekPointer(release), wire});
    m_txQueueLen.Set(static_cast<uint32_t>(m_txq.size()));
    m_txQueueBytes.Set(m_txQueueBytes.Get() + wire);
    TryTransmit();
}

void
FcNetDevice::QueuePrimitive(FcPrimitive p)
{
    m_primq.push_back(p);
    if (p == FcPrimitive::R_RDY && m_scMask && ((++m_rrdySinceBbScr) & m_scMask) == 0)
    {
        // BB_SCr follows every 2^N-th R_RDY on the line.
        m_primq.push_back(FcPrimitive::BB_SCR);
    }
}

void
FcNetDevice::TryTransmit()
{
    if (m_busy)
    {
        if (!m_quietEnd)
        {
            return; // TransmitDone comes
        }
        const Time now = lfsim::Now();
        if (now < m_busyUntil)
        {
            m_quietEnd = false;
            FcScheduleReused(m_busyUntil - now, PeekPointer(m_txDoneEvent));
            return;
        }
        m_busy = false;
        m_quietEnd = false;
    }
    if (!m_primq.empty())
    {
        // Primitive signals go out in the gap between frames and count towards it.
        FcPrimitive p = m_primq.front();
        m_primq.pop_front();
        m_busy = true;
        m_busyWithFrame = false;
        switch (p)
        {
            case FcPrimitive::R_RDY:
                ++m_c.rrdyTx;
                break;
            case FcPrimitive::BB_SCS:
                ++m_c.bbScsTx;
                break;
            case FcPrimitive::BB_SCR:
                ++m_c.bbScrTx;
                break;
        }
        if (!m_primitiveTxTrace.IsEmpty())
        {
            m_primitiveTxTrace(static_cast<uint8_t>(p));
        }
        SendPrimitive(p);
        if (m_primq.empty() && m_txq.empty())
        {
            // Nothing waits behind this word: its end needs an event only if work comes
            // before it (most R_RDYs of a receiving port).
            m_quietEnd = true;
            m_busyUntil = lfsim::Now() + m_wordTime;
            return;
        }
        FcScheduleReused(m_wordTime, PeekPointer(m_txDoneEvent));
        return;
    }
    if (m_txq.empty())
    {
        return;
    }
    Time now = lfsim::Now();
    if (m_credits == 0)
    {
        if (!m_stalled)
        {
            m_stalled = true;
            m_stallStart = now;
            if (!m_creditStallTrace.IsEmpty())
            {
                m_creditStallTrace();
            }
            if (m_linkResetTimeout.IsStrictlyPositive() && !m_linkResetPending)
            {
                m_linkResetPending = true;
                lfsim::Schedule(m_linkResetTimeout, &FcNetDevice::LinkResetCheck, this);
            }
        }
        return;
    }
    if (now < m_gapEnd)
    {
        if (!m_gapPending)
        {
            m_gapPending = true;
            FcScheduleReused(m_gapEnd - now, PeekPointer(m_gapEvent));
        }
        return;
    }
    if (m_stalled)
    {
        m_stalled = false;
        m_c.creditStall += now - m_stallStart;
    }
    TxItem item = std::move(m_txq.front());
    m_txq.pop_front();
    m_txQueueLen.Set(static_cast<uint32_t>(m_txq.size()));
    m_txQueueBytes.Set(m_txQueueBytes.Get() - item.wire);
    SetCredits(m_credits.Get() - 1);
    if (m_credits < m_c.minCredits)
    {
        m_c.minCredits = m_credits;
    }
    uint32_t wire = item.wire;
    Time tx = GetWireTime(wire);
    m_busy = true;
    m_busyWithFrame = true;
    m_releaseOnDone = item.release;
    ++m_c.framesTx;
    m_c.bytesTx += wire;
    m_c.payloadTx += item.frame->GetSize() - FC_HEADER;
    if (!m_frameTxTrace.IsEmpty()) // captures only: no Ptr copy per frame otherwise
    {
        m_frameTxTrace(item.frame);
    }
    SendFrame(std::move(item.frame), wire, tx);
    FcScheduleReused(tx, PeekPointer(m_txDoneEvent));
    if (m_scMask && ((++m_framesSinceBbScs) & m_scMask) == 0)
    {
        m_primq.push_back(FcPrimitive::BB_SCS);
    }
    if (!m_dequeueCb.IsNull())
    {
        m_dequeueCb();
    }
}

void
FcNetDevice::GapEnd()
{
    m_gapPending = false;
    TryTransmit();
}

void
FcNetDevice::LinkResetCheck()
{
    m_linkResetPending = false;
    if (!m_stalled)
    {
        return;
    }
    const Time deadline = m_stallStart + m_linkResetTimeout;
    const Time now = lfsim::Now();
    if (now < deadline)
    {
        // The stall this check was for ended; another one started since.
        m_linkResetPending = true;
        lfsim::Schedule(deadline - now, &FcNetDevice::LinkResetCheck, this);
        return;
    }
    if (m_credits != 0)
    {
        return;
    }
    // LR out, LRR back: after one round trip both ports start from the login BB_Credit with
    // their BB_SC counts cleared (frames the peer still buffers return R_RDYs that find the
    // credit full and are counted as credit overflows).
    ++m_c.linkResets;
    const Time roundTrip = 2 * (m_channel->GetPropagationDelay() + m_wordTime);
    lfsim::Schedule(roundTrip, &FcNetDevice::Reinitialize, this);
}

void
FcNetDevice::Reinitialize()
{
    Ptr<FcNetDevice> peer = m_channel->GetPeer(this);
    m_bbRrdyCnt = 0;
    m_framesSinceBbScs = 0;
    peer->m_bbRcCnt = 0;
    peer->m_rrdySinceBbScr = 0;
    SetCredits(m_loginCredit);
    TryTransmit();
}

void
FcNetDevice::SetLinkUp(bool up)
{
    m_linkDown = !up;
    if (up)
    {
        const Time roundTrip = 2 * (m_channel->GetPropagationDelay() + m_wordTime);
        lfsim::Schedule(roundTrip,
                        [this]()
                        {
                            Reinitialize();
                            if (!m_dequeueCb.IsNull())
                            {
                                m_dequeueCb(); // a sender that stopped may fill it again
                            }
                            if (!m_linkDown)
                            {
                                m_linkTrace(true); // not when it went down again meanwhile
                            }
                        });
        return;
    }
    if (m_stalled)
    {
        m_stalled = false;
        m_c.creditStall += lfsim::Now() - m_stallStart;
    }
    lfsim::Fifo<TxItem> held;
    held.swap(m_txq);
    m_txQueueLen.Set(0);
    m_txQueueBytes.Set(0);
    for (TxItem& item : held)
    {
        ++m_c.framesDiscarded;
        if (item.release)
        {
            item.release->ReleaseBuffer();
        }
    }
    m_linkTrace(false);
}

void
FcNetDevice::SetCredits(uint32_t c)
{
    m_credits.Set(c);
    m_inFlight.Set(m_loginCredit - c);
}

Time
FcNetDevice::GetCreditStallTime() const
{
    return m_c.creditStall + (m_stalled ? lfsim::Now() - m_stallStart : Time(0));
}

void
FcNetDevice::GetQueuedByRelease(std::vector<ReleaseShare>& out) const
{
    out.clear();
    for (const TxItem& item : m_txq)
    {
        const FcNetDevice* r = item.release;
        auto it = out.begin();
        while (it != out.end() && it->release != r)
        {
            ++it;
        }
        if (it == out.end())
        {
            out.push_back({r, 0, 0});
            it = out.end() - 1;
        }
        ++it->frames;
        it->bytes += item.wire;
    }
}

void
FcNetDevice::TransmitDone()
{
    m_busy = false;
    if (m_busyWithFrame)
    {
        m_gapEnd = lfsim::Now() + m_gapTime;
        if (m_releaseOnDone)
        {
            FcNetDevice* in = m_releaseOnDone;
            m_releaseOnDone = nullptr;
            in->ReleaseBuffer();
        }
    }
    TryTransmit();
}

void
FcNetDevice::SendFrame(Ptr<Packet> frame, uint32_t wire, Time tx)
{
    const FcChannel& ch = *m_channel;
    ++m_line.framesSent;
    if ((ch.m_loseFrameEvery && m_line.framesSent % ch.m_loseFrameEvery == 0)
        || (ch.m_ber > 0 && Corrupted(wire))
        || (m_channel->Faults().Active()
            && m_channel->Faults().Lose(frame->GetSize(), m_line.side)))
    {
        m_channel->FrameLost(frame);
        return;
    }
    if (!m_line.frames.HasDelivery())
    {
        ConnectLine();
    }
    m_line.frames.Send({std::move(frame), tx}, m_line.delay);
}

void
FcNetDevice::SendPrimitive(FcPrimitive p)
{
    const FcChannel& ch = *m_channel;
    bool lost = false;
    if (p == FcPrimitive::R_RDY)
    {
        ++m_line.rrdysSent;
        lost = (ch.m_loseRRdyEvery && m_line.rrdysSent % ch.m_loseRRdyEvery == 0)
               || m_channel->Faults().LoseRRdy(m_line.side);
    }
    if (lost || (ch.m_ber > 0 && Corrupted(FC_WORD))
        || m_channel->Faults().Lose(FC_WORD, m_line.side, true))
    {
        m_channel->PrimitiveLost(p);
        return;
    }
    if (!m_line.frames.HasDelivery())
    {
        ConnectLine();
    }
    m_line.primitives.Send(p, m_wordTime + m_line.delay);
}

bool
FcNetDevice::Corrupted(uint32_t bytes)
{
    // Every line bit of the frame (delimiters included) or of the primitive's word.
    const FcLineCoding& c = GetFcLineCoding(m_speed);
    const double bits = 8.0 * bytes * c.codeBits / c.dataBits;
    return m_channel->m_uniform->GetValue() >= std::exp(bits * std::log1p(-m_channel->m_ber));
}

void
FcNetDevice::ConnectLine()
{
    m_line.peer = PeekPointer(m_channel->GetPeer(this));
    const uint32_t context = m_line.peer->GetNode()->GetId();
    m_line.frames.SetDelivery(lfsim::MakeLineEvent(&FcNetDevice::FrameArrives, this), context);
    m_line.primitives.SetDelivery(lfsim::MakeLineEvent(&FcNetDevice::PrimitiveArrives, this),
                                  context);
}

void
FcNetDevice::FrameArrives()
{
    LineFrame f = m_line.frames.Take();
    m_line.peer->StartReceive(std::move(f.frame), f.txTime);
}

void
FcNetDevice::PrimitiveArrives()
{
    m_line.peer->ReceivePrimitive(m_line.primitives.Take());
}

void
FcNetDevice::StartReceive(Ptr<Packet> frame, Time txTime)
{
    ++m_c.framesRx;
    if (m_rxBuffers >= m_bbCredit)
    {
        // Cannot happen while the sender honours BB_Credit; counted so tests can assert it.
        ++m_c.bufferOverruns;
    }
    m_rxBuffers.Set(m_rxBuffers.Get() + 1);
    if (m_rxBuffers > m_c.maxRxBuffers)
    {
        m_c.maxRxBuffers = m_rxBuffers;
    }
    if (m_scMask)
    {
        m_bbRcCnt = (m_bbRcCnt + 1) & m_scMask;
    }
    if (!m_frameRxTrace.IsEmpty())
    {
        m_frameRxTrace(frame);
    }
    if (m_switch)
    {
        Time now = lfsim::Now();
        m_switch->Forward(this, std::move(frame), now, now + txTime);
    }
    else
    {
        m_delivering.push_back(std::move(frame));
        FcScheduleReused(txTime + m_rxProcessingDelay, PeekPointer(m_deliverEvent));
    }
}

void
FcNetDevice::Deliver()
{
    Ptr<Packet> frame = std::move(m_delivering.front());
    m_delivering.pop_front();
    ReleaseBuffer();
    if (!m_rxCallback.IsNull())
    {
        m_rxCallback(this, frame, 0, Address());
    }
}

void
FcNetDevice::ReleaseBuffer()
{
    NS_ABORT_MSG_IF(m_rxBuffers == 0, "buffer released twice");
    m_rxBuffers.Set(m_rxBuffers.Get() - 1);
    QueuePrimitive(FcPrimitive::R_RDY);
    TryTransmit();
}

void
FcNetDevice::ReceivePrimitive(FcPrimitive p)
{
    if (!m_primitiveRxTrace.IsEmpty())
    {
        m_primitiveRxTrace(static_cast<uint8_t>(p));
    }
    switch (p)
    {
        case FcPrimitive::R_RDY:
            ++m_c.rrdyRx;
            if (m_credits >= m_loginCredit)
            {
                ++m_c.creditOverflows;
            }
            else
            {
                SetCredits(m_credits.Get() + 1);
            }
            if (m_scMask)
            {
                m_bbRrdyCnt = (m_bbRrdyCnt + 1) & m_scMask;
            }
            break;
        case FcPrimitive::BB_SCS:
        {
            // Frames sent since the last BB_SCs were 2^N; what did not arrive was lost, and each
            // lost frame's credit is returned with an R_RDY.
            uint32_t lost = ((m_scMask + 1) - m_bbRcCnt) & m_scMask;
            m_bbRcCnt = 0;
            for (uint32_t i = 0; i < lost; ++i)
            {
                QueuePrimitive(FcPrimitive::R_RDY);
            }
            m_c.framesRecovered += lost;
            m_recoveryTrace(static_cast<uint8_t>(p), lost);
            break;
        }
        case FcPrimitive::BB_SCR:
        {
            uint32_t lost = ((m_scMask + 1) - m_bbRrdyCnt) & m_scMask;
            m_bbRrdyCnt = 0;
            uint32_t room = m_loginCredit - m_credits.Get();
            uint32_t add = std::min(lost, room);
            SetCredits(m_credits.Get() + add);
            m_c.creditsRecovered += add;
            m_recoveryTrace(static_cast<uint8_t>(p), add);
            break;
        }
    }
    TryTransmit();
}

bool
FcNetDevice::IsLinkUp() const
{
    return m_channel && !m_channel->Faults().Down();
}

} // namespace ns3
