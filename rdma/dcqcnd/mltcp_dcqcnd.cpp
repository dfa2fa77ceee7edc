// mltcp_dcqcnd.cpp - mltcp-dcqcnd: MLTCP for NICs that run DCQCN in firmware.
//
// mlx5 NICs (ConnectX-4 and later) implement the DCQCN reaction point in
// firmware.  The daemon tracks each training job's iteration progress from
// its device's transmitted byte counter (/sys/class/infiniband/<dev>/ports/
// <n>/counters/port_xmit_data, in 4-byte words) or from explicit hints, and
// writes the firmware's additive and hyper increase steps as
//     ai_rate = original * F(bytes_ratio),  hai_rate = original * F(bytes_ratio)
// through one of two host interfaces, chosen per device (device_files.cpp):
// the inbox driver's debugfs cc_params/ or MLNX_OFED's sysfs ecn/roce_rp/.
// Parameter names, units and ranges: cc_params.cpp.  Per-device control,
// write limit and restore: device.cpp.  State files: state_file.cpp.
//
// This file: command line, crash recovery with --restore, the poll loop
// over all devices, signals, and the status file.
#include <dirent.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cc_params.h"
#include "mltcp_options.hpp"
#include "device.h"
#include "device_files.h"
#include "state_file.h"
#include "status.h"

namespace {

using namespace dcqcnd;

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;	// bad command line
constexpr int kExitFiles = 3;	// parameter/counter files missing, unwritable, failed
constexpr int kExitState = 4;	// state file problem

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_status = 0;

void on_signal(int) { g_stop = 1; }
void on_status(int) { g_status = 1; }

struct Options {
	DeviceConfig dev;
	std::vector<DeviceSpec> specs;
	DeviceSpec single;		// --netdev/--ibdev/--hints/--state-file
	bool single_used = false;
	BackendChoice backend = BackendChoice::kAuto;
	unsigned port = 1;
	std::string state_dir = "/run/mltcp-dcqcnd";
	std::string status_file;	// default: <state dir>/status.json
	uint32_t status_interval_ms = 1000;
	uint32_t interval_us = 1000;
	double duration_s = 0;		// 0: until a signal
	bool restore_only = false;
};

[[noreturn]] void fatal(int code, const std::string &msg)
{
	fprintf(stderr, "mltcp-dcqcnd: %s\n", msg.c_str());
	exit(code);
}

uint64_t mono_us()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void usage(FILE *f)
{
	fputs("usage: mltcp-dcqcnd --device DEV[,KEY=VALUE...] [--device ...] [options]\n"
	      "       mltcp-dcqcnd --netdev IF [--ibdev DEV] [options]    (one device)\n"
	      "       mltcp-dcqcnd --restore [--device DEV ...]\n"
	      "       mltcp-dcqcnd --list-params\n"
	      "\n"
	      "Scales the firmware DCQCN additive and hyper increase rates of mlx5 NICs\n"
	      "by the MLTCP gain F(bytes_ratio) of the training job on each device (one\n"
	      "job per device), and restores the original values on exit, on\n"
	      "SIGTERM/SIGINT/SIGHUP, after a failure, and after a crash or kill -9 on\n"
	      "the next start or with --restore.  Two backends, chosen per device:\n"
	      "  debugfs  the inbox (kernel.org / Debian) mlx5 driver's\n"
	      "           /sys/kernel/debug/mlx5/<pci>/cc_params/rp_ai_rate, rp_hai_rate\n"
	      "           (needs debugfs mounted and no kernel lockdown)\n"
	      "  sysfs    MLNX_OFED's /sys/class/net/<if>/ecn/roce_rp/rpg_ai_rate,\n"
	      "           rpg_hai_rate\n"
	      "Both are in Mbit/s, 1..line rate; every write is a firmware command.\n"
	      "\n"
	      "Devices:\n"
	      "  --device DEV[,netdev=IF][,port=N][,hints=FIFO][,backend=B][,state-file=F]\n"
	      "                        DEV is an RDMA device (mlx5_0) or its netdev (eth2);\n"
	      "                        the other name and the PCI function are looked up\n"
	      "                        in sysfs; repeat for more devices\n"
	      "  --netdev IF --ibdev DEV --hints FIFO --state-file F\n"
	      "                        the same for a single device\n"
	      "  --port N              RDMA port number (default 1)\n"
	      "  --backend B           auto (default: sysfs if MLNX_OFED's files exist,\n"
	      "                        else debugfs), debugfs or sysfs\n"
	      "  hints: lines 'iter <bytes>' (an iteration of <bytes> starts now) and,\n"
	      "  without a readable counter, 'sent <bytes>' (progress)\n"
	      "\n"
	      "Firmware-friendly writes:\n"
	      "  --gain-step N         apply F in steps of N/1024 (default 64: 1/16)\n"
	      "  --max-writes-per-sec N  at most N parameter writes per device in any\n"
	      "                        second (default 50, 2..10000); a gain change that\n"
	      "                        would exceed it waits (restores are not limited)\n"
	      "\n"
	      "Status and state:\n"
	      "  --state-dir DIR       original values while running, DIR/<dev>.state\n"
	      "                        (default /run/mltcp-dcqcnd)\n"
	      "  --status-file F       JSON status with per-device counters, rewritten\n"
	      "                        every --status-interval-ms (default 1000) and at\n"
	      "                        exit (default DIR/status.json); SIGUSR1 logs it\n"
	      "  --restore             only put back values left by a crashed run (of the\n"
	      "                        devices named, or of every DIR/*.state), then exit\n"
	      "  --list-params         print the parameter table of both backends\n"
	      "\n"
	      "Tracking:\n"
	      "  --counter REL         byte counter under ports/N/ (default\n"
	      "                        counters/port_xmit_data)\n"
	      "  --counter-unit B      bytes per counter unit (default 4)\n"
	      "  --interval-us N       poll period (default 1000, at least 100)\n"
	      "  --srtt-us N           RTT used for the idle threshold (default 100)\n"
	      "  --duration S          exit (and restore) after S seconds (default: run\n"
	      "                        until a signal)\n"
	      "  --root DIR            prefix of /sys (default /; tests use a mirrored tree)\n"
	      "  --debugfs DIR         debugfs mount point under the root (default\n"
	      "                        /sys/kernel/debug)\n"
	      "  -v, --verbose         log every parameter change\n"
	      "  -h, --help            this text\n"
	      "\n"
	      "\n"
	      "MLTCP parameters that act on a DCQCN flow (core/mltcp_param_table.h;\n"
	      "--name N or --name=N):\n",
	      f);
	fputs(mltcp::ParamHelp<mltcp_params>("  ", true, "", MLTCP_PS_RATE).c_str(), f);
	fputs("\n"
	      "Exit status: 0 ok, 2 usage, 3 a device's files missing, unwritable or\n"
	      "failing (the others kept running), 4 state file.\n",
	      f);
}

uint64_t parse_num(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "mltcp-dcqcnd: %s: '%s' is not an integer in %" PRIu64 "..%" PRIu64
			"\n", opt, s, min, max);
		exit(kExitUsage);
	}
	return v;
}

