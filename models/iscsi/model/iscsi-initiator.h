/*
 * The iSCSI initiator: one TCP connection to a target, login (operational negotiation in one
 * Login Request / Response), then SCSI READ(16) or WRITE(16) commands of IoSize bytes keeping
 * QueueDepth outstanding (and CmdSN within the target's MaxCmdSN).
 *
 * A write carries immediate data up to min(FirstBurstLength, the target's
 * MaxRecvDataSegmentLength) when ImmediateData=Yes; with InitialR2T=No unsolicited Data-Out PDUs
 * follow up to FirstBurstLength; every R2T is answered with Data-Out PDUs of at most the
 * target's MaxRecvDataSegmentLength, the last one with the F bit. A read completes at the
 * Data-In with the S bit or at a SCSI Response. NOP-Out pings measure the round trip.
 *
 * Abort: an immediate Task Management Function Request ABORT TASK (RFC 7143 11.5) names the
 * command by its ITT and CmdSN; from then on the command's Data-In, R2T and SCSI Response are
 * discarded and its `done` never runs. The Task Management Function Response (11.6) frees it.
 */
#ifndef ISCSI_INITIATOR_H
#define ISCSI_INITIATOR_H

#include "iscsi-connection.h"
#include "iscsi-login.h"
#include "ns3/address.h"
#include "ns3/application.h"
#include "ns3/event-id.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"

#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>

namespace ns3
{

class IscsiInitiator : public Application
{
  public:
    static TypeId GetTypeId();
    IscsiInitiator();
    ~IscsiInitiator() override;

    enum Direction
    {
        WRITE = 0,
        READ = 1
    };

    /// The offer this initiator makes at login (its attributes are the RFC keys).
    Ptr<IscsiSession>
    GetSession() const
    {
        return m_session;
    }
    /// Throws std::invalid_argument naming the attribute for an unusable configuration.
    void Validate() const;
    /// Sends a NOP-Out ping now (after login); NopRtt fires when its NOP-In arrives.
    void Ping();
    /// The host port the connection uses (an iSCSI interface bound to a NIC port, as
    /// open-iscsi's iface.net_ifacename), on a host with several; else the routing table's.
    void
    SetLocalDevice(Ptr<NetDevice> port)
    {
        m_localDevice = port;
    }

    /// A command submitted with Submit has its status: (latency from the SCSI Command).
    using IoDone = std::function<void(Time latency)>;
    /// The caller runs the workload (a fio-like job) with Submit: the Direction / IoSize /
    /// QueueDepth / IoCount loop issues nothing. Call before the application starts.
    void SetExternalWorkload();
    /// Issues one command of `bytes` (a multiple of 512) for the caller; also switches to the
    /// external workload. Commands wait for the login and for the target's MaxCmdSN, then go
    /// out in submission order. Returns the command's Initiator Task Tag (for Abort).
    uint32_t Submit(bool isWrite, uint32_t bytes, IoDone done);
    /// The command is gone (true), or no Task Management Function Response came (false).
    using AbortDone = std::function<void(bool complete)>;
    /// Aborts the command `itt`: its `done` never runs. Sent: an ABORT TASK, and done(true) at
    /// the response "Function complete" or "Task does not exist" (done(false) for another
    /// response, or when none came within AbortTimeout; the command is then forgotten here).
    /// Still waiting here for the login or MaxCmdSN: withdrawn, done(true) at once, as
    /// libiscsi's iscsi_eh_abort fails a task not yet sent. Not outstanding: done(true) at once.
    /// Already being aborted: done(false) at once.
    void Abort(uint32_t itt, AbortDone done);

    bool
    IsLoggedIn() const
    {
        return m_loggedIn;
    }
    /// Valid once logged in.
    const IscsiNegotiated&
    GetNegotiated() const
    {
        return m_neg;
    }
    uint64_t
    GetCompleted() const
    {
        return m_completed;
    }
    /// Commands sent and not yet ended (their status, or the end of their abort).
    std::size_t
    GetTasks() const
    {
        return m_tasks.size();
    }
    uint64_t
    GetAbortsSent() const
    {
        return m_abortsSent;
    }
    /// ABORT TASKs given up after AbortTimeout without a response.
    uint64_t
    GetAbortTimeouts() const
    {
        return m_abortTimeouts;
    }

