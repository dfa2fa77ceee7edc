// roce_observer.cpp - see roce_observer.h.  Attachment follows
// libbpf-bootstrap's tc.c (bpf_tc_hook_create + bpf_tc_attach), but the
// filter and maps stay after the process exits (pinned), so the receiver
// and sender processes read them and `observe --detach` removes them.
//
// The CNP is a RoCEv2 packet built whole by BuildCnp (roce_wire.h): IPv4
// and UDP headers, BTH with opcode 0x81 (CNP), P_Key 0xffff, BECN and the
// sender's QP as destination, 16 reserved bytes and the ICRC.  The ICRC
// covers the IP header (its ID and length among others), so the packet goes
// through a raw socket with IP_HDRINCL (IPPROTO_RAW: send only) rather than
// a UDP socket whose IP header the kernel would choose: ID 0 with DF, which
// Linux leaves as it is, and the kernel's recomputed header checksum equals
// ours; TOS, TTL and checksum are masked out of the ICRC anyway.  rxe in
// 6.1 has no DCQCN reaction point and drops CNPs (before its ICRC check,
// for the opcode); the userspace reaction point consumes what the observer
// counted.
#include "roce_observer.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "roce_observer.skel.h"
#include "roce_wire.h"
#include "verbs.h"

namespace mltcp_rdma {

namespace {

constexpr uint16_t kDefaultPkey = 0xffff;
// IP TOS of CNPs: DSCP 48 (mlx5's default cnp_dscp), not ECN-capable.
constexpr uint8_t kCnpTos = 48 << 2;
constexpr uint32_t kTcHandle = 0x4d4c;	// "ML"
constexpr uint32_t kTcPriority = 1;
constexpr const char *kMaps[] = {"ce_count", "cnp_count", "stats"};

std::string pin(const std::string &dir, const char *name) { return dir + "/" + name; }

bpf_tc_hook hook_for(const std::string &iface)
{
	unsigned idx = if_nametoindex(iface.c_str());
	if (!idx)
		throw RdmaError("interface '" + iface + "': " + strerror(errno));
	bpf_tc_hook h{};
	h.sz = sizeof h;
	h.ifindex = (int)idx;
	h.attach_point = BPF_TC_INGRESS;
	return h;
}

}  // namespace

void ObserverAttach(const std::string &iface, const std::string &pin_dir)
{
	bpf_tc_hook hook = hook_for(iface);
	ObserverDetach(iface, pin_dir);	// leftovers of a crashed run
	roce_observer_bpf *skel = roce_observer_bpf__open_and_load();
	if (!skel)
		throw RdmaError(std::string("loading the RoCE observer BPF program failed: ") +
				strerror(errno) + " (root and a kernel with BPF tc support needed)");
	if (mkdir(pin_dir.c_str(), 0700) && errno != EEXIST) {
		roce_observer_bpf__destroy(skel);
		throw RdmaError("mkdir " + pin_dir + ": " + strerror(errno));
	}
	bpf_map *maps[] = {skel->maps.ce_count, skel->maps.cnp_count, skel->maps.stats};
	for (size_t i = 0; i < 3; i++)
		if (bpf_map__pin(maps[i], pin(pin_dir, kMaps[i]).c_str())) {
			roce_observer_bpf__destroy(skel);
			throw RdmaError("pinning " + pin(pin_dir, kMaps[i]) + " failed (is bpffs "
					"mounted on /sys/fs/bpf?)");
		}
	int r = bpf_tc_hook_create(&hook);
	if (r && r != -EEXIST) {
		roce_observer_bpf__destroy(skel);
		throw RdmaError("creating the clsact qdisc on " + iface + ": " + strerror(-r));
	}
	bpf_tc_opts o{};
	o.sz = sizeof o;
	o.handle = kTcHandle;
	o.priority = kTcPriority;
	o.prog_fd = bpf_program__fd(skel->progs.roce_ingress);
	r = bpf_tc_attach(&hook, &o);
	roce_observer_bpf__destroy(skel);	// the filter and pins keep it alive
	if (r)
		throw RdmaError("attaching the observer at tc ingress of " + iface + ": " +
				strerror(-r));
}

void ObserverDetach(const std::string &iface, const std::string &pin_dir)
{
	bpf_tc_hook hook = hook_for(iface);
	bpf_tc_opts o{};
	o.sz = sizeof o;
	o.handle = kTcHandle;
	o.priority = kTcPriority;
	libbpf_print_fn_t old = libbpf_set_print(nullptr);	// absent filter: quiet
	bpf_tc_detach(&hook, &o);
	libbpf_set_print(old);
	for (const char *m : kMaps)
		unlink(pin(pin_dir, m).c_str());
	rmdir(pin_dir.c_str());
}

std::string ObserverStats(const std::string &pin_dir)
{
	int fd = bpf_obj_get(pin(pin_dir, "stats").c_str());
	if (fd < 0)
		throw RdmaError(pin(pin_dir, "stats") + ": " + strerror(errno) +
				" (no observer attached with this --pin)");
	const char *names[] = {"roce", "ce", "cnp"};
	std::string s;
	for (uint32_t k = 0; k < 3; k++) {
		uint64_t v = 0;
		bpf_map_lookup_elem(fd, &k, &v);
		s += std::string(k ? " " : "") + names[k] + "=" + std::to_string(v);
	}
	close(fd);
	return s;
}

QpCounter::QpCounter(const std::string &pinned_map)
{
	fd_ = bpf_obj_get(pinned_map.c_str());
	if (fd_ < 0)
		throw RdmaError(pinned_map + ": " + strerror(errno) +
				" (attach the observer first: mltcp-rdma observe --iface IF --pin DIR)");
}

QpCounter::~QpCounter()
{
	if (fd_ >= 0)
		close(fd_);
}

uint64_t QpCounter::Read(uint32_t qpn) const
{
	uint64_t v = 0;
	if (bpf_map_lookup_elem(fd_, &qpn, &v))
		return 0;
	return v;
}

CnpSender::CnpSender(const mltcp::DcqcnParams &p, uint32_t local_ip, uint32_t peer_ip,
		     uint32_t peer_qpn, uint64_t ce_base)
    : np_(p), peer_ip_(peer_ip), peer_qpn_(peer_qpn), ce_base_(ce_base), ce_seen_(ce_base)
{
	// The ICRC covers the source address: it must be known, not left for
	// the kernel to fill in.
	if (!local_ip || !peer_ip)
		throw RdmaError("CNP sender: the connection has no IPv4 addresses");
	// IPPROTO_RAW: IP_HDRINCL implied, and no copies of received packets.
	fd_ = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (fd_ < 0)
		throw RdmaError(std::string("CNP raw socket: ") + strerror(errno) +
				(errno == EPERM ? " (the notification point needs CAP_NET_RAW)" : ""));
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = local_ip;	// leave through the RoCE interface
	if (bind(fd_, (sockaddr *)&a, sizeof a))
		throw RdmaError(std::string("CNP socket bind: ") + strerror(errno));
	local_ip_ = local_ip;
	// Send on the RoCE port itself, as a NIC's notification point does,
	// whatever the routing table says about the (possibly local) peer.
	ifaddrs *ifs = nullptr;
	if (getifaddrs(&ifs) == 0) {
		for (ifaddrs *i = ifs; i; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    ((sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == local_ip) {
				if (setsockopt(fd_, SOL_SOCKET, SO_BINDTODEVICE, i->ifa_name,
					       (socklen_t)strlen(i->ifa_name) + 1))
					throw RdmaError(std::string("CNP socket SO_BINDTODEVICE ") +
							i->ifa_name + ": " + strerror(errno));
				break;
			}
		freeifaddrs(ifs);
	}
}

CnpSender::~CnpSender()
{
	if (fd_ >= 0)
		close(fd_);
}

int CnpSender::OnCeCount(uint64_t ce_total, uint64_t now_us)
{
	if (ce_total <= ce_seen_)
		return 0;
	ce_seen_ = ce_total;
	if (!first_ce_us_)
		first_ce_us_ = now_us;
	if (!np_.OnCeMarked(now_us))
		return 0;
	CnpFields f;
	f.src_ip = local_ip_;
	f.dst_ip = peer_ip_;
	// RoCEv2 source ports carry entropy in 0xc000..0xffff; rxe hashes the QPN.
	f.src_port = (uint16_t)(0xc000 | (peer_qpn_ & 0x3fff));
	f.dest_qpn = peer_qpn_;
	f.pkey = kDefaultPkey;
	f.tos = kCnpTos;
	uint8_t pkt[kCnpPacketBytes];
	BuildCnp(f, pkt);
	sockaddr_in d{};
	d.sin_family = AF_INET;
	d.sin_addr.s_addr = peer_ip_;
	if (sendto(fd_, pkt, sizeof pkt, 0, (sockaddr *)&d, sizeof d) != (ssize_t)sizeof pkt)
		return 0;	// a lost CNP is like one lost on the wire
	sent_++;
	if (!first_cnp_us_)
		first_cnp_us_ = now_us;
	return 1;
}

}  // namespace mltcp_rdma
