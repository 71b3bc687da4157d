/*
 * Incast: every host of Hosts sends to the one host of Destinations (many to one).
 */
#include "lfsim-workload.h"

#include <stdexcept>

namespace ns3
{

class IncastWorkload : public MessageWorkload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::IncastWorkload")
                                .SetParent<MessageWorkload>()
                                .SetGroupName("Lfsim")
                                .AddConstructor<IncastWorkload>();
        return tid;
    }

    void
    Generate(const lfsim::WorkloadEnv& env, uint32_t index,
             std::vector<lfsim::FlowSpec>& out) override
    {
        const std::vector<uint32_t> dst = Sinks(*env.graph);
        if (dst.size() != 1)
        {
            throw std::invalid_argument(key + ".Destinations: selects " + std::to_string(dst.size())
                                        + " hosts; accepted: the one receiving host, e.g. h0");
        }
        const size_t first = out.size();
        for (uint32_t src : Sources(*env.graph))
        {
            if (src != dst[0])
            {
                out.push_back(Flow(env, index, src, dst[0]));
            }
        }
        if (out.size() == first)
        {
            throw std::invalid_argument(key
                                        + ".Hosts: no host other than the receiver; "
                                          "accepted: at least one other host");
        }
    }
};

NS_OBJECT_ENSURE_REGISTERED(IncastWorkload);

} // namespace ns3

static const bool g_registered
    = lfsim::RegisterWorkload({"Incast",
                               "ns3::IncastWorkload",
                               "every host of Hosts sends to the one host of Destinations",
                               {}});
