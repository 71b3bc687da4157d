#include "roce-net-device.h"

#include "lfsim-clock.h"
#include "ns3/abort.h"
#include "ns3/enum.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"
#include "roce-channel.h"
#include "roce-header.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RoceNetDevice);

TypeId
RoceNetDevice::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RoceNetDevice")
              .SetParent<NetDevice>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RoceNetDevice>()
              .AddAttribute("Mtu",
                            "Largest frame payload (IP packet) the port carries, bytes. 4200 fits "
                            "a RoCEv2 path MTU of 4096 with its headers.",
                            UintegerValue(4200),
                            MakeUintegerAccessor(&RoceNetDevice::SetMtu, &RoceNetDevice::GetMtu),
                            MakeUintegerChecker<uint16_t>(576, 9216))
              .AddAttribute(
                  "Speed",
                  "Line rate of the port (a topology's HostSpeed or UplinkSpeed, or a "
                  "link's speed, sets it per cable).",
                  EnumValue(int(EthSpeed::GBE25)),
                  MakeEnumAccessor(&RoceNetDevice::SetSpeedValue, &RoceNetDevice::GetSpeedValue),
                  EthSpeedChecker())
              .AddAttribute("PfcResponseDelay",
                            "Time from the end of a received PFC frame until the transmitter "
                            "honours it (the current frame always completes first).",
                            TimeValue(Time(0)),
                            MakeTimeAccessor(&RoceNetDevice::m_pfcResponseDelay),
                            MakeTimeChecker(Time(0)))
              .AddAttribute("StrictPriorityMask",
                            "Traffic classes served by strict priority before the others "
                            "(bit c = class c; higher class first). The rest share by DWRR.",
                            UintegerValue(0xC0), MakeUintegerAccessor(&RoceNetDevice::m_strictMask),
                            MakeUintegerChecker<uint8_t>())
              .AddAttribute(
                  "DwrrQuantum", "Bytes each DWRR class may send per round (equal weights).",
                  UintegerValue(9216), MakeUintegerAccessor(&RoceNetDevice::m_dwrrQuantum),
                  MakeUintegerChecker<uint32_t>(1518, 1 << 24))
              .AddTraceSource("QueueBytes",
                              "Bytes queued in a traffic class changed (class, bytes).",
                              MakeTraceSourceAccessor(&RoceNetDevice::m_queueTrace),
                              "ns3::RoceNetDevice::QueueTracedCallback")
              .AddTraceSource("PauseTx",
                              "A PFC frame sent, once per enabled class (class, quanta; 0 = XON).",
                              MakeTraceSourceAccessor(&RoceNetDevice::m_pauseTxTrace),
                              "ns3::RoceNetDevice::PauseTracedCallback")
              .AddTraceSource("PauseRx",
                              "A PFC frame received, once per enabled class (class, quanta).",
                              MakeTraceSourceAccessor(&RoceNetDevice::m_pauseRxTrace),
                              "ns3::RoceNetDevice::PauseTracedCallback")
              .AddTraceSource("Sniffer",
                              "Every frame as it starts on the line (sent) or has arrived "
                              "(received), FCS excluded: what a capture on this port shows.",
                              MakeTraceSourceAccessor(&RoceNetDevice::m_snifferTrace),
                              "ns3::Packet::TracedCallback");
    return tid;
}

RoceNetDevice::RoceNetDevice() = default;

void
RoceNetDevice::Attach(Ptr<RoceChannel> channel)
{
    m_channel = channel;
    m_lineSide = channel->Attach(this);
    m_out.delay = channel->GetPropagationDelay();
}

void
RoceNetDevice::SetSpeed(EthSpeed s)
{
    m_speed = s;
}

void
RoceNetDevice::SetSpeedValue(int s)
{
    m_speed = EthSpeed(s);
}

int
RoceNetDevice::GetSpeedValue() const
{
    return int(m_speed);
}

Ptr<Channel>
RoceNetDevice::GetChannel() const
{
    return m_channel;
}

bool
RoceNetDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

void
RoceNetDevice::EnableIp(uint8_t dscp, bool vlan, uint16_t vid)
{
    NS_ABORT_MSG_IF(!m_channel, "RoceNetDevice::EnableIp: attach the port first");
    m_ip = true;
    if (!m_host)
    {
        m_host = std::make_unique<HostIp>();
    }
    m_host->dscp = dscp;
    m_host->vlan = vlan;
    m_host->vid = vid;
    m_host->nextHop = m_channel->GetPeer(this)->GetMac();
}

