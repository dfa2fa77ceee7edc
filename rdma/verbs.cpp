// verbs.cpp - see verbs.h.  Follows the structure of rdma-core's
// librdmacm/examples/rping.c (event channel, resolve addr/route, create QP,
// connect/accept), but waits on the CM and completion channels with poll()
// and a timeout, so a missing or vanished peer is an error, never a hang.
#include "verbs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace mltcp_rdma {

namespace {

constexpr int kCqExtra = 8;		// CQ entries beyond sends + recvs
constexpr uint8_t kRnrRetryInfinite = 7;
constexpr uint8_t kRetryCount = 7;
// Local ACK timeout 4.096 us * 2^14 = 67 ms: with 7 retries a vanished peer
// is detected in about half a second instead of rdma_cm's default ~15 s.
constexpr uint8_t kAckTimeoutExp = 14;

std::string errno_text(const std::string &what)
{
	return what + ": " + strerror(errno);
}

void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		throw RdmaError(errno_text("fcntl"));
}

rdma_event_channel *make_channel()
{
	rdma_event_channel *ch = rdma_create_event_channel();
	if (!ch)
		throw RdmaError(errno_text("cannot open the RDMA CM (/dev/infiniband/rdma_cm)") +
				"; load rdma_ucm (modprobe rdma_ucm) and an RDMA device");
	set_nonblock(ch->fd);
	return ch;
}

// Waits for the next CM event on `ch` (for any id); returns it acked-later.
rdma_cm_event *wait_event(rdma_event_channel *ch, int timeout_ms, const std::string &what)
{
	for (;;) {
		rdma_cm_event *ev = nullptr;
		if (rdma_get_cm_event(ch, &ev) == 0)
			return ev;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			throw RdmaError(errno_text("rdma_get_cm_event while " + what));
		pollfd p{ch->fd, POLLIN, 0};
		int r = poll(&p, 1, timeout_ms);
		if (r == 0)
			throw RdmaError("timed out after " + std::to_string(timeout_ms) +
					" ms while " + what);
		if (r < 0 && errno != EINTR)
			throw RdmaError(errno_text("poll"));
	}
}

// Expects one event type; anything else is an error that names both.
void expect_event(rdma_event_channel *ch, rdma_cm_event_type want, int timeout_ms,
		  const std::string &what)
{
	rdma_cm_event *ev = wait_event(ch, timeout_ms, what);
	rdma_cm_event_type got = ev->event;
	int status = ev->status;
	rdma_ack_cm_event(ev);
	if (got == want)
		return;
	std::string msg = what + " failed: " + rdma_event_str(got);
	if (got == RDMA_CM_EVENT_REJECTED)
		msg = "connection refused while " + what + " (no mltcp-rdma server listening "
		      "there, or it refused the QP; reject reason " + std::to_string(status) + ")";
	else if (got == RDMA_CM_EVENT_ADDR_ERROR)
		msg = what + " failed: address not reachable through any RDMA device (" +
		      std::string(strerror(status < 0 ? -status : status)) + ")";
	else if (status)
		msg += " (status " + std::to_string(status) + ")";
	throw RdmaError(msg);
}

}  // namespace

std::vector<std::string> ListDevices()
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		throw RdmaError(errno_text("no RDMA device found (ibv_get_device_list") +
				"): this kernel has no RDMA support loaded; modprobe ib_uverbs "
				"and a NIC driver, or rdma_rxe for soft-RoCE");
	std::vector<std::string> names;
	for (int i = 0; i < n; i++)
		names.push_back(ibv_get_device_name(list[i]));
	ibv_free_device_list(list);
	if (names.empty())
		throw RdmaError("no RDMA device found: load a NIC's RDMA driver, or for "
				"soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe "
				"netdev <interface>");
	return names;
}

void CheckDevice(const std::string &name)
{
	std::vector<std::string> names = ListDevices();
	std::string all;
	for (const auto &n : names) {
		if (n == name)
			return;
		all += (all.empty() ? "" : " ") + n;
	}
	throw RdmaError("unknown RDMA device '" + name + "'; devices present: " + all);
}

