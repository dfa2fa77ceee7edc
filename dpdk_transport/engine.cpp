// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
//
// engine.cpp - the protocol engine (engine.h): connection state machine,
// sender (segmentation, loss detection, retransmission, pacing, window),
// receiver (reassembly, selective acks, flow control, CNPs) and the Stack
// that demultiplexes packets to connections.
#include "engine.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace mltcp_dpdk {

namespace {
// Reordering window of the time-based loss rule: at least this, or srtt/4.
constexpr uint64_t kMinReorderNs = 50 * kNsPerUs;
// Tail loss probe timeout: at least this, or 2 srtt.
constexpr uint64_t kMinTlpNs = 200 * kNsPerUs;
// A paced sender may catch up after a stall by at most this many packets,
// or this much time, whichever is more.  The time covers the poll loop's
// gaps (usleep(20) sleeps ~100 us here): with 4 packets only, a sender sent
// ~5 packets per poll, polled mostly when acks came back, and so ran
// ack-clocked with ~8 packets in flight whatever rate DCQCN chose.
constexpr uint32_t kPacingBurstPkts = 4;
constexpr uint64_t kPacingSlackNs = 500 * kNsPerUs;
// Per-packet bytes on the wire besides the payload (Ethernet + IPv4 + UDP +
// transport header), used to pace at the configured line rate.
constexpr uint32_t kWireOverhead = 14 + 20 + 8 + sizeof(WireHeader);

uint32_t NowUs32(uint64_t now_ns)
{
	uint32_t t = (uint32_t)(now_ns / kNsPerUs);
	return t ? t : 1;	// 0 means "no timestamp"
}

std::string Ms(uint64_t ns) { return std::to_string(ns / kNsPerMs) + " ms"; }
}  // namespace

const char *ErrcName(Errc e)
{
	switch (e) {
	case Errc::kOk: return "ok";
	case Errc::kTooLarge: return "message too large";
	case Errc::kNotOpen: return "connection not open";
	case Errc::kWouldBlock: return "would block";
	case Errc::kTimeout: return "timeout";
	case Errc::kReset: return "connection reset";
	case Errc::kProtocol: return "protocol error";
	case Errc::kInvalid: return "invalid argument";
	case Errc::kClosed: return "closed by peer";
	}
	return "unknown error";
}

std::string ValidateEngineConfig(const EngineConfig &c)
{
	if (c.mss < 64 || c.mss > kMaxMss)
		return "mss must be in [64, 65000] bytes";
	if (c.rcv_wnd_pkts < 4 || c.rcv_wnd_pkts > 65536)
		return "receive window must be in [4, 65536] packets";
	if (c.max_message_bytes < 1 || c.max_message_bytes > (1ULL << 31))
		return "max message size must be in [1, 2 GiB]";
	if (c.max_send_queue_bytes < c.max_message_bytes)
		return "send queue limit must be at least the max message size";
	if (c.dupthresh < 1 || c.dupthresh > 64)
		return "dupthresh must be in [1, 64]";
	if (c.min_rto_ns < 10 * kNsPerUs || c.min_rto_ns > c.max_rto_ns ||
	    c.initial_rto_ns < c.min_rto_ns || c.initial_rto_ns > c.max_rto_ns)
		return "RTOs must satisfy 10 us <= min <= initial <= max";
	if (c.idle_restart_min_ns > 60 * kNsPerSec)
		return "idle restart threshold must be at most 60 s";
	if (c.connect_timeout_ns < c.initial_rto_ns || c.peer_timeout_ns < c.max_rto_ns)
		return "connect/peer timeouts must exceed the initial/max RTO";
	if (c.cc.initial_cwnd < 1 || c.cc.max_cwnd < c.cc.initial_cwnd)
		return "initial cwnd must be >= 1 and <= max cwnd";
	auto pe = mltcp_params_validate(&c.cc.mltcp);
	if (pe != MLTCP_PARAM_OK)
		return std::string("MLTCP parameters: ") + mltcp_params_reason(pe);
	auto de = mltcp_dcqcn_params_validate(&c.cc.dcqcn);
	if (de != MLTCP_DCQCN_PARAM_OK)
		return std::string("DCQCN parameters: ") + mltcp_dcqcn_params_reason(de);
	return "";
}

// ======================================================== Connection

Connection::Connection(Stack *stack, const EngineConfig &cfg, uint32_t local_id,
		       uint32_t peer_addr, bool active, uint64_t now_ns)
	: stack_(stack), cfg_(cfg), local_id_(local_id), peer_addr_(peer_addr),
	  state_(active ? ConnState::kSynSent : ConnState::kEstablished),
	  cc_(cfg.cc, now_ns, (uint32_t)stack->rng_()), created_ns_(now_ns), last_rx_ns_(now_ns),
	  rto_ns_(cfg.initial_rto_ns), ooo_(cfg.rcv_wnd_pkts)
{
	mltcp_dcqcn_np_init(&np_);
	if (active) {
		syn_due_ = true;
		ArmRto(now_ns);
	}
}

