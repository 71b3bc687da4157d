/*
 * A frame on a RoCE fabric's ports and cables, lighter than an ns-3 Packet.
 *
 * A RoCEv2 frame the model makes (data, ACK/NAK, CNP) never leaves lfsim, and its payload is
 * zeros: it is kept as its first bytes (the headers RoceHeader::Write makes, then the zeros up
 * to ROCE_HEADER_MAX, exactly what Packet::CopyData gave at each hop) and its size. Switch edits
 * (ECN CE, INT records) write those bytes in place. Frames come from a free list and return to
 * it: nothing is allocated per frame once the list has grown to the frames in flight. An ns-3
 * Packet cost ~30 % of a DCQCN incast's event loop (made, copied out at every hop, freed).
 *
 * What is really an ns-3 packet (PFC frames, the host's IP traffic, test frames) rides in the
 * same handle (FromPacket); a capture gets a Packet made from the bytes (ToPacket), the same
 * bytes a Packet frame had.
 *
 * Copies share the frame (a count, as Ptr<Packet> did): an edit is seen by every holder.
 */
#ifndef ROCE_FRAME_H
#define ROCE_FRAME_H

#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "roce-header.h"

#include <cstdint>

namespace ns3
{

class RoceFrame
{
  public:
    RoceFrame() = default;

    RoceFrame(const RoceFrame& o)
        : m_d(o.m_d)
    {
        if (m_d)
        {
            ++m_d->refs;
        }
    }

    RoceFrame(RoceFrame&& o) noexcept
        : m_d(o.m_d)
    {
        o.m_d = nullptr;
    }

    RoceFrame&
    operator=(const RoceFrame& o)
    {
        RoceFrame(o).Swap(*this);
        return *this;
    }

    RoceFrame&
    operator=(RoceFrame&& o) noexcept
    {
        RoceFrame(std::move(o)).Swap(*this);
        return *this;
    }

    ~RoceFrame()
    {
        if (m_d && --m_d->refs == 0)
        {
            Free(m_d);
        }
    }

    void
    Swap(RoceFrame& o) noexcept
    {
        Data* d = m_d;
        m_d = o.m_d;
        o.m_d = d;
    }

    explicit operator bool() const { return m_d != nullptr; }

    /// A RoCEv2 frame: the header's bytes in front of `h.trailing` zero bytes (payload, pad
    /// and ICRC), as MakeRocePacket's packet.
    static RoceFrame Make(const RoceHeader& h);
    /// A frame that is an ns-3 packet (PFC, IP, tests); its first bytes are read at Receive.
    static RoceFrame FromPacket(Ptr<Packet> p);

    /// Bytes without FCS (Packet::GetSize of the frame).
    uint32_t
    GetSize() const
    {
        return m_d->size;
    }

    /// The frame's first bytes (up to ROCE_HEADER_MAX). For a packet frame, as of the last
    /// ReadHead.
    const FrameBytes&
    Head() const
    {
        return m_d->head;
    }

    /// Packet frames: copies their first bytes out of the packet into Head (at each hop's
    /// receive, as the port did for every frame). A light frame has them already.
    void
    ReadHead() const
    {
        if (m_d->packet)
        {
            m_d->head.n = m_d->packet->CopyData(m_d->head.b, ROCE_HEADER_MAX);
        }
    }

    /// The ns-3 packet of a packet frame, null for a light one.
    const Ptr<Packet>&
    GetPacket() const
    {
        return m_d->packet;
    }

    /// The frame as an ns-3 packet (captures and tests): a packet frame's own packet, or one
    /// made from a light frame's bytes (the same bytes MakeRocePacket's had, edits included).
    Ptr<Packet> ToPacket() const;

    /// A switch's one rewrite of the frame (see EditFrame in roce-header.h).
    void Edit(const FrameEdit& e, bool ce, const IntHop* hop) const;

    /// Frames made and not yet freed (tests: a pool that leaks shows here).
    static uint64_t Live();
    /// Frame slots the pool has taken from the system so far (tests: it grows only to the
    /// most frames alive at once, in blocks).
    static uint64_t Slots();

  private:
    struct Data
    {
        FrameBytes head;
        uint32_t size = 0;
        uint32_t refs = 0;
        Ptr<Packet> packet;   ///< a packet frame's packet; null for a light frame
        Data* next = nullptr; ///< in the free list
    };

    explicit RoceFrame(Data* d)
        : m_d(d)
    {
    }

    static Data* Alloc();
    static void Free(Data* d);

    Data* m_d = nullptr;
};

} // namespace ns3

#endif
