// SPDX-License-Identifier: BSD-3-Clause
/*
 * service.cpp - `mltcpctl service start|reload|stop|check`: what
 * mltcp.service runs, driven by /etc/mltcp/mltcp.conf.
 *
 * The file is read and validated as a whole before anything changes:
 * every parameter through the same code as `mltcpctl set` (key, integer,
 * then the core's mltcp_params_validate over the complete set), every
 * cgroup and group for existence.  An error names FILE:LINE and nothing is
 * loaded.  start is load + attach under one hold of the state lock
 * (lock.cpp), and undoes its own load if an attach fails; reload sets the
 * parameters in place (flows keep their state); stop is unload.
 *
 * Format (docs/operations.md; the packaged file lists every key):
 *   # comment                      blank lines are ignored
 *   variants = all | reno | cubic  which congestion controls to register
 *   default = no | yes             also make the first variant the host default
 *   hint_group = GROUP             group allowed to write hints (optional)
 *   attach = CGROUP [reno|cubic]   repeatable; a path relative to the cgroup2
 *                                  mount or absolute
 *   <parameter> = <integer>        any key of `mltcpctl set --help`; the ones
 *                                  not given take the core's defaults
 */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <grp.h>
#include <unistd.h>

#include "mltcpctl.h"

const char *const kServiceUsage =
	"usage: mltcpctl service start|reload|stop|check [--config FILE]\n"
	"       mltcpctl service template\n"
	"What mltcp.service runs (FILE default /etc/mltcp/mltcp.conf):\n"
	"  start   validate FILE as a whole, then load the variants with its parameters,\n"
	"          attach its cgroups and optionally set the host default; on any error\n"
	"          nothing is loaded (exit 2 for a bad file, naming FILE:LINE)\n"
	"  reload  validate FILE, then set its parameters on the running MLTCP without\n"
	"          reloading (flows keep their state); variants, default, hint_group and\n"
	"          attach take effect at the next start\n"
	"  stop    remove everything MLTCP put on the host (as 'mltcpctl unload'); no-op\n"
	"          when nothing is loaded\n"
	"  check   validate FILE and print what start would do\n"
	"  template  print a commented configuration with every key and its default\n"
	"Keys: variants = all|reno|cubic, default = no|yes, hint_group = GROUP,\n"
	"attach = CGROUP [reno|cubic] (repeatable), and every parameter of\n"
	"'mltcpctl set --help' as KEY = INTEGER.\n";