Status Connection::Send(std::vector<uint8_t> &&msg, uint64_t now_ns)
{
	(void)now_ns;
	if (state_ == ConnState::kClosed)
		return Status::Error(Errc::kNotOpen,
				     "send on a closed connection" +
					     (error_.ok() ? std::string() : " (" + error_.message + ")"));
	if (close_requested_)
		return Status::Error(Errc::kNotOpen, "send on a closing connection (Close() was called)");
	if (msg.size() > cfg_.max_message_bytes)
		return Status::Error(Errc::kTooLarge,
				     "message of " + std::to_string(msg.size()) +
					     " bytes exceeds the maximum message size of " +
					     std::to_string(cfg_.max_message_bytes) +
					     " bytes: split it or raise max_message_bytes");
	if (queued_bytes_ && queued_bytes_ + msg.size() > cfg_.max_send_queue_bytes)
		return Status::Error(Errc::kWouldBlock, "send queue full (" +
							       std::to_string(queued_bytes_) +
							       " bytes unacknowledged): poll and retry");
	queued_bytes_ += msg.size();
	send_q_.push_back({next_msg_id_++, std::move(msg)});
	st_.msgs_sent++;
	return Status::Ok();
}

std::vector<uint8_t> Connection::TakeBuffer()
{
	recycle_ = true;
	if (spare_.empty())
		return {};
	std::vector<uint8_t> b = std::move(spare_.back());
	spare_.pop_back();
	spare_bytes_ -= b.capacity();
	return b;
}

bool Connection::Recv(std::vector<uint8_t> *out)
{
	if (delivered_.empty())
		return false;
	// Keep the larger of the caller's old storage and our spare: a fresh
	// buffer per message costs page faults and kernel zeroing (brk).
	if (out->capacity() > rx_spare_.capacity())
		rx_spare_.swap(*out);
	*out = std::move(delivered_.front());
	delivered_.pop_front();
	unread_bytes_ -= out->size();
	// Window update when reading reopens a window we had nearly closed.
	if (last_adv_wnd_ < cfg_.rcv_wnd_pkts / 4 && AdvertisedWindow() >= cfg_.rcv_wnd_pkts / 2)
		ack_due_ = true;
	return true;
}

void Connection::Close()
{
	if (state_ == ConnState::kClosed)
		return;
	close_requested_ = true;
}

void Connection::Abort()
{
	if (state_ == ConnState::kClosed)
		return;
	reset_due_ = true;
	Fail(Errc::kNotOpen, "aborted locally");
}

void Connection::Hint(uint64_t bytes, uint64_t now_ns)
{
	cc_.Hint(bytes_acked_total_, bytes, now_ns);
}

ConnStats Connection::Stats() const
{
	ConnStats s = st_;
	s.cc = cc_.Stats();
	s.bytes_acked = bytes_acked_total_;
	s.srtt_us = (uint32_t)(srtt_ns_ / kNsPerUs);
	s.rto_us = (uint32_t)(rto_ns_ / kNsPerUs);
	s.peer_wnd = snd_wnd_edge_ - snd_una_;
	return s;
}

void Connection::Fail(Errc code, const std::string &why)
{
	if (state_ == ConnState::kClosed)
		return;
	state_ = ConnState::kClosed;
	error_ = Status::Error(code, why);
	rto_deadline_ = 0;
	retx_q_.clear();
}

uint32_t Connection::AdvertisedWindow() const
{
	uint64_t unread_pkts = (unread_bytes_ + cfg_.mss - 1) / cfg_.mss;
	return cfg_.rcv_wnd_pkts - (uint32_t)std::min<uint64_t>(unread_pkts, cfg_.rcv_wnd_pkts);
}

WireHeader Connection::BaseHeader(PacketType t, uint64_t now_ns)
{
	WireHeader h{};
	h.type = (uint8_t)t;
	h.src_conn = local_id_;
	h.dst_conn = peer_id_;
	h.ack = rcv_nxt_;
	if (ooo_count_) {
		for (uint32_t i = 0; i < kSackBits && i + 1 < cfg_.rcv_wnd_pkts; i++)
			if (ooo_[(rcv_nxt_ + 1 + i) % cfg_.rcv_wnd_pkts].present)
				h.sack[i / 64] |= 1ULL << (i % 64);
	}
	h.wnd = AdvertisedWindow();
	last_adv_wnd_ = h.wnd;
	h.ts_us = NowUs32(now_ns);
	h.ts_echo = last_ts_rx_;
	return h;
}

