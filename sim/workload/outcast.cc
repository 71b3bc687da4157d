/*
 * Outcast: the one host of Hosts sends to every host of Destinations (one to many, e.g. a
 * replicated write).
 */
#include "lfsim-workload.h"

#include <stdexcept>

namespace ns3
{

class OutcastWorkload : public MessageWorkload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::OutcastWorkload")
                                .SetParent<MessageWorkload>()
                                .SetGroupName("Lfsim")
                                .AddConstructor<OutcastWorkload>();
        return tid;
    }

    void
    Generate(const lfsim::WorkloadEnv& env, uint32_t index,
             std::vector<lfsim::FlowSpec>& out) override
    {
        const std::vector<uint32_t> src = Sources(*env.graph);
        if (src.size() != 1)
        {
            throw std::invalid_argument(key + ".Hosts: selects " + std::to_string(src.size())
                                        + " hosts; accepted: the one sending host, e.g. h0");
        }
        const size_t first = out.size();
        for (uint32_t dst : Sinks(*env.graph))
        {
            if (dst != src[0])
            {
                out.push_back(Flow(env, index, src[0], dst));
            }
        }
        if (out.size() == first)
        {
            throw std::invalid_argument(key
                                        + ".Destinations: no host other than the sender; "
                                          "accepted: at least one other host");
        }
    }
};

NS_OBJECT_ENSURE_REGISTERED(OutcastWorkload);

} // namespace ns3

static const bool g_registered
    = lfsim::RegisterWorkload({"Outcast",
                               "ns3::OutcastWorkload",
                               "the one host of Hosts sends to every host of Destinations",
                               {}});
