/*
 * One port's packet capture file (pcap, nanosecond timestamps), written from the port's frame
 * traces. The fabric gives the function that turns a frame into the bytes of its record (the
 * link layer's own framing, CRCs the model leaves out); it runs only for captured frames.
 */
#ifndef LFSIM_CAPTURE_H
#define LFSIM_CAPTURE_H

#include "ns3/packet.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lfsim
{

class PortCapture : public ns3::SimpleRefCount<PortCapture>
{
  public:
    /// Replaces `record` with the bytes to write for frame `p`.
    using Encoder = void (*)(ns3::Ptr<const ns3::Packet> p, std::vector<uint8_t>& record);

    /// Creates `path` with a pcap header of link type `linkType` (a LINKTYPE_ value).
    PortCapture(const std::string& path, uint32_t linkType, Encoder encode);
    /// Writes frame `p` stamped with the current simulation time.
    void Capture(ns3::Ptr<const ns3::Packet> p);
    void Close();

  private:
    ns3::Ptr<ns3::PcapFileWrapper> m_file;
    Encoder m_encode;
    std::vector<uint8_t> m_record; ///< reused: no allocation per frame once grown
};

class RunContext;

/// The run's captures: checks `labels` (all the fabric's ports, RunContext::CheckPcapPorts) and
/// opens a file for each port the run asked for. Returns one entry per label, null where the
/// port is not captured; empty when the run captures nothing.
std::vector<ns3::Ptr<PortCapture>> OpenCaptures(RunContext& ctx,
                                                const std::vector<std::string>& labels,
                                                uint32_t linkType, PortCapture::Encoder encode);

} // namespace lfsim

#endif
