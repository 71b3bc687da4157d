/*
 * AllToAll: every host of Hosts sends to every host of Destinations but itself.
 */
#include "lfsim-workload.h"

#include <stdexcept>

namespace ns3
{

class AllToAllWorkload : public MessageWorkload
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::AllToAllWorkload")
                                .SetParent<MessageWorkload>()
                                .SetGroupName("Lfsim")
                                .AddConstructor<AllToAllWorkload>();
        return tid;
    }

    void
    Generate(const lfsim::WorkloadEnv& env, uint32_t index,
             std::vector<lfsim::FlowSpec>& out) override
    {
        const std::vector<uint32_t> dsts = Sinks(*env.graph);
        const size_t first = out.size();
        for (uint32_t src : Sources(*env.graph))
        {
            for (uint32_t dst : dsts)
            {
                if (dst != src)
                {
                    out.push_back(Flow(env, index, src, dst));
                }
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

NS_OBJECT_ENSURE_REGISTERED(AllToAllWorkload);

} // namespace ns3

static const bool g_registered
    = lfsim::RegisterWorkload({"AllToAll",
                               "ns3::AllToAllWorkload",
                               "every host of Hosts sends to every host of Destinations but itself",
                               {}});