bool
RoceNetDevice::Send(Ptr<Packet> packet, const Address&, uint16_t protocolNumber)
{
    // Switch ports take frames through Enqueue and the NIC's through its Pull (User); a host
    // port with EnableIp takes IPv4 packets here. The link is point to point: the frame goes
    // to the peer's MAC whatever the IP layer's destination (there is no ARP).
    if (!m_ip || protocolNumber != ETHERTYPE_IPV4)
    {
        return false;
    }
    HostIp& h = *m_host;
    const uint8_t c = h.dscp >> 3;
    AddEthernetToIpv4(packet, h.nextHop, m_address, h.vlan, c, h.vid, h.dscp);
    Item it;
    it.bytes = packet->GetSize();
    it.frame = RoceFrame::FromPacket(packet);
    it.prio = c;
    h.q[c].push_back(it);
    m_ipReady |= uint8_t(1u << c);
    m_tc[c].bytes += it.bytes;
    m_qTotal += it.bytes;
    ++m_pc.ipTx;
    m_fc.maxQueueBytes = std::max(m_fc.maxQueueBytes, GetQueueBytes());
    m_queueTrace(c, m_tc[c].bytes);
    Kick();
    return true;
}

Ptr<RoceChannel>
RoceNetDevice::GetRoceChannel() const
{
    return m_channel;
}

void
RoceNetDevice::SetSourceReady(uint8_t prio, bool ready)
{
    if (ready)
    {
        m_sourceReady |= uint8_t(1u << prio);
    }
    else
    {
        m_sourceReady &= uint8_t(~(1u << prio));
    }
}

void
RoceNetDevice::Enqueue(RoceFrame frame, uint8_t prio, int32_t inPort, FrameEdit edit)
{
    Item it;
    const uint32_t bytes = frame.GetSize();
    it.bytes = bytes;
    it.frame = std::move(frame);
    it.inPort = inPort;
    it.prio = prio;
    it.edit = edit;
    m_tc[prio].q.push_back(std::move(it));
    m_queued |= uint8_t(1u << prio);
    m_tc[prio].bytes += bytes;
    m_qTotal += bytes;
    m_fc.maxQueueBytes = std::max(m_fc.maxQueueBytes, GetQueueBytes());
    m_queueTrace(prio, m_tc[prio].bytes);
    Kick();
}

bool
RoceNetDevice::IsPaused(uint8_t c) const
{
    Time now = lfsim::Now();
    return now >= m_pauseFrom[c] && now < m_pauseUntil[c];
}

uint8_t
RoceNetDevice::HeldMask(Time now)
{
    if (now >= m_heldUntil)
    {
        // The cached mask no longer holds (a pause began or ended since): recompute it, and
        // the next instant it may change.
        uint8_t paused = 0;
        Time next = Time::Max();
        for (uint8_t c = 0; c < ETH_CLASSES; ++c)
        {
            if (now >= m_pauseFrom[c] && now < m_pauseUntil[c])
            {
                paused |= uint8_t(1u << c);
                next = std::min(next, m_pauseUntil[c]);
            }
            else if (m_pauseFrom[c] > now)
            {
                next = std::min(next, m_pauseFrom[c]);
            }
        }
        m_paused = paused;
        m_heldUntil = next;
    }
    return m_paused & ~m_pfcIgnored;
}

void
RoceNetDevice::SetPfcIgnored(uint8_t prio, bool ignored)
{
    if (ignored)
    {
        m_pfcIgnored |= uint8_t(1u << prio);
    }
    else
    {
        m_pfcIgnored &= uint8_t(~(1u << prio));
    }
    Kick(); // an ignored class may go now; a honoured one needs its pause wake-up again
}

lfsim::Fifo<RoceNetDevice::Item, 1>
RoceNetDevice::TakeQueue(uint8_t prio)
{
    lfsim::Fifo<Item, 1> taken;
    taken.swap(m_tc[prio].q);
    m_queued &= uint8_t(~(1u << prio));
    m_qTotal -= m_tc[prio].bytes;
    m_tc[prio].bytes = 0;
    m_queueTrace(prio, 0);
    return taken;
}

void
RoceNetDevice::AddQueuedBytesByInPort(uint8_t prio, std::vector<uint64_t>& byInPort) const
{
    for (const Item& item : m_tc[prio].q)
    {
        if (item.inPort >= 0 && size_t(item.inPort) < byInPort.size())
        {
            byInPort[item.inPort] += item.bytes;
        }
    }
}

