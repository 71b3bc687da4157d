/*
 * An Ethernet port for lossless fabrics: eight traffic classes (strict priority for the classes
 * in StrictPriorityMask, DWRR between the others) and IEEE 802.1Qbb PFC. A received PAUSE stops
 * its classes at the next frame boundary for quanta x 512 bit times; a PAUSE with timer 0 (XON)
 * releases them. PAUSE frames are MAC Control frames: they go out ahead of every queue and are
 * never paused themselves. Used by switch ports and by RDMA NICs (which pull their data
 * packets on demand instead of queueing them, as a NIC's transmit scheduler does).
 *
 * A host port may also carry an ns-3 IP stack (EnableIp, see RoceHelper::InstallInternet):
 * Send puts an IPv4 packet in an Ethernet frame and queues it in the traffic class of its
 * DSCP; the class's transmitter takes IP frames and the NIC's pulled packets alternately,
 * byte-fair, so both share the class and its PFC pause. Received frames other than RoCEv2
 * (UDP port 4791) go up to the IP stack.
 */
#ifndef ROCE_NET_DEVICE_H
#define ROCE_NET_DEVICE_H

#include "ethernet-speed.h"
#include "lfsim-fifo.h"
#include "lfsim-in-flight.h"
#include "lfsim-wired-port.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/mac48-address.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/traced-callback.h"
#include "roce-frame.h"
#include "roce-header.h"

#include <array>
#include <deque>
#include <memory>
#include <vector>

namespace ns3
{

class RoceChannel;

constexpr int ETH_CLASSES = 8;

class alignas(64) RoceNetDevice : public lfsim::WiredPort
{
  public:
    static TypeId GetTypeId();
    RoceNetDevice();

    struct Item
    {
        RoceFrame frame;
        uint32_t bytes = 0;  ///< frame bytes without FCS (the MMU's accounting unit)
        int32_t inPort = -1; ///< switch ingress port holding the buffer, -1 on hosts
        uint8_t prio = 0;
        FrameEdit edit; ///< a switch's: what its Dequeue writes into the frame (in the padding)
    };

    /**
     * What a port serves (a switch or a NIC; set with SetUser). The port calls it directly:
     * one virtual call per frame, where an ns-3 Callback made three calls and counted the
     * port's references up and down.
     */
    class User
    {
      public:
        virtual ~User() = default;
        /// A frame other than PFC arrived: (port, frame, its first bytes).
        virtual void Receive(RoceNetDevice* port, const RoceFrame& frame, const FrameBytes& bytes)
            = 0;

        /// NIC data source: the next packet of a class, or null if nothing may go now (asked
        /// only while SetSourceReady says the class has some).
        virtual RoceFrame
        Pull(uint8_t prio)
        {
            return RoceFrame();
        }

        /// A queued frame has left the port completely (switches free its buffer here).
        virtual void
        TxDone(RoceNetDevice* port, const Item& item)
        {
        }

        /// With SetDequeueHook(true): a queued frame leaves its queue for the line (its
        /// class's queue bytes already without it); the frame may still be edited (a switch's
        /// dequeue ECN marking, INT stamping: item.edit says where).
        virtual void
        Dequeue(RoceNetDevice* port, const Item& item)
        {
        }
    };

    void Attach(Ptr<RoceChannel> channel);
    Ptr<RoceChannel> GetRoceChannel() const;
    void SetSpeed(EthSpeed s);
    /// The Speed attribute's accessors (EthSpeed as int).
    void SetSpeedValue(int s);
    int GetSpeedValue() const;
    EthSpeed
    GetSpeed() const
    {
        return m_speed;
    }
    Time
    GetPfcResponseDelay() const
    {
        return m_pfcResponseDelay;
    }

    /// The switch or NIC this port serves (it outlives the port's use: DoDispose forgets it),
    /// and the port's number there (a switch's port index: GetUserIndex).
    void
    SetUser(User* user, uint32_t index = 0)
    {
        m_user = user;
        m_userIndex = index;
    }

