// mltcp_dcqcnd.cpp - mltcp-dcqcnd: MLTCP for NICs that run DCQCN in firmware.
//
// mlx5-style NICs implement the DCQCN reaction point in firmware and expose
// its parameters per port under /sys/class/net/<if>/ecn/roce_rp/.  The daemon
// tracks the training job's iteration progress from the port's transmitted
// byte counter (/sys/class/infiniband/<dev>/ports/<n>/counters/port_xmit_data,
// in 4-byte words) or from explicit hints, and writes
//     rpg_ai_rate  = original * F(bytes_ratio)
//     rpg_hai_rate = original * F(bytes_ratio)
// so that the firmware's additive and hyper increase steps follow the MLTCP
// gain, exactly as core/mltcp_dcqcn.h scales R_AI and R_HAI in software.
//
// Differs from the software path: the firmware parameters are per port, not
// per QP, so all QPs of the port share one tracker (one training job per
// port is the deployment this targets), and the gain is applied in steps of
// kGainStep to keep sysfs writes rare.
//
// Safety: the original values are saved to a state file before the first
// write and restored on exit, SIGTERM/SIGINT/SIGHUP, and -- after a crash or
// kill -9 -- on the next start (or with --restore).
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mltcp.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;	// bad command line
constexpr int kExitSysfs = 3;	// parameter/counter files missing or not writable
constexpr int kExitState = 4;	// state file problem

constexpr uint32_t kGainStep = MLTCP_GAIN_ONE / 16;	// write when F moves this much
constexpr uint64_t kXmitDataUnit = 4;	// port_xmit_data counts 4-octet words
constexpr uint64_t kMaxRateMbps = 1600000;	// 1.6 Tbit/s: sanity clamp
constexpr const char *kParams[] = {"rpg_ai_rate", "rpg_hai_rate"};
constexpr size_t kNumParams = sizeof(kParams) / sizeof(kParams[0]);

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

struct Options {
	std::string root = "/";		// prefix of /sys (a mirrored tree in tests)
	std::string netdev;
	std::string ibdev;
	unsigned port = 1;
	std::string state_file;		// default: /run/mltcp-dcqcnd/<netdev>.state
	std::string hints;		// FIFO: lines "iter <bytes>"
	std::string counter = "counters/port_xmit_data";
	uint64_t counter_unit = kXmitDataUnit;
	uint32_t interval_us = 1000;
	uint32_t srtt_us = 100;
	double duration_s = 0;		// 0: until a signal
	bool restore_only = false;
	bool verbose = false;
	mltcp_params params{};
};

[[noreturn]] void fatal(int code, const std::string &msg)
{
	fprintf(stderr, "mltcp-dcqcnd: %s\n", msg.c_str());
	exit(code);
}

void logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void logf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("mltcp-dcqcnd: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

uint64_t mono_us()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

std::string join(const std::string &a, const std::string &b)
{
	if (a.empty() || a.back() == '/')
		return a + b;
	return a + "/" + b;
}

// Reads a decimal integer from a sysfs-style file.
bool read_u64(const std::string &path, uint64_t *v, std::string *err)
{
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = path + ": " + strerror(errno);
		return false;
	}
	char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n <= 0) {
		*err = path + ": " + (n < 0 ? strerror(e) : "empty");
		return false;
	}
	buf[n] = 0;
	char *end = nullptr;
	errno = 0;
	unsigned long long x = strtoull(buf, &end, 0);
	while (end && (*end == '\n' || *end == ' '))
		end++;
	if (errno || end == buf || *end) {
		*err = path + ": not an integer: '" + std::string(buf, (size_t)n) + "'";
		return false;
	}
	*v = x;
	return true;
}

// Writes a decimal integer the way `echo N > file` does.
bool write_u64(const std::string &path, uint64_t v, std::string *err)
{
	int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		*err = path + ": " + strerror(errno);
		return false;
	}
	std::string s = std::to_string(v) + "\n";
	ssize_t n = write(fd, s.data(), s.size());
	int e = errno;
	if (close(fd) != 0 && n >= 0) {
		*err = path + ": close: " + strerror(errno);
		return false;
	}
	if (n != (ssize_t)s.size()) {
		*err = path + ": write: " + (n < 0 ? strerror(e) : "short write");
		return false;
	}
	return true;
}

