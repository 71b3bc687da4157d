#include "switch-marker.h"

#include "lfsim-clock.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/uinteger.h"
#include "roce-header.h"

#include <stdexcept>
#include <string>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(SwitchMarker);

TypeId
SwitchMarker::GetTypeId()
{
    // The attributes keep the names they had as RoceSwitch's: scenarios set them as
    // RoceSwitch.Kmin and so on (lfsim::RegisterParts, roce-switch.cc).
    static TypeId tid
        = TypeId("ns3::SwitchMarker")
              .SetParent<Object>()
              .SetGroupName("RocePfcEcn")
              .AddConstructor<SwitchMarker>()
              .AddAttribute("EcnEnabled",
                            "Mark ECN-capable packets at egress (RED on the instantaneous queue).",
                            BooleanValue(false), MakeBooleanAccessor(&SwitchMarker::m_ecnEnabled),
                            MakeBooleanChecker())
              .AddAttribute("Kmin", "Egress queue bytes (per port, priority) where marking starts.",
                            UintegerValue(5 * 1024), MakeUintegerAccessor(&SwitchMarker::m_kmin),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("Kmax",
                            "Egress queue bytes above which every ECN-capable packet is marked.",
                            UintegerValue(200 * 1024), MakeUintegerAccessor(&SwitchMarker::m_kmax),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("Pmax", "Marking probability at Kmax (linear from 0 at Kmin).",
                            DoubleValue(0.01), MakeDoubleAccessor(&SwitchMarker::m_pmax),
                            MakeDoubleChecker<double>(0.0, 1.0))
              .AddAttribute("EcnMarkingPoint",
                            "Where RED looks at the egress queue: Enqueue (as a frame joins it: "
                            "the queue ahead of the frame; DCTCP marks arriving packets) or "
                            "Dequeue (as it leaves for the line: the queue behind it, as some "
                            "switch ASICs and the HPCC simulator mark).",
                            EnumValue(ECN_AT_ENQUEUE), MakeEnumAccessor(&SwitchMarker::m_point),
                            MakeEnumChecker(ECN_AT_ENQUEUE, "Enqueue", ECN_AT_DEQUEUE, "Dequeue"))
              .AddTraceSource("EcnMark", "A frame marked CE (egress port, priority).",
                              MakeTraceSourceAccessor(&SwitchMarker::m_markTrace),
                              "ns3::SwitchMarker::MarkTracedCallback");
    return tid;
}

SwitchMarker::SwitchMarker()
    : m_uniform(CreateObject<UniformRandomVariable>())
{
}

void
SwitchMarker::Setup() const
{
    if (m_kmin > m_kmax)
    {
        throw std::invalid_argument("RoceSwitch.Kmin: got " + std::to_string(m_kmin)
                                    + " above Kmax " + std::to_string(m_kmax)
                                    + "; accepted: Kmin <= Kmax (bytes)");
    }
}

bool
SwitchMarker::RedMark(uint32_t q)
{
    if (q > m_kmax)
    {
        return true;
    }
    if (q > m_kmin)
    {
        const double p = m_pmax * double(q - m_kmin) / double(m_kmax - m_kmin);
        return m_uniform->GetValue() < p;
    }
    return false;
}

void
SwitchMarker::Marked(uint32_t port, uint8_t prio)
{
    ++m_marked;
    m_markTrace(port, prio);
}

void
SwitchMarker::Enqueue(uint32_t outPort, uint8_t prio, uint32_t queued, FrameEdit& edit,
                      const RoceFrame& frame)
{
    if (RedMark(queued))
    {
        if (m_int)
        {
            edit.flags |= FrameEdit::CE; // Dequeue writes it with the INT record
        }
        else
        {
            frame.Edit(edit, true, nullptr);
        }
        Marked(outPort, prio);
    }
}

void
SwitchMarker::Dequeue(RoceNetDevice* port, const RoceNetDevice::Item& item)
{
    const uint32_t q = port->GetQueueBytes(item.prio); // behind the frame
    const FrameEdit& e = item.edit;
    bool ce = e.flags & FrameEdit::CE;
    if (m_ecnEnabled && m_point == ECN_AT_DEQUEUE && (e.flags & FrameEdit::ECT) && RedMark(q))
    {
        ce = true;
        Marked(port->GetUserIndex(), item.prio);
    }
    if (m_int && e.intAt)
    {
        const IntHop hop
            = IntHop::Make(uint8_t(port->GetSpeed()), uint64_t(lfsim::Now().GetNanoSeconds()),
                           port->GetCounters().lineBytesTx, q);
        item.frame.Edit(e, ce, &hop);
    }
    else if (ce)
    {
        item.frame.Edit(e, true, nullptr);
    }
}

int64_t
SwitchMarker::AssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

void
SwitchMarker::DoDispose()
{
    m_uniform = nullptr;
    Object::DoDispose();
}

} // namespace ns3
