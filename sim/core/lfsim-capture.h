/*
 * One port's packet capture file (pcap, nanosecond timestamps), written from the port's frame
 * traces. The fabric gives the function that turns a frame into the bytes of its record (the
 * link layer's own framing, CRCs and checksums the model leaves out); it runs only for captured
 * frames, so none of it costs anything in a run without captures.
 */
#ifndef LFSIM_CAPTURE_H
#define LFSIM_CAPTURE_H

#include "ns3/packet.h"
#include "ns3/pcap-file-wrapper.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lfsim
{

class PortCapture : public ns3::SimpleRefCount<PortCapture>
{
  public:
    /// Replaces `record` with the bytes to write for frame `p` into `file`. It may first write
    /// records of its own into `file` (Write), which the capture then shows before the frame.
    using Encoder = std::function<void(PortCapture& file, ns3::Ptr<const ns3::Packet> p,
                                       std::vector<uint8_t>& record)>;

    /// Creates `path` with a pcap header of link type `linkType` (a LINKTYPE_ value).
    PortCapture(const std::string& path, uint32_t linkType, Encoder encode);
    /// Writes frame `p` stamped with the current simulation time.
    void Capture(ns3::Ptr<const ns3::Packet> p);
    /// Writes `len` bytes as a record stamped with the current simulation time: a frame that
    /// exists only in the capture (each fabric's documentation says which, and why).
    void Write(const uint8_t* data, uint32_t len);
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

/// The Internet checksum (RFC 1071) of `n` bytes, continuing the one's complement sum `sum`.
uint16_t InternetChecksum(const uint8_t* data, size_t n, uint32_t sum = 0);

/// Captures only: in the IPv4 packet at `ip` (at most `len` bytes), recomputes the header
/// checksum and, for TCP, the TCP checksum over the pseudo-header and the segment. ns-3's
/// internet stack leaves both zero unless checksums are enabled for every packet of the run;
/// a capture shows them as the hosts would send them. Anything else is left alone.
void FillTcpIpChecksums(uint8_t* ip, uint32_t len);

} // namespace lfsim

#endif
