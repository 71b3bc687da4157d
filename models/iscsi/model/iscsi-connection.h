/*
 * One iSCSI connection over a TCP socket: PDUs out (an application-side queue fed into the
 * socket as its send buffer frees) and PDUs in (a receive buffer framed by the BHS: a PDU is
 * complete once 48 + AHS + digests + padded DataSegmentLength bytes are there, whatever the TCP
 * segment boundaries). Digests are computed and checked for real once login has enabled them.
 */
#ifndef ISCSI_CONNECTION_H
#define ISCSI_CONNECTION_H

#include "iscsi-pdu.h"
#include "lfsim-socket-receiver.h"
#include "lfsim-socket-sender.h"
#include "ns3/ptr.h"
#include "ns3/socket.h"
#include "ns3/traced-callback.h"

#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

class IscsiConnection
{
  public:
    /// A received PDU; `data` (the data segment, `n` bytes) is valid during the call only.
    using Handler = std::function<void(const IscsiBhs& bhs, const uint8_t* data, uint32_t n)>;
    using PduTrace = TracedCallback<const IscsiBhs&, uint32_t>;

    /// Takes over the socket's receive and send callbacks. `tx` / `rx` fire with the BHS and
    /// the PDU's wire bytes when a PDU is queued for sending / has been received whole.
    IscsiConnection(Ptr<Socket> socket, Handler handler, PduTrace* tx, PduTrace* rx);
    ~IscsiConnection();

    /// Queues a PDU whose data segment is `dataLength` zero bytes (SCSI data). Sets the BHS's
    /// DataSegmentLength.
    void Send(IscsiBhs& bhs, uint32_t dataLength);
    /// Queues a PDU whose data segment is `text` (login and text keys).
    void SendText(IscsiBhs& bhs, const std::string& text);
    /// Digests in effect from the next PDU on (each direction; RFC 7143 section 13.1: after the
    /// final Login Response).
    void SetDigests(bool header, bool data);
    void Close();

    /// Bytes queued in the application not yet accepted by the socket.
    uint64_t
    PendingBytes() const
    {
        return m_tx.Pending();
    }
    /// PDUs dropped for a digest mismatch (the connection closes, error recovery level 0).
    uint64_t
    DigestErrors() const
    {
        return m_digestErrors;
    }

  private:
    void Queue(IscsiBhs& bhs, Ptr<Packet> data, uint32_t dataLength, uint32_t dataDigest);
    void Flush();
    void OnSendSpace(Ptr<Socket> s, uint32_t available);
    void OnRecv(Ptr<Socket> s);
    void Parse();

    Ptr<Socket> m_socket;
    Handler m_handler;
    PduTrace* m_txTrace;
    PduTrace* m_rxTrace;
    bool m_headerDigest = false;
    bool m_dataDigest = false;
    bool m_closed = false;

    lfsim::SocketSender m_tx;

    lfsim::SocketReceiver m_rx;
    uint64_t m_digestErrors = 0;
};

} // namespace ns3

#endif
