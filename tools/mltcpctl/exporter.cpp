// SPDX-License-Identifier: BSD-3-Clause
/*
 * exporter.cpp - `mltcpctl exporter`: MLTCP's statistics for Prometheus.
 *
 * Serves GET /metrics (text exposition format 0.0.4) over HTTP, with
 * Debian's cpp-httplib as the server.  Every scrape reads the pinned maps
 * afresh (stats, config, and the counters of mltcp.bpf.c's .bss), so the
 * exporter holds no state and needs no restart across load/unload; it does
 * not take the state lock, so it never delays an operator's command.  A
 * scrape while MLTCP is not loaded, or while it is being loaded or
 * unloaded, reports mltcp_loaded 0 and no MLTCP series.
 *
 * Per-flow series carry the labels variant, netns, local and remote.  Flows
 * come and go with their connections, so the number of per-flow series is
 * capped (--max-flows, default 100): the flows with the most bytes acked
 * are shown, and mltcp_flows_not_exported counts the rest.  Host series are
 * never capped.  `mltcpctl stats --prometheus` prints the same text once.
 */
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <httplib.h>

#include "mltcp.h"
#include "mltcp.skel.h"
#include "mltcpctl.h"

const char *const kExporterUsage =
	"usage: mltcpctl exporter [--listen ADDR:PORT] [--max-flows N]\n"
	"Serve MLTCP's statistics to Prometheus at http://ADDR:PORT/metrics (default\n"
	"127.0.0.1:9465; IPv6 as [ADDR]:PORT).  Runs until SIGINT/SIGTERM.  Each scrape\n"
	"reads the pinned maps, so the exporter may start before 'mltcpctl load' and\n"
	"survives unload/load (then it reports mltcp_loaded 0).\n"
	"  --max-flows N   per-flow series for at most N flows (the N with the most bytes\n"
	"                  acked; default 100, 0..100000); mltcp_flows_not_exported\n"
	"                  counts the others.  Host series are always complete.\n";

