// device_files.cpp - device resolution, backend choice and value IO (see
// device_files.h).  Layouts followed:
//  - inbox mlx5: debugfs_create_dir("mlx5") at the debugfs root
//    (mlx5/core/debugfs.c), one directory per PCI function named
//    dev_name() (mlx5_mdev_init in mlx5/core/main.c), cc_params/ in it
//    (mlx5_ib_init_cong_debugfs in infiniband/hw/mlx5/cong.c);
//  - MLNX_OFED: /sys/class/net/<netdev>/ecn/roce_rp/ and roce_np/;
//  - RDMA devices: /sys/class/infiniband/<dev>/device -> the PCI function,
//    ports/<n>/gid_attrs/ndevs/0 = the RoCE netdev, ports/<n>/counters/.
#include "device_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace dcqcnd {

namespace {

bool IsDir(const std::string &p)
{
	struct stat st;
	return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string &p)
{
	struct stat st;
	return stat(p.c_str(), &st) == 0;
}

std::vector<std::string> ListDir(const std::string &p)
{
	std::vector<std::string> out;
	DIR *d = opendir(p.c_str());
	if (!d)
		return out;
	while (dirent *e = readdir(d))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			out.push_back(e->d_name);
	closedir(d);
	return out;
}

std::string ReadLine(const std::string &path)
{
	char buf[256];
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "";
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return "";
	buf[n] = 0;
	std::string s(buf);
	while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
		s.pop_back();
	return s;
}

// The last path component of where a sysfs "device" link points.
std::string LinkTarget(const std::string &link)
{
	char buf[PATH_MAX];
	if (!realpath(link.c_str(), buf))
		return "";
	const char *slash = strrchr(buf, '/');
	return slash ? slash + 1 : buf;
}

// The only entry of a directory, or "" if there are none or several.
std::string OnlyEntry(const std::string &dir)
{
	auto v = ListDir(dir);
	return v.size() == 1 ? v[0] : "";
}

// The kernel lockdown mode ("none", "integrity", "confidentiality"), "" if
// unknown: /sys/kernel/security/lockdown shows it in brackets.
std::string LockdownMode(const Layout &l)
{
	std::string s = ReadLine(JoinPath(l.root, "sys/kernel/security/lockdown"));
	size_t a = s.find('['), b = s.find(']');
	if (a == std::string::npos || b == std::string::npos || b < a)
		return "";
	return s.substr(a + 1, b - a - 1);
}

// Why the debugfs cc_params/ directory of `pci` is not there.
std::string DebugfsMissingReason(const Layout &l, const std::string &pci)
{
	std::string dbg = JoinPath(l.root, l.debugfs);
	if (ListDir(dbg).empty())
		return dbg + " is empty: debugfs is not mounted (mount -t debugfs none " +
		       "/sys/kernel/debug)";
	if (!IsDir(JoinPath(dbg, "mlx5")))
		return JoinPath(dbg, "mlx5") + " is missing: the inbox mlx5 driver is not loaded";
	if (pci.empty())
		return "the RDMA device's PCI function is unknown (no device link)";
	std::string dev = JoinPath(dbg, "mlx5/" + pci);
	if (!IsDir(dev))
		return dev + " is missing: " + pci + " is not an mlx5 function";
	return JoinPath(dev, "cc_params") + " is missing: the firmware does not allow "
	       "congestion-control query/modify (cc_query_allowed/cc_modify_allowed)";
}

void SetBackend(const Layout &l, Backend b, DevicePaths *d)
{
	d->backend = b;
	if (b == Backend::kDebugfs)
		d->param_dir = JoinPath(l.root, l.debugfs + "/mlx5/" + d->pci + "/cc_params");
	else
		d->param_dir = JoinPath(l.root, "sys/class/net/" + d->netdev + "/ecn");
	d->ai_path = JoinPath(d->param_dir, ParamName(*FindRole(Role::kAiRate), b));
	d->hai_path = JoinPath(d->param_dir, ParamName(*FindRole(Role::kHaiRate), b));
}

}  // namespace