    /// The number the user gave this port in SetUser (read per frame: kept beside the port's
    /// per-frame state, where a table indexed by ifIndex would cost a cache line more).
    uint32_t
    GetUserIndex() const
    {
        return m_userIndex;
    }

    /// Call the user's Dequeue for every queued frame as it leaves (off by default: nothing
    /// more per frame when nothing happens at dequeue).
    void
    SetDequeueHook(bool on)
    {
        m_dequeueHook = on;
    }

    /// The NIC has (or no longer has) packets of `prio` to pull.
    void SetSourceReady(uint8_t prio, bool ready);

    /// Queue a frame in class `prio` (`edit`: kept with it for the user's Dequeue).
    void Enqueue(RoceFrame frame, uint8_t prio, int32_t inPort = -1, FrameEdit edit = FrameEdit());
    /// The same for an ns-3 packet (tests; RoCE frames are RoceFrame's).
    void
    Enqueue(Ptr<Packet> frame, uint8_t prio)
    {
        Enqueue(RoceFrame::FromPacket(std::move(frame)), prio);
    }
    /// Send a PFC frame for the classes in `classMask`, all with the same timer (0 = XON).
    void SendPause(uint8_t classMask, uint16_t quanta);
    /// Try to start a transmission (after the NIC's rate limiter releases a queue pair).
    void Kick();
    /// Host ports: carry IP packets of the node's IP stack. They leave with DSCP `dscp` in
    /// traffic class dscp >> 3 (as RdmaNic classifies RoCE), 802.1Q-tagged with PCP = class
    /// if `vlan`, addressed to the peer port's MAC.
    void EnableIp(uint8_t dscp, bool vlan, uint16_t vid);
    bool
    IsIpEnabled() const
    {
        return m_ip;
    }

    /// The last bit of a frame has arrived (Arrive, on the peer's line; tests call it too).
    void Receive(RoceFrame frame);
    /// The cable's propagation delay, for the line out of this port (RoceChannel sets it at
    /// Attach and when its length changes).
    void
    SetLineDelay(Time delay)
    {
        m_out.delay = delay;
    }

    uint32_t
    GetQueueBytes(uint8_t prio) const
    {
        return m_tc[prio].bytes;
    }
    uint32_t
    GetQueueBytes() const
    {
        return m_qTotal;
    }
    /// The peer's PFC holds the class now (whether or not the port honours it).
    bool IsPaused(uint8_t prio) const;
    /// Transmit class `prio` as if it were never paused (a switch's PFC watchdog in the storm
    /// state). Received PFC is still recorded: IsPaused keeps reporting the peer's pause.
    void SetPfcIgnored(uint8_t prio, bool ignored);
    bool
    IsPfcIgnored(uint8_t prio) const
    {
        return m_pfcIgnored >> prio & 1;
    }
    /// Removes every frame queued in class `prio` (not the one on the line) and returns them.
    lfsim::Fifo<Item, 1> TakeQueue(uint8_t prio);
    /// Start of the class's current (or last) PFC pause spell.
    Time
    GetPauseStart(uint8_t prio) const
    {
        return m_pauseFrom[prio];
    }
    /// Adds the bytes queued in class `prio` to byInPort[item.inPort] (switch ports; items
    /// without an ingress port are skipped). For the deadlock detector, not per packet.
    void AddQueuedBytesByInPort(uint8_t prio, std::vector<uint64_t>& byInPort) const;
    /// Time the class has been held by PFC, up to now.
    Time GetPausedTime(uint8_t prio) const;
    Time GetPausedTime() const; ///< summed over classes

    /// Counted per frame: kept on one cache line with the port's trace heads.
    struct FrameCounters
    {
        uint64_t framesTx = 0;
        uint64_t framesRx = 0;
        uint64_t lineBytesTx = 0; ///< with preamble, FCS and gap
        uint32_t maxQueueBytes = 0;
    };