// A parameter file must exist, be a regular (or sysfs) file, carry a write
// permission bit (read-only sysfs attributes are 0444; root bypasses the
// bits on open, so check them explicitly) and accept its own value back.
bool check_writable(const std::string &path, std::string *err)
{
	struct stat st;
	if (stat(path.c_str(), &st) != 0) {
		*err = path + ": " + strerror(errno);
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		*err = path + ": not a regular file";
		return false;
	}
	if (!(st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH))) {
		char mode[8];
		snprintf(mode, sizeof mode, "%03o", (unsigned)(st.st_mode & 0777));
		*err = path + ": not writable (mode " + mode + ")";
		return false;
	}
	uint64_t v;
	if (!read_u64(path, &v, err))
		return false;
	if (!write_u64(path, v, err)) {
		*err += " (not writable)";
		return false;
	}
	return true;
}

struct Saved {
	uint64_t value[kNumParams];
};

// State file: "rpg_ai_rate=N\nrpg_hai_rate=M\npid=P\n", written atomically.
bool save_state(const std::string &path, const Saved &s, std::string *err)
{
	std::string tmp = path + ".tmp";
	FILE *f = fopen(tmp.c_str(), "w");
	if (!f) {
		*err = tmp + ": " + strerror(errno);
		return false;
	}
	for (size_t i = 0; i < kNumParams; i++)
		fprintf(f, "%s=%" PRIu64 "\n", kParams[i], s.value[i]);
	fprintf(f, "pid=%d\n", (int)getpid());
	bool ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
		*err = path + ": " + strerror(errno);
		unlink(tmp.c_str());
		return false;
	}
	return true;
}

// Returns 1 if a state file was loaded, 0 if none exists, -1 on error.
int load_state(const std::string &path, Saved *s, int *pid, std::string *err)
{
	FILE *f = fopen(path.c_str(), "r");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		*err = path + ": " + strerror(errno);
		return -1;
	}
	bool have[kNumParams] = {};
	char line[128];
	*pid = 0;
	while (fgets(line, sizeof line, f)) {
		char key[64];
		unsigned long long v;
		if (sscanf(line, "%63[^=]=%llu", key, &v) != 2)
			continue;
		for (size_t i = 0; i < kNumParams; i++)
			if (!strcmp(key, kParams[i])) {
				s->value[i] = v;
				have[i] = true;
			}
		if (!strcmp(key, "pid"))
			*pid = (int)v;
	}
	fclose(f);
	for (size_t i = 0; i < kNumParams; i++)
		if (!have[i]) {
			*err = path + ": corrupt state file (no " + kParams[i] +
			       "); restore the values by hand and delete it";
			return -1;
		}
	return 1;
}

class Daemon {
 public:
	explicit Daemon(const Options &o) : o_(o), params_(o.params)
	{
		rp_dir_ = join(o.root, "sys/class/net/" + o.netdev + "/ecn/roce_rp");
		port_dir_ = join(o.root, "sys/class/infiniband/" + o.ibdev + "/ports/" +
					     std::to_string(o.port));
		for (size_t i = 0; i < kNumParams; i++)
			param_path_[i] = join(rp_dir_, kParams[i]);
		counter_path_ = join(port_dir_, o.counter);
		cnp_path_ = join(port_dir_, "hw_counters/rp_cnp_handled");
	}