bool Connection::Outstanding() const
{
	bool data_waiting = seg_msg_ < send_q_.size();
	return state_ == ConnState::kSynSent || !inflight_.empty() || (fin_sent_ && !fin_acked_) ||
	       (data_waiting && !SeqLt(snd_nxt_, snd_wnd_edge_));
}

void Connection::ArmRto(uint64_t now_ns) { rto_deadline_ = now_ns + rto_ns_; }

// Tail loss probe (RFC 8985): if nothing is acked for two smoothed RTTs,
// resend the last unacknowledged packet, so that a lost tail or lost acks
// are repaired by the ack it provokes instead of by a timeout.
void Connection::ArmTlp(uint64_t now_ns)
{
	if (!srtt_ns_ || inflight_.empty() || tlp_done_) {
		tlp_deadline_ = 0;
		return;
	}
	tlp_deadline_ = now_ns + std::max<uint64_t>(2 * srtt_ns_, kMinTlpNs);
}

void Connection::FireTlp()
{
	tlp_deadline_ = 0;
	tlp_done_ = true;
	for (uint32_t i = (uint32_t)inflight_.size(); i-- > 0;) {
		TxPkt &p = inflight_[i];
		if (p.sacked)
			continue;
		if (!p.lost) {
			p.lost = true;
			lost_cnt_++;
			retx_q_.push_front(snd_una_ + i);
			st_.tlps++;
		}
		return;
	}
}

void Connection::UpdateRtt(uint32_t sample_us)
{
	uint64_t s = (uint64_t)sample_us * kNsPerUs;
	if (sample_us > (1U << 30))
		return;	// clock went backwards: not a sample
	if (min_rtt_us_ == 0 || sample_us < min_rtt_us_)
		min_rtt_us_ = std::max<uint32_t>(sample_us, 1);
	if (srtt_ns_ == 0) {
		srtt_ns_ = s;
		rttvar_ns_ = s / 2;
	} else {
		uint64_t err = s > srtt_ns_ ? s - srtt_ns_ : srtt_ns_ - s;
		rttvar_ns_ = rttvar_ns_ - rttvar_ns_ / 4 + err / 4;
		srtt_ns_ = srtt_ns_ - srtt_ns_ / 8 + s / 8;
	}
	rto_ns_ = std::clamp(srtt_ns_ + std::max<uint64_t>(4 * rttvar_ns_, 10 * kNsPerUs),
			     cfg_.min_rto_ns, cfg_.max_rto_ns);
}

void Connection::MarkLost(uint32_t idx, uint64_t now_ns)
{
	TxPkt &p = inflight_[idx];
	uint32_t seq = snd_una_ + idx;
	p.lost = true;
	lost_cnt_++;
	retx_q_.push_back(seq);
	st_.fast_retx++;
	CongestionEvent(seq, now_ns);
}

// One window reduction per window: a signal about packet `seq`, sent before
// the recovery point of the last reduction, belongs to the same episode.
bool Connection::CongestionEvent(uint32_t seq, uint64_t now_ns)
{
	if (in_recovery_ || SeqLt(seq, recovery_point_))
		return false;
	cc_.OnLoss(now_ns);
	in_recovery_ = true;
	recovery_point_ = snd_nxt_;
	return true;
}

// A window mode's ECN echo: reduce as for a loss (the reduction ends with
// the recovery point, as TCP_CA_CWR does), nothing to retransmit.
void Connection::OnEcnEcho(uint64_t now_ns)
{
	if (CongestionEvent(snd_una_, now_ns))
		st_.ecn_reductions++;
}

void Connection::DetectLosses(uint64_t now_ns)
{
	if (!sacked_cnt_ && !latest_delivered_sent_ns_)
		return;
	uint64_t reo = std::max<uint64_t>(srtt_ns_ / 4, kMinReorderNs);
	uint32_t n = (uint32_t)std::min<size_t>(inflight_.size(), kSackBits + 1);
	uint32_t sacked_above = 0;
	for (uint32_t i = n; i-- > 0;) {
		TxPkt &p = inflight_[i];
		if (p.sacked) {
			sacked_above++;
			continue;
		}
		if (p.lost)
			continue;
		// RFC 6675 IsLost, then RACK (RFC 8985): a packet sent more than
		// the reordering window before one that was delivered, and
		// outstanding for longer than srtt + that window, is lost.
		// The dupthresh rule counts packets sent after p only while p has
		// not been retransmitted; after that only send times tell.
		if ((sacked_above >= cfg_.dupthresh && !p.retransmitted) ||
		    (sacked_above && p.sent_ns + reo < latest_delivered_sent_ns_) ||
		    (sacked_above && now_ns >= p.sent_ns + srtt_ns_ + reo &&
		     p.sent_ns < latest_delivered_sent_ns_))
			MarkLost(i, now_ns);
	}
}

