#include "fc-applications.h"

#include "ns3/data-rate.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

Ptr<Packet>
MakeFcFrame(const FcFrameHeader& h, uint32_t payload)
{
    Ptr<Packet> p = Create<Packet>(payload);
    p->AddHeader(h);
    return p;
}

uint32_t
SendFcSequence(Ptr<FcNetDevice> dev, FcFrameHeader h, uint64_t bytes, uint32_t maxPayload,
               uint64_t offset)
{
    uint32_t frames = 0;
    uint64_t left = bytes;
    uint32_t baseFctl = h.fCtl & ~(FcFctl::END_SEQUENCE | FcFctl::FILL_MASK);
    do
    {
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(left, maxPayload));
        left -= n;
        h.fCtl = baseFctl | FcFctl::RELATIVE_OFFSET | ((4 - n % 4) % 4);
        if (left == 0)
        {
            h.fCtl |= FcFctl::END_SEQUENCE | FcFctl::SEQUENCE_INITIATIVE;
        }
        h.parameter = static_cast<uint32_t>(offset);
        dev->Enqueue(MakeFcFrame(h, n));
        offset += n;
        ++h.seqCnt;
        ++frames;
    } while (left > 0);
    return frames;
}

// ---------------------------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(FcStreamSender);

TypeId
FcStreamSender::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FcStreamSender")
                            .SetParent<Application>()
                            .SetGroupName("FcBbCredit")
                            .AddConstructor<FcStreamSender>()
                            .AddAttribute("PayloadSize",
                                          "Data field bytes per frame (FC-FS: 0 to 2112).",
                                          UintegerValue(FC_MAX_PAYLOAD),
                                          MakeUintegerAccessor(&FcStreamSender::m_payload),
                                          MakeUintegerChecker<uint32_t>(0, FC_MAX_PAYLOAD));
    return tid;
}

void
FcStreamSender::Setup(Ptr<FcNetDevice> port, uint32_t dId)
{
    m_port = port;
    m_dId = dId;
}

void
FcStreamSender::StartApplication()
{
    m_running = true;
    m_port->SetTxDequeueCallback(MakeCallback(&FcStreamSender::Refill, this));
    // Two frames queued: one on the line, one ready the instant a credit returns.
    Refill();
    Refill();
}

void
FcStreamSender::StopApplication()
{
    m_running = false;
}

void
FcStreamSender::Refill()
{
    if (!m_running || m_port->GetTxQueueLength() >= 2)
    {
        return;
    }
    FcFrameHeader h;
    h.rCtl = FcRctl::UNSOLICITED_DATA;
    h.type = FcType::IP;
    h.dId = m_dId;
    h.sId = m_port->GetFcId();
    h.seqCnt = m_seqCnt++;
    h.fCtl = FcFctl::FIRST_SEQUENCE | ((4 - m_payload % 4) % 4);
    m_port->Enqueue(MakeFcFrame(h, m_payload));
}

// ---------------------------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(FcSink);

TypeId
FcSink::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FcSink")
                            .SetParent<Application>()
                            .SetGroupName("FcBbCredit")
                            .AddConstructor<FcSink>()
                            .AddTraceSource("Rx",
                                            "A frame consumed by the sink.",
                                            MakeTraceSourceAccessor(&FcSink::m_rxTrace),
                                            "ns3::Packet::TracedCallback");
    return tid;
}

void
FcSink::Setup(Ptr<FcNetDevice> port)
{
    m_port = port;
    port->SetReceiveCallback(MakeCallback(&FcSink::Receive, this));
}

void
FcSink::SetWindow(Time from, Time to)
{
    m_from = from;
    m_to = to;
}

bool
FcSink::Receive(Ptr<NetDevice>, Ptr<const Packet> frame, uint16_t, const Address&)
{
    uint32_t n = FcPayloadOf(frame);
    Time now = Simulator::Now();
    if (m_total == 0)
    {
        m_first = now;
    }
    m_total += n;
    if (now >= m_from && now < m_to)
    {
        m_window += n;
    }
    m_rxTrace(frame);
    return true;
}

// ---------------------------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(FcPingPong);

