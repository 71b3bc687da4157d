#include "lfsim-capture.h"

#include "lfsim-run.h"
#include "ns3/boolean.h"
#include "ns3/simulator.h"

namespace lfsim
{

PortCapture::PortCapture(const std::string& path, uint32_t linkType, Encoder encode)
    : m_file(ns3::CreateObject<ns3::PcapFileWrapper>())
    , m_encode(std::move(encode))
{
    m_file->SetAttribute("NanosecMode", ns3::BooleanValue(true));
    m_file->Open(path, std::ios::out | std::ios::binary);
    m_file->Init(linkType);
}

void
PortCapture::Capture(ns3::Ptr<const ns3::Packet> p)
{
    m_encode(*this, p, m_record);
    Write(m_record.data(), static_cast<uint32_t>(m_record.size()));
}

void
PortCapture::Write(const uint8_t* data, uint32_t len)
{
    m_file->Write(ns3::Simulator::Now(), data, len);
}

void
PortCapture::Close()
{
    m_file->Close();
}

std::vector<ns3::Ptr<PortCapture>>
OpenCaptures(RunContext& ctx, const std::vector<std::string>& labels, uint32_t linkType,
             PortCapture::Encoder encode)
{
    std::vector<ns3::Ptr<PortCapture>> out;
    if (ctx.config.pcapDir.empty())
    {
        return out;
    }
    ctx.CheckPcapPorts(labels);
    out.resize(labels.size());
    for (size_t i = 0; i < labels.size(); ++i)
    {
        if (ctx.PcapWanted(labels[i]))
        {
            out[i] = ns3::Create<PortCapture>(ctx.PcapPath(labels[i]), linkType, encode);
        }
    }
    return out;
}

uint16_t
InternetChecksum(const uint8_t* data, size_t n, uint32_t sum)
{
    for (size_t i = 0; i + 1 < n; i += 2)
    {
        sum += uint32_t(data[i]) << 8 | data[i + 1];
    }
    if (n & 1)
    {
        sum += uint32_t(data[n - 1]) << 8; // an odd byte is padded with a zero byte
    }
    while (sum >> 16)
    {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return static_cast<uint16_t>(~sum);
}

void
FillTcpIpChecksums(uint8_t* ip, uint32_t len)
{
    constexpr uint8_t TCP = 6;
    if (len < 20 || (ip[0] >> 4) != 4)
    {
        return;
    }
    const uint32_t ihl = (ip[0] & 0x0F) * 4u;
    const uint32_t total = uint32_t(ip[2]) << 8 | ip[3];
    if (ihl < 20 || total < ihl || total > len)
    {
        return;
    }
    ip[10] = ip[11] = 0;
    const uint16_t h = InternetChecksum(ip, ihl);
    ip[10] = h >> 8;
    ip[11] = h & 0xFF;
    if (ip[9] != TCP || total < ihl + 20)
    {
        return;
    }
    // RFC 793 3.1: the pseudo-header (source, destination, zero, protocol, TCP length) and
    // the segment, with the checksum field taken as zero.
    uint8_t* tcp = ip + ihl;
    const uint32_t segment = total - ihl;
    tcp[16] = tcp[17] = 0;
    uint32_t pseudo = TCP + segment;
    for (int i = 12; i < 20; i += 2)
    {
        pseudo += uint32_t(ip[i]) << 8 | ip[i + 1];
    }
    const uint16_t c = InternetChecksum(tcp, segment, pseudo);
    tcp[16] = c >> 8;
    tcp[17] = c & 0xFF;
}

} // namespace lfsim