std::string WcError(const ibv_wc &wc)
{
	std::string s = ibv_wc_status_str(wc.status);
	if (wc.status == IBV_WC_RETRY_EXC_ERR || wc.status == IBV_WC_RNR_RETRY_EXC_ERR)
		s += " (the peer stopped answering: process gone or link down)";
	else if (wc.status == IBV_WC_WR_FLUSH_ERR)
		s += " (QP in error state: the connection was torn down)";
	else if (wc.status == IBV_WC_REM_OP_ERR || wc.status == IBV_WC_REM_INV_REQ_ERR)
		/* soft-RoCE answers so when the peer's process died and its QP
		 * was torn down while our sends were in flight */
		s += " (the peer's QP could not complete it: process gone or its QP torn down)";
	return s;
}

// ---------------------------------------------------------------- Conn

Conn::Conn(rdma_event_channel *ch, rdma_cm_id *id, const QpConfig &cfg)
    : ch_(ch), id_(id), cfg_(cfg)
{
}

Conn::~Conn()
{
	if (connected_ && !disconnected_)
		rdma_disconnect(id_);
	if (qp_created_)
		rdma_destroy_qp(id_);
	if (mr_)
		ibv_dereg_mr(mr_);
	if (cq_)
		ibv_destroy_cq(cq_);
	if (cc_)
		ibv_destroy_comp_channel(cc_);
	if (pd_)
		ibv_dealloc_pd(pd_);
	if (id_)
		rdma_destroy_id(id_);
	if (ch_)
		rdma_destroy_event_channel(ch_);
}

uint32_t Conn::local_ip() const
{
	const sockaddr *a = rdma_get_local_addr(id_);
	return a && a->sa_family == AF_INET ? ((const sockaddr_in *)a)->sin_addr.s_addr : 0;
}

uint32_t Conn::peer_ip() const
{
	const sockaddr *a = rdma_get_peer_addr(id_);
	return a && a->sa_family == AF_INET ? ((const sockaddr_in *)a)->sin_addr.s_addr : 0;
}

void Conn::Established()
{
	connected_ = true;
	ibv_qp_attr attr{};
	ibv_qp_init_attr init{};
	if (ibv_query_qp(id_->qp, &attr, IBV_QP_DEST_QPN, &init) == 0)
		remote_qpn_ = attr.dest_qp_num;
	ibv_qp_attr t{};
	t.timeout = kAckTimeoutExp;
	ibv_modify_qp(id_->qp, &t, IBV_QP_TIMEOUT);	// best effort
}

std::string Conn::device() const
{
	return id_ && id_->verbs ? ibv_get_device_name(id_->verbs->device) : "?";
}

void Conn::Setup()
{
	if (!id_->verbs)
		throw RdmaError("the CM id has no device");
	pd_ = ibv_alloc_pd(id_->verbs);
	if (!pd_)
		throw RdmaError(errno_text("ibv_alloc_pd on " + device()));
	cc_ = ibv_create_comp_channel(id_->verbs);
	if (!cc_)
		throw RdmaError(errno_text("ibv_create_comp_channel"));
	set_nonblock(cc_->fd);
	int cqe = (int)(2 * cfg_.depth + kCqExtra);
	cq_ = ibv_create_cq(id_->verbs, cqe, nullptr, cc_, 0);
	if (!cq_)
		throw RdmaError(errno_text("ibv_create_cq"));
	if (ibv_req_notify_cq(cq_, 0))
		throw RdmaError(errno_text("ibv_req_notify_cq"));
	ibv_qp_init_attr qa{};
	qa.send_cq = cq_;
	qa.recv_cq = cq_;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = cfg_.depth + 1;
	qa.cap.max_recv_wr = cfg_.depth + 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id_, pd_, &qa))
		throw RdmaError(errno_text("rdma_create_qp on " + device()));
	qp_created_ = true;
	buf_.assign((size_t)2 * cfg_.depth * cfg_.msg_bytes, 0);
	mr_ = ibv_reg_mr(pd_, buf_.data(), buf_.size(), IBV_ACCESS_LOCAL_WRITE);
	if (!mr_)
		throw RdmaError(errno_text("ibv_reg_mr of " + std::to_string(buf_.size()) +
					   " bytes (check ulimit -l)"));
	for (uint32_t i = 0; i < cfg_.depth; i++)
		PostRecv(i);
}