void Connection::ProcessAck(const WireHeader &h, uint64_t now_ns)
{
	if (SeqLt(snd_nxt_, h.ack) || SeqLt(h.ack, snd_una_))
		return;	// acks data never sent, or stale (reordered) ack
	uint32_t newly = 0;
	bool advanced = false;
	while (snd_una_ != h.ack) {
		TxPkt &p = inflight_.front();
		if (p.sacked) {
			sacked_cnt_--;
		} else {
			newly++;
			latest_delivered_sent_ns_ = std::max(latest_delivered_sent_ns_, p.sent_ns);
		}
		if (p.lost)
			lost_cnt_--;
		bytes_acked_total_ += p.len;
		if (p.last) {
			std::vector<uint8_t> &d = send_q_.front().data;
			queued_bytes_ -= d.size();
			if (recycle_ && d.capacity() &&
			    spare_bytes_ + d.capacity() + queued_bytes_ <= cfg_.max_send_queue_bytes) {
				spare_bytes_ += d.capacity();
				spare_.push_back(std::move(d));
			}
			send_q_.pop_front();
			seg_msg_--;
		}
		inflight_.pop_front();
		snd_una_++;
		advanced = true;
	}
	snd_wnd_edge_ = h.ack + h.wnd;
	for (uint32_t w = 0; w < kSackWords; w++) {
		uint64_t bits = h.sack[w];
		while (bits) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			uint32_t seq = h.ack + 1 + i;
			if (!SeqLt(seq, snd_nxt_))
				break;
			TxPkt &p = inflight_[seq - snd_una_];
			if (p.sacked)
				continue;
			p.sacked = true;
			sacked_cnt_++;
			if (p.lost) {
				p.lost = false;
				lost_cnt_--;
			}
			newly++;
			latest_delivered_sent_ns_ = std::max(latest_delivered_sent_ns_, p.sent_ns);
		}
	}
	int32_t rtt_sample_us = -1;
	if (newly && h.ts_echo) {
		rtt_sample_us = (int32_t)std::min<uint32_t>(NowUs32(now_ns) - h.ts_echo, INT32_MAX);
		UpdateRtt(NowUs32(now_ns) - h.ts_echo);
	}
	if (advanced) {
		backoff_ = 0;
		rto_deadline_ = Outstanding() ? now_ns + rto_ns_ : 0;
		tlp_done_ = false;
		ArmTlp(now_ns);
	}
	if (sacked_cnt_)
		DetectLosses(now_ns);
	if (in_recovery_ && !SeqLt(snd_una_, recovery_point_))
		in_recovery_ = false;
	if (newly) {
		AckSample s{now_ns, bytes_acked_total_, newly, (uint32_t)(srtt_ns_ / kNsPerUs),
			    cwnd_limited_, in_recovery_, rtt_sample_us, snd_una_, snd_nxt_,
			    cfg_.mss};
		cc_.OnAck(s);
	}
}

bool Connection::Consume(uint32_t msg_id, uint32_t msg_len, uint32_t off, const uint8_t *data,
			 uint32_t len)
{
	if (!cur_active_) {
		if (off != 0 || msg_id != expect_msg_id_ || msg_len > cfg_.max_message_bytes) {
			Fail(Errc::kProtocol, "peer sent message " + std::to_string(msg_id) +
						      " (length " + std::to_string(msg_len) +
						      ") where message " +
						      std::to_string(expect_msg_id_) +
						      " was expected or above the maximum size");
			reset_due_ = true;
			return false;
		}
		if (cur_msg_.capacity() < msg_len && rx_spare_.capacity() >= msg_len)
			cur_msg_.swap(rx_spare_);
		cur_msg_.clear();
		cur_msg_.reserve(msg_len);
		cur_len_ = msg_len;
		cur_fill_ = 0;
		cur_active_ = true;
	}
	if (msg_id != expect_msg_id_ || off != cur_fill_ || len > cur_len_ - cur_fill_) {
		Fail(Errc::kProtocol, "peer sent an inconsistent segment of message " +
					      std::to_string(msg_id));
		reset_due_ = true;
		return false;
	}
	cur_msg_.insert(cur_msg_.end(), data, data + len);
	cur_fill_ += len;
	if (cur_fill_ == cur_len_) {
		unread_bytes_ += cur_len_;
		st_.bytes_delivered += cur_len_;
		st_.msgs_delivered++;
		delivered_.push_back(std::move(cur_msg_));
		cur_msg_ = std::vector<uint8_t>();
		cur_active_ = false;
		expect_msg_id_++;
	}
	return true;
}

