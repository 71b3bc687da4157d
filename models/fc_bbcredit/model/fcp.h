/*
 * FCP (SCSI over Fibre Channel, FCP-4) exchanges: FCP_CMND (32 B), FCP_XFER_RDY (12 B),
 * FCP_DATA sequences and FCP_RSP (24 B). Reads: CMND, DATA..., RSP. Writes: CMND, then per
 * burst XFER_RDY and DATA, then RSP; an optional first burst goes without XFER_RDY. Each end
 * numbers the sequences it starts in an exchange 0, 1, 2... (SEQ_ID, as Linux's libfc).
 *
 * Exchange abort (FC-FS-4 Basic Link Services, FCP-4 task abort): the originator sends ABTS
 * (no payload) with the exchange's OX_ID and RX_ID and discards the exchange's frames from then
 * on; the responder discards the exchange and answers BA_ACC (12 B), or BA_RJT (4 B) when it
 * holds no such exchange. The originator frees the exchange at the answer, or at its ABTS
 * timeout without one.
 */
#ifndef FCP_H
#define FCP_H

#include "fc-applications.h"
#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/traced-callback.h"

#include <functional>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

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
    /// Returns the exchange's OX_ID (for Abort). `cookie`: the caller's name for the I/O, given
    /// back by EndExchanges.
    uint16_t SubmitIo(bool read, uint32_t bytes, std::function<void(Time)> done,
                      uint32_t targetId = 0, uint64_t cookie = 0);
    /// Aborts exchange `oxId` with an ABTS to its D_ID. From now on its `done` never runs and
    /// its frames are discarded. The exchange is freed when the BA_ACC (done(true)) or the BA_RJT
    /// (done(false)) arrives, or after AbortTimeout without either (done(false)). An OX_ID not
    /// outstanding, or already being aborted: done(false) at once and nothing is sent.
    void Abort(uint16_t oxId, std::function<void(bool accepted)> done);
    /// The port lost signal: its logins are gone and every open exchange ends locally, no frame
    /// sent (as qla2xxx's firmware returns the port's commands with CS_PORT_UNAVAILABLE). One
    /// being aborted ends as an abort without answer (its done(false)); the others are returned
    /// as (D_ID, cookie), oldest first, their `done` never run (the application's own I/Os are
    /// dropped, not issued again). Frames of them that arrive later are discarded.
    std::vector<std::pair<uint32_t, uint64_t>> EndExchanges();

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
    /// Exchanges held: outstanding, or aborted and waiting for the BA_ACC / BA_RJT.
    std::size_t
    GetExchanges() const
    {
        return m_ios.size();
    }
    uint64_t
    GetAbortsSent() const
    {
        return m_abortsSent;
    }
    uint64_t
    GetBaAccReceived() const
    {
        return m_baAcc;
    }
    uint64_t
    GetBaRjtReceived() const
    {
        return m_baRjt;
    }
    /// Aborts given up after AbortTimeout with neither BA_ACC nor BA_RJT.
    /// Aborts ended at once, without an ABTS, because the port's link was down.
    uint64_t
    GetAbortsWithoutLink() const
    {
        return m_abortsNoLink;
    }
    uint64_t
    GetAbortTimeouts() const
    {
        return m_abortTimeouts;
    }

    /// (I/O bytes, latency) of each completed I/O.
    typedef void (*IoCallback)(uint32_t bytes, Time latency);
    /// (OX_ID, accepted: a BA_ACC came back, time since Abort queued the ABTS).
    typedef void (*AbortCallback)(uint16_t oxId, bool accepted, Time sinceAbts);

  private:
    struct Io
    {
        Time start;
        uint64_t sent = 0;
        uint32_t bytes = 0;
        uint32_t target = 0;            ///< D_ID of its frames
        uint16_t rxId = 0xffff;         ///< the responder's, from its first frame
        uint8_t nextSeqId = 0;          ///< SEQ_ID of the next sequence it starts
        std::function<void(Time)> done; ///< set for SubmitIo
        uint64_t cookie = 0;            ///< SubmitIo's
        bool aborting = false;          ///< ABTS sent, BA_ACC / BA_RJT awaited
        Time abortStart;
        std::function<void(bool)> abortDone;
        EventId abortTimer;
    };

    void StartApplication() override;
    void StopApplication() override;
    void Issue();
    uint16_t IssueIo(bool read, uint32_t bytes, std::function<void(Time)> done, uint32_t target,
                     uint64_t cookie = 0);
    void FinishAbort(uint16_t oxId, bool accepted);
    void AbortTimedOut(uint16_t oxId);
    bool Receive(Ptr<NetDevice>, Ptr<const Packet>, uint16_t, const Address&);
    FcFrameHeader Header(uint8_t rCtl, uint16_t oxId, uint16_t rxId, uint32_t target) const;

    Ptr<FcNetDevice> m_port;
    uint32_t m_target = 0;
    Direction m_direction = WRITE;
    uint32_t m_ioSize;
    uint32_t m_queueDepth;
    uint32_t m_maxPayload;
    uint32_t m_firstBurst = 0;
    Time m_abortTimeout;
    bool m_running = false;
    uint16_t m_nextOx = 0;
    std::unordered_map<uint16_t, Io> m_ios;
    uint64_t m_completed = 0;
    uint64_t m_windowBytes = 0;
    Time m_from;
    Time m_to = Time::Max();
    std::vector<double> m_latUs;
    uint64_t m_abortsSent = 0;
    uint64_t m_baAcc = 0;
    uint64_t m_baRjt = 0;
    uint64_t m_abortTimeouts = 0;
    uint64_t m_abortsNoLink = 0;
    TracedCallback<uint32_t, Time> m_ioTrace;
    TracedCallback<uint16_t, bool, Time> m_abortTrace;
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
    /// Exchanges held (commands received whose FCP_RSP has not gone, and not aborted).
    std::size_t
    GetExchanges() const
    {
        return m_x.size();
    }
    uint64_t
    GetAbtsReceived() const
    {
        return m_abtsReceived;
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
        uint8_t nextSeqId = 0; ///< SEQ_ID of the next sequence it starts
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
    void SendXferRdy(Exchange& x);
    /// Backend completions: `rxId` names the exchange they belong to, which may have been
    /// aborted since (and its OX_ID reused).
    void SendReadData(uint64_t key, uint16_t rxId);
    void SendRsp(uint64_t key, uint16_t rxId);
    void ReceiveAbts(const FcFrameHeader& abts, uint64_t key);
    FcFrameHeader Header(const Exchange& x, uint8_t rCtl) const;

    Ptr<FcNetDevice> m_port;
    uint32_t m_maxBurst;
    uint32_t m_maxPayload;
    uint32_t m_firstBurst;
    Time m_serviceTime;
    Backend m_backend;
    uint16_t m_nextRx = 0;
    std::unordered_map<uint64_t, Exchange> m_x; ///< key: S_ID << 16 | OX_ID
    uint64_t m_abtsReceived = 0;
};

} // namespace ns3

#endif
