// SPDX-License-Identifier: BSD-3-Clause
/*
 * mltcpctl - load, attach, configure, observe and unload the MLTCP BPF
 * congestion controls (bpf/mltcp.bpf.c, bpf/mltcp_sockops.bpf.c).
 *
 * All state lives in bpffs under /sys/fs/bpf/mltcp/ so that it outlives this
 * process: the maps (config = the program's .data with its parameters,
 * counters = its .bss with the host counters, hints, jobs, state), the
 * stats iterator link (stats), one pin per registered variant (link_<cc>
 * for a struct_ops link on kernels >= 6.4, ops_<cc> for the plainly
 * registered struct_ops map on older ones) and one pinned cgroup sock_ops
 * link per attachment (cgroups/<cgroup id>_<cc>), with its job-hint
 * setsockopt link (jobhint/<cgroup id>, bpf/mltcp_jobhint.bpf.c).
 * `unload` removes all of it.  Commands that change it hold the state lock
 * (lock.cpp); the exporter (exporter.cpp) and the systemd service's actions
 * (service.cpp) live in their own files.
 *
 * Exit codes: 0 ok, 1 runtime failure, 2 usage error.
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <ftw.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <nlohmann/json.hpp>

#include "mltcp.h"
#include "mltcp_options.hpp"
#include "mltcp_bpf_shared.h"
#include "mltcp.skel.h"
#include "mltcp_sockops.skel.h"
#include "mltcp_jobhint.skel.h"
#include "mltcpctl.h"

void fail(int code, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	throw Failure{code, buf};
}

namespace {

// Not in bookworm's 6.1 uapi headers; values from the kernel's uapi bpf.h.
constexpr __u32 kBpfFLink = 1U << 13;		 // BPF_F_LINK (map flag, >= 6.4)
constexpr int kBpfStructOpsAttach = 44;		 // BPF_STRUCT_OPS attach type
constexpr const char *kBpffs = "/sys/fs/bpf";
constexpr const char *kBtf = "/sys/kernel/btf/vmlinux";
constexpr const char *kAvailCc = "/proc/sys/net/ipv4/tcp_available_congestion_control";
constexpr const char *kDefaultCc = "/proc/sys/net/ipv4/tcp_congestion_control";
constexpr const char *kFallbackCc = "cubic";

std::string errstr(int err) { return std::strerror(err < 0 ? -err : err); }

// ---------------------------------------------------------------------------
// Variants

struct Variant {
	const char *arg;	// --variant value
	const char *cc;		// registered congestion control name
	enum mltcp_variant id;
};
constexpr Variant kVariants[] = {
	{"reno", MLTCP_CC_RENO, MLTCP_VARIANT_RENO},
	{"cubic", MLTCP_CC_CUBIC, MLTCP_VARIANT_CUBIC},
};

std::vector<Variant> parse_variants(const std::string &v, bool allow_all)
{
	if (allow_all && v == "all")
		return {kVariants[0], kVariants[1]};
	for (const auto &x : kVariants)
		if (v == x.arg || v == x.cc)
			return {x};
	fail(kUsage, "unknown variant '%s': use reno, cubic%s", v.c_str(),
	     allow_all ? " or all" : "");
}

// ---------------------------------------------------------------------------
// Parameters (struct mltcp_params): names, ranges and checks from the core's
// table (core/mltcp_param_table.h, through mltcp_options.hpp).

using ParamTable = mltcp::ParamTable<mltcp_params>;
// JSON output (status, stats), fields in the order they are set.
using Json = nlohmann::ordered_json;

void apply_param(mltcp_params &p, const std::string &kv)
{
	try {
		mltcp::SetParamKv(p, kv);
	} catch (const std::invalid_argument &e) {
		fail(kUsage, "%s; nothing was changed", e.what());
	}
}

void validate_params(const mltcp_params &p)
{
	if (const char *why = ParamTable::Check(p))
		fail(kUsage, "invalid parameters: %s; nothing was changed", why);
}

// ---------------------------------------------------------------------------
// Host helpers

std::string read_file(const char *path)
{
	std::ifstream f(path);
	std::stringstream ss;
	ss << f.rdbuf();
	std::string s = ss.str();
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

bool write_file(const char *path, const std::string &s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size());
	close(fd);
	return ok;
}

bool cc_available(const char *cc)
{
	std::istringstream in(read_file(kAvailCc));
	std::string w;
	while (in >> w)
		if (w == cc)
			return true;
	return false;
}

bool path_exists(const std::string &p)
{
	struct stat st;
	return stat(p.c_str(), &st) == 0;
}

void need_root(const char *what)
{
	if (geteuid() != 0)
		fail(kRuntime, "%s needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN): rerun with sudo",
		     what);
}

void ensure_bpffs()
{
	struct statfs fs;
	if (statfs(kBpffs, &fs) == 0 && fs.f_type == BPF_FS_MAGIC)
		return;
	mkdir(kBpffs, 0755);
	if (mount("bpf", kBpffs, "bpf", 0, "mode=0755") < 0)
		fail(kRuntime, "bpffs is not mounted at %s and mounting it failed: %s; "
		     "mount it with 'mount -t bpf bpf %s'", kBpffs, errstr(errno).c_str(), kBpffs);
}

bool loaded() { return path_exists(MLTCP_PIN_CONFIG); }

void need_loaded()
{
	if (!loaded())
		fail(kRuntime, "MLTCP is not loaded (%s missing): run 'mltcpctl load' first",
		     MLTCP_PIN_CONFIG);
}

std::string reg_pin(const char *prefix, const char *cc)
{
	return std::string(MLTCP_PIN_DIR) + "/" + prefix + "_" + cc;
}

int obj_get(const std::string &path)
{
	int fd = bpf_obj_get(path.c_str());
	if (fd < 0)
		fail(kRuntime, "cannot open %s: %s", path.c_str(), errstr(errno).c_str());
	return fd;
}

struct Fd {
	int fd;
	explicit Fd(int f) : fd(f) {}
	~Fd() { if (fd >= 0) close(fd); }
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
};

// The config pin is the program's .data map: one value, the globals of
// bpf/mltcp.bpf.c (the skeleton's layout), of which mltcp_cfg is the
// parameter set.
using ConfigData = mltcp_bpf::mltcp_bpf__data;

ConfigData read_config_data(int fd)
{
	struct bpf_map_info info {};
	__u32 len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		fail(kRuntime, "reading %s failed: %s", MLTCP_PIN_CONFIG, errstr(errno).c_str());
	if (info.value_size != sizeof(ConfigData))
		fail(kRuntime, "%s holds %u bytes, this mltcpctl expects %zu: it was loaded by "
		     "another mltcpctl version; run 'mltcpctl unload' and load again",
		     MLTCP_PIN_CONFIG, info.value_size, sizeof(ConfigData));
	ConfigData d{};
	__u32 zero = 0;
	if (bpf_map_lookup_elem(fd, &zero, &d) < 0)
		fail(kRuntime, "reading %s failed: %s", MLTCP_PIN_CONFIG, errstr(errno).c_str());
	return d;
}

mltcp_params read_config()
{
	Fd m(obj_get(MLTCP_PIN_CONFIG));
	return read_config_data(m.fd).mltcp_cfg;
}

void write_config(const mltcp_params &p)
{
	Fd m(obj_get(MLTCP_PIN_CONFIG));
	ConfigData d = read_config_data(m.fd);
	__u32 zero = 0;
	d.mltcp_cfg = p;
	mltcp_params_derive(&d.mltcp_cfg);
	if (bpf_map_update_elem(m.fd, &zero, &d, BPF_ANY) < 0)
		fail(kRuntime, "writing %s failed: %s", MLTCP_PIN_CONFIG, errstr(errno).c_str());
}

bool read_state(mltcp_state &s)
{
	int fd = bpf_obj_get(MLTCP_PIN_STATE);
	if (fd < 0)
		return false;
	__u32 zero = 0;
	bool ok = bpf_map_lookup_elem(fd, &zero, &s) == 0;
	close(fd);
	return ok;
}

std::string cgroup2_mount()
{
	std::ifstream m("/proc/self/mounts");
	std::string dev, dir, type, rest;
	while (m >> dev >> dir >> type && std::getline(m, rest))
		if (type == "cgroup2")
			return dir;
	return "";
}

// ---------------------------------------------------------------------------
// Unload (also the rollback of a failed load)

std::vector<std::string> list_dir(const std::string &dir)
{
	std::vector<std::string> out;
	DIR *d = opendir(dir.c_str());
	if (!d)
		return out;
	while (struct dirent *e = readdir(d))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			out.push_back(e->d_name);
	closedir(d);
	return out;
}

// Detach and unpin one pinned cgroup link.
void unpin_link(const std::string &p)
{
	int fd = bpf_obj_get(p.c_str());
	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	unlink(p.c_str());
}

// Detach and unpin every cgroup attachment; returns how many.
int detach_all_cgroups()
{
	int n = 0;
	for (const auto &name : list_dir(MLTCP_PIN_CGROUP_DIR)) {
		unpin_link(std::string(MLTCP_PIN_CGROUP_DIR) + "/" + name);
		n++;
	}
	for (const auto &name : list_dir(MLTCP_PIN_JOBHINT_DIR))
		unpin_link(std::string(MLTCP_PIN_JOBHINT_DIR) + "/" + name);
	rmdir(MLTCP_PIN_CGROUP_DIR);
	rmdir(MLTCP_PIN_JOBHINT_DIR);
	return n;
}

// Put the host's default congestion control back if it points at MLTCP.
void restore_default_cc(std::vector<std::string> &notes)
{
	std::string cur = read_file(kDefaultCc);
	if (cur != MLTCP_CC_RENO && cur != MLTCP_CC_CUBIC)
		return;
	mltcp_state s{};
	std::string prev = kFallbackCc;
	if (read_state(s) && s.default_changed && s.prev_default_cc[0]) {
		s.prev_default_cc[MLTCP_CC_NAME_MAX - 1] = '\0';
		prev = s.prev_default_cc;
	}
	if (!write_file(kDefaultCc, prev))
		fail(kRuntime, "cannot restore net.ipv4.tcp_congestion_control to %s: %s",
		     prev.c_str(), errstr(errno).c_str());
	notes.push_back("default congestion control restored: " + cur + " -> " + prev);
}

void unregister_all(std::vector<std::string> &notes)
{
	for (const auto &v : kVariants) {
		std::string lp = reg_pin("link", v.cc), mp = reg_pin("ops", v.cc);
		if (path_exists(lp)) {
			int fd = bpf_obj_get(lp.c_str());
			if (fd >= 0) {
				bpf_link_detach(fd);	/* >= 6.9; else released below */
				close(fd);
			}
			unlink(lp.c_str());
			notes.push_back(std::string("unregistered ") + v.cc + " (link)");
		}
		if (path_exists(mp)) {
			int fd = bpf_obj_get(mp.c_str());
			__u32 zero = 0;
			if (fd >= 0) {
				bpf_map_delete_elem(fd, &zero);
				close(fd);
			}
			unlink(mp.c_str());
			notes.push_back(std::string("unregistered ") + v.cc);
		}
	}
	// Unregistration completes when the last reference goes; wait for it.
	for (int i = 0; i < 200; i++) {
		if (!cc_available(MLTCP_CC_RENO) && !cc_available(MLTCP_CC_CUBIC))
			return;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
}