	// Refuses clearly when the layout is not what the daemon needs.
	void CheckFiles()
	{
		std::string err;
		struct stat st;
		if (stat(rp_dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
			fatal(kExitSysfs, rp_dir_ + " does not exist: " + o_.netdev +
						  " has no firmware DCQCN parameters (an mlx5 NIC with "
						  "RoCE exposes them); nothing was changed");
		for (size_t i = 0; i < kNumParams; i++)
			if (!check_writable(param_path_[i], &err))
				fatal(kExitSysfs, "cannot modulate DCQCN: " + err +
							  "; run as root on a NIC that exposes "
							  "writable roce_rp parameters; nothing was changed");
		if (o_.hints.empty()) {
			uint64_t v;
			if (!read_u64(counter_path_, &v, &err))
				fatal(kExitSysfs, "cannot read the port byte counter: " + err +
							  " (check --ibdev/--port, or use --hints)");
		}
	}

	// A previous run died without restoring: put its originals back.
	void RecoverCrashed()
	{
		Saved s;
		int pid;
		std::string err;
		int r = load_state(o_.state_file, &s, &pid, &err);
		if (r < 0)
			fatal(kExitState, err);
		if (r == 0)
			return;
		if (pid > 0 && pid != getpid() && kill(pid, 0) == 0) {
			// Alive (maybe in another PID namespace); refuse to fight it.
			char comm[64] = "";
			FILE *f = fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "r");
			if (f) {
				if (!fgets(comm, sizeof comm, f))
					comm[0] = 0;
				fclose(f);
			}
			if (!strncmp(comm, "mltcp-dcqcnd", 12))
				fatal(kExitState, "another mltcp-dcqcnd (pid " + std::to_string(pid) +
							  ") owns " + o_.state_file + "; stop it first");
		}
		Restore(s, "left by a previous run (pid " + std::to_string(pid) + ")");
	}

	void Restore(const Saved &s, const std::string &why)
	{
		std::string err;
		for (size_t i = 0; i < kNumParams; i++)
			if (!write_u64(param_path_[i], s.value[i], &err))
				fatal(kExitSysfs, "restore failed: " + err + "; state kept in " +
							  o_.state_file);
		if (unlink(o_.state_file.c_str()) != 0 && errno != ENOENT)
			fatal(kExitState, o_.state_file + ": " + strerror(errno));
		logf("restored rpg_ai_rate=%" PRIu64 " rpg_hai_rate=%" PRIu64 " %s",
		     s.value[0], s.value[1], why.c_str());
	}

	int Run()
	{
		std::string err;
		for (size_t i = 0; i < kNumParams; i++)
			if (!read_u64(param_path_[i], &orig_.value[i], &err))
				fatal(kExitSysfs, err);
		if (!save_state(o_.state_file, orig_, &err))
			fatal(kExitState, "cannot save the original values: " + err);
		logf("modulating %s (ib %s port %u): rpg_ai_rate=%" PRIu64
		     " rpg_hai_rate=%" PRIu64 ", progress from %s",
		     o_.netdev.c_str(), o_.ibdev.c_str(), o_.port, orig_.value[0],
		     orig_.value[1], o_.hints.empty() ? counter_path_.c_str() : o_.hints.c_str());

		int hint_fd = -1;
		if (!o_.hints.empty()) {
			// O_RDWR keeps the FIFO open when writers come and go.
			hint_fd = open(o_.hints.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
			if (hint_fd < 0) {
				Restore(orig_, "(hints unavailable)");
				fatal(kExitUsage, "--hints " + o_.hints + ": " + strerror(errno));
			}
		}
		uint64_t start = mono_us(), bytes = 0;
		ReadBytes(&bytes);
		mltcp::Flow flow(bytes, (uint32_t)start);
		uint64_t last_bytes = bytes;
		bool active = false;
		int rc = kExitOk;
		std::string hint_buf;

		while (!g_stop) {
			pollfd p{hint_fd, POLLIN, 0};
			poll(&p, hint_fd >= 0 ? 1 : 0, (int)((o_.interval_us + 999) / 1000));
			uint64_t now = mono_us();
			if (o_.duration_s > 0 && now - start >= (uint64_t)(o_.duration_s * 1e6))
				break;
			if (!ReadBytes(&bytes)) {
				rc = kExitSysfs;
				break;
			}
			if (hint_fd >= 0)
				ReadHints(hint_fd, &hint_buf, &flow, bytes, (uint32_t)now);
			if (bytes != last_bytes) {
				if (!active)	// transmission resumes after a quiet poll
					if (flow.OnTxStart(params_, bytes, (uint32_t)now, o_.srtt_us))
						stats_boundaries_++;
				flow.OnAck(bytes, (uint32_t)now);
				active = true;
			} else {
				active = false;
			}
			last_bytes = bytes;
			if (!Apply(flow.Gain(params_), flow)) {
				rc = kExitSysfs;
				break;
			}
		}
		if (hint_fd >= 0)
			close(hint_fd);
		Restore(orig_, g_stop ? "(signal)" : "(exit)");
		logf("done: %u iterations (%u hinted), %" PRIu64 " parameter writes",
		     flow.state().iterations, flow.state().hinted, writes_);
		return rc;
	}

 private:
	bool ReadBytes(uint64_t *bytes)
	{
		if (!o_.hints.empty() && access(counter_path_.c_str(), R_OK) != 0) {
			*bytes = hinted_bytes_;
			return true;
		}
		std::string err;
		uint64_t v;
		if (!read_u64(counter_path_, &v, &err)) {
			fprintf(stderr, "mltcp-dcqcnd: counter read failed: %s; restoring and exiting\n",
				err.c_str());
			return false;
		}
		*bytes = v * o_.counter_unit;
		return true;
	}

	// Lines "iter <bytes>": an iteration of <bytes> starts now;
	// "sent <bytes>": progress when no port counter is available.
	void ReadHints(int fd, std::string *buf, mltcp::Flow *flow, uint64_t bytes, uint32_t now)
	{
		char tmp[512];
		ssize_t n;
		while ((n = read(fd, tmp, sizeof tmp)) > 0)
			buf->append(tmp, (size_t)n);
		size_t nl;
		while ((nl = buf->find('\n')) != std::string::npos) {
			std::string line = buf->substr(0, nl);
			buf->erase(0, nl + 1);
			unsigned long long v;
			if (sscanf(line.c_str(), "iter %llu", &v) == 1) {
				flow->Hint(bytes, v, now);
				if (o_.verbose)
					logf("hint: iteration of %llu bytes", v);
			} else if (sscanf(line.c_str(), "sent %llu", &v) == 1) {
				hinted_bytes_ += v;
			} else if (!line.empty()) {
				fprintf(stderr, "mltcp-dcqcnd: ignoring hint line '%s' "
					"(expected 'iter <bytes>' or 'sent <bytes>')\n", line.c_str());
			}
		}
	}

	bool Apply(uint32_t gain, const mltcp::Flow &flow)
	{
		uint32_t q = (gain + kGainStep / 2) / kGainStep * kGainStep;
		if (q == 0)
			q = kGainStep;
		if (q == applied_gain_)
			return true;
		uint64_t v[kNumParams];
		std::string err;
		for (size_t i = 0; i < kNumParams; i++) {
			v[i] = (orig_.value[i] * q + MLTCP_GAIN_ONE / 2) >> MLTCP_GAIN_SHIFT;
			v[i] = v[i] < 1 ? 1 : (v[i] > kMaxRateMbps ? kMaxRateMbps : v[i]);
			if (!write_u64(param_path_[i], v[i], &err)) {
				fprintf(stderr, "mltcp-dcqcnd: %s; restoring and exiting\n", err.c_str());
				return false;
			}
			writes_++;
		}
		applied_gain_ = q;
		if (o_.verbose) {
			uint32_t r = flow.Ratio();
			logf("gain=%u/1024 ratio=%s rpg_ai_rate=%" PRIu64 " rpg_hai_rate=%" PRIu64,
			     q, r == mltcp::kRatioNone ? "none" : std::to_string(r).c_str(), v[0], v[1]);
		}
		return true;
	}

	Options o_;
	mltcp::Params params_;
	std::string rp_dir_, port_dir_, counter_path_, cnp_path_;
	std::string param_path_[kNumParams];
	Saved orig_{};
	uint32_t applied_gain_ = 0;
	uint64_t writes_ = 0;
	uint64_t hinted_bytes_ = 0;
	uint32_t stats_boundaries_ = 0;
};

void usage(FILE *f)
{
	fputs("usage: mltcp-dcqcnd --netdev IF --ibdev DEV [options]\n"
	      "\n"
	      "Scales the firmware DCQCN additive and hyper increase rates of a RoCE\n"
	      "port (/sys/class/net/IF/ecn/roce_rp/rpg_ai_rate, rpg_hai_rate) by the\n"
	      "MLTCP gain F(bytes_ratio) of the training job sending on that port, and\n"
	      "restores the original values on exit, on SIGTERM/SIGINT/SIGHUP and, after\n"
	      "a crash or kill -9, on the next start.\n"
	      "\n"
	      "  --netdev IF           network interface of the RoCE port (required)\n"
	      "  --ibdev DEV           RDMA device of that port (required unless --hints\n"
	      "                        supplies progress)\n"
	      "  --port N              RDMA port number (default 1)\n"
	      "  --root DIR            prefix of /sys (default /; tests use a mirrored tree)\n"
	      "  --counter REL         byte counter under ports/N/ (default\n"
	      "                        counters/port_xmit_data, counted in 4-byte words)\n"
	      "  --counter-unit B      bytes per counter unit (default 4)\n"
	      "  --hints FIFO          read hints from FIFO: 'iter <bytes>' (an iteration of\n"
	      "                        <bytes> starts now) and, without a readable counter,\n"
	      "                        'sent <bytes>' (progress)\n"
	      "  --state-file F        where the originals are kept while running (default\n"
	      "                        /run/mltcp-dcqcnd/IF.state)\n"
	      "  --restore             only restore values left by a crashed run, then exit\n"
	      "  --interval-us N       counter poll period (default 1000)\n"
	      "  --srtt-us N           RTT used for the idle threshold (default 100)\n"
	      "  --slope N --intercept N   F in units of 1/1024 (defaults 1536, 256)\n"
	      "  --duration S          exit (and restore) after S seconds (default: run until\n"
	      "                        a signal)\n"
	      "  -v, --verbose         log every parameter change\n"
	      "  -h, --help            this text\n"
	      "\n"
	      "Exit status: 0 ok, 2 usage, 3 sysfs files missing/unwritable, 4 state file.\n",
	      f);
}

uint64_t parse_num(const char *opt, const char *s, uint64_t max)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v > max) {
		fprintf(stderr, "mltcp-dcqcnd: %s: '%s' is not an integer in 0..%" PRIu64 "\n",
			opt, s, max);
		exit(kExitUsage);
	}
	return v;
}

