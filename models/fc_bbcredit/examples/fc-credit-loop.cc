/*
 * lfsim example: the credit loop of scenarios/fc_credit_loop.yaml through lfsim's runner, one
 * run per load, to find the load at which the ring deadlocks.
 *   ./build/fc-credit-loop --routing=Clockwise --loads=0.3,0.4,0.5,1 --messages=50
 */
#include "lfsim-attributes.h"
#include "lfsim-run.h"
#include "lfsim-test.h"
#include "ns3/core-module.h"

#include <iostream>
#include <sstream>

using namespace ns3;

int
main(int argc, char** argv)
{
    lfsim::EnsureTimeResolution();
    std::string routing = "Clockwise";
    std::string loads = "0.3,0.4,0.45,0.5,0.6,1";
    std::string speed = "32GFC";
    uint32_t credits = 16;
    uint32_t messages = 20;
    uint32_t size = 65536;
    uint32_t depth = 4;
    uint32_t seed = 1;
    std::string spread = "0s";
    std::string stop = "20ms";
    CommandLine cmd;
    cmd.AddValue("routing", "topology.Routing", routing);
    cmd.AddValue("loads", "workload.ring.Load values, comma-separated", loads);
    cmd.AddValue("speed", "FcNetDevice::Speed", speed);
    cmd.AddValue("credits", "FcSwitch::PortBbCredit", credits);
    cmd.AddValue("messages", "workload.ring.Messages", messages);
    cmd.AddValue("size", "workload.ring.MessageSize", size);
    cmd.AddValue("depth", "workload.ring.QueueDepth", depth);
    cmd.AddValue("seed", "scenario seed", seed);
    cmd.AddValue("spread", "workload.ring.StartSpread", spread);
    cmd.AddValue("stop", "stop_time", stop);
    cmd.Parse(argc, argv);

    std::cout << "load deadlock formed_us detected_us messages sim_ms cycle" << std::endl;
    std::istringstream list(loads);
    std::string load;
    while (std::getline(list, load, ','))
    {
        // Four ring switches, one host each; host i writes to host i + 2.
        lfsim::TestRun run("fc", stop, seed);
        run.config.stopOnDeadlock = true;
        run.Topology("Ring", {{"Switches", "4"}, {"Routing", routing}})
            .Workload("ring", "Permutation",
                      {{"Shift", "2"},
                       {"Load", load},
                       {"Messages", std::to_string(messages)},
                       {"MessageSize", std::to_string(size)},
                       {"QueueDepth", std::to_string(depth)},
                       {"StartSpread", spread}})
            .Class("ns3::FcNetDevice", "Speed", speed)
            .Class("ns3::FcSwitch", "PortBbCredit", std::to_string(credits));
        lfsim::RunResult r = run.Run();
        const bool dead = std::get<bool>(r.metrics.at("deadlock"));
        std::cout << load << " " << (dead ? "yes" : "no") << " ";
        if (dead)
        {
            std::cout << std::get<double>(r.metrics.at("deadlock_time_us")) << " "
                      << std::get<double>(r.metrics.at("deadlock_detected_us")) << " ";
        }
        else
        {
            std::cout << "- - ";
        }
        std::cout << std::get<int64_t>(r.metrics.at("messages_completed")) << " "
                  << r.simTimeS * 1e3 << " ";
        for (const auto& q : std::get<std::vector<std::string>>(r.metrics.at("deadlock_cycle")))
        {
            std::cout << q << " ";
        }
        std::cout << std::endl;
    }
    return 0;
}
