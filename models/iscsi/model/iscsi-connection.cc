#include "iscsi-connection.h"

#include "lfsim-crc32c.h"
#include "ns3/packet.h"

namespace ns3
{

namespace
{
uint32_t
Padded(uint32_t n)
{
    return (n + 3) & ~3u;
}
} // namespace

IscsiConnection::IscsiConnection(Ptr<Socket> socket, Handler handler, PduTrace* tx, PduTrace* rx)
    : m_socket(socket)
    , m_handler(std::move(handler))
    , m_txTrace(tx)
    , m_rxTrace(rx)
{
    m_tx.SetSocket(m_socket);
    m_socket->SetRecvCallback(MakeCallback(&IscsiConnection::OnRecv, this));
    m_socket->SetSendCallback(MakeCallback(&IscsiConnection::OnSendSpace, this));
}

IscsiConnection::~IscsiConnection()
{
    // Unhook only: at Simulator::Destroy the socket must not start a TCP close.
    if (!m_closed)
    {
        m_socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        m_socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    }
}

void
IscsiConnection::Close()
{
    if (m_closed)
    {
        return;
    }
    m_closed = true;
    m_socket->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
    m_socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    m_socket->Close();
    m_tx.Clear();
}

void
IscsiConnection::SetDigests(bool header, bool data)
{
    m_headerDigest = header;
    m_dataDigest = data;
}

void
IscsiConnection::Send(IscsiBhs& bhs, uint32_t dataLength)
{
    Ptr<Packet> data = dataLength ? Create<Packet>(Padded(dataLength)) : nullptr;
    const uint32_t dd = m_dataDigest && dataLength ? lfsim::Crc32cZeros(Padded(dataLength)) : 0;
    Queue(bhs, data, dataLength, dd);
}

void
IscsiConnection::SendText(IscsiBhs& bhs, const std::string& text)
{
    const uint32_t n = text.size();
    std::vector<uint8_t> b(Padded(n), 0);
    std::copy(text.begin(), text.end(), b.begin());
    Ptr<Packet> data = n ? Create<Packet>(b.data(), b.size()) : nullptr;
    const uint32_t dd = m_dataDigest && n ? lfsim::Crc32c(b.data(), b.size()) : 0;
    Queue(bhs, data, n, dd);
}

void
IscsiConnection::Queue(IscsiBhs& bhs, Ptr<Packet> data, uint32_t dataLength, uint32_t dataDigest)
{
    if (m_closed)
    {
        return;
    }
    bhs.SetDataSegmentLength(dataLength);
    uint8_t head[ISCSI_BHS_SIZE + ISCSI_DIGEST_SIZE];
    std::copy(bhs.Bytes().begin(), bhs.Bytes().end(), head);
    uint32_t headLength = ISCSI_BHS_SIZE;
    if (m_headerDigest)
    {
        lfsim::PutCrc32(head + ISCSI_BHS_SIZE, lfsim::Crc32c(head, ISCSI_BHS_SIZE));
        headLength += ISCSI_DIGEST_SIZE;
    }
    Ptr<Packet> pdu = Create<Packet>(head, headLength);
    if (data)
    {
        pdu->AddAtEnd(data);
        if (m_dataDigest)
        {
            uint8_t d[ISCSI_DIGEST_SIZE];
            lfsim::PutCrc32(d, dataDigest);
            pdu->AddAtEnd(Create<Packet>(d, ISCSI_DIGEST_SIZE));
        }
    }
    const uint32_t size = pdu->GetSize();
    m_tx.Push(pdu);
    (*m_txTrace)(bhs, size);
    Flush();
}

void
IscsiConnection::Flush()
{
    if (!m_closed)
    {
        m_tx.Flush(); // OnSendSpace resumes when TCP frees buffer space
    }
}

void
IscsiConnection::OnSendSpace(Ptr<Socket>, uint32_t)
{
    Flush();
}

void
IscsiConnection::OnRecv(Ptr<Socket> s)
{
    m_rx.Receive(s);
    Parse();
}

void
IscsiConnection::Parse()
{
    while (!m_closed && m_rx.Size() >= ISCSI_BHS_SIZE)
    {
        const uint8_t* b = m_rx.Data();
        const uint32_t ahs = uint32_t(b[4]) * 4;
        const uint32_t dsl = uint32_t(b[5]) << 16 | uint32_t(b[6]) << 8 | b[7];
        const uint32_t total = IscsiPduSize(ahs, dsl, m_headerDigest, m_dataDigest);
        if (m_rx.Size() < total)
        {
            break; // the rest of this PDU is still in flight
        }
        uint32_t at = ISCSI_BHS_SIZE + ahs;
        bool ok = true;
        if (m_headerDigest)
        {
            ok = lfsim::GetCrc32c(b + at) == lfsim::Crc32c(b, at);
            at += ISCSI_DIGEST_SIZE;
        }
        const uint8_t* data = b + at;
        if (ok && m_dataDigest && dsl > 0)
        {
            // Zero-aware: the model's data segments are zeros, their digests memoized.
            ok = lfsim::GetCrc32c(data + Padded(dsl)) == lfsim::Crc32cData(data, Padded(dsl));
        }
        if (!ok)
        {
            // At error recovery level 0 a digest error means session recovery, which this model
            // does not do: the connection closes.
            ++m_digestErrors;
            Close();
            return;
        }
        IscsiBhs bhs;
        bhs.SetBytes(b);
        m_rx.Consume(total);
        (*m_rxTrace)(bhs, total);
        // The handler may send and may enable digests for the PDUs that follow; it does not
        // touch m_rx, so `data` stays valid.
        m_handler(bhs, data, dsl);
    }
}

} // namespace ns3