void remove_pins()
{
	for (const char *p : {MLTCP_PIN_CONFIG, MLTCP_PIN_HINTS, MLTCP_PIN_JOBS,
			      MLTCP_PIN_JOB_COUNTERS, MLTCP_PIN_STATS, MLTCP_PIN_STATE,
			      MLTCP_PIN_COUNTERS, MLTCP_PIN_FLOWS})
		unlink(p);
	rmdir(MLTCP_PIN_DIR);
}

std::vector<std::string> teardown()
{
	std::vector<std::string> notes;
	int n = detach_all_cgroups();
	if (n)
		notes.push_back("detached " + std::to_string(n) + " cgroup attachment(s)");
	restore_default_cc(notes);
	unregister_all(notes);
	remove_pins();
	return notes;
}

// ---------------------------------------------------------------------------
// load

void pin_map(struct bpf_map *m, const char *path, mode_t mode, gid_t gid)
{
	int err = bpf_map__pin(m, path);
	if (err)
		fail(kRuntime, "pinning %s failed: %s", path, errstr(err).c_str());
	if (chmod(path, mode) < 0 || (gid != static_cast<gid_t>(-1) && chown(path, 0, gid) < 0))
		fail(kRuntime, "setting permissions of %s failed: %s", path, errstr(errno).c_str());
}

// Register one struct_ops map: a pinned link where the kernel has struct_ops
// links, else plain registration with the map pinned.
void register_variant(struct bpf_map *ops, const Variant &v, bool link_mode)
{
	struct bpf_link *l = bpf_map__attach_struct_ops(ops);
	if (!l)
		fail(kRuntime, "registering %s failed: %s", v.cc, errstr(errno).c_str());
	// libbpf 1.1.2 only knows plain registration: keep what it did, drop
	// its link object without undoing it.
	bpf_link__disconnect(l);
	bpf_link__destroy(l);
	if (!link_mode) {
		std::string p = reg_pin("ops", v.cc);
		int err = bpf_map__pin(ops, p.c_str());
		if (err) {
			__u32 zero = 0;
			bpf_map_delete_elem(bpf_map__fd(ops), &zero);
			fail(kRuntime, "pinning %s failed: %s", p.c_str(), errstr(err).c_str());
		}
		return;
	}
	// With BPF_F_LINK the update above only prepared the map; the link
	// registers it.
	int fd = bpf_link_create(bpf_map__fd(ops), 0,
				 static_cast<enum bpf_attach_type>(kBpfStructOpsAttach), nullptr);
	if (fd < 0)
		fail(kRuntime, "registering %s (struct_ops link) failed: %s%s", v.cc,
		     errstr(errno).c_str(),
		     errno == EEXIST ? ": a congestion control of that name is already "
				       "registered (the tcp_mltcp kernel module?)" : "");
	std::string p = reg_pin("link", v.cc);
	if (bpf_obj_pin(fd, p.c_str()) < 0) {
		int e = errno;
		close(fd);
		fail(kRuntime, "pinning %s failed: %s", p.c_str(), errstr(e).c_str());
	}
	close(fd);
}

