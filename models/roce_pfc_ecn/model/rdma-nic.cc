#include "rdma-nic.h"

#include "lfsim-attributes.h"
#include "ns3/object-factory.h"
#include "ns3/packet.h"

#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

// Scenarios name every part's attribute under RdmaNic (RdmaNic.PathMtu, RdmaNic.PcieGeneration),
// as before the NIC was split; each is declared once, by its part.
static const bool g_nicParts
    = lfsim::RegisterParts("ns3::RdmaNic", {"ns3::RdmaTransport", "ns3::RdmaHostInterface"});

TypeId
RdmaNic::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::RdmaNic")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<RdmaNic>()
              .AddAttribute(
                  "CongestionControl",
                  "Congestion control of the QPs (the reaction point): None (line rate) "
                  "or a registered controller by name (one folder each under models/; the "
                  "docs' attribute tables list them), made through an ObjectFactory with "
                  "its class's attributes.",
                  TypeIdValue(RdmaCongestionControl::GetTypeId()),
                  MakeTypeIdAccessor(&RdmaNic::m_ccType), MakeTypeIdChecker());
    return tid;
}

RdmaNic::RdmaNic() = default;

void
RdmaNic::Setup(Ptr<RoceNetDevice> port, Ipv4Address ip)
{
    m_port = port;
    m_cc = nullptr;
    if (m_ccType != RdmaCongestionControl::GetTypeId())
    {
        if (!m_ccType.IsChildOf(RdmaCongestionControl::GetTypeId()) || !m_ccType.HasConstructor())
        {
            throw std::invalid_argument("RdmaNic.CongestionControl: got '" + m_ccType.GetName()
                                        + "'; accepted: a registered congestion control");
        }
        ObjectFactory factory;
        factory.SetTypeId(m_ccType);
        m_cc = factory.Create<RdmaCongestionControl>();
    }
    RoceNetDevice* p = PeekPointer(port);
    m_tp.Setup(p, ip, &m_sched, &m_host, PeekPointer(m_cc));
    port->SetUser(&m_tp);
    m_host.Setup(&m_tp, p);
    m_sched.Setup(p, &m_host, PeekPointer(m_cc), &m_tp.m_qps);
}

std::pair<Ptr<RdmaQueuePair>, Ptr<RdmaQueuePair>>
RdmaNic::Connect(Ptr<RdmaNic> peer, Time baseRtt, Time peerBaseRtt)
{
    Ptr<RdmaQueuePair> a = Create<RdmaQueuePair>();
    Ptr<RdmaQueuePair> b = Create<RdmaQueuePair>();
    a->m_nic = this;
    b->m_nic = PeekPointer(peer);
    a->m_tp = &m_tp;
    b->m_tp = &peer->m_tp;
    a->m_baseRtt = baseRtt;
    b->m_baseRtt = peerBaseRtt;
    a->m_qpn = RdmaQueuePair::FIRST_QPN + m_tp.m_qps.size();
    b->m_qpn = RdmaQueuePair::FIRST_QPN + peer->m_tp.m_qps.size();
    m_tp.m_qps.push_back(a);
    peer->m_tp.m_qps.push_back(b);
    for (auto [x, y] : {std::make_pair(a, b), std::make_pair(b, a)})
    {
        const RdmaTransport& tp = *x->m_tp;
        x->m_peerQpn = y->m_qpn;
        x->m_peerIp = y->m_tp->m_ip;
        // RoCEv2 entropy: a UDP source port per QP from the dynamic range.
        uint32_t h = (x->m_qpn * 2654435761u) ^ (tp.m_ip.v * 40503u) ^ y->m_qpn;
        x->m_udpSrc = static_cast<uint16_t>(0xC000 | ((h ^ (h >> 16)) & 0x3FFF));
        x->m_prio = tp.m_dscp >> 3;
        x->m_rate = x->GetLineRate();
        x->m_lastCnp = Time(-1);
        if (RdmaCongestionControl* cc = PeekPointer(x->m_nic->m_cc))
        {
            cc->OnConnect(*x);
        }
    }
    return {a, b};
}

void
RdmaNic::DoDispose()
{
    for (auto& qp : m_tp.m_qps)
    {
        qp->m_rto.Cancel();
        qp->m_rnrTimer.Cancel();
        qp->m_completion = RdmaQueuePair::CompletionCallback();
        qp->m_receive = RdmaQueuePair::ReceiveCallback();
        qp->m_onError = RdmaQueuePair::ErrorCallback();
        qp->m_nic = nullptr;
        qp->m_tp = nullptr;
    }
    m_sched.Dispose();
    m_host.Dispose();
    m_tp.m_qps.clear();
    m_port = nullptr;
    m_cc = nullptr;
    Object::DoDispose();
}

} // namespace ns3