BackendChoice parse_backend(const std::string &s)
{
	if (s == "auto")
		return BackendChoice::kAuto;
	if (s == "debugfs")
		return BackendChoice::kDebugfs;
	if (s == "sysfs")
		return BackendChoice::kSysfs;
	fatal(kExitUsage, "backend '" + s + "': expected auto, debugfs or sysfs");
}

// DEV[,netdev=IF][,port=N][,hints=FIFO][,backend=B][,state-file=F]
DeviceSpec parse_device(const std::string &arg)
{
	DeviceSpec s;
	s.port = 0;	// unset: --port or 1
	size_t pos = 0;
	bool first = true;
	while (pos <= arg.size()) {
		size_t comma = arg.find(',', pos);
		std::string item = arg.substr(pos, comma == std::string::npos ? std::string::npos
									     : comma - pos);
		pos = comma == std::string::npos ? arg.size() + 1 : comma + 1;
		if (first) {
			if (item.empty() || item.find('/') != std::string::npos ||
			    item.find('=') != std::string::npos)
				fatal(kExitUsage, "--device '" + arg + "': starts with a device name "
						  "(mlx5_0 or eth2)");
			s.name = item;
			first = false;
			continue;
		}
		size_t eq = item.find('=');
		std::string k = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
		if (eq == std::string::npos || v.empty())
			fatal(kExitUsage, "--device '" + arg + "': '" + item + "' is not KEY=VALUE");
		if (k == "netdev")
			s.netdev = v;
		else if (k == "port")
			s.port = (unsigned)parse_num("--device port", v.c_str(), 1, 255);
		else if (k == "hints")
			s.hints = v;
		else if (k == "backend")
			s.backend = parse_backend(v);
		else if (k == "state-file")
			s.state_file = v;
		else
			fatal(kExitUsage, "--device '" + arg + "': unknown key '" + k +
					  "' (netdev, port, hints, backend, state-file)");
	}
	return s;
}

