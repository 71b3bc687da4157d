/*
 * What every model's ns-3 test cases share: a test case that leaves no simulator state and no
 * changed attribute default behind, so that the cases of a suite are independent.
 */
#ifndef LFSIM_TEST_H
#define LFSIM_TEST_H

#include "ns3/config.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

namespace lfsim
{

class ModelTestCase : public ns3::TestCase
{
  public:
    using ns3::TestCase::TestCase;

  protected:
    void
    DoTeardown() override
    {
        ns3::Simulator::Destroy();
        ns3::Config::Reset(); // undo Config::SetDefault of the case
    }
};

} // namespace lfsim

#endif