Time
RoceNetDevice::GetPausedTime(uint8_t c) const
{
    Time end = std::min(lfsim::Now(), m_pauseUntil[c]);
    Time open = end > m_pauseFrom[c] ? end - m_pauseFrom[c] : Time(0);
    return m_pausedTotal[c] + open;
}

Time
RoceNetDevice::GetPausedTime() const
{
    Time t;
    for (uint8_t c = 0; c < ETH_CLASSES; ++c)
    {
        t += GetPausedTime(c);
    }
    return t;
}

void
RoceNetDevice::TakeIp(uint8_t c)
{
    // Its bytes were counted in m_tc[c].bytes when Send queued it.
    auto& q = m_host->q[c];
    m_tc[c].q.push_back(q.front());
    m_queued |= uint8_t(1u << c);
    q.pop_front();
    if (q.empty())
    {
        m_ipReady &= uint8_t(~(1u << c));
    }
}

RoceNetDevice::Item
RoceNetDevice::PopFront(uint8_t c)
{
    Item it = std::move(m_tc[c].q.front());
    m_tc[c].q.pop_front();
    if (m_tc[c].q.empty())
    {
        m_queued &= uint8_t(~(1u << c));
    }
    return it;
}

bool
RoceNetDevice::HeadReady(uint8_t c)
{
    if (m_tc[c].q.empty() && (Sources() & (1u << c)))
    {
        const bool ip = m_ipReady & (1u << c);
        const bool nic = m_sourceReady & (1u << c);
        if (ip && (!nic || m_host->credit[c] <= 0))
        {
            const uint32_t bytes = m_host->q[c].front().bytes;
            TakeIp(c);
            m_host->credit[c] = nic ? m_host->credit[c] + bytes : 0;
            return true;
        }
        RoceFrame p = m_user->Pull(c);
        if (!p)
        {
            SetSourceReady(c, false);
            if (ip)
            {
                TakeIp(c);
                m_host->credit[c] = 0;
                return true;
            }
            return false;
        }
        Item it;
        const uint32_t bytes = p.GetSize();
        it.bytes = bytes;
        it.frame = std::move(p);
        it.prio = c;
        m_tc[c].q.push_back(std::move(it));
        m_queued |= uint8_t(1u << c);
        m_tc[c].bytes += bytes;
        m_qTotal += bytes;
        if (m_ip) // without IP the credit stays 0: nothing to write
        {
            m_host->credit[c] = ip ? m_host->credit[c] - bytes : 0;
        }
    }
    return !m_tc[c].q.empty();
}

void
RoceNetDevice::Kick()
{
    if (m_busy || !m_channel)
    {
        return;
    }
    if (m_controlQueued)
    {
        Item it;
        it.frame = RoceFrame::FromPacket(m_control.front());
        it.bytes = it.frame.GetSize();
        m_control.pop_front();
        m_controlQueued = !m_control.empty();
        Transmit(it, true);
        return;
    }
    if (!(QueuedMask() | Sources()))
    {
        // Nothing queued and nothing to pull (about half the calls): what the walk below comes
        // to then, without it. The DWRR classes forget their deficits, m_rr stays (it would go
        // round four times) and no pause wake is needed.
        ForgetDeficits(4 * ETH_CLASSES);
        SchedulePauseWake(lfsim::Now(), 0);
        return;
    }
    // The time is read once: nothing below changes a pause (the NIC's pull never calls back
    // into the port), so one held mask serves the whole decision.
    const Time now = lfsim::Now();
    const uint8_t held = HeldMask(now);
    // Classes that may send: not held, with a frame queued or a source to take one from. A
    // class without either is skipped wherever the loops below would find it not eligible.
    auto open = [&]() { return uint8_t((QueuedMask() | Sources()) & ~held); };
    for (uint8_t cand = open() & m_strictMask; cand;)
    {
        const int c = 31 - __builtin_clz(uint32_t(cand)); // highest class first
        cand &= uint8_t(~(1u << c));
        if (HeadReady(uint8_t(c)))
        {
            Transmit(PopFront(uint8_t(c)), false);
            return;
        }
    }
    const uint8_t dwrr = uint8_t(~m_strictMask);
    // DWRR: the class at m_rr keeps its turn while its deficit covers the head frame.
    for (int n = 0; n < 4 * ETH_CLASSES; ++n)
    {
        const uint8_t go = open() & dwrr;
        if (!go)
        {
            // No DWRR class may send any more: the rest of the walk would only forget the
            // deficit of the classes it passes that have nothing queued.
            ForgetDeficits(4 * ETH_CLASSES - n);
            break;
        }
        const uint8_t c = m_rr;
        if (!(go >> c & 1))
        {
            // Classes that may not send are passed in one go: d steps to the next that may
            // (1 to 7), each forgetting the deficit of a class with nothing queued, as the walk
            // would one step at a time; the step that lands gives it its quantum.
            const uint32_t ahead = uint32_t(go) >> (c + 1) | uint32_t(go) << (ETH_CLASSES - c - 1);
            const int d = __builtin_ctz(ahead) + 1;
            if (n + d > 4 * ETH_CLASSES)
            {
                ForgetDeficits(4 * ETH_CLASSES - n);
                break;
            }
            ForgetDeficits(d);
            Credit(m_rr);
            n += d - 1;
            continue;
        }
        // Class c may send (DWRR, not held, a frame queued or a source to pull from).
        if (HeadReady(c))
        {
            const Item& head = m_tc[c].q.front();
            if (m_tc[c].deficit >= int64_t(head.bytes))
            {
                m_tc[c].deficit -= head.bytes;
                Transmit(PopFront(c), false);
                return;
            }
        }
        else if (m_tc[c].q.empty())
        {
            m_tc[c].deficit = 0;
        }
        m_rr = (m_rr + 1) % ETH_CLASSES;
        if (open() & dwrr & (1u << m_rr))
        {
            Credit(m_rr);
        }
    }
    SchedulePauseWake(now, held);
}

