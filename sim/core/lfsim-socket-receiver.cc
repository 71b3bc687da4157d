#include "lfsim-socket-receiver.h"

#include <limits>

namespace lfsim
{

void
SocketReceiver::Receive(ns3::Ptr<ns3::Socket> socket)
{
    while (ns3::Ptr<ns3::Packet> p = socket->Recv(std::numeric_limits<uint32_t>::max(), 0))
    {
        if (p->GetSize() == 0)
        {
            break;
        }
        Append(*p);
    }
}

void
SocketReceiver::Append(const ns3::Packet& p)
{
    // Consumed bytes go before new ones come: all of them when all are consumed, else once
    // they are many (a PDU still partly in flight keeps its start where it is till then).
    if (m_head == m_b.size())
    {
        m_b.clear();
        m_head = 0;
    }
    else if (m_head > (1u << 20))
    {
        m_b.erase(m_b.begin(), m_b.begin() + m_head);
        m_head = 0;
    }
    const uint32_t n = p.GetSize();
    const size_t old = m_b.size();
    m_b.resize(old + n);
    p.CopyData(m_b.data() + old, n);
}

} // namespace lfsim
