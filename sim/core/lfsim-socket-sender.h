/*
 * An application's byte stream into an ns-3 stream socket (TCP), as a storage protocol over TCP
 * writes it (iSCSI, NVMe/TCP): packets are queued here, and handed to the socket as far as its
 * send buffer takes them, a piece of one at the end if need be; the rest waits for the socket's
 * send callback (call Flush from it).
 */
#ifndef LFSIM_SOCKET_SENDER_H
#define LFSIM_SOCKET_SENDER_H

#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"

#include <deque>

namespace lfsim
{

class SocketSender
{
  public:
    void
    SetSocket(ns3::Ptr<ns3::Socket> socket)
    {
        m_socket = socket;
    }
    /// Queues a packet (call Flush to send).
    void
    Push(ns3::Ptr<ns3::Packet> p)
    {
        m_pending += p->GetSize();
        m_queue.push_back(p);
    }
    /// Hands the socket what its send buffer takes now; returns how many queued packets went
    /// wholly.
    uint32_t Flush();
    /// Drops the queued packets from the k-th on (none of them may be partly in the socket).
    void DropFrom(size_t k);
    void
    Clear()
    {
        m_queue.clear();
        m_offset = 0;
        m_pending = 0;
    }
    /// Bytes queued and not yet accepted by the socket.
    uint64_t
    Pending() const
    {
        return m_pending;
    }
    size_t
    Queued() const
    {
        return m_queue.size();
    }
    /// Whether the first queued packet is partly in the socket.
    bool
    Started() const
    {
        return m_offset > 0;
    }

  private:
    ns3::Ptr<ns3::Socket> m_socket;
    std::deque<ns3::Ptr<ns3::Packet>> m_queue;
    uint32_t m_offset = 0; ///< bytes of the first queued packet already in the socket
    uint64_t m_pending = 0;
};

} // namespace lfsim

#endif