void Connection::OnData(const WireHeader &h, const uint8_t *payload, bool ce, uint64_t now_ns)
{
	last_ts_rx_ = h.ts_us;
	ack_due_ = true;
	if (ce) {
		st_.ce_rx++;
		if (mltcp_dcqcn_np_on_ce(&np_, &cfg_.cc.dcqcn, now_ns / kNsPerUs))
			cnp_due_ = true;
	}
	if (SeqLt(h.seq, rcv_nxt_)) {
		st_.dup_rx++;
		return;
	}
	uint32_t off = h.seq - rcv_nxt_;
	if (off >= cfg_.rcv_wnd_pkts) {
		st_.beyond_wnd_rx++;
		return;
	}
	if (off != 0) {
		RxSlot &s = ooo_[h.seq % cfg_.rcv_wnd_pkts];
		if (s.present) {
			st_.dup_rx++;
			return;
		}
		s.present = true;
		s.msg_id = h.msg_id;
		s.msg_len = h.msg_len;
		s.off = h.msg_off;
		s.data.assign(payload, payload + h.payload_len);
		ooo_count_++;
		st_.ooo_rx++;
		return;
	}
	if (!Consume(h.msg_id, h.msg_len, h.msg_off, payload, h.payload_len))
		return;
	rcv_nxt_++;
	while (ooo_count_) {
		RxSlot &s = ooo_[rcv_nxt_ % cfg_.rcv_wnd_pkts];
		if (!s.present)
			break;
		s.present = false;
		ooo_count_--;
		if (!Consume(s.msg_id, s.msg_len, s.off, s.data.data(), (uint32_t)s.data.size()))
			return;
		rcv_nxt_++;
	}
	MaybeFinishPeerFin();
}

void Connection::MaybeFinishPeerFin()
{
	if (peer_fin_pending_ && rcv_nxt_ == peer_fin_seq_) {
		peer_fin_pending_ = false;
		peer_fin_ = true;
		finack_due_ = true;
	}
	if (peer_fin_ && fin_acked_ && state_ != ConnState::kClosed) {
		state_ = ConnState::kClosed;	// orderly: error_ stays ok
		rto_deadline_ = 0;
	}
}

void Connection::OnPacket(const WireHeader &h, const uint8_t *payload, bool ce, uint64_t now_ns)
{
	if (state_ == ConnState::kClosed) {
		// Late FIN after we finished: the peer still wants its FIN-ACK.
		if ((PacketType)h.type == PacketType::kFin && peer_fin_)
			stack_->Reply(peer_addr_, h, PacketType::kFinAck, now_ns);
		return;
	}
	last_rx_ns_ = now_ns;
	st_.pkts_rx++;
	PacketType t = (PacketType)h.type;
	if (state_ == ConnState::kSynSent) {
		if (t == PacketType::kSynAck) {
			peer_id_ = h.src_conn;
			cfg_.mss = std::min<uint16_t>(cfg_.mss, (uint16_t)std::min<uint32_t>(h.msg_len, 65535));
			snd_wnd_edge_ = h.wnd;
			state_ = ConnState::kEstablished;
			if (h.ts_echo)
				UpdateRtt(NowUs32(now_ns) - h.ts_echo);
			backoff_ = 0;
			rto_deadline_ = 0;
			ack_due_ = true;
		} else if (t == PacketType::kReset) {
			Fail(Errc::kReset, "connection refused: the peer is not listening");
		}
		return;
	}
	switch (t) {
	case PacketType::kSyn:	// our SYN-ACK was lost
		synack_due_ = true;
		break;
	case PacketType::kSynAck:	// our ACK was lost; any packet will do
		ack_due_ = true;
		break;
	case PacketType::kData:
		ProcessAck(h, now_ns);
		OnData(h, payload, ce, now_ns);
		break;
	case PacketType::kAck:
		ProcessAck(h, now_ns);
		break;
	case PacketType::kProbe:
		ProcessAck(h, now_ns);
		ack_due_ = true;
		break;
	case PacketType::kFin:
		ProcessAck(h, now_ns);
		if (peer_fin_) {
			finack_due_ = true;	// duplicate
		} else {
			peer_fin_pending_ = true;
			peer_fin_seq_ = h.seq;
			ack_due_ = true;
		}
		MaybeFinishPeerFin();
		break;
	case PacketType::kFinAck:
		if (fin_sent_) {
			fin_acked_ = true;
			if (!Outstanding())
				rto_deadline_ = 0;
		}
		MaybeFinishPeerFin();
		break;
	case PacketType::kReset:
		Fail(Errc::kReset, "the peer reset the connection");
		break;
	case PacketType::kCnp:
		st_.cnp_rx++;
		if (CcIsRateBased(cc_.kind()))
			cc_.OnCnp(now_ns);
		else if (cc_.ecn_capable())
			OnEcnEcho(now_ns);
		break;
	}
}