Options parse(int argc, char **argv)
{
	Options o;
	mltcp_params p;
	mltcp_params_default(&p);
	enum { O_DEVICE = 256, O_NETDEV, O_IBDEV, O_PORT, O_BACKEND, O_ROOT, O_DEBUGFS, O_COUNTER,
	       O_UNIT, O_HINTS, O_STATE, O_STATE_DIR, O_STATUS, O_STATUS_MS, O_RESTORE, O_LIST,
	       O_INTERVAL, O_SRTT, O_DURATION, O_GAIN_STEP, O_MAX_WRITES };
	static const option longopts[] = {
		{"device", 1, nullptr, O_DEVICE}, {"netdev", 1, nullptr, O_NETDEV},
		{"ibdev", 1, nullptr, O_IBDEV}, {"port", 1, nullptr, O_PORT},
		{"backend", 1, nullptr, O_BACKEND}, {"root", 1, nullptr, O_ROOT},
		{"debugfs", 1, nullptr, O_DEBUGFS}, {"counter", 1, nullptr, O_COUNTER},
		{"counter-unit", 1, nullptr, O_UNIT}, {"hints", 1, nullptr, O_HINTS},
		{"state-file", 1, nullptr, O_STATE}, {"state-dir", 1, nullptr, O_STATE_DIR},
		{"status-file", 1, nullptr, O_STATUS}, {"status-interval-ms", 1, nullptr, O_STATUS_MS},
		{"restore", 0, nullptr, O_RESTORE}, {"list-params", 0, nullptr, O_LIST},
		{"interval-us", 1, nullptr, O_INTERVAL}, {"srtt-us", 1, nullptr, O_SRTT},
		{"duration", 1, nullptr, O_DURATION}, {"gain-step", 1, nullptr, O_GAIN_STEP},
		{"max-writes-per-sec", 1, nullptr, O_MAX_WRITES},
		{"verbose", 0, nullptr, 'v'}, {"help", 0, nullptr, 'h'}, {nullptr, 0, nullptr, 0}};
	// The core's parameters (--slope N, ... from its table) first; getopt_long
	// sees the rest.
	std::vector<char *> rest;
	try {
		rest = mltcp::TakeParamOptions(p, "", argc, argv, 1, MLTCP_PS_RATE);
	} catch (const std::invalid_argument &e) {
		fatal(kExitUsage, e.what());
	}
	if (const char *why = mltcp::ParamTable<mltcp_params>::Check(p))
		fatal(kExitUsage, why);
	const int nrest = (int)rest.size() - 1;
	int c;
	o.single.port = 0;
	while ((c = getopt_long(nrest, rest.data(), "vh", longopts, nullptr)) != -1) {
		switch (c) {
		case O_DEVICE: o.specs.push_back(parse_device(optarg)); break;
		case O_NETDEV: o.single.netdev = optarg; o.single_used = true; break;
		case O_IBDEV: o.single.ibdev = optarg; o.single_used = true; break;
		case O_HINTS: o.single.hints = optarg; o.single_used = true; break;
		case O_STATE: o.single.state_file = optarg; o.single_used = true; break;
		case O_PORT:
			o.port = (unsigned)parse_num("--port", optarg, 1, 255);
			break;
		case O_BACKEND: o.backend = parse_backend(optarg); break;
		case O_ROOT: o.dev.layout.root = optarg; break;
		case O_DEBUGFS: o.dev.layout.debugfs = optarg; break;
		case O_COUNTER: o.dev.layout.counter = optarg; break;
		case O_UNIT: o.dev.counter_unit = parse_num("--counter-unit", optarg, 1, 1 << 20); break;
		case O_STATE_DIR: o.state_dir = optarg; break;
		case O_STATUS: o.status_file = optarg; break;
		case O_STATUS_MS:
			o.status_interval_ms = (uint32_t)parse_num("--status-interval-ms", optarg, 10,
								   3600000);
			break;
		case O_RESTORE: o.restore_only = true; break;
		case O_LIST: PrintTable(stdout); exit(kExitOk);
		case O_INTERVAL:
			o.interval_us = (uint32_t)parse_num("--interval-us", optarg, 100, 1000000);
			break;
		case O_SRTT:
			o.dev.srtt_us = (uint32_t)parse_num("--srtt-us", optarg, 0, 10000000);
			break;
		case O_GAIN_STEP:
			o.dev.gain_step = (uint32_t)parse_num("--gain-step (1/1024 units)", optarg, 1,
							      MLTCP_GAIN_ONE);
			break;
		case O_MAX_WRITES:
			// An update writes up to two parameters: fewer would block it forever.
			o.dev.max_writes_per_sec = (uint32_t)parse_num("--max-writes-per-sec", optarg,
								       2, 10000);
			break;
		case O_DURATION: {
			char *end = nullptr;
			o.duration_s = strtod(optarg, &end);
			if (*end || o.duration_s < 0)
				fatal(kExitUsage, std::string("--duration: '") + optarg +
							  "' is not a number of seconds");
			break;
		}
		case 'v': o.dev.verbose = true; break;
		case 'h': usage(stdout); exit(kExitOk);
		default: usage(stderr); exit(kExitUsage);
		}
	}
	if (optind < nrest)
		fatal(kExitUsage, std::string("unexpected argument '") + rest[optind] + "'");
	if (o.single_used && !o.specs.empty())
		fatal(kExitUsage, "--netdev/--ibdev/--hints/--state-file name one device; with "
				  "--device use its keys (--device mlx5_0,netdev=eth2,hints=FIFO)");
	if (o.single_used) {
		if (o.single.netdev.find('/') != std::string::npos ||
		    o.single.ibdev.find('/') != std::string::npos)
			fatal(kExitUsage, "--netdev/--ibdev take a name, not a path");
		if (o.single.netdev.empty() && o.single.ibdev.empty())
			fatal(kExitUsage, "--netdev IF or --ibdev DEV is required with --hints or "
					  "--state-file; see --help");
		o.specs.push_back(o.single);
	}
	if (o.specs.empty() && !o.restore_only)
		fatal(kExitUsage, "no device: --device DEV (or --netdev IF) is required; see --help");
	for (DeviceSpec &s : o.specs) {
		if (s.port == 0)
			s.port = o.port;
		if (s.backend == BackendChoice::kAuto)
			s.backend = o.backend;
	}
	if (o.specs.size() > 1)
		for (const DeviceSpec &s : o.specs)
			if (!s.hints.empty() && s.hints == o.specs[0].hints && &s != &o.specs[0])
				fatal(kExitUsage, "two devices read the same hints FIFO " + s.hints);
	try {
		o.dev.params = mltcp::Params(p);
	} catch (const std::invalid_argument &e) {
		fatal(kExitUsage, std::string("bad MLTCP parameters: ") + e.what());
	}
	if (o.status_file.empty())
		o.status_file = JoinPath(o.state_dir, "status.json");
	return o;
}