    /// Counted per PFC or IP frame, away from the per-frame lines.
    struct PfcIpCounters
    {
        uint64_t pauseTx = 0; ///< PFC frames with at least one non-zero timer
        uint64_t xonTx = 0;   ///< PFC frames with all timers zero
        uint64_t pauseRx = 0;
        uint64_t xonRx = 0;
        uint64_t ipTx = 0; ///< IP packets taken from the IP stack
        uint64_t ipRx = 0; ///< IP packets handed up to it
    };

    struct Counters : FrameCounters, PfcIpCounters
    {
    };

    Counters
    GetCounters() const
    {
        return Counters{m_fc, m_pc};
    }

    typedef void (*QueueTracedCallback)(uint8_t prio, uint32_t bytes);
    typedef void (*PauseTracedCallback)(uint8_t prio, uint16_t quanta);

    // NetDevice
    Ptr<Channel> GetChannel() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t
    GetMtu() const override
    {
        return m_mtu;
    }
    bool
    IsLinkUp() const override
    {
        return m_channel != nullptr;
    }
    bool
    IsBroadcast() const override
    {
        return true;
    }
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;

  protected:
    void DoDispose() override;

  private:
    /// Classes held by PFC now and honoured (not ignored by a watchdog). Cached until the
    /// next instant a pause starts or ends, so most calls are one comparison.
    uint8_t HeldMask(Time now);
    /// Bit c: class c has frames queued.
    uint8_t
    QueuedMask() const
    {
        return m_queued;
    }
    bool HeadReady(uint8_t c);
    Item PopFront(uint8_t c); ///< takes the head frame of class c's queue
    /// What `steps` more steps of the DWRR walk do when no class may send: the deficit of each
    /// DWRR class passed with nothing queued is forgotten, and the turn moves on.
    void
    ForgetDeficits(int steps)
    {
        // The classes passed, m_rr onwards (all of them from 8 steps): a DWRR class among them
        // with nothing queued forgets its deficit.
        const int k = std::min(steps, int(ETH_CLASSES));
        const uint32_t span = (1u << k) - 1;
        const uint8_t passed = uint8_t(span << m_rr | span >> (ETH_CLASSES - m_rr));
        const uint8_t forget = uint8_t(passed & ~m_strictMask & ~m_queued);
        // Only the classes that may hold a deficit: the others' lines are not touched.
        for (uint32_t m = forget & m_credited; m; m &= m - 1)
        {
            m_tc[__builtin_ctz(m)].deficit = 0;
        }
        m_credited &= uint8_t(~forget);
        m_rr = (m_rr + steps) % ETH_CLASSES;
    }

    /// DWRR: class c's turn gives it its quantum.
    void
    Credit(uint8_t c)
    {
        m_tc[c].deficit += m_dwrrQuantum;
        m_credited |= uint8_t(1u << c);
    }

    /// Bit c: class c has a source besides its queue (the NIC's pull, or queued IP frames).
    uint8_t
    Sources() const
    {
        return m_sourceReady | m_ipReady;
    }
    void TakeIp(uint8_t c);
    void Transmit(Item item, bool control);
    /// The frame at the head of the line out of this port has reached the peer, `to`.
    void Arrive(RoceNetDevice* to);
    void TransmitDone();
    void OnPause(Ptr<Packet> frame);
    void SchedulePauseWake(Time now, uint8_t held);

