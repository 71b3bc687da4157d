/*
 * What a switch writes into the frames it forwards (one of the parts of RoceSwitch):
 *  - ECN: RED on the instantaneous egress queue of the frame's (port, priority) (Kmin, Kmax,
 *    Pmax), as DCQCN's congestion point, as a frame joins the queue or as it leaves
 *    (EcnMarkingPoint); a marked frame gets CE;
 *  - INT (HPCC's in-band telemetry): a record of the egress port stamped into the frames that
 *    carry INT as they leave (EnableInt).
 * The switch parses a frame once as it arrives (ParseFrame, EditOf: its FrameEdit, which then
 * goes with the frame), calls Enqueue as an ECN-capable frame joins its egress queue (only with
 * marking at enqueue), and the ports call Dequeue (through the switch) as a frame leaves its
 * queue (only when something happens then: NeedsDequeue). The frame's bytes are rewritten at
 * most once per hop (EditFrame): a CE mark made at enqueue is written as the frame leaves when
 * INT is stamped then too.
 */
#ifndef SWITCH_MARKER_H
#define SWITCH_MARKER_H

#include "ns3/object.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"
#include "roce-net-device.h"

namespace ns3
{

class alignas(64) SwitchMarker : public Object
{
  public:
    static TypeId GetTypeId();
    SwitchMarker();

    /// Where ECN marking looks at the queue (attribute EcnMarkingPoint).
    enum EcnMarkingPoint
    {
        ECN_AT_ENQUEUE = 0, ///< as the frame joins its egress queue (the queue ahead of it)
        ECN_AT_DEQUEUE = 1, ///< as it leaves for the line (the queue behind it)
    };

    /// Checks the attributes once the switch is set up (throws std::invalid_argument naming
    /// RoceSwitch.Kmin if Kmin > Kmax).
    void Setup() const;

    /// Stamp an INT record (roce-header.h) into every frame that carries INT as it leaves.
    void
    EnableInt()
    {
        m_int = true;
    }

    /// ECN marking is on, at enqueue.
    bool
    MarksAtEnqueue() const
    {
        return m_ecnEnabled && m_point == ECN_AT_ENQUEUE;
    }

    /// Something happens as frames leave their queue (ECN at dequeue, INT): the ports must call
    /// Dequeue. Otherwise they call nothing more per frame.
    bool
    NeedsDequeue() const
    {
        return (m_ecnEnabled && m_point == ECN_AT_DEQUEUE) || m_int;
    }

    /// An ECN-capable frame joins the queue of (egress port, priority), `queued` bytes ahead of
    /// it: RED decides whether it is marked CE (written now, or noted in `edit` and written
    /// with the INT record as it leaves).
    void Enqueue(uint32_t outPort, uint8_t prio, uint32_t queued, FrameEdit& edit,
                 const RoceFrame& frame);
    /// A frame leaves its queue at `port` (the queue's bytes already without it): ECN at
    /// dequeue on the queue behind it, INT, and the frame's one rewrite.
    void Dequeue(RoceNetDevice* port, const RoceNetDevice::Item& item);

    uint64_t
    GetMarked() const
    {
        return m_marked;
    }

    int64_t AssignStreams(int64_t stream);

    typedef void (*MarkTracedCallback)(uint32_t port, uint8_t prio);

  protected:
    void DoDispose() override;

  private:
    /// RED on a queue of `q` bytes (Kmin, Kmax, Pmax): mark this frame?
    bool RedMark(uint32_t q);
    void Marked(uint32_t port, uint8_t prio);

    // Line 0, after the object's header: what a marking decision reads.
    uint32_t m_kmin;
    uint32_t m_kmax;
    double m_pmax;
    Ptr<UniformRandomVariable> m_uniform;
    uint64_t m_marked = 0;
    bool m_ecnEnabled;
    bool m_int = false;
    EcnMarkingPoint m_point;
    TracedCallback<uint32_t, uint8_t> m_markTrace;
};

} // namespace ns3

#endif