// The stats iterator, pinned: reading MLTCP_PIN_STATS runs it (read_flows).
void pin_stats_iter(struct mltcp_bpf *skel)
{
	struct bpf_link *l = bpf_program__attach_iter(skel->progs.mltcp_stats_iter, nullptr);
	if (!l)
		fail(kRuntime, "attaching the stats iterator failed: %s", errstr(errno).c_str());
	int err = bpf_link__pin(l, MLTCP_PIN_STATS);
	bpf_link__destroy(l);	// the pin keeps it
	if (err)
		fail(kRuntime, "pinning %s failed: %s", MLTCP_PIN_STATS, errstr(err).c_str());
	if (chmod(MLTCP_PIN_STATS, 0600) < 0)
		fail(kRuntime, "setting permissions of %s failed: %s", MLTCP_PIN_STATS,
		     errstr(errno).c_str());
}

struct mltcp_bpf *open_and_load(bool link_mode, const mltcp_params &p)
{
	struct mltcp_bpf *skel = mltcp_bpf__open();
	if (!skel)
		fail(kRuntime, "opening the BPF object failed: %s", errstr(errno).c_str());
	skel->data->mltcp_cfg = p;
	mltcp_params_derive(&skel->data->mltcp_cfg);
	if (link_mode) {
		bpf_map__set_map_flags(skel->maps.mltcp, bpf_map__map_flags(skel->maps.mltcp) | kBpfFLink);
		bpf_map__set_map_flags(skel->maps.mltcp_cubic,
				       bpf_map__map_flags(skel->maps.mltcp_cubic) | kBpfFLink);
	}
	int err = mltcp_bpf__load(skel);
	if (err) {
		mltcp_bpf__destroy(skel);
		errno = -err;
		return nullptr;
	}
	return skel;
}

int cmd_load(const std::vector<std::string> &args)
{
	std::string variant = "all", hint_group;
	bool set_default = false;
	mltcp_params p;
	mltcp_params_default(&p);
	for (size_t i = 0; i < args.size(); i++) {
		const std::string &a = args[i];
		if ((a == "--variant" || a == "--param" || a == "--hint-group") && i + 1 >= args.size())
			fail(kUsage, "%s needs a value (see 'mltcpctl load --help')", a.c_str());
		if (a == "--variant")
			variant = args[++i];
		else if (a == "--param")
			apply_param(p, args[++i]);
		else if (a == "--hint-group")
			hint_group = args[++i];
		else if (a == "--default")
			set_default = true;
		else
			fail(kUsage, "unknown option '%s' for load (see 'mltcpctl load --help')", a.c_str());
	}
	auto vs = parse_variants(variant, true);
	validate_params(p);
	gid_t gid = static_cast<gid_t>(-1);
	if (!hint_group.empty()) {
		struct group *g = getgrnam(hint_group.c_str());
		if (!g)
			fail(kUsage, "--hint-group: no group named '%s' (see getent group)",
			     hint_group.c_str());
		gid = g->gr_gid;
	}
	need_root("mltcpctl load");
	lock_host_state("load");
	if (!path_exists(kBtf))
		fail(kRuntime, "kernel lacks BTF (%s missing): MLTCP's BPF programs need a kernel "
		     "built with CONFIG_DEBUG_INFO_BTF=y", kBtf);
	ensure_bpffs();
	if (loaded())
		fail(kRuntime, "MLTCP is already loaded (see 'mltcpctl status'): run 'mltcpctl unload' "
		     "first to reload");
	if (path_exists(MLTCP_PIN_DIR))
		teardown();	// leftovers of a crashed load (no config pin = not loaded)
	for (const auto &v : kVariants)
		if (cc_available(v.cc))
			fail(kRuntime, "a congestion control named '%s' is already registered by "
			     "something else (the tcp_mltcp kernel module?): remove it first", v.cc);

	// Prefer struct_ops links (kernel >= 6.4); older kernels reject BPF_F_LINK.
	// MLTCP_FORCE_PLAIN=1 exercises the pre-6.4 path on a newer kernel (tests).
	bool force_plain = getenv("MLTCP_FORCE_PLAIN") && !strcmp(getenv("MLTCP_FORCE_PLAIN"), "1");
	bool link_mode = true;
	libbpf_print_fn_t default_print =
		libbpf_set_print([](enum libbpf_print_level, const char *, va_list) { return 0; });
	struct mltcp_bpf *skel = force_plain ? nullptr : open_and_load(true, p);
	if (!skel) {
		link_mode = false;
		libbpf_set_print(default_print);	// second try: show libbpf's log
		skel = open_and_load(false, p);
		if (!skel)
			fail(kRuntime, "loading the BPF programs failed: %s (libbpf's log above)",
			     errstr(errno).c_str());
	}
	std::string prev_default = read_file(kDefaultCc);
	try {
		if (mkdir(MLTCP_PIN_DIR, 0755) < 0 && errno != EEXIST)
			fail(kRuntime, "mkdir %s failed: %s", MLTCP_PIN_DIR, errstr(errno).c_str());
		mltcp_state st{};
		std::snprintf(st.prev_default_cc, sizeof(st.prev_default_cc), "%s", prev_default.c_str());
		st.default_changed = set_default;
		st.link_mode = link_mode;
		for (const auto &v : vs)
			st.variants |= 1U << v.id;
		__u32 zero = 0;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.mltcp_state), &zero, &st, BPF_ANY) < 0)
			fail(kRuntime, "writing the state map failed: %s", errstr(errno).c_str());
		pin_map(skel->maps.data, MLTCP_PIN_CONFIG, 0600, static_cast<gid_t>(-1));
		pin_stats_iter(skel);
		pin_map(skel->maps.mltcp_state, MLTCP_PIN_STATE, 0600, static_cast<gid_t>(-1));
		pin_map(skel->maps.bss, MLTCP_PIN_COUNTERS, 0600, static_cast<gid_t>(-1));
		pin_map(skel->maps.mltcp_flows, MLTCP_PIN_FLOWS, 0600, static_cast<gid_t>(-1));
		pin_map(skel->maps.mltcp_hints, MLTCP_PIN_HINTS, hint_group.empty() ? 0600 : 0660, gid);
		// Jobs write their own entry through setsockopt (mltcp_jobhint.bpf.c),
		// never through the map: root only.
		pin_map(skel->maps.mltcp_jobs, MLTCP_PIN_JOBS, 0600, static_cast<gid_t>(-1));
		pin_map(skel->maps.mltcp_job_counters, MLTCP_PIN_JOB_COUNTERS, 0600,
			static_cast<gid_t>(-1));
		for (const auto &v : vs)
			register_variant(v.id == MLTCP_VARIANT_RENO ? skel->maps.mltcp
								  : skel->maps.mltcp_cubic, v, link_mode);
		if (set_default && !write_file(kDefaultCc, vs[0].cc))
			fail(kRuntime, "setting net.ipv4.tcp_congestion_control=%s failed: %s",
			     vs[0].cc, errstr(errno).c_str());
	} catch (const Failure &) {
		teardown();
		mltcp_bpf__destroy(skel);
		throw;
	}
	mltcp_bpf__destroy(skel);	// pins and registrations keep everything alive
	std::printf("loaded:");
	for (const auto &v : vs)
		std::printf(" %s", v.cc);
	std::printf(" (%s)\n", link_mode ? "struct_ops links" : "plain struct_ops registration");
	if (set_default)
		std::printf("default congestion control: %s (was %s; unload restores it)\n",
			    read_file(kDefaultCc).c_str(), prev_default.c_str());
	if (!hint_group.empty())
		std::printf("hints writable by group %s (%s)\n", hint_group.c_str(), MLTCP_PIN_HINTS);
	return kOk;
}