Options parse(int argc, char **argv)
{
	Options o;
	mltcp_params_default(&o.params);
	enum { O_NETDEV = 256, O_IBDEV, O_PORT, O_ROOT, O_COUNTER, O_UNIT, O_HINTS, O_STATE,
	       O_RESTORE, O_INTERVAL, O_SRTT, O_SLOPE, O_INTERCEPT, O_DURATION };
	static const option longopts[] = {
		{"netdev", 1, nullptr, O_NETDEV}, {"ibdev", 1, nullptr, O_IBDEV},
		{"port", 1, nullptr, O_PORT}, {"root", 1, nullptr, O_ROOT},
		{"counter", 1, nullptr, O_COUNTER}, {"counter-unit", 1, nullptr, O_UNIT},
		{"hints", 1, nullptr, O_HINTS}, {"state-file", 1, nullptr, O_STATE},
		{"restore", 0, nullptr, O_RESTORE}, {"interval-us", 1, nullptr, O_INTERVAL},
		{"srtt-us", 1, nullptr, O_SRTT}, {"slope", 1, nullptr, O_SLOPE},
		{"intercept", 1, nullptr, O_INTERCEPT}, {"duration", 1, nullptr, O_DURATION},
		{"verbose", 0, nullptr, 'v'}, {"help", 0, nullptr, 'h'}, {nullptr, 0, nullptr, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "vh", longopts, nullptr)) != -1) {
		switch (c) {
		case O_NETDEV: o.netdev = optarg; break;
		case O_IBDEV: o.ibdev = optarg; break;
		case O_PORT: o.port = (unsigned)parse_num("--port", optarg, 255); break;
		case O_ROOT: o.root = optarg; break;
		case O_COUNTER: o.counter = optarg; break;
		case O_UNIT: o.counter_unit = parse_num("--counter-unit", optarg, 1 << 20); break;
		case O_HINTS: o.hints = optarg; break;
		case O_STATE: o.state_file = optarg; break;
		case O_RESTORE: o.restore_only = true; break;
		case O_INTERVAL:
			o.interval_us = (uint32_t)parse_num("--interval-us", optarg, 1000000);
			break;
		case O_SRTT: o.srtt_us = (uint32_t)parse_num("--srtt-us", optarg, 10000000); break;
		case O_SLOPE: o.params.slope = (uint32_t)parse_num("--slope", optarg, 1u << 20); break;
		case O_INTERCEPT:
			o.params.intercept = (uint32_t)parse_num("--intercept", optarg, 1u << 20);
			break;
		case O_DURATION: {
			char *end = nullptr;
			o.duration_s = strtod(optarg, &end);
			if (*end || o.duration_s < 0) {
				fprintf(stderr, "mltcp-dcqcnd: --duration: '%s' is not a number of seconds\n", optarg);
				exit(kExitUsage);
			}
			break;
		}
		case 'v': o.verbose = true; break;
		case 'h': usage(stdout); exit(kExitOk);
		default: usage(stderr); exit(kExitUsage);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mltcp-dcqcnd: unexpected argument '%s'\n", argv[optind]);
		exit(kExitUsage);
	}
	if (o.netdev.empty() || o.netdev.find('/') != std::string::npos)
		fatal(kExitUsage, "--netdev IF is required (a network interface name); see --help");
	if (o.ibdev.empty() && o.hints.empty())
		fatal(kExitUsage, "--ibdev DEV is required unless --hints supplies progress; see --help");
	if (o.interval_us < 100)
		fatal(kExitUsage, "--interval-us must be at least 100");
	auto e = mltcp_params_validate(&o.params);
	if (e != MLTCP_PARAM_OK)
		fatal(kExitUsage, std::string("bad MLTCP parameters: ") + mltcp_params_reason(e));
	if (o.state_file.empty()) {
		mkdir("/run/mltcp-dcqcnd", 0755);
		o.state_file = "/run/mltcp-dcqcnd/" + o.netdev + ".state";
	}
	return o;
}

}  // namespace

int main(int argc, char **argv)
{
	Options o = parse(argc, argv);
	Daemon d(o);
	d.CheckFiles();
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGHUP, &sa, nullptr);
	d.RecoverCrashed();
	if (o.restore_only)
		return kExitOk;
	return d.Run();
}
