/*
 * `make bench`: the latency of a dependent load as the memory it ranges over grows, on the
 * machine the benchmarks run on. A large fabric's events each meet their port, cable, switch
 * and packet cold in the cache; how much that costs depends on how much of this machine's cache
 * a process really gets (a VM shares its host's last-level cache), which lscpu does not say.
 *
 * Each size: a random cyclic chain of 64-byte lines (Sattolo's shuffle, fixed seed), walked so
 * that every load needs the one before it; transparent huge pages asked for, as lfsim's runs
 * do, so the walk measures the caches and not the TLB. Output: one line per size, "MiB ns x"
 * (x: a bit of the last address, printed so that the walk cannot be optimised away).
 */
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <sys/mman.h>
#include <vector>

int
main(int argc, char** argv)
{
    const std::size_t maxMiB = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
    constexpr std::size_t LINE = 64;
    constexpr std::size_t HUGE_PAGE = std::size_t(2) << 20;
    for (std::size_t mib = 1; mib <= maxMiB; mib *= 2)
    {
        const std::size_t bytes = mib << 20;
        const std::size_t n = bytes / LINE;
        // aligned_alloc wants a size that is a multiple of the alignment (1 MiB is not).
        const std::size_t reserved = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        auto* buf = static_cast<char*>(std::aligned_alloc(HUGE_PAGE, reserved));
        if (!buf)
        {
            std::fprintf(stderr, "memory-latency: cannot allocate %zu MiB\n", mib);
            return 1;
        }
        madvise(buf, bytes, MADV_HUGEPAGE);
        // Sattolo's shuffle: one cycle through every line, in an order no prefetcher follows.
        std::vector<std::size_t> next(n);
        std::iota(next.begin(), next.end(), std::size_t(0));
        std::mt19937_64 rng(1);
        for (std::size_t i = n - 1; i > 0; --i)
        {
            std::swap(next[i], next[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
        }
        for (std::size_t i = 0; i < n; ++i)
        {
            *reinterpret_cast<char**>(buf + i * LINE) = buf + next[i] * LINE;
        }
        const std::size_t loads = 20'000'000;
        char* p = buf;
        for (std::size_t i = 0; i < n; ++i) // one lap to warm what fits
        {
            p = *reinterpret_cast<char**>(p);
        }
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < loads; ++i)
        {
            p = *reinterpret_cast<char**>(p);
        }
        const auto t1 = std::chrono::steady_clock::now();
        const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / loads;
        std::printf("%zu %.1f %d\n", mib, ns, int(reinterpret_cast<std::uintptr_t>(p) & 1));
        std::free(buf);
    }
    return 0;
}
