// CTest entry for a module's ns-3 TestSuites: runs every suite linked into this binary.
#include "lfsim-attributes.h"
#include "ns3/test.h"

int
main(int argc, char** argv)
{
    lfsim::EnsureTimeResolution();
    return ns3::TestRunner::Run(argc, argv);
}
