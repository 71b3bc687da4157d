/*
 * The iSCSI target: listens on a TCP port, answers each connection's Login Request with the
 * negotiated keys, then serves SCSI READ/WRITE commands through a pluggable backend.
 *
 * Writes: once the unsolicited part has arrived (the immediate data, and with InitialR2T=No the
 * unsolicited Data-Out up to its F bit) the target sends R2Ts for the rest in offset order, each
 * for at most MaxBurstLength bytes, with at most MaxOutstandingR2T outstanding per task; an R2T
 * stops being outstanding when the Data-Out with the F bit of its sequence arrives (RFC 7143
 * 13.17). When all data is in, the backend writes it, then a SCSI Response goes out.
 * Reads: the backend reads, then Data-In PDUs of at most the initiator's
 * MaxRecvDataSegmentLength go out in sequences of at most MaxBurstLength (F bit at the end of
 * each); the last Data-In carries the status (S bit), as Linux's LIO target does for a good
 * status (no separate SCSI Response).
 * Task management: ABORT TASK is answered as LIO's iscsit_tmr_abort_task does. A task found
 * with the RefCmdSN given is discarded (no R2T, Data-In or SCSI Response follows; a later
 * backend completion does nothing; its Data-Out is ignored): "Function complete". Not found:
 * "Function complete" if RefCmdSN is within [ExpCmdSN, MaxCmdSN] (a command not yet received),
 * else "Task does not exist". Found with another CmdSN: "Function rejected". Other functions:
 * "not supported".
 */
#ifndef ISCSI_TARGET_H
#define ISCSI_TARGET_H

#include "iscsi-connection.h"
#include "iscsi-login.h"
#include "ns3/application.h"
#include "ns3/nstime.h"

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

namespace ns3
{

/// Serves one I/O: call `done` when the medium has read or written it.
using IscsiBackend
    = std::function<void(bool isWrite, uint64_t lba, uint32_t bytes, std::function<void()> done)>;

class IscsiTarget : public Application
{
  public:
    static TypeId GetTypeId();
    IscsiTarget();
    ~IscsiTarget() override;

    /// The offer this target makes at login.
    Ptr<IscsiSession>
    GetSession() const
    {
        return m_session;
    }
    /// Replaces the default backend (a fixed ServiceTime per I/O).
    void SetBackend(IscsiBackend backend);
    /// Throws std::invalid_argument naming the attribute for an unusable configuration.
    void Validate() const;

    /// The negotiated values of the connection `i` (in accept order), once logged in.
    const IscsiNegotiated& GetNegotiated(size_t i = 0) const;
    size_t
    GetConnections() const
    {
        return m_conns.size();
    }
    /// Tasks of connection `i` (commands received whose status has not gone, not aborted).
    size_t GetTasks(size_t i = 0) const;

    typedef void (*PduCallback)(const IscsiBhs& bhs, uint32_t bytes);

  private:
    struct WriteTask
    {
        uint32_t edtl = 0;
        uint32_t received = 0;
        uint32_t nextR2tOffset = 0; ///< first byte not yet solicited
        uint32_t outstandingR2t = 0;
        uint32_t r2tSn = 0;
        uint64_t lba = 0;
        uint32_t cmdSn = 0;
        bool unsolicitedDone = false;
    };
    struct Conn
    {
        std::unique_ptr<IscsiConnection> io;
        IscsiNegotiated neg;
        bool loggedIn = false;
        uint32_t statSn = 1;
        uint32_t expCmdSn = 0;
        uint32_t active = 0;                            ///< commands received, status not yet sent
        std::unordered_map<uint32_t, WriteTask> writes; ///< by ITT
        std::unordered_map<uint32_t, uint32_t> reads;   ///< ITT -> CmdSN, in the backend
        std::unordered_map<uint32_t, uint32_t> transfers; ///< TTT -> ITT of outstanding R2Ts
    };

    void StartApplication() override;
    void StopApplication() override;
    void DoDispose() override;
    void Accept(Ptr<Socket> s, const Address& from);
    void Receive(size_t c, const IscsiBhs& bhs, const uint8_t* data, uint32_t n);
    void Login(Conn& c, const IscsiBhs& bhs, const uint8_t* data, uint32_t n);
    void Command(size_t ci, const IscsiBhs& bhs, uint32_t n);
    void DataOut(size_t ci, const IscsiBhs& bhs, uint32_t n);
    void SendR2ts(Conn& c, uint32_t itt, WriteTask& t);
    void WriteDone(size_t ci, uint32_t itt);
    void ReadDone(size_t ci, uint32_t itt, uint32_t cmdSn, uint32_t bytes);
    void TaskManagement(Conn& c, const IscsiBhs& bhs);
    uint8_t AbortTask(Conn& c, uint32_t itt, uint32_t refCmdSn);
    uint32_t MaxCmdSn(const Conn& c) const;
    uint32_t NextTtt();

    uint16_t m_port;
    Time m_serviceTime;
    uint32_t m_commandWindow;
    Ptr<IscsiSession> m_session;
    IscsiBackend m_backend;

    /// One portal on any address, or one per port on a host with several (each bound to its
    /// port, so that a connection's segments leave by the port it came in on).
    std::vector<Ptr<Socket>> m_listeners;
    IscsiParams m_offer;
    std::vector<std::unique_ptr<Conn>> m_conns; ///< stable addresses for pending backend I/Os
    uint32_t m_nextTtt = 1;
    bool m_running = false;

    IscsiConnection::PduTrace m_pduTx;
    IscsiConnection::PduTrace m_pduRx;
};

} // namespace ns3

#endif
