#ifndef LFSIM_PACKET_H
#define LFSIM_PACKET_H

#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <unordered_map>

namespace lfsim
{

/**
 * A packet of \p bytes zero bytes (a frame's payload before its headers are added): a copy of
 * one made once per size.
 *
 * Why: ns-3 builds a new packet's buffer, metadata and byte-tag list afresh (about 500
 * instructions with Debian's build), while a copy shares them until written (ns-3's
 * copy-on-write); a RoCE frame cost 1,502 instructions to make before. The contents are the
 * same; only the packet uid (unused by lfsim) is the template's. The templates are never freed:
 * a few sizes, and they must outlive ns-3's static buffer pools at exit.
 */
inline ns3::Ptr<ns3::Packet>
ZeroPayload(uint32_t bytes)
{
    static auto* zeros = new std::unordered_map<uint32_t, ns3::Ptr<ns3::Packet>>();
    auto it = zeros->find(bytes);
    if (it == zeros->end())
    {
        it = zeros->emplace(bytes, ns3::Create<ns3::Packet>(bytes)).first;
    }
    return it->second->Copy();
}

} // namespace lfsim

#endif
