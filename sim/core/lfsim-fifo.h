/*
 * A first-in first-out queue for per-packet queues (a port's traffic classes, a link's frames
 * in flight, a queue pair's work requests): a ring of items, 16 bytes of its own, and
 * optionally the first `Inline` items inside the queue object itself.
 *
 * Why not std::deque: every instance allocates a 512-byte block and a map up front, so
 * thousands of mostly empty queues spread a large fabric's hot state over many cache lines.
 * Why not boost::circular_buffer (used before): its 40-byte header, and no room for items in
 * the owner. On a large fabric a frame meets each queue cold in the cache; a queue that holds
 * one frame at a time (most of them) then reads and writes its owner's line only: the port's
 * traffic class, the cable's direction. With the items on a ring of their own that was one
 * more cold line per frame and queue (0.7 L2 misses a hop for the cable and 0.6 for the
 * port's class at 4,096 hosts).
 *
 * The items stay inline while there are at most `Inline` of them (a power of two); the queue
 * moves them to a ring on the heap (a power of two, from 4, doubled when full) when one more
 * comes, and back once it is empty again if that ring is the smallest (a queue that grew
 * further keeps its ring for the next burst).
 */
#ifndef LFSIM_FIFO_H
#define LFSIM_FIFO_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace lfsim
{

namespace detail
{
/// A Fifo's inline slots: raw memory for N items (none, and no bytes, for N = 0).
template <typename T, std::size_t N>
struct FifoSlots
{
    unsigned char*
    Bytes()
    {
        return m_bytes;
    }

    const unsigned char*
    Bytes() const
    {
        return m_bytes;
    }

    alignas(T) unsigned char m_bytes[N * sizeof(T)];
};

template <typename T>
struct FifoSlots<T, 0> // empty: no bytes in the queue (never called, the queue is on its ring)
{
    unsigned char*
    Bytes()
    {
        return nullptr;
    }

    const unsigned char*
    Bytes() const
    {
        return nullptr;
    }
};
} // namespace detail

template <typename T, std::size_t Inline = 0>
class Fifo : private detail::FifoSlots<T, Inline>
{
    static_assert((Inline & (Inline - 1)) == 0, "the inline slots are a ring too");

  public:
    Fifo()
        : m_head(0)
        , m_sizeLog2(InlineLog2() << SIZE_BITS)
    {
        m_data = Inline ? InlineSlots() : nullptr;
    }

    Fifo(const Fifo&) = delete;
    Fifo& operator=(const Fifo&) = delete;

    Fifo(Fifo&& other) noexcept
        : Fifo()
    {
        Steal(other);
    }

    Fifo&
    operator=(Fifo&& other) noexcept
    {
        if (this != &other)
        {
            clear();
            Steal(other);
        }
        return *this;
    }

    ~Fifo() { clear(); }

    bool
    empty() const
    {
        return Size() == 0;
    }

    std::size_t
    size() const
    {
        return Size();
    }

    T&
    front()
    {
        return m_data[m_head];
    }

    const T&
    front() const
    {
        return m_data[m_head];
    }

    T&
    back()
    {
        return At(Size() - 1);
    }

    const T&
    back() const
    {
        return At(Size() - 1);
    }

    /// Taken by reference, copied or moved once into place: no temporary whose destructor
    /// runs per element (a frame's Ptr is not inlined away).
    void
    push_back(const T& v)
    {
        new (Slot()) T(v);
        ++m_sizeLog2;
    }

    void
    push_back(T&& v)
    {
        new (Slot()) T(std::move(v));
        ++m_sizeLog2;
    }

    void
    pop_front()
    {
        m_data[m_head].~T();
        if ((--m_sizeLog2 & SIZE_MASK) == 0)
        {
            Emptied();
        }
        else
        {
            m_head = (m_head + 1) & Mask();
        }
    }

    void
    pop_back()
    {
        At(Size() - 1).~T();
        if ((--m_sizeLog2 & SIZE_MASK) == 0)
        {
            Emptied();
        }
    }

    /// Empties the queue and gives its memory back.
    void
    clear()
    {
        while (Size())
        {
            pop_back();
        }
        Release();
    }

    void
    swap(Fifo& other) noexcept
    {
        Fifo t(std::move(other));
        other = std::move(*this);
        *this = std::move(t);
    }

    template <typename Q, typename V>
    class Iter
    {
      public:
        Iter(Q* q, std::size_t i)
            : m_q(q)
            , m_i(i)
        {
        }

        V&
        operator*() const
        {
            return m_q->At(m_i);
        }

        V*
        operator->() const
        {
            return &m_q->At(m_i);
        }

        Iter&
        operator++()
        {
            ++m_i;
            return *this;
        }

        bool
        operator!=(const Iter& o) const
        {
            return m_i != o.m_i;
        }

        bool
        operator==(const Iter& o) const
        {
            return m_i == o.m_i;
        }

      private:
        Q* m_q;
        std::size_t m_i;
    };

    using iterator = Iter<Fifo, T>;
    using const_iterator = Iter<const Fifo, const T>;

    iterator
    begin()
    {
        return {this, 0};
    }

    iterator
    end()
    {
        return {this, Size()};
    }

    const_iterator
    begin() const
    {
        return {this, 0};
    }

    const_iterator
    end() const
    {
        return {this, Size()};
    }

  private:
    static constexpr uint32_t
    InlineLog2()
    {
        uint32_t k = 0;
        while ((std::size_t(1) << k) < Inline)
        {
            ++k;
        }
        return k;
    }

    T*
    InlineSlots()
    {
        return std::launder(reinterpret_cast<T*>(this->Bytes()));
    }

    bool
    OnRing() const
    {
        return m_data && m_data != reinterpret_cast<const T*>(this->Bytes());
    }

    /// Slots where the items are (0 before a queue without inline slots has any).
    std::size_t
    Capacity() const
    {
        return m_data ? std::size_t(1) << CapLog2() : 0;
    }

    std::size_t
    Mask() const
    {
        return (std::size_t(1) << CapLog2()) - 1;
    }

    uint32_t
    Size() const
    {
        return m_sizeLog2 & SIZE_MASK;
    }

    uint32_t
    CapLog2() const
    {
        return m_sizeLog2 >> SIZE_BITS;
    }

    void
    SetCapLog2(uint32_t log2)
    {
        m_sizeLog2 = Size() | log2 << SIZE_BITS;
    }

    T&
    At(std::size_t i)
    {
        return m_data[(m_head + i) & Mask()];
    }

    const T&
    At(std::size_t i) const
    {
        return m_data[(m_head + i) & Mask()];
    }

    /// Where the next item goes (its memory, unconstructed), moving the items to a larger
    /// ring first if they fill their slots.
    void*
    Slot()
    {
        const std::size_t cap = Inline ? std::size_t(1) << CapLog2() : Capacity();
        if (Size() == cap)
        {
            Grow();
        }
        return &At(Size());
    }

    /// Moves the items, in order, to the start of a new ring twice as large (4 slots at
    /// least). Out of line: the rare path, kept out of every push.
    __attribute__((noinline)) void
    Grow()
    {
        const uint32_t log2 = Capacity() < (1u << MIN_LOG2) ? MIN_LOG2 : CapLog2() + 1;
        if (log2 > MAX_LOG2)
        {
            throw std::length_error("lfsim::Fifo: too many items");
        }
        T* ring = std::allocator<T>().allocate(std::size_t(1) << log2);
        for (std::size_t i = 0; i < Size(); ++i)
        {
            T& item = At(i);
            new (ring + i) T(std::move(item));
            item.~T();
        }
        Release();
        m_data = ring;
        SetCapLog2(log2);
    }

    /// Gives the ring back (the queue holds no items there) and returns to the inline slots.
    /// Out of line: only when a queue empties off its smallest ring, grows or is cleared.
    __attribute__((noinline)) void
    Release()
    {
        if (OnRing())
        {
            std::allocator<T>().deallocate(m_data, Capacity());
        }
        m_data = Inline ? InlineSlots() : nullptr;
        SetCapLog2(InlineLog2());
        m_head = 0;
    }

    /// Empty: a queue with inline slots that needed only the smallest ring goes back to them
    /// (a frame at a time needs no ring); one that grew further keeps its ring for the next
    /// burst, not to grow it again item by item.
    void
    Emptied()
    {
        m_head = 0;
        if (Inline && CapLog2() == MIN_LOG2 && OnRing())
        {
            Release();
        }
    }

    /// Takes `other`'s items (`this` holds none, in its inline slots) and leaves it empty.
    void
    Steal(Fifo& other) noexcept
    {
        const uint32_t n = other.Size();
        if (other.OnRing())
        {
            m_data = other.m_data;
            m_head = other.m_head;
            m_sizeLog2 = other.m_sizeLog2;
            other.m_data = Inline ? other.InlineSlots() : nullptr;
        }
        else
        {
            // Inline items move one by one, to the first slots.
            for (std::size_t i = 0; i < n; ++i)
            {
                T& item = other.At(i);
                new (InlineSlots() + i) T(std::move(item));
                item.~T();
            }
            m_head = 0;
            m_sizeLog2 = n | InlineLog2() << SIZE_BITS;
        }
        other.m_head = 0;
        other.m_sizeLog2 = InlineLog2() << SIZE_BITS;
    }

    /// The smallest ring, 4 items, and the largest, 2^26 (its size fits in SIZE_BITS).
    static constexpr uint32_t MIN_LOG2 = 2;
    static constexpr uint32_t MAX_LOG2 = 26;

    T* m_data;       ///< the inline slots or the ring (nullptr: neither yet)
    uint32_t m_head; ///< the front item's slot
    /// Items held (the low 27 bits, so that one add or subtract counts an item) and the log2
    /// of the slots at m_data (the top 5).
    uint32_t m_sizeLog2;
    static constexpr uint32_t SIZE_BITS = 27;
    static constexpr uint32_t SIZE_MASK = (1u << SIZE_BITS) - 1;
};

} // namespace lfsim

#endif