void Connection::OnTimer(uint64_t now_ns)
{
	if (state_ == ConnState::kClosed)
		return;
	if (state_ == ConnState::kSynSent) {
		if (now_ns - created_ns_ > cfg_.connect_timeout_ns) {
			Fail(Errc::kTimeout, "no answer to the connection request within " +
						     Ms(cfg_.connect_timeout_ns) +
						     ": is the peer running and listening?");
			return;
		}
	} else if (Outstanding() && now_ns - last_rx_ns_ > cfg_.peer_timeout_ns) {
		Fail(Errc::kTimeout, "peer silent for " + Ms(now_ns - last_rx_ns_) +
					     " while waiting for it (" +
					     std::to_string(inflight_.size()) + " packets unacknowledged)");
		return;
	}
	if (sacked_cnt_ && srtt_ns_)
		DetectLosses(now_ns);	// the RACK reordering timer
	if (tlp_deadline_ && now_ns >= tlp_deadline_ && !inflight_.empty())
		FireTlp();
	if (!rto_deadline_ || now_ns < rto_deadline_)
		return;
	backoff_++;
	rto_ns_ = std::min(rto_ns_ * 2, cfg_.max_rto_ns);
	if (state_ == ConnState::kSynSent) {
		syn_due_ = true;
	} else if (!inflight_.empty()) {
		st_.rtos++;
		for (uint32_t i = 0; i < inflight_.size(); i++) {
			TxPkt &p = inflight_[i];
			if (!p.sacked && !p.lost) {
				p.lost = true;
				lost_cnt_++;
				retx_q_.push_back(snd_una_ + i);
			}
		}
		cc_.OnRto(now_ns, snd_nxt_);
		in_recovery_ = false;
		recovery_point_ = snd_nxt_;
	} else if (fin_sent_ && !fin_acked_) {
		fin_due_ = true;
	} else if (Outstanding()) {
		probe_due_ = true;	// zero window
		st_.probes++;
	}
	rto_deadline_ = Outstanding() ? now_ns + rto_ns_ : 0;
}

bool Connection::PacingAllows(uint64_t now_ns) const
{
	return cc_.rate_bps() == 0 || now_ns >= next_tx_ns_;
}

void Connection::Paced(uint64_t now_ns, uint32_t bytes)
{
	uint64_t rate = cc_.rate_bps();
	if (!rate)
		return;
	uint64_t gap = (uint64_t)(bytes + kWireOverhead) * 8 * kNsPerSec / rate;
	uint64_t slack = std::max<uint64_t>(gap * kPacingBurstPkts, kPacingSlackNs);
	uint64_t floor = now_ns > slack ? now_ns - slack : 0;
	next_tx_ns_ = std::max(next_tx_ns_, floor) + gap;
}

bool Connection::EmitData(uint64_t now_ns, PacketSink *sink, uint32_t idx, bool retx)
{
	TxPkt &p = inflight_[idx];
	OutPacket o;
	o.peer_addr = peer_addr_;
	o.hdr = BaseHeader(PacketType::kData, now_ns);
	o.hdr.seq = snd_una_ + idx;
	o.hdr.msg_id = p.msg_id;
	o.hdr.msg_len = p.msg_len;
	o.hdr.msg_off = p.off;
	o.hdr.payload_len = p.len;
	o.payload = p.data;
	o.ect = cc_.ecn_capable();
	if (!sink->Send(o)) {
		stack_->stats_.tx_blocked++;
		return false;
	}
	p.sent_ns = now_ns;
	last_send_ns_ = now_ns;
	ack_due_ = false;	// piggybacked
	st_.pkts_sent++;
	if (retx)
		st_.pkts_retx++;
	else
		st_.bytes_sent += p.len;
	cc_.OnSent(p.len + kWireOverhead, now_ns);
	Paced(now_ns, p.len);
	return true;
}

