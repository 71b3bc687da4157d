#include "lfsim-capture.h"

#include "ns3/boolean.h"
#include "ns3/simulator.h"

namespace lfsim
{

PortCapture::PortCapture(const std::string& path, uint32_t linkType, Encoder encode)
    : m_file(ns3::CreateObject<ns3::PcapFileWrapper>())
    , m_encode(encode)
{
    m_file->SetAttribute("NanosecMode", ns3::BooleanValue(true));
    m_file->Open(path, std::ios::out | std::ios::binary);
    m_file->Init(linkType);
}

void
PortCapture::Capture(ns3::Ptr<const ns3::Packet> p)
{
    m_encode(p, m_record);
    m_file->Write(ns3::Simulator::Now(), m_record.data(), static_cast<uint32_t>(m_record.size()));
}

void
PortCapture::Close()
{
    m_file->Close();
}

} // namespace lfsim