std::string JoinPath(const std::string &a, const std::string &b)
{
	if (a.empty() || a.back() == '/')
		return a + b;
	return a + "/" + b;
}

bool ResolveDevice(const Layout &l, const DeviceSpec &s, DevicePaths *d, std::string *err)
{
	std::string ib_class = JoinPath(l.root, "sys/class/infiniband");
	std::string net_class = JoinPath(l.root, "sys/class/net");
	*d = DevicePaths();
	d->port = s.port;
	d->ibdev = s.ibdev;
	d->netdev = s.netdev;
	if (!s.name.empty()) {
		if (IsDir(JoinPath(ib_class, s.name)))
			d->ibdev = s.name;
		else if (Exists(JoinPath(net_class, s.name)))
			d->netdev = s.name;
		else {
			*err = s.name + ": neither an RDMA device (" + JoinPath(ib_class, s.name) +
			       ") nor a network interface (" + JoinPath(net_class, s.name) + ")";
			return false;
		}
	}
	std::string port = "ports/" + std::to_string(s.port);
	if (d->ibdev.empty() && !d->netdev.empty())
		d->ibdev = OnlyEntry(JoinPath(net_class, d->netdev + "/device/infiniband"));
	if (d->netdev.empty() && !d->ibdev.empty()) {
		std::string ib = JoinPath(ib_class, d->ibdev);
		d->netdev = ReadLine(JoinPath(ib, port + "/gid_attrs/ndevs/0"));
		if (d->netdev.empty())
			d->netdev = OnlyEntry(JoinPath(ib, "device/net"));
	}
	if (!d->ibdev.empty()) {
		std::string ib = JoinPath(ib_class, d->ibdev);
		if (!IsDir(JoinPath(ib, port))) {
			*err = d->ibdev + ": no port " + std::to_string(s.port) + " (" +
			       JoinPath(ib, port) + ")";
			return false;
		}
		d->pci = LinkTarget(JoinPath(ib, "device"));
		d->counter_path = JoinPath(ib, port + "/" + l.counter);
	}
	if (d->pci.empty() && !d->netdev.empty())
		d->pci = LinkTarget(JoinPath(net_class, d->netdev + "/device"));
	d->key = !d->ibdev.empty() ? d->ibdev : d->netdev;
	if (d->key.empty()) {
		*err = "a device needs an RDMA device or a netdev name";
		return false;
	}
	uint64_t speed = 0;
	std::string e;
	int en;
	if (!d->netdev.empty() &&
	    ReadValue(JoinPath(net_class, d->netdev + "/speed"), &speed, &e, &en) &&
	    speed < (uint64_t)INT32_MAX)
		d->line_mbps = speed;

	std::string name = d->key + (d->netdev.empty() || d->netdev == d->key ? ""
									: " (" + d->netdev + ")");
	std::string sysfs_rp = JoinPath(net_class, d->netdev + "/ecn/roce_rp");
	bool have_sysfs = !d->netdev.empty() && IsDir(sysfs_rp);
	std::string dbg_dir = JoinPath(l.root, l.debugfs + "/mlx5/" + d->pci + "/cc_params");
	bool have_debugfs = !d->pci.empty() && IsDir(dbg_dir);
	std::string sysfs_why = d->netdev.empty() ? "no netdev known for " + d->key
						  : sysfs_rp + " is missing (no MLNX_OFED)";
	switch (s.backend) {
	case BackendChoice::kSysfs:
		if (!have_sysfs) {
			*err = name + ": no MLNX_OFED sysfs parameters: " + sysfs_why;
			return false;
		}
		SetBackend(l, Backend::kSysfs, d);
		break;
	case BackendChoice::kDebugfs:
		if (!have_debugfs) {
			*err = name + ": no inbox-driver debugfs parameters: " +
			       DebugfsMissingReason(l, d->pci);
			return false;
		}
		SetBackend(l, Backend::kDebugfs, d);
		break;
	case BackendChoice::kAuto:
		// MLNX_OFED's sysfs first: it is NVIDIA's documented interface and
		// needs neither debugfs nor a kernel without lockdown.
		if (have_sysfs)
			SetBackend(l, Backend::kSysfs, d);
		else if (have_debugfs)
			SetBackend(l, Backend::kDebugfs, d);
		else {
			*err = name + ": no firmware DCQCN parameters: " + sysfs_why + ", and " +
			       DebugfsMissingReason(l, d->pci) + "; nothing was changed";
			return false;
		}
		break;
	}
	if (d->backend == Backend::kSysfs && have_debugfs)
		d->also_present = dbg_dir;
	if (d->backend == Backend::kDebugfs && have_sysfs)
		d->also_present = sysfs_rp;
	return true;
}