int cmd_unload(const std::vector<std::string> &args)
{
	if (!args.empty())
		fail(kUsage, "unload takes no arguments (see 'mltcpctl unload --help')");
	need_root("mltcpctl unload");
	lock_host_state("unload");
	bool any = path_exists(MLTCP_PIN_DIR);
	if (!any)
		fail(kRuntime, "MLTCP is not loaded; nothing to unload");
	for (const auto &n : teardown())
		std::printf("%s\n", n.c_str());
	for (const auto &v : kVariants)
		if (cc_available(v.cc))
			fail(kRuntime, "%s is still registered after unload: sockets or another "
			     "loader still hold it; check 'bpftool struct_ops list'", v.cc);
	std::printf("unloaded: nothing of MLTCP remains\n");
	return kOk;
}

// ---------------------------------------------------------------------------
// attach / detach

struct Cgroup {
	std::string path;
	unsigned long long id;
};

Cgroup check_cgroup(const std::string &path)
{
	struct stat st;
	if (stat(path.c_str(), &st) < 0)
		fail(kUsage, "cgroup path %s does not exist: give a cgroup v2 directory (e.g. "
		     "under %s)", path.c_str(), cgroup2_mount().c_str());
	struct statfs fs;
	if (!S_ISDIR(st.st_mode) || statfs(path.c_str(), &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC)
		fail(kUsage, "cgroup path %s is not cgroup v2 (cgroup2 is mounted at %s)",
		     path.c_str(), cgroup2_mount().empty() ? "nowhere" : cgroup2_mount().c_str());
	return {path, static_cast<unsigned long long>(st.st_ino)};
}

std::string find_attachment(unsigned long long id)
{
	std::string prefix = std::to_string(id) + "_";
	for (const auto &n : list_dir(MLTCP_PIN_CGROUP_DIR))
		if (n.compare(0, prefix.size(), prefix) == 0)
			return n;
	return "";
}

std::string parse_cgroup_opt(const std::vector<std::string> &args, size_t &i, const char *cmd)
{
	if (i + 1 >= args.size())
		fail(kUsage, "--cgroup needs a path (see 'mltcpctl %s --help')", cmd);
	return args[++i];
}

// Attach a loaded cgroup program to cgpath and pin its link at pin, so that
// the attachment outlives this process.
void attach_and_pin(struct bpf_program *prog, const std::string &cgpath, const std::string &pin,
		    const char *what)
{
	int cgfd = open(cgpath.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct bpf_link *l = cgfd < 0 ? nullptr : bpf_program__attach_cgroup(prog, cgfd);
	int aerr = errno;
	if (cgfd >= 0)
		close(cgfd);
	if (!l)
		fail(kRuntime, "attaching %s to %s failed: %s", what, cgpath.c_str(),
		     errstr(aerr).c_str());
	int err = bpf_link__pin(l, pin.c_str());
	if (err) {
		bpf_link__destroy(l);
		fail(kRuntime, "pinning %s failed: %s", pin.c_str(), errstr(err).c_str());
	}
	bpf_link__disconnect(l);
	bpf_link__destroy(l);
}

std::string job_hint_pin(const Cgroup &cg)
{
	return std::string(MLTCP_PIN_JOBHINT_DIR) + "/" + std::to_string(cg.id);
}

// The cgroup's entry in the jobs map: from now on the MLTCP sockets created
// in it are one job (bpf/mltcp_bpf_shared.h).  An entry that exists (hints
// written before) stays.  The epoch is the BPF side's clock, as its own.
void create_job_entry(int map_fd, const Cgroup &cg)
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mltcp_job job{};
	job.epoch = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) | 1;
	uint64_t key = cg.id;
	if (bpf_map_update_elem(map_fd, &key, &job, BPF_NOEXIST) < 0 && errno != EEXIST)
		fail(kRuntime, "creating the job entry of cgroup %llu failed: %s",
		     (unsigned long long)cg.id, errstr(errno).c_str());
}

// A detached cgroup is no job any more; its sockets see the entry gone.
void remove_job_entry(const Cgroup &cg)
{
	int map_fd = bpf_obj_get(MLTCP_PIN_JOBS);
	if (map_fd < 0)
		return;
	uint64_t key = cg.id;
	bpf_map_delete_elem(map_fd, &key);
	close(map_fd);
}

