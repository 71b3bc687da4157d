/*
 * An ns-3 stream socket's (TCP) received bytes, as a storage protocol over TCP parses them
 * (iSCSI, NVMe/TCP): each packet is copied once, straight into one buffer, where the protocol
 * frames its PDUs in place; the counterpart of SocketSender.
 */
#ifndef LFSIM_SOCKET_RECEIVER_H
#define LFSIM_SOCKET_RECEIVER_H

#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"

#include <cstdint>
#include <vector>

namespace lfsim
{

class SocketReceiver
{
  public:
    /// Appends all that `socket` has received. Pointers into Data() are invalid after this and
    /// after Append.
    void Receive(ns3::Ptr<ns3::Socket> socket);
    /// Appends the bytes of `p`.
    void Append(const ns3::Packet& p);
    /// The bytes received and not yet consumed.
    const uint8_t*
    Data() const
    {
        return m_b.data() + m_head;
    }
    size_t
    Size() const
    {
        return m_b.size() - m_head;
    }
    /// The first `n` bytes of Data() are parsed.
    void
    Consume(size_t n)
    {
        m_head += n;
    }

  private:
    std::vector<uint8_t> m_b;
    size_t m_head = 0; ///< first byte of m_b not yet consumed
};

} // namespace lfsim

#endif
