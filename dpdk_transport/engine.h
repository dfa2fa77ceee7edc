// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// engine.h - the protocol engine of the MLTCP-DPDK transport: reliable,
// in-order, message-oriented connections.  Pure C++ without DPDK: packets
// and a clock (nanoseconds) go in, packets (through a PacketSink) and state
// changes come out, so everything here is unit-tested with a fake network.
//
// Per connection: packet sequence numbers, cumulative + 256-bit selective
// acks, loss detection by duplicate threshold (RFC 6675 IsLost) and by time
// (RACK-like: a packet sent well before one already delivered is lost),
// retransmission timeout with exponential backoff (RFC 6298 estimator),
// receive-window flow control with zero-window probes, SYN/SYN-ACK setup and
// FIN/FIN-ACK teardown in each direction, a peer timeout that closes the
// connection with an error instead of hanging, and one congestion control
// from cc.h.  Differs from TCP: sequence numbers count packets (one message
// segment each), acks are sent once per received burst (Poll), and there is
// no TIME_WAIT (connection ids are random per connection instead).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc.h"
#include "wire.h"

namespace mltcp_dpdk {

constexpr uint64_t kNsPerUs = 1000;
constexpr uint64_t kNsPerMs = 1000 * 1000;
constexpr uint64_t kNsPerSec = 1000 * 1000 * 1000;

constexpr uint16_t kMaxMss = 65000;	// payload_len is 16 bits on the wire

struct EngineConfig {
	uint16_t mss = 1400;			// payload bytes per packet
	uint32_t rcv_wnd_pkts = 2048;		// receive buffer, packets
	uint64_t max_message_bytes = 64ULL << 20;
	uint64_t max_send_queue_bytes = 256ULL << 20;	// per connection
	uint32_t dupthresh = 3;
	// A 10 ms floor: on a shared host busy-polling processes are descheduled
	// for several ms, and a spurious timeout collapses cwnd; real losses are
	// repaired earlier by RACK and the tail loss probe.
	uint64_t initial_rto_ns = 20 * kNsPerMs;
	uint64_t min_rto_ns = 10 * kNsPerMs;
	uint64_t max_rto_ns = 200 * kNsPerMs;
	// The window restarts after an idle period longer than the RTO and
	// this (tcp_slow_start_after_idle_check(): Linux's RTO is at least
	// TCP_RTO_MIN, 200 ms).  Without it our 10 ms floor would restart
	// every iteration after a compute phase that Linux keeps its window
	// across, and each phase would begin with a slow-start overshoot.
	uint64_t idle_restart_min_ns = 200 * kNsPerMs;
	uint64_t connect_timeout_ns = 3 * kNsPerSec;
	// Nothing heard from the peer for this long while we wait for it
	// (data, SYN or FIN outstanding): the connection fails with kTimeout.
	uint64_t peer_timeout_ns = 3 * kNsPerSec;
	bool sw_checksum = true;	// false when the port checksums UDP
	CcConfig cc;
};

// Checks an EngineConfig; returns "" or what is wrong and the allowed range.
std::string ValidateEngineConfig(const EngineConfig &c);

enum class Errc {
	kOk = 0,
	kTooLarge,	// message above max_message_bytes
	kNotOpen,	// send on a connection that is closing or closed
	kWouldBlock,	// send queue full: poll, then retry
	kTimeout,	// peer silent
	kReset,		// peer reset the connection
	kProtocol,	// peer violated the protocol
	kInvalid,	// bad argument
	kClosed,	// receive on a connection the peer closed, nothing left
};
const char *ErrcName(Errc e);

struct Status {
	Errc code = Errc::kOk;
	std::string message;
	bool ok() const { return code == Errc::kOk; }
	static Status Ok() { return {}; }
	static Status Error(Errc c, std::string m) { return {c, std::move(m)}; }
};

// A packet the engine wants sent to `peer_addr`; payload stays valid until
// Send() returns (the sink copies it).
struct OutPacket {
	uint32_t peer_addr;
	WireHeader hdr;
	const uint8_t *payload;
	bool ect;	// mark ECN-capable (rate-based congestion control)
};

class PacketSink {
      public:
	virtual ~PacketSink() = default;
	// false: no room now (the engine retries on its next Poll).
	virtual bool Send(const OutPacket &p) = 0;
};

struct ConnStats {
	CcStats cc;
	uint64_t msgs_sent = 0, msgs_delivered = 0;
	uint64_t bytes_sent = 0, bytes_acked = 0, bytes_delivered = 0;
	uint64_t pkts_sent = 0, pkts_retx = 0, fast_retx = 0, rtos = 0, tlps = 0;
	uint64_t pkts_rx = 0, dup_rx = 0, ooo_rx = 0, beyond_wnd_rx = 0;
	uint64_t ce_rx = 0, cnp_tx = 0, cnp_rx = 0, probes = 0;
	uint64_t ecn_reductions = 0;	// window modes with CcConfig::ecn
	uint32_t srtt_us = 0, rto_us = 0;
	uint32_t peer_wnd = 0;
};

enum class ConnState { kSynSent, kEstablished, kClosed };

class Stack;

class Connection {
      public:
	Connection(Stack *stack, const EngineConfig &cfg, uint32_t local_id, uint32_t peer_addr,
		   bool active, uint64_t now_ns);