// The pinned jobs map if it has this build's entry layout, else -1 after a
// warning that `what` is missing for this cgroup: no map, or one that a
// load by an older mltcpctl made (its programs would be refused on it).
int open_pinned_jobs(const char *what)
{
	int fd = bpf_obj_get(MLTCP_PIN_JOBS);
	struct bpf_map_info info {};
	__u32 len = sizeof(info);
	if (fd >= 0 && (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 ||
			info.value_size != sizeof(mltcp_job))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		std::fprintf(stderr, "mltcpctl attach: warning: %s missing or from an older mltcpctl: "
			     "no %s for this cgroup until 'mltcpctl unload' and 'mltcpctl load'\n",
			     MLTCP_PIN_JOBS, what);
	return fd;
}

// Make a cgroup program's jobs map and hint counters (bpf/mltcp_job_map.bpf.h)
// the pinned ones; map_fd is the pinned jobs map's.  An older load has no
// counters: the program then keeps its own.  Returns 0 or -errno.
int reuse_job_maps(struct bpf_map *jobs, struct bpf_map *counters, int map_fd)
{
	int err = bpf_map__reuse_fd(jobs, map_fd);
	int counters_fd = bpf_obj_get(MLTCP_PIN_JOB_COUNTERS);
	if (!err && counters_fd >= 0)
		err = bpf_map__reuse_fd(counters, counters_fd);
	if (counters_fd >= 0)
		close(counters_fd);
	return err;
}

// The cgroup's job-hint setsockopt program, writing the pinned jobs map,
// and the cgroup's job entry.
void attach_job_hints(const Cgroup &cg)
{
	// The congestion control is selected; without the map only job hints
	// are missing.
	int map_fd = open_pinned_jobs("job-level hints");
	if (map_fd < 0)
		return;
	struct mltcp_jobhint_bpf *skel = mltcp_jobhint_bpf__open();
	int err = skel ? reuse_job_maps(skel->maps.mltcp_jobs, skel->maps.mltcp_job_counters,
					map_fd) : -errno;
	if (!err)
		err = mltcp_jobhint_bpf__load(skel);
	if (err) {
		close(map_fd);
		mltcp_jobhint_bpf__destroy(skel);
		fail(kRuntime, "loading the job-hint program failed: %s", errstr(err).c_str());
	}
	try {
		create_job_entry(map_fd, cg);
	} catch (const Failure &) {
		close(map_fd);
		mltcp_jobhint_bpf__destroy(skel);
		throw;
	}
	close(map_fd);
	mkdir(MLTCP_PIN_JOBHINT_DIR, 0755);
	std::string pin = job_hint_pin(cg);
	unlink(pin.c_str());	// a leftover of a crashed attach
	try {
		attach_and_pin(skel->progs.mltcp_job_hint_set, cg.path, pin, "the job-hint program");
	} catch (const Failure &) {
		mltcp_jobhint_bpf__destroy(skel);
		remove_job_entry(cg);
		throw;
	}
	mltcp_jobhint_bpf__destroy(skel);
}

int cmd_attach(const std::vector<std::string> &args)
{
	std::string path, variant = "reno";
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] == "--cgroup")
			path = parse_cgroup_opt(args, i, "attach");
		else if (args[i] == "--variant") {
			if (i + 1 >= args.size())
				fail(kUsage, "--variant needs a value: reno or cubic");
			variant = args[++i];
		} else
			fail(kUsage, "unknown option '%s' for attach (see 'mltcpctl attach --help')",
			     args[i].c_str());
	}
	if (path.empty())
		fail(kUsage, "attach needs --cgroup PATH (see 'mltcpctl attach --help')");
	Variant v = parse_variants(variant, false)[0];
	Cgroup cg = check_cgroup(path);
	need_root("mltcpctl attach");
	lock_host_state("attach");
	need_loaded();
	if (!cc_available(v.cc))
		fail(kRuntime, "variant %s is not loaded: run 'mltcpctl unload' and "
		     "'mltcpctl load --variant %s' (or all)", v.cc, v.arg);
	std::string existing = find_attachment(cg.id);
	if (!existing.empty())
		fail(kRuntime, "%s already has MLTCP attached (%s): run 'mltcpctl detach --cgroup %s' "
		     "first", path.c_str(), existing.substr(existing.find('_') + 1).c_str(), path.c_str());
	mkdir(MLTCP_PIN_CGROUP_DIR, 0755);

	struct mltcp_sockops_bpf *skel = mltcp_sockops_bpf__open();
	if (!skel)
		fail(kRuntime, "opening the sock_ops BPF object failed: %s", errstr(errno).c_str());
	std::memset(const_cast<char *>(skel->rodata->mltcp_cc_name), 0, MLTCP_CC_NAME_MAX);
	std::snprintf(const_cast<char *>(skel->rodata->mltcp_cc_name), MLTCP_CC_NAME_MAX, "%s", v.cc);
	// The job's traffic goes into the pinned jobs map; without it the
	// program counts into a map of its own, which nothing reads.
	int jobs_fd = open_pinned_jobs("job traffic (the start drain's two-way test)");
	int err = jobs_fd < 0 ? 0 : reuse_job_maps(skel->maps.mltcp_jobs,
						  skel->maps.mltcp_job_counters, jobs_fd);
	if (jobs_fd >= 0)
		close(jobs_fd);
	if (!err)
		err = mltcp_sockops_bpf__load(skel);
	if (err) {
		mltcp_sockops_bpf__destroy(skel);
		fail(kRuntime, "loading the sock_ops program failed: %s", errstr(err).c_str());
	}
	std::string pin = std::string(MLTCP_PIN_CGROUP_DIR) + "/" + std::to_string(cg.id) + "_" + v.cc;
	try {
		attach_and_pin(skel->progs.mltcp_select_cc, path, pin, "the sock_ops program");
	} catch (const Failure &) {
		mltcp_sockops_bpf__destroy(skel);
		throw;
	}
	mltcp_sockops_bpf__destroy(skel);
	try {
		attach_job_hints(cg);
	} catch (const Failure &) {
		unpin_link(pin);
		throw;
	}
	std::printf("attached %s to cgroup %s (job hints: setsockopt level 0x%x)\n", v.cc,
		    path.c_str(), MLTCP_SOL_JOB);
	return kOk;
}

int cmd_detach(const std::vector<std::string> &args)
{
	std::string path;
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] == "--cgroup")
			path = parse_cgroup_opt(args, i, "detach");
		else
			fail(kUsage, "unknown option '%s' for detach (see 'mltcpctl detach --help')",
			     args[i].c_str());
	}
	if (path.empty())
		fail(kUsage, "detach needs --cgroup PATH (see 'mltcpctl detach --help')");
	Cgroup cg = check_cgroup(path);
	need_root("mltcpctl detach");
	lock_host_state("detach");
	std::string name = find_attachment(cg.id);
	if (name.empty())
		fail(kRuntime, "MLTCP is not attached to cgroup %s (see 'mltcpctl status')", path.c_str());
	std::string pin = std::string(MLTCP_PIN_CGROUP_DIR) + "/" + name;
	int fd = bpf_obj_get(pin.c_str());
	if (fd >= 0) {
		bpf_link_detach(fd);
		close(fd);
	}
	if (unlink(pin.c_str()) < 0)
		fail(kRuntime, "removing %s failed: %s", pin.c_str(), errstr(errno).c_str());
	unpin_link(job_hint_pin(cg));
	remove_job_entry(cg);
	std::printf("detached MLTCP from cgroup %s\n", path.c_str());
	return kOk;
}

// ---------------------------------------------------------------------------
// status / set

std::map<unsigned long long, std::string> g_cg_paths;
int collect_cgroup(const char *p, const struct stat *st, int type, struct FTW *)
{
	if (type == FTW_D)
		g_cg_paths[static_cast<unsigned long long>(st->st_ino)] = p;
	return 0;
}

// Attached cgroups from the pin names "<cgroup id>_<variant>".
std::vector<std::pair<unsigned long long, std::string>> attachments()
{
	std::vector<std::pair<unsigned long long, std::string>> out;
	for (const auto &a : list_dir(MLTCP_PIN_CGROUP_DIR)) {
		auto us = a.find('_');
		if (us != std::string::npos)
			out.push_back({std::strtoull(a.substr(0, us).c_str(), nullptr, 10),
				       a.substr(us + 1)});
	}
	return out;
}

// What 'mltcpctl status' reports, collected once and printed as text or JSON.
struct StatusReport {
	struct VariantState {
		const char *cc;
		bool registered;	// else pinned but not registered
	};
	struct Attachment {
		unsigned long long cgroup_id;
		std::string cgroup;	// path, empty when no directory has that id
		std::string cc;
	};
	std::string default_cc;
	bool loaded = false;
	bool link_mode = false;
	std::vector<VariantState> variants;
	bool hints_pinned = false;
	unsigned hints_mode = 0;
	std::string hints_group;
	std::vector<Attachment> attachments;
	mltcp_params params{};	// as configured, with the derived norms
};

StatusReport collect_status()
{
	StatusReport r;
	r.default_cc = read_file(kDefaultCc);
	r.loaded = loaded();
	if (!r.loaded)
		return r;
	mltcp_state s{};
	read_state(s);
	r.link_mode = s.link_mode;
	for (const auto &v : kVariants) {
		bool pinned = path_exists(reg_pin("link", v.cc)) || path_exists(reg_pin("ops", v.cc));
		if (pinned || cc_available(v.cc))
			r.variants.push_back({v.cc, cc_available(v.cc)});
	}
	struct stat st;
	if (stat(MLTCP_PIN_HINTS, &st) == 0) {
		struct group *g = getgrgid(st.st_gid);
		r.hints_pinned = true;
		r.hints_mode = st.st_mode & 0777;
		r.hints_group = g ? g->gr_name : "?";
	}
	auto atts = attachments();
	if (!atts.empty()) {
		std::string root = cgroup2_mount();
		if (!root.empty())
			nftw(root.c_str(), collect_cgroup, 16, FTW_PHYS | FTW_MOUNT);
	}
	for (const auto &a : atts) {
		auto it = g_cg_paths.find(a.first);
		r.attachments.push_back({a.first, it != g_cg_paths.end() ? it->second : "", a.second});
	}
	r.params = read_config();
	mltcp_params_derive(&r.params);	/* what the datapath applies: F x norm / 1024 */
	return r;
}

