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
        const uint32_t dst = OneSink(*env.graph, "receiving");
        const size_t first = out.size();
        for (uint32_t src : Sources(*env.graph))
        {
            if (src != dst)
            {
                out.push_back(Flow(env, index, src, dst));
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