bool ReadValue(const std::string &path, uint64_t *v, std::string *err, int *errnum)
{
	*errnum = 0;
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*errnum = errno;
		*err = path + ": " + strerror(errno);
		return false;
	}
	char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n <= 0) {
		*errnum = n < 0 ? e : 0;
		*err = path + ": " + (n < 0 ? strerror(e) : "empty");
		return false;
	}
	buf[n] = 0;
	char *end = nullptr;
	errno = 0;
	unsigned long long x = strtoull(buf, &end, 0);
	while (end && (*end == '\n' || *end == ' '))
		end++;
	if (errno || end == buf || *end || buf[0] == '-') {
		*err = path + ": not an integer: '" + std::string(buf, (size_t)n) + "'";
		return false;
	}
	*v = x;
	return true;
}

// The way `echo N > file` writes: one write() of the decimal text; the
// driver's answer (a firmware command's status) comes back from write().
bool WriteValue(const std::string &path, uint64_t v, std::string *err, int *errnum)
{
	*errnum = 0;
	int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		*errnum = errno;
		*err = path + ": " + strerror(errno);
		return false;
	}
	std::string s = std::to_string(v) + "\n";
	ssize_t n = write(fd, s.data(), s.size());
	int e = errno;
	if (close(fd) != 0 && n >= 0) {
		*errnum = errno;
		*err = path + ": close: " + strerror(errno);
		return false;
	}
	if (n != (ssize_t)s.size()) {
		*errnum = n < 0 ? e : EIO;
		*err = path + ": write: " + (n < 0 ? strerror(e) : "short write");
		return false;
	}
	return true;
}

bool CheckParamFile(const std::string &path, uint64_t *value, std::string *err, int *errnum)
{
	struct stat st;
	*errnum = 0;
	if (stat(path.c_str(), &st) != 0) {
		*errnum = errno;
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
		*errnum = EACCES;
		*err = path + ": not writable (mode " + mode + ")";
		return false;
	}
	if (!ReadValue(path, value, err, errnum))
		return false;
	if (!WriteValue(path, *value, err, errnum)) {
		*err += " (writing its own value back failed)";
		return false;
	}
	return true;
}

std::string ExplainErrno(const Layout &l, Backend b, int errnum)
{
	switch (errnum) {
	case 0:
		return "";
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return "the device disappeared (reset or hot-unplug?)";
	case EIO:
		return "the firmware failed the command (see dmesg)";
	case EPERM:
		if (b == Backend::kDebugfs) {
			std::string m = LockdownMode(l);
			if (!m.empty() && m != "none")
				return "kernel lockdown is '" + m + "' (/sys/kernel/security/lockdown, "
				       "on with Secure Boot): debugfs files that can be written "
				       "cannot even be opened; boot without Secure Boot's "
				       "lockdown (mokutil --disable-validation) or use "
				       "MLNX_OFED's sysfs";
			return "permission denied (kernel lockdown? see "
			       "/sys/kernel/security/lockdown; run as root)";
		}
		return "permission denied (run as root)";
	case EACCES:
		return "permission denied (run as root; the file must be writable)";
	case EINVAL:
	case ERANGE:
		return "the driver rejected the value";
	default:
		return strerror(errnum);
	}
}

}  // namespace dcqcnd
