// verbs.h - RC queue pairs over rdma-core (librdmacm for connection set-up,
// libibverbs for the data path) with owned resources, timeouts on every
// wait and errors that say what failed and what to do.  The bulk transfer
// protocol on top (data SENDs, an iteration-end SEND_WITH_IMM, the
// receiver's confirmation carrying bytes and checksum) is in transfer.h.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mltcp_rdma {

// Every failure of this layer: the message is meant for the user.
struct RdmaError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// Names of the RDMA devices present; throws with advice when there are none.
std::vector<std::string> ListDevices();
// Throws unless `name` is one of ListDevices().
void CheckDevice(const std::string &name);

struct QpConfig {
	uint32_t msg_bytes = 16384;	// bytes per data SEND
	uint32_t depth = 16;		// data SENDs in flight / RECVs posted
	uint8_t tos = 0x02;		// IP TOS of the RoCEv2 packets: ECT(0)
	int timeout_ms = 5000;		// connection set-up steps
};

// One connected RC QP with its PD, CQ, completion channel and buffers.
class Conn {
 public:
	~Conn();
	Conn(const Conn &) = delete;
	Conn &operator=(const Conn &) = delete;

	// Active side: resolve, connect.  `src` (optional) is the local
	// address, which selects the device; `dev` (optional) must be the
	// device the connection ends up on.
	static Conn *Connect(const std::string &host, uint16_t port, const std::string &src,
			     const std::string &dev, const QpConfig &cfg);

	ibv_qp *qp() const { return id_->qp; }
	uint32_t qpn() const { return id_->qp->qp_num; }
	std::string device() const;
	uint32_t remote_qpn() const { return remote_qpn_; }
	// IPv4 addresses of the two ends, network byte order.
	uint32_t local_ip() const;
	uint32_t peer_ip() const;
	uint8_t *send_buf(uint32_t slot) { return buf_.data() + (size_t)slot * cfg_.msg_bytes; }
	uint8_t *recv_buf(uint32_t slot)
	{
		return buf_.data() + (size_t)(cfg_.depth + slot) * cfg_.msg_bytes;
	}
	const QpConfig &cfg() const { return cfg_; }

	void PostSend(uint32_t slot, uint32_t len, bool imm, uint32_t imm_data, uint64_t wr_id);
	void PostRecv(uint32_t slot);
	// Polls up to `max` completions; waits up to timeout_ns for one when
	// none is ready.  Returns the number in wc[].
	int Poll(ibv_wc *wc, int max, int64_t timeout_ns);
	// Tries the device's per-QP rate limit; false (with errno text in
	// *why) when the device does not support it.
	bool SetRateLimit(uint64_t rate_bps, std::string *why);
	// Non-blocking look at the CM channel: true if the peer disconnected.
	bool PeerDisconnected();

 private:
	friend class Listener;
	Conn(rdma_event_channel *ch, rdma_cm_id *id, const QpConfig &cfg);
	void Setup();	// PD, CQ, QP, MR, initial RECVs
	void Established();	// after ESTABLISHED: remote QPN, retry timeout

	rdma_event_channel *ch_ = nullptr;
	rdma_cm_id *id_ = nullptr;
	ibv_pd *pd_ = nullptr;
	ibv_comp_channel *cc_ = nullptr;
	ibv_cq *cq_ = nullptr;
	ibv_mr *mr_ = nullptr;
	QpConfig cfg_;
	std::vector<uint8_t> buf_;
	uint32_t remote_qpn_ = 0;
	bool qp_created_ = false;
	bool connected_ = false;
	bool disconnected_ = false;
};

class Listener {
 public:
	Listener(const std::string &bind_ip, uint16_t port, const QpConfig &cfg);
	~Listener();
	Listener(const Listener &) = delete;
	Listener &operator=(const Listener &) = delete;
	// Waits up to timeout_ms for one connection (-1: forever).
	Conn *Accept(int timeout_ms);

 private:
	rdma_event_channel *ch_ = nullptr;
	rdma_cm_id *id_ = nullptr;
	QpConfig cfg_;
};

// Text of a work completion status for error messages.
std::string WcError(const ibv_wc &wc);

}  // namespace mltcp_rdma