namespace {

constexpr unsigned kDefaultMaxFlows = 100;
constexpr unsigned kMaxMaxFlows = 100000;

struct Text {
	std::string s;
	void family(const char *name, const char *type, const char *help)
	{
		s += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
	}
	void sample(const char *name, const std::string &labels, double v)
	{
		char num[64];
		std::snprintf(num, sizeof(num), "%.17g", v);
		s += std::string(name) + (labels.empty() ? "" : "{" + labels + "}") + " " + num + "\n";
	}
	// A metric of one unlabelled sample.
	void single(const char *name, const char *type, const char *help, double v)
	{
		family(name, type, help);
		sample(name, "", v);
	}
};

// Label values: backslash, quote and newline escaped as the format says.
std::string label(const char *k, const std::string &v)
{
	std::string out = std::string(k) + "=\"";
	for (char c : v) {
		if (c == '\\' || c == '"')
			out += '\\';
		if (c == '\n') {
			out += "\\n";
			continue;
		}
		out += c;
	}
	return out + "\"";
}

// Entry 0 of the one-entry array map pinned at `pin`; false if absent.
template <typename T>
bool read_pinned_entry(const char *pin, T &value)
{
	int fd = bpf_obj_get(pin);
	if (fd < 0)
		return false;
	__u32 zero = 0;
	bool ok = bpf_map_lookup_elem(fd, &zero, &value) == 0;
	close(fd);
	return ok;
}

// The .bss of mltcp.bpf.c, pinned by 'mltcpctl load'.
bool read_counters(mltcp_bpf::mltcp_bpf__bss &c) { return read_pinned_entry(MLTCP_PIN_COUNTERS, c); }

// Job-hint writes since load; false without the pin (an older load).
bool read_job_counters(mltcp_job_counters &c)
{
	return read_pinned_entry(MLTCP_PIN_JOB_COUNTERS, c);
}

struct FlowMetric {
	const char *name, *type, *help;
	double (*get)(const mltcp_flow_stats &);
	bool (*present)(const mltcp_flow_stats &);	// nullptr: always
};

const FlowMetric kFlowMetrics[] = {
	{"mltcp_flow_iterations_total", "counter", "Iterations this flow completed (detected and hinted).",
	 [](const mltcp_flow_stats &s) { return double(s.iterations); }, nullptr},
	{"mltcp_flow_hinted_iterations_total", "counter", "Iterations of this flow started by a hint.",
	 [](const mltcp_flow_stats &s) { return double(s.hinted); }, nullptr},
	{"mltcp_flow_acked_bytes_total", "counter", "Bytes acknowledged on this flow (tcpi_bytes_acked).",
	 [](const mltcp_flow_stats &s) { return double(s.bytes_acked); }, nullptr},
	{"mltcp_flow_iteration_acked_bytes", "gauge", "Bytes acknowledged in the current iteration.",
	 [](const mltcp_flow_stats &s) { return double(s.iter_bytes); }, nullptr},
	{"mltcp_flow_iteration_size_bytes", "gauge", "Learned or hinted bytes per iteration (0: not yet known).",
	 [](const mltcp_flow_stats &s) { return double(s.bytes_per_iter); }, nullptr},
	{"mltcp_flow_iteration_progress_ratio", "gauge",
	 "bytes_ratio: share of the iteration sent (absent while the flow shows no iteration structure).",
	 [](const mltcp_flow_stats &s) { return s.ratio / 1024.0; },
	 [](const mltcp_flow_stats &s) { return s.ratio != MLTCP_RATIO_NONE; }},
	{"mltcp_flow_gain_ratio", "gauge", "MLTCP gain F applied to the window (1 = neutral).",
	 [](const mltcp_flow_stats &s) { return s.gain / 1024.0; }, nullptr},
	{"mltcp_flow_cwnd_segments", "gauge", "Congestion window.",
	 [](const mltcp_flow_stats &s) { return double(s.cwnd); }, nullptr},
	{"mltcp_flow_srtt_seconds", "gauge", "Smoothed round-trip time.",
	 [](const mltcp_flow_stats &s) { return s.srtt_us / 1e6; }, nullptr},
	{"mltcp_flow_window_repairs_total", "counter",
	 "Corrupted cwnd/ssthresh values the window guard repaired on this flow.",
	 [](const mltcp_flow_stats &s) { return double(s.window_repairs); }, nullptr},
};

// The exposition of one moment; never throws.
std::string metrics_text(unsigned max_flows)
{
	Text t;
	std::vector<FlowSample> flows;
	mltcp_params params{};
	mltcp_bpf::mltcp_bpf__bss counters{};
	bool up = ctl_loaded();
	if (up) {
		try {
			flows = ctl_read_flows();
			params = ctl_read_config();
			up = read_counters(counters);
		} catch (const Failure &) {
			up = false;	// unloaded between our reads
		}
	}
	t.single("mltcp_loaded", "gauge", "1 while MLTCP's BPF state is loaded (mltcpctl load).",
		 up);
	if (!up)
		return t.s;

	t.family("mltcp_variant_registered", "gauge",
		 "1 for each registered MLTCP congestion control.");
	for (const auto &v : ctl_registered_variants())
		t.sample("mltcp_variant_registered", label("variant", v), 1);
	t.single("mltcp_cgroup_attachments", "gauge",
		 "cgroups whose sockets MLTCP selects (mltcpctl attach).",
		 double(ctl_attachments().size()));
	t.family("mltcp_parameter", "gauge",
		 "Runtime parameters (mltcpctl set; gains in 1/1024 units).");
	for (const auto &kv : ctl_param_strings(params)) {
		auto eq = kv.find('=');
		t.sample("mltcp_parameter", label("name", kv.substr(0, eq)),
			 std::strtod(kv.c_str() + eq + 1, nullptr));
	}

	t.single("mltcp_flows", "gauge", "Live flows using MLTCP.", double(flows.size()));
	t.single("mltcp_flows_tracked_total", "counter",
		 "Flows that got a statistics entry since load.",
		 double(counters.mltcp_flows_tracked));
	t.single("mltcp_flows_untracked_total", "counter",
		 "Flows refused a statistics entry since load (statistics table full).",
		 double(counters.mltcp_flows_untracked));
	t.single("mltcp_iterations_total", "counter",
		 "Iterations completed by all flows since load.",
		 double(counters.mltcp_iterations));
	t.single("mltcp_hinted_iterations_total", "counter",
		 "Iterations started by an application hint since load.",
		 double(counters.mltcp_iterations_hinted));
	t.single("mltcp_window_repairs_total", "counter",
		 "Corrupted cwnd/ssthresh values the window guard repaired since load.",
		 double(counters.mltcp_guard_repairs));
	mltcp_job_counters jc{};
	if (read_job_counters(jc)) {
		t.single("mltcp_job_hints_total", "counter",
			 "Job-level hint writes stored since load (all attached cgroups).",
			 double(jc.accepted));
		t.single(
			"mltcp_job_hints_refused_total", "counter",
			"Job-level hint writes refused since load: bad size, unknown option, no room.",
			double(jc.refused));
	}

	// The capped per-flow part: the busiest flows, in a stable order.
	std::stable_sort(flows.begin(), flows.end(), [](const FlowSample &a, const FlowSample &b) {
		return a.st.bytes_acked > b.st.bytes_acked;
	});
	size_t shown = std::min<size_t>(flows.size(), max_flows);
	t.single("mltcp_flows_not_exported", "gauge",
		 "Live flows left out of the per-flow series by --max-flows.", double(flows.size() - shown));
	std::vector<std::string> labels;
	for (size_t i = 0; i < shown; i++) {
		const auto &f = flows[i];
		labels.push_back(label("variant", f.cc) + "," + label("netns", std::to_string(f.key.netns)) +
				 "," + label("local", f.local) + "," + label("remote", f.remote));
	}
	for (const auto &m : kFlowMetrics) {
		t.family(m.name, m.type, m.help);
		for (size_t i = 0; i < shown; i++)
			if (!m.present || m.present(flows[i].st))
				t.sample(m.name, labels[i], m.get(flows[i].st));
	}
	return t.s;
}

}  // namespace

