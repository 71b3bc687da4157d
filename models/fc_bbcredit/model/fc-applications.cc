#include "fc-applications.h"

#include "lfsim-packet.h"
#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

Ptr<Packet>
MakeFcFrame(const FcFrameHeader& h, uint32_t payload)
{
    Ptr<Packet> p = lfsim::ZeroPayload(payload);
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
    static TypeId tid
        = TypeId("ns3::FcStreamSender")
              .SetParent<Application>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcStreamSender>()
              .AddAttribute("PayloadSize", "Data field bytes per frame (FC-FS: 0 to 2112).",
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
                            .AddTraceSource("Rx", "A frame consumed by the sink.",
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
    static TypeId tid
        = TypeId("ns3::FcPingPong")
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
                            TimeValue(Time(0)), MakeTimeAccessor(&FcPingPong::m_hostOverhead),
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
    h.fCtl = FcFctl::FIRST_SEQUENCE | FcFctl::LAST_SEQUENCE
             | (m_client ? 0 : FcFctl::EXCHANGE_CONTEXT);
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

// ---------------------------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(FcMessageSender);

TypeId
FcMessageSender::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::FcMessageSender")
              .SetParent<Application>()
              .SetGroupName("FcBbCredit")
              .AddConstructor<FcMessageSender>()
              .AddAttribute("MaxPayload",
                            "Data field bytes per FCP_DATA frame (the last frame of a message "
                            "carries the rest).",
                            UintegerValue(2048),
                            MakeUintegerAccessor(&FcMessageSender::m_maxPayload),
                            MakeUintegerChecker<uint32_t>(4, FC_MAX_PAYLOAD))
              .AddTraceSource("Message",
                              "A message completed: (flow, bytes, flow completion time).",
                              MakeTraceSourceAccessor(&FcMessageSender::m_messageTrace),
                              "ns3::FcMessageSender::MessageCallback");
    return tid;
}

void
FcMessageSender::Setup(Ptr<FcNetDevice> port)
{
    m_port = port;
    port->SetReceiveCallback(MakeCallback(&FcMessageSender::Receive, this));
}

void
FcMessageSender::SetLoad(double load)
{
    NS_ABORT_MSG_IF(!(load > 0 && load <= 1), "a load is in (0, 1]");
    m_load = load;
    m_paced = load < 1;
}

void
FcMessageSender::SetLocalSink(Ptr<FcMessageSink> sink)
{
    NS_ABORT_MSG_IF(!m_port || sink->GetPort() != m_port, "Setup both on the same port first");
    m_localSink = sink;
    // Whichever Setup came last, the sender receives and passes data frames on.
    m_port->SetReceiveCallback(MakeCallback(&FcMessageSender::Receive, this));
}

uint32_t
FcMessageSender::AddFlow(Ptr<FcMessageSink> sink, uint32_t size, uint32_t messages,
                         uint32_t queueDepth, Time start)
{
    NS_ABORT_MSG_IF(size == 0, "a message has at least one byte");
    NS_ABORT_MSG_IF(queueDepth == 0, "a flow needs a queue depth of at least one");
    Flow f;
    f.dId = sink->GetPort()->GetFcId();
    f.size = size;
    f.messages = messages;
    f.queueDepth = queueDepth;
    f.start = start;
    m_flows.push_back(f);
    uint32_t idx = m_flows.size() - 1;
    sink->Register(m_port->GetFcId(), this);
    if (m_running)
    {
        StartFlow(idx);
    }
    return idx;
}

void
FcMessageSender::SetWindow(Time from, Time to)
{
    m_from = from;
    m_to = to;
}

void
FcMessageSender::DoDispose()
{
    m_port = nullptr;
    m_localSink = nullptr;
    m_paceEvent.Cancel();
    m_doneCb = Callback<void>();
    Application::DoDispose();
}

void
FcMessageSender::StartApplication()
{
    m_running = true;
    m_port->SetTxDequeueCallback(MakeCallback(&FcMessageSender::Refill, this));
    for (uint32_t k = 0; k < m_flows.size(); ++k)
    {
        if (m_flows[k].start <= Simulator::Now())
        {
            m_flows[k].started = true;
            Post(m_flows[k]);
        }
        else
        {
            Simulator::Schedule(m_flows[k].start - Simulator::Now(), &FcMessageSender::StartFlow,
                                this, k);
        }
    }
    Refill();
    Refill();
}

void
FcMessageSender::StartFlow(uint32_t k)
{
    Flow& f = m_flows[k];
    if (f.started || !m_running)
    {
        return;
    }
    if (f.start > Simulator::Now())
    {
        Simulator::Schedule(f.start - Simulator::Now(), &FcMessageSender::StartFlow, this, k);
        return;
    }
    f.started = true;
    Post(f);
    Refill();
    Refill();
}

void
FcMessageSender::StopApplication()
{
    m_running = false;
}

void
FcMessageSender::Post(Flow& f)
{
    const uint32_t k = &f - m_flows.data();
    while (m_running && f.open.size() < f.queueDepth
           && (f.messages == 0 || f.stats.posted < f.messages))
    {
        Message m{m_nextOx, Simulator::Now()};
        m_flowOfOx[m_nextOx] = k;
        m_nextOx = (m_nextOx + 1) % 0xffff; // 0xFFFF is "unassigned"
        f.unsent.push_back(m);
        f.open.push_back(m);
        ++f.stats.posted;
    }
}

void
FcMessageSender::Refill()
{
    // Paced, one frame queued at a time: a credit stall then delays it, not the pace after it.
    if (!m_running || m_port->GetTxQueueLength() >= (m_paced ? 1u : 2u))
    {
        return;
    }
    if (m_paced && Simulator::Now() < m_nextSend)
    {
        if (!m_paceEvent.IsRunning())
        {
            m_paceEvent = Simulator::Schedule(m_nextSend - Simulator::Now(),
                                              &FcMessageSender::Refill, this);
        }
        return;
    }
    const uint32_t n = m_flows.size();
    for (uint32_t i = 0; i < n; ++i)
    {
        uint32_t k = (m_next + i) % n;
        if (!m_flows[k].unsent.empty())
        {
            // Advance the turn before enqueueing: Enqueue may call Refill again.
            m_next = (k + 1) % n;
            SendFrame(m_flows[k]);
            return;
        }
    }
}

void
FcMessageSender::SendFrame(Flow& f)
{
    const uint16_t ox = f.unsent.front().oxId;
    FcFrameHeader h;
    h.type = FcType::FCP;
    h.dId = f.dId;
    h.sId = m_port->GetFcId();
    h.oxId = ox;
    h.seqId = static_cast<uint8_t>(ox);
    if (!f.cmndSent)
    {
        // FCP_CMND IU: FCP_LUN(8) FCP_CNTL(4: WRDATA) FCP_CDB(16: WRITE(16)) FCP_DL(4).
        uint8_t iu[32] = {};
        iu[11] = 0x01;
        iu[12] = 0x8a;
        const uint32_t blocks = f.size / 512;
        const uint8_t len[]
            = {uint8_t(blocks >> 24), uint8_t(blocks >> 16), uint8_t(blocks >> 8), uint8_t(blocks)};
        const uint8_t dl[]
            = {uint8_t(f.size >> 24), uint8_t(f.size >> 16), uint8_t(f.size >> 8), uint8_t(f.size)};
        std::copy(len, len + 4, iu + 22);
        std::copy(dl, dl + 4, iu + 28);
        h.rCtl = FcRctl::UNSOLICITED_CMD;
        h.fCtl = FcFctl::FIRST_SEQUENCE | FcFctl::END_SEQUENCE | FcFctl::SEQUENCE_INITIATIVE;
        f.cmndSent = true;
        f.offset = 0;
        f.seqCnt = 0;
        Ptr<Packet> p = Create<Packet>(iu, sizeof(iu));
        p->AddHeader(h);
        Put(p);
        return;
    }
    // The first burst: one FCP_DATA sequence with the whole message.
    uint32_t n = std::min(f.size - f.offset, m_maxPayload);
    h.rCtl = FcRctl::SOLICITED_DATA;
    h.seqId = static_cast<uint8_t>(ox + 1);
    h.seqCnt = f.seqCnt++;
    h.parameter = f.offset;
    h.fCtl = FcFctl::RELATIVE_OFFSET | ((4 - n % 4) % 4);
    f.offset += n;
    if (f.offset == f.size)
    {
        h.fCtl |= FcFctl::END_SEQUENCE | FcFctl::SEQUENCE_INITIATIVE;
        f.unsent.pop_front();
        f.cmndSent = false;
    }
    Put(MakeFcFrame(h, n));
}

void
FcMessageSender::Put(Ptr<Packet> frame)
{
    if (m_paced)
    {
        // Set before Enqueue, which may call Refill again at once.
        Time wire = FcWireTime(m_port->GetSpeed(), FcFrameWireBytes(frame->GetSize() - FC_HEADER));
        m_nextSend = Simulator::Now() + PicoSeconds(std::llround(wire.GetPicoSeconds() / m_load));
    }
    m_port->Enqueue(frame);
}

void
FcMessageSender::DataDelivered(uint16_t oxId, uint32_t payload)
{
    auto it = m_flowOfOx.find(oxId);
    if (it == m_flowOfOx.end())
    {
        return; // an exchange given up already
    }
    Flow& f = m_flows[it->second];
    Time now = Simulator::Now();
    f.stats.deliveredBytes += payload;
    if (now >= m_from && now < m_to)
    {
        f.stats.windowBytes += payload;
    }
}

bool
FcMessageSender::Receive(Ptr<NetDevice>, Ptr<const Packet> frame, uint16_t, const Address&)
{
    FcFrameHeader h;
    frame->PeekHeader(h);
    if (h.rCtl != FcRctl::COMMAND_STATUS)
    {
        if (m_localSink)
        {
            m_localSink->Receive(m_port, frame, 0, Address());
        }
        return true;
    }
    auto ox = m_flowOfOx.find(h.oxId);
    if (ox == m_flowOfOx.end() || m_flows[ox->second].dId != h.sId)
    {
        return true;
    }
    const uint32_t k = ox->second;
    Flow& f = m_flows[k];
    // Exchanges of a flow complete in order; one whose FCP_RSP never comes (a lost frame) is
    // given up when a later one completes.
    while (!f.open.empty() && f.open.front().oxId != h.oxId)
    {
        m_flowOfOx.erase(f.open.front().oxId);
        f.open.pop_front();
    }
    if (f.open.empty())
    {
        return true;
    }
    Time now = Simulator::Now();
    Time fct = now - f.open.front().posted;
    m_flowOfOx.erase(f.open.front().oxId);
    f.open.pop_front();
    ++f.stats.completed;
    if (now >= m_from && now < m_to)
    {
        f.stats.windowFctUs.push_back(fct.GetSeconds() * 1e6);
    }
    m_messageTrace(k, f.size, fct);
    Post(f);
    Refill();
    if (!m_doneCalled && !m_doneCb.IsNull() && AllDone())
    {
        m_doneCalled = true;
        m_doneCb();
    }
    return true;
}

bool
FcMessageSender::AllDone() const
{
    for (const Flow& f : m_flows)
    {
        if (f.messages == 0 || f.stats.completed < f.messages)
        {
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------

NS_OBJECT_ENSURE_REGISTERED(FcMessageSink);

TypeId
FcMessageSink::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FcMessageSink")
                            .SetParent<Application>()
                            .SetGroupName("FcBbCredit")
                            .AddConstructor<FcMessageSink>();
    return tid;
}

void
FcMessageSink::Setup(Ptr<FcNetDevice> port)
{
    m_port = port;
    port->SetReceiveCallback(MakeCallback(&FcMessageSink::Receive, this));
}

void
FcMessageSink::Register(uint32_t sId, Ptr<FcMessageSender> sender)
{
    m_sources[sId & 0xffffff] = sender;
}

void
FcMessageSink::DoDispose()
{
    m_sources.clear();
    m_port = nullptr;
    Application::DoDispose();
}

bool
FcMessageSink::Receive(Ptr<NetDevice>, Ptr<const Packet> frame, uint16_t, const Address&)
{
    FcFrameHeader h;
    frame->PeekHeader(h);
    auto it = m_sources.find(h.sId);
    if (it == m_sources.end())
    {
        ++m_unknown;
        return true;
    }
    if (h.rCtl != FcRctl::SOLICITED_DATA)
    {
        return true; // FCP_CMND: the data follows as the first burst
    }
    it->second->DataDelivered(h.oxId, FcPayloadOf(frame));
    if (h.fCtl & FcFctl::END_SEQUENCE)
    {
        // FCP_RSP IU: SCSI status GOOD, no residual, no sense.
        FcFrameHeader r;
        r.rCtl = FcRctl::COMMAND_STATUS;
        r.type = FcType::FCP;
        r.dId = h.sId;
        r.sId = m_port->GetFcId();
        r.oxId = h.oxId;
        r.rxId = m_nextRx;
        m_nextRx = (m_nextRx + 1) % 0xffff;
        r.fCtl = FcFctl::EXCHANGE_CONTEXT | FcFctl::FIRST_SEQUENCE | FcFctl::LAST_SEQUENCE
                 | FcFctl::END_SEQUENCE;
        m_port->Enqueue(MakeFcFrame(r, 24));
    }
    return true;
}

} // namespace ns3
