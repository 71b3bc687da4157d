#include "lfsim-capture.h"

#include "lfsim-run.h"
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

} // namespace lfsim