std::string StateFileFor(const Options &o, const DeviceSpec &s, const DevicePaths &d)
{
	return s.state_file.empty() ? JoinPath(o.state_dir, d.key + ".state") : s.state_file;
}

// --restore: put back what crashed runs left, touching nothing else.
int RestoreOnly(const Options &o)
{
	std::vector<std::string> files;
	for (const DeviceSpec &s : o.specs) {
		DevicePaths d;
		std::string err;
		if (!ResolveDevice(o.dev.layout, s, &d, &err))
			d.key = !s.name.empty() ? s.name : (!s.ibdev.empty() ? s.ibdev : s.netdev);
		files.push_back(StateFileFor(o, s, d));
	}
	if (o.specs.empty()) {
		DIR *dir = opendir(o.state_dir.c_str());
		while (dirent *e = dir ? readdir(dir) : nullptr) {
			size_t n = strlen(e->d_name);
			if (n > 6 && !strcmp(e->d_name + n - 6, ".state"))
				files.push_back(JoinPath(o.state_dir, e->d_name));
		}
		if (dir)
			closedir(dir);
	}
	int rc = kExitOk;
	for (const std::string &f : files) {
		SavedState s;
		std::string err;
		int r = LoadState(f, &s, &err);
		if (r == 0)
			continue;
		if (r < 0) {
			LogError("%s", err.c_str());
			rc = kExitState;
			continue;
		}
		if (OwnedByLiveDaemon(s)) {
			LogError("%s belongs to a running mltcp-dcqcnd (pid %d); stop it instead",
				 f.c_str(), s.pid);
			rc = kExitState;
			continue;
		}
		if (!RestoreSaved(s, &err)) {
			LogError("%s: restore failed: %s; state kept in %s", s.device.c_str(),
				 err.c_str(), f.c_str());
			rc = kExitFiles;
			continue;
		}
		unlink(f.c_str());
		std::string what;
		for (const SavedParam &p : s.params)
			what += " " + p.path + "=" + std::to_string(p.value);
		Log("%s [%s]: restored%s left by a previous run (pid %d)", s.device.c_str(),
		    s.backend.c_str(), what.c_str(), s.pid);
	}
	return rc;
}

}  // namespace