void
RoceNetDevice::SchedulePauseWake(Time now, uint8_t held)
{
    // Nothing could go: if a paused class holds frames, look again when its pause ends.
    Time wake = Time::Max();
    const uint8_t backlog = QueuedMask() | Sources();
    for (uint8_t c = 0; c < ETH_CLASSES; ++c)
    {
        if (!(backlog >> c & 1))
        {
            continue;
        }
        if (held >> c & 1)
        {
            wake = std::min(wake, m_pauseUntil[c]);
        }
        else if (m_pauseFrom[c] > now && !IsPfcIgnored(c))
        {
            wake = std::min(wake, m_pauseFrom[c]);
        }
    }
    if (m_wakeAt >= now) // an earlier wake is over already: nothing to cancel (most calls)
    {
        m_wake.Cancel();
    }
    if (wake != Time::Max())
    {
        m_wake = lfsim::Schedule(wake - now, &RoceNetDevice::Kick, this);
        m_wakeAt = wake;
    }
}

void
RoceNetDevice::Transmit(Item item, bool control)
{
    m_busy = true;
    if (!control)
    {
        m_tc[item.prio].bytes -= item.bytes;
        m_qTotal -= item.bytes;
        m_queueTrace(item.prio, m_tc[item.prio].bytes);
        if (m_dequeueHook)
        {
            m_user->Dequeue(this, item);
        }
    }
    const uint32_t frame = std::max(item.bytes + ETH_FCS, ETH_MIN_FRAME);
    const Time arrive = EthWireTime(m_speed, ETH_PREAMBLE_SFD + frame);
    const Time done = EthWireTime(m_speed, ETH_PREAMBLE_SFD + frame + ETH_IFG);
    ++m_fc.framesTx;
    m_fc.lineBytesTx += ETH_PREAMBLE_SFD + frame + ETH_IFG;
    if (!m_snifferTrace.IsEmpty()) // captures only: no Ptr copy per frame otherwise
    {
        m_snifferTrace(item.frame.ToPacket());
    }
    // Onto the line, unless the cable's faults lose it (or the receiver's FCS/ICRC check drops
    // it): it reaches the peer when its last bit has, the propagation delay after it left.
    if (lfsim::LinkFaults& faults = m_channel->Faults();
        !(faults.Active() && faults.Lose(item.frame.GetSize(), m_lineSide)))
    {
        if (!m_out.frames.HasDelivery())
        {
            // The receiver's node is its context; nodes stay, so it is read once. The event
            // names the receiver itself: a delivery then reads the event and this line only.
            RoceNetDevice* to = PeekPointer(m_channel->GetPeer(this));
            m_out.frames.SetDelivery(lfsim::MakeLineEvent(&RoceNetDevice::Arrive, this, to),
                                     to->GetNode()->GetId());
        }
        m_out.frames.Send(item.frame, arrive + m_out.delay);
    }
    m_current = std::move(item);
    m_currentIsData = !control;
    if (!m_txDoneEvent)
    {
        m_txDoneEvent = lfsim::MakeLineEvent(&RoceNetDevice::TransmitDone, this);
    }
    // One reusable event: nothing allocated per frame. With this node's context, as Schedule
    // would give it, but without the EventId Schedule builds and nobody reads; the simulator
    // releases one reference per scheduled instance.
    m_txDoneEvent->Ref();
    lfsim::ScheduleHere(done, PeekPointer(m_txDoneEvent));
}