    /// (bytes, latency from the SCSI Command to its status, is a write).
    typedef void (*IoCallback)(uint32_t bytes, Time latency, bool isWrite);
    /// (BHS, wire bytes of the PDU).
    typedef void (*PduCallback)(const IscsiBhs& bhs, uint32_t bytes);
    typedef void (*RttCallback)(Time rtt);
    typedef void (*LoginCallback)();
    /// (ITT of the aborted command, TMF Response (-1: none within AbortTimeout), time since
    /// the request was sent).
    typedef void (*AbortCallback)(uint32_t itt, int response, Time sinceRequest);

  private:
    struct Task
    {
        bool write = false;
        uint32_t bytes = 0;
        uint32_t dataIn = 0;
        uint32_t cmdSn = 0;
        Time start;
        IoDone done;           ///< Submit's caller, or empty
        bool aborting = false; ///< ABORT TASK sent: what arrives for it is discarded
    };
    struct Request
    {
        bool write;
        uint32_t bytes;
        IoDone done;
        uint32_t itt;
    };
    /// An ABORT TASK waiting for its response, by the request's own ITT.
    struct Tmf
    {
        uint32_t task; ///< Referenced Task Tag
        Time sent;
        AbortDone done;
        EventId timer;
    };

    void StartApplication() override;
    void StopApplication() override;
    void DoDispose() override;
    void Connected(Ptr<Socket> s);
    void ConnectFailed(Ptr<Socket> s);
    void Receive(const IscsiBhs& bhs, const uint8_t* data, uint32_t n);
    void LoginResponse(const IscsiBhs& bhs, const uint8_t* data, uint32_t n);
    void Issue();
    void SendCommand(uint32_t itt, bool write, uint32_t bytes, IoDone done);
    void TmfResponse(const IscsiBhs& bhs);
    void AbortTimedOut(uint32_t tmfItt);
    void EndAbort(uint32_t tmfItt, int response);
    void DataOut(uint32_t itt, uint32_t ttt, uint32_t offset, uint32_t length);
    void Complete(uint32_t itt, uint8_t status);
    void UpdateWindow(const IscsiBhs& bhs);
    void KeepAlive();
    uint32_t NextTag();

    // attributes
    Address m_remote;
    Direction m_direction = WRITE;
    uint32_t m_ioSize;
    uint32_t m_queueDepth;
    uint64_t m_ioCount;
    Time m_nopInterval;
    Time m_abortTimeout;
    Ptr<IscsiSession> m_session;

    Ptr<Socket> m_socket;
    Ptr<NetDevice> m_localDevice;
    std::unique_ptr<IscsiConnection> m_conn;
    IscsiParams m_offer;
    IscsiNegotiated m_neg;
    bool m_loggedIn = false;
    bool m_running = false;
    uint32_t m_nextTag = 1;
    uint32_t m_cmdSn = 1;
    uint32_t m_maxCmdSn = 1;
    uint32_t m_expStatSn = 0;
    uint64_t m_nextLba = 0;
    uint64_t m_issued = 0;
    uint64_t m_completed = 0;
    std::unordered_map<uint32_t, Task> m_tasks;
    std::unordered_map<uint32_t, Time> m_pings;
    std::unordered_map<uint32_t, Tmf> m_tmfs;
    uint64_t m_abortsSent = 0;
    uint64_t m_abortTimeouts = 0;
    bool m_external = false;        ///< Submit drives the commands
    std::deque<Request> m_requests; ///< submitted, not yet sent
    EventId m_keepAlive;

    TracedCallback<uint32_t, Time, bool> m_ioTrace;
    IscsiConnection::PduTrace m_pduTx;
    IscsiConnection::PduTrace m_pduRx;
    TracedCallback<Time> m_rttTrace;
    TracedCallback<> m_loginTrace;
    TracedCallback<uint32_t, int, Time> m_abortTrace;
};

} // namespace ns3

#endif