int main(int argc, char **argv)
{
	Options o = parse(argc, argv);
	if (mkdir(o.state_dir.c_str(), 0755) != 0 && errno != EEXIST)
		fatal(kExitState, "--state-dir " + o.state_dir + ": " + strerror(errno));
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGHUP, &sa, nullptr);
	sa.sa_handler = on_status;
	sigaction(SIGUSR1, &sa, nullptr);
	if (o.restore_only)
		return RestoreOnly(o);

	uint64_t start = mono_us();
	std::vector<std::unique_ptr<Device>> devs;
	std::random_device seeds;	// each device's first-iteration seed
	int rc = kExitOk;
	// Resolve every device before touching any, so that a usage error
	// leaves nothing behind.
	for (const DeviceSpec &s : o.specs) {
		DevicePaths d;
		std::string err;
		if (!ResolveDevice(o.dev.layout, s, &d, &err)) {
			LogError("%s", err.c_str());
			rc = kExitFiles;
			continue;
		}
		for (const auto &other : devs)
			if (other->paths().key == d.key ||
			    (!d.pci.empty() && other->paths().pci == d.pci))
				fatal(kExitUsage, d.key + " is named twice (one tracker per device)");
		DeviceConfig dc = o.dev;
		dc.seed = seeds();
		devs.push_back(std::make_unique<Device>(dc, s, d, StateFileFor(o, s, d)));
	}
	for (const auto &dp : devs) {
		Device &dev = *dp;
		std::string err;
		StartError e = dev.Start(mono_us(), &err);
		if (e != StartError::kNone) {
			LogError("%s: %s", dev.Name().c_str(), err.c_str());
			dev.Refuse(err);
			rc = e == StartError::kState ? kExitState : kExitFiles;
		}
	}
	auto active = [&devs]() {
		size_t n = 0;
		for (const auto &d : devs)
			n += d->state() == DeviceState::kActive;
		return n;
	};
	if (active() == 0)
		return rc;

	std::string err;
	uint64_t last_status = 0;
	while (!g_stop) {
		std::vector<pollfd> fds;
		for (const auto &d : devs)
			if (d->hint_fd() >= 0)
				fds.push_back({d->hint_fd(), POLLIN, 0});
		poll(fds.data(), fds.size(), (int)((o.interval_us + 999) / 1000));
		uint64_t now = mono_us();
		if (o.duration_s > 0 && now - start >= (uint64_t)(o.duration_s * 1e6))
			break;
		for (const auto &d : devs)
			d->Poll(now);
		if (g_status) {
			g_status = 0;
			LogStatus(devs);
		}
		if (now - last_status >= (uint64_t)o.status_interval_ms * 1000) {
			last_status = now;
			if (!WriteStatus(o.status_file, devs, now - start, o.dev.max_writes_per_sec, &err))
				LogError("status: %s", err.c_str());
		}
		if (active() == 0) {
			LogError("no device left to modulate; exiting");
			break;
		}
	}
	for (const auto &d : devs) {
		d->Stop(g_stop ? "(signal)" : "(exit)");
		if (d->state() == DeviceState::kFailed)
			rc = kExitFiles;
	}
	if (!WriteStatus(o.status_file, devs, mono_us() - start, o.dev.max_writes_per_sec, &err))
		LogError("status: %s", err.c_str());
	LogStatus(devs);
	return rc;
}
