/*
 * A first-in first-out queue that costs nothing while empty and grows by doubling: a
 * boost::circular_buffer whose capacity is raised when it is full. Per-packet queues (a port's
 * traffic classes, a link's frames in flight, a queue pair's work requests) use it instead of
 * std::deque, whose every instance allocates a 512-byte block and a map up front: thousands of
 * mostly empty queues then spread a large fabric's hot state over many cache lines.
 */
#ifndef LFSIM_FIFO_H
#define LFSIM_FIFO_H

#include <algorithm>
#include <boost/circular_buffer.hpp>
#include <cstddef>
#include <utility>

namespace lfsim
{

template <typename T>
class Fifo
{
  public:
    using iterator = typename boost::circular_buffer<T>::iterator;
    using const_iterator = typename boost::circular_buffer<T>::const_iterator;

    bool
    empty() const
    {
        return m_b.empty();
    }

    std::size_t
    size() const
    {
        return m_b.size();
    }

    T&
    front()
    {
        return m_b.front();
    }

    const T&
    front() const
    {
        return m_b.front();
    }

    T&
    back()
    {
        return m_b.back();
    }

    const T&
    back() const
    {
        return m_b.back();
    }

    /// Taken by reference, copied or moved once into place: no temporary whose destructor
    /// runs per element (a frame's Ptr is not inlined away).
    void
    push_back(const T& v)
    {
        Reserve();
        m_b.push_back(v);
    }

    void
    push_back(T&& v)
    {
        Reserve();
        m_b.push_back(std::move(v));
    }

    void
    pop_front()
    {
        m_b.pop_front();
    }

    void
    pop_back()
    {
        m_b.pop_back();
    }

    /// Empties the queue and gives its memory back.
    void
    clear()
    {
        boost::circular_buffer<T>().swap(m_b);
    }

    void
    swap(Fifo& other)
    {
        m_b.swap(other.m_b);
    }

    iterator
    begin()
    {
        return m_b.begin();
    }

    iterator
    end()
    {
        return m_b.end();
    }

    const_iterator
    begin() const
    {
        return m_b.begin();
    }

    const_iterator
    end() const
    {
        return m_b.end();
    }

  private:
    void
    Reserve()
    {
        if (m_b.full())
        {
            m_b.set_capacity(std::max<std::size_t>(4, 2 * m_b.capacity()));
        }
    }

    boost::circular_buffer<T> m_b;
};

} // namespace lfsim

#endif
