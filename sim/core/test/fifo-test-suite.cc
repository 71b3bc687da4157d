/*
 * lfsim::Fifo against std::deque: random pushes, pops at both ends, peeks, iteration, moves,
 * swaps and clears, with no inline slots, one and two. The same items must come out in the
 * same order, and every item made must be destroyed exactly once (a counting item that owns a
 * shared_ptr: a slot moved without its destructor, or destroyed twice, shows in the count).
 */
#include "../lfsim-fifo.h"
#include "ns3/test.h"

#include <deque>
#include <memory>
#include <random>
#include <string>

using namespace ns3;

namespace
{

long g_live = 0; ///< counted items alive

struct Counted
{
    explicit Counted(int v)
        : value(v)
        , owned(std::make_shared<int>(v))
    {
        ++g_live;
    }

    Counted(const Counted& o)
        : value(o.value)
        , owned(o.owned)
    {
        ++g_live;
    }

    Counted(Counted&& o) noexcept
        : value(o.value)
        , owned(std::move(o.owned))
    {
        ++g_live;
    }

    Counted& operator=(const Counted&) = delete;

    ~Counted() { --g_live; }

    int value;
    std::shared_ptr<int> owned;
};

template <std::size_t N>
class FifoAgainstDequeTest : public TestCase
{
  public:
    FifoAgainstDequeTest()
        : TestCase("Fifo with " + std::to_string(N) + " inline slots gives what std::deque gives")
    {
    }

  private:
    /// The first difference in 200,000 operations, or "" (stops there: the two would differ
    /// from then on).
    static std::string
    Script(unsigned seed)
    {
        std::mt19937 rng(seed);
        lfsim::Fifo<Counted, N> fifo;
        std::deque<int> ref;
        for (int op = 0; op < 200000; ++op)
        {
            const std::string at = " at op " + std::to_string(op);
            const unsigned k = rng() % 100;
            // Bursts: long runs of pushes or of pops, so that queues grow past their inline
            // slots and rings, empty and start again.
            const bool pushing = (op / 500) % 2 == 0;
            if (k < (pushing ? 60u : 35u))
            {
                const int v = int(rng() % 1000000);
                if (rng() % 2)
                {
                    fifo.push_back(Counted(v));
                }
                else
                {
                    const Counted c(v);
                    fifo.push_back(c);
                }
                ref.push_back(v);
            }
            else if (k < 90)
            {
                if (!ref.empty())
                {
                    if (fifo.front().value != ref.front() || *fifo.front().owned != ref.front())
                    {
                        return "front" + at;
                    }
                    fifo.pop_front();
                    ref.pop_front();
                }
            }
            else if (k < 95)
            {
                if (!ref.empty())
                {
                    if (fifo.back().value != ref.back())
                    {
                        return "back" + at;
                    }
                    fifo.pop_back();
                    ref.pop_back();
                }
            }
            else if (k < 97)
            {
                std::size_t i = 0;
                for (const Counted& c : fifo)
                {
                    if (i >= ref.size() || c.value != ref[i])
                    {
                        return "iteration" + at;
                    }
                    ++i;
                }
                if (i != ref.size())
                {
                    return "iteration's length" + at;
                }
            }
            else if (k < 99)
            {
                lfsim::Fifo<Counted, N> other; // through another queue and back
                other.swap(fifo);
                if (!fifo.empty() || other.size() != ref.size())
                {
                    return "swap" + at;
                }
                fifo = std::move(other);
            }
            else if (rng() % 8 == 0)
            {
                fifo.clear();
                ref.clear();
            }
            if (fifo.size() != ref.size() || fifo.empty() != ref.empty())
            {
                return "size" + at;
            }
        }
        return "";
    }

    void
    DoRun() override
    {
        for (unsigned seed = 1; seed <= 3; ++seed)
        {
            g_live = 0;
            const std::string diff = Script(seed);
            NS_TEST_ASSERT_MSG_EQ(diff, "", "seed " << seed);
            NS_TEST_ASSERT_MSG_EQ(g_live, 0L, "items made and destroyed, seed " << seed);
        }
        // The sizes the ports and cables count on: a 16-byte queue, and an item inline.
        NS_TEST_ASSERT_MSG_EQ(sizeof(lfsim::Fifo<void*>), std::size_t(16), "no inline slots");
        NS_TEST_ASSERT_MSG_EQ(sizeof(lfsim::Fifo<void*, 1>), std::size_t(24), "one inline slot");
    }
};

class FifoTestSuite : public TestSuite
{
  public:
    FifoTestSuite()
        : TestSuite("lfsim-fifo", UNIT)
    {
        AddTestCase(new FifoAgainstDequeTest<0>, TestCase::QUICK);
        AddTestCase(new FifoAgainstDequeTest<1>, TestCase::QUICK);
        AddTestCase(new FifoAgainstDequeTest<2>, TestCase::QUICK);
    }
};

static FifoTestSuite g_fifoTestSuite;

} // namespace