void Connection::Output(uint64_t now_ns, PacketSink *sink)
{
	auto control = [&](PacketType t, uint32_t seq, bool *due) {
		OutPacket o{};
		o.peer_addr = peer_addr_;
		o.hdr = BaseHeader(t, now_ns);
		o.hdr.seq = seq;
		if (t == PacketType::kSyn || t == PacketType::kSynAck)
			o.hdr.msg_len = cfg_.mss;
		if (sink->Send(o)) {
			*due = false;
			if (t != PacketType::kCnp)
				ack_due_ = false;
		} else {
			stack_->stats_.tx_blocked++;
		}
	};
	if (state_ == ConnState::kClosed) {
		if (reset_due_ && peer_id_)
			control(PacketType::kReset, 0, &reset_due_);
		if (finack_due_)
			control(PacketType::kFinAck, 0, &finack_due_);
		return;
	}
	if (syn_due_)
		control(PacketType::kSyn, 0, &syn_due_);
	if (synack_due_)
		control(PacketType::kSynAck, 0, &synack_due_);
	if (state_ != ConnState::kEstablished)
		return;
	cc_.Advance(now_ns);
	const uint32_t cwnd = cc_.cwnd();

	// Retransmissions first.
	while (!retx_q_.empty()) {
		uint32_t seq = retx_q_.front();
		if (SeqLt(seq, snd_una_) || !inflight_[seq - snd_una_].lost) {
			retx_q_.pop_front();
			continue;
		}
		if (Pipe() >= cwnd) {
			cwnd_limited_ = true;
			break;
		}
		if (!PacingAllows(now_ns) || !EmitData(now_ns, sink, seq - snd_una_, true))
			break;
		TxPkt &p = inflight_[seq - snd_una_];
		p.lost = false;
		p.retransmitted = true;
		lost_cnt_--;
		retx_q_.pop_front();
	}

	// New data.
	bool out_of_data = true;
	while (seg_msg_ < send_q_.size()) {
		if (!SeqLt(snd_nxt_, snd_wnd_edge_)) {	// receiver window closed
			if (!rto_deadline_)
				ArmRto(now_ns);	// probe when it stays closed
			out_of_data = false;
			break;
		}
		if (Pipe() >= cwnd) {
			cwnd_limited_ = true;
			out_of_data = false;
			break;
		}
		if (!PacingAllows(now_ns)) {
			out_of_data = false;
			break;
		}
		if (inflight_.empty()) {
			cc_.OnTxStart({now_ns, bytes_acked_total_, (uint32_t)(srtt_ns_ / kNsPerUs),
				       min_rtt_us_, cfg_.mss, st_.bytes_delivered});
			uint64_t idle = now_ns - last_send_ns_;
			uint64_t restart_ns = std::max(rto_ns_, cfg_.idle_restart_min_ns);
			if (last_send_ns_ && idle > restart_ns)
				cc_.RestartAfterIdle((uint32_t)std::min<uint64_t>(idle / restart_ns, 32));
		}
		SendMsg &m = send_q_[seg_msg_];
		uint32_t size = (uint32_t)m.data.size();
		uint32_t len = std::min<uint32_t>(cfg_.mss, size - seg_off_);
		TxPkt p{m.id, size, seg_off_, (uint16_t)len, seg_off_ + len == size,
			false, false, false, now_ns, m.data.data() + seg_off_};
		inflight_.push_back(p);
		if (!EmitData(now_ns, sink, (uint32_t)inflight_.size() - 1, false)) {
			inflight_.pop_back();
			out_of_data = false;
			break;
		}
		snd_nxt_++;
		if (!rto_deadline_)
			ArmRto(now_ns);
		if (!tlp_deadline_)
			ArmTlp(now_ns);
		if (p.last) {
			seg_msg_++;
			seg_off_ = 0;
		} else {
			seg_off_ += len;
		}
	}
	if (out_of_data)
		cwnd_limited_ = Pipe() * 2 >= cwnd;

	if (close_requested_ && !fin_sent_ && send_q_.empty() && inflight_.empty()) {
		fin_sent_ = true;
		fin_due_ = true;
		fin_seq_ = snd_nxt_;
		ArmRto(now_ns);
	}
	if (fin_due_)
		control(PacketType::kFin, fin_seq_, &fin_due_);
	if (finack_due_)
		control(PacketType::kFinAck, 0, &finack_due_);
	if (probe_due_)
		control(PacketType::kProbe, snd_nxt_, &probe_due_);
	if (cnp_due_) {
		control(PacketType::kCnp, 0, &cnp_due_);
		if (!cnp_due_)
			st_.cnp_tx++;
	}
	if (ack_due_)
		control(PacketType::kAck, 0, &ack_due_);
}

// ======================================================== Stack

Stack::Stack(const EngineConfig &cfg, PacketSink *sink, uint64_t seed)
	: cfg_(cfg), sink_(sink), rng_(seed)
{
	std::string why = ValidateEngineConfig(cfg);
	if (!why.empty())
		throw std::invalid_argument(why);
}

Stack::~Stack() = default;

uint32_t Stack::NewId()
{
	for (;;) {
		uint32_t id = (uint32_t)rng_();
		if (id && !conns_.count(id))
			return id;
	}
}

