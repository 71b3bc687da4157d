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
        const uint32_t src = OneSource(*env.graph, "sending");
        const size_t first = out.size();
        for (uint32_t dst : Sinks(*env.graph))
        {
            if (dst != src)
            {
                out.push_back(Flow(env, index, src, dst));
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