Conn *Conn::Connect(const std::string &host, uint16_t port, const std::string &src,
		    const std::string &dev, const QpConfig &cfg)
{
	if (!dev.empty())
		CheckDevice(dev);
	else
		ListDevices();	// a clear error when there is no device at all
	addrinfo hints{}, *res = nullptr;
	hints.ai_family = AF_INET;
	int gr = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
	if (gr)
		throw RdmaError("cannot resolve '" + host + "': " + gai_strerror(gr));
	sockaddr_storage dst{};
	memcpy(&dst, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	sockaddr_in src_addr{};
	src_addr.sin_family = AF_INET;
	if (!src.empty() && inet_pton(AF_INET, src.c_str(), &src_addr.sin_addr) != 1)
		throw RdmaError("--src '" + src + "' is not an IPv4 address");

	rdma_event_channel *ch = make_channel();
	rdma_cm_id *id = nullptr;
	if (rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP)) {
		rdma_destroy_event_channel(ch);
		throw RdmaError(errno_text("rdma_create_id"));
	}
	Conn *c = new Conn(ch, id, cfg);
	try {
		const std::string where = host + ":" + std::to_string(port);
		if (rdma_resolve_addr(id, src.empty() ? nullptr : (sockaddr *)&src_addr,
				      (sockaddr *)&dst, cfg.timeout_ms))
			throw RdmaError(errno_text("rdma_resolve_addr " + where));
		expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, cfg.timeout_ms + 1000,
			     "resolving " + where);
		if (!dev.empty() && c->device() != dev)
			throw RdmaError("route to " + where + " uses RDMA device " + c->device() +
					", not --dev " + dev + " (use --src to pick the local address)");
		uint8_t tos = cfg.tos;
		if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos))
			throw RdmaError(errno_text("setting the RoCE TOS"));
		if (rdma_resolve_route(id, cfg.timeout_ms))
			throw RdmaError(errno_text("rdma_resolve_route " + where));
		expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, cfg.timeout_ms + 1000,
			     "resolving the route to " + where);
		c->Setup();
		rdma_conn_param cp{};
		cp.retry_count = kRetryCount;
		cp.rnr_retry_count = kRnrRetryInfinite;
		if (rdma_connect(id, &cp))
			throw RdmaError(errno_text("rdma_connect " + where));
		expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, cfg.timeout_ms,
			     "connecting to " + where);
		c->Established();
	} catch (...) {
		delete c;
		throw;
	}
	return c;
}

void Conn::PostSend(uint32_t slot, uint32_t len, bool imm, uint32_t imm_data, uint64_t wr_id)
{
	ibv_sge sge{(uintptr_t)send_buf(slot), len, mr_->lkey};
	ibv_send_wr wr{}, *bad = nullptr;
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.imm_data = htonl(imm_data);
	wr.send_flags = IBV_SEND_SIGNALED;
	int r = ibv_post_send(id_->qp, &wr, &bad);
	if (r)
		throw RdmaError(std::string("ibv_post_send: ") + strerror(r));
}

void Conn::PostRecv(uint32_t slot)
{
	ibv_sge sge{(uintptr_t)recv_buf(slot), cfg_.msg_bytes, mr_->lkey};
	ibv_recv_wr wr{}, *bad = nullptr;
	wr.wr_id = slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	int r = ibv_post_recv(id_->qp, &wr, &bad);
	if (r)
		throw RdmaError(std::string("ibv_post_recv: ") + strerror(r));
}