void
RoceNetDevice::Arrive(RoceNetDevice* to)
{
    to->Receive(m_out.frames.Take());
}

void
RoceNetDevice::TransmitDone()
{
    m_busy = false;
    if (m_currentIsData)
    {
        Item done = std::move(m_current);
        m_current = Item();
        if (m_user)
        {
            m_user->TxDone(this, done);
        }
    }
    Kick();
}

void
RoceNetDevice::SendPause(uint8_t classMask, uint16_t quanta)
{
    PfcHeader h;
    h.src = m_address;
    h.classEnable = classMask;
    for (uint8_t c = 0; c < ETH_CLASSES; ++c)
    {
        if (classMask & (1u << c))
        {
            h.quanta[c] = quanta;
            m_pauseTxTrace(c, quanta);
        }
    }
    Ptr<Packet> p = Create<Packet>();
    p->AddHeader(h);
    m_control.push_back(p);
    m_controlQueued = true;
    ++(quanta ? m_pc.pauseTx : m_pc.xonTx);
    Kick();
}

void
RoceNetDevice::Receive(RoceFrame frame)
{
    ++m_fc.framesRx;
    if (!m_snifferTrace.IsEmpty())
    {
        m_snifferTrace(frame.ToPacket());
    }
    // A RoCE frame holds its headers' bytes; a packet's are copied out once here. The switch or
    // the NIC reads them from there.
    frame.ReadHead();
    const FrameBytes& f = frame.Head();
    if ((uint16_t(f.b[12]) << 8 | f.b[13]) == ETHERTYPE_MAC_CONTROL)
    {
        OnPause(frame.GetPacket());
        return;
    }
    if (m_ip)
    {
        const FrameView v = ParseFrame(f);
        if (v.etherType == ETHERTYPE_IPV4 && !(v.proto == 17 && v.dport == ROCEV2_UDP_PORT))
        {
            // Not a RoCE frame: an ns-3 packet from the peer's IP stack.
            const Ptr<Packet>& packet = frame.GetPacket();
            const Mac48Address from = RemoveEthernet(packet);
            ++m_pc.ipRx;
            m_rxCallback(this, packet, ETHERTYPE_IPV4, from);
            return;
        }
    }
    if (m_user)
    {
        m_user->Receive(this, frame, f);
    }
}

void
RoceNetDevice::OnPause(Ptr<Packet> frame)
{
    PfcHeader h;
    frame->PeekHeader(h);
    const Time now = lfsim::Now();
    const Time start = now + m_pfcResponseDelay;
    const Time quantum = PfcQuantum(m_speed);
    bool anyPause = false;
    for (uint8_t c = 0; c < ETH_CLASSES; ++c)
    {
        if (!(h.classEnable & (1u << c)))
        {
            continue;
        }
        const uint16_t q = h.quanta[c];
        anyPause = anyPause || q != 0;
        const Time until = start + quantum * int64_t(q);
        if (m_pauseUntil[c] > start)
        {
            // Still held when this frame takes effect: the new timer replaces the old one.
            m_pauseUntil[c] = std::max(until, m_pauseFrom[c]);
        }
        else if (q != 0)
        {
            if (m_pauseUntil[c] > m_pauseFrom[c])
            {
                m_pausedTotal[c] += m_pauseUntil[c] - m_pauseFrom[c];
            }
            m_pauseFrom[c] = start;
            m_pauseUntil[c] = until;
        }
        m_heldUntil = Time(0); // the held mask is computed again at its next use
        // After the update: a subscriber (the switch's watchdog) reads the new pause state.
        m_pauseRxTrace(c, q);
    }
    ++(anyPause ? m_pc.pauseRx : m_pc.xonRx);
    Kick();
}

void
RoceNetDevice::DoDispose()
{
    m_wake.Cancel();
    m_txDoneEvent = nullptr;
    DisposePort();
    m_channel = nullptr;
    m_out.frames.Clear();
    for (auto& tc : m_tc)
    {
        tc.q.clear();
    }
    if (m_host)
    {
        for (auto& q : m_host->q)
        {
            q.clear();
        }
    }
    m_control.clear();
    m_controlQueued = false;
    m_current = Item();
    m_user = nullptr;
    NetDevice::DoDispose();
}

} // namespace ns3