    // Members in the order a frame's transmission and arrival touch them, the state of every
    // frame first and what PFC, host IP and set-up use after it: on a large fabric each event
    // meets its port cold in the cache, and a frame then reads a few lines, not the whole port
    // (the class is aligned to a cache line, so where they fall does not depend on malloc).
    // Line 0, after the object's header: what a received frame and every Kick read.
    User* m_user = nullptr;
    uint32_t m_userIndex = 0;
    EthSpeed m_speed = EthSpeed::GBE25;
    uint8_t m_strictMask = 0;
    uint8_t m_rr = 0;
    uint8_t m_sourceReady = 0; ///< bit c: the NIC may have class-c packets
    uint8_t m_ipReady = 0;     ///< bit c: m_host->q[c] is not empty
    uint8_t m_queued = 0;      ///< bit c: m_tc[c].q is not empty
    uint8_t m_paused = 0;      ///< classes paused at the last HeldMask (ignored or not)
    uint8_t m_pfcIgnored = 0;  ///< bit c: PFC for class c is recorded but not honoured
    bool m_busy = false;
    uint32_t m_qTotal = 0;        ///< the classes' queued bytes summed
    bool m_ip = false;            ///< carries the node's IP stack (EnableIp): m_host is set
    bool m_controlQueued = false; ///< m_control is not empty
    bool m_currentIsData = false;
    uint8_t m_credited = 0; ///< bit c: m_tc[c].deficit may be non-zero
    // Line 1: a transmission.
    Ptr<RoceChannel> m_channel;
    uint32_t m_dwrrQuantum = 0;
    bool m_dequeueHook = false;
    uint8_t m_lineSide = 0; ///< this port's side of m_channel (RoceChannel::Attach)
    Time m_heldUntil;       ///< m_paused holds until then (0: compute it again)
    Item m_current;
    Ptr<EventImpl> m_txDoneEvent; ///< TransmitDone, scheduled again for every frame
    Time m_wakeAt{-1};            ///< when m_wake was last set to run (before any time: never)
    // Line 2: counters and the heads of the traces every frame checks.
    FrameCounters m_fc;
    TracedCallback<Ptr<const Packet>> m_snifferTrace;
    TracedCallback<uint8_t, uint32_t> m_queueTrace;

    /// A traffic class's transmit queue (its first frame inside it) with its byte count and
    /// DWRR deficit, on a line of their own: a frame queued or sent reads all three.
    struct alignas(64) TrafficClass
    {
        lfsim::Fifo<Item, 1> q; // a queue holds one frame at a time, mostly
        uint32_t bytes = 0;
        int64_t deficit = 0;
    };
    static_assert(sizeof(TrafficClass) == 64, "a class's queue, its first frame, bytes, deficit");
    static_assert(sizeof(Item) == 24, "a frame, its bytes, ingress port, class and edit");

    /// The line out of this port: the frames on their way to the peer, in sending order, and the
    /// cable's delay, on one line (a frame sent reads it). They arrive in that order (one delay,
    /// one sender), so one reusable event delivers the head: no event or argument copy per frame.
    struct alignas(64) Line
    {
        lfsim::InFlight<RoceFrame> frames;
        Time delay;
    };
    static_assert(sizeof(Line) == 64, "a line's frames and delay fill one cache line");

    std::array<TrafficClass, ETH_CLASSES> m_tc;
    Line m_out;
    lfsim::Fifo<Ptr<Packet>> m_control; ///< PFC frames, ahead of every class
    PfcIpCounters m_pc;

    // PFC state of our transmitter, per class: held from `from` until `until`.
    std::array<Time, ETH_CLASSES> m_pauseFrom{};
    std::array<Time, ETH_CLASSES> m_pauseUntil{};
    std::array<Time, ETH_CLASSES> m_pausedTotal{};
    EventId m_wake;
    TracedCallback<uint8_t, uint16_t> m_pauseTxTrace;
    TracedCallback<uint8_t, uint16_t> m_pauseRxTrace;

    // Host IP: frames from Send wait per class until the transmitter takes them (TakeIp).
    // Made by EnableIp (m_ip): switch ports, most of a fabric's, do without its 200 bytes.
    struct HostIp
    {
        bool vlan = false;
        uint16_t vid = 0;
        uint8_t dscp = 0;
        Mac48Address nextHop;
        std::array<lfsim::Fifo<Item>, ETH_CLASSES> q;
        /// IP bytes minus NIC bytes sent while both had frames: who goes next (byte fairness).
        std::array<int64_t, ETH_CLASSES> credit{};
    };

    std::unique_ptr<HostIp> m_host;

    // Set-up
    uint16_t m_mtu = 4200;
    Time m_pfcResponseDelay; ///< attribute
};

} // namespace ns3

#endif