	// Queues a message (moved, not copied).  Errors: kTooLarge, kNotOpen,
	// kWouldBlock.
	Status Send(std::vector<uint8_t> &&msg, uint64_t now_ns);
	// Pops the next complete message into *out; false if none is ready.
	// The storage *out held before is kept to reassemble a later message
	// into, so passing the previous message back costs no allocation.
	bool Recv(std::vector<uint8_t> *out);
	// The buffer of a fully acknowledged message, for the next Send: its
	// capacity and size as they were, its contents undefined; an empty
	// vector if there is none.  Reusing it spares the allocation, page
	// faults and zeroing of a fresh buffer.  Once this has been called the
	// connection keeps acknowledged buffers while they and the queued bytes
	// together stay within max_send_queue_bytes (before, it keeps none).
	std::vector<uint8_t> TakeBuffer();
	// Starts an orderly close: queued messages are still delivered, then
	// FIN.  The connection is closed when both directions are finished.
	void Close();
	// Abort now: a reset is sent to the peer.
	void Abort();
	// "An iteration of `bytes` bytes starts now" (0: size unknown).
	void Hint(uint64_t bytes, uint64_t now_ns);

	ConnState state() const { return state_; }
	bool established() const { return state_ == ConnState::kEstablished; }
	bool closed() const { return state_ == ConnState::kClosed; }
	bool peer_closed() const { return peer_fin_; }
	// Why it closed (kOk for an orderly close).
	const Status &error() const { return error_; }
	// Bytes queued but not yet acknowledged.
	uint64_t unacked_bytes() const { return queued_bytes_; }
	size_t pending_messages() const { return delivered_.size(); }
	uint32_t id() const { return local_id_; }
	uint32_t peer_addr() const { return peer_addr_; }
	ConnStats Stats() const;

	// Engine internals driven by the Stack.
	void OnPacket(const WireHeader &h, const uint8_t *payload, bool ce, uint64_t now_ns);
	void OnTimer(uint64_t now_ns);
	void Output(uint64_t now_ns, PacketSink *sink);
	uint32_t peer_id() const { return peer_id_; }

      private:
	struct SendMsg {
		uint32_t id;
		std::vector<uint8_t> data;
	};
	struct TxPkt {
		uint32_t msg_id, msg_len, off;
		uint16_t len;
		bool last;	// last segment of its message
		bool sacked, lost, retransmitted;
		uint64_t sent_ns;
		const uint8_t *data;
	};
	struct RxSlot {
		bool present = false;
		uint32_t msg_id = 0, msg_len = 0, off = 0;
		std::vector<uint8_t> data;
	};

	friend class Stack;
	WireHeader BaseHeader(PacketType t, uint64_t now_ns);
	uint32_t AdvertisedWindow() const;
	void ProcessAck(const WireHeader &h, uint64_t now_ns);
	void DetectLosses(uint64_t now_ns);
	void MarkLost(uint32_t idx, uint64_t now_ns);
	bool CongestionEvent(uint32_t seq, uint64_t now_ns);
	void OnEcnEcho(uint64_t now_ns);
	void OnData(const WireHeader &h, const uint8_t *payload, bool ce, uint64_t now_ns);
	bool Consume(uint32_t msg_id, uint32_t msg_len, uint32_t off, const uint8_t *data,
		     uint32_t len);
	void MaybeFinishPeerFin();
	void UpdateRtt(uint32_t sample_us);
	void ArmRto(uint64_t now_ns);
	void ArmTlp(uint64_t now_ns);
	void FireTlp();
	bool Outstanding() const;
	void Fail(Errc code, const std::string &why);
	bool EmitData(uint64_t now_ns, PacketSink *sink, uint32_t idx, bool retx);
	bool PacingAllows(uint64_t now_ns) const;
	void Paced(uint64_t now_ns, uint32_t bytes);
	uint32_t Pipe() const { return (uint32_t)inflight_.size() - sacked_cnt_ - lost_cnt_; }

	Stack *stack_;
	EngineConfig cfg_;
	uint32_t local_id_, peer_id_ = 0, peer_addr_;
	ConnState state_;
	Status error_;
	CongestionControl cc_;
	uint64_t created_ns_, last_rx_ns_;