int Conn::Poll(ibv_wc *wc, int max, int64_t timeout_ns)
{
	for (int round = 0; round < 2; round++) {
		int n = ibv_poll_cq(cq_, max, wc);
		if (n < 0)
			throw RdmaError("ibv_poll_cq failed");
		if (n > 0 || timeout_ns <= 0)
			return n;
		if (round == 1)
			return 0;
		pollfd p{cc_->fd, POLLIN, 0};
		timespec ts{(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
		int r = ppoll(&p, 1, &ts, nullptr);
		if (r < 0 && errno != EINTR)
			throw RdmaError(errno_text("ppoll on the completion channel"));
		if (r > 0) {
			ibv_cq *cq;
			void *ctx;
			if (ibv_get_cq_event(cc_, &cq, &ctx) == 0) {
				ibv_ack_cq_events(cq, 1);
				if (ibv_req_notify_cq(cq_, 0))
					throw RdmaError(errno_text("ibv_req_notify_cq"));
			}
		}
	}
	return 0;
}

bool Conn::SetRateLimit(uint64_t rate_bps, std::string *why)
{
	ibv_qp_rate_limit_attr a{};
	a.rate_limit = (uint32_t)(rate_bps / 1000);	// kbit/s
	int r = ibv_modify_qp_rate_limit(id_->qp, &a);
	if (r == 0)
		return true;
	int e = r > 0 ? r : errno;
	*why = strerror(e);
	return false;
}

bool Conn::PeerDisconnected()
{
	if (disconnected_)
		return true;
	rdma_cm_event *ev = nullptr;
	while (rdma_get_cm_event(ch_, &ev) == 0) {
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			disconnected_ = true;
		rdma_ack_cm_event(ev);
	}
	return disconnected_;
}

// ---------------------------------------------------------------- Listener

Listener::Listener(const std::string &bind_ip, uint16_t port, const QpConfig &cfg)
    : cfg_(cfg)
{
	ListDevices();
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	if (inet_pton(AF_INET, bind_ip.c_str(), &a.sin_addr) != 1)
		throw RdmaError("--bind '" + bind_ip + "' is not an IPv4 address");
	ch_ = make_channel();
	if (rdma_create_id(ch_, &id_, nullptr, RDMA_PS_TCP)) {
		rdma_destroy_event_channel(ch_);
		throw RdmaError(errno_text("rdma_create_id"));
	}
	if (rdma_bind_addr(id_, (sockaddr *)&a)) {
		std::string e = errno_text("cannot bind " + bind_ip + ":" + std::to_string(port));
		rdma_destroy_id(id_);
		rdma_destroy_event_channel(ch_);
		throw RdmaError(e + " (is the address on an RDMA-capable interface?)");
	}
	if (rdma_listen(id_, 4)) {
		std::string e = errno_text("rdma_listen");
		rdma_destroy_id(id_);
		rdma_destroy_event_channel(ch_);
		throw RdmaError(e);
	}
}

Listener::~Listener()
{
	rdma_destroy_id(id_);
	rdma_destroy_event_channel(ch_);
}

Conn *Listener::Accept(int timeout_ms)
{
	for (;;) {
		rdma_cm_event *ev = wait_event(ch_, timeout_ms, "waiting for a client");
		if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_ack_cm_event(ev);
			continue;
		}
		rdma_cm_id *child = ev->id;
		rdma_ack_cm_event(ev);
		rdma_event_channel *ch = make_channel();
		if (rdma_migrate_id(child, ch)) {
			std::string e = errno_text("rdma_migrate_id");
			rdma_reject(child, nullptr, 0);
			rdma_destroy_id(child);
			rdma_destroy_event_channel(ch);
			throw RdmaError(e);
		}
		Conn *c = new Conn(ch, child, cfg_);
		try {
			c->Setup();
			rdma_conn_param cp{};
			cp.retry_count = kRetryCount;
			cp.rnr_retry_count = kRnrRetryInfinite;
			if (rdma_accept(child, &cp))
				throw RdmaError(errno_text("rdma_accept"));
			expect_event(ch, RDMA_CM_EVENT_ESTABLISHED, cfg_.timeout_ms,
				     "accepting a client");
			c->Established();
		} catch (...) {
			delete c;
			throw;
		}
		return c;
	}
}

}  // namespace mltcp_rdma
