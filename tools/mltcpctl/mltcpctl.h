// SPDX-License-Identifier: BSD-3-Clause
/*
 * mltcpctl.h - what the parts of mltcpctl share: the error type every
 * command throws, exit codes, and the entry points that mltcpctl.cpp
 * (the commands on the pinned BPF state), lock.cpp (the state lock),
 * exporter.cpp (Prometheus endpoint) and service.cpp (mltcp.conf and the
 * systemd service's start/reload/stop) offer each other.
 */
#ifndef MLTCPCTL_H
#define MLTCPCTL_H

#include <string>
#include <vector>

#include <linux/types.h>

#include "mltcp.h"
#include "mltcp_bpf_shared.h"

enum Exit { kOk = 0, kRuntime = 1, kUsage = 2 };

struct Failure {
	int code;
	std::string msg;
};

// Throw a Failure; main() prints "mltcpctl <command>: <msg>" and exits code.
[[noreturn]] void fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// --- mltcpctl.cpp --------------------------------------------------------
// The commands, as run from the command line (args after the command name).
int ctl_load(const std::vector<std::string> &args);
int ctl_unload(const std::vector<std::string> &args);
int ctl_attach(const std::vector<std::string> &args);
int ctl_detach(const std::vector<std::string> &args);
int ctl_set(const std::vector<std::string> &args);

bool ctl_loaded();
// Anything under the pin directory (a load, or a crashed one's leftovers).
bool ctl_leftovers();
// As load/attach check them (Failure kUsage naming what is wrong).
void ctl_check_variant(const std::string &v, bool allow_all);
void ctl_check_cgroup(const std::string &path);
std::string ctl_cgroup2_mount();
// One "key=value" onto p, as 'mltcpctl set' parses it (Failure kUsage).
void ctl_apply_param(mltcp_params &p, const std::string &kv);
// The whole set, as 'mltcpctl set' checks it (Failure kUsage).
void ctl_validate_params(const mltcp_params &p);
mltcp_params ctl_read_config();
// Every parameter as "key=value", in the order 'mltcpctl status' shows them.
std::vector<std::string> ctl_param_strings(const mltcp_params &p);
// Every parameter's name and one-line description.
std::vector<std::pair<std::string, std::string>> ctl_param_docs();

struct FlowSample {
	mltcp_flow_key key;
	mltcp_flow_stats st;
	std::string local, remote;	// "addr:port", IPv6 as "[addr]:port"
	const char *cc;			// registered name of its variant
};
// Every live flow of the stats map (Failure when MLTCP is not loaded).
std::vector<FlowSample> ctl_read_flows();
// Registered variants' congestion control names.
std::vector<std::string> ctl_registered_variants();
// Attached cgroups: cgroup inode id -> variant name.
std::vector<std::pair<unsigned long long, std::string>> ctl_attachments();

// --- lock.cpp ------------------------------------------------------------
// Serialise every command that changes MLTCP's host state (see lock.cpp).
// Held until the process exits; calling it again in the same process is a
// no-op, so a command made of others (service start) holds it throughout.
void lock_host_state(const char *command);
const char *state_lock_path();

// --- exporter.cpp --------------------------------------------------------
int cmd_exporter(const std::vector<std::string> &args);
// What one scrape of /metrics returns (mltcpctl stats --prometheus).
std::string exporter_metrics_text();
extern const char *const kExporterUsage;

// --- service.cpp ---------------------------------------------------------
int cmd_service(const std::vector<std::string> &args);
extern const char *const kServiceUsage;

#endif /* MLTCPCTL_H */
