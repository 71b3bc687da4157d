/*
 * Permutation: host i of Hosts sends to one host of Destinations, each receiving from one
 * sender. Shift k: to destination (i + k) mod n (a ring's "k hops on"); Shift 0: a random
 * permutation from the scenario seed with no host sending to itself.
 */
#include "lfsim-workload.h"
#include "ns3/uinteger.h"

#include <numeric>
#include <stdexcept>

namespace ns3
{

class PermutationWorkload : public MessageWorkload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid
            = TypeId("ns3::PermutationWorkload")
                  .SetParent<MessageWorkload>()
                  .SetGroupName("Lfsim")
                  .AddConstructor<PermutationWorkload>()
                  .AddAttribute("Shift",
                                "k > 0: the i-th host of Hosts sends to the (i + k) mod n-th of "
                                "Destinations; 0: a random permutation (no host to itself).",
                                UintegerValue(0),
                                MakeUintegerAccessor(&PermutationWorkload::m_shift),
                                MakeUintegerChecker<uint32_t>());
        return tid;
    }

    void
    Generate(const lfsim::WorkloadEnv& env, uint32_t index,
             std::vector<lfsim::FlowSpec>& out) override
    {
        const std::vector<uint32_t> src = Sources(*env.graph);
        const std::vector<uint32_t> dst = Sinks(*env.graph);
        if (src.size() != dst.size())
        {
            throw std::invalid_argument(key + ".Destinations: selects " + std::to_string(dst.size())
                                        + " hosts; accepted: as many as Hosts ("
                                        + std::to_string(src.size()) + ")");
        }
        const uint32_t n = src.size();
        std::vector<uint32_t> to(n);
        if (m_shift > 0)
        {
            for (uint32_t i = 0; i < n; ++i)
            {
                to[i] = dst[(i + m_shift) % n];
            }
        }
        else
        {
            // Fisher-Yates from the workload's own stream, redrawn until no host is its own
            // destination (about e draws on average).
            Ptr<UniformRandomVariable> rv = CreateObject<UniformRandomVariable>();
            rv->SetStream(env.stream);
            for (uint32_t attempt = 0;; ++attempt)
            {
                to = dst;
                for (uint32_t i = n - 1; i > 0; --i)
                {
                    std::swap(to[i], to[rv->GetInteger(0, i)]);
                }
                bool fixed = false;
                for (uint32_t i = 0; i < n; ++i)
                {
                    fixed = fixed || to[i] == src[i];
                }
                if (!fixed)
                {
                    break;
                }
                if (attempt > 1000)
                {
                    throw std::invalid_argument(key
                                                + ".Hosts: no permutation without a host "
                                                  "sending to itself; accepted: at least "
                                                  "two hosts");
                }
            }
        }
        for (uint32_t i = 0; i < n; ++i)
        {
            if (src[i] == to[i])
            {
                throw std::invalid_argument(key + ".Shift: host " + std::to_string(src[i])
                                            + " would send to itself; accepted: a shift that "
                                              "moves every host");
            }
            out.push_back(Flow(env, index, src[i], to[i]));
        }
    }

  private:
    uint32_t m_shift = 0;
};

NS_OBJECT_ENSURE_REGISTERED(PermutationWorkload);

} // namespace ns3

static const bool g_registered = lfsim::RegisterWorkload(
    {"Permutation",
     "ns3::PermutationWorkload",
     "each host of Hosts sends to one host of Destinations, each receiving once (Shift or "
     "random)",
     {}});