// p with its derived norms filled (mltcp_params_derive); one column of
// values, as wide as the longest name.
void print_params(const mltcp_params &p, const char *indent)
{
	const char *const derived[] = {"norm_reno", "norm_cubic", "norm_reno_two_way",
				       "norm_cubic_two_way"};
	int width = 0;

	for (const auto &r : ParamTable::Rows())
		width = std::max(width, static_cast<int>(std::strlen(r.name)));
	for (const char *name : derived)
		width = std::max(width, static_cast<int>(std::strlen(name)));
	for (const auto &r : ParamTable::Rows())
		std::printf("%s%-*s %llu\n", indent, width, r.name,
			    static_cast<unsigned long long>(mltcp::GetParam(&p, r)));
	std::printf("%s%-*s %u (derived: mltcp applies F x %u/1024)\n", indent, width,
		    derived[0], p.norm_reno, p.norm_reno);
	std::printf("%s%-*s %u (derived: mltcp_cubic applies F x %u/1024)\n", indent, width,
		    derived[1], p.norm_cubic, p.norm_cubic);
	std::printf("%s%-*s %u (derived: mltcp on a two-way path)\n", indent, width,
		    derived[2], p.norm_reno_two_way);
	std::printf("%s%-*s %u (derived: mltcp_cubic on a two-way path)\n", indent, width,
		    derived[3], p.norm_cubic_two_way);
}

void print_status_text(const StatusReport &r)
{
	std::printf("default congestion control: %s\n", r.default_cc.c_str());
	if (!r.loaded) {
		std::printf("MLTCP: not loaded\n");
		return;
	}
	std::printf("MLTCP: loaded (%s)\n", r.link_mode ? "struct_ops links" : "plain registration");
	for (const auto &v : r.variants)
		std::printf("  %-12s %s\n", v.cc, v.registered ? "registered" : "pinned but NOT registered");
	if (r.hints_pinned)
		std::printf("hints: %s mode %03o group %s\n", MLTCP_PIN_HINTS, r.hints_mode,
			    r.hints_group.c_str());
	std::printf("cgroup attachments: %zu\n", r.attachments.size());
	for (const auto &a : r.attachments)
		std::printf("  %-40s %s\n",
			    !a.cgroup.empty() ? a.cgroup.c_str()
					      : ("cgroup id " + std::to_string(a.cgroup_id)).c_str(),
			    a.cc.c_str());
	std::printf("parameters:\n");
	print_params(r.params, "  ");
}

// The same report as one JSON object; fields absent when MLTCP is not loaded.
void print_status_json(const StatusReport &r)
{
	Json j;
	j["default_cc"] = r.default_cc;
	j["loaded"] = r.loaded;
	if (r.loaded) {
		j["mode"] = r.link_mode ? "struct_ops links" : "plain registration";
		j["variants"] = Json::array();
		for (const auto &v : r.variants)
			j["variants"].push_back({{"cc", v.cc}, {"registered", v.registered}});
		if (r.hints_pinned) {
			char mode[8];
			std::snprintf(mode, sizeof(mode), "%04o", r.hints_mode);
			j["hints"] = {{"path", MLTCP_PIN_HINTS}, {"mode", mode}, {"group", r.hints_group}};
		} else {
			j["hints"] = nullptr;
		}
		j["attachments"] = Json::array();
		for (const auto &a : r.attachments)
			j["attachments"].push_back(
				{{"cgroup", a.cgroup.empty() ? Json(nullptr) : Json(a.cgroup)},
				 {"cgroup_id", a.cgroup_id}, {"cc", a.cc}});
		Json params;
		for (const auto &row : ParamTable::Rows())
			params[row.name] = static_cast<unsigned long long>(mltcp::GetParam(&r.params, row));
		params["norm_reno"] = r.params.norm_reno;
		params["norm_cubic"] = r.params.norm_cubic;
		params["norm_reno_two_way"] = r.params.norm_reno_two_way;
		params["norm_cubic_two_way"] = r.params.norm_cubic_two_way;
		j["parameters"] = params;
	}
	std::printf("%s\n", j.dump(2).c_str());
}

int cmd_status(const std::vector<std::string> &args)
{
	bool json = false;
	for (const auto &a : args) {
		if (a == "--json")
			json = true;
		else
			fail(kUsage, "unknown option '%s' for status (see 'mltcpctl status --help')",
			     a.c_str());
	}
	need_root("mltcpctl status");
	StatusReport r = collect_status();
	if (json)
		print_status_json(r);
	else
		print_status_text(r);
	return kOk;
}

int cmd_set(const std::vector<std::string> &args)
{
	if (args.empty())
		fail(kUsage, "set needs key=value arguments (keys: %s)",
		     mltcp::ParamNames<mltcp_params>().c_str());
	// Names and ranges first, against the defaults: a typo or a value out
	// of range is the error to report, loaded or not.  The rules between
	// fields need the values in force (below).
	mltcp_params syntax = MLTCP_PARAMS_INIT;
	for (const auto &a : args)
		apply_param(syntax, a);
	need_root("mltcpctl set");
	lock_host_state("set");
	need_loaded();
	mltcp_params p = read_config();
	for (const auto &a : args)
		apply_param(p, a);
	validate_params(p);
	write_config(p);
	mltcp_params_derive(&p);
	print_params(p, "");
	return kOk;
}

// ---------------------------------------------------------------------------
// stats

struct Flow {
	mltcp_flow_key key;
	mltcp_flow_stats st;
};

std::string addr_str(const mltcp_flow_key &k, const __u32 *a, __u16 port)
{
	char buf[INET6_ADDRSTRLEN] = "?";
	inet_ntop(k.family == 10 ? AF_INET6 : AF_INET, a, buf, sizeof(buf));
	return k.family == 10 ? "[" + std::string(buf) + "]:" + std::to_string(port)
			      : std::string(buf) + ":" + std::to_string(port);
}

const char *variant_cc(__u32 v) { return v == MLTCP_VARIANT_CUBIC ? MLTCP_CC_CUBIC : MLTCP_CC_RENO; }

// The records of one read of the pinned iterator: the MLTCP sockets of the
// calling thread's network namespace.
void read_flows_here(std::vector<Flow> &out)
{
	int fd = open(MLTCP_PIN_STATS, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail(kRuntime, "cannot open %s: %s", MLTCP_PIN_STATS, errstr(errno).c_str());
	Fd guard(fd);
	std::string buf;
	char chunk[8192];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail(kRuntime, "reading %s failed: %s", MLTCP_PIN_STATS, errstr(errno).c_str());
		if (n == 0)
			break;
		buf.append(chunk, static_cast<size_t>(n));
	}
	if (buf.size() % sizeof(mltcp_flow_record))
		fail(kRuntime, "%s gave %zu bytes, not whole records of %zu", MLTCP_PIN_STATS,
		     buf.size(), sizeof(mltcp_flow_record));
	for (size_t off = 0; off < buf.size(); off += sizeof(mltcp_flow_record)) {
		mltcp_flow_record r;
		std::memcpy(&r, buf.data() + off, sizeof(r));
		out.push_back(Flow{r.key, r.stats});
	}
}

