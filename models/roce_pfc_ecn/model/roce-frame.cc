#include "roce-frame.h"

#include <cstring>

namespace ns3
{

namespace
{

/// The free list: frames come in blocks that are never returned to the system (their number
/// is the most frames alive at once; and a frame still held by an object torn down after
/// static destruction must stay valid).
struct Pool
{
    void* free = nullptr;
    uint64_t live = 0;
    uint64_t slots = 0;
};

Pool&
ThePool()
{
    static Pool* pool = new Pool();
    return *pool;
}

} // namespace

RoceFrame::Data*
RoceFrame::Alloc()
{
    Pool& pool = ThePool();
    if (!pool.free)
    {
        constexpr int BLOCK = 256;
        Data* block = new Data[BLOCK];
        for (int i = 0; i < BLOCK; ++i)
        {
            block[i].next = i + 1 < BLOCK ? &block[i + 1] : nullptr;
        }
        pool.free = block;
        pool.slots += BLOCK;
    }
    Data* d = static_cast<Data*>(pool.free);
    pool.free = d->next;
    ++pool.live;
    d->refs = 1;
    return d;
}

void
RoceFrame::Free(Data* d)
{
    Pool& pool = ThePool();
    d->packet = nullptr; // a packet frame's packet goes now, not when the slot is reused
    d->next = static_cast<Data*>(pool.free);
    pool.free = d;
    --pool.live;
}

uint64_t
RoceFrame::Live()
{
    return ThePool().live;
}

uint64_t
RoceFrame::Slots()
{
    return ThePool().slots;
}

RoceFrame
RoceFrame::Make(const RoceHeader& h)
{
    Data* d = Alloc();
    const uint32_t n = h.Write(d->head.b);
    d->size = n + h.trailing;
    // The bytes a CopyData of ROCE_HEADER_MAX gave: the header, then the payload's zeros.
    d->head.n = std::min(d->size, ROCE_HEADER_MAX);
    std::memset(d->head.b + n, 0, d->head.n - n);
    return RoceFrame(d);
}

RoceFrame
RoceFrame::FromPacket(Ptr<Packet> p)
{
    Data* d = Alloc();
    d->size = p->GetSize();
    d->head.n = 0;
    d->packet = std::move(p);
    return RoceFrame(d);
}

Ptr<Packet>
RoceFrame::ToPacket() const
{
    if (m_d->packet)
    {
        return m_d->packet;
    }
    return MakePacketFromBytes(m_d->head.b, m_d->head.n, m_d->size - m_d->head.n);
}

void
RoceFrame::Edit(const FrameEdit& e, bool ce, const IntHop* hop) const
{
    if (m_d->packet)
    {
        EditFrame(m_d->packet, e, ce, hop);
    }
    else
    {
        EditFrameBytes(m_d->head.b, e, ce, hop);
    }
}

} // namespace ns3