	// Sender.
	std::deque<SendMsg> send_q_;	// not yet fully acked, oldest first
	std::vector<std::vector<uint8_t>> spare_;	// acked messages' buffers (TakeBuffer)
	uint64_t spare_bytes_ = 0;	// their capacity
	bool recycle_ = false;		// TakeBuffer() was called
	size_t seg_msg_ = 0;		// send_q_ index of the next segment
	uint32_t seg_off_ = 0;
	uint32_t next_msg_id_ = 1;
	uint64_t queued_bytes_ = 0;
	std::deque<TxPkt> inflight_;	// sequence snd_una_ + index
	std::deque<uint32_t> retx_q_;	// sequence numbers to retransmit
	uint32_t snd_una_ = 0, snd_nxt_ = 0;
	uint32_t sacked_cnt_ = 0, lost_cnt_ = 0;
	uint32_t snd_wnd_edge_ = 16;	// peer accepts sequences below this
	uint64_t bytes_acked_total_ = 0;
	bool in_recovery_ = false;
	uint32_t recovery_point_ = 0;
	uint64_t latest_delivered_sent_ns_ = 0;
	bool cwnd_limited_ = false;
	uint64_t srtt_ns_ = 0, rttvar_ns_ = 0, rto_ns_;
	// The smallest RTT sample (tcp_min_rtt(); Linux keeps a 5-minute
	// windowed minimum, a connection here lives minutes at most); 0: none.
	uint32_t min_rtt_us_ = 0;
	uint64_t rto_deadline_ = 0;	// 0: not armed
	uint64_t tlp_deadline_ = 0;	// tail loss probe, 0: not armed
	bool tlp_done_ = false;		// one probe per flight
	uint32_t backoff_ = 0;
	uint64_t next_tx_ns_ = 0;	// pacing
	uint64_t last_send_ns_ = 0;	// idle restart
	bool syn_due_ = false, probe_due_ = false;
	bool close_requested_ = false, fin_sent_ = false, fin_due_ = false, fin_acked_ = false;
	uint32_t fin_seq_ = 0;

	// Receiver.
	uint32_t rcv_nxt_ = 0;
	std::vector<RxSlot> ooo_;
	uint32_t ooo_count_ = 0;
	uint32_t expect_msg_id_ = 1;
	std::vector<uint8_t> cur_msg_;
	std::vector<uint8_t> rx_spare_;	// storage handed back through Recv()
	uint32_t cur_len_ = 0, cur_fill_ = 0;
	bool cur_active_ = false;
	std::deque<std::vector<uint8_t>> delivered_;
	uint64_t unread_bytes_ = 0;
	uint32_t last_ts_rx_ = 0;
	bool ack_due_ = false, synack_due_ = false, finack_due_ = false, cnp_due_ = false;
	bool peer_fin_ = false;
	uint32_t peer_fin_seq_ = 0;
	bool peer_fin_pending_ = false;
	uint32_t last_adv_wnd_ = 0;
	bool reset_due_ = false;
	mltcp_dcqcn_np np_{};

	ConnStats st_;
};

struct StackStats {
	uint64_t rx_parse_errors = 0, rx_bad_checksum = 0, rx_unknown_conn = 0;
	uint64_t tx_blocked = 0;
};

class Stack {
      public:
	Stack(const EngineConfig &cfg, PacketSink *sink, uint64_t seed);
	~Stack();

	// Opens a connection to peer_addr; nullptr and *err on a bad config.
	Connection *Connect(uint32_t peer_addr, const CcConfig &cc, uint64_t now_ns, Status *err);
	// Accept SYNs from now on; accepted connections use `cc`.
	void Listen(const CcConfig &cc);
	// Next accepted connection, or nullptr.
	Connection *Accept();
	// Forget a connection (closed or not: an open one is aborted).
	void Release(Connection *c);

	void OnPacket(uint32_t src_addr, const uint8_t *buf, size_t len, bool ce, uint64_t now_ns);
	// Timers and output of every connection.
	void Poll(uint64_t now_ns);

	const StackStats &stats() const { return stats_; }
	const EngineConfig &config() const { return cfg_; }
	size_t connections() const { return conns_.size(); }

      private:
	friend class Connection;
	uint32_t NewId();
	void Reply(uint32_t addr, const WireHeader &in, PacketType t, uint64_t now_ns);

	EngineConfig cfg_;
	PacketSink *sink_;
	std::mt19937_64 rng_;
	std::map<uint32_t, std::unique_ptr<Connection>> conns_;
	bool listening_ = false;
	CcConfig listen_cc_;
	std::deque<uint32_t> accept_q_;
	StackStats stats_;
};

}  // namespace mltcp_dpdk