// Every network namespace that a process or a bind mount (ip netns) holds,
// as one path each, this process's own first.
std::vector<std::string> netns_paths()
{
	std::vector<std::string> cand{"/proc/self/ns/net"}, out;
	for (const char *dir : {"/run/netns", "/var/run/netns"})
		for (const auto &n : list_dir(dir))
			cand.push_back(std::string(dir) + "/" + n);
	for (const auto &pid : list_dir("/proc"))
		if (!pid.empty() && pid.find_first_not_of("0123456789") == std::string::npos)
			cand.push_back("/proc/" + pid + "/ns/net");
	std::vector<ino_t> seen;
	for (const auto &p : cand) {
		struct stat st;
		if (stat(p.c_str(), &st) < 0)
			continue;	// the process exited meanwhile
		bool dup = false;
		for (ino_t i : seen)
			dup = dup || i == st.st_ino;
		if (!dup) {
			seen.push_back(st.st_ino);
			out.push_back(p);
		}
	}
	return out;
}

// All MLTCP flows of the host: the kernel's TCP iterator walks one network
// namespace per read, so enter each in turn, then return to our own.
std::vector<Flow> read_flows()
{
	std::vector<Flow> out;
	auto paths = netns_paths();
	Fd home(open(paths[0].c_str(), O_RDONLY | O_CLOEXEC));
	if (home.fd < 0)
		fail(kRuntime, "cannot open %s: %s", paths[0].c_str(), errstr(errno).c_str());
	read_flows_here(out);
	for (size_t i = 1; i < paths.size(); i++) {
		Fd ns(open(paths[i].c_str(), O_RDONLY | O_CLOEXEC));
		if (ns.fd < 0 || setns(ns.fd, CLONE_NEWNET) < 0)
			continue;	// gone meanwhile
		try {
			read_flows_here(out);
		} catch (const Failure &) {
			setns(home.fd, CLONE_NEWNET);
			throw;
		}
		if (setns(home.fd, CLONE_NEWNET) < 0)
			fail(kRuntime, "returning to the own network namespace failed: %s",
			     errstr(errno).c_str());
	}
	return out;
}

void print_table(const std::vector<Flow> &flows)
{
	std::printf("%-10s %-22s %-22s %-11s %6s %6s %12s %12s %6s %6s %6s\n", "netns", "local",
		    "remote", "cc", "iters", "hinted", "iter_bytes", "bytes/iter", "ratio",
		    "gain", "cwnd");
	for (const auto &f : flows) {
		char ratio[16];
		if (f.st.ratio == MLTCP_RATIO_NONE)
			std::snprintf(ratio, sizeof(ratio), "-");
		else
			std::snprintf(ratio, sizeof(ratio), "%.3f", f.st.ratio / 1024.0);
		std::printf("%-10u %-22s %-22s %-11s %6u %6u %12llu %12llu %6s %6.3f %6u\n",
			    f.key.netns, addr_str(f.key, f.key.saddr, f.key.sport).c_str(),
			    addr_str(f.key, f.key.daddr, f.key.dport).c_str(), variant_cc(f.st.variant),
			    f.st.iterations, f.st.hinted, (unsigned long long)f.st.iter_bytes,
			    (unsigned long long)f.st.bytes_per_iter, ratio, f.st.gain / 1024.0,
			    f.st.cwnd);
	}
	if (flows.empty())
		std::printf("(no MLTCP flows)\n");
}

void print_json(const std::vector<Flow> &flows)
{
	Json list = Json::array();
	for (const auto &f : flows)
		list.push_back({
			{"netns", f.key.netns},
			{"local", addr_str(f.key, f.key.saddr, f.key.sport)},
			{"remote", addr_str(f.key, f.key.daddr, f.key.dport)},
			{"cc", variant_cc(f.st.variant)},
			{"iterations", f.st.iterations},
			{"detected", f.st.iterations - f.st.hinted},
			{"hinted", f.st.hinted},
			{"iter_bytes", f.st.iter_bytes},
			{"bytes_per_iter", f.st.bytes_per_iter},
			{"bytes_acked", f.st.bytes_acked},
			{"bytes_ratio", f.st.ratio == MLTCP_RATIO_NONE ? Json(nullptr)
								       : Json(f.st.ratio / 1024.0)},
			{"gain", f.st.gain / 1024.0},
			{"cwnd", f.st.cwnd},
			{"ssthresh", f.st.ssthresh},
			{"srtt_us", f.st.srtt_us},
			{"window_repairs", f.st.window_repairs},
		});
	std::printf("%s\n", Json{{"flows", list}}.dump(2).c_str());
}

int cmd_stats(const std::vector<std::string> &args)
{
	enum { kTable, kJson, kProm } fmt = kTable;
	double watch = 0;
	for (size_t i = 0; i < args.size(); i++) {
		if (args[i] == "--json")
			fmt = kJson;
		else if (args[i] == "--prometheus")
			fmt = kProm;
		else if (args[i] == "--watch") {
			char *end = nullptr;
			if (i + 1 >= args.size() || (watch = std::strtod(args[i + 1].c_str(), &end)) <= 0 ||
			    *end)
				fail(kUsage, "--watch needs a positive number of seconds");
			i++;
		} else
			fail(kUsage, "unknown option '%s' for stats (see 'mltcpctl stats --help')",
			     args[i].c_str());
	}
	need_root("mltcpctl stats");
	need_loaded();
	for (;;) {
		auto flows = read_flows();
		if (fmt == kJson)
			print_json(flows);
		else if (fmt == kProm)
			std::fputs(exporter_metrics_text().c_str(), stdout);
		else
			print_table(flows);
		std::fflush(stdout);
		if (watch <= 0)
			return kOk;
		std::this_thread::sleep_for(std::chrono::duration<double>(watch));
		if (fmt == kTable)
			std::printf("\n");
	}
}

// ---------------------------------------------------------------------------
// help

struct Command {
	const char *name;
	int (*run)(const std::vector<std::string> &);
	std::string usage;
};

