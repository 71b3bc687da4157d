/*
 * FCP (SCSI over Fibre Channel, FCP-4) exchanges: FCP_CMND (32 B), FCP_XFER_RDY (12 B),
 * FCP_DATA sequences and FCP_RSP (24 B). Reads: CMND, DATA..., RSP. Writes: CMND, then per
 * burst XFER_RDY and DATA, then RSP; an optional first burst goes without XFER_RDY.
 */
#ifndef FCP_H
#define FCP_H

#include "fc-applications.h"
#include "ns3/application.h"
#include "ns3/traced-callback.h"

#include <functional>
#include <map>
#include <unordered_map>

namespace ns3
{

constexpr uint32_t FCP_CMND_SIZE = 32;
constexpr uint32_t FCP_XFER_RDY_SIZE = 12;
constexpr uint32_t FCP_RSP_SIZE = 24;

/// Issues I/Os to one target keeping QueueDepth outstanding.
class FcpInitiator : public Application
{
  public:
    static TypeId GetTypeId();
    enum Direction
    {
        WRITE = 0,
        READ = 1
    };

    /// `firstBurst`: the target's FirstBurstSize, learnt at process login (PRLI).
    void Setup(Ptr<FcNetDevice> port, uint32_t targetId, uint32_t firstBurst);
    /// Only I/Os that complete in [from, to) count in the window statistics.
    void SetWindow(Time from, Time to);
    /// Issue one I/O for a workload that drives the initiator itself (the application is then
    /// not started): `done` runs with the I/O's latency when its FCP_RSP arrives. `targetId`:
    /// the N_Port it goes to (0: the one given to Setup), so that one N_Port reaches several
    /// target ports, as an HBA port logged in to every target port of its fabric does.
    void SubmitIo(bool read, uint32_t bytes, std::function<void(Time)> done, uint32_t targetId = 0);

    uint64_t
    GetCompleted() const
    {
        return m_completed;
    }
    uint64_t
    GetWindowBytes() const
    {
        return m_windowBytes;
    }
    const std::vector<double>&
    GetWindowLatenciesUs() const
    {
        return m_latUs;
    }

    /// (I/O bytes, latency) of each completed I/O.
    typedef void (*IoCallback)(uint32_t bytes, Time latency);

  private:
    struct Io
    {
        Time start;
        uint64_t sent = 0;
        uint32_t bytes = 0;
        uint32_t target = 0;            ///< D_ID of its frames
        std::function<void(Time)> done; ///< set for SubmitIo
    };

    void StartApplication() override;
    void StopApplication() override;
    void Issue();
    void IssueIo(bool read, uint32_t bytes, std::function<void(Time)> done, uint32_t target);
    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&);
    FcFrameHeader Header(uint8_t rCtl, uint16_t oxId, uint16_t rxId, uint32_t target) const;

    Ptr<FcNetDevice> m_port;
    uint32_t m_target = 0;
    Direction m_direction = WRITE;
    uint32_t m_ioSize;
    uint32_t m_queueDepth;
    uint32_t m_maxPayload;
    uint32_t m_firstBurst = 0;
    bool m_running = false;
    uint16_t m_nextOx = 0;
    std::unordered_map<uint16_t, Io> m_ios;
    uint64_t m_completed = 0;
    uint64_t m_windowBytes = 0;
    Time m_from;
    Time m_to = Time::Max();
    std::vector<double> m_latUs;
    TracedCallback<uint32_t, Time> m_ioTrace;
};

/// Serves FCP exchanges from any initiator: a block target with a fixed service time.
class FcpTarget : public Application
{
  public:
    static TypeId GetTypeId();
    void Setup(Ptr<FcNetDevice> port);
    /// The device behind the target: (read, bytes, done) instead of the fixed ServiceTime.
    using Backend = std::function<void(bool, uint32_t, std::function<void()>)>;
    void
    SetBackend(Backend b)
    {
        m_backend = std::move(b);
    }
    uint32_t
    GetFirstBurstSize() const
    {
        return m_firstBurst;
    }

  private:
    struct Exchange
    {
        uint32_t sId;
        uint16_t oxId;
        uint16_t rxId;
        bool write;
        uint32_t length;       ///< FCP_DL
        uint64_t received = 0; ///< write data received
        uint64_t burstEnd = 0; ///< offset the current burst ends at
    };

    void
    StartApplication() override
    {
    }
    void
    StopApplication() override
    {
    }
    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&);
    void SendXferRdy(uint64_t key);
    void SendReadData(uint64_t key);
    void SendRsp(uint64_t key);
    FcFrameHeader Header(const Exchange& x, uint8_t rCtl) const;

    Ptr<FcNetDevice> m_port;
    uint32_t m_maxBurst;
    uint32_t m_maxPayload;
    uint32_t m_firstBurst;
    Time m_serviceTime;
    Backend m_backend;
    uint16_t m_nextRx = 0;
    std::unordered_map<uint64_t, Exchange> m_x; ///< key: S_ID << 16 | OX_ID
};

} // namespace ns3

#endif