Connection *Stack::Connect(uint32_t peer_addr, const CcConfig &cc, uint64_t now_ns, Status *err)
{
	EngineConfig c = cfg_;
	c.cc = cc;
	std::string why = ValidateEngineConfig(c);
	if (!why.empty()) {
		if (err)
			*err = Status::Error(Errc::kInvalid, why);
		return nullptr;
	}
	uint32_t id = NewId();
	auto conn = std::make_unique<Connection>(this, c, id, peer_addr, true, now_ns);
	Connection *raw = conn.get();
	conns_[id] = std::move(conn);
	return raw;
}

void Stack::Listen(const CcConfig &cc)
{
	EngineConfig c = cfg_;
	c.cc = cc;
	std::string why = ValidateEngineConfig(c);
	if (!why.empty())
		throw std::invalid_argument(why);
	listening_ = true;
	listen_cc_ = cc;
}

Connection *Stack::Accept()
{
	while (!accept_q_.empty()) {
		uint32_t id = accept_q_.front();
		accept_q_.pop_front();
		auto it = conns_.find(id);
		if (it != conns_.end())
			return it->second.get();
	}
	return nullptr;
}

void Stack::Release(Connection *c)
{
	if (!c)
		return;
	auto it = conns_.find(c->id());
	if (it == conns_.end())
		return;
	if (!c->closed() && c->peer_id()) {
		WireHeader in{};
		in.src_conn = c->peer_id();
		in.dst_conn = c->id();
		Reply(c->peer_addr(), in, PacketType::kReset, 0);
	}
	conns_.erase(it);
}

void Stack::Reply(uint32_t addr, const WireHeader &in, PacketType t, uint64_t now_ns)
{
	OutPacket o{};
	o.peer_addr = addr;
	o.hdr.type = (uint8_t)t;
	o.hdr.src_conn = in.dst_conn;
	o.hdr.dst_conn = in.src_conn;
	o.hdr.ts_us = NowUs32(now_ns);
	o.hdr.ts_echo = in.ts_us;
	if (!sink_->Send(o))
		stats_.tx_blocked++;
}

void Stack::OnPacket(uint32_t src_addr, const uint8_t *buf, size_t len, bool ce, uint64_t now_ns)
{
	WireHeader h;
	const uint8_t *payload = nullptr;
	ParseError e = Parse(buf, len, &h, &payload);
	if (e != ParseError::kOk) {
		if (e == ParseError::kBadChecksum)
			stats_.rx_bad_checksum++;
		else
			stats_.rx_parse_errors++;
		return;
	}
	PacketType t = (PacketType)h.type;
	if (t == PacketType::kSyn) {
		for (auto &kv : conns_) {
			Connection *c = kv.second.get();
			if (c->peer_addr() == src_addr && c->peer_id() == h.src_conn) {
				c->OnPacket(h, payload, ce, now_ns);
				return;
			}
		}
		if (!listening_) {
			stats_.rx_unknown_conn++;
			Reply(src_addr, h, PacketType::kReset, now_ns);
			return;
		}
		EngineConfig c = cfg_;
		c.cc = listen_cc_;
		c.mss = std::min<uint16_t>(cfg_.mss, (uint16_t)std::min<uint32_t>(h.msg_len, 65535));
		if (c.mss < 64) {
			stats_.rx_parse_errors++;
			return;
		}
		uint32_t id = NewId();
		auto conn = std::make_unique<Connection>(this, c, id, src_addr, false, now_ns);
		conn->peer_id_ = h.src_conn;
		conn->snd_wnd_edge_ = h.wnd;
		conn->last_ts_rx_ = h.ts_us;
		conn->synack_due_ = true;
		conns_[id] = std::move(conn);
		accept_q_.push_back(id);
		return;
	}
	auto it = conns_.find(h.dst_conn);
	if (it == conns_.end() || it->second->peer_addr() != src_addr ||
	    (it->second->peer_id() && it->second->peer_id() != h.src_conn)) {
		stats_.rx_unknown_conn++;
		if (t == PacketType::kFin)
			Reply(src_addr, h, PacketType::kFinAck, now_ns);
		else if (t != PacketType::kReset && t != PacketType::kFinAck && t != PacketType::kCnp)
			Reply(src_addr, h, PacketType::kReset, now_ns);
		return;
	}
	it->second->OnPacket(h, payload, ce, now_ns);
}

void Stack::Poll(uint64_t now_ns)
{
	for (auto &kv : conns_) {
		kv.second->OnTimer(now_ns);
		kv.second->Output(now_ns, sink_);
	}
}

}  // namespace mltcp_dpdk