TypeId
FcPingPong::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FcPingPong")
            .SetParent<Application>()
            .SetGroupName("FcBbCredit")
            .AddConstructor<FcPingPong>()
            .AddAttribute("MinSize", "Smallest message (bytes).", UintegerValue(1024),
                          MakeUintegerAccessor(&FcPingPong::m_minSize),
                          MakeUintegerChecker<uint32_t>(1, 1u << 30))
            .AddAttribute("MaxSize", "Largest message (bytes).", UintegerValue(225280),
                          MakeUintegerAccessor(&FcPingPong::m_maxSize),
                          MakeUintegerChecker<uint32_t>(1, 1u << 30))
            .AddAttribute("Step", "Message size step (bytes).", UintegerValue(1024),
                          MakeUintegerAccessor(&FcPingPong::m_step),
                          MakeUintegerChecker<uint32_t>(1, 1u << 30))
            .AddAttribute("RoundTrips", "Round trips per message size.", UintegerValue(10),
                          MakeUintegerAccessor(&FcPingPong::m_roundTrips),
                          MakeUintegerChecker<uint32_t>(1, 1000000))
            .AddAttribute("MaxPayload", "Data field bytes per frame.",
                          UintegerValue(FC_MAX_PAYLOAD),
                          MakeUintegerAccessor(&FcPingPong::m_maxPayload),
                          MakeUintegerChecker<uint32_t>(4, FC_MAX_PAYLOAD))
            .AddAttribute("HostOverhead",
                          "Fixed host time per message at each end (driver, interrupt).",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&FcPingPong::m_hostOverhead),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("HostCopyRate",
                          "Rate at which each end's host moves a message across its bus "
                          "(0bps: no per-byte host cost).",
                          DataRateValue(DataRate(0)),
                          MakeDataRateAccessor(&FcPingPong::m_hostCopyRate),
                          MakeDataRateChecker());
    return tid;
}

void
FcPingPong::Setup(Ptr<FcNetDevice> port, uint32_t peerId, bool client)
{
    m_port = port;
    m_peer = peerId;
    m_client = client;
    port->SetReceiveCallback(MakeCallback(&FcPingPong::Receive, this));
}

Time
FcPingPong::HostTime(uint64_t bytes) const
{
    Time t = m_hostOverhead;
    if (m_hostCopyRate.GetBitRate() > 0)
    {
        t += m_hostCopyRate.CalculateBytesTxTime(bytes);
    }
    return t;
}

void
FcPingPong::StartApplication()
{
    if (m_client)
    {
        m_size = m_minSize;
        m_round = 0;
        m_sizeStart = Simulator::Now();
        StartRound();
    }
}

void
FcPingPong::StopApplication()
{
    m_done = true;
}

void
FcPingPong::StartRound()
{
    Simulator::Schedule(HostTime(m_size), &FcPingPong::SendMessage, this);
}

void
FcPingPong::SendMessage()
{
    if (m_done)
    {
        return;
    }
    FcFrameHeader h;
    h.rCtl = FcRctl::UNSOLICITED_DATA;
    h.type = FcType::IP;
    h.dId = m_peer;
    h.sId = m_port->GetFcId();
    h.oxId = m_oxId++;
    h.fCtl = FcFctl::FIRST_SEQUENCE | FcFctl::LAST_SEQUENCE |
             (m_client ? 0 : FcFctl::EXCHANGE_CONTEXT);
    SendFcSequence(m_port, h, m_size, m_maxPayload, 0);
}

bool
FcPingPong::Receive(Ptr<NetDevice>, Ptr<const Packet> frame, uint16_t, const Address&)
{
    m_received += FcPayloadOf(frame);
    FcFrameHeader h;
    frame->PeekHeader(h);
    if (h.fCtl & FcFctl::END_SEQUENCE)
    {
        // The whole message is in; the host now spends its receive time on it.
        uint64_t bytes = m_received;
        m_received = 0;
        if (!m_client)
        {
            m_size = static_cast<uint32_t>(bytes);
        }
        Simulator::Schedule(HostTime(bytes), &FcPingPong::MessageReceived, this);
    }
    return true;
}

void
FcPingPong::MessageReceived()
{
    if (!m_client)
    {
        StartRound();
        return;
    }
    if (++m_round < m_roundTrips)
    {
        StartRound();
        return;
    }
    Time now = Simulator::Now();
    m_results.push_back({m_size, (now - m_sizeStart) / int64_t(m_roundTrips)});
    if (uint64_t(m_size) + m_step > m_maxSize)
    {
        m_done = true;
        if (!m_doneCb.IsNull())
        {
            m_doneCb();
        }
        return;
    }
    m_size += m_step;
    m_round = 0;
    m_sizeStart = now;
    StartRound();
}

} // namespace ns3