const Command kCommands[] = {
	{"load", cmd_load,
	 "usage: mltcpctl load [--variant reno|cubic|all] [--param k=v ...] [--default]\n"
	 "                     [--hint-group GROUP]\n"
	 "Register the MLTCP congestion controls 'mltcp' (reno) and/or 'mltcp_cubic'\n"
	 "(cubic); default all.  State is pinned under /sys/fs/bpf/mltcp/ (bpffs is\n"
	 "mounted if needed).  Uses struct_ops links on kernels that have them (>= 6.4),\n"
	 "plain registration otherwise.\n"
	 "  --param k=v       initial parameter (repeatable; see 'mltcpctl set --help')\n"
	 "  --default         also set net.ipv4.tcp_congestion_control to the first\n"
	 "                    variant (unload restores the previous default)\n"
	 "  --hint-group G    let group G write hints (hint map mode 0660 instead of 0600)\n"
	 "Select MLTCP afterwards with 'sysctl -w net.ipv4.tcp_congestion_control=mltcp',\n"
	 "setsockopt(TCP_CONGESTION) or 'mltcpctl attach --cgroup PATH'.\n"},
	{"unload", cmd_unload,
	 "usage: mltcpctl unload\n"
	 "Detach every cgroup attachment, restore the default congestion control if it\n"
	 "is an MLTCP variant (to the one before 'load --default', else cubic),\n"
	 "unregister both variants and remove /sys/fs/bpf/mltcp/.  Sockets already\n"
	 "using MLTCP keep it until they close.\n"},
	{"attach", cmd_attach,
	 "usage: mltcpctl attach --cgroup PATH [--variant reno|cubic]\n"
	 "Make every TCP socket (active and passive) of processes in cgroup v2 directory\n"
	 "PATH use the variant (default reno = 'mltcp'), even if the process asked for\n"
	 "another.  Other sockets are left alone.  Needs 'mltcpctl load' first.\n"
	 "Processes in PATH (and below it) may then announce iterations for all their\n"
	 "cgroup's MLTCP sockets (libmltcp mltcp_hint_job, Python mltcp.hint_job).\n"
	 "PATH becomes one job: the MLTCP sockets created in it share one bytes ratio\n"
	 "(a job striped over several connections moves as one); a cgroup below it\n"
	 "becomes a job of its own with its first job hint.\n"},
	{"detach", cmd_detach,
	 "usage: mltcpctl detach --cgroup PATH\n"
	 "Remove MLTCP's attachment and job from cgroup PATH; new sockets there use\n"
	 "their own choice again.\n"},
	{"status", cmd_status,
	 "usage: mltcpctl status [--json]\n"
	 "Show what is loaded and how, the hint map's permissions, cgroup attachments,\n"
	 "the default congestion control and the runtime parameters (with the norms\n"
	 "derived from them).  --json for scripts: the same as one JSON object.\n"},
	{"set", cmd_set,
	 std::string("usage: mltcpctl set k=v [k=v ...]\n"
		     "Change runtime parameters without reloading.  The new set is validated as a\n"
		     "whole; if it is invalid nothing changes.  Keys (1/1024: 1024 = 1.0):\n") +
		 mltcp::ParamHelp<mltcp_params>("  ", false)},
	{"stats", cmd_stats,
	 "usage: mltcpctl stats [--json | --prometheus] [--watch SECONDS]\n"
	 "Per-flow MLTCP state: iterations (detected and hinted), bytes in the current\n"
	 "iteration, learned bytes per iteration, bytes_ratio, gain F, cwnd.  --json for\n"
	 "scripts, --prometheus for the text exposition format (the exporter's\n"
	 "/metrics, see 'mltcpctl exporter --help'); --watch repeats.\n"},
	{"exporter", cmd_exporter, kExporterUsage},
	{"service", cmd_service, kServiceUsage},
};

void print_main_help(FILE *out)
{
	std::fprintf(out,
		     "usage: mltcpctl <command> [options]   (mltcpctl <command> --help)\n"
		     "MLTCP BPF congestion control: 'mltcp' (Reno-based), 'mltcp_cubic'.\n"
		     "commands:\n"
		     "  load      register the congestion controls\n"
		     "  unload    remove everything MLTCP put on the host\n"
		     "  attach    select MLTCP for one cgroup's sockets\n"
		     "  detach    undo attach\n"
		     "  status    what is loaded, attached, configured\n"
		     "  set       change runtime parameters\n"
		     "  stats     per-flow statistics (table, JSON, Prometheus)\n"
		     "  exporter  serve the statistics to Prometheus over HTTP\n"
		     "  service   start/reload/stop from /etc/mltcp/mltcp.conf (mltcp.service)\n"
		     "exit codes: 0 ok, 1 runtime failure, 2 usage error\n");
}

}  // namespace

// Entry points for the other parts of mltcpctl (mltcpctl.h).
int ctl_load(const std::vector<std::string> &args) { return cmd_load(args); }
int ctl_unload(const std::vector<std::string> &args) { return cmd_unload(args); }
int ctl_attach(const std::vector<std::string> &args) { return cmd_attach(args); }
int ctl_detach(const std::vector<std::string> &args) { return cmd_detach(args); }
int ctl_set(const std::vector<std::string> &args) { return cmd_set(args); }
bool ctl_loaded() { return loaded(); }
bool ctl_leftovers() { return path_exists(MLTCP_PIN_DIR); }
void ctl_check_variant(const std::string &v, bool allow_all) { parse_variants(v, allow_all); }
void ctl_check_cgroup(const std::string &path) { check_cgroup(path); }
std::string ctl_cgroup2_mount() { return cgroup2_mount(); }
void ctl_apply_param(mltcp_params &p, const std::string &kv) { apply_param(p, kv); }
void ctl_validate_params(const mltcp_params &p) { validate_params(p); }
mltcp_params ctl_read_config() { return read_config(); }

std::vector<std::string> ctl_param_strings(const mltcp_params &p)
{
	std::vector<std::string> out;
	for (const auto &r : ParamTable::Rows())
		out.push_back(std::string(r.name) + "=" + std::to_string(mltcp::GetParam(&p, r)));
	return out;
}

std::vector<std::pair<std::string, std::string>> ctl_param_docs()
{
	std::vector<std::pair<std::string, std::string>> out;
	for (const auto &r : ParamTable::Rows())
		out.push_back({r.name, std::string(r.help) + " (" + r.unit + ", " +
					       std::to_string(r.min) + ".." + std::to_string(r.max) +
					       ", default " + std::to_string(r.def) + ")"});
	return out;
}

std::vector<FlowSample> ctl_read_flows()
{
	std::vector<FlowSample> out;
	for (const auto &f : read_flows())
		out.push_back({f.key, f.st, addr_str(f.key, f.key.saddr, f.key.sport),
			       addr_str(f.key, f.key.daddr, f.key.dport), variant_cc(f.st.variant)});
	return out;
}

std::vector<std::string> ctl_registered_variants()
{
	std::vector<std::string> out;
	for (const auto &v : kVariants)
		if (cc_available(v.cc))
			out.push_back(v.cc);
	return out;
}

std::vector<std::pair<unsigned long long, std::string>> ctl_attachments() { return attachments(); }

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_main_help(stderr);
		return kUsage;
	}
	std::string cmd = argv[1];
	if (cmd == "--help" || cmd == "-h" || cmd == "help") {
		print_main_help(stdout);
		return kOk;
	}
	std::vector<std::string> args(argv + 2, argv + argc);
	for (const auto &c : kCommands) {
		if (cmd != c.name)
			continue;
		for (const auto &a : args)
			if (a == "--help" || a == "-h") {
				std::fputs(c.usage.c_str(), stdout);
				return kOk;
			}
		try {
			return c.run(args);
		} catch (const Failure &f) {
			std::fprintf(stderr, "mltcpctl %s: %s\n", c.name, f.msg.c_str());
			return f.code;
		}
	}
	std::fprintf(stderr, "mltcpctl: unknown command '%s'\n", cmd.c_str());
	print_main_help(stderr);
	return kUsage;
}