namespace {

constexpr const char *kDefaultConfig = "/etc/mltcp/mltcp.conf";

struct Attach {
	std::string cgroup, variant;
	int line;
};

struct Config {
	std::string path;
	std::string variants = "all";
	bool set_default = false;
	std::string hint_group;
	std::vector<Attach> attach;
	std::vector<std::pair<std::string, int>> params;	// "key=value", line
	mltcp_params merged;					// defaults + params
};

std::string trim(const std::string &s)
{
	size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
	return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

[[noreturn]] void line_fail(const Config &c, int line, std::string msg)
{
	static const std::string tail = "; nothing was changed";	// set's own wording
	if (msg.size() >= tail.size() && msg.compare(msg.size() - tail.size(), tail.size(), tail) == 0)
		msg.resize(msg.size() - tail.size());
	fail(kUsage, "%s:%d: %s%s", c.path.c_str(), line, msg.c_str(), tail.c_str());
}

Config parse_config(const std::string &path)
{
	Config c;
	c.path = path;
	std::ifstream in(path);
	if (!in)
		fail(kUsage, "cannot read the configuration %s: %s (the package installs one; "
		     "see docs/operations.md)", path.c_str(), strerror(errno));
	mltcp_params_default(&c.merged);
	std::string raw;
	bool saw_variants = false;
	for (int n = 1; std::getline(in, raw); n++) {
		std::string l = trim(raw.substr(0, raw.find('#')));
		if (l.empty())
			continue;
		auto eq = l.find('=');
		if (eq == std::string::npos)
			line_fail(c, n, "'" + l + "' is not of the form key = value");
		std::string k = trim(l.substr(0, eq)), v = trim(l.substr(eq + 1));
		if (v.empty())
			line_fail(c, n, "'" + k + "' has no value");
		try {
			if (k == "variants") {
				if (saw_variants)
					line_fail(c, n, "variants is given twice");
				ctl_check_variant(v, true);
				c.variants = v;
				saw_variants = true;
			} else if (k == "default") {
				if (v != "yes" && v != "no")
					line_fail(c, n, "default must be yes or no, got '" + v + "'");
				c.set_default = v == "yes";
			} else if (k == "hint_group") {
				if (!getgrnam(v.c_str()))
					line_fail(c, n, "hint_group: no group named '" + v +
						  "' (see getent group)");
				c.hint_group = v;
			} else if (k == "attach") {
				Attach a{v, "reno", n};
				auto sp = v.find_first_of(" \t");
				if (sp != std::string::npos) {
					a.cgroup = trim(v.substr(0, sp));
					a.variant = trim(v.substr(sp));
					ctl_check_variant(a.variant, false);
				}
				if (a.cgroup[0] != '/')
					a.cgroup = ctl_cgroup2_mount() + "/" + a.cgroup;
				ctl_check_cgroup(a.cgroup);
				c.attach.push_back(a);
			} else {
				ctl_apply_param(c.merged, k + "=" + v);	// names unknown keys
				c.params.push_back({k + "=" + v, n});
			}
		} catch (const Failure &f) {
			if (f.msg.compare(0, c.path.size(), c.path) == 0)
				throw;
			line_fail(c, n, f.msg);
		}
	}
	try {
		ctl_validate_params(c.merged);
	} catch (const Failure &whole) {
		// Name the line(s): the first parameter that is invalid on its
		// own, else (a combination, e.g. gain_min > gain_max) all of them.
		std::string lines;
		for (const auto &p : c.params) {
			mltcp_params alone;
			mltcp_params_default(&alone);
			ctl_apply_param(alone, p.first);
			if (mltcp_params_validate(&alone) != MLTCP_PARAM_OK)
				line_fail(c, p.second, mltcp_params_reason(mltcp_params_validate(&alone)));
			lines += (lines.empty() ? "" : ",") + std::to_string(p.second);
		}
		fail(kUsage, "%s:%s: %s; nothing was changed", path.c_str(),
		     lines.empty() ? "?" : lines.c_str(),
		     mltcp_params_reason(mltcp_params_validate(&c.merged)));
	}
	for (size_t i = 0; i < c.attach.size(); i++)
		for (size_t j = 0; j < i; j++)
			if (c.attach[i].cgroup == c.attach[j].cgroup)
				line_fail(c, c.attach[i].line, "cgroup " + c.attach[i].cgroup +
					  " is already attached on line " +
					  std::to_string(c.attach[j].line));
	return c;
}

std::vector<std::string> load_args(const Config &c)
{
	std::vector<std::string> a{"--variant", c.variants};
	for (const auto &kv : ctl_param_strings(c.merged))
		a.insert(a.end(), {"--param", kv});
	if (c.set_default)
		a.push_back("--default");
	if (!c.hint_group.empty())
		a.insert(a.end(), {"--hint-group", c.hint_group});
	return a;
}

void print_plan(const Config &c)
{
	std::printf("%s: valid\n  load --variant %s%s%s%s\n", c.path.c_str(), c.variants.c_str(),
		    c.set_default ? " --default" : "", c.hint_group.empty() ? "" : " --hint-group ",
		    c.hint_group.c_str());
	for (const auto &a : c.attach)
		std::printf("  attach --cgroup %s --variant %s\n", a.cgroup.c_str(), a.variant.c_str());
	std::printf("  parameters:");
	for (const auto &kv : ctl_param_strings(c.merged))
		std::printf(" %s", kv.c_str());
	std::printf("\n");
}

int start(const Config &c)
{
	if (ctl_loaded())
		fail(kRuntime, "MLTCP is already loaded (by 'mltcpctl load' or an earlier start): "
		     "'mltcpctl service stop' (or 'mltcpctl unload') first");
	ctl_load(load_args(c));
	for (const auto &a : c.attach) {
		try {
			ctl_attach({"--cgroup", a.cgroup, "--variant", a.variant});
		} catch (const Failure &f) {
			ctl_unload({});	// ours: we hold the lock since before the load
			fail(f.code, "%s:%d: %s; the load was undone", c.path.c_str(), a.line,
			     f.msg.c_str());
		}
	}
	std::printf("mltcp.service started from %s\n", c.path.c_str());
	return kOk;
}

int reload(const Config &c)
{
	if (!ctl_loaded())
		fail(kRuntime, "MLTCP is not loaded: 'mltcpctl service start' first");
	ctl_set(ctl_param_strings(c.merged));
	std::printf("parameters reloaded from %s (variants, default, hint_group and attach "
		    "apply at the next start)\n", c.path.c_str());
	return kOk;
}

// The packaged /etc/mltcp/mltcp.conf: generated from the parameter table
// at build time, so it lists every key with its current default.
void print_template()
{
	mltcp_params d;
	mltcp_params_default(&d);
	auto values = ctl_param_strings(d);
	std::printf(
		"# /etc/mltcp/mltcp.conf - what mltcp.service loads ('mltcpctl service').\n"
		"#\n"
		"# One 'key = value' per line; '#' starts a comment.  The whole file is\n"
		"# validated before anything changes: an error names the line and nothing is\n"
		"# loaded.  'mltcpctl service check' validates it and shows what start would\n"
		"# do.  'systemctl reload mltcp' applies changed parameters to the running\n"
		"# MLTCP without dropping flows; the other keys apply at the next start.\n"
		"\n"
		"# Congestion controls to register: all (mltcp and mltcp_cubic), reno or cubic.\n"
		"variants = all\n"
		"\n"
		"# yes: also set net.ipv4.tcp_congestion_control to the first variant\n"
		"# (stop restores the previous default).\n"
		"default = no\n"
		"\n"
		"# Group whose members may write iteration hints (libmltcp); default root only.\n"
		"#hint_group = mltrain\n"
		"\n"
		"# cgroups whose TCP sockets use MLTCP: 'attach = CGROUP [reno|cubic]', one per\n"
		"# line; relative paths are below the cgroup2 mount (e.g. /sys/fs/cgroup).\n"
		"#attach = training.slice reno\n"
		"\n"
		"# Runtime parameters (gains in 1/1024 units; ranges: 'mltcpctl set --help').\n"
		"# A parameter not given here takes the default shown.\n");
	auto docs = ctl_param_docs();
	for (size_t i = 0; i < docs.size() && i < values.size(); i++) {
		auto eq = values[i].find('=');
		std::printf("# %s\n#%s = %s\n", docs[i].second.c_str(), docs[i].first.c_str(),
			    values[i].c_str() + eq + 1);
	}
}

}  // namespace

int cmd_service(const std::vector<std::string> &args)
{
	std::string action, path = kDefaultConfig;
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] == "--config") {
			if (i + 1 >= args.size())
				fail(kUsage, "--config needs a file (see 'mltcpctl service --help')");
			path = args[++i];
		} else if (action.empty() && (args[i] == "start" || args[i] == "reload" ||
					      args[i] == "stop" || args[i] == "check" ||
					      args[i] == "template")) {
			action = args[i];
		} else {
			fail(kUsage, "unknown argument '%s' for service: use start, reload, stop or "
			     "check [--config FILE]", args[i].c_str());
		}
	}
	if (action.empty())
		fail(kUsage, "service needs an action: start, reload, stop, check or template");
	if (action == "template") {
		print_template();
		return kOk;
	}
	if (action == "check") {
		print_plan(parse_config(path));
		return kOk;
	}
	if (geteuid() != 0)
		fail(kRuntime, "mltcpctl service %s needs root: rerun with sudo", action.c_str());
	// One hold of the lock for the whole action: an operator's command
	// runs before or after it, never in between.
	lock_host_state(("service " + action).c_str());
	if (action == "stop")
		return ctl_loaded() || ctl_leftovers() ? ctl_unload({})
						       : (std::printf("MLTCP is not loaded\n"), kOk);
	Config c = parse_config(path);
	return action == "start" ? start(c) : reload(c);
}
