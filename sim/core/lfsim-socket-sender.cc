#include "lfsim-socket-sender.h"

#include <algorithm>

namespace lfsim
{

uint32_t
SocketSender::Flush()
{
    uint32_t sent = 0;
    while (!m_queue.empty())
    {
        const uint32_t available = m_socket->GetTxAvailable();
        if (available == 0)
        {
            return sent; // the socket's send callback resumes when TCP frees buffer space
        }
        ns3::Ptr<ns3::Packet> front = m_queue.front();
        const uint32_t left = front->GetSize() - m_offset;
        const uint32_t n = std::min(available, left);
        ns3::Ptr<ns3::Packet> piece
            = (m_offset == 0 && n == left) ? front : front->CreateFragment(m_offset, n);
        if (m_socket->Send(piece) < 0)
        {
            return sent;
        }
        m_pending -= n;
        m_offset += n;
        if (m_offset == front->GetSize())
        {
            m_queue.pop_front();
            m_offset = 0;
            ++sent;
        }
    }
    return sent;
}

void
SocketSender::DropFrom(size_t k)
{
    for (size_t i = k; i < m_queue.size(); ++i)
    {
        m_pending -= m_queue[i]->GetSize();
    }
    m_queue.erase(m_queue.begin() + std::min(k, m_queue.size()), m_queue.end());
}

} // namespace lfsim