namespace {

struct Listen {
	std::string host;
	int port;
};

Listen parse_listen(const std::string &s)
{
	std::string host, port;
	if (!s.empty() && s[0] == '[') {
		auto close = s.find("]:");
		if (close == std::string::npos)
			fail(kUsage, "--listen %s: an IPv6 address is written [ADDR]:PORT", s.c_str());
		host = s.substr(1, close - 1);
		port = s.substr(close + 2);
	} else {
		auto colon = s.rfind(':');
		if (colon == std::string::npos || colon == 0)
			fail(kUsage, "--listen %s: give ADDR:PORT, e.g. 127.0.0.1:9465", s.c_str());
		host = s.substr(0, colon);
		port = s.substr(colon + 1);
	}
	char *end = nullptr;
	long p = std::strtol(port.c_str(), &end, 10);
	if (port.empty() || *end || p < 1 || p > 65535)
		fail(kUsage, "--listen %s: port must be 1..65535, got '%s'", s.c_str(), port.c_str());
	unsigned char buf[sizeof(struct in6_addr)];
	if (inet_pton(AF_INET, host.c_str(), buf) != 1 && inet_pton(AF_INET6, host.c_str(), buf) != 1)
		fail(kUsage, "--listen %s: '%s' is not an IPv4 or IPv6 address", s.c_str(), host.c_str());
	return {host, int(p)};
}

// Bind the way the HTTP server will (SO_REUSEADDR), to name the reason of a
// failure, which cpp-httplib's bind_to_port() does not report.
void check_bindable(const Listen &l)
{
	bool v6 = l.host.find(':') != std::string::npos;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fail(kRuntime, "socket() failed: %s", strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_storage ss {};
	socklen_t len;
	if (v6) {
		auto *a = reinterpret_cast<struct sockaddr_in6 *>(&ss);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(l.port);
		inet_pton(AF_INET6, l.host.c_str(), &a->sin6_addr);
		len = sizeof(*a);
	} else {
		auto *a = reinterpret_cast<struct sockaddr_in *>(&ss);
		a->sin_family = AF_INET;
		a->sin_port = htons(l.port);
		inet_pton(AF_INET, l.host.c_str(), &a->sin_addr);
		len = sizeof(*a);
	}
	int rc = bind(fd, reinterpret_cast<struct sockaddr *>(&ss), len);
	int e = errno;
	if (rc == 0 && listen(fd, 1) < 0) {
		rc = -1;
		e = errno;
	}
	close(fd);
	if (rc < 0)
		fail(kRuntime, "cannot listen on %s port %d: %s%s", l.host.c_str(), l.port, strerror(e),
		     e == EADDRINUSE ? " (another exporter or service has it: stop it or choose "
				       "another --listen ADDR:PORT)" : "");
}

}  // namespace

// `mltcpctl stats --prometheus`: the exporter's text, once.
std::string exporter_metrics_text() { return metrics_text(kDefaultMaxFlows); }

int cmd_exporter(const std::vector<std::string> &args)
{
	Listen l{"127.0.0.1", 9465};
	unsigned max_flows = kDefaultMaxFlows;
	for (size_t i = 0; i < args.size(); i++) {
		if ((args[i] == "--listen" || args[i] == "--max-flows") && i + 1 >= args.size())
			fail(kUsage, "%s needs a value (see 'mltcpctl exporter --help')", args[i].c_str());
		if (args[i] == "--listen") {
			l = parse_listen(args[++i]);
		} else if (args[i] == "--max-flows") {
			const std::string &v = args[++i];
			char *end = nullptr;
			unsigned long n = std::strtoul(v.c_str(), &end, 10);
			if (v.empty() || *end || v[0] == '-' || n > kMaxMaxFlows)
				fail(kUsage, "--max-flows must be 0..%u flows, got '%s'", kMaxMaxFlows,
				     v.c_str());
			max_flows = unsigned(n);
		} else {
			fail(kUsage, "unknown option '%s' for exporter (see 'mltcpctl exporter --help')",
			     args[i].c_str());
		}
	}
	if (geteuid() != 0)
		fail(kRuntime, "mltcpctl exporter needs root to read the pinned BPF maps: rerun with sudo");
	check_bindable(l);

	// Signals go to one thread, which stops the server; the server's
	// worker threads inherit the blocked mask.
	sigset_t stop_signals;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

	httplib::Server svr;
	svr.Get("/metrics", [max_flows](const httplib::Request &, httplib::Response &res) {
		res.set_content(metrics_text(max_flows), "text/plain; version=0.0.4; charset=utf-8");
	});
	svr.Get("/", [](const httplib::Request &, httplib::Response &res) {
		res.set_content("<html><head><title>MLTCP exporter</title></head><body>"
				"<a href=\"/metrics\">/metrics</a></body></html>\n", "text/html");
	});
	if (!svr.bind_to_port(l.host, l.port))
		fail(kRuntime, "cannot listen on %s port %d: %s", l.host.c_str(), l.port,
		     strerror(errno));
	std::thread stopper([&svr, &stop_signals] {
		int sig;
		sigwait(&stop_signals, &sig);
		svr.stop();
	});
	std::printf("mltcpctl exporter: serving http://%s%s%s:%d/metrics (max %u flows)\n",
		    l.host.find(':') != std::string::npos ? "[" : "", l.host.c_str(),
		    l.host.find(':') != std::string::npos ? "]" : "", l.port, max_flows);
	std::fflush(stdout);
	bool ok = svr.listen_after_bind();
	if (stopper.joinable()) {
		if (ok)
			stopper.join();
		else {
			pthread_kill(stopper.native_handle(), SIGTERM);
			stopper.join();
		}
	}
	if (!ok)
		fail(kRuntime, "the HTTP server on %s port %d stopped: %s", l.host.c_str(), l.port,
		     strerror(errno));
	return kOk;
}
